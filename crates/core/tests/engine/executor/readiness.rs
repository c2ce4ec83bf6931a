//! Readiness: create_new waits for the tables it created, and says NOT READY when the next period's table is still creating, foreign, deleting or missing.

use super::*;

/// A table still CREATING when the wait ends is not ready; the wait ends at the run's deadline.
#[tokio::test]
async fn a_table_still_creating_when_the_wait_ends_is_not_ready() {
    let fake = FakeDynamo {
        creating_for: usize::MAX,
        ..FakeDynamo::default()
    };
    let started = std::time::Instant::now();
    let options = ApplyOptions {
        readiness_wait: Duration::from_secs(3),
        deadline: Some(fake.now() + Duration::from_millis(2500)),
        ..ApplyOptions::default()
    };
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        options,
    )
    .await;
    // Waited 0.5 s, 1 s, then what was left of the budget, on the control plane's clock (the
    // deadline is read on it too); the wall clock barely moved, however loaded the machine.
    let waited: Duration = fake.slept.lock().unwrap().iter().sum();
    assert_eq!(
        *fake.slept.lock().unwrap(),
        [
            Duration::from_millis(500),
            Duration::from_millis(1000),
            Duration::from_millis(1000)
        ]
    );
    assert_eq!(waited, Duration::from_millis(2500));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(report.succeeded(), "created, not failed");
    let ready = report.next_table_ready.unwrap();
    assert!(!ready.ready);
    assert_eq!(
        ready.not_active,
        ["timeseries_2018-10-25", "timeseries_2018-10-26"]
    );
    assert!(ready.missing.is_empty());
    assert_eq!(
        ready.line(),
        "NOT READY: timeseries_2018-10-25 CREATING, timeseries_2018-10-26 CREATING"
    );
}

/// The next period's name held by a table that is not the policy's: blocked, and not ready.
#[tokio::test]
async fn a_foreign_table_holding_the_next_name_is_not_ready() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-25", HOT)]);
    let mut foreign = ObservedTable::active("timeseries_2018-10-26", Billing::Provisioned(HOT));
    foreign.tags = Some(BTreeMap::from([(
        "ddb-rollover:family".to_string(),
        "other".to_string(),
    )]));
    fake.tables.lock().unwrap().insert(foreign.name.clone(), foreign);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    let ready = report.next_table_ready.unwrap();
    assert!(!ready.ready, "{ready:#?}");
    assert_eq!(ready.not_active, ["timeseries_2018-10-26"]);
    assert!(ready.tables[1].foreign);
}

/// Regression: with the pre-built table DELETING (someone deleted it), create_new said
/// NOT READY and exited 0, leaving the period without a table until the next day's run. Now the
/// run waits (on the control plane's clock) until the table is gone, creates it again, and is
/// ready.
#[tokio::test]
async fn a_deleted_pre_built_table_is_created_again_once_it_is_gone() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-25", HOT), ("timeseries_2018-10-26", HOT)]);
    fake.with_table("timeseries_2018-10-26", |t| t.status = TableStatus::Deleting);
    // Gone at the third DescribeTable: the observation's, then two polls.
    fake.deleting
        .lock()
        .unwrap()
        .insert("timeseries_2018-10-26".into(), 3);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    let line = report
        .tables
        .iter()
        .find(|l| l.item.table == "timeseries_2018-10-26")
        .unwrap();
    assert_eq!(line.item.decision.action(), "recreate");
    assert_eq!(line.outcome, Outcome::Done, "{line:#?}");
    assert!(report.succeeded(), "{report:#?}");
    assert!(report.next_table_ready.as_ref().unwrap().ready);
    // Read back from the fake: the table exists again, ACTIVE.
    let table = fake.with_table("timeseries_2018-10-26", |t| t.status.clone());
    assert_eq!(table, Some(TableStatus::Active));
    assert!(fake
        .mutating_calls()
        .contains(&"CreateTable timeseries_2018-10-26".to_string()));
}

/// A period's table still DELETING when the run's wait ends, or missing at the end of the run,
/// fails the run: exit 1 from the CLI, a function error from Lambda, NextTableReady 0.
#[tokio::test]
async fn a_period_table_still_deleting_or_missing_at_the_end_fails_the_run() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-25", HOT), ("timeseries_2018-10-26", HOT)]);
    fake.with_table("timeseries_2018-10-26", |t| t.status = TableStatus::Deleting);
    fake.deleting
        .lock()
        .unwrap()
        .insert("timeseries_2018-10-26".into(), usize::MAX);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions {
            readiness_wait: Duration::from_secs(30),
            ..ApplyOptions::default()
        },
    )
    .await;
    assert!(!report.succeeded(), "{report:#?}");
    let line = report
        .tables
        .iter()
        .find(|l| l.item.table == "timeseries_2018-10-26")
        .unwrap();
    assert_eq!(line.outcome, Outcome::Failed);
    assert!(
        line.error
            .as_deref()
            .unwrap_or_default()
            .contains("still DELETING"),
        "{line:#?}"
    );
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(!ready.ready);
    assert_eq!(ready.not_active, ["timeseries_2018-10-26"]);
    let waited: Duration = fake.slept.lock().unwrap().iter().sum();
    assert!(waited <= Duration::from_secs(30), "{waited:?}");

    // A table created by the run and deleted (by someone else) before its end: missing at the
    // end, so the run fails although every call it made succeeded.
    let fake = FakeDynamo {
        creating_for: 1,
        ..FakeDynamo::default()
    };
    fake.deleting
        .lock()
        .unwrap()
        .insert("timeseries_2018-10-26".into(), 1);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert!(!report.succeeded(), "{report:#?}");
    let lost: Vec<_> = report
        .lines_with(Outcome::Failed)
        .map(|l| l.item.table.as_str())
        .collect();
    assert_eq!(lost, ["timeseries_2018-10-26"], "{report:#?}");
    assert_eq!(
        report.next_table_ready.unwrap().missing,
        ["timeseries_2018-10-26"]
    );
}
