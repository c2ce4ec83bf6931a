//! The SAM stack's side of a function's cold start: what template.yaml's parameters mean, what
//! each allows and what they grant the functions' roles, read from the environment the template
//! sets.
//!
//! Its own crate, apart from the Lambda glue (`ddb-rollover-lambda`, event in, report out),
//! because the deploy checks call this same code with every function's `Environment` for every
//! combination of the template's parameters, and need nothing of the handler. It adds no
//! dependency to the functions' bootstraps: it links only what the glue linked for it.
//!
//! - [`parameters`]: the stack parameters, one environment variable each, and the [`Policy`]
//!   and the role's grants they build.
//! - [`allowed`]: each parameter's `AllowedPattern`, `AllowedValues` and bounds, as the template
//!   says them.
//! - [`environment`]: the whole environment checked against those rules before anything reads it.
//! - [`grants`]: what the role was granted against what a policy needs.
//! - [`policy_from_variables`]: the cold start's policy, or the [`InitError`] that stops it.
//!
//! [`Policy`]: ddb_rollover::policy::Policy

pub mod allowed;
mod cold_start;
pub mod environment;
pub mod grants;
pub mod parameters;

pub use cold_start::{policy_from_env, policy_from_variables, InitError};
