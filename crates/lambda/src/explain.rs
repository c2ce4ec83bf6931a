//! An AWS call's error as the operator reads it, for the calls that publish (the tables
//! parameter, the events): its own module, below both.

use ddb_rollover_aws::call_error::CallError;

/// A refusal names the fix (the stack's template grants what the functions call).
pub(crate) fn explain(error: &CallError) -> String {
    if error.is_access_denied() {
        format!("{error} (the role does not allow it: deploy the stack's template, which grants it)")
    } else {
        error.to_string()
    }
}
