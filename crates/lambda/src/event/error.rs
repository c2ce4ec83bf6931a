//! Why a payload was refused, and the wording its messages share: every refusal names the
//! field and what to send instead, with the value sent cut short to one line.

use serde_json::Value;

use ddb_rollover::Operation;

pub(super) const EXAMPLE_TIME: &str = "2018-10-25T23:45:00Z";

/// Why a payload was refused. Every message names the field and what to send instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// The payload is JSON, but not an object (nor `null`).
    #[error(
        "the event must be a JSON object such as {{\"Operation\": \"create_new\"}} (or empty), not {found}"
    )]
    NotAnObject {
        /// What was sent, cut short.
        found: String,
    },

    /// What serde refused, at its path (an unknown key's is the key itself):
    /// an unknown key (with the keys its struct accepts), or a value of the wrong type (with the
    /// form expected).
    #[error("{path}: {message}")]
    Invalid {
        /// The field's path in the payload, `event` for the payload itself.
        path: String,
        /// serde's reason.
        message: String,
    },

    /// An `Operation` that is no operation.
    #[error("{field}: {message}")]
    UnknownOperation {
        /// The key as sent.
        field: String,
        /// The operations there are.
        message: String,
    },

    /// An `Operation` that is the other function's: never run here in its place.
    #[error(
        "this is the {function} function; it cannot run Operation {requested:?} (invoke the {requested} function instead)",
        requested = .requested.as_str()
    )]
    WrongFunction {
        /// This function's operation.
        function: Operation,
        /// The event's.
        requested: Operation,
    },

    /// A time that is the schedule's placeholder, not substituted (a copied schedule input).
    #[error(
        "{field} is {value:?}: the schedule's Input placeholder was not substituted. EventBridge Scheduler \
         fills <aws.scheduler.scheduled-time> only when the schedule fires; for a manual or console run, \
         send a real time such as {{\"at\": \"{EXAMPLE_TIME}\"}}, or no time to run now"
    )]
    Placeholder {
        /// `scheduled_time` or `at`.
        field: String,
        /// The placeholder as sent.
        value: String,
    },

    /// A time that is no RFC 3339 timestamp.
    #[error("{field} is {value:?}, not an RFC 3339 timestamp ({reason}): use e.g. \"{EXAMPLE_TIME}\"")]
    BadTimestamp {
        /// `scheduled_time` or `at`.
        field: String,
        /// The value as sent, cut short.
        value: String,
        /// chrono's reason.
        reason: String,
    },

    /// A time the core's clock guard refuses (too far ahead of the wall clock).
    #[error("{field}: {message}")]
    Clock {
        /// `scheduled_time` or `at`.
        field: &'static str,
        /// The guard's reason.
        message: String,
    },

    /// An instant that is not now ([`ddb_rollover::is_now`]) without `"replay": true`.
    #[error(
        "{field} is {at}, not now (the wall clock is {wall}; an event's time must be earlier in the wall \
         clock's period or within {skew} of it). A console or manual run acts for now: send no time. To act for \
         that instant on purpose (a dead-letter replay), add \"replay\": true: the run then makes only what \
         is missing for that instant's periods and leaves the readiness metric and the published tables to a run for now. \
         Or add \"dry_run\": true to preview it"
    )]
    NotNow {
        /// `scheduled_time` or `at`.
        field: &'static str,
        /// The event's instant.
        at: String,
        /// The wall clock's.
        wall: String,
        /// The clock guard's allowed skew.
        skew: String,
    },
}

/// How much of anything sent is echoed, and how: the core's strict JSON reader's, which reads
/// the events and the policies alike.
pub(crate) use ddb_rollover::policy::strict_json::excerpt;
pub use ddb_rollover::policy::strict_json::MAX_ECHO_CHARS;

/// serde's refusal, named by its path.
pub(super) fn invalid(error: serde_path_to_error::Error<serde_json::Error>) -> EventError {
    let path = error.path().to_string();
    EventError::Invalid {
        path: if path == "." {
            "event".into()
        } else {
            excerpt(&path)
        },
        message: excerpt(&error.into_inner().to_string()),
    }
}

/// `a string ("yes")`, `a number (5)`, ...: the JSON type and the value, for error messages.
pub(super) fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("{kind} ({})", compact(Some(value)))
}

/// The value as JSON, cut short so an error message stays one readable line.
pub(super) fn compact(value: Option<&Value>) -> String {
    const MAX: usize = 60;
    let text = value.map_or_else(|| "(absent)".to_string(), Value::to_string);
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}
