//! The one payload the functions take: what the template's schedules send
//! (`{"Operation": "create_new", "scheduled_time": "<aws.scheduler.scheduled-time>"}`, filled in by
//! EventBridge Scheduler) and what a console or manual run adds (`at`, `dry_run`,
//! `allow_future_clock`, `replay`); `{}` or `null` runs now.

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;

use ddb_rollover::Operation;

use super::checks::{check_operation, flag, timestamp};
use super::error::{describe, invalid, EventError};
use super::fields::{Flag, OperationName, Timestamp};
use super::invocation::{ClockSource, Invocation};
use ddb_rollover::policy::strict_json;

/// The payload's keys, every one optional; any other key is refused with its name and the
/// keys accepted. A key given as `null` is refused like any value of the wrong type
/// ([`present`]): `{"dry_run": null}` must not mean a real run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    #[serde(rename = "Operation", default, deserialize_with = "present")]
    operation: Option<OperationName>,
    #[serde(default, deserialize_with = "present")]
    scheduled_time: Option<Timestamp>,
    #[serde(default, deserialize_with = "present")]
    at: Option<Timestamp>,
    #[serde(default, deserialize_with = "present")]
    dry_run: Option<Flag>,
    #[serde(default, deserialize_with = "present")]
    allow_future_clock: Option<Flag>,
    #[serde(default, deserialize_with = "present")]
    replay: Option<Flag>,
}

/// A key that is there holds a value of its form: `null` reaches the value's own visitor and is
/// refused there ("invalid type: null, expected ..."), where serde's `Option` would read it
/// as absent. An absent key is `None` (`#[serde(default)]`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
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
            replay: flag(fields.replay),
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

impl Payload {
    /// The payload from its JSON text, as the runtime reads it ([`Payload`]'s `Deserialize`):
    /// duplicate keys, nesting deeper than an event needs and text that is not JSON are
    /// refused with the path (`strict_json`).
    pub fn from_json(text: &str) -> Payload {
        match strict_json::parse(text, "event") {
            Ok(event) => Payload::from(&event),
            Err(refusal) => Payload(Err(EventError::Invalid {
                path: refusal.path,
                message: refusal.message,
            })),
        }
    }
}

/// Reads the invocation's body as raw text (serde_json's `RawValue`, which skips nested values
/// without recursing), then parses it strictly ([`Payload::from_json`]): so no payload, however
/// nested, duplicated or malformed, fails the runtime's own deserialization (its
/// `DeserializeError`); each is the handler's `BadEvent`.
impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(|raw| Payload::from_json(raw.get()))
    }
}
