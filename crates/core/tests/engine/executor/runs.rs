//! Dry runs, bounded concurrency, creates, deadlines and how each kind of failure is reported.

use super::*;

#[tokio::test]
async fn dry_run_changes_nothing() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT)]);
    let options = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    for operation in [Operation::CreateNew, Operation::ResizeOld] {
        let report = run_at(
            &fake,
            &Policy::default(),
            operation,
            "2018-10-25T23:45:00Z",
            options,
        )
        .await;
        assert!(report.dry_run);
        assert!(report.summary.planned >= 1, "{report:#?}");
        assert_eq!(report.summary.done, 0);
    }
    assert_eq!(fake.mutating_calls(), Vec::<String>::new());
}

#[tokio::test]
async fn concurrency_is_bounded() {
    let policy = Policy::from_toml("premake = 20").unwrap();
    let fake = FakeDynamo::default();
    let options = ApplyOptions {
        concurrency: 3,
        ..ApplyOptions::default()
    };
    let report = run_at(
        &fake,
        &policy,
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        options,
    )
    .await;
    assert_eq!(report.summary.done, 21);
    let max = fake.max_in_flight.load(Ordering::SeqCst);
    assert!((2..=3).contains(&max), "max in flight {max}");
}

#[tokio::test]
async fn create_of_an_existing_table_counts_as_done() {
    let fake = FakeDynamo::default().fail("CreateTable", "timeseries_2018-10-26", ErrorKind::AlreadyExists);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-25".to_string(), Outcome::Done),
            ("timeseries_2018-10-26".to_string(), Outcome::Done),
        ]
    );
    assert!(report.succeeded());
}

/// The account's table quota (or its 500 operations in progress) refuses the next period's
/// table: writes would fail at the boundary, so the run fails, naming the quota and what to do.
/// A busy answer fails it just the same: only a table that exists and is CREATING is on its way.
#[tokio::test]
async fn a_refused_create_of_the_next_periods_table_fails_the_run_naming_the_quota() {
    for kind in [ErrorKind::LimitExceeded, ErrorKind::InUse, ErrorKind::Other] {
        let fake = FakeDynamo::default().fail("CreateTable", "timeseries_2018-10-26", kind);
        let report = run_at(
            &fake,
            &Policy::default(),
            Operation::CreateNew,
            "2018-10-25T23:45:00Z",
            ApplyOptions::default(),
        )
        .await;
        assert!(!report.succeeded(), "{kind:?}");
        assert_eq!(
            outcomes(&report),
            [
                ("timeseries_2018-10-25".to_string(), Outcome::Done),
                ("timeseries_2018-10-26".to_string(), Outcome::Failed),
            ]
        );
        let error = report.tables[1].error.clone().unwrap();
        assert_eq!(
            error.contains("2,500 tables per Region") && error.contains("retention.delete_after"),
            kind == ErrorKind::LimitExceeded,
            "{error}"
        );
    }
}

/// Out of time: changes not started by the deadline are deferred (no call is sent), except a
/// period's table, whose missing create fails the run.
#[tokio::test]
async fn past_the_deadline_changes_are_deferred_and_a_missing_periods_table_fails() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT), ("timeseries_2018-10-21", HOT)]);
    let past = Some(fake.now());
    let options = ApplyOptions {
        deadline: past,
        ..ApplyOptions::default()
    };
    let resize = run_at(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        options,
    )
    .await;
    assert!(resize.succeeded());
    // Both tables' capacity changes (no template: no tags read, no tag upkeep).
    assert_eq!(resize.summary.deferred, 2, "{resize:#?}");
    assert!(resize.tables[0].error.as_deref().unwrap().contains("time budget"));
    assert_eq!(resize.tables[0].deferral, Some(DeferralCause::TimeBudget));
    let create = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        options,
    )
    .await;
    assert!(!create.succeeded());
    assert_eq!(create.summary.failed, 2, "{create:#?}");
    // No time left to wait, and nothing created: the next table is not ready.
    let ready = create.next_table_ready.as_ref().unwrap();
    assert!(!ready.ready);
    assert_eq!(ready.missing, ["timeseries_2018-10-25", "timeseries_2018-10-26"]);
    assert!(fake.mutating_calls().is_empty(), "{:?}", fake.mutating_calls());

    // With time left, the same runs go ahead.
    let options = ApplyOptions {
        deadline: Some(fake.now() + Duration::from_secs(60)),
        ..ApplyOptions::default()
    };
    let resize = run_at(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        options,
    )
    .await;
    assert_eq!(resize.summary.done, 2, "{resize:#?}");
}

#[tokio::test]
async fn busy_or_limited_updates_are_deferred_and_others_fail_without_stopping_the_run() {
    let fake = FakeDynamo::with_tables(&[
        ("timeseries_2018-10-20", HOT),
        ("timeseries_2018-10-21", HOT),
        ("timeseries_2018-10-22", HOT),
        ("timeseries_2018-10-23", HOT),
    ])
    .fail("UpdateTable", "timeseries_2018-10-20", ErrorKind::InUse)
    .fail("UpdateTable", "timeseries_2018-10-21", ErrorKind::LimitExceeded)
    .fail("UpdateTable", "timeseries_2018-10-22", ErrorKind::Other);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-20".to_string(), Outcome::Deferred),
            ("timeseries_2018-10-21".to_string(), Outcome::Deferred),
            ("timeseries_2018-10-22".to_string(), Outcome::Failed),
            ("timeseries_2018-10-23".to_string(), Outcome::Done),
        ]
    );
    let failed = report.lines_with(Outcome::Failed).next().unwrap();
    assert!(failed.error.as_deref().unwrap().contains("injected Other"));
    // A runtime refusal has no deferred decision: the line says why.
    let causes: Vec<_> = report.tables.iter().map(|l| l.deferral).collect();
    assert_eq!(
        causes,
        [
            Some(DeferralCause::TableBusy),
            Some(DeferralCause::LimitExceeded),
            None,
            None
        ]
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["tables"][0]["deferral"], "table_busy");
    assert_eq!(json["tables"][0]["decision"]["action"], "update");
    assert!(json["tables"][3].get("deferral").is_none(), "skipped when none");
    assert!(
        json.get("next_table_ready").is_none(),
        "resize_old says nothing of it"
    );
    assert!(!report.succeeded());
    // Refusals at run time are recorded on the table for `status`.
    let deferral = fake
        .with_table("timeseries_2018-10-20", |t| t.tags.clone().unwrap_or_default())
        .unwrap()
        .remove("ddb-rollover:last-deferral")
        .expect("the deferral is tagged");
    assert!(
        deferral.starts_with("2018-10-26T00:15:00+00:00 update: injected"),
        "{deferral}"
    );
}

#[tokio::test]
async fn a_table_that_cannot_be_described_gets_no_action() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT), ("timeseries_2018-10-21", HOT)])
        .fail("DescribeTable", "timeseries_2018-10-20", ErrorKind::Other);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-20".to_string(), Outcome::Failed),
            ("timeseries_2018-10-21".to_string(), Outcome::Done),
        ]
    );
    let calls = fake.mutating_calls();
    assert!(
        calls.iter().all(|c| c.ends_with("timeseries_2018-10-21")),
        "{calls:?}"
    );
    assert!(calls.contains(&"UpdateTable timeseries_2018-10-21".to_string()));
}

#[tokio::test]
async fn report_serializes_with_a_line_per_table() {
    let fake = FakeDynamo::with_tables(&[("timeseries_junk", HOT)]);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["operation"], "create_new");
    assert_eq!(json["summary"]["done"], 2);
    assert_eq!(json["summary"]["foreign"], 1);
    let lines = json["tables"].as_array().unwrap();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["table"], "timeseries_2018-10-25");
    assert_eq!(lines[0]["decision"]["action"], "create");
    assert_eq!(lines[0]["outcome"], "done");
    assert_eq!(lines[2]["outcome"], "foreign");
}
