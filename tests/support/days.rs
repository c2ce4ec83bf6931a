//! Simulated days of the two scheduled runs through the engine, as the functions run them:
//! create_new at 23:45, resize_old at 00:15 the next day.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use ddb_rollover::aws::dynamodb::DynamoDb;
use ddb_rollover::run::clock::simulation;
use ddb_rollover::{run, ApplyOptions, Operation, Policy, RunReport};

/// `day` at `time` (`HH:MM:SS`), UTC.
pub fn at(day: NaiveDate, time: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&format!("{day}T{time}Z"))
        .unwrap()
        .with_timezone(&Utc)
}

/// Both scheduled runs of `day`; each must succeed. Returns resize_old's report.
pub async fn day_runs(control: &DynamoDb, policy: &Policy, day: NaiveDate) -> RunReport {
    let mut reports = Vec::new();
    for (operation, when) in [
        (Operation::CreateNew, at(day, "23:45:00")),
        (Operation::ResizeOld, at(day + Duration::days(1), "00:15:00")),
    ] {
        let report = run(
            control,
            policy,
            operation,
            &simulation(policy, &[operation], when).unwrap(),
            ApplyOptions::default(),
        )
        .await
        .unwrap();
        assert!(report.succeeded(), "{operation:?} of {day} failed: {report:#?}");
        reports.push(report);
    }
    reports.pop().expect("resize_old ran")
}
