//! Why a function could not start: the cold start's one error, below both the handler that
//! returns it and the reporter that posts it to the Runtime API ([`crate::report_init_error`]).

use std::fmt;

use ddb_rollover::policy::{PolicyError, POLICY_ENV};

use crate::{grants, stack};

/// Why a function could not start. Returned before any AWS call.
#[derive(thiserror::Error)]
pub enum InitError {
    #[error("{POLICY_ENV} is not a usable policy; fix the function's {POLICY_ENV} environment variable (JSON, or unset for the defaults): {0}")]
    Policy(#[source] PolicyError),
    /// `ROLLOVER_POLICY` is no single JSON object with each key once (the path and why).
    #[error("{POLICY_ENV} is not a usable policy; fix the function's {POLICY_ENV} environment variable (the stack parameter PolicyOverride: one JSON object, each key once, or empty): {0}")]
    PolicyText(String),
    /// The stack's parameters ([`stack`]) do not make a valid policy.
    #[error("{0}")]
    Stack(#[source] stack::StackError),
    /// The policy needs permissions the function's role was not given (what the stack's
    /// parameters granted, [`stack::StackParameters::grants`]).
    #[error("{POLICY_ENV} needs more than the stack's parameters granted the function's role; change the policy or the stack parameters: {0}")]
    Grants(#[source] grants::GrantsError),
}

/// The message, not the structure: `main` returning this error prints it with `{:?}`.
impl fmt::Debug for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
