//! Retention through the executor: a failed export or delete blocks nothing else, deletion protection lifted right before the delete, capacity changes waiting for scalable targets.

use super::*;

#[tokio::test]
async fn a_failed_export_or_delete_blocks_neither_other_tables_nor_create_new() {
    // On 10-26: 10-20 and 10-21 are due for deletion (age 6, 5) but not archived; 10-22 (age 4)
    // too; 10-23 (age 3) and 10-24 (age 2) are due for archiving.
    let fake = old_tables(20..=24).fail(
        "ExportTableToPointInTime",
        "timeseries_2018-10-20",
        ErrorKind::Other,
    );
    let policy = retention_policy("");
    let now = at("2018-10-26T00:15:00Z");
    let report = run(
        &fake,
        &policy,
        Operation::ResizeOld,
        &simulated(&policy, Operation::ResizeOld, now),
        ApplyOptions::default(),
    )
    .await
    .unwrap();
    let exports: Vec<(String, Outcome)> = report
        .tables
        .iter()
        .filter(|l| l.item.decision.action() == "export")
        .map(|l| (l.item.table.clone(), l.outcome))
        .collect();
    assert_eq!(
        exports,
        [
            ("timeseries_2018-10-20".to_string(), Outcome::Failed),
            ("timeseries_2018-10-21".to_string(), Outcome::Done),
            ("timeseries_2018-10-22".to_string(), Outcome::Done),
            ("timeseries_2018-10-23".to_string(), Outcome::Done),
            ("timeseries_2018-10-24".to_string(), Outcome::Done),
        ]
    );
    // Nothing was deleted before its export completed.
    assert!(!fake.mutating_calls().iter().any(|c| c.starts_with("DeleteTable")));
    assert_eq!(report.summary.failed, 1);

    let created = run_at(
        &fake,
        &policy,
        Operation::CreateNew,
        "2018-10-26T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert!(created.succeeded(), "{created:?}");
    assert!(fake.tables.lock().unwrap().contains_key("timeseries_2018-10-27"));

    // The next run records the completed exports; 10-20 is exported again. This control plane
    // has no resource-based policies: no table is sealed against writes, so no archived table
    // is deleted, each saying why.
    let report = run_at(
        &fake,
        &policy,
        Operation::ResizeOld,
        "2018-10-27T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    let deleted: Vec<&str> = report
        .lines_with(Outcome::Done)
        .filter(|l| l.item.decision.action() == "delete")
        .map(|l| l.item.table.as_str())
        .collect();
    assert!(deleted.is_empty(), "{deleted:?}");
    for table in ["timeseries_2018-10-21", "timeseries_2018-10-22"] {
        let kept = report
            .tables
            .iter()
            .find(|l| l.item.table == table && l.outcome == Outcome::Deferred)
            .unwrap_or_else(|| panic!("{table} is kept: {report:#?}"));
        assert!(
            kept.item.reason.contains("cannot be sealed"),
            "{}",
            kept.item.reason
        );
    }
}

#[tokio::test]
async fn deletion_protection_is_lifted_right_before_the_delete_and_the_newest_are_kept() {
    let fake = old_tables(10..=25);
    for day in 10..=25 {
        fake.with_table(&format!("timeseries_2018-10-{day:02}"), |t| {
            t.deletion_protection = true;
            t.tags = Some(BTreeMap::from([
                ("ddb-rollover:archived".to_string(), "x".to_string()),
                ("ddb-rollover:family".to_string(), "timeseries".to_string()),
            ]));
        });
    }
    let policy = Policy::from_toml(
        "[template]\ndeletion_protection = true\n[retention]\ndelete_after = 2\nkeep_newest = 14\nmax_deletes_per_run = 5",
    )
    .unwrap();
    run_at(
        &fake,
        &policy,
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    let calls = fake.mutating_calls();
    let deletes = calls.iter().filter(|c| c.starts_with("DeleteTable")).count();
    // 16 tables, the newest 14 kept: only 10-10 and 10-11 go, each unprotected just before
    // (the other tables' UpdateTable calls are their capacity changes).
    assert_eq!(deletes, 2);
    for day in ["10-10", "10-11"] {
        let table_calls: Vec<&String> = calls.iter().filter(|c| c.ends_with(day)).collect();
        assert_eq!(
            table_calls,
            [
                &format!("UpdateTable timeseries_2018-{day}"),
                &format!("DeleteTable timeseries_2018-{day}")
            ]
        );
    }
}

#[tokio::test]
async fn a_capacity_change_waits_until_the_scalable_targets_are_gone() {
    let policy = Policy::from_toml(
        "[[phases]]\nmin_age = 0\nautoscaling = { min_read = 5, max_read = 500, min_write = 5, max_write = 500 }\n\
         [[phases]]\nmin_age = 1\nread = 1\nwrite = 1",
    )
    .unwrap();
    let table = "timeseries_2018-10-24";
    for (kind, outcome) in [
        (ErrorKind::Other, Outcome::Failed),
        (ErrorKind::InUse, Outcome::Deferred),
    ] {
        let fake = FakeDynamo::default().fail("DeregisterScalableTarget", table, kind);
        fake.tables
            .lock()
            .unwrap()
            .insert(table.into(), autoscaled(table, HOT));
        let report = run_at(
            &fake,
            &policy,
            Operation::ResizeOld,
            "2018-10-26T00:15:00Z",
            ApplyOptions::default(),
        )
        .await;
        let lines: Vec<_> = report
            .tables
            .iter()
            .map(|l| (l.item.decision.action(), l.outcome))
            .collect();
        assert_eq!(
            lines,
            [("deregister_scaling", outcome), ("update", Outcome::Deferred)]
        );
        assert_eq!(
            report.tables[1].deferral,
            Some(DeferralCause::ScalingStillAttached)
        );
        // No UpdateTable (the deferral is recorded in the table's tag, as any other).
        let calls: Vec<String> = fake
            .mutating_calls()
            .into_iter()
            .filter(|c| !c.starts_with("TagResource"))
            .collect();
        assert_eq!(calls, [format!("DeregisterScalableTarget {table}")]);
    }
    // Once deregistered, the same run goes on to the capacity change.
    let fake = FakeDynamo::default();
    fake.tables
        .lock()
        .unwrap()
        .insert(table.into(), autoscaled(table, HOT));
    let report = run_at(
        &fake,
        &policy,
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert_eq!(report.summary.done, 2, "{:#?}", report.tables);
    assert_eq!(
        fake.mutating_calls(),
        [
            format!("DeregisterScalableTarget {table}"),
            format!("UpdateTable {table}")
        ]
    );
}

/// Tables a create_new run just made are CREATING: the run polls them until ACTIVE before it
/// says whether the next table is ready; tables already ACTIVE cost no call.
#[tokio::test]
async fn create_new_waits_for_the_tables_it_created_then_reports_them_ready() {
    let fake = FakeDynamo {
        creating_for: 2,
        ..FakeDynamo::default()
    };
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    let ready = report.next_table_ready.clone().unwrap();
    assert!(ready.ready, "{ready:#?}");
    assert_eq!(ready.tables.len(), 2);
    assert!(ready.tables.iter().all(|t| t.status.as_deref() == Some("ACTIVE")));
    // Polled at once (CREATING), then after 0.5 s on the control plane's clock (ACTIVE): two
    // polls each, one wait.
    assert_eq!(describe_calls(&fake), 4);
    assert_eq!(*fake.slept.lock().unwrap(), [Duration::from_millis(500)]);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["next_table_ready"]["ready"], true);

    // Both exist and are ACTIVE: the observation's DescribeTable calls and no more.
    let before = describe_calls(&fake);
    let again = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:50:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert!(again.next_table_ready.unwrap().ready);
    assert_eq!(describe_calls(&fake) - before, 2);

    // Dry runs say nothing.
    let dry = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:50:00Z",
        ApplyOptions {
            dry_run: true,
            ..ApplyOptions::default()
        },
    )
    .await;
    assert_eq!(dry.next_table_ready, None);
}
