//! Shared by the Lambda handler tests: the default policy's capacities by age, the blog's
//! event files, and the error a run with failed actions returns.

use std::collections::BTreeMap;

use ddb_rollover::policy::naming::TableNaming;
use ddb_rollover::policy::period::Slot;
use ddb_rollover::{Operation, RunReport};
use ddb_rollover_lambda::{FailedAction, HandlerError};
use serde_json::Value;

/// The default policy's (RCU, WCU) of the current and the pre-built table.
pub const HOT: (i64, i64) = (300, 1000);
/// ... of yesterday's table.
pub const WARM: (i64, i64) = (100, 1);
/// ... of every older table.
pub const COLD: (i64, i64) = (1, 1);

/// The event file `name` under `events/`, as the functions receive it.
pub fn event_file(name: &str) -> Value {
    let path = testkit::repo_root().join("events").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

/// The tables of the `seeded` periods with the capacity the default policy gives each when
/// the current period is `now`: the arithmetic a reader would do by hand.
pub fn capacities_by_age(naming: &TableNaming, seeded: &[Slot], now: Slot) -> BTreeMap<String, (i64, i64)> {
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

/// The failed actions and the report of create_new's `error`, which must be
/// [`HandlerError::ActionsFailed`].
pub fn create_new_failures(error: &HandlerError) -> (&[FailedAction], &RunReport) {
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
