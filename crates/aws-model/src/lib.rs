//! One model of AWS behaviour for the test support crates, so each AWS fact is written once:
//! the deploy checks, testkit's proxy and fake-aws ask it instead of keeping their own copies.
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

pub mod destinations;
pub mod exports;
pub mod family_role;
pub mod iam;
pub mod item_writes;
pub mod resource_policy;
pub mod role;
pub mod scaling;
pub mod stack;
pub mod template;
pub mod warm;
