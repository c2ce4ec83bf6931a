//! Simulated days of the two scheduled runs through the engine, as the functions run them:
//! create_new at 23:45, resize_old at 00:15 the next day; and one run at any simulated instant.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use ddb_rollover::simulation;
use ddb_rollover::{run, ApplyOptions, Operation, Outcome, Policy, RunReport};
use ddb_rollover_aws::dynamodb::DynamoDb;

/// `day` at `time` (`HH:MM:SS`), UTC.
pub(crate) fn at(day: NaiveDate, time: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&format!("{day}T{time}Z"))
        .unwrap()
        .with_timezone(&Utc)
}

/// `operation` of `policy` through the engine with the default options, its clock simulated
/// at `when`. Panics only if the run could not start; its report says how it went.
pub(crate) async fn run_at(
    control: &DynamoDb,
    policy: &Policy,
    operation: Operation,
    when: DateTime<Utc>,
) -> RunReport {
    run_at_with(control, policy, operation, when, ApplyOptions::default()).await
}

/// [`run_at`] with `options` (a dry run, a wait budget).
pub(crate) async fn run_at_with(
    control: &DynamoDb,
    policy: &Policy,
    operation: Operation,
    when: DateTime<Utc>,
    options: ApplyOptions,
) -> RunReport {
    let clock = simulation(policy, &[operation], when).unwrap();
    run(control, policy, operation, &clock, options).await.unwrap()
}

/// Asserts that `report`'s run succeeded, naming its operation, prefix, instant and failed lines
/// otherwise.
pub(crate) fn assert_succeeded(report: &RunReport) {
    assert!(
        report.succeeded(),
        "{} of {} at {} failed: {:#?}",
        report.operation,
        report.prefix,
        report.at,
        report.lines_with(Outcome::Failed).collect::<Vec<_>>()
    );
}

/// The warnings of `report` that mention `text`.
pub(crate) fn warnings_about<'a>(report: &'a RunReport, text: &str) -> Vec<&'a String> {
    report.warnings.iter().filter(|w| w.contains(text)).collect()
}

/// Both scheduled runs of `day`; each must succeed. Returns resize_old's report.
pub(crate) async fn day_runs(control: &DynamoDb, policy: &Policy, day: NaiveDate) -> RunReport {
    let mut reports = Vec::new();
    for (operation, when) in [
        (Operation::CreateNew, at(day, "23:45:00")),
        (Operation::ResizeOld, at(day + Duration::days(1), "00:15:00")),
    ] {
        let report = run_at(control, policy, operation, when).await;
        assert!(report.succeeded(), "{operation:?} of {day} failed: {report:#?}");
        reports.push(report);
    }
    reports.pop().expect("resize_old ran")
}
