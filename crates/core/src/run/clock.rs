//! The run's clock, checked before any AWS call: an instant that could hurt live tables is
//! refused, whoever sent it (a manual event, `--at`, a bad scheduler input).
//!
//! - Every run needs labels for the current period and the `premake` ones after it; outside the
//!   years 1000 to 9999 they cannot be written or read back, so such instants are refused.
//! - `resize_old` (and its retention) lowers and deletes tables by age, so an instant in a
//!   later period than the wall clock's would age today's table by one or more periods and
//!   dial it down (or delete it): refused unless the caller explicitly allows it
//!   (simulations). A few minutes of skew (`CLOCK_SKEW`) are allowed across a boundary.
//!   `create_new` only creates and raises, so it may look ahead; dry runs change nothing, so
//!   they may too.
//! - `create_new` far ahead is allowed but warned about ([`clock_warning`]): the tables it
//!   builds keep phase 0's capacity until their periods pass.

use chrono::{DateTime, Duration, Utc};

use crate::plan::Operation;
use crate::policy::period::{Slot, LABEL_YEARS};
use crate::policy::Policy;

/// How far ahead of the wall clock a resize_old instant may be across a period boundary: the
/// skew between two clocks, not a period.
pub(crate) const CLOCK_SKEW: Duration = Duration::minutes(5);

/// Why a run's instant was refused. The messages say what to send instead; callers prefix the
/// field that carried the instant (`--at`, `scheduled_time`, ...).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClockError {
    #[error(
        "{at} has no table name: the {what} period's label needs a year from {} to {}",
        LABEL_YEARS.start(),
        LABEL_YEARS.end()
    )]
    /// The instant is in a year no period label can hold.
    Unlabelled {
        /// The instant.
        at: DateTime<Utc>,
        /// Which period (`current`, `pre-built`, ...).
        what: &'static str,
    },

    #[error(
        "{at} is in a later period than the wall clock ({wall}): resize_old would age today's table \
         by it and dial a live table down, or delete it. Use the real time, or allow it explicitly for a simulation \
         (--allow-future-clock, or \"allow_future_clock\": true in a manual event)"
    )]
    /// A resize_old instant in a later period than the wall clock.
    TooFarAhead {
        /// The instant.
        at: DateTime<Utc>,
        /// The wall clock's time.
        wall: DateTime<Utc>,
    },
}

/// What the caller allows beyond the safe default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockAllowance {
    /// The run changes nothing (dry run, plan, status).
    pub dry_run: bool,
    /// An explicit opt-in to a future instant, for simulations.
    pub allow_future_clock: bool,
}

/// An instant that passed [`check_clock`], with what it was checked for. Only the check makes
/// one, and the engine's entries ([`run`](crate::run()), [`run_each`](crate::run_each),
/// [`adopt`](crate::run::adopt::adopt)) take nothing else: no caller, example or test can hand
/// the engine a clock that could dial live tables down without saying so.
///
/// ```compile_fail
/// // A bare instant is not one: only the check builds it.
/// let at: ddb_rollover::CheckedInstant = chrono::Utc::now().into();
/// ```
/// ```compile_fail
/// let at = ddb_rollover::CheckedInstant { at: chrono::Utc::now(), wall: None, operations: vec![], dry_run: false, policy: String::new() };
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedInstant {
    at: DateTime<Utc>,
    /// The wall clock the instant was checked against; `None` for a simulation, whose instant
    /// is its whole world.
    wall: Option<DateTime<Utc>>,
    operations: Vec<Operation>,
    /// Checked as a dry run: only a dry run may use it.
    dry_run: bool,
    /// The checked policy's [`Policy::hash`]: its calendar and `premake` decided the check.
    policy: String,
}

impl CheckedInstant {
    /// The instant the run decides for.
    pub fn at(&self) -> DateTime<Utc> {
        self.at
    }

    /// The wall clock the instant was checked against; `None` for a simulation
    /// (`allow_future_clock`), whose instant stands for the wall clock too.
    pub fn wall(&self) -> Option<DateTime<Utc>> {
        self.wall
    }

    /// Panics unless this instant was checked for `policy`, `operation` and (when it was
    /// checked as one) a dry run: the engine's entries call this first, so a mismatch is a
    /// caller's bug, found before any AWS call.
    pub(crate) fn assert_covers(&self, policy: &Policy, operation: Operation, dry_run: bool) {
        assert!(
            self.operations.contains(&operation),
            "{} was checked for {:?}, not for {operation}",
            self.at,
            self.operations
        );
        assert!(
            dry_run || !self.dry_run,
            "{} was checked for a dry run only, and this run changes tables",
            self.at
        );
        assert!(
            self.policy == policy.hash(),
            "{} was checked for another policy",
            self.at
        );
    }
}

/// Checks the instant `operations` will decide for, against the wall clock `wall`: the one way
/// to a [`CheckedInstant`].
pub fn check_clock(
    policy: &Policy,
    operations: &[Operation],
    at: DateTime<Utc>,
    wall: DateTime<Utc>,
    allowance: ClockAllowance,
) -> Result<CheckedInstant, ClockError> {
    for &operation in operations {
        check_one(policy, operation, at, wall, allowance)?;
    }
    Ok(CheckedInstant {
        at,
        wall: (!allowance.allow_future_clock).then_some(wall),
        operations: operations.to_vec(),
        dry_run: allowance.dry_run,
        policy: policy.hash(),
    })
}

/// A simulation's instant: [`check_clock`] with the wall clock and an explicit
/// `allow_future_clock`, as `--allow-future-clock` gives (tests, replays, what-if runs). The
/// instant still needs labels for its periods.
pub fn simulation(
    policy: &Policy,
    operations: &[Operation],
    at: DateTime<Utc>,
) -> Result<CheckedInstant, ClockError> {
    let allowance = ClockAllowance {
        dry_run: false,
        allow_future_clock: true,
    };
    check_clock(policy, operations, at, Utc::now(), allowance)
}

fn check_one(
    policy: &Policy,
    operation: Operation,
    at: DateTime<Utc>,
    wall: DateTime<Utc>,
    allowance: ClockAllowance,
) -> Result<(), ClockError> {
    let current = labelled_periods(policy, at)?;
    let ahead_is_allowed =
        operation == Operation::CreateNew || allowance.dry_run || allowance.allow_future_clock;
    if ahead_is_allowed {
        return Ok(());
    }
    let calendar = policy.calendar();
    // Compare periods, not durations: any instant in the wall clock's period is fine (within a
    // period ages do not change), and the next one only within the skew (a clock a few
    // minutes off at the boundary); a whole period ahead is today's table made yesterday's.
    match calendar.labelled_floor(wall) {
        Some(wall_period) if current > wall_period && at > wall + CLOCK_SKEW => {
            Err(ClockError::TooFarAhead { at, wall })
        }
        _ => Ok(()),
    }
}

/// Whether `at` stands for the wall clock's now: within five minutes ([`clock_skew`]) of it
/// (a scheduled run fired a little late or early, across a boundary too), or earlier in the
/// wall clock's period (a retry of that period's scheduled run, which decides what the run it
/// retries decided). Never later than the wall clock beyond the skew: within a period the write
/// grace, a restored table's keep and a deferral's time still run, and a later instant would
/// let them pass early (dial yesterday's table down inside its grace). A run for any other
/// instant acts for another period: the Lambda functions take one only when the event says it
/// is a replay, and such a run says nothing about now (no readiness, no published tables).
pub fn is_now(policy: &Policy, at: DateTime<Utc>, wall: DateTime<Utc>) -> bool {
    if (at - wall).abs() <= CLOCK_SKEW {
        return true;
    }
    let calendar = policy.calendar();
    match (calendar.labelled_floor(at), calendar.labelled_floor(wall)) {
        (Some(period), Some(today)) => period == today && at < wall,
        _ => false,
    }
}

/// Whether `at` is in the wall clock's own period: what a run's readiness and its published
/// tables describe (the current period and the ones after it). A run for an instant within the
/// skew but across a boundary ([`is_now`]) still acts, but its current period is not the wall
/// clock's, so it too leaves readiness to a run in the wall clock's period.
pub fn same_period(policy: &Policy, at: DateTime<Utc>, wall: DateTime<Utc>) -> bool {
    let calendar = policy.calendar();
    calendar.labelled_floor(at).is_some() && calendar.labelled_floor(at) == calendar.labelled_floor(wall)
}

/// The skew [`is_now`] allows across a period boundary, for messages.
pub fn clock_skew() -> std::time::Duration {
    CLOCK_SKEW.to_std().unwrap_or_default()
}

/// A warning for a run that is allowed but probably not meant: `create_new` for an instant
/// more than `premake + 1` periods after the wall clock's builds tables with phase 0's
/// capacity that nothing lowers until their periods have passed (`resize_old` moves a table
/// on by its age, and a future table has none). `None` for every other run.
pub fn clock_warning(
    policy: &Policy,
    operation: Operation,
    at: DateTime<Utc>,
    wall: DateTime<Utc>,
) -> Option<String> {
    if operation != Operation::CreateNew {
        return None;
    }
    let calendar = policy.calendar();
    let current = calendar.labelled_floor(at)?;
    let today = calendar.labelled_floor(wall)?;
    // Bounded walk first: only a far instant pays for counting the periods.
    let latest_quiet = calendar.periods_from(today).nth(policy.premake as usize + 1)?;
    if current <= latest_quiet {
        return None;
    }
    let ahead = calendar.periods_between(today, current);
    let tables = policy.premake + 1;
    Some(format!(
        "{at} is in period {}, {ahead} periods after the wall clock's ({}): create_new builds {tables} \
         table{} from that period on with phase 0's capacity, and they stay at phase 0 capacity (and \
         its cost) until their periods pass: nothing lowers a future table. Use the real time unless \
         that is what you want",
        calendar.label(current),
        calendar.label(today),
        if tables == 1 { "" } else { "s" },
    ))
}

/// The period of `at`, when it and the `premake` periods after it all have labels.
fn labelled_periods(policy: &Policy, at: DateTime<Utc>) -> Result<Slot, ClockError> {
    let calendar = policy.calendar();
    let current = calendar
        .labelled_floor(at)
        .ok_or(ClockError::Unlabelled { at, what: "current" })?;
    let count = policy.premake as usize + 1;
    let labelled = calendar
        .periods_from(current)
        .take(count)
        .take_while(|slot| calendar.is_labelled(*slot))
        .count();
    if labelled < count {
        return Err(ClockError::Unlabelled {
            at,
            what: "pre-built",
        });
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    const WALL: &str = "2018-10-25T10:00:00Z";

    fn check(operation: Operation, at: &str, allowance: ClockAllowance) -> Result<(), ClockError> {
        check_clock(&Policy::default(), &[operation], t(at), t(WALL), allowance).map(|_| ())
    }

    #[test]
    fn a_checked_instant_serves_what_it_was_checked_for() {
        let policy = Policy::default();
        let dry = ClockAllowance {
            dry_run: true,
            ..ClockAllowance::default()
        };
        let at = check_clock(&policy, &[Operation::CreateNew], t(WALL), t(WALL), dry).unwrap();
        assert_eq!(at.at(), t(WALL));
        at.assert_covers(&policy, Operation::CreateNew, true);
        let other = Policy::from_toml("premake = 3").unwrap();
        for (policy, operation, dry_run) in [
            (&policy, Operation::ResizeOld, true),
            (&policy, Operation::CreateNew, false),
            (&other, Operation::CreateNew, true),
        ] {
            let refused = std::panic::catch_unwind(|| at.assert_covers(policy, operation, dry_run));
            assert!(refused.is_err(), "{operation} dry_run={dry_run}");
        }
        let far = "2030-01-01T00:00:00Z";
        assert!(check_clock(
            &policy,
            &[Operation::CreateNew, Operation::ResizeOld],
            t(far),
            t(WALL),
            ClockAllowance::default()
        )
        .is_err());
        assert_eq!(
            simulation(&policy, &[Operation::ResizeOld], t(far)).unwrap().at(),
            t(far)
        );
    }

    #[test]
    fn resize_old_accepts_the_wall_clocks_period_and_the_past() {
        for at in [
            WALL,
            "2018-10-25T23:59:59Z",
            "2018-10-24T00:15:00Z",
            "2001-01-01T00:00:00Z",
        ] {
            assert_eq!(
                check(Operation::ResizeOld, at, ClockAllowance::default()),
                Ok(()),
                "{at}"
            );
        }
    }

    #[test]
    fn resize_old_refuses_an_instant_in_a_later_period() {
        // The next day's 00:30: today's table would be a day old, dialled down or deleted.
        for at in [
            "2018-10-26T00:30:00Z",
            "2018-10-27T00:00:00Z",
            "9999-12-30T23:59:59Z",
        ] {
            let error = check(Operation::ResizeOld, at, ClockAllowance::default()).unwrap_err();
            assert!(matches!(error, ClockError::TooFarAhead { .. }), "{at}: {error}");
            assert!(error.to_string().contains("--allow-future-clock"), "{error}");
        }
    }

    #[test]
    fn resize_old_may_be_a_few_minutes_ahead_across_a_boundary() {
        let wall = t("2018-10-25T23:57:00Z");
        let policy = Policy::default();
        let allowed = ClockAllowance::default();
        let check = |at| check_clock(&policy, &[Operation::ResizeOld], t(at), wall, allowed);
        let early = check("2018-10-26T00:00:00Z");
        assert!(early.is_ok(), "{early:?}");
        assert!(check("2018-10-26T00:15:00Z").is_err());
    }

    #[test]
    fn create_new_dry_runs_and_explicit_simulations_may_look_ahead() {
        let far = "2030-01-01T00:00:00Z";
        assert_eq!(
            check(Operation::CreateNew, far, ClockAllowance::default()),
            Ok(())
        );
        for allowance in [
            ClockAllowance {
                dry_run: true,
                ..ClockAllowance::default()
            },
            ClockAllowance {
                allow_future_clock: true,
                ..ClockAllowance::default()
            },
        ] {
            assert_eq!(check(Operation::ResizeOld, far, allowance), Ok(()));
        }
    }

    #[test]
    fn create_new_far_ahead_warns_that_its_tables_stay_hot() {
        let policy = Policy::default();
        let warning = |operation, at| clock_warning(&policy, operation, t(at), t(WALL));
        // premake = 1: up to two periods after the wall clock's is a normal run.
        for at in [
            WALL,
            "2018-10-25T23:45:00Z",
            "2018-10-27T23:59:59Z",
            "2001-01-01T00:00:00Z",
        ] {
            assert_eq!(warning(Operation::CreateNew, at), None, "{at}");
        }
        let far = warning(Operation::CreateNew, "2018-10-28T00:00:00Z").unwrap();
        assert!(
            far.starts_with(
                "2018-10-28 00:00:00 UTC is in period 2018-10-28, 3 periods after the wall clock's (2018-10-25)"
            ) && far.contains("phase 0")
                && far.contains("nothing lowers a future table"),
            "{far}"
        );
        let years = warning(Operation::CreateNew, "2030-01-01T00:00:00Z").unwrap();
        assert!(years.contains(", 4086 periods after"), "{years}");
        assert!(far.contains("builds 2 tables from that period on"), "{far}");
        // resize_old is refused that far ahead (check_clock), not warned about.
        assert_eq!(warning(Operation::ResizeOld, "2030-01-01T00:00:00Z"), None);
        // More pre-built tables, more room.
        let policy = Policy::from_toml("premake = 5").unwrap();
        let at = |text| clock_warning(&policy, Operation::CreateNew, t(text), t(WALL));
        assert_eq!(at("2018-10-31T12:00:00Z"), None);
        assert!(at("2018-11-01T00:00:00Z").is_some());
    }

    #[test]
    fn now_is_the_wall_clocks_period_until_now_or_the_skew_across_its_boundary() {
        let policy = Policy::default();
        let now = |at| is_now(&policy, t(at), t(WALL));
        // The wall clock's day until now: a retry of the 00:15 run at 10:00 is now; within the
        // skew ahead too.
        for at in [WALL, "2018-10-25T00:00:00Z", "2018-10-25T10:04:00Z"] {
            assert!(now(at), "{at}");
        }
        // Later in the wall clock's day (hostile read of issue 41: a grace ending at 23:00 would
        // pass at 10:00), or another day.
        for at in [
            "2018-10-25T10:06:00Z",
            "2018-10-25T23:59:59Z",
            "2018-10-24T23:59:00Z",
            "2018-10-26T00:00:00Z",
            "2030-01-01T00:00:00Z",
            "2001-01-01T00:00:00Z",
        ] {
            assert!(!now(at), "{at}");
        }
        // Across the boundary within the skew, both ways; not the same period.
        let wall = t("2018-10-26T00:02:00Z");
        assert!(is_now(&policy, t("2018-10-25T23:58:00Z"), wall));
        assert!(!same_period(&policy, t("2018-10-25T23:58:00Z"), wall));
        assert!(!is_now(&policy, t("2018-10-25T23:56:00Z"), wall));
        assert!(same_period(&policy, t(WALL), t("2018-10-25T23:00:00Z")));
    }

    #[test]
    fn instants_without_labels_are_refused_for_every_operation_and_allowance() {
        let everything = ClockAllowance {
            dry_run: true,
            allow_future_clock: true,
        };
        // With premake = 1 the next day's label would be 10000-01-01.
        for at in [
            "9999-12-31T12:00:00Z",
            "0999-12-31T12:00:00Z",
            "0001-01-01T00:00:00Z",
        ] {
            for operation in [Operation::CreateNew, Operation::ResizeOld] {
                let error = check(operation, at, everything).unwrap_err();
                assert!(matches!(error, ClockError::Unlabelled { .. }), "{at}: {error}");
                assert!(error.to_string().contains("1000 to 9999"), "{error}");
            }
        }
        assert_eq!(
            check(Operation::CreateNew, "9999-12-30T12:00:00Z", everything),
            Ok(())
        );
    }
}
