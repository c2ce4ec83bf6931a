//! Checks of the SAM application against the code it deploys. Test support only: the checks
//! themselves are in `tests/`.
//!
//! - [`template`]: the repository's `template.yaml` (read and resolved by
//!   [`aws_model::template`]) and each function: its binary, environment, schedules and IAM
//!   role. IAM evaluation is [`aws_model::iam`] and [`aws_model::role`].
//! - [`features`]: the optional parts the parameters turn on, and the actions each needs.
//! - [`ledger`]: the family's ledger: its name rule, the calls the functions make on it, and
//!   the table actions denied on it.
//! - [`recorder`]: an SDK interceptor that records every DynamoDB operation a client sends,
//!   with the table or ARN it names, the tags it writes, and the tags its table carries on the
//!   server when it is sent.
//! - [`scenario`]: runs a function's schedule `Input` through `ddb_rollover_lambda::Handler`
//!   the way EventBridge Scheduler would deliver it.

pub mod features;
pub mod ledger;
pub mod recorder;
pub mod scenario;
pub mod template;
