//! The one payload the functions take: what the template's schedules send
//! (`{"Operation": "create_new", "scheduled_time": "<aws.scheduler.scheduled-time>"}`, filled in by
//! EventBridge Scheduler) and what a console or manual run adds (`at`, `dry_run`,
//! `allow_future_clock`); `{}` or `null` runs now.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use ddb_rollover::Operation;

use super::checks::{check_operation, flag, timestamp};
use super::error::{describe, invalid, EventError};
use super::fields::{Flag, OperationName, Timestamp};
use super::invocation::{ClockSource, Invocation};

/// The payload's keys, every one optional; any other key is refused with its name and the
/// keys accepted.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    #[serde(rename = "Operation")]
    operation: Option<OperationName>,
    scheduled_time: Option<Timestamp>,
    at: Option<Timestamp>,
    dry_run: Option<Flag>,
    allow_future_clock: Option<Flag>,
}

/// The payload as the Lambda runtime hands it to the handler (`LambdaEvent<Payload>`): read, or
/// refused with the field named and what to send instead. Reading it never fails the runtime's
/// own deserialization, so a bad event is the handler's `BadEvent`, logged and reported like
/// every other refusal, before any AWS call.
#[derive(Debug)]
pub struct Payload(Result<Option<Fields>, EventError>);

impl Payload {
    /// What `function` is asked to do, or why the payload is refused.
    pub fn invocation(self, function: Operation) -> Result<Invocation, EventError> {
        let fields = match self.0? {
            Some(fields) => fields,
            None => return Ok(Invocation::wall_clock()),
        };
        check_operation(fields.operation, "Operation", function)?;
        // Both times are checked: a typo in the one that loses is not silently ignored.
        let scheduled_time = timestamp(fields.scheduled_time, "scheduled_time")?;
        let at = timestamp(fields.at, "at")?;
        let (at, clock) = match (scheduled_time, at) {
            (Some(t), _) => (Some(t), ClockSource::ScheduledTime),
            (None, Some(t)) => (Some(t), ClockSource::At),
            (None, None) => (None, ClockSource::WallClock),
        };
        Ok(Invocation {
            at,
            dry_run: flag(fields.dry_run),
            allow_future_clock: flag(fields.allow_future_clock),
            clock,
        })
    }
}

impl From<&Value> for Payload {
    fn from(event: &Value) -> Payload {
        Payload(match event {
            Value::Null => Ok(None),
            Value::Object(_) => serde_path_to_error::deserialize(event).map(Some).map_err(invalid),
            other => Err(EventError::NotAnObject {
                found: describe(other),
            }),
        })
    }
}

impl From<Value> for Payload {
    fn from(event: Value) -> Payload {
        Payload::from(&event)
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|event| Payload::from(&event))
    }
}
