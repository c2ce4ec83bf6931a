//! Archives proven before a deletion, on moto through the tests' AWS-behaviour layer (which
//! lays exports out as AWS does: manifests beside the data). Results are read back from the
//! server (DescribeTable, S3 listings), not from the reports.

use chrono::{Duration, NaiveDate};
use ddb_rollover::Decision;
use ddb_rollover::{DeferralCause, Operation, Outcome, Policy};

use crate::support::days::{at, day_runs, run_at};
use crate::support::ArchiveRig;

const POLICY: &str = r#"
prefix = "arch"
period = "day"
premake = 1

[retention]
archive_after = 1
delete_after = 3
keep_newest = 2
bucket = "archive"
"#;

async fn exists(client: &aws_sdk_dynamodb::Client, table: &str) -> bool {
    testkit::describe_all(client).await.contains_key(table)
}

/// The export folders (`.../AWSDynamoDB/{id}/`) among `keys`, in key order.
fn export_dirs(keys: &[String]) -> Vec<String> {
    let mut dirs: Vec<String> = keys
        .iter()
        .filter_map(|k| {
            let (before, after) = k.split_once("/AWSDynamoDB/")?;
            let id = after.split('/').next()?;
            Some(format!("{before}/AWSDynamoDB/{id}/"))
        })
        .collect();
    dirs.dedup();
    dirs
}

/// DescribeExport of every export of `table`, as an operator would look at them.
async fn describe_exports(client: &aws_sdk_dynamodb::Client, table: &str) {
    let arn = testkit::table_arn(client, table).await;
    let exports = client.list_exports().table_arn(arn).send().await.unwrap();
    for summary in exports.export_summaries() {
        let export = summary.export_arn().expect("an export ARN");
        client.describe_export().export_arn(export).send().await.unwrap();
    }
}

#[tokio::test]
async fn a_delete_waits_while_a_data_file_the_manifest_lists_is_missing() {
    let ArchiveRig {
        server,
        client,
        control,
    } = ArchiveRig::start().await;
    let policy = Policy::from_toml(POLICY).unwrap();
    let first = NaiveDate::from_ymd_opt(2018, 10, 1).unwrap();
    let table = "arch_2018-10-02";

    // Day by day until the table's export is laid out in S3 (it is exported once a day old,
    // after point-in-time recovery is on): manifests beside one data file.
    let mut day = first;
    let objects = loop {
        day_runs(&control, &policy, day).await;
        assert!(
            exists(&client, table).await,
            "{table} missing before its archive was checked"
        );
        day += Duration::days(1);
        let objects = server.list_objects("archive", &format!("ddb-rollover/{table}/"));
        if objects.iter().any(|k| k.ends_with("/manifest-summary.json")) {
            break objects;
        }
        assert!(
            day < first + Duration::days(6),
            "no export manifest for {table}: {objects:?}"
        );
    };
    assert!(
        objects.iter().any(|k| k.ends_with("/manifest-files.json")),
        "{objects:?}"
    );
    let archive_export = export_dirs(&objects);
    assert_eq!(archive_export.len(), 1, "{objects:?}");

    // Past delete_after the table is sealed against writes, then exported again: the deletion
    // relies on that final export. Runs until it has started.
    let final_export = loop {
        day_runs(&control, &policy, day).await;
        day += Duration::days(1);
        let dirs = export_dirs(&server.list_objects("archive", &format!("ddb-rollover/{table}/")));
        if let Some(new) = dirs.into_iter().find(|d| !archive_export.contains(d)) {
            break new;
        }
        assert!(
            exists(&client, table).await,
            "{table} deleted before its final export"
        );
        assert!(day < first + Duration::days(10), "no final export of {table}");
    };
    // AWS writes the manifests when the export completes (the proxy, on the first DescribeExport
    // that says COMPLETED): asked here, so the acts below come before the run that would delete.
    describe_exports(&client, table).await;
    let objects = server.list_objects("archive", &final_export);
    let data: Vec<&String> = objects.iter().filter(|k| k.contains("/data/")).collect();
    assert_eq!(data.len(), 1, "{objects:?}");

    // Someone removes the data file: once the table is due for deletion, runs keep it.
    // Read with the SDK, signed: moto refuses an unsigned GetObject of a key with `//`.
    let s3 = crate::support::aws_clients(server.endpoint()).await.s3;
    let original = s3
        .get_object()
        .bucket("archive")
        .key(data[0])
        .send()
        .await
        .expect("the data file")
        .body
        .collect()
        .await
        .unwrap()
        .into_bytes();
    server.delete_object("archive", data[0]);
    let line = loop {
        let report = day_runs(&control, &policy, day).await;
        day += Duration::days(1);
        if let Some(line) = report.tables.iter().find(|l| {
            l.item.facts.table == table
                && matches!(l.item.decision, Decision::Deferred { .. } | Decision::Delete(_))
        }) {
            break line.clone();
        }
        assert!(
            day < first + Duration::days(9),
            "{table} never due for deletion: {report:#?}"
        );
    };
    assert_eq!(
        line.item.decision,
        Decision::Deferred {
            retry_after: None,
            cause: DeferralCause::ArchiveUnproven
        },
        "{line:#?}"
    );
    assert!(
        line.item.reason.contains(data[0].as_str()),
        "{}",
        line.item.reason
    );
    assert!(
        exists(&client, table).await,
        "{table} deleted without its data file"
    );

    // The file back emptied (PutObject of other bytes: another ETag), then with its bytes but
    // moved to GLACIER (CopyObject): neither is what restore could import, and the table stays.
    let kept_while = |why: &'static str, day: NaiveDate| {
        let (control, policy, client) = (&control, &policy, &client);
        async move {
            let report = day_runs(control, policy, day).await;
            let line = report
                .tables
                .iter()
                .find(|l| l.item.facts.table == table && matches!(l.item.decision, Decision::Deferred { .. }))
                .unwrap_or_else(|| panic!("{why}: {table} not deferred: {report:#?}"));
            assert!(exists(client, table).await, "{why}: {table} deleted");
            line.item.reason.clone()
        }
    };
    server.put_object("archive", data[0], b"");
    let reason = kept_while("emptied", day).await;
    assert!(reason.contains("changed since the export"), "{reason}");
    day += Duration::days(1);
    server.put_object("archive", data[0], &original);
    server.set_storage_class("archive", data[0], "GLACIER");
    let reason = kept_while("GLACIER", day).await;
    assert!(reason.contains("storage class GLACIER"), "{reason}");
    day += Duration::days(1);

    // The file back as it was: the next run proves the archive and deletes the table, naming
    // the item count on its line.
    server.put_object("archive", data[0], &original);
    let deleted = day_runs(&control, &policy, day).await;
    let line = deleted
        .lines_with(Outcome::Done)
        .find(|l| l.item.facts.table == table && l.item.decision.action() == "delete")
        .unwrap_or_else(|| panic!("{table} not deleted: {deleted:#?}"));
    assert!(
        line.item.reason.contains("archive proven") && line.item.reason.contains("item(s)"),
        "{}",
        line.item.reason
    );
    assert!(!exists(&client, table).await, "{table} still there");
}

/// Runs the days from `day` until `table`'s line is a deferral or a deletion (it is due for
/// deletion once sealed and exported after the seal), checking it exists until then; returns
/// that line and the next day.
async fn until_due(
    rig: &ArchiveRig,
    policy: &Policy,
    table: &str,
    mut day: NaiveDate,
) -> (ddb_rollover::TableLine, NaiveDate) {
    let last = day + Duration::days(10);
    loop {
        let report = day_runs(&rig.control, policy, day).await;
        day += Duration::days(1);
        if let Some(line) = report.tables.iter().find(|l| {
            l.item.facts.table == table
                && matches!(l.item.decision, Decision::Deferred { .. } | Decision::Delete(_))
        }) {
            return (line.clone(), day);
        }
        assert!(exists(&rig.client, table).await, "{table} gone before it was due");
        assert!(day < last, "{table} never due for deletion: {report:#?}");
    }
}

/// Asserts that `line` keeps its table for an unproven archive, and returns its reason.
fn kept_unproven(line: &ddb_rollover::TableLine) -> String {
    assert_eq!(
        line.item.decision,
        Decision::Deferred {
            retry_after: None,
            cause: DeferralCause::ArchiveUnproven
        },
        "{line:#?}"
    );
    line.item.reason.clone()
}

/// The next day's runs delete `table`: its line says so, and moto no longer has it.
async fn deleted_on(rig: &ArchiveRig, policy: &Policy, table: &str, day: NaiveDate) {
    let report = day_runs(&rig.control, policy, day).await;
    assert!(
        report
            .lines_with(Outcome::Done)
            .any(|l| l.item.facts.table == table && l.item.decision.action() == "delete"),
        "{table} not deleted: {report:#?}"
    );
    assert!(!exists(&rig.client, table).await, "{table} still there");
}

/// Issue 37, finding 4: a lifecycle rule that expires the archive prefix (S3 says so in
/// `x-amz-expiration` on each read of its objects) keeps the table: the archive would not
/// outlive it. Without the rule the archive is proven and the table deleted.
#[tokio::test]
async fn a_table_is_kept_while_s3_will_expire_its_archive() {
    let rig = ArchiveRig::start().await;
    let policy = Policy::from_toml(POLICY).unwrap();
    let table = "arch_2018-10-02";
    rig.server
        .put_lifecycle_expiration("archive", "tidy exports", "ddb-rollover/", 30);

    let first = NaiveDate::from_ymd_opt(2018, 10, 1).unwrap();
    let (line, day) = until_due(&rig, &policy, table, first).await;
    let reason = kept_unproven(&line);
    for part in [
        "s3://archive/ddb-rollover/arch_2018-10-02/",
        "\"tidy exports\"",
        "GMT",
        "expire",
    ] {
        assert!(reason.contains(part), "{part:?} not in: {reason}");
    }
    assert!(
        exists(&rig.client, table).await,
        "{table} deleted on an expiring archive"
    );

    rig.server.delete_lifecycle("archive");
    deleted_on(&rig, &policy, table, day).await;
}

/// Issue 37, finding 9: once the archive bucket's name belongs to another account, that
/// account's answers prove nothing (every read expects the table's account as the bucket's
/// owner, and S3 refuses it: a failed read, which fails the run); the bucket back with the
/// account, the archive is proven and the table deleted.
#[tokio::test]
async fn a_table_is_kept_while_its_archive_bucket_has_another_owner() {
    let rig = ArchiveRig::start().await;
    let policy = Policy::from_toml(POLICY).unwrap();
    let table = "arch_2018-10-02";
    rig.server.set_bucket_owner("archive", "210987654321");

    // Issue 38: S3's refusal is a read that failed, not only an unproven archive: each run
    // that needs the proof keeps the tables and fails, naming the read, the tables and the
    // account, until the bucket is the account's again.
    let mut day = NaiveDate::from_ymd_opt(2018, 10, 1).unwrap();
    let line = loop {
        run_at(&rig.control, &policy, Operation::CreateNew, at(day, "23:45:00")).await;
        day += Duration::days(1);
        let report = run_at(&rig.control, &policy, Operation::ResizeOld, at(day, "00:15:00")).await;
        if !report.succeeded() {
            let failed: Vec<_> = report.lines_with(Outcome::Failed).collect();
            assert_eq!(failed.len(), 1, "{failed:#?}");
            assert!(
                failed[0].item.reason.starts_with("GetObject failed for"),
                "{failed:#?}"
            );
            let error = failed[0].error.as_deref().unwrap_or_default();
            for part in [testkit::MOTO_ACCOUNT, "AccessDenied", "s3://archive/"] {
                assert!(error.contains(part), "{part:?} not in: {error}");
            }
        }
        let deferred = report
            .tables
            .iter()
            .find(|l| l.item.facts.table == table && matches!(l.item.decision, Decision::Deferred { .. }));
        if let Some(line) = deferred {
            assert!(
                !report.succeeded(),
                "a refused read, and the run succeeded: {report:#?}"
            );
            break line.clone();
        }
        assert!(
            day < NaiveDate::from_ymd_opt(2018, 10, 10).unwrap(),
            "{table} never due: {report:#?}"
        );
    };
    let reason = kept_unproven(&line);
    for part in [testkit::MOTO_ACCOUNT, "AccessDenied", "s3://archive/"] {
        assert!(reason.contains(part), "{part:?} not in: {reason}");
    }
    assert!(
        exists(&rig.client, table).await,
        "{table} deleted on another owner's bucket"
    );

    rig.server.set_bucket_owner("archive", testkit::MOTO_ACCOUNT);
    deleted_on(&rig, &policy, table, day).await;
}
