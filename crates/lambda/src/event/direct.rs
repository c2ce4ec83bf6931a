//! The direct payload: the AWS blog's `{"Operation": "create_new"}` and its optional keys
//! (`scheduled_time`, `at`, `dry_run`, `allow_future_clock`), as a manual or Scheduler run sends it.

use serde::Deserialize;
use serde_json::Value;

use ddb_rollover::Operation;

use super::checks::{check_operation, flag, timestamp};
use super::error::{invalid, EventError};
use super::fields::{Flag, OperationName, Timestamp};
use super::invocation::{ClockSource, Invocation};

/// A direct (non-envelope) payload; every key is optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DirectPayload {
    #[serde(rename = "Operation")]
    operation: Option<OperationName>,
    scheduled_time: Option<Timestamp>,
    at: Option<Timestamp>,
    dry_run: Option<Flag>,
    allow_future_clock: Option<Flag>,
}

/// `{"Operation": ..., "scheduled_time": ..., "at": ..., "dry_run": ...}`, every key optional.
pub(super) fn parse_direct(event: &Value, function: Operation) -> Result<Invocation, EventError> {
    let payload: DirectPayload = serde_path_to_error::deserialize(event).map_err(invalid)?;
    check_operation(payload.operation, "Operation", function)?;
    let scheduled_time = timestamp(payload.scheduled_time, "scheduled_time")?;
    let at = timestamp(payload.at, "at")?;
    let dry_run = flag(payload.dry_run);
    let allow_future_clock = flag(payload.allow_future_clock);
    let (at, clock) = match (scheduled_time, at) {
        (Some(t), _) => (Some(t), ClockSource::ScheduledTime),
        (None, Some(t)) => (Some(t), ClockSource::At),
        (None, None) => (None, ClockSource::WallClock),
    };
    Ok(Invocation {
        at,
        dry_run,
        allow_future_clock,
        clock,
    })
}
