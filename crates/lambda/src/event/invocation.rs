//! What a payload decides: the run's instant and which input set it, and whether it is a dry
//! run; and that instant's check against the wall clock before any AWS call.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use ddb_rollover::Operation;
use ddb_rollover::Policy;
use ddb_rollover::{
    check_clock, clock_skew, clock_warning, is_now, same_period, CheckedInstant, ClockAllowance,
};

use super::error::EventError;

/// Which input set the run's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// `scheduled_time`: EventBridge Scheduler's `<aws.scheduler.scheduled-time>`.
    ScheduledTime,
    /// `at`: a manual run deciding as if it were that instant.
    At,
    /// No time in the event: the wall clock when the run starts.
    WallClock,
}

impl ClockSource {
    /// The name the log and the warnings use.
    pub fn as_str(self) -> &'static str {
        match self {
            ClockSource::ScheduledTime => "scheduled_time",
            ClockSource::At => "at",
            ClockSource::WallClock => "wall_clock",
        }
    }
}

/// One invocation's inputs to [`ddb_rollover::run()`], besides the policy and the function's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Invocation {
    /// The instant to decide for; `None` means the wall clock.
    pub at: Option<DateTime<Utc>>,
    /// Plan and report, change nothing.
    pub dry_run: bool,
    /// An explicit opt-in to an instant far ahead of the wall clock, for simulations (see
    /// [`ddb_rollover::check_clock`]).
    pub allow_future_clock: bool,
    /// `"replay": true`: the event's time may be any instant (a dead-letter replay, a run that
    /// catches up on purpose); the run makes only what is missing for that instant's periods
    /// (`ApplyOptions::replay`) and says nothing about now (no readiness, no published tables).
    pub replay: bool,
    /// Where [`Self::at`] came from.
    pub clock: ClockSource,
}

impl Invocation {
    /// A run with no time in its event: now, for real.
    pub const fn wall_clock() -> Invocation {
        Invocation {
            at: None,
            dry_run: false,
            allow_future_clock: false,
            replay: false,
            clock: ClockSource::WallClock,
        }
    }

    /// The instant the run decides for: the event's, else `wall_clock`.
    pub fn now(&self, wall_clock: DateTime<Utc>) -> DateTime<Utc> {
        self.at.unwrap_or(wall_clock)
    }

    /// The instant the run decides for, checked against the wall clock before any AWS call
    /// (see [`ddb_rollover::check_clock`]); a refusal names the field that carried the instant.
    /// An event's time that is not now ([`is_now`]) is refused unless the event is a replay or
    /// a dry run (which changes and publishes nothing): a console test with an old or a future
    /// time must not act for, and report on, another period without saying so.
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
        let checked = check_clock(policy, &[operation], now, wall_clock, allowance).map_err(|error| {
            EventError::Clock {
                field: self.clock.as_str(),
                message: error.to_string(),
            }
        })?;
        if !(self.replay || self.dry_run || is_now(policy, now, wall_clock)) {
            return Err(EventError::NotNow {
                field: self.clock.as_str(),
                at: now.to_rfc3339(),
                wall: wall_clock.to_rfc3339(),
                skew: format!("{} minutes", clock_skew().as_secs() / 60),
            });
        }
        Ok(checked)
    }

    /// Whether this run's readiness and published tables describe the wall clock's now: not for
    /// a replay, nor for an instant in another period than the wall clock's (within the skew
    /// across a boundary). Such a run leaves both to the next run for now.
    pub fn speaks_of_now(&self, policy: &Policy, wall_clock: DateTime<Utc>) -> bool {
        !self.replay && same_period(policy, self.now(wall_clock), wall_clock)
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
