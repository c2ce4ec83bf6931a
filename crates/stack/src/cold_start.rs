//! The cold start's reading of the stack's environment: the policy a function runs with
//! ([`policy_from_variables`]), or why it cannot start ([`InitError`]). Here, not in the Lambda
//! glue, because the deploy checks call the same code with each function's `Environment` in
//! template.yaml.

use std::fmt;

use ddb_rollover::policy::strict_json::excerpt;
use ddb_rollover::policy::{Policy, PolicyDocument, PolicyError, POLICY_ENV};

use crate::environment;
use crate::grants;
use crate::parameters::{self, StackParameters};

/// Why a function could not start. Returned before any AWS call.
#[derive(thiserror::Error)]
pub enum InitError {
    /// `ROLLOVER_POLICY` is a JSON object, but not a valid policy.
    #[error("{POLICY_ENV} is not a usable policy; fix the function's {POLICY_ENV} environment variable (JSON, or unset for the defaults): {0}")]
    Policy(#[source] PolicyError),
    /// `ROLLOVER_POLICY` is no single JSON object with each key once (the path and why).
    #[error("{POLICY_ENV} is not a usable policy; fix the function's {POLICY_ENV} environment variable (the stack parameter PolicyOverride: one JSON object, each key once, or empty): {0}")]
    PolicyText(String),
    /// The stack's parameters ([`parameters`]) do not make a valid policy.
    #[error("{0}")]
    Stack(#[source] parameters::StackError),
    /// The policy needs permissions the function's role was not given (what the stack's
    /// parameters granted, [`StackParameters::grants`]).
    #[error("{POLICY_ENV} needs more than the stack's parameters granted the function's role; change the policy or the stack parameters: {0}")]
    Grants(#[source] grants::GrantsError),
}

/// The message, not the structure: `main` returning this error prints it with `{:?}`.
impl fmt::Debug for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The function's policy from the process environment ([`policy_from_variables`]).
pub fn policy_from_env() -> Result<Policy, InitError> {
    policy_from_variables(|name| std::env::var(name).ok())
}

/// The function's policy from its environment variables, which must be the stack's whole
/// environment ([`environment::check_environment`]: every variable the template sets, each
/// holding what its parameter allows; there are no built-in defaults for a function):
/// `ROLLOVER_POLICY` (JSON, the template's `PolicyOverride`) when it is not blank, read
/// strictly (an object, each key once); else the one the stack's parameters build
/// ([`StackParameters::policy`]). The deploy checks call it with each function's `Environment`.
pub fn policy_from_variables(lookup: impl Fn(&str) -> Option<String>) -> Result<Policy, InitError> {
    environment::check_environment(&lookup).map_err(InitError::Stack)?;
    if let Some(json) = lookup(POLICY_ENV).filter(|json| !json.trim().is_empty()) {
        let value = ddb_rollover::policy::strict_json::parse(&json, "(the document)")
            .map_err(|refusal| InitError::PolicyText(format!("{}: {}", refusal.path, refusal.message)))?;
        if !value.is_object() {
            return Err(InitError::PolicyText(format!(
                "(the document): must be a JSON object such as {{\"prefix\": \"timeseries\"}}, not {}",
                excerpt(&value.to_string())
            )));
        }
        return PolicyDocument::from_json(&json)
            .and_then(|document| document.validate())
            .map_err(InitError::Policy);
    }
    let stack = StackParameters::from_lookup(lookup).expect("check_environment found ROLLOVER_TABLE_PREFIX");
    stack.policy().map_err(InitError::Stack)
}
