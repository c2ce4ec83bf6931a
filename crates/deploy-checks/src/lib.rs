//! Checks of the SAM application against the code it deploys. Test support only: the checks
//! themselves are in `tests/`.
//!
//! - [`template`]: reads `template.yaml` (CloudFormation short-form tags included), resolves
//!   `!Sub` / `!Ref` / `!GetAtt` / `!If` and `Conditions` with the parameters' defaults or
//!   overrides, and describes each function: its binary, environment, schedules and IAM role.
//! - [`features`]: the optional parts the parameters turn on, and the actions each needs.
//! - [`iam`]: IAM statements, IAM-style `*` / `?` matching, allow/deny evaluation, and the
//!   `StringEquals` / `StringEqualsIfExists` / `Null` conditions on `aws:ResourceTag/...` and
//!   `aws:RequestTag/...` (anything else is refused).
//! - [`recorder`]: an SDK interceptor that records every DynamoDB operation a client sends,
//!   with the table or ARN it names, the tags it writes, and the tags its table carries on the
//!   server when it is sent.
//! - [`scenario`]: runs a function's schedule `Input` through `ddb_rollover_lambda::Handler`
//!   the way EventBridge Scheduler would deliver it.

pub mod features;
pub mod iam;
pub mod recorder;
pub mod scenario;
pub mod template;
