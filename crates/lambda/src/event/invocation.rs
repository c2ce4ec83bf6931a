//! What a payload decides: the run's instant and which input set it, and whether it is a dry
//! run; and that instant's check against the wall clock before any AWS call.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use ddb_rollover::run::clock::{check_clock, clock_warning, CheckedInstant, ClockAllowance};
use ddb_rollover::Operation;
use ddb_rollover::Policy;

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
