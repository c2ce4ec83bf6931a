//! A run: check the clock, observe what exists (at the floor of calls), plan, apply through a
//! [`control::ControlPlane`], and report; plus the operator's views built on the same steps
//! (`status`, `adopt`, `restore`).

pub mod adopt;
pub mod apply;
pub mod archive;
pub mod clock;
pub mod control;
pub mod init;
mod ledger;
pub mod observe;
pub mod operator;
pub mod pace;
pub mod readiness;
pub mod report;
pub mod restore;
pub mod status;
