//! Run reports the unit tests build: one line per table of a `timeseries` family, and the
//! report around them, as a run at 2018-10-26T00:15Z writes them.

use chrono::{DateTime, Utc};
use ddb_rollover::TableLine;
use ddb_rollover::{Decision, PlanItem, TableFacts};
use ddb_rollover::{DeferralCause, Operation, Outcome, RunReport};

/// A line for an ACTIVE table `timeseries_<period>` of age 1 in phase 1, with no reason and
/// no error.
pub(crate) fn line(
    table: &str,
    decision: Decision,
    outcome: Outcome,
    deferral: Option<DeferralCause>,
) -> TableLine {
    let item = PlanItem {
        facts: TableFacts {
            table: table.into(),
            period: Some(table[11..].into()),
            slot: None,
            age: Some(1),
            phase: Some(1),
            status: Some("ACTIVE".into()),
            billing: None,
        },
        arn: None,
        verdict: None,
        decision,
        reason: String::new(),
    };
    let mut line = TableLine::new(item, outcome, None);
    line.deferral = deferral;
    line
}

/// The report of a run of `operation` (not a dry run) with these lines.
pub(crate) fn report(operation: Operation, lines: Vec<TableLine>) -> RunReport {
    let at: DateTime<Utc> = "2018-10-26T00:15:00Z".parse().unwrap();
    RunReport::new(
        operation,
        at,
        "timeseries".into(),
        "2018-10-26".into(),
        false,
        lines,
    )
}
