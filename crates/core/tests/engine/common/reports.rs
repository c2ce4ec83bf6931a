//! Reading a run's report the way the tests assert on it: the outcome each table (or each
//! step) came to, in report order, and the one line a test looks closer at.

use ddb_rollover::TableLine;
use ddb_rollover::{Outcome, RunReport};

/// Each line's table and outcome, in report order.
pub(crate) fn table_outcomes<'r>(lines: impl IntoIterator<Item = &'r TableLine>) -> Vec<(&'r str, Outcome)> {
    lines
        .into_iter()
        .map(|l| (l.item.facts.table.as_str(), l.outcome))
        .collect()
}

/// Each line's step (its decision's action) and outcome, in report order.
pub(crate) fn step_outcomes(report: &RunReport) -> Vec<(&'static str, Outcome)> {
    report
        .tables
        .iter()
        .map(|l| (l.item.decision.action(), l.outcome))
        .collect()
}

/// The line on which `table` came to `outcome`.
pub(crate) fn line_with<'r>(report: &'r RunReport, table: &str, outcome: Outcome) -> &'r TableLine {
    report
        .tables
        .iter()
        .find(|l| l.item.facts.table == table && l.outcome == outcome)
        .unwrap_or_else(|| panic!("no {outcome:?} line for {table}: {report:#?}"))
}
