//! One model of AWS behaviour for the test support crates, so each AWS fact is written once:
//! the deploy checks, testkit's proxy (in front of moto, dynalite, DynamoDB Local) and fake-aws
//! (the in-memory account) ask it instead of keeping their own copies. Pure rules and small
//! state machines on plain data: no AWS SDK, no engine, no I/O; the callers keep their state
//! and their wire.
//!
//! - [`stack`]: the imagined stack's pseudo parameters (Region, account) and its ARNs.
//! - [`iam`]: IAM statements, IAM-style `*` / `?` matching, allow/deny evaluation, and the
//!   `StringEquals` / `StringEqualsIfExists` / `StringLike` / `Null` conditions on
//!   `aws:ResourceTag/...`, `aws:RequestTag/...` and a few service keys (anything else is
//!   refused).
//! - [`template`]: reads `template.yaml` (CloudFormation short-form tags included), resolves
//!   `!Sub` / `!Ref` / `!GetAtt` / `!If` and `Conditions` with the parameters' defaults or
//!   overrides (a named DynamoDB table's `Ref` and `Arn` as CloudFormation gives them, so a
//!   statement on `!GetAtt LedgerTable.Arn` is evaluated on that table).
//! - [`role`]: a function's role as the template grants it, and IAM's decision for a request
//!   made with it: `Role::from_template(path, "CreateNewFunction", &[("Period", "hour")])`.
//! - [`family_role`]: the role of one family's functions, as both models enforce it, in AWS's
//!   words when it refuses.
//! - [`warm`]: a warm throughput is never lowered.
//! - [`destinations`]: Kinesis streaming destinations' states and transitions.
//! - [`scaling`]: DeregisterScalableTarget takes the target's policies and scheduled actions.
//! - [`exports`]: an export's ARN, S3 keys and manifests.
//! - [`resource_policy`] and [`item_writes`]: the seal (a resource policy denying item writes to
//!   everyone), and which tables and actions an item write touches.
//! - [`rates`]: DynamoDB's per-account rates of the tag calls and the token bucket that meters
//!   them.

pub mod destinations;
pub mod exports;
pub mod family_role;
pub mod iam;
pub mod item_writes;
pub mod rates;
pub mod resource_policy;
pub mod role;
pub mod scaling;
pub mod stack;
pub mod template;
pub mod warm;
