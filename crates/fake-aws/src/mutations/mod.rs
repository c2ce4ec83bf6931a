//! The changes to the account, shared by the ports (our calls, after IAM) and the foreign acts
//! (outside IAM): DynamoDB's tables in [`tables`] and their warm throughput in [`warm`],
//! Application Auto Scaling's targets in [`targets`], Kinesis destinations in
//! [`destinations`], Lambda's event source mappings in [`mappings`]. Each checks what AWS
//! checks and records its `Effect`s.

pub(crate) mod destinations;
pub(crate) mod mappings;
pub(crate) mod tables;
pub(crate) mod targets;
pub(crate) mod warm;
