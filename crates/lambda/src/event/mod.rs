//! The invocation payload of the `create_new` and `resize_old` Lambda functions.
//!
//! Pure (no Lambda dependency) so every rule is unit-tested (in `tests`). What a payload
//! decides is the run's clock and whether it is a dry run; the operation itself is fixed per
//! function, and an `Operation` meant for the other function is refused rather than silently
//! run here.
//!
//! One payload ([`Payload`]): the AWS blog's `{"Operation": "create_new"}`, with
//! `scheduled_time` (what the template's EventBridge Scheduler schedules send, filled from
//! `<aws.scheduler.scheduled-time>`), `at` (a manual run's instant), `dry_run` and
//! `allow_future_clock` (see [`ddb_rollover::check_clock`]) and `replay`, every key optional;
//! `null` or `{}` runs now (a console "Test" with an empty event). Both times are RFC 3339; when
//! both are given, `scheduled_time` wins: it is what makes retries of one scheduled run decide
//! the same thing. A time must be now (earlier in the wall clock's period, or within the clock
//! guard's skew of it) unless the event says `"replay": true` or `"dry_run": true` ([`Invocation::checked_now`]).
//!
//! The keys are a serde struct that refuses unknown keys (`deny_unknown_fields`): serde's
//! errors say what was refused and what is allowed (the struct's own keys, or a field's
//! expected form), and `serde_path_to_error` adds the field's path. The values are then checked
//! (in `checks`): an `Operation` names this function, a time is RFC 3339 and not the schedule's
//! unsubstituted placeholder. A `null` value is refused (it is no boolean, no time), and so are
//! duplicate keys and deep nesting (the core's `ddb_rollover::policy::strict_json`, on the JSON text). Anything else is an
//! [`EventError`] that names the field and what to send instead, echoing at most
//! [`MAX_ECHO_CHARS`] characters of what was sent.
//!
//! The modules, one concern each: `payload` the payload and what it decides, `fields` the serde
//! forms of its values, `checks` what those values must mean, `invocation` the decided inputs
//! and their clock check, and `error` the refusals and their wording.

mod checks;
mod error;
mod fields;
mod invocation;
mod payload;
#[cfg(test)]
mod tests;

use serde_json::Value;

use ddb_rollover::Operation;

pub use error::{EventError, MAX_ECHO_CHARS};
pub use invocation::{ClockSource, Invocation};
pub use payload::Payload;

/// Reads the payload `function`'s Lambda was invoked with and decides what it asks: the same
/// reading the runtime's [`Payload`] does, for callers holding JSON (tests, local tools).
pub fn parse_invocation(event: &Value, function: Operation) -> Result<Invocation, EventError> {
    Payload::from(event).invocation(function)
}
