//! `restore` against the in-memory account (`crates/fake-aws`, whose exports leave AWS's
//! manifests in its S3): what it refuses before any change, and a period archived, deleted and
//! brought back with our tags, its phase's capacity and its keep; what S3 acts on the archive
//! do to the proof (a file overwritten, moved to GLACIER, listed outside `data/`, another
//! table's export beside ours) and an import short of the archive's count. The end-to-end run through
//! the binary, the application crate and moto is the system test `cli::restore`.

use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use ddb_rollover::policy::{Billing, Capacity};
use ddb_rollover::policy::{TAG_FAMILY, TAG_KEEP_UNTIL};
use ddb_rollover::simulation;
use ddb_rollover::TableLine;
use ddb_rollover::{restore, Restoration, RestoreOptions, RestoreReport};
use ddb_rollover::{run, ApplyOptions, Operation, Outcome, Policy};
use fake_aws::FakeAws;

use crate::common::daily::*;

async fn restore_at(
    fake: &FakeAws,
    policy: &Policy,
    when: DateTime<Utc>,
    label: &str,
    dry_run: bool,
) -> RestoreReport {
    fake.set_now(when);
    let slot = policy.calendar().parse(label).unwrap();
    let options = RestoreOptions {
        keep: Duration::days(3),
        dry_run,
        wait: StdDuration::from_secs(3600),
    };
    restore(
        &fake.operator(),
        policy,
        &simulation(policy, &[Operation::CreateNew], when).unwrap(),
        &[slot],
        options,
    )
    .await
    .unwrap()
}

fn reasons(report: &RestoreReport) -> String {
    match &report.tables[0].action.restoration {
        Restoration::Refused { reasons } => reasons.join("; "),
        other => panic!("not refused: {other:?}"),
    }
}

#[tokio::test]
async fn refusals_come_before_any_change() {
    let policy = policy();
    let fake = account();
    day_runs(&fake, &policy, day(1)).await;
    let before = fake.state().tables.len();
    // The current period, a period with a table, a period never archived.
    let now = at(day(2), "12:00:00");
    let current = restore_at(&fake, &policy, now, "2018-10-02", false).await;
    assert!(reasons(&current).contains("current and future"), "{current:#?}");
    let exists = restore_at(&fake, &policy, now, "2018-10-01", false).await;
    assert!(reasons(&exists).contains("the table exists"), "{exists:#?}");
    let never = restore_at(&fake, &policy, now, "2018-09-01", false).await;
    assert!(
        reasons(&never).contains("holds no receipt of a deletion of back_2018-09-01"),
        "{never:#?}"
    );
    // Without archiving there is nothing to restore from.
    let plain = Policy::from_toml("prefix = \"back\"\nperiod = \"day\"\n").unwrap();
    let none = restore_at(&fake, &plain, now, "2018-09-01", false).await;
    assert!(reasons(&none).contains("archives nothing"), "{none:#?}");
    assert!(!none.succeeded());
    assert_eq!(
        fake.state().tables.len(),
        before,
        "a refused restore created a table"
    );
}

#[tokio::test]
async fn an_archived_and_deleted_period_comes_back_ours_and_kept() {
    let (policy, fake, mut d) = archived_and_deleted().await;
    let now = at(d, "12:00:00");
    let dry = restore_at(&fake, &policy, now, "2018-10-02", true).await;
    assert_eq!(dry.tables[0].outcome.as_str(), "planned", "{dry:#?}");
    assert!(
        !fake.state().tables.contains_key("back_2018-10-02"),
        "a dry run imported"
    );

    let done = restore_at(&fake, &policy, now, "2018-10-02", false).await;
    assert_eq!(done.tables[0].outcome.as_str(), "done", "{done:#?}");
    let state = fake.state();
    let table = &state.tables["back_2018-10-02"];
    assert_eq!(
        table.billing,
        Billing::Provisioned(Capacity { read: 5, write: 1 })
    );
    assert_eq!(table.tags.get(TAG_FAMILY).map(String::as_str), Some("back"));
    let keep_until = table.tags.get(TAG_KEEP_UNTIL).expect("keep-until");
    assert_eq!(keep_until, &(done.at + Duration::days(3)).to_rfc3339());

    // Kept while the keep runs, though past delete_after; archived again and deleted after.
    for _ in 0..2 {
        day_runs(&fake, &policy, d).await;
        d += Duration::days(1);
        assert!(
            fake.state().tables.contains_key("back_2018-10-02"),
            "deleted inside its keep"
        );
    }
    for _ in 0..5 {
        day_runs(&fake, &policy, d).await;
        d += Duration::days(1);
    }
    assert!(
        !fake.state().tables.contains_key("back_2018-10-02"),
        "kept past its keep"
    );
    let exports = fake
        .state()
        .exports
        .values()
        .filter(|e| e.table == "back_2018-10-02")
        .count();
    // Each incarnation: its archive export, then its final export after the seal.
    assert_eq!(exports, 4, "exported again before the second deletion");
}

/// The newest export of [`TABLE`] in the fake: once the table is deleted, the final export
/// after its seal, the one the deletion relied on.
fn our_export(fake: &FakeAws) -> fake_aws::Export {
    let state = fake.state();
    state
        .exports
        .values()
        .filter(|e| e.table == TABLE)
        .max_by_key(|e| e.export_time)
        .expect("an export")
        .clone()
}

/// How many exports of [`TABLE`] have completed.
fn completed_exports(fake: &FakeAws) -> usize {
    fake.state()
        .exports
        .values()
        .filter(|e| e.table == TABLE && e.status == ddb_rollover::table::ExportStatus::Completed)
        .count()
}

#[tokio::test]
async fn another_tables_export_under_the_periods_prefix_is_not_restored() {
    let (policy, fake, d) = archived_and_deleted().await;
    let ours = our_export(&fake);
    // A complete, newer export of another table, under our period's prefix.
    let foreign = fake.foreign_place_export(
        "mallory",
        "archive",
        &format!("ddb-rollover/{TABLE}/"),
        "other",
        9,
    );
    let done = restore_at(&fake, &policy, at(d, "12:00:00"), "2018-10-02", false).await;
    match &done.tables[0].action.restoration {
        Restoration::Import { export, items, .. } => {
            assert_eq!((export, *items), (&ours.arn, 0), "{done:#?}");
        }
        other => panic!("not imported: {other:?}"),
    }
    assert_eq!(done.tables[0].outcome.as_str(), "done", "{done:#?}");

    // With our export's manifest gone, nothing else under the prefix is taken for it: refused,
    // named, and nothing is created.
    fake.foreign_delete_table("operator", TABLE).unwrap();
    fake.advance(Duration::hours(1));
    for export in fake.state().exports.values().filter(|e| e.table == TABLE) {
        fake.foreign_delete_object("mallory", "archive", &export.manifest_key());
    }
    let refused = restore_at(&fake, &policy, at(d, "14:00:00"), "2018-10-02", false).await;
    let why = reasons(&refused);
    assert!(
        why.contains("not as recorded")
            && why.contains("manifest")
            && why.contains("is missing")
            && !why.contains(&foreign),
        "{why}"
    );
    assert!(!fake.state().tables.contains_key(TABLE));
}

/// A consistent forgery after the deletion: a data file rewritten, and the file list and the
/// summary rewritten to match it (the export's own proof would take it). The receipt recorded
/// each file's ETag and size as proven before the deletion: refused before any import, named.
#[tokio::test]
async fn a_forged_archive_with_a_matching_file_list_is_refused_by_the_receipt() {
    let (policy, fake, d) = archived_and_deleted().await;
    let export = our_export(&fake);
    let (first, _) = &export.files[0];
    let forged = [fake_aws::data_file(1), b"not an item\n".to_vec()].concat();
    let object = fake_aws::S3Object::new(forged.clone());
    fake.foreign_put_object("mallory", "archive", first, &forged);
    let mut lines = String::new();
    for (n, (key, _)) in export.files.iter().enumerate() {
        let file = fake.with_world(|w| w.s3[&("archive".to_string(), key.clone())].clone());
        let (items, file) = if n == 0 { (2, object.clone()) } else { (0, file) };
        lines.push_str(&format!(
            "{{\"itemCount\":{items},\"md5Checksum\":\"{}\",\"etag\":\"{}\",\"dataFileS3Key\":\"{key}\"}}\n",
            file.md5_checksum(),
            file.etag()
        ));
    }
    fake.foreign_put_object("mallory", "archive", &export.files_key(), lines.as_bytes());
    let summary = fake.with_world(|w| {
        w.s3[&("archive".to_string(), export.manifest_key())]
            .bytes
            .clone()
    });
    let summary = String::from_utf8(summary)
        .unwrap()
        .replace("\"itemCount\":0", "\"itemCount\":2");
    fake.foreign_put_object("mallory", "archive", &export.manifest_key(), summary.as_bytes());

    let report = restore_at(&fake, &policy, at(d, "12:00:00"), "2018-10-02", false).await;
    assert!(!report.succeeded());
    let why = reasons(&report);
    assert!(
        why.contains("not as recorded")
            && why.contains(first.as_str())
            && why.contains("changed since the deletion"),
        "{why}"
    );
    assert!(
        !fake.state().tables.contains_key(TABLE),
        "imported a forged archive"
    );
}

#[tokio::test]
async fn a_data_file_changed_after_the_export_keeps_the_table() {
    let policy = policy();
    for act in ["overwrite", "glacier", "repoint"] {
        let fake = account();
        // Runs until the final export after the seal is complete (the archive export at age 1,
        // then, past delete_after, the seal and the export the deletion relies on).
        // The export completes between create_new (23:45) and the resize_old that would delete
        // on it (00:15): the act comes in between.
        let mut d = day(1);
        loop {
            one_run(&fake, &policy, Operation::CreateNew, at(d, "23:45:00")).await;
            if completed_exports(&fake) >= 2 {
                break;
            }
            resize_old_after(&fake, &policy, d).await;
            d += Duration::days(1);
            assert!(d < day(10), "never exported after the seal");
        }
        assert!(fake.state().tables.contains_key(TABLE), "deleted before the act");
        let export = our_export(&fake);
        let (first, _) = &export.files[0];
        match act {
            "overwrite" => fake.foreign_put_object("mallory", "archive", first, b"{\"Item\":{}}\n"),
            "glacier" => assert!(fake.foreign_set_storage_class("mallory", "archive", first, "GLACIER")),
            _ => assert!(fake.foreign_repoint_file_list("mallory", "archive", &export)),
        }
        resize_old_after(&fake, &policy, d).await;
        for _ in 0..6 {
            d += Duration::days(1);
            day_runs(&fake, &policy, d).await;
        }
        assert!(
            fake.state().tables.contains_key(TABLE),
            "{act}: deleted on an archive restore could not read"
        );
    }
}

/// Runs from 10-01 until the final export after the seal of [`TABLE`] is complete, stopping
/// between the create_new that saw it complete (23:45) and the resize_old that would delete on
/// it (00:15): the day whose resize_old comes next.
async fn until_final_export(fake: &FakeAws, policy: &Policy) -> NaiveDate {
    let mut d = day(1);
    loop {
        one_run(fake, policy, Operation::CreateNew, at(d, "23:45:00")).await;
        if completed_exports(fake) >= 2 {
            return d;
        }
        resize_old_after(fake, policy, d).await;
        d += Duration::days(1);
        assert!(d < day(10), "never exported after the seal");
    }
}

/// resize_old after `d`, then the days after it: `TABLE` must still be there.
async fn kept_for_days(fake: &FakeAws, policy: &Policy, mut d: NaiveDate, why: &str) -> NaiveDate {
    resize_old_after(fake, policy, d).await;
    for _ in 0..3 {
        d += Duration::days(1);
        day_runs(fake, policy, d).await;
        assert!(fake.state().tables.contains_key(TABLE), "{why}: deleted");
    }
    d + Duration::days(1)
}

/// Whether [`TABLE`] was deleted (gone, or DELETING): only our runs delete in these tests.
fn deleted(fake: &FakeAws) -> bool {
    let state = fake.state();
    let deleting = state
        .tables
        .get(TABLE)
        .map(|t| t.status == fake_aws::Status::Deleting);
    deleting.unwrap_or(true)
}

/// The reason of [`TABLE`]'s deferral in a dry run of resize_old now.
async fn unproven_reason(fake: &FakeAws, policy: &Policy) -> String {
    let when = fake.now();
    let report = run(
        fake,
        policy,
        Operation::ResizeOld,
        &simulation(policy, &[Operation::ResizeOld], when).unwrap(),
        ApplyOptions {
            dry_run: true,
            ..ApplyOptions::default()
        },
    )
    .await
    .unwrap();
    let line = report
        .tables
        .iter()
        .find(|l| {
            l.item.facts.table == TABLE && matches!(l.item.decision, ddb_rollover::Decision::Deferred { .. })
        })
        .unwrap_or_else(|| panic!("{TABLE} not deferred: {report:#?}"));
    assert!(line.item.reason.contains("not proven"), "{line:#?}");
    line.item.reason.clone()
}

/// Issue 37, finding 4: a lifecycle rule on the archive prefix expires the archive (S3 says so
/// on each read): the table is kept, the reason naming the object, the date and the rule; the
/// rule gone, the table is deleted.
#[tokio::test]
async fn an_archive_s3_will_expire_keeps_the_table() {
    let policy = policy();
    let fake = account();
    let d = until_final_export(&fake, &policy).await;
    fake.foreign_put_lifecycle_expiration("tidy", "archive", "tidy exports", "ddb-rollover/", 30);
    let d = kept_for_days(&fake, &policy, d, "an expiring archive").await;
    let reason = unproven_reason(&fake, &policy).await;
    for part in [
        "s3://archive/ddb-rollover/back_2018-10-02/",
        "GMT",
        "\"tidy exports\"",
        "expire",
    ] {
        assert!(reason.contains(part), "{part:?} not in: {reason}");
    }
    fake.foreign_delete_lifecycle("tidy", "archive");
    day_runs(&fake, &policy, d).await;
    assert!(deleted(&fake), "kept on a lasting archive");
}

/// Issue 37, finding 9: the archive bucket's name taken by another account (which copied the
/// objects back as they were) proves nothing: every read expects the table's account as the
/// bucket's owner; back with the account, the table is deleted. An export made meanwhile names
/// the owner too (S3BucketOwner), so it fails instead of writing into the other account's
/// bucket.
#[tokio::test]
async fn an_archive_bucket_of_another_owner_keeps_the_table() {
    let policy = policy();
    let fake = account();
    let mut d = until_final_export(&fake, &policy).await;
    fake.foreign_bucket_owner("mallory", "archive", "210987654321");
    // Issue 38: a read S3 refused is no evidence either way: each resize_old keeps the table
    // and fails, once, naming the read, the table and what S3 said.
    for _ in 0..3 {
        let report = run_at(
            &fake,
            &policy,
            Operation::ResizeOld,
            at(d + Duration::days(1), "00:15:00"),
        )
        .await;
        assert!(
            fake.state().tables.contains_key(TABLE),
            "another owner's bucket: deleted"
        );
        let failed: Vec<&TableLine> = report.lines_with(Outcome::Failed).collect();
        assert_eq!(failed.len(), 1, "{report:#?}");
        let reason = &failed[0].item.reason;
        assert!(
            reason.starts_with("GetObject failed for") && reason.contains(TABLE),
            "{reason}"
        );
        let error = failed[0].error.as_deref().unwrap_or_default();
        assert!(error.contains("not owned by account 123456789012"), "{error}");
        d += Duration::days(1);
        one_run(&fake, &policy, Operation::CreateNew, at(d, "23:45:00")).await;
    }
    let reason = unproven_reason(&fake, &policy).await;
    for part in ["123456789012", "AccessDenied", "s3://archive/"] {
        assert!(reason.contains(part), "{part:?} not in: {reason}");
    }
    fake.foreign_bucket_owner("us", "archive", fake_aws::ACCOUNT_ID);
    day_runs(&fake, &policy, d).await;
    assert!(deleted(&fake), "kept on a proven archive");

    // The bucket taken before an export: the export names the owner, and fails.
    let fake = account();
    fake.foreign_bucket_owner("mallory", "archive", "210987654321");
    let mut d = day(1);
    for _ in 0..4 {
        day_runs(&fake, &policy, d).await;
        d += Duration::days(1);
    }
    let state = fake.state();
    let written: Vec<&String> = state.s3.keys().map(|(_, key)| key).collect();
    assert!(
        written.is_empty(),
        "exported into another owner's bucket: {written:?}"
    );
    assert!(state
        .exports
        .values()
        .any(|e| e.failure.as_deref().is_some_and(|f| f.contains("S3BucketOwner"))));
}

/// Restore runs the same proof: an export S3 will expire is refused, and a bucket of another
/// owner answers nothing (403 to every read that expects the deleted table's account): refused,
/// naming the owner it expected, and the run fails; neither is restored.
#[tokio::test]
async fn restore_refuses_an_archive_s3_will_expire_or_another_owner_holds() {
    let (policy, fake, d) = archived_and_deleted().await;
    let now = at(d, "12:00:00");
    fake.foreign_put_lifecycle_expiration("tidy", "archive", "tidy", "ddb-rollover/back_2018-10-02/", 7);
    let expiring = restore_at(&fake, &policy, now, "2018-10-02", false).await;
    assert!(reasons(&expiring).contains("rule \"tidy\""), "{expiring:#?}");
    assert!(!expiring.succeeded());
    fake.foreign_delete_lifecycle("tidy", "archive");
    fake.foreign_bucket_owner("mallory", "archive", "210987654321");
    let foreign = restore_at(&fake, &policy, now, "2018-10-02", false).await;
    assert!(!foreign.succeeded(), "{foreign:#?}");
    assert!(
        reasons(&foreign).contains("not owned by account 123456789012"),
        "{foreign:#?}"
    );
    assert!(
        !fake.state().tables.contains_key(TABLE),
        "restored from an archive that cannot last"
    );
    fake.foreign_bucket_owner("us", "archive", fake_aws::ACCOUNT_ID);
    let done = restore_at(&fake, &policy, now, "2018-10-02", false).await;
    assert_eq!(done.tables[0].outcome.as_str(), "done", "{done:#?}");
}

/// `retention.bucket_owner`, when set, is the owner every restore read expects (else the
/// account of the deleted table's recorded ARN): set to another account, the archive our
/// account holds is not proven, and nothing is imported.
#[tokio::test]
async fn restore_expects_the_bucket_owner_the_policy_names() {
    let (_, fake, d) = archived_and_deleted().await;
    let named = Policy::from_toml(&format!("{POLICY}bucket_owner = \"210987654321\"\n")).unwrap();
    let refused = restore_at(&fake, &named, at(d, "12:00:00"), "2018-10-02", false).await;
    assert!(!refused.succeeded(), "{refused:#?}");
    assert!(reasons(&refused).contains("210987654321"), "{refused:#?}");
    assert!(!fake.state().tables.contains_key(TABLE));
}

/// ImportTable reads the archive after restore's check of it: a data file overwritten while
/// the import runs leaves the imported table unrecorded and
/// marked, and the restore fails, naming the file (hostile read of issue 37, F2: the forged
/// items came back as ours, exit 0).
#[tokio::test]
async fn a_data_file_overwritten_during_the_import_is_not_restored_as_ours() {
    let (policy, fake, d) = archived_and_deleted().await;
    let export = our_export(&fake);
    let (first, _) = export.files[0].clone();
    let key = first.clone();
    // (The fake's import reads the files when it starts; AWS's reads them as it runs.)
    fake.around(fake_aws::Around::After, "ImportTable", TABLE, move |fake| {
        fake.foreign_put_object("mallory", "archive", &key, &fake_aws::data_file(2));
    });
    let report = restore_at(&fake, &policy, at(d, "12:00:00"), "2018-10-02", false).await;
    assert!(!report.succeeded(), "{report:#?}");
    let error = report.tables[0].error.clone().unwrap_or_default();
    assert!(
        error.contains("changed while it was imported") && error.contains(first.as_str()),
        "{error}"
    );
    let ledger = policy.naming().ledger_name();
    let recorded = fake.with_world(|w| {
        w.tables[&ledger]
            .records
            .keys()
            .any(|(_, key)| key == &ddb_rollover::ledger::keys::table(TABLE))
    });
    assert!(!recorded, "the forged import is recorded as ours");
}
