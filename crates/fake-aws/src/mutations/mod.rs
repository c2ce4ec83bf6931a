//! The changes to the account, shared by the ports (our calls, after IAM) and the foreign acts
//! (outside IAM): DynamoDB's tables in [`tables`], Application Auto Scaling's targets in
//! [`targets`]. Each checks what AWS checks and records its [`Effect`]s.

pub(crate) mod tables;
pub(crate) mod targets;

pub(crate) use tables::{encryption_of, CapacityRequest};
