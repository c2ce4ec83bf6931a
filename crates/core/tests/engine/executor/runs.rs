//! Dry runs, bounded concurrency, creates, deadlines and how each kind of failure is reported.

use super::*;

#[tokio::test]
async fn dry_run_changes_nothing() {
    let rig = Rig::new(&[("timeseries_2018-10-20", HOT)]);
    let options = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    for (operation, at) in [
        (Operation::CreateNew, CREATE_AT),
        (Operation::ResizeOld, RESIZE_AT),
    ] {
        let report = rig.run(operation, at, options).await;
        assert!(report.dry_run);
        assert!(report.summary.planned >= 1, "{report:#?}");
        assert_eq!(report.summary.done, 0);
    }
    assert_eq!(rig.changes(), Vec::<String>::new());
}

#[tokio::test]
async fn concurrency_is_bounded() {
    let rig = Rig::new(&[]).with_policy(Policy::from_toml("premake = 20").unwrap());
    let options = ApplyOptions {
        concurrency: 3,
        ..ApplyOptions::default()
    };
    let report = rig.run(Operation::CreateNew, CREATE_AT, options).await;
    assert_eq!(report.summary.done, 21);
    let max = rig.aws.max_in_flight();
    assert!((2..=3).contains(&max), "max in flight {max}");
}

/// Someone made a table of the name between this run's observation and its CreateTable (with
/// our family tag, even): CreateTable says it exists, and it is not the one this run made. The
/// line fails, naming that, the intent is withdrawn, and the next run finds the name taken.
#[tokio::test]
async fn a_table_made_by_someone_else_at_the_name_meanwhile_is_not_ours() {
    let rig = Rig::new(&[]);
    let key = rig.policy.key.clone();
    rig.aws.around(
        Around::Before,
        "CreateTable",
        "timeseries_2018-10-26",
        move |aws| {
            let mut spec = table_spec("timeseries_2018-10-26", key, Billing::Provisioned(HOT));
            spec.tags = ours();
            aws.foreign_create_table("someone", &spec).unwrap();
        },
    );
    let report = rig.create_new().await;
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-25", Outcome::Done),
            ("timeseries_2018-10-26", Outcome::Failed),
        ]
    );
    let line = report
        .tables
        .iter()
        .find(|l| l.item.facts.table == "timeseries_2018-10-26")
        .unwrap();
    assert!(
        line.error
            .as_deref()
            .unwrap_or_default()
            .contains("not by this run"),
        "{line:#?}"
    );
    assert_eq!(
        rig.table("timeseries_2018-10-26").unwrap().maker,
        Maker::Foreign("someone".into()),
        "someone's table, left as it is"
    );
    // The ledger holds our table of the 25th and no claim on the 26th.
    let book = rig.book();
    assert!(book
        .table("timeseries_2018-10-25")
        .and_then(|e| e.record.identity())
        .is_some());
    assert!(book.table("timeseries_2018-10-26").is_none(), "{book:#?}");
    // The next run: the name is taken by a table that is not ours, loudly.
    let next = rig.create_new().await;
    assert!(!next.succeeded());
    assert_eq!(
        rig.table("timeseries_2018-10-26").unwrap().maker,
        Maker::Foreign("someone".into())
    );
}

/// The account's table quota (or its 500 operations in progress) refuses the next period's
/// table: writes would fail at the boundary, so the run fails, naming the quota and what to do.
/// A busy answer fails it just the same: only a table that exists and is CREATING is on its way.
#[tokio::test]
async fn a_refused_create_of_the_next_periods_table_fails_the_run_naming_the_quota() {
    for kind in [ErrorKind::LimitExceeded, ErrorKind::InUse, ErrorKind::Other] {
        let rig = Rig::new(&[]);
        rig.aws.fail("CreateTable", "timeseries_2018-10-26", kind);
        let report = rig.create_new().await;
        assert!(!report.succeeded(), "{kind:?}");
        assert_eq!(
            outcomes(&report),
            [
                ("timeseries_2018-10-25", Outcome::Done),
                ("timeseries_2018-10-26", Outcome::Failed),
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

/// A call refused a given number of times is refused only that often: the next run's call of
/// the same kind goes through.
#[tokio::test]
async fn a_refusal_injected_once_leaves_the_next_run_alone() {
    let rig = Rig::new(&[("timeseries_2018-10-20", HOT)]);
    rig.aws
        .fail_times("UpdateTable", "timeseries_2018-10-20", ErrorKind::InUse, 1);
    let first = rig.resize_old().await;
    assert_eq!(outcomes(&first), [("timeseries_2018-10-20", Outcome::Deferred)]);
    let second = rig.resize_old().await;
    assert_eq!(outcomes(&second), [("timeseries_2018-10-20", Outcome::Done)]);
}

/// Out of time: changes not started by the deadline are deferred (no call is sent), except a
/// period's table, whose missing create fails the run.
#[tokio::test]
async fn past_the_deadline_changes_are_deferred_and_a_missing_periods_table_fails() {
    let rig = Rig::new(&[("timeseries_2018-10-20", HOT), ("timeseries_2018-10-21", HOT)]);
    let options = ApplyOptions {
        deadline: Some(rig.clock()),
        ..ApplyOptions::default()
    };
    let create = rig.run(Operation::CreateNew, CREATE_AT, options).await;
    assert!(!create.succeeded());
    assert_eq!(create.summary.failed, 2, "{create:#?}");
    // No time left to wait, and nothing created: the next table is not ready.
    let ready = create.next_table_ready.as_ref().unwrap();
    assert!(!ready.ready);
    assert_eq!(ready.missing, ["timeseries_2018-10-25", "timeseries_2018-10-26"]);
    let resize = rig.run(Operation::ResizeOld, RESIZE_AT, options).await;
    assert!(resize.succeeded());
    // Both tables' capacity changes (no template: no tags read, no tag upkeep).
    assert_eq!(resize.summary.deferred, 2, "{resize:#?}");
    assert!(resize.tables[0].error.as_deref().unwrap().contains("time budget"));
    assert_eq!(resize.tables[0].deferral, Some(DeferralCause::TimeBudget));
    assert!(rig.changes().is_empty(), "{:?}", rig.changes());

    // With time left, the same runs go ahead.
    let options = ApplyOptions {
        deadline: Some(rig.clock() + Duration::from_secs(60)),
        ..ApplyOptions::default()
    };
    let resize = rig.run(Operation::ResizeOld, RESIZE_AT, options).await;
    assert_eq!(resize.summary.done, 2, "{resize:#?}");
}

/// The tables of the failure tests, by day.
const OCT_20: &str = "timeseries_2018-10-20";
const OCT_21: &str = "timeseries_2018-10-21";
const OCT_22: &str = "timeseries_2018-10-22";
const OCT_23: &str = "timeseries_2018-10-23";

#[tokio::test]
async fn busy_or_limited_updates_are_deferred_and_others_fail_without_stopping_the_run() {
    let rig = Rig::new(&[(OCT_20, HOT), (OCT_21, HOT), (OCT_22, HOT), (OCT_23, HOT)]);
    rig.aws.fail("UpdateTable", OCT_20, ErrorKind::InUse);
    rig.aws.fail("UpdateTable", OCT_21, ErrorKind::LimitExceeded);
    rig.aws.fail("UpdateTable", OCT_22, ErrorKind::Other);
    let report = rig.resize_old().await;
    assert_eq!(
        outcomes(&report),
        [
            (OCT_20, Outcome::Deferred),
            (OCT_21, Outcome::Deferred),
            (OCT_22, Outcome::Failed),
            (OCT_23, Outcome::Done),
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
    let deferral = rig
        .table("timeseries_2018-10-20")
        .unwrap()
        .tags
        .remove("ddb-rollover:last-deferral")
        .expect("the deferral is tagged");
    assert!(
        deferral.starts_with("2018-10-26T00:15:00+00:00 update: injected"),
        "{deferral}"
    );
}

#[tokio::test]
async fn a_table_that_cannot_be_described_gets_no_action() {
    let rig = Rig::new(&[(OCT_20, HOT), (OCT_21, HOT)]);
    rig.aws.fail("DescribeTable", OCT_20, ErrorKind::Other);
    let report = rig.resize_old().await;
    assert_eq!(
        outcomes(&report),
        [(OCT_20, Outcome::Failed), (OCT_21, Outcome::Done)]
    );
    let calls = rig.changes();
    assert!(calls.iter().all(|c| c.ends_with(OCT_21)), "{calls:?}");
    assert!(calls.contains(&format!("UpdateTable {OCT_21}")));
}

#[tokio::test]
async fn report_serializes_with_a_line_per_table() {
    let rig = Rig::new(&[("timeseries_junk", HOT)]);
    let report = rig.create_new().await;
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
