//! The payload's unit tests, one file per concern, sharing the helpers below: a payload
//! accepted (`ok`) or refused (`err`).

mod invocation;
mod payload;

use std::fmt;

use chrono::{DateTime, Utc};
use serde_json::Value;

use ddb_rollover::{Operation, Policy};

use super::payload::Fields;
use super::*;
use serde_json::json;

const CREATE: Operation = Operation::CreateNew;
const RESIZE: Operation = Operation::ResizeOld;

fn t(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
}

/// What a real run (no dry run, no future clock) gets when `clock` sets its instant to `at`.
fn real_run_at(at: &str, clock: ClockSource) -> Invocation {
    Invocation {
        at: Some(t(at)),
        dry_run: false,
        allow_future_clock: false,
        replay: false,
        clock,
    }
}

fn ok(event: Value, function: Operation) -> Invocation {
    parse_invocation(&event, function).unwrap_or_else(|e| panic!("{event} refused: {e}"))
}

fn err(event: Value, function: Operation) -> EventError {
    match parse_invocation(&event, function) {
        Ok(invocation) => panic!("{event} accepted as {invocation:?}"),
        Err(e) => e,
    }
}

/// The message of `event`'s refusal, which must be an invalid value at `path`.
fn invalid_at(event: Value, function: Operation, path: &str) -> String {
    let e = err(event.clone(), function);
    assert!(
        matches!(&e, EventError::Invalid { path: at, .. } if at == path),
        "{event}: {e:?}"
    );
    e.to_string()
}
