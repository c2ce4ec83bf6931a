//! The EventBridge envelope: a rule's "Scheduled Event" from `aws.events`, whose `time` is the
//! clock and whose `detail` may carry `Operation` and `dry_run`. The envelope itself is
//! `aws_lambda_events`' type; only `detail` is ours, and other events are refused before serde
//! sees their `detail`.

use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use ddb_rollover::Operation;

use super::checks::{check_operation, flag, timestamp};
use super::error::{compact, describe, invalid, invalid_at, EventError};
use super::fields::{Flag, OperationName, Timestamp};
use super::invocation::{ClockSource, Invocation};

/// What an EventBridge envelope's `detail` may carry. `Serialize` only because
/// [`EventBridgeEvent`] requires it of its detail.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScheduledDetail {
    #[serde(rename = "Operation")]
    operation: Option<OperationName>,
    dry_run: Option<Flag>,
}

/// An EventBridge rule's Scheduled Event; a `null` or absent `detail` is `None`. The metadata
/// (`version`, `id`, `account`, `region`, `resources`) is typed by the crate and not used.
pub(super) type ScheduledEvent = EventBridgeEvent<Option<ScheduledDetail>>;

/// What an EventBridge rule with a schedule sends as `detail-type` and `source`.
pub(super) const SCHEDULED_EVENT_DETAIL_TYPE: &str = "Scheduled Event";
pub(super) const SCHEDULED_EVENT_SOURCE: &str = "aws.events";

/// An EventBridge event: only a Scheduled Event from `aws.events` is accepted. Its `time` is
/// parsed by the crate's type: chrono's relaxed RFC 3339, which also takes e.g. `+0000` or `UTC`
/// for the offset (EventBridge sends `Z`).
pub(super) fn parse_envelope(
    event: &Value,
    object: &Map<String, Value>,
    function: Operation,
) -> Result<Invocation, EventError> {
    // Checked on the JSON first: another rule's event has a detail of its own, which would be
    // refused as ours with a message about its keys.
    let detail_type = object.get("detail-type");
    let source = object.get("source");
    if detail_type.and_then(Value::as_str) != Some(SCHEDULED_EVENT_DETAIL_TYPE)
        || source.and_then(Value::as_str) != Some(SCHEDULED_EVENT_SOURCE)
    {
        return Err(EventError::NotAScheduledEvent {
            detail_type: compact(detail_type),
            source_name: compact(source),
        });
    }
    // Also first: serde reads a JSON array as a struct, field by field.
    let detail = object.get("detail").filter(|detail| !detail.is_null());
    if let Some(other) = detail.filter(|detail| !detail.is_object()) {
        return Err(EventError::Invalid {
            path: "detail".into(),
            message: format!(
                "invalid type: {}, expected an object such as {{}} or {{\"dry_run\": true}}",
                describe(other)
            ),
        });
    }
    // serde's refusal at its path; a time chrono refused gets the same messages as the other
    // times (the placeholder, the form expected).
    let envelope: ScheduledEvent = serde_path_to_error::deserialize(event).map_err(|error| {
        let time = object.get("time").filter(|_| error.path().to_string() == "time");
        let worded = time.and_then(|time| match Timestamp::deserialize(time) {
            Ok(text) => timestamp(Some(text), "time").err(),
            Err(wrong_type) => Some(invalid_at("time", wrong_type)),
        });
        worded.unwrap_or_else(|| invalid(error))
    })?;
    let time = envelope.time.ok_or_else(|| EventError::Missing {
        field: "time".into(),
        expected: "EventBridge always sends the scheduled instant as RFC 3339, e.g. \"2018-10-25T23:45:00Z\"",
    })?;
    let detail = envelope.detail.unwrap_or_default();
    check_operation(detail.operation, "detail.Operation", function)?;
    let dry_run = flag(detail.dry_run);
    Ok(Invocation {
        at: Some(time),
        dry_run,
        allow_future_clock: false,
        clock: ClockSource::EnvelopeTime,
    })
}
