//! The serde forms of the payloads' values: an `Operation` and the times are strings, the
//! flags JSON booleans. Hand-written visitors so that a wrong type's error says the form
//! expected in words, and a long string is cut short; the values' meaning is checked later
//! ([`super::checks`]).

use std::fmt;

use serde::de::{self, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::error::compact;

/// What the times' serde errors say is expected.
const TIMESTAMP_EXPECTED: &str = "an RFC 3339 timestamp string such as \"2018-10-25T23:45:00Z\"";

/// An `Operation` as sent, named in words by [`check_operation`](super::checks::check_operation).
#[derive(Debug, Serialize)]
pub(super) struct OperationName(pub(super) String);

/// A time as sent, checked by [`timestamp`](super::checks::timestamp) (which words the
/// placeholder and format errors).
#[derive(Debug, Serialize)]
pub(super) struct Timestamp(pub(super) String);

/// A JSON boolean.
#[derive(Debug, Serialize)]
pub(super) struct Flag(pub(super) bool);

impl<'de> Deserialize<'de> for OperationName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(Text("\"create_new\" or \"resize_old\""))
            .map(OperationName)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(Text(TIMESTAMP_EXPECTED))
            .map(Timestamp)
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Boolean).map(Flag)
    }
}

/// A string field's visitor: serde's "invalid type: ..., expected {0}" for anything else.
/// `deserialize_any`, so that a mistyped string reaches [`Boolean::visit_str`] and is cut short.
struct Text(&'static str);

impl Visitor<'_> for Text {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<String, E> {
        Ok(value.to_owned())
    }
}

/// A boolean field's visitor; a string is quoted cut short, so the message stays one line.
struct Boolean;

impl Visitor<'_> for Boolean {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("true or false (a JSON boolean, not a string)")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<bool, E> {
        Ok(value)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<bool, E> {
        let shown = compact(Some(&Value::String(value.to_owned())));
        Err(E::invalid_type(
            Unexpected::Other(&format!("string {shown}")),
            &self,
        ))
    }
}
