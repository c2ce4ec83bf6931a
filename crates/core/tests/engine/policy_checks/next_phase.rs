//! `status`'s NEXT PHASE with a write grace longer than a period: when the grace ends, the
//! table moves to the phase its age calls for then, which may be past phase 1.

use crate::common::at;
use ddb_rollover::policy::{Billing, Capacity};
use ddb_rollover::table::ObservedTable;
use ddb_rollover::Observation;
use ddb_rollover::Policy;
use ddb_rollover::{status, NextPhase};

fn next_phase(policy: &Policy, now: &str, table: &str) -> Option<NextPhase> {
    let hot = Billing::Provisioned(Capacity {
        read: 300,
        write: 1000,
    });
    let report = status(
        policy,
        at(now),
        &Observation::enrolled(policy, vec![ObservedTable::active(table, hot)]),
    );
    let line = report
        .tables
        .iter()
        .find(|line| line.facts.table == table)
        .unwrap_or_else(|| panic!("no line for {table}: {report:#?}"));
    line.next_phase
}

#[test]
fn a_grace_of_three_periods_ends_in_the_phase_the_age_calls_for() {
    // The blog's phases (0, 1, 2) and a 3-day grace: yesterday's table keeps phase 0 until
    // 2018-10-29, when it is 4 days old: phase 2, not 1.
    let policy = Policy::from_toml("grace = \"3d\"").unwrap();
    assert_eq!(
        next_phase(&policy, "2018-10-26T12:00:00Z", "timeseries_2018-10-25"),
        Some(NextPhase {
            phase: 2,
            from: at("2018-10-29T00:00:00Z")
        })
    );
    // After the grace it is in the last phase: nothing next.
    assert_eq!(
        next_phase(&policy, "2018-10-29T00:15:00Z", "timeseries_2018-10-25"),
        None
    );
}

#[test]
fn after_a_long_grace_a_later_phase_still_follows() {
    // Phases at 0, 1 and 5: the 3-day grace ends at age 4 (phase 1), phase 2 follows at age 5.
    let policy = Policy::from_toml(
        "grace = \"3d\"\n[[phases]]\nmin_age = 0\nread = 300\nwrite = 1000\n[[phases]]\nmin_age = 1\nread = 100\nwrite = 1\n[[phases]]\nmin_age = 5\nread = 1\nwrite = 1",
    )
    .unwrap();
    let table = "timeseries_2018-10-25";
    assert_eq!(
        next_phase(&policy, "2018-10-26T12:00:00Z", table),
        Some(NextPhase {
            phase: 1,
            from: at("2018-10-29T00:00:00Z")
        })
    );
    assert_eq!(
        next_phase(&policy, "2018-10-29T00:15:00Z", table),
        Some(NextPhase {
            phase: 2,
            from: at("2018-10-30T00:00:00Z")
        })
    );
}
