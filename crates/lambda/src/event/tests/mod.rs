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

fn ok(event: Value, function: Operation) -> Invocation {
    parse_invocation(&event, function).unwrap_or_else(|e| panic!("{event} refused: {e}"))
}

fn err(event: Value, function: Operation) -> EventError {
    match parse_invocation(&event, function) {
        Ok(invocation) => panic!("{event} accepted as {invocation:?}"),
        Err(e) => e,
    }
}
