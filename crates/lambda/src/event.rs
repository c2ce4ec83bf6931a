//! The invocation payload of the `create_new` and `resize_old` Lambda functions.
//!
//! Pure (no Lambda dependency) so every rule is unit-tested here. What a payload decides is
//! the run's clock and whether it is a dry run; the operation itself is fixed per function, and
//! an `Operation` meant for the other function is refused rather than silently run here.
//!
//! Accepted payloads:
//! - `null` or `{}`: run now (a console "Test" with an empty event).
//! - The AWS blog's `{"Operation": "create_new"}`, optionally with `scheduled_time` (filled
//!   by EventBridge Scheduler from `<aws.scheduler.scheduled-time>`), `at` (a manual run's
//!   instant), `dry_run` and `allow_future_clock` (see [`ddb_rollover::run::clock`]). Both times are
//!   RFC 3339. When both are given, `scheduled_time`
//!   wins: it is what makes retries of one scheduled run decide the same thing.
//! - An EventBridge "Scheduled Event" envelope (rules with a `rate`/`cron` schedule): its
//!   `time` is the clock; its `detail` may carry `Operation` and `dry_run`.
//!
//! Each payload is a serde struct that refuses unknown keys (`deny_unknown_fields`); the
//! envelope is `aws_lambda_events`' [`EventBridgeEvent`] with such a struct as its `detail`.
//! serde's errors say what was refused and what is allowed (the struct's own keys, or a
//! field's expected form), and `serde_path_to_error` adds the field's path (`dry_run`,
//! `detail.Operation`). The values are then checked here: an `Operation` names a function, a
//! time is RFC 3339.
//!
//! A `null` value counts as an absent key. Anything else (an unknown key, a wrong type, a time
//! that is not RFC 3339) is an [`EventError`] that names the field and what to send instead.

use std::fmt;

use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use chrono::{DateTime, Utc};
use serde::de::{self, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use ddb_rollover::run::clock::{check_clock, clock_warning, CheckedInstant, ClockAllowance};
use ddb_rollover::Operation;
use ddb_rollover::Policy;

/// A direct (non-envelope) payload; every key is optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DirectPayload {
    #[serde(rename = "Operation")]
    operation: Option<OperationName>,
    scheduled_time: Option<Timestamp>,
    at: Option<Timestamp>,
    dry_run: Option<Flag>,
    allow_future_clock: Option<Flag>,
}

/// What an EventBridge envelope's `detail` may carry. `Serialize` only because
/// [`EventBridgeEvent`] requires it of its detail.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct ScheduledDetail {
    #[serde(rename = "Operation")]
    operation: Option<OperationName>,
    dry_run: Option<Flag>,
}

/// An EventBridge rule's Scheduled Event; a `null` or absent `detail` is `None`. The metadata
/// (`version`, `id`, `account`, `region`, `resources`) is typed by the crate and not used.
type ScheduledEvent = EventBridgeEvent<Option<ScheduledDetail>>;

/// What an EventBridge rule with a schedule sends as `detail-type` and `source`.
const SCHEDULED_EVENT_DETAIL_TYPE: &str = "Scheduled Event";
const SCHEDULED_EVENT_SOURCE: &str = "aws.events";

const EXAMPLE_TIME: &str = "2018-10-25T23:45:00Z";

/// What the times' serde errors say is expected.
const TIMESTAMP_EXPECTED: &str = "an RFC 3339 timestamp string such as \"2018-10-25T23:45:00Z\"";

/// An `Operation` as sent, named in words by [`check_operation`].
#[derive(Debug, Serialize)]
struct OperationName(String);

/// A time as sent, checked by [`timestamp`] (which words the placeholder and format errors).
#[derive(Debug, Serialize)]
struct Timestamp(String);

/// A JSON boolean.
#[derive(Debug, Serialize)]
struct Flag(bool);

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

/// Which input set the run's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// `scheduled_time`: EventBridge Scheduler's `<aws.scheduler.scheduled-time>`.
    ScheduledTime,
    /// `at`: a manual run deciding as if it were that instant.
    At,
    /// The `time` of an EventBridge Scheduled Event envelope.
    EnvelopeTime,
    /// No time in the event: the wall clock when the run starts.
    WallClock,
}

impl ClockSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ClockSource::ScheduledTime => "scheduled_time",
            ClockSource::At => "at",
            ClockSource::EnvelopeTime => "envelope_time",
            ClockSource::WallClock => "wall_clock",
        }
    }
}

/// One invocation's inputs to [`ddb_rollover::run()`], besides the policy and the function's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Invocation {
    /// The instant to decide for; `None` means the wall clock.
    pub at: Option<DateTime<Utc>>,
    pub dry_run: bool,
    /// An explicit opt-in to an instant far ahead of the wall clock, for simulations (see
    /// [`ddb_rollover::run::clock`]).
    pub allow_future_clock: bool,
    pub clock: ClockSource,
}

impl Invocation {
    /// A run with no time in its event: now, for real.
    pub const fn wall_clock() -> Invocation {
        Invocation {
            at: None,
            dry_run: false,
            allow_future_clock: false,
            clock: ClockSource::WallClock,
        }
    }

    /// The instant the run decides for: the event's, else `wall_clock`.
    pub fn now(&self, wall_clock: DateTime<Utc>) -> DateTime<Utc> {
        self.at.unwrap_or(wall_clock)
    }

    /// The instant the run decides for, checked against the wall clock before any AWS call
    /// (see [`ddb_rollover::run::clock`]); a refusal names the field that carried the instant.
    pub fn checked_now(
        &self,
        policy: &Policy,
        operation: Operation,
        wall_clock: DateTime<Utc>,
    ) -> Result<CheckedInstant, EventError> {
        let now = self.now(wall_clock);
        let allowance = ClockAllowance {
            dry_run: self.dry_run,
            allow_future_clock: self.allow_future_clock,
        };
        check_clock(policy, &[operation], now, wall_clock, allowance).map_err(|error| EventError::Clock {
            field: self.clock.as_str(),
            message: error.to_string(),
        })
    }

    /// What the report should warn about the instant: a manual event's `at` that has
    /// create_new build tables far ahead of the wall clock, which keep phase 0's capacity
    /// until their periods pass (see [`clock_warning`]). Dry runs too: they preview that run.
    pub fn clock_warning(
        &self,
        policy: &Policy,
        operation: Operation,
        wall_clock: DateTime<Utc>,
    ) -> Option<String> {
        if self.clock != ClockSource::At {
            return None;
        }
        clock_warning(policy, operation, self.at?, wall_clock).map(|warning| format!("at: {warning}"))
    }
}

/// Why a payload was refused. Every message names the field and what to send instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error(
        "the event must be a JSON object such as {{\"Operation\": \"create_new\"}} (or empty), not {found}"
    )]
    NotAnObject { found: String },

    /// What serde refused, at its path (an unknown key's is the key itself, `detail.dryRun`):
    /// an unknown key (with the keys its struct accepts), or a value of the wrong type (with the
    /// form expected).
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },

    #[error("{field}: {message}")]
    UnknownOperation { field: String, message: String },

    #[error(
        "this is the {function} function; it cannot run Operation {requested:?} (invoke the {requested} function instead)",
        requested = .requested.as_str()
    )]
    WrongFunction {
        function: Operation,
        requested: Operation,
    },

    #[error(
        "{field} is {value:?}: the schedule's Input placeholder was not substituted. EventBridge Scheduler \
         fills <aws.scheduler.scheduled-time> only when the schedule fires; for a manual or console run, \
         send a real time such as {{\"at\": \"{EXAMPLE_TIME}\"}}, or no time to run now"
    )]
    Placeholder { field: String, value: String },

    #[error("{field} is {value:?}, not an RFC 3339 timestamp ({reason}): use e.g. \"{EXAMPLE_TIME}\"")]
    BadTimestamp {
        field: String,
        value: String,
        reason: String,
    },

    #[error(
        "this function runs on schedules, but got an EventBridge event with detail-type {detail_type} from \
         source {source_name}: target it with an EventBridge Scheduler schedule or a rule with a schedule \
         expression (detail-type \"Scheduled Event\", source \"aws.events\")"
    )]
    NotAScheduledEvent {
        detail_type: String,
        source_name: String,
    },

    #[error("{field}: {message}")]
    Clock { field: &'static str, message: String },

    #[error("the EventBridge Scheduled Event has no {field}: {expected}")]
    Missing { field: String, expected: &'static str },
}

/// Parses the payload `function`'s Lambda was invoked with. See the module documentation for
/// what is accepted.
pub fn parse_invocation(event: &Value, function: Operation) -> Result<Invocation, EventError> {
    let object = match event {
        Value::Null => return Ok(Invocation::wall_clock()),
        Value::Object(object) => object,
        other => {
            return Err(EventError::NotAnObject {
                found: describe(other),
            })
        }
    };
    if object.contains_key("detail-type") && object.contains_key("source") {
        parse_envelope(event, object, function)
    } else {
        parse_direct(event, function)
    }
}

/// `{"Operation": ..., "scheduled_time": ..., "at": ..., "dry_run": ...}`, every key optional.
fn parse_direct(event: &Value, function: Operation) -> Result<Invocation, EventError> {
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

/// An EventBridge event: only a Scheduled Event from `aws.events` is accepted. Its `time` is
/// parsed by the crate's type: chrono's relaxed RFC 3339, which also takes e.g. `+0000` or `UTC`
/// for the offset (EventBridge sends `Z`).
fn parse_envelope(
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

/// serde's refusal, named by its path.
fn invalid(error: serde_path_to_error::Error<serde_json::Error>) -> EventError {
    let path = error.path().to_string();
    invalid_at(if path == "." { "event" } else { &path }, error.into_inner())
}

fn invalid_at(path: &str, error: serde_json::Error) -> EventError {
    EventError::Invalid {
        path: path.to_owned(),
        message: error.to_string(),
    }
}

/// An absent Operation is this function's; anything else must name this function.
fn check_operation(value: Option<OperationName>, field: &str, function: Operation) -> Result<(), EventError> {
    let Some(OperationName(name)) = value else {
        return Ok(());
    };
    let requested = name
        .parse::<Operation>()
        .map_err(|message| EventError::UnknownOperation {
            field: field.to_string(),
            message,
        })?;
    if requested == function {
        Ok(())
    } else {
        Err(EventError::WrongFunction { function, requested })
    }
}

fn timestamp(value: Option<Timestamp>, field: &str) -> Result<Option<DateTime<Utc>>, EventError> {
    let Some(Timestamp(text)) = value else {
        return Ok(None);
    };
    // What a console test with a schedule's raw Input sends: `<aws.scheduler.scheduled-time>`.
    if text.starts_with('<') && text.ends_with('>') {
        return Err(EventError::Placeholder {
            field: field.to_string(),
            value: text,
        });
    }
    match DateTime::parse_from_rfc3339(&text) {
        Ok(t) => Ok(Some(t.with_timezone(&Utc))),
        Err(e) => Err(EventError::BadTimestamp {
            field: field.to_string(),
            value: text,
            reason: e.to_string(),
        }),
    }
}

fn flag(value: Option<Flag>) -> bool {
    value.is_some_and(|Flag(flag)| flag)
}

/// `a string ("yes")`, `a number (5)`, ...: the JSON type and the value, for error messages.
fn describe(value: &Value) -> String {
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
fn compact(value: Option<&Value>) -> String {
    const MAX: usize = 60;
    let text = value.map_or_else(|| "(absent)".to_string(), Value::to_string);
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
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

    fn envelope(detail: Value) -> Value {
        json!({
            "version": "0",
            "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": "123456789012",
            "time": "2018-10-25T23:45:00Z",
            "region": "us-east-1",
            "resources": ["arn:aws:events:us-east-1:123456789012:rule/create-new"],
            "detail": detail
        })
    }

    #[test]
    fn null_and_empty_object_run_now_for_real() {
        for event in [Value::Null, json!({})] {
            for function in [CREATE, RESIZE] {
                assert_eq!(ok(event.clone(), function), Invocation::wall_clock());
            }
        }
        assert_eq!(Invocation::wall_clock().clock, ClockSource::WallClock);
    }

    #[test]
    fn the_blogs_payloads_are_accepted_by_their_own_function() {
        assert_eq!(
            ok(json!({"Operation": "create_new"}), CREATE),
            Invocation::wall_clock()
        );
        assert_eq!(
            ok(json!({"Operation": "resize_old"}), RESIZE),
            Invocation::wall_clock()
        );
    }

    #[test]
    fn the_kebab_case_spelling_is_accepted_too() {
        assert_eq!(
            ok(json!({"Operation": "create-new"}), CREATE),
            Invocation::wall_clock()
        );
        assert_eq!(
            ok(json!({"Operation": "resize-old"}), RESIZE),
            Invocation::wall_clock()
        );
    }

    #[test]
    fn an_operation_for_the_other_function_names_both() {
        let e = err(json!({"Operation": "resize_old"}), CREATE);
        assert_eq!(
            e,
            EventError::WrongFunction {
                function: CREATE,
                requested: RESIZE
            }
        );
        assert_eq!(
            e.to_string(),
            "this is the create_new function; it cannot run Operation \"resize_old\" \
             (invoke the resize_old function instead)"
        );
        let e = err(json!({"Operation": "create-new"}), RESIZE).to_string();
        assert!(
            e.contains("this is the resize_old function") && e.contains("invoke the create_new function"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_or_mistyped_operation_is_refused() {
        let e = err(json!({"Operation": "delete_old"}), CREATE);
        assert!(matches!(e, EventError::UnknownOperation { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.starts_with("Operation: ") && e.contains("\"delete_old\""),
            "{e}"
        );
        assert!(e.contains("create_new") && e.contains("resize_old"), "{e}");
        let e = err(json!({"Operation": 1}), CREATE);
        assert!(
            matches!(e, EventError::Invalid { ref path, .. } if path == "Operation"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "Operation: invalid type: integer `1`, expected \"create_new\" or \"resize_old\""
        );
    }

    #[test]
    fn scheduled_time_sets_the_clock() {
        let invocation = ok(
            json!({"Operation": "create_new", "scheduled_time": "2018-10-25T23:45:00Z"}),
            CREATE,
        );
        assert_eq!(
            invocation,
            Invocation {
                at: Some(t("2018-10-25T23:45:00Z")),
                dry_run: false,
                allow_future_clock: false,
                clock: ClockSource::ScheduledTime
            }
        );
    }

    #[test]
    fn at_sets_the_clock_and_offsets_are_converted_to_utc() {
        let invocation = ok(
            json!({"at": "2018-10-28T02:15:00+02:00", "dry_run": true}),
            RESIZE,
        );
        assert_eq!(
            invocation,
            Invocation {
                at: Some(t("2018-10-28T00:15:00Z")),
                dry_run: true,
                allow_future_clock: false,
                clock: ClockSource::At
            }
        );
    }

    #[test]
    fn scheduled_time_wins_over_at() {
        let invocation = ok(
            json!({"scheduled_time": "2018-10-26T00:15:00Z", "at": "2018-10-28T00:15:00Z"}),
            RESIZE,
        );
        assert_eq!(invocation.at, Some(t("2018-10-26T00:15:00Z")));
        assert_eq!(invocation.clock, ClockSource::ScheduledTime);
        // The losing field is still checked: a typo in it is not silently ignored.
        let e = err(
            json!({"scheduled_time": "2018-10-26T00:15:00Z", "at": "soon"}),
            RESIZE,
        );
        assert!(
            matches!(e, EventError::BadTimestamp { ref field, .. } if field == "at"),
            "{e:?}"
        );
    }

    #[test]
    fn null_values_count_as_absent() {
        let event = json!({"Operation": null, "scheduled_time": null, "at": null, "dry_run": null});
        assert_eq!(ok(event, CREATE), Invocation::wall_clock());
    }

    #[test]
    fn dry_run_false_is_a_real_run() {
        assert!(!ok(json!({"dry_run": false}), CREATE).dry_run);
        assert!(ok(json!({"dry_run": true}), CREATE).dry_run);
    }

    #[test]
    fn an_unsubstituted_scheduler_placeholder_says_so() {
        for field in ["scheduled_time", "at"] {
            let event = json!({"Operation": "create_new", field: "<aws.scheduler.scheduled-time>"});
            let e = err(event, CREATE);
            assert_eq!(
                e,
                EventError::Placeholder {
                    field: field.into(),
                    value: "<aws.scheduler.scheduled-time>".into()
                }
            );
            let message = e.to_string();
            assert!(
                message.starts_with(&format!("{field} is \"<aws.scheduler.scheduled-time>\"")),
                "{message}"
            );
            assert!(message.contains("placeholder was not substituted"), "{message}");
        }
    }

    #[test]
    fn an_unknown_key_is_named_with_the_accepted_ones() {
        let e = err(json!({"Operation": "create_new", "force": true}), CREATE);
        assert_eq!(
            e.to_string(),
            "force: unknown field `force`, expected one of `Operation`, `scheduled_time`, `at`, `dry_run`, `allow_future_clock`"
        );
    }

    #[test]
    fn a_near_miss_key_is_named_next_to_the_key_it_missed() {
        for (typo, meant) in [
            ("dryrun", "dry_run"),
            ("dry-run", "dry_run"),
            ("operation", "Operation"),
            ("scheduledTime", "scheduled_time"),
            ("AT", "at"),
        ] {
            let e = err(json!({ typo: "x" }), CREATE).to_string();
            assert!(
                e.starts_with(&format!("{typo}: unknown field `{typo}`, expected one of ")),
                "{e}"
            );
            assert!(e.contains(&format!("`{meant}`")), "{e}");
        }
    }

    #[test]
    fn a_payload_that_is_not_an_object_is_refused() {
        for (event, found) in [
            (json!("create_new"), "a string (\"create_new\")"),
            (json!(5), "a number (5)"),
            (json!(true), "a boolean (true)"),
            (json!([{"Operation": "create_new"}]), "an array"),
        ] {
            let e = err(event, CREATE);
            assert!(matches!(e, EventError::NotAnObject { .. }), "{e:?}");
            let e = e.to_string();
            assert!(e.starts_with("the event must be a JSON object"), "{e}");
            assert!(e.contains(found), "{e}");
        }
    }

    #[test]
    fn wrong_types_name_the_field_and_the_expected_form() {
        for (event, field, expected) in [
            (json!({"dry_run": "yes"}), "dry_run", "true or false"),
            (json!({"dry_run": 1}), "dry_run", "true or false"),
            (json!({"at": 5}), "at", "an RFC 3339 timestamp string"),
            (
                json!({"scheduled_time": {}}),
                "scheduled_time",
                "an RFC 3339 timestamp string",
            ),
        ] {
            let e = err(event.clone(), CREATE);
            assert!(
                matches!(e, EventError::Invalid { ref path, .. } if path == field),
                "{event}: {e:?}"
            );
            let e = e.to_string();
            assert!(e.starts_with(&format!("{field}: invalid type: ")), "{e}");
            assert!(e.contains(&format!(", expected {expected}")), "{e}");
        }
        assert_eq!(
            err(json!({"dry_run": "yes"}), CREATE).to_string(),
            "dry_run: invalid type: string \"yes\", expected true or false (a JSON boolean, not a string)"
        );
    }

    #[test]
    fn a_time_that_is_not_rfc_3339_names_the_field_and_an_example() {
        for value in [
            "yesterday",
            "2018-10-25",
            "2018-10-25 23:45",
            "2018-10-25T23:45:00",
        ] {
            let e = err(json!({ "at": value }), CREATE);
            assert!(matches!(e, EventError::BadTimestamp { .. }), "{value}: {e:?}");
            let e = e.to_string();
            assert!(
                e.starts_with(&format!("at is {value:?}, not an RFC 3339 timestamp")),
                "{e}"
            );
            assert!(e.ends_with("use e.g. \"2018-10-25T23:45:00Z\""), "{e}");
        }
    }

    #[test]
    fn a_scheduled_event_envelope_uses_its_time() {
        let invocation = ok(envelope(json!({})), CREATE);
        assert_eq!(
            invocation,
            Invocation {
                at: Some(t("2018-10-25T23:45:00Z")),
                dry_run: false,
                allow_future_clock: false,
                clock: ClockSource::EnvelopeTime
            }
        );
        // Any function may be targeted by a plain schedule; the metadata is ignored.
        assert_eq!(ok(envelope(json!({})), RESIZE).clock, ClockSource::EnvelopeTime);
        let mut bare = envelope(Value::Null);
        bare.as_object_mut().unwrap().remove("detail");
        assert_eq!(ok(bare, CREATE).at, Some(t("2018-10-25T23:45:00Z")));
    }

    #[test]
    fn an_envelopes_detail_may_carry_operation_and_dry_run() {
        let invocation = ok(
            envelope(json!({"Operation": "create_new", "dry_run": true})),
            CREATE,
        );
        assert!(invocation.dry_run);
        assert_eq!(invocation.clock, ClockSource::EnvelopeTime);
        let e = err(envelope(json!({"Operation": "create_new"})), RESIZE);
        assert_eq!(
            e,
            EventError::WrongFunction {
                function: RESIZE,
                requested: CREATE
            }
        );
        let e = err(envelope(json!({"dry_run": "yes"})), CREATE).to_string();
        assert!(
            e.starts_with("detail.dry_run: invalid type: string \"yes\", expected true or false"),
            "{e}"
        );
        let e = err(envelope(json!({"Operation": "nope"})), CREATE).to_string();
        assert!(e.starts_with("detail.Operation: "), "{e}");
    }

    #[test]
    fn an_envelopes_detail_rejects_unknown_keys_and_non_objects() {
        let e = err(envelope(json!({"at": "2018-10-28T00:15:00Z"})), CREATE).to_string();
        assert_eq!(
            e,
            "detail.at: unknown field `at`, expected `Operation` or `dry_run`"
        );
        let e = err(envelope(json!("x")), CREATE).to_string();
        assert!(
            e.starts_with("detail: invalid type: a string (\"x\"), expected an object"),
            "{e}"
        );
    }

    #[test]
    fn an_envelope_needs_a_valid_time() {
        let mut event = envelope(json!({}));
        event.as_object_mut().unwrap().remove("time");
        let e = err(event.clone(), CREATE);
        assert!(
            matches!(e, EventError::Missing { ref field, .. } if field == "time"),
            "{e:?}"
        );
        event["time"] = json!("noon");
        let e = err(event, CREATE).to_string();
        assert!(
            e.starts_with("time is \"noon\", not an RFC 3339 timestamp"),
            "{e}"
        );
    }

    #[test]
    fn other_eventbridge_events_are_refused() {
        let mut event = envelope(json!({}));
        event["detail-type"] = json!("EC2 Instance State-change Notification");
        event["source"] = json!("aws.ec2");
        let e = err(event, CREATE);
        assert!(matches!(e, EventError::NotAScheduledEvent { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("\"EC2 Instance State-change Notification\"") && e.contains("\"aws.ec2\""),
            "{e}"
        );
        // Only one of the two keys: not an envelope, so both are unknown keys.
        let e = err(
            json!({"source": "aws.events", "time": "2018-10-25T23:45:00Z"}),
            CREATE,
        );
        assert!(
            matches!(e, EventError::Invalid { ref path, .. } if path == "source"),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("source: unknown field `source`"), "{e}");
    }

    #[test]
    fn now_is_the_events_time_else_the_wall_clock() {
        let wall = t("2030-01-01T00:00:00Z");
        assert_eq!(Invocation::wall_clock().now(wall), wall);
        let at = ok(json!({"at": "2018-10-28T00:15:00Z"}), RESIZE);
        assert_eq!(at.now(wall), t("2018-10-28T00:15:00Z"));
    }

    #[test]
    fn clock_source_serializes_in_snake_case() {
        let names: Vec<String> = [
            ClockSource::ScheduledTime,
            ClockSource::At,
            ClockSource::EnvelopeTime,
            ClockSource::WallClock,
        ]
        .into_iter()
        .map(|c| {
            let name = serde_json::to_value(c).unwrap().as_str().unwrap().to_string();
            assert_eq!(name, c.as_str());
            name
        })
        .collect();
        assert_eq!(names, ["scheduled_time", "at", "envelope_time", "wall_clock"]);
    }

    #[test]
    fn long_values_are_cut_short_in_messages() {
        let e = err(json!({"dry_run": "y".repeat(500)}), CREATE).to_string();
        assert!(e.len() < 200, "{e}");
        assert!(e.contains("..."), "{e}");
    }

    #[test]
    fn a_manual_create_new_far_ahead_warns_naming_at() {
        let policy = Policy::default();
        let wall = t("2018-10-25T10:00:00Z");
        let far = ok(json!({"at": "2030-01-01T00:00:00Z"}), CREATE);
        let warning = far.clock_warning(&policy, CREATE, wall).unwrap();
        assert!(
            warning.starts_with("at: 2030-01-01 00:00:00 UTC is in period 2030-01-01, 4086 periods after"),
            "{warning}"
        );
        assert!(warning.contains("nothing lowers a future table"), "{warning}");
        let dry = ok(json!({"at": "2030-01-01T00:00:00Z", "dry_run": true}), CREATE);
        assert!(dry.clock_warning(&policy, CREATE, wall).is_some());
        // The next period's run, the wall clock, and resize_old (refused that far ahead) do not.
        let near = ok(json!({"at": "2018-10-25T23:45:00Z"}), CREATE);
        assert_eq!(near.clock_warning(&policy, CREATE, wall), None);
        assert_eq!(
            Invocation::wall_clock().clock_warning(&policy, CREATE, wall),
            None
        );
        assert_eq!(far.clock_warning(&policy, RESIZE, wall), None);
        // A schedule's own time is not a manual instant.
        let scheduled = ok(json!({"scheduled_time": "2030-01-01T00:00:00Z"}), CREATE);
        assert_eq!(scheduled.clock_warning(&policy, CREATE, wall), None);
    }

    #[test]
    fn a_far_future_clock_is_refused_for_resize_old_naming_the_field_unless_allowed() {
        let policy = Policy::default();
        let wall = t("2018-10-25T10:00:00Z");
        let event = json!({"at": "9999-12-30T23:59:59Z"});
        let e = ok(event.clone(), RESIZE)
            .checked_now(&policy, RESIZE, wall)
            .unwrap_err();
        assert!(matches!(e, EventError::Clock { field: "at", .. }), "{e:?}");
        assert!(e.to_string().starts_with("at: 9999-12-30"), "{e}");
        let e = ok(json!({"scheduled_time": "2019-01-01T00:15:00Z"}), RESIZE)
            .checked_now(&policy, RESIZE, wall)
            .unwrap_err();
        assert!(e.to_string().starts_with("scheduled_time: "), "{e}");
        // create_new may look ahead; so may an explicit simulation or a dry run.
        assert!(ok(event.clone(), CREATE)
            .checked_now(&policy, CREATE, wall)
            .is_ok());
        for allowed in [
            json!({"at": "9999-12-30T23:59:59Z", "allow_future_clock": true}),
            json!({"at": "9999-12-30T23:59:59Z", "dry_run": true}),
        ] {
            assert_eq!(
                ok(allowed, RESIZE)
                    .checked_now(&policy, RESIZE, wall)
                    .map(|at| at.at()),
                Ok(t("9999-12-30T23:59:59Z"))
            );
        }
        // No label for the next day: refused for everyone.
        let e = ok(
            json!({"at": "9999-12-31T23:59:59Z", "allow_future_clock": true}),
            CREATE,
        )
        .checked_now(&policy, CREATE, wall)
        .unwrap_err();
        assert!(e.to_string().contains("1000 to 9999"), "{e}");
        assert_eq!(
            err(json!({"allow_future_clock": "yes"}), RESIZE).to_string(),
            "allow_future_clock: invalid type: string \"yes\", expected true or false (a JSON boolean, not a string)"
        );
    }

    /// The accepted keys a refusal lists are its struct's own fields, in the struct's order:
    /// no copy of them to keep in step.
    #[test]
    fn the_accepted_keys_are_the_structs_fields_in_order() {
        fn listed<T: serde::de::DeserializeOwned + fmt::Debug>() -> Vec<String> {
            let refusal = serde_path_to_error::deserialize::<_, T>(&json!({"?": null}))
                .unwrap_err()
                .to_string();
            refusal.split('`').skip(3).step_by(2).map(String::from).collect()
        }
        assert_eq!(
            listed::<DirectPayload>(),
            [
                "Operation",
                "scheduled_time",
                "at",
                "dry_run",
                "allow_future_clock"
            ]
        );
        assert_eq!(listed::<ScheduledDetail>(), ["Operation", "dry_run"]);
    }

    #[test]
    fn an_eventbridge_scheduled_event_as_aws_documents_it_parses() {
        // The example event of the EventBridge User Guide's tutorial "Schedule AWS Lambda
        // functions using EventBridge" (eb-run-lambda-schedule).
        let documented = r#"{
            "version": "0",
            "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": "123456789012",
            "time": "2015-10-08T16:53:06Z",
            "region": "us-east-1",
            "resources": [
                "arn:aws:events:us-east-1:123456789012:rule/my-scheduled-rule"
            ],
            "detail": {}
        }"#;
        let event: Value = serde_json::from_str(documented).unwrap();
        for function in [CREATE, RESIZE] {
            assert_eq!(
                ok(event.clone(), function),
                Invocation {
                    at: Some(t("2015-10-08T16:53:06Z")),
                    dry_run: false,
                    allow_future_clock: false,
                    clock: ClockSource::EnvelopeTime
                }
            );
        }
        // Envelope keys other than the documented ones (a replayed event's `replay-name`) are
        // metadata: ignored, unlike unknown keys in a direct payload or in `detail`.
        let mut replayed = event;
        replayed["replay-name"] = json!("replay-2015-10-08");
        assert_eq!(ok(replayed, CREATE).at, Some(t("2015-10-08T16:53:06Z")));
    }

    #[test]
    fn an_unknown_key_in_detail_names_the_accepted_detail_keys() {
        let e = err(envelope(json!({"dryRun": true})), CREATE);
        assert!(
            matches!(e, EventError::Invalid { ref path, .. } if path == "detail.dryRun"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "detail.dryRun: unknown field `dryRun`, expected `Operation` or `dry_run`"
        );
        // serde would read an array as the struct's fields in order: not an object, refused.
        let e = err(envelope(json!([null, true])), CREATE).to_string();
        assert!(e.starts_with("detail: invalid type: an array"), "{e}");
    }

    #[test]
    fn an_envelopes_time_gets_the_same_messages_as_the_other_times() {
        let mut event = envelope(json!({}));
        event["time"] = json!("<aws.events.event.ingestion-time>");
        let e = err(event.clone(), CREATE);
        assert!(
            matches!(e, EventError::Placeholder { ref field, .. } if field == "time"),
            "{e:?}"
        );
        event["time"] = json!(1_540_511_100);
        let e = err(event.clone(), CREATE).to_string();
        assert_eq!(
            e,
            "time: invalid type: integer `1540511100`, expected an RFC 3339 timestamp string such as \"2018-10-25T23:45:00Z\""
        );
        // The crate's chrono parse is relaxed (here: an offset without a colon); the other
        // times are strict RFC 3339.
        event["time"] = json!("2018-10-25T23:45:00+0000");
        assert_eq!(ok(event.clone(), CREATE).at, Some(t("2018-10-25T23:45:00Z")));
        assert!(matches!(
            err(json!({"at": "2018-10-25T23:45:00+0000"}), CREATE),
            EventError::BadTimestamp { .. }
        ));
        // Only a time chrono refused is blamed when the envelope is refused for its detail.
        let mut both = event.clone();
        both["detail"] = json!({"force": true});
        assert!(matches!(err(both, CREATE), EventError::Invalid { ref path, .. } if path == "detail.force"));
        event["time"] = Value::Null;
        let e = err(event, CREATE);
        assert!(
            matches!(e, EventError::Missing { ref field, .. } if field == "time"),
            "{e:?}"
        );
    }

    #[test]
    fn an_envelope_with_metadata_eventbridge_would_not_send_is_malformed() {
        let mut event = envelope(json!({}));
        event["account"] = json!(123456789012_u64);
        let e = err(event, CREATE);
        // Now named by its path, which the hand-written walk could not do.
        assert!(
            matches!(e, EventError::Invalid { ref path, .. } if path == "account"),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .starts_with("account: invalid type: integer `123456789012`"),
            "{e}"
        );
    }
}
