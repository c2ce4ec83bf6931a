//! Shared by the Lambda handler tests: the default policy's capacities by age, the blog's
//! event files, and the error a run with failed actions returns.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use ddb_rollover::policy::TableNaming;
use ddb_rollover::policy::{Calendar, Slot};
use ddb_rollover::{Operation, RunReport};
use ddb_rollover_lambda::{FailedAction, HandlerError};
use serde_json::Value;

/// The default policy's (RCU, WCU) of the current and the pre-built table.
pub(super) const HOT: (i64, i64) = (300, 1000);
/// ... of yesterday's table.
pub(super) const WARM: (i64, i64) = (100, 1);
/// ... of every older table.
pub(super) const COLD: (i64, i64) = (1, 1);

/// The event file `name` under `events/`, as the functions receive it.
pub(super) fn event_file(name: &str) -> Value {
    let path = testkit::repo_root().join("events").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

/// The tables of the `seeded` periods with the capacity the default policy gives each when
/// the current period is `now`: the arithmetic a reader would do by hand.
pub(super) fn capacities_by_age(
    naming: &TableNaming,
    seeded: &[Slot],
    now: Slot,
) -> BTreeMap<String, (i64, i64)> {
    // Index of `now` in the seeded slots, or one past the end if a boundary was crossed.
    let now_index = seeded.iter().position(|s| *s == now).unwrap_or(seeded.len()) as i64;
    seeded
        .iter()
        .enumerate()
        .map(|(i, slot)| {
            let capacity = match now_index - i as i64 {
                age if age >= 2 => COLD,
                1 => WARM,
                _ => HOT,
            };
            (naming.table_name(*slot), capacity)
        })
        .collect()
}

/// The wall clock's period and the three before it, oldest first: the tables a test of a run
/// "now" seeds (create_new at the first and at the third makes all four).
pub(super) fn four_periods_to_now(calendar: &Calendar) -> [Slot; 4] {
    let current = calendar.floor(Utc::now());
    let p1 = calendar.previous(current);
    let p2 = calendar.previous(p1);
    let p3 = calendar.previous(p2);
    [p3, p2, p1, current]
}

/// `found` are the `seeded` tables ([`four_periods_to_now`]) at the phase each one's age calls
/// for, relative to the wall clock's period before the run or, if the run straddled a boundary
/// (it ended at `after`), after it.
pub(super) fn assert_capacities_by_age(
    found: &BTreeMap<String, (i64, i64)>,
    naming: &TableNaming,
    seeded: &[Slot; 4],
    after: DateTime<Utc>,
) {
    let expected = |now: Slot| capacities_by_age(naming, seeded, now);
    let (early, late) = (expected(seeded[3]), expected(naming.calendar().floor(after)));
    assert!(
        *found == early || *found == late,
        "tables {found:?}, expected {early:?} (or {late:?} if the run straddled midnight)"
    );
}

/// The failed actions and the report of create_new's `error`, which must be
/// [`HandlerError::ActionsFailed`].
pub(super) fn create_new_failures(error: &HandlerError) -> (&[FailedAction], &RunReport) {
    let HandlerError::ActionsFailed {
        operation,
        failed,
        report,
    } = error
    else {
        panic!("expected ActionsFailed, got {error:?}");
    };
    assert_eq!(*operation, Operation::CreateNew);
    (failed, report)
}
