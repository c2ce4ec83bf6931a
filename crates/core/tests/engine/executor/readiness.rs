//! Readiness: create_new waits for the tables it created, and says NOT READY when the next
//! period's table is still creating, foreign, deleting or missing. Every wait is on the fake's
//! clock: no test here depends on how fast the machine is.

use super::*;

/// DynamoDB with `create_delay` and `delete_delay` of fake time, the rest at once.
fn delays(create: chrono::Duration, delete: chrono::Duration) -> Config {
    Config {
        create_delay: create,
        delete_delay: delete,
        ..Config::default_instant()
    }
}

/// The day's and the next period's tables, the next one deleted by someone just before the
/// run, DELETING for `delete_delay`.
fn next_table_deleted(delete_delay: chrono::Duration) -> Rig {
    let rig = Rig::with_config(
        delays(chrono::Duration::zero(), delete_delay),
        &[("timeseries_2018-10-25", HOT), ("timeseries_2018-10-26", HOT)],
    );
    rig.aws
        .foreign_delete_table("someone", "timeseries_2018-10-26")
        .unwrap();
    rig
}

/// A table still CREATING when the wait ends is not ready; the wait ends at the run's deadline.
#[tokio::test]
async fn a_table_still_creating_when_the_wait_ends_is_not_ready() {
    let rig = Rig::with_config(delays(chrono::Duration::days(1), chrono::Duration::zero()), &[]);
    let started = rig.clock();
    let options = ApplyOptions {
        readiness_wait: Duration::from_secs(3),
        deadline: Some(started + Duration::from_millis(2500)),
        ..ApplyOptions::default()
    };
    let report = rig.run(Operation::CreateNew, CREATE_AT, options).await;
    // Waited 0.5 s, 1 s, then what was left of the budget, on the control plane's clock (the
    // deadline is read on it too): the fake's clock moved by the waits and nothing else.
    assert_eq!(
        rig.aws.waits(),
        [
            Duration::from_millis(500),
            Duration::from_millis(1000),
            Duration::from_millis(1000)
        ]
    );
    assert_eq!(rig.clock() - started, Duration::from_millis(2500));
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

/// Tables a create_new run just made are CREATING: the run polls them until ACTIVE before it
/// says whether the next table is ready; tables already ACTIVE cost no call.
#[tokio::test]
async fn create_new_waits_for_the_tables_it_created_then_reports_them_ready() {
    let rig = Rig::with_config(
        delays(chrono::Duration::milliseconds(500), chrono::Duration::zero()),
        &[],
    );
    let report = rig.create_new().await;
    let ready = report.next_table_ready.clone().unwrap();
    assert!(ready.ready, "{ready:#?}");
    assert_eq!(ready.tables.len(), 2);
    assert!(ready.tables.iter().all(|t| t.status.as_deref() == Some("ACTIVE")));
    // Polled at once (CREATING), then after 0.5 s on the control plane's clock (ACTIVE): two
    // polls each, one wait.
    assert_eq!(rig.describes(), 4);
    assert_eq!(rig.aws.waits(), [Duration::from_millis(500)]);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["next_table_ready"]["ready"], true);

    // Both exist and are ACTIVE: the observation's DescribeTable calls and no more.
    let before = rig.describes();
    let again = rig.create_new_at("2018-10-25T23:50:00Z").await;
    assert!(again.next_table_ready.unwrap().ready);
    assert_eq!(rig.describes() - before, 2);

    // Dry runs say nothing.
    let options = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    let dry = rig
        .run(Operation::CreateNew, "2018-10-25T23:50:00Z", options)
        .await;
    assert_eq!(dry.next_table_ready, None);
}

/// The next period's name held by a table that is not the policy's: blocked, and not ready.
#[tokio::test]
async fn a_foreign_table_holding_the_next_name_is_not_ready() {
    let rig = Rig::new(&[("timeseries_2018-10-25", HOT)]);
    let mut spec = table_spec(
        "timeseries_2018-10-26",
        rig.policy.key.clone(),
        Billing::Provisioned(HOT),
    );
    spec.tags = family("other");
    rig.aws.foreign_create_table("someone", &spec).unwrap();
    let report = rig.create_new().await;
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
    // Gone 1.5 s after the delete: at the third DescribeTable (the observation's, then the polls
    // after 0.5 s and 1 s).
    let rig = next_table_deleted(chrono::Duration::milliseconds(1500));
    let report = rig.create_new().await;
    let line = line(&report, "timeseries_2018-10-26");
    assert_eq!(line.item.decision.action(), "recreate");
    assert_eq!(line.outcome, Outcome::Done, "{line:#?}");
    assert!(report.succeeded(), "{report:#?}");
    assert!(report.next_table_ready.as_ref().unwrap().ready);
    // Read back from the fake: the table exists again, ACTIVE, and the run made it.
    let table = rig.table("timeseries_2018-10-26").unwrap();
    assert_eq!(table.status.observed(), TableStatus::Active);
    assert_eq!(table.maker, Maker::Us);
    assert!(rig
        .changes()
        .contains(&"CreateTable timeseries_2018-10-26".to_string()));
}

/// A period's table still DELETING when the run's wait ends fails the run: exit 1 from the CLI,
/// a function error from Lambda, NextTableReady 0.
#[tokio::test]
async fn a_period_table_still_deleting_at_the_end_fails_the_run() {
    let rig = next_table_deleted(chrono::Duration::days(1));
    let options = ApplyOptions {
        readiness_wait: Duration::from_secs(30),
        ..ApplyOptions::default()
    };
    let report = rig.run(Operation::CreateNew, CREATE_AT, options).await;
    assert!(!report.succeeded(), "{report:#?}");
    let line = line(&report, "timeseries_2018-10-26");
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
    let waited: Duration = rig.aws.waits().iter().sum();
    assert!(waited <= Duration::from_secs(30), "{waited:?}");
}

/// A table created by the run and deleted (by someone else) right after: missing at the end,
/// so the run fails although every call it made succeeded.
#[tokio::test]
async fn a_period_table_missing_at_the_end_fails_the_run() {
    let rig = Rig::new(&[]);
    rig.aws
        .around(Around::After, "CreateTable", "timeseries_2018-10-26", |aws| {
            aws.foreign_delete_table("someone", "timeseries_2018-10-26")
                .unwrap();
        });
    let report = rig.create_new().await;
    assert!(!report.succeeded(), "{report:#?}");
    let lost: Vec<_> = report
        .lines_with(Outcome::Failed)
        .map(|l| l.item.facts.table.as_str())
        .collect();
    assert_eq!(lost, ["timeseries_2018-10-26"], "{report:#?}");
    assert_eq!(
        report.next_table_ready.unwrap().missing,
        ["timeseries_2018-10-26"]
    );
}

/// Issue 38: a poll that could not read a table the run waits for was said only in a WARN log
/// line (which the CLI no longer prints without DDB_ROLLOVER_LOG): the health line showed the
/// status seen before, with nothing saying why it did not move. It says the poll failed, with
/// DescribeTable's error.
#[tokio::test]
async fn a_poll_that_fails_is_said_in_the_health_line() {
    let rig = Rig::with_config(delays(chrono::Duration::days(1), chrono::Duration::zero()), &[]);
    rig.aws
        .fail("DescribeTable", "timeseries_2018-10-26", ErrorKind::Other);
    let started = rig.clock();
    let options = ApplyOptions {
        readiness_wait: Duration::from_secs(3),
        deadline: Some(started + Duration::from_millis(2500)),
        ..ApplyOptions::default()
    };
    let report = rig.run(Operation::CreateNew, CREATE_AT, options).await;
    let ready = report.next_table_ready.unwrap();
    assert!(!ready.ready);
    let line = ready.line();
    assert!(
        line.contains("timeseries_2018-10-26 CREATING (as last seen: polling it failed:")
            && line.contains("DescribeTable")
            && line.contains("injected"),
        "{line}"
    );
    assert!(
        !line.contains("timeseries_2018-10-25 CREATING (as last seen"),
        "{line}"
    );
}
