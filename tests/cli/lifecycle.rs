//! The whole lifecycle on moto: 16 days of the two scheduled runs with a table template and
//! retention (archive after 3 days, delete after 9): every phase and every retention step
//! (export at 3, archived at 4, sealed at 9, exported again at 10, deleted at 11), six tables
//! through all of them. Results are read back with the SDK (DescribeTable,
//! ListTagsOfResource, DescribeTimeToLive, DescribeContinuousBackups, S3 listings), never
//! taken from our own reports. (It ran 120 days at 30 and 90 before: the same steps, each
//! repeated ten times more, all on moto's wall clock.)

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_dynamodb::types::PointInTimeRecoveryStatus;
use chrono::{Duration, NaiveDate};
use ddb_rollover::Decision;
use ddb_rollover::{ApplyOptions, Operation, Outcome, Policy};

use crate::support::days::{assert_succeeded, at, run_at, run_at_with};
use crate::support::ArchiveRig;

const POLICY: &str = r#"
prefix = "timeseries"
period = "day"
premake = 1

[template]
ttl_attribute = "expires_at"
deletion_protection = true
stream = "new_and_old_images"
tags = { team = "iot" }

[retention]
archive_after = 3
bucket = "archive"
prefix = "exports/"
delete_after = 9
max_deletes_per_run = 5
keep_newest = 3
"#;

/// The policy's `archive_after` and `delete_after`.
const ARCHIVE_AFTER: i64 = 3;
const DELETE_AFTER: i64 = 9;
/// Six tables deleted by the end: sealed at [`DELETE_AFTER`], exported again the day after,
/// deleted the day after that.
const DAYS: i64 = 16;

#[tokio::test]
async fn sixteen_days_archive_after_3_delete_after_9() {
    let ArchiveRig {
        server,
        client,
        control,
    } = ArchiveRig::start().await;
    let policy = Policy::from_toml(POLICY).unwrap();
    // Has the prefix but no date: never ours, never deleted.
    testkit::create_plain_table(&client, "timeseries_audit").await;

    let start = NaiveDate::from_ymd_opt(2018, 7, 1).unwrap();
    let mut deleted: Vec<(String, Option<String>)> = Vec::new();
    let mut exported: BTreeSet<String> = BTreeSet::new();
    let mut exported_when: BTreeMap<String, i64> = BTreeMap::new();
    let mut final_exported: BTreeSet<String> = BTreeSet::new();
    let mut max_deletes_in_a_run = 0;
    for d in 0..DAYS {
        let day = start + Duration::days(d);
        let create = run_at(&control, &policy, Operation::CreateNew, at(day, "23:45:00")).await;
        assert_succeeded(&create);
        let resize_at = at(day + Duration::days(1), "00:15:00");
        if d == DELETE_AFTER - 1 {
            // The day the first table turns DELETE_AFTER: a dry run shows the pending seal
            // (the first step of its deletion) and export before they happen.
            let dry = ApplyOptions {
                dry_run: true,
                ..ApplyOptions::default()
            };
            let plan = run_at_with(&control, &policy, Operation::ResizeOld, resize_at, dry).await;
            let pending: Vec<(&str, &str)> = plan
                .lines_with(Outcome::Planned)
                .filter(|l| {
                    matches!(
                        l.item.decision,
                        Decision::Export(_) | Decision::Delete(_) | Decision::Seal(_)
                    )
                })
                .map(|l| (l.item.decision.action(), l.item.facts.table.as_str()))
                .collect();
            let exported_now = format!(
                "timeseries_{}",
                start + Duration::days(DELETE_AFTER - ARCHIVE_AFTER)
            );
            assert_eq!(
                pending,
                [
                    ("seal", "timeseries_2018-07-01"),
                    ("export", exported_now.as_str())
                ]
            );
            assert!(testkit::describe_all(&client)
                .await
                .contains_key("timeseries_2018-07-01"));
        }
        let resize = run_at(&control, &policy, Operation::ResizeOld, resize_at).await;
        assert_succeeded(&resize);
        let mut deletes = 0;
        for line in resize.lines_with(Outcome::Done) {
            match &line.item.decision {
                Decision::Export(request) if request.after_seal => {
                    final_exported.insert(request.name.clone());
                }
                Decision::Export(request) => {
                    exported.insert(request.name.clone());
                    exported_when.insert(request.name.clone(), d);
                }
                Decision::Delete(request) => {
                    deletes += 1;
                    deleted.push((request.name.clone(), request.archived_by.clone()));
                }
                _ => {}
            }
        }
        max_deletes_in_a_run = max_deletes_in_a_run.max(deletes);
    }

    // The last create_new ran on day DAYS - 1 and pre-built day DAYS, the current day of the
    // last resize_old: tables exist for days 0..=DAYS, minus those deleted. A table is sealed
    // against writes by the run that finds it DELETE_AFTER days old, exported again by the next
    // and deleted by the one after, once that export is proven: days 0..=DAYS - DELETE_AFTER - 2
    // are gone.
    let current = start + Duration::days(DAYS);
    let last_deleted = DAYS - DELETE_AFTER - 2;
    let expected_deleted: Vec<String> = (0..=last_deleted)
        .map(|d| format!("timeseries_{}", start + Duration::days(d)))
        .collect();
    let expected_kept: BTreeSet<String> = (last_deleted + 1..=DAYS)
        .map(|d| format!("timeseries_{}", start + Duration::days(d)))
        .collect();

    let tables = testkit::describe_all(&client).await;
    let owned: BTreeSet<String> = tables
        .keys()
        .filter(|n| n.starts_with("timeseries_2"))
        .cloned()
        .collect();
    assert_eq!(owned, expected_kept);
    assert!(
        tables.contains_key("timeseries_audit"),
        "the foreign table survives"
    );

    // Every deleted table was exported first (in an earlier run), its export recorded, and
    // its data is in S3.
    let deleted_names: Vec<String> = deleted.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(deleted_names, expected_deleted);
    assert!(max_deletes_in_a_run <= 5);
    for (name, archived_by) in &deleted {
        assert!(exported.contains(name), "{name} deleted without an export");
        assert!(
            final_exported.contains(name),
            "{name} deleted without a final export after its seal"
        );
        assert!(archived_by.is_some(), "{name}: delete names no export");
        let objects = server.list_objects("archive", &format!("exports/{name}/"));
        assert!(
            !objects.is_empty(),
            "{name}: nothing in s3://archive/exports/{name}/"
        );
    }
    // Exports happen when a table turns ARCHIVE_AFTER.
    for (name, day) in &exported_when {
        let table_day =
            NaiveDate::parse_from_str(name.trim_start_matches("timeseries_"), "%Y-%m-%d").unwrap();
        assert_eq!(
            (start + Duration::days(*day + 1) - table_day).num_days(),
            ARCHIVE_AFTER,
            "{name}"
        );
    }

    for name in &expected_kept {
        let table = &tables[name];
        let day = NaiveDate::parse_from_str(name.trim_start_matches("timeseries_"), "%Y-%m-%d").unwrap();
        let age = (current - day).num_days();
        let throughput = table.provisioned_throughput().unwrap();
        let capacity = (
            throughput.read_capacity_units().unwrap(),
            throughput.write_capacity_units().unwrap(),
        );
        let want = match age {
            ..=0 => (300, 1000),
            1 => (100, 1),
            _ => (1, 1),
        };
        assert_eq!(capacity, want, "{name} (age {age})");
        assert_eq!(table.deletion_protection_enabled(), Some(true), "{name}");
        assert!(
            table.stream_specification().is_some_and(|s| s.stream_enabled()),
            "{name}: stream"
        );

        let arn = table.table_arn().unwrap();
        let tags = testkit::tags_of(&client, arn).await;
        assert_eq!(tags.get("team").map(String::as_str), Some("iot"), "{name}");
        assert_eq!(
            tags.get("ddb-rollover:period-start").map(String::as_str),
            Some(format!("{day}T00:00:00+00:00").as_str()),
            "{name}"
        );
        assert_eq!(
            tags.contains_key("ddb-rollover:archived"),
            age > ARCHIVE_AFTER,
            "{name} (age {age}): archived once its export completed"
        );
        assert_eq!(
            tags.contains_key("ddb-rollover:export"),
            age >= ARCHIVE_AFTER,
            "{name} (age {age})"
        );

        let ttl = client
            .describe_time_to_live()
            .table_name(name)
            .send()
            .await
            .unwrap();
        let ttl = ttl.time_to_live_description().unwrap();
        assert_eq!(ttl.attribute_name(), Some("expires_at"), "{name}");

        let backups = client
            .describe_continuous_backups()
            .table_name(name)
            .send()
            .await
            .unwrap();
        let pitr = backups
            .continuous_backups_description()
            .and_then(|d| d.point_in_time_recovery_description())
            .and_then(|d| d.point_in_time_recovery_status());
        // Archiving needs point-in-time recovery, so every table has it (the pre-built one
        // from resize_old's next run).
        if age >= 0 {
            assert_eq!(pitr, Some(&PointInTimeRecoveryStatus::Enabled), "{name}");
        }
    }
}
