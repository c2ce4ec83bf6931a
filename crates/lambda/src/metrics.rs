//! A run's CloudWatch metrics, as Embedded Metric Format (EMF) documents: one JSON object per
//! line on stdout, which CloudWatch Logs turns into metrics with no API call and no IAM
//! permission (<https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html>).
//!
//! Written with `println!`, not through `tracing`: EMF needs `_aws` at the top level of the log
//! event, and the runtime's JSON log format nests a tracing event's fields.
//!
//! Namespace [`NAMESPACE`]; per run (not for dry runs):
//! - dimensions `Prefix`, `Operation`: `TablesDone`, `TablesUnchanged`, `TablesDeferred`,
//!   `TablesFailed`, `TablesGone`, `TablesForeign`, `TablesSkipped` (Count: each table counted
//!   once, by its most severe outcome: failed, deferred, done, gone, unchanged, skipped,
//!   foreign) and `OwnedTables` (Count: the policy's tables the run looked at that exist when
//!   it ends; resize_old looks at all of them, create_new only at its own);
//! - dimensions `Prefix`, `Operation`, `Reason`: `Deferrals` (Count: deferred actions of the
//!   run with that [`DeferralCause`]), one document per cause present;
//! - create_new only, dimension `Prefix`: `NextTableReady` (None: 1 when the current and every
//!   pre-built table exist, are the policy's and ACTIVE once the run ends, else 0; also 0 when
//!   the run could not even list the tables).

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use ddb_rollover::Decision;
use ddb_rollover::{DeferralCause, Operation, Outcome, RunReport};
use serde_json::{json, Map, Value};

/// The CloudWatch namespace of every metric.
pub const NAMESPACE: &str = "ddb-rollover";

/// The per-outcome metrics of the run document, most severe first: a table with several lines
/// is counted under the first of its outcomes in this order.
const BY_SEVERITY: [(Outcome, &str); 7] = [
    (Outcome::Failed, "TablesFailed"),
    (Outcome::Deferred, "TablesDeferred"),
    (Outcome::Done, "TablesDone"),
    (Outcome::Gone, "TablesGone"),
    (Outcome::Unchanged, "TablesUnchanged"),
    (Outcome::Skipped, "TablesSkipped"),
    (Outcome::Foreign, "TablesForeign"),
];

/// Milliseconds since the epoch, EMF's `Timestamp`.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One EMF document: `dimensions` (name, value) form its one dimension set, `metrics`
/// (name, unit, value) are its metrics; every dimension and metric is a top-level member.
fn document(timestamp_ms: u64, dimensions: &[(&str, &str)], metrics: &[(&str, &str, u64)]) -> String {
    let mut root = Map::new();
    root.insert(
        "_aws".into(),
        json!({
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{
                "Namespace": NAMESPACE,
                "Dimensions": [dimensions.iter().map(|(name, _)| *name).collect::<Vec<_>>()],
                "Metrics": metrics
                    .iter()
                    .map(|(name, unit, _)| json!({"Name": name, "Unit": unit}))
                    .collect::<Vec<_>>(),
            }],
        }),
    );
    for (name, value) in dimensions {
        root.insert((*name).into(), Value::String((*value).into()));
    }
    for (name, _, value) in metrics {
        root.insert((*name).into(), json!(value));
    }
    Value::Object(root).to_string()
}

/// The documents for a run's report, one line each; none for a dry run.
pub fn run_documents(report: &RunReport, timestamp_ms: u64) -> Vec<String> {
    if report.dry_run {
        return Vec::new();
    }
    let operation = report.operation.as_str();
    let base = [("Prefix", report.prefix.as_str()), ("Operation", operation)];

    // Each table's lines, to count it once.
    let mut by_table: BTreeMap<&str, Vec<&ddb_rollover::TableLine>> = BTreeMap::new();
    for line in &report.tables {
        by_table
            .entry(line.item.facts.table.as_str())
            .or_default()
            .push(line);
    }
    let mut counts: BTreeMap<&str, u64> = BY_SEVERITY.iter().map(|(_, name)| (*name, 0)).collect();
    let mut owned = 0;
    for lines in by_table.values() {
        let worst = BY_SEVERITY
            .iter()
            .find(|(outcome, _)| lines.iter().any(|l| l.outcome == *outcome));
        if let Some((_, name)) = worst {
            *counts.get_mut(name).expect("every metric counted") += 1;
        }
        if exists_at_the_end(lines) {
            owned += 1;
        }
    }
    let mut metrics: Vec<(&str, &str, u64)> = BY_SEVERITY
        .iter()
        .map(|(_, name)| (*name, "Count", counts[name]))
        .collect();
    metrics.push(("OwnedTables", "Count", owned));
    let mut documents = vec![document(timestamp_ms, &base, &metrics)];

    let mut deferrals: BTreeMap<DeferralCause, u64> = BTreeMap::new();
    for line in report.lines_with(Outcome::Deferred) {
        if let Some(cause) = line.deferral {
            *deferrals.entry(cause).or_default() += 1;
        }
    }
    for (cause, count) in deferrals {
        let dimensions = [base[0], base[1], ("Reason", cause.as_str())];
        documents.push(document(
            timestamp_ms,
            &dimensions,
            &[("Deferrals", "Count", count)],
        ));
    }

    if let Some(readiness) = &report.next_table_ready {
        documents.push(next_table_ready(&report.prefix, readiness.ready, timestamp_ms));
    }
    documents
}

/// A table of the policy that exists once the run ends: seen or created, and neither deleted
/// by the run nor gone during it.
fn exists_at_the_end(lines: &[&ddb_rollover::TableLine]) -> bool {
    let ours = lines.iter().any(|l| l.item.facts.period.is_some());
    let seen = lines.iter().any(|l| l.item.facts.status.is_some());
    let created = lines
        .iter()
        .any(|l| matches!(l.item.decision, Decision::Create(_)) && l.outcome == Outcome::Done);
    let ended = lines.iter().any(|l| {
        l.outcome == Outcome::Gone
            || (matches!(l.item.decision, Decision::Delete(_)) && l.outcome == Outcome::Done)
    });
    ours && (seen || created) && !ended
}

/// The `NextTableReady` document: dimension `Prefix` alone, so one alarm covers it.
pub fn next_table_ready(prefix: &str, ready: bool, timestamp_ms: u64) -> String {
    document(
        timestamp_ms,
        &[("Prefix", prefix)],
        &[("NextTableReady", "None", u64::from(ready))],
    )
}

/// The documents for a run that ended without a report: a create_new that could not list the
/// tables cannot say the next table is ready, so it says it is not (a broken function must
/// read as not ready). Nothing for resize_old.
pub fn failed_run_documents(operation: Operation, prefix: &str, timestamp_ms: u64) -> Vec<String> {
    match operation {
        Operation::CreateNew => vec![next_table_ready(prefix, false, timestamp_ms)],
        Operation::ResizeOld => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report_fixtures::{line, report};
    use ddb_rollover::{Readiness, TargetTable};
    use testkit::emf::{validate, EmfMetric};

    fn metric(found: &[EmfMetric], name: &str) -> f64 {
        let hits: Vec<_> = found.iter().filter(|f| f.name == name).collect();
        assert_eq!(hits.len(), 1, "{name}: {found:?}");
        hits[0].value
    }

    #[test]
    fn a_run_writes_valid_documents_counting_each_table_once() {
        let busy = Decision::Deferred {
            retry_after: None,
            cause: DeferralCause::OneUpdateAtATime,
        };
        let report = report(
            Operation::ResizeOld,
            vec![
                // Done then a setting deferred: counted as deferred.
                line("timeseries_2018-10-20", Decision::Unchanged, Outcome::Done, None),
                line(
                    "timeseries_2018-10-20",
                    busy.clone(),
                    Outcome::Deferred,
                    Some(DeferralCause::OneUpdateAtATime),
                ),
                line(
                    "timeseries_2018-10-21",
                    Decision::Unchanged,
                    Outcome::Unchanged,
                    None,
                ),
                line(
                    "timeseries_2018-10-22",
                    Decision::Unchanged,
                    Outcome::Deferred,
                    Some(DeferralCause::DecreaseBudget),
                ),
                line(
                    "timeseries_2018-10-23",
                    Decision::Unchanged,
                    Outcome::Deferred,
                    Some(DeferralCause::DecreaseBudget),
                ),
                line(
                    "timeseries_2018-10-24",
                    Decision::Unchanged,
                    Outcome::Failed,
                    None,
                ),
                line("timeseries_2018-10-25", Decision::Unchanged, Outcome::Gone, None),
                line("timeseries_2018-10-26", Decision::Skipped, Outcome::Skipped, None),
            ],
        );
        let documents = run_documents(&report, 1_540_512_900_000);
        assert_eq!(documents.len(), 3, "{documents:#?}");
        let found: Vec<_> = documents.iter().flat_map(|d| validate(d)).collect();
        assert!(found.iter().all(|f| f.namespace == NAMESPACE));
        assert_eq!(metric(&found, "TablesDeferred"), 3.0);
        assert_eq!(metric(&found, "TablesFailed"), 1.0);
        assert_eq!(metric(&found, "TablesDone"), 0.0);
        assert_eq!(metric(&found, "TablesUnchanged"), 1.0);
        assert_eq!(metric(&found, "TablesGone"), 1.0);
        assert_eq!(metric(&found, "TablesSkipped"), 1.0);
        assert_eq!(metric(&found, "TablesForeign"), 0.0);
        assert_eq!(metric(&found, "OwnedTables"), 6.0, "all but the gone one");
        let deferrals: Vec<_> = found.iter().filter(|f| f.name == "Deferrals").collect();
        assert_eq!(deferrals.len(), 2);
        assert_eq!(deferrals[0].dimension_names(), ["Prefix", "Operation", "Reason"]);
        let first: Value = serde_json::from_str(&documents[1]).unwrap();
        assert_eq!(first["Reason"], "decrease_budget");
        assert_eq!(first["Deferrals"], 2);
        assert_eq!(first["Operation"], "resize_old");
        assert_eq!(first["Prefix"], "timeseries");
        let sets: std::collections::BTreeSet<Vec<&str>> =
            found.iter().map(EmfMetric::dimension_names).collect();
        assert_eq!(
            sets,
            [vec!["Prefix", "Operation"], vec!["Prefix", "Operation", "Reason"]].into()
        );
        let root: Value = serde_json::from_str(&documents[0]).unwrap();
        assert_eq!(root["_aws"]["Timestamp"], 1_540_512_900_000u64);
        assert!(
            found.iter().all(|f| f.name != "NextTableReady"),
            "resize_old: none"
        );
        assert!(found.iter().all(|f| f.unit.as_deref() == Some("Count")));
    }

    #[test]
    fn create_new_says_whether_the_next_table_is_ready_under_the_prefix_alone() {
        let mut created = report(
            Operation::CreateNew,
            vec![line(
                "timeseries_2018-10-26",
                Decision::Unchanged,
                Outcome::Unchanged,
                None,
            )],
        );
        for ready in [true, false] {
            created.next_table_ready = Some(Readiness::from_tables(vec![TargetTable {
                table: "timeseries_2018-10-26".into(),
                status: ready.then(|| "ACTIVE".into()),
                foreign: false,
                unfit: None,
                built_by_next_run: false,
                warm: None,
                stream: None,
                stream_detail: None,
                consumer: None,
                consumer_detail: None,
                poll_error: None,
            }]));
            let documents = run_documents(&created, 1);
            let found: Vec<_> = documents.iter().flat_map(|d| validate(d)).collect();
            let next: Vec<_> = found.iter().filter(|f| f.name == "NextTableReady").collect();
            assert_eq!(next.len(), 1);
            assert_eq!(
                next[0].dimensions,
                [("Prefix".to_string(), "timeseries".to_string())]
            );
            assert_eq!(next[0].unit.as_deref(), Some("None"));
            assert_eq!(next[0].value, if ready { 1.0 } else { 0.0 });
        }
        // A dry run: nothing.
        created.dry_run = true;
        assert!(run_documents(&created, 1).is_empty());
        // Listing failed: not ready, for create_new only.
        let failed = failed_run_documents(Operation::CreateNew, "timeseries", 5);
        let found: Vec<_> = failed.iter().flat_map(|d| validate(d)).collect();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].name.as_str(), found[0].value), ("NextTableReady", 0.0));
        assert!(failed_run_documents(Operation::ResizeOld, "timeseries", 5).is_empty());
    }
}
