//! The invocation payload of the `create_new` and `resize_old` Lambda functions.
//!
//! Pure (no Lambda dependency) so every rule is unit-tested (in `tests`). What a payload
//! decides is the run's clock and whether it is a dry run; the operation itself is fixed per
//! function, and an `Operation` meant for the other function is refused rather than silently
//! run here.
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
//! `detail.Operation`). The values are then checked (in `checks`): an `Operation` names this
//! function, a time is RFC 3339.
//!
//! A `null` value counts as an absent key. Anything else (an unknown key, a wrong type, a time
//! that is not RFC 3339) is an [`EventError`] that names the field and what to send instead.
//!
//! The modules, one concern each: `direct` and `envelope` are the two payload shapes, `fields`
//! the serde forms of their values, `checks` what those values must mean, `invocation` what a
//! payload decides, and `error` the refusals and their wording.
//!
//! [`EventBridgeEvent`]: aws_lambda_events::event::eventbridge::EventBridgeEvent

mod checks;
mod direct;
mod envelope;
mod error;
mod fields;
mod invocation;
#[cfg(test)]
mod tests;

use serde_json::Value;

use ddb_rollover::Operation;

pub use error::EventError;
pub use invocation::{ClockSource, Invocation};

use direct::parse_direct;
use envelope::parse_envelope;
use error::describe;

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
