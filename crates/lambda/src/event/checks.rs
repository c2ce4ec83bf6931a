//! What the payloads' values must mean, once serde has their form: an `Operation` names this
//! function (not the other one), a time is RFC 3339 and not a schedule's unsubstituted
//! placeholder. The clock's own check against the wall clock is [`Invocation::checked_now`].
//!
//! [`Invocation::checked_now`]: super::Invocation::checked_now

use chrono::{DateTime, Utc};

use ddb_rollover::Operation;

use super::error::{excerpt, EventError};
use super::fields::{Flag, OperationName, Timestamp};

/// An absent Operation is this function's; anything else must name this function.
pub(super) fn check_operation(
    value: Option<OperationName>,
    field: &str,
    function: Operation,
) -> Result<(), EventError> {
    let Some(OperationName(name)) = value else {
        return Ok(());
    };
    // The documented names only: the CLI's `create-new` spelling is not an event's.
    let requested = match name.as_str() {
        "create_new" => Operation::CreateNew,
        "resize_old" => Operation::ResizeOld,
        _ => {
            return Err(EventError::UnknownOperation {
                field: field.to_string(),
                message: format!(
                    "unknown operation {:?}: use \"create_new\" or \"resize_old\" (underscores)",
                    excerpt(&name)
                ),
            })
        }
    };
    if requested == function {
        Ok(())
    } else {
        Err(EventError::WrongFunction { function, requested })
    }
}

pub(super) fn timestamp(value: Option<Timestamp>, field: &str) -> Result<Option<DateTime<Utc>>, EventError> {
    let Some(Timestamp(text)) = value else {
        return Ok(None);
    };
    // What a console test with a schedule's raw Input sends: `<aws.scheduler.scheduled-time>`.
    if text.starts_with('<') && text.ends_with('>') {
        return Err(EventError::Placeholder {
            field: field.to_string(),
            value: excerpt(&text),
        });
    }
    match DateTime::parse_from_rfc3339(&text) {
        Ok(t) => Ok(Some(t.with_timezone(&Utc))),
        Err(e) => Err(EventError::BadTimestamp {
            field: field.to_string(),
            value: excerpt(&text),
            reason: e.to_string(),
        }),
    }
}

pub(super) fn flag(value: Option<Flag>) -> bool {
    value.is_some_and(|Flag(flag)| flag)
}
