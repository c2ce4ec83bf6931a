//! A run: check the clock, observe what exists (at the floor of calls), plan, apply through a
//! [`control::ControlPlane`], and report; plus the operator's views built on the same steps
//! (`status`, `adopt`, `restore`).

pub(crate) mod adopt;
pub(crate) mod apply;
pub(crate) mod archive;
pub(crate) mod clock;
pub(crate) mod control;
pub(crate) mod init;
mod ledger;
pub(crate) mod observe;
pub(crate) mod operator;
pub(crate) mod pace;
pub(crate) mod readiness;
pub(crate) mod report;
pub(crate) mod restore;
pub(crate) mod status;
