//! Retention through the executor: a failed export or delete blocks nothing else, deletion
//! protection lifted right before the delete, capacity changes waiting for scalable targets.

use super::*;
use crate::common::reports::{line_with, step_outcomes};

/// A policy that archives after 2 days and deletes after 4, one deletion per run.
fn retention_policy() -> Policy {
    Policy::from_toml(
        "[retention]\narchive_after = 2\nbucket = \"archive\"\ndelete_after = 4\nmax_deletes_per_run = 1\nkeep_newest = 2\n",
    )
    .unwrap()
}

#[tokio::test]
async fn a_failed_export_or_delete_blocks_neither_other_tables_nor_create_new() {
    // On 10-26: 10-20 and 10-21 are due for deletion (age 6, 5) but not archived; 10-22 (age 4)
    // too; 10-23 (age 3) and 10-24 (age 2) are due for archiving.
    let rig = Rig::old_tables(20..=24).with_policy(retention_policy());
    rig.aws.fail(
        "ExportTableToPointInTime",
        "timeseries_2018-10-20",
        ErrorKind::Other,
    );
    let report = rig.resize_old().await;
    let exports = table_outcomes(
        report
            .tables
            .iter()
            .filter(|l| l.item.decision.action() == "export"),
    );
    assert_eq!(
        exports,
        [
            ("timeseries_2018-10-20", Outcome::Failed),
            ("timeseries_2018-10-21", Outcome::Done),
            ("timeseries_2018-10-22", Outcome::Done),
            ("timeseries_2018-10-23", Outcome::Done),
            ("timeseries_2018-10-24", Outcome::Done),
        ]
    );
    // Nothing was deleted before its export completed.
    assert!(!rig.changes().iter().any(|c| c.starts_with("DeleteTable")));
    assert_eq!(report.summary.failed, 1);

    let created = rig.create_new_at("2018-10-26T23:45:00Z").await;
    assert!(created.succeeded(), "{created:?}");
    assert!(rig.table("timeseries_2018-10-27").is_some());

    // The next run records the completed exports. 10-20, whose exports still fail, is the one
    // this run may delete: sealed, its final export fails, so it is kept; the others wait for
    // a later run's budget. Nothing is deleted.
    let report = rig.resize_old_at("2018-10-27T00:15:00Z").await;
    assert!(
        !report
            .tables
            .iter()
            .any(|l| l.item.decision.action() == "delete" && l.outcome == Outcome::Done),
        "{report:#?}"
    );
    assert!(!rig.changes().iter().any(|c| c.starts_with("DeleteTable")));
    let final_export = report
        .tables
        .iter()
        .find(|l| l.item.reason.starts_with("final export after the seal"))
        .unwrap_or_else(|| panic!("{report:#?}"));
    assert_eq!(
        (final_export.item.facts.table.as_str(), final_export.outcome),
        ("timeseries_2018-10-20", Outcome::Failed)
    );
    for table in ["timeseries_2018-10-21", "timeseries_2018-10-22"] {
        let kept = line_with(&report, table, Outcome::Deferred);
        assert!(
            kept.item.reason.contains("max_deletes_per_run"),
            "{}",
            kept.item.reason
        );
    }
}

#[tokio::test]
async fn deletion_protection_is_lifted_right_before_the_delete_and_the_newest_are_kept() {
    let rig = Rig::old_tables(10..=25).with_policy(
        Policy::from_toml(
            "[template]\ndeletion_protection = true\n[retention]\ndelete_after = 2\nkeep_newest = 14\nmax_deletes_per_run = 5",
        )
        .unwrap(),
    );
    for day in 10..=25 {
        rig.aws.alter_table(&format!("timeseries_2018-10-{day:02}"), |t| {
            t.deletion_protection = true;
            t.protected_by = Some(Maker::Us);
            t.tags.insert("ddb-rollover:archived".into(), "x".into());
        });
    }
    rig.resize_old().await;
    let calls = rig.changes();
    let deletes = calls.iter().filter(|c| c.starts_with("DeleteTable")).count();
    // 16 tables, the newest 14 kept: only 10-10 and 10-11 go, each unprotected just before
    // (the other tables' UpdateTable calls are their capacity changes).
    assert_eq!(deletes, 2, "{calls:#?}");
    for day in ["10-10", "10-11"] {
        let table_calls: Vec<&String> = calls.iter().filter(|c| c.ends_with(day)).collect();
        assert_eq!(
            table_calls,
            [
                &format!("UpdateTable timeseries_2018-{day}"),
                &format!("DeleteTable timeseries_2018-{day}")
            ]
        );
        assert!(
            rig.table(&format!("timeseries_2018-{day}")).is_none(),
            "{day} is gone"
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
        let rig = Rig::new(&[]).with_policy(policy.clone());
        rig.autoscaled(table, HOT);
        rig.aws.fail("DeregisterScalableTarget", table, kind);
        let report = rig.resize_old().await;
        assert_eq!(
            step_outcomes(&report),
            [("deregister_scaling", outcome), ("update", Outcome::Deferred)]
        );
        assert_eq!(
            report.tables[1].deferral,
            Some(DeferralCause::ScalingStillAttached)
        );
        // No UpdateTable (the deferral is recorded in the table's tag, as any other).
        let calls: Vec<String> = rig
            .changes()
            .into_iter()
            .filter(|c| !c.starts_with("TagResource"))
            .collect();
        assert_eq!(calls, [format!("DeregisterScalableTarget {table}")]);
    }
    // Once deregistered, the same run goes on to the capacity change.
    let rig = Rig::new(&[]).with_policy(policy);
    rig.autoscaled(table, HOT);
    let report = rig.resize_old().await;
    assert_eq!(report.summary.done, 2, "{:#?}", report.tables);
    assert_eq!(
        rig.changes(),
        [
            format!("DeregisterScalableTarget {table}"),
            format!("UpdateTable {table}")
        ]
    );
    assert!(rig.aws.with_world(|w| w.targets.is_empty()), "the target is gone");
}

/// Issue 38: a scalable target someone attached a policy to between the run's look and its
/// deregistration is left registered (deregistering would delete their policy); that was said
/// only in a WARN log line, which the CLI no longer prints without DDB_ROLLOVER_LOG. The
/// deregistration's line says it, naming the target and their policy.
#[tokio::test]
async fn a_target_left_registered_for_someone_elses_policy_is_said_on_its_line() {
    let policy = Policy::from_toml(
        "[[phases]]\nmin_age = 0\nautoscaling = { min_read = 5, max_read = 500, min_write = 5, max_write = 500 }\n\
         [[phases]]\nmin_age = 1\nread = 1\nwrite = 1",
    )
    .unwrap();
    let table = "timeseries_2018-10-24";
    let rig = Rig::new(&[]).with_policy(policy);
    rig.autoscaled(table, HOT);
    let key = ScalableKey {
        resource_id: format!("table/{table}"),
        dimension: ScalableDimension::TableRead,
    };
    rig.aws
        .around(Around::Before, "DeregisterScalableTarget", table, move |aws| {
            aws.foreign_put_policy("ops", &key, "ops-step", "StepScaling")
                .unwrap();
        });
    let report = rig.resize_old().await;
    let line = report
        .tables
        .iter()
        .find(|l| matches!(l.item.decision, Decision::DeregisterScaling(_)))
        .unwrap_or_else(|| panic!("{:#?}", report.tables));
    assert_eq!(line.outcome, Outcome::Done, "{line:#?}");
    assert!(
        line.item
            .reason
            .contains(&format!("scalable target table/{table} read left registered"))
            && line.item.reason.contains("ops-step"),
        "{}",
        line.item.reason
    );
    assert_eq!(rig.aws.with_world(|w| w.targets.len()), 1, "theirs stays");
}
