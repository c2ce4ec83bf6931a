//! The table template and retention rules of the planner and `status`, one rule per test, with
//! a fixed clock: resize_old's run just after midnight UTC, 2018-10-26 being the current day.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use ddb_rollover::plan::deferral::DeferralCause;
use ddb_rollover::plan::{plan, plan_run, Decision, Operation, Plan, PlanItem};
use ddb_rollover::policy::settings::Billing;
use ddb_rollover::policy::settings::Capacity;
use ddb_rollover::policy::settings::{Encryption, StreamView};
use ddb_rollover::policy::tags::{
    TAG_ARCHIVED, TAG_EXPORT, TAG_FAMILY, TAG_FINAL_EXPORT, TAG_LAST_DEFERRAL, TAG_PERIOD_END,
    TAG_PERIOD_START, TAG_POLICY_HASH, TAG_SEALED,
};
use ddb_rollover::policy::{Policy, PolicyError};
use ddb_rollover::run::status::{status, TableStatusLine};
use ddb_rollover::table::archive::ArchiveProof;
use ddb_rollover::table::changes::{
    DeleteRequest, ExportRequest, SettingChange, TableSetting, TagChange, TtlChange,
};
use ddb_rollover::table::seal::{ResourcePolicy, SealRecord};
use ddb_rollover::table::{
    ArchiveState, ExportState, ExportStatus, ObservedEncryption, ObservedTable, TableStatus, TtlState,
};

const HOT: Capacity = Capacity {
    read: 300,
    write: 1000,
};
const WARM: Capacity = Capacity { read: 100, write: 1 };
const COLD: Capacity = Capacity { read: 1, write: 1 };

/// One phase at 1 / 1, so an old table's main item is Unchanged and only the rule under test acts.
const ONE_PHASE: &str = "[[phases]]\nmin_age = 0\nread = 1\nwrite = 1\n";

/// Archive at 2 days, delete at 4, keep the newest 2, delete one table per run.
const ARCHIVE: &str = r#"
[retention]
archive_after = 2
delete_after = 4
keep_newest = 2
max_deletes_per_run = 1
bucket = "my-archive"
"#;

/// Every template setting that upkeep restores on an existing table.
const UPKEEP: &str = r#"
[template]
ttl_attribute = "expires_at"
point_in_time_recovery = true
deletion_protection = true
tags = { team = "iot" }
"#;

fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339).unwrap().with_timezone(&Utc)
}

fn now() -> DateTime<Utc> {
    at("2018-10-26T00:15:00Z")
}

/// The day `age` days before the current one.
fn day(age: i64) -> NaiveDate {
    NaiveDate::from_ymd_opt(2018, 10, 26).unwrap() - Duration::days(age)
}

fn name(age: i64) -> String {
    format!("timeseries_{}", day(age))
}

fn policy(toml: &str) -> Policy {
    Policy::from_toml(toml).unwrap_or_else(|e| panic!("{e}"))
}

fn one_phase(rest: &str) -> Policy {
    policy(&format!("{ONE_PHASE}{rest}"))
}

fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Our own tags for the table `age` days old (UTC days).
fn own_tags(policy: &Policy, age: i64) -> BTreeMap<String, String> {
    tags(&[
        (TAG_FAMILY, &policy.prefix),
        (TAG_PERIOD_START, &format!("{}T00:00:00+00:00", day(age))),
        (TAG_PERIOD_END, &format!("{}T00:00:00+00:00", day(age - 1))),
        (TAG_POLICY_HASH, &policy.hash()),
    ])
}

/// A table `age` days old, as `policy` created it and observe() reads it: ACTIVE at 1 / 1, our
/// tags set, point-in-time recovery on.
fn ours(policy: &Policy, age: i64) -> ObservedTable {
    let mut table = ObservedTable::active(&name(age), Billing::Provisioned(COLD));
    table.key = Some(policy.key.clone());
    table.tags = Some(own_tags(policy, age));
    table.point_in_time_recovery = Some(true);
    table.scaling = Some(Vec::new());
    table.resource_policy = Some(ResourcePolicy::default());
    table
}

/// A table `age` days old whose template settings were all read and are all missing.
fn bare(age: i64, capacity: Capacity) -> ObservedTable {
    let mut table = ObservedTable::active(&name(age), Billing::Provisioned(capacity));
    table.key = Some(Policy::default().key);
    table.tags = Some(BTreeMap::new());
    table.ttl = Some(TtlState {
        status: "DISABLED".into(),
        attribute: None,
    });
    table.point_in_time_recovery = Some(false);
    table
}

fn tagged(mut table: ObservedTable, key: &str, value: &str) -> ObservedTable {
    table
        .tags
        .get_or_insert_with(BTreeMap::new)
        .insert(key.into(), value.into());
    table
}

/// Archived, its resource-based policy read (none): due for deletion, it is sealed first.
fn archived(policy: &Policy, age: i64) -> ObservedTable {
    let table = tagged(ours(policy, age), TAG_ARCHIVED, "2018-10-20T03:00:00+00:00");
    let mut table = proven(tagged(table, TAG_EXPORT, "export/01540000000000-abcdef12"), age);
    table.resource_policy = Some(ResourcePolicy::default());
    table
}

/// Archived, sealed against writes a day ago and exported again after the seal (the same
/// export id, so [`proven`]'s proof is the final export's): its final export decides.
fn finally_exported(policy: &Policy, age: i64) -> ObservedTable {
    let table = archived(policy, age);
    let document = ResourcePolicy::default()
        .with_seal(table.arn.as_deref().unwrap())
        .unwrap();
    let record = SealRecord {
        at: now() - Duration::days(1),
        revision: "41".into(),
    };
    let table = tagged(table, TAG_SEALED, &record.tag_value());
    let mut table = tagged(table, TAG_FINAL_EXPORT, "export/01540000000000-abcdef12");
    table.resource_policy = Some(ResourcePolicy {
        document: Some(document),
        revision: Some("41".into()),
    });
    table.final_export = Some(ExportState {
        arn: export_arn(age),
        status: ExportStatus::Completed,
        export_time: Some(now() - Duration::hours(12)),
        end_time: None,
        failure: None,
    });
    table
}

/// The table's archive as a run finds it in S3 when every file the manifest lists is there.
fn proven(mut table: ObservedTable, age: i64) -> ObservedTable {
    table.archive_proof = Some(ArchiveProof::Proven {
        export: export_arn(age),
        bucket: "my-archive".into(),
        manifest: format!(
            "ddb-rollover/{}/AWSDynamoDB/01540000000000-abcdef12/manifest-summary.json",
            table.name
        ),
        items: 42,
        files: 2,
    });
    table
}

fn export_arn(age: i64) -> String {
    format!(
        "arn:aws:dynamodb:us-east-1:123456789012:table/{}/export/01540000000000-abcdef12",
        name(age)
    )
}

/// A table whose export (recorded in its export tag) DescribeExport reports as `status`.
fn exporting(policy: &Policy, age: i64, status: ExportStatus, failure: Option<&str>) -> ObservedTable {
    let mut table = tagged(ours(policy, age), TAG_EXPORT, "export/01540000000000-abcdef12");
    table.export = Some(ExportState {
        arn: export_arn(age),
        status,
        export_time: Some(at("2018-10-25T02:00:00Z")),
        end_time: Some(at("2018-10-25T03:00:00Z")),
        failure: failure.map(str::to_string),
    });
    if status == ExportStatus::Completed {
        table = proven(table, age);
    }
    table
}

/// resize_old's plan, every table's resource-based policy read (none unless the test put one):
/// `seal_rules` plays the policy not read.
fn resize(policy: &Policy, tables: &[ObservedTable]) -> Plan {
    let tables: Vec<ObservedTable> = tables
        .iter()
        .cloned()
        .map(|mut table| {
            table.resource_policy.get_or_insert_with(ResourcePolicy::default);
            table
        })
        .collect();
    plan(policy, now(), &tables, Operation::ResizeOld)
}

fn items<'a>(plan: &'a Plan, table: &str) -> Vec<&'a PlanItem> {
    plan.items.iter().filter(|item| item.table == table).collect()
}

fn decisions(plan: &Plan, table: &str) -> Vec<Decision> {
    items(plan, table)
        .into_iter()
        .map(|i| i.decision.clone())
        .collect()
}

fn actions(plan: &Plan, table: &str) -> Vec<&'static str> {
    items(plan, table)
        .into_iter()
        .map(|i| i.decision.action())
        .collect()
}

/// The table's last item: its retention step, when it has one.
fn last<'a>(plan: &'a Plan, table: &str) -> &'a PlanItem {
    items(plan, table)
        .pop()
        .unwrap_or_else(|| panic!("{table} not in plan: {plan:#?}"))
}

/// The tables with an item of this action, in plan order (oldest first).
fn tables_with(plan: &Plan, action: &str) -> Vec<String> {
    plan.items
        .iter()
        .filter(|item| item.decision.action() == action)
        .map(|item| item.table.clone())
        .collect()
}

fn line<'a>(lines: &'a [TableStatusLine], table: &str) -> &'a TableStatusLine {
    lines
        .iter()
        .find(|l| l.table == table)
        .unwrap_or_else(|| panic!("{table} not in status"))
}

// ---- 1. create_new: the template at CreateTable ----

#[test]
fn created_tables_carry_the_template_and_period_tags_in_the_policy_zone() {
    let policy = policy(
        r#"
        timezone = "Europe/Berlin"
        [template]
        deletion_protection = true
        stream = "new_and_old_images"
        encryption = "customer_managed"
        kms_key = "alias/archive"
        tags = { team = "iot", env = "prod" }
        "#,
    );
    let plan = plan(&policy, at("2018-10-25T12:00:00Z"), &[], Operation::CreateNew);
    let Decision::Create(spec) = &items(&plan, "timeseries_2018-10-26")[0].decision else {
        panic!("{plan:#?}")
    };
    assert_eq!(
        spec.tags,
        tags(&[
            ("env", "prod"),
            ("team", "iot"),
            (TAG_FAMILY, "timeseries"),
            (TAG_PERIOD_START, "2018-10-26T00:00:00+02:00"),
            (TAG_PERIOD_END, "2018-10-27T00:00:00+02:00"),
            (TAG_POLICY_HASH, &policy.hash()),
        ])
    );
    assert!(spec.deletion_protection);
    assert_eq!(spec.stream, Some(StreamView::NewAndOldImages));
    assert_eq!(
        spec.encryption,
        Some(Encryption::CustomerManaged {
            kms_key: "alias/archive".into()
        })
    );
}

#[test]
fn period_tags_take_each_instants_own_offset_across_a_dst_change() {
    let policy = policy("timezone = \"Europe/Berlin\"\npremake = 0");
    let plan = plan(&policy, at("2018-10-28T12:00:00Z"), &[], Operation::CreateNew);
    let Decision::Create(spec) = &items(&plan, "timeseries_2018-10-28")[0].decision else {
        panic!("{plan:#?}")
    };
    assert_eq!(spec.tags[TAG_PERIOD_START], "2018-10-28T00:00:00+02:00");
    assert_eq!(spec.tags[TAG_PERIOD_END], "2018-10-29T00:00:00+01:00");
}

#[test]
fn the_policy_hash_tag_is_16_hex_digits_and_changes_with_the_policy() {
    let a = policy("[template]\ntags = { team = \"iot\" }");
    let b = policy("[template]\ntags = { team = \"web\" }");
    let hash = a.hash();
    assert_eq!(hash.len(), 16, "{hash}");
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit()), "{hash}");
    assert_eq!(hash, a.clone().hash(), "stable");
    assert_ne!(hash, b.hash());
    let plan = plan(&a, now(), &[], Operation::CreateNew);
    let Decision::Create(spec) = &plan.items[0].decision else {
        panic!("{plan:#?}")
    };
    assert_eq!(spec.tags[TAG_POLICY_HASH], hash);
}

#[test]
fn without_a_template_tables_get_dynamodb_defaults_and_only_our_tags() {
    let policy = Policy::default();
    let plan = plan(&policy, now(), &[], Operation::CreateNew);
    let Decision::Create(spec) = &plan.items[0].decision else {
        panic!("{plan:#?}")
    };
    assert!(!spec.deletion_protection);
    assert_eq!((spec.stream, &spec.encryption), (None, &None));
    assert_eq!(spec.tags, own_tags(&policy, 0));
}

// ---- 2. Template upkeep on existing tables ----

#[test]
fn upkeep_restores_tags_ttl_pitr_and_deletion_protection() {
    let policy = policy(UPKEEP);
    let table = bare(3, COLD);
    let arn = table.arn.clone().unwrap();
    let plan = resize(&policy, &[table]);
    // No family tag: the template's tags only; our own are written on our family's tables.
    let want_tags = tags(&[("team", "iot")]);
    let name = name(3);
    assert_eq!(
        decisions(&plan, &name),
        [
            Decision::Unchanged,
            Decision::Tag(TagChange {
                name: name.clone(),
                arn,
                tags: want_tags,
            }),
            Decision::EnableTtl(TtlChange {
                name: name.clone(),
                attribute: "expires_at".into(),
            }),
            Decision::EnablePointInTimeRecovery { name: name.clone() },
            Decision::Configure(SettingChange {
                name: name.clone(),
                setting: TableSetting::DeletionProtection(true),
            }),
        ]
    );
}

#[test]
fn a_setting_change_waits_while_the_main_item_updates_the_table() {
    let policy = policy(UPKEEP);
    let plan = resize(&policy, &[bare(1, HOT)]);
    let items = items(&plan, &name(1));
    assert!(matches!(items[0].decision, Decision::Update(_)), "{items:#?}");
    assert!(!actions(&plan, &name(1)).contains(&"configure"), "{items:#?}");
    let last = items.last().unwrap();
    assert_eq!(
        last.decision,
        Decision::Deferred {
            retry_after: None,
            cause: DeferralCause::OneUpdateAtATime
        }
    );
    assert!(last.reason.contains("deletion protection on"), "{}", last.reason);
    assert!(
        last.reason.contains("one table update at a time"),
        "{}",
        last.reason
    );
}

#[test]
fn our_tags_are_never_rewritten_but_changed_user_tags_are() {
    let policy = policy(UPKEEP);
    let mut table = bare(3, COLD);
    table.tags = Some(tags(&[
        (TAG_PERIOD_START, "2018-10-01T00:00:00+00:00"),
        (TAG_PERIOD_END, "2018-10-02T00:00:00+00:00"),
        (TAG_POLICY_HASH, "0000000000000000"),
        ("team", "web"),
    ]));
    let plan = resize(&policy, &[table]);
    let tag_changes: Vec<_> = decisions(&plan, &name(3))
        .into_iter()
        .filter_map(|d| match d {
            Decision::Tag(change) => Some(change.tags),
            _ => None,
        })
        .collect();
    // The family tag is missing (hand-made, or from before it existed): never written onto an
    // existing table (only CreateTable and `adopt` write it); the user's tag is restored.
    assert_eq!(tag_changes, [tags(&[("team", "iot")])]);
}

#[test]
fn our_period_and_policy_tags_are_restored_on_our_familys_tables_only() {
    let policy = policy(UPKEEP);
    let mut table = bare(3, COLD);
    table.tags = Some(tags(&[(TAG_FAMILY, "timeseries"), ("team", "iot")]));
    let plan = resize(&policy, &[table]);
    let tag_changes: Vec<_> = decisions(&plan, &name(3))
        .into_iter()
        .filter_map(|d| match d {
            Decision::Tag(change) => Some(change.tags),
            _ => None,
        })
        .collect();
    let mut want = own_tags(&policy, 3);
    want.remove(TAG_FAMILY);
    assert_eq!(tag_changes, [want]);
}

#[test]
fn ttl_on_another_attribute_is_left_as_it_is() {
    let policy = policy(UPKEEP);
    let mut table = bare(3, COLD);
    table.ttl = Some(TtlState {
        status: "ENABLED".into(),
        attribute: Some("valid_until".into()),
    });
    let plan = resize(&policy, &[table]);
    assert!(!actions(&plan, &name(3)).contains(&"enable_ttl"), "{plan:#?}");
    let ttl = items(&plan, &name(3))
        .into_iter()
        .find(|i| i.reason.contains("TTL"))
        .unwrap_or_else(|| panic!("no TTL item: {plan:#?}"));
    assert_eq!(ttl.decision, Decision::Unchanged);
    assert!(ttl.reason.contains("\"valid_until\""), "{}", ttl.reason);
}

#[test]
fn a_table_that_is_not_active_gets_no_upkeep() {
    let policy = policy(UPKEEP);
    for status in [TableStatus::Updating, TableStatus::Creating] {
        let mut table = bare(3, COLD);
        table.status = status;
        let plan = resize(&policy, &[table]);
        assert_eq!(actions(&plan, &name(3)), ["deferred"], "{plan:#?}");
    }
}

#[test]
fn settings_the_template_leaves_out_are_not_enforced() {
    let policy = policy("[template]\nttl_attribute = \"expires_at\"");
    let mut table = ours(&policy, 3);
    table.deletion_protection = true;
    table.stream = Some(StreamView::KeysOnly);
    table.encryption = ObservedEncryption::Kms { key_arn: None };
    table.point_in_time_recovery = Some(false);
    table.ttl = Some(TtlState {
        status: "ENABLED".into(),
        attribute: Some("expires_at".into()),
    });
    let plan = resize(&policy, &[table]);
    assert_eq!(decisions(&plan, &name(3)), [Decision::Unchanged]);
}

// ---- 3. Stream ----

#[test]
fn a_stream_with_another_view_is_turned_off_first() {
    let policy = policy("[template]\nstream = \"new_and_old_images\"");
    let mut table = ours(&policy, 3);
    table.stream = Some(StreamView::KeysOnly);
    let plan = resize(&policy, &[table]);
    assert_eq!(
        decisions(&plan, &name(3))[1..],
        [Decision::Configure(SettingChange {
            name: name(3),
            setting: TableSetting::Stream(None),
        })]
    );
}

#[test]
fn a_missing_stream_is_turned_on_with_the_template_view() {
    let policy = policy("[template]\nstream = \"new_and_old_images\"");
    let plan = resize(&policy, &[ours(&policy, 3)]);
    assert_eq!(
        decisions(&plan, &name(3))[1..],
        [Decision::Configure(SettingChange {
            name: name(3),
            setting: TableSetting::Stream(Some(StreamView::NewAndOldImages)),
        })]
    );
}

// ---- 4. Retention ----

#[test]
fn tables_past_archive_after_with_pitr_on_are_exported() {
    let policy = one_phase(ARCHIVE);
    let tables: Vec<_> = (1..=7).map(|age| ours(&policy, age)).collect();
    let plan = resize(&policy, &tables);
    let oldest_first: Vec<_> = (2..=7).rev().map(name).collect();
    assert_eq!(tables_with(&plan, "export"), oldest_first);
    assert_eq!(
        last(&plan, &name(2)).decision,
        Decision::Export(ExportRequest {
            name: name(2),
            table_arn: tables[1].arn.clone().unwrap(),
            bucket: "my-archive".into(),
            prefix: format!("ddb-rollover/{}/", name(2)),
            after_seal: false,
        })
    );
    assert!(tables_with(&plan, "delete").is_empty(), "{plan:#?}");
    let due = last(&plan, &name(5));
    assert!(due.reason.contains("after the seal"), "{}", due.reason);
}

#[test]
fn an_export_waits_for_point_in_time_recovery() {
    let policy = one_phase(ARCHIVE);
    let mut table = ours(&policy, 3);
    table.point_in_time_recovery = Some(false);
    let plan = resize(&policy, &[table, ours(&policy, 1)]);
    assert_eq!(
        actions(&plan, &name(3)),
        ["unchanged", "enable_point_in_time_recovery", "deferred"]
    );
    let waiting = last(&plan, &name(3));
    assert!(
        waiting.reason.contains("point-in-time recovery"),
        "{}",
        waiting.reason
    );
}

#[test]
fn an_export_in_progress_is_left_to_finish() {
    let policy = one_phase(ARCHIVE);
    let plan = resize(&policy, &[exporting(&policy, 3, ExportStatus::InProgress, None)]);
    assert_eq!(actions(&plan, &name(3)), ["unchanged", "unchanged"]);
    assert!(last(&plan, &name(3)).reason.contains("IN_PROGRESS"));
}

#[test]
fn a_failed_export_is_started_again_with_the_failure_in_the_reason() {
    let policy = one_phase(ARCHIVE);
    let table = exporting(
        &policy,
        3,
        ExportStatus::Failed,
        Some("S3NoSuchBucket: The bucket does not exist"),
    );
    let plan = resize(&policy, &[table]);
    let retry = last(&plan, &name(3));
    assert!(matches!(retry.decision, Decision::Export(_)), "{retry:#?}");
    assert!(retry.reason.contains("FAILED"), "{}", retry.reason);
    assert!(retry.reason.contains("S3NoSuchBucket"), "{}", retry.reason);
}

#[test]
fn a_completed_export_is_recorded_and_the_table_sealed_in_the_same_plan() {
    let policy = one_phase(ARCHIVE);
    let mut completed = exporting(&policy, 5, ExportStatus::Completed, None);
    completed.resource_policy = Some(ResourcePolicy::default());
    let tables = [completed, ours(&policy, 1), ours(&policy, 2)];
    let plan = resize(&policy, &tables);
    let decisions = decisions(&plan, &name(5));
    assert!(
        decisions.contains(&Decision::Tag(TagChange {
            name: name(5),
            arn: tables[0].arn.clone().unwrap(),
            tags: tags(&[(TAG_ARCHIVED, "2018-10-25T03:00:00+00:00")]),
        })),
        "{decisions:?}"
    );
    assert!(
        matches!(decisions.last(), Some(Decision::Seal(_))),
        "deleted only after the seal and a final export: {decisions:?}"
    );
}

#[test]
fn a_completed_export_not_yet_due_for_deletion_is_only_recorded() {
    let policy = one_phase(ARCHIVE);
    let plan = resize(&policy, &[exporting(&policy, 3, ExportStatus::Completed, None)]);
    assert_eq!(actions(&plan, &name(3)), ["unchanged", "tag"]);
}

#[test]
fn only_archived_tables_are_deleted_oldest_first_within_the_budget() {
    let policy = one_phase(ARCHIVE);
    let mut tables = vec![ours(&policy, 8)];
    tables.extend((4..=7).map(|age| archived(&policy, age)));
    tables.extend([ours(&policy, 1), ours(&policy, 2)]);
    let plan = resize(&policy, &tables);
    // The oldest first: 10-18, never archived, is sealed, and its final export after the seal
    // is the archive its deletion relies on; the budget (1) is used.
    assert_eq!(tables_with(&plan, "seal"), [name(8)]);
    assert!(tables_with(&plan, "delete").is_empty());
    for age in 4..=7 {
        let waiting = last(&plan, &name(age));
        assert_eq!(
            waiting.decision,
            Decision::Deferred {
                retry_after: None,
                cause: DeferralCause::DeleteBudget
            }
        );
        assert!(
            waiting.reason.contains("max_deletes_per_run"),
            "{}",
            waiting.reason
        );
    }
}

#[test]
fn the_newest_keep_newest_tables_are_never_deleted() {
    let policy = one_phase("[retention]\ndelete_after = 1\nkeep_newest = 3\n");
    let tables: Vec<_> = (1..=4).map(|age| ours(&policy, age)).collect();
    let plan = resize(&policy, &tables);
    assert_eq!(tables_with(&plan, "delete"), [name(4)]);
    for age in 1..=3 {
        let kept = last(&plan, &name(age));
        assert_eq!(kept.decision, Decision::Skipped);
        assert!(kept.reason.contains("keep_newest"), "{}", kept.reason);
    }
}

#[test]
fn current_and_future_tables_are_never_deleted() {
    let policy = one_phase("[retention]\ndelete_after = 1\nkeep_newest = 1\n");
    let tables: Vec<_> = (-2..=2).map(|age| ours(&policy, age)).collect();
    let plan = resize(&policy, &tables);
    assert_eq!(tables_with(&plan, "delete"), [name(2), name(1)]);
    for age in [-1, 0] {
        assert_eq!(actions(&plan, &name(age)), ["skipped"], "{plan:#?}");
    }
}

#[test]
fn delete_lifts_deletion_protection_only_when_the_table_has_it() {
    // The policy asks for it: ours to lift.
    let policy =
        one_phase("[template]\ndeletion_protection = true\n[retention]\ndelete_after = 3\nkeep_newest = 1\n");
    let mut protected = ours(&policy, 3);
    protected.deletion_protection = true;
    let plan = resize(&policy, &[ours(&policy, 1), protected, ours(&policy, 4)]);
    let lift = |age| match &last(&plan, &name(age)).decision {
        Decision::Delete(request) => request.lift_deletion_protection,
        other => panic!("{other:?}"),
    };
    assert!(lift(3));
    assert!(!lift(4));
}

#[test]
fn a_table_being_deleted_gets_no_other_items() {
    let policy = policy(
        "[template]\nttl_attribute = \"expires_at\"\ndeletion_protection = true\n\
         [retention]\ndelete_after = 2\nkeep_newest = 1\n",
    );
    let mut table = tagged(bare(3, HOT), TAG_FAMILY, "timeseries");
    table.deletion_protection = true;
    let plan = resize(&policy, &[table, bare(1, WARM)]);
    assert_eq!(
        decisions(&plan, &name(3)),
        [Decision::Delete(DeleteRequest {
            name: name(3),
            lift_deletion_protection: true,
            archived_by: None,
        })]
    );
}

#[test]
fn create_new_never_exports_or_deletes() {
    let policy = one_phase(ARCHIVE);
    let mut tables: Vec<_> = (-1..=4).map(|age| ours(&policy, age)).collect();
    tables.extend((5..=7).map(|age| archived(&policy, age)));
    let plan = plan(&policy, now(), &tables, Operation::CreateNew);
    assert!(tables_with(&plan, "export").is_empty(), "{plan:#?}");
    assert!(tables_with(&plan, "delete").is_empty(), "{plan:#?}");
}

// ---- 5. Deleting without archiving ----

#[test]
fn delete_after_without_archiving_deletes_without_any_export() {
    let policy = one_phase("[retention]\ndelete_after = 3\n");
    let tables: Vec<_> = (1..=6).map(|age| ours(&policy, age)).collect();
    let plan = resize(&policy, &tables);
    assert_eq!(tables_with(&plan, "delete"), [name(6), name(5), name(4)]);
    assert!(tables_with(&plan, "export").is_empty(), "{plan:#?}");
    assert_eq!(
        last(&plan, &name(6)).decision,
        Decision::Delete(DeleteRequest {
            name: name(6),
            lift_deletion_protection: false,
            archived_by: None,
        })
    );
}

// ---- 6. Age from tags ----

#[test]
fn a_table_carrying_period_tags_is_owned_and_aged_by_its_period_end() {
    let policy = policy(&format!(
        "period = \"hour\"\n{ONE_PHASE}[retention]\ndelete_after = 48\nkeep_newest = 1\n"
    ));
    let current = ObservedTable::active("timeseries_2018-10-26T00", Billing::Provisioned(COLD));
    let mut daily = ObservedTable::active("timeseries_2018-10-20", Billing::Provisioned(COLD));
    // As a run reads a table due for deletion: its key, and the scalable targets (none).
    daily.key = Some(policy.key.clone());
    daily.scaling = Some(Vec::new());
    let untagged = resize(&policy, &[daily.clone(), current.clone()]);
    assert_eq!(decisions(&untagged, "timeseries_2018-10-20"), [Decision::Foreign]);

    let daily = tagged(
        tagged(daily, TAG_PERIOD_START, "2018-10-20T00:00:00+00:00"),
        TAG_PERIOD_END,
        "2018-10-21T00:00:00+00:00",
    );
    let plan = resize(&policy, &[daily.clone(), current.clone()]);
    let items = items(&plan, "timeseries_2018-10-20");
    // The last hour of 2018-10-20 is 5 days and 1 hour before the current hour.
    assert_eq!(items[0].age, Some(121), "{items:#?}");
    // Made before the family tag existed: managed by its period tags, but no run writes the
    // family tag onto it (only CreateTable and `adopt` do), so retention keeps it, saying why.
    let steps = decisions(&plan, "timeseries_2018-10-20");
    assert!(
        !steps
            .iter()
            .any(|d| matches!(d, Decision::Tag(change) if change.tags.contains_key(TAG_FAMILY))),
        "{steps:#?}"
    );
    assert_eq!(steps.last(), Some(&Decision::Skipped), "{steps:#?}");
    assert!(
        last(&plan, "timeseries_2018-10-20")
            .reason
            .contains("no ddb-rollover:family tag"),
        "{:#?}",
        last(&plan, "timeseries_2018-10-20")
    );
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.contains("ddb-rollover adopt") && w.contains("timeseries_2018-10-20")),
        "{:#?}",
        plan.warnings
    );

    // Adopted (or made by this family): deleted.
    let daily = tagged(daily, TAG_FAMILY, "timeseries");
    let plan = resize(&policy, &[daily, current]);
    assert_eq!(
        decisions(&plan, "timeseries_2018-10-20"),
        [Decision::Delete(DeleteRequest {
            name: "timeseries_2018-10-20".into(),
            lift_deletion_protection: false,
            archived_by: None,
        })]
    );
}

// ---- 7. status ----

#[test]
fn status_reports_each_archive_state() {
    let policy = one_phase(ARCHIVE);
    let tables = [
        ours(&policy, 1),
        ours(&policy, 3),
        exporting(&policy, 4, ExportStatus::InProgress, None),
        archived(&policy, 5),
    ];
    let report = status(&policy, now(), &tables);
    let archive = |age| line(&report.tables, &name(age)).archive.clone().unwrap();
    // Not started: due in two days, and due since yesterday.
    assert_eq!(archive(1).state, ArchiveState::NotStarted);
    assert_eq!(archive(1).due, at("2018-10-27T00:00:00Z"));
    assert_eq!(archive(3).state, ArchiveState::NotStarted);
    assert_eq!(archive(3).due, at("2018-10-25T00:00:00Z"));
    match archive(4).state {
        ArchiveState::InProgress { export } => {
            assert!(export.ends_with("/export/01540000000000-abcdef12"), "{export}")
        }
        other => panic!("expected in progress, got {other:?}"),
    }
    assert!(matches!(archive(5).state, ArchiveState::Completed { .. }));
    // The JSON names the state and keeps the due date beside it.
    let json = serde_json::to_value(archive(4)).unwrap();
    assert_eq!(json["state"], "in_progress");
    assert_eq!(json["due"], "2018-10-24T00:00:00Z");
}

#[test]
fn status_reports_when_deletion_is_due() {
    let policy = one_phase(ARCHIVE);
    let report = status(&policy, now(), &[ours(&policy, 1)]);
    assert_eq!(
        line(&report.tables, &name(1)).delete_due,
        Some(at("2018-10-29T00:00:00Z"))
    );
}

#[test]
fn status_reports_the_last_deferral_from_its_tag() {
    let policy = Policy::default();
    let deferral = "2018-10-25T00:15:00+00:00 update: LimitExceededException";
    let table = tagged(ours(&policy, 1), TAG_LAST_DEFERRAL, deferral);
    let report = status(&policy, now(), &[table, ours(&policy, 2)]);
    assert_eq!(
        line(&report.tables, &name(1)).last_deferral.as_deref(),
        Some(deferral)
    );
    assert_eq!(line(&report.tables, &name(2)).last_deferral, None);
}

#[test]
fn status_lists_upkeep_and_retention_after_the_main_change() {
    let policy = one_phase(ARCHIVE);
    let mut table = ours(&policy, 3);
    table.point_in_time_recovery = Some(false);
    let report = status(&policy, now(), &[table]);
    let line = line(&report.tables, &name(3));
    assert_eq!(
        line.resize_old.as_ref().map(|n| &n.decision),
        Some(&Decision::Unchanged)
    );
    let other: Vec<_> = line
        .other_changes
        .iter()
        .map(|c| (c.operation, c.decision.action()))
        .collect();
    assert_eq!(
        other,
        [
            (Operation::ResizeOld, "enable_point_in_time_recovery"),
            (Operation::ResizeOld, "deferred"),
        ]
    );
}

/// Two steps can share a decision (both wait, `Deferred`) but not a reason: each is listed.
#[test]
fn status_lists_every_deferred_step_with_its_own_reason() {
    let policy = policy(&format!("[template]\ndeletion_protection = true\n{ARCHIVE}"));
    let mut table = ours(&policy, 3);
    table.billing = Billing::Provisioned(HOT);
    table.point_in_time_recovery = Some(false);
    let plan = resize(&policy, std::slice::from_ref(&table));
    assert_eq!(
        actions(&plan, &name(3)),
        ["update", "enable_point_in_time_recovery", "deferred", "deferred"]
    );
    let report = status(&policy, now(), &[table]);
    let other: Vec<_> = line(&report.tables, &name(3))
        .other_changes
        .iter()
        .map(|c| c.decision.action())
        .collect();
    assert_eq!(other, ["enable_point_in_time_recovery", "deferred", "deferred"]);
}

/// status() is built from the planner, so a table the planner ages by its tags has a delete time.
#[test]
fn status_ages_a_tag_owned_table_by_its_tags_too() {
    let policy = policy(&format!(
        "period = \"hour\"\n{ONE_PHASE}[retention]\ndelete_after = 48\nkeep_newest = 1\n"
    ));
    let daily = tagged(
        tagged(
            ObservedTable::active("timeseries_2018-10-20", Billing::Provisioned(COLD)),
            TAG_PERIOD_START,
            "2018-10-20T00:00:00+00:00",
        ),
        TAG_PERIOD_END,
        "2018-10-21T00:00:00+00:00",
    );
    let report = status(&policy, now(), &[daily]);
    // Its last hour, 2018-10-20T23, turns 48 hours old at 2018-10-22T23:00.
    assert_eq!(
        line(&report.tables, "timeseries_2018-10-20").delete_due,
        Some(at("2018-10-22T23:00:00Z"))
    );
}

// ---- 8. Policy validation ----

fn invalid_fields(toml: &str) -> Vec<String> {
    match Policy::from_toml(toml) {
        Err(PolicyError::Invalid(fields)) => fields.into_iter().map(|f| f.field).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[test]
fn each_bad_template_field_is_named() {
    assert_eq!(
        invalid_fields("[template]\nstream = \"all\""),
        ["template.stream"]
    );
    assert_eq!(
        invalid_fields("[template]\ntags = { x = \"a|b\" }"),
        ["template.tags.x"]
    );
    assert_eq!(
        invalid_fields("[template]\nencryption = \"customer_managed\""),
        ["template.kms_key"]
    );
}

#[test]
fn each_bad_retention_field_is_named() {
    assert_eq!(
        invalid_fields("[retention]\narchive_after = 2"),
        ["retention.bucket"]
    );
    for delete_after in [3, 4] {
        assert_eq!(
            invalid_fields(&format!(
                "[retention]\narchive_after = 4\ndelete_after = {delete_after}\nbucket = \"my-archive\""
            )),
            ["retention.delete_after"]
        );
    }
}

#[test]
fn archiving_with_point_in_time_recovery_turned_off_is_refused() {
    assert_eq!(
        invalid_fields(
            "[template]\npoint_in_time_recovery = false\n\
             [retention]\narchive_after = 2\nbucket = \"my-archive\""
        ),
        ["template.point_in_time_recovery"]
    );
}

#[test]
fn json_null_leaves_optional_fields_unset() {
    let json = r#"{
        "template": {"ttl_attribute": null, "point_in_time_recovery": null, "deletion_protection": null,
                     "stream": null, "encryption": null, "kms_key": null, "tags": null},
        "retention": {"archive_after": null, "bucket": null, "prefix": null, "delete_after": 3,
                      "max_deletes_per_run": null, "keep_newest": null}
    }"#;
    let policy = Policy::from_json(json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        policy,
        Policy::from_toml("[retention]\ndelete_after = 3").unwrap()
    );
    let nulls = Policy::from_json(r#"{"template": null, "retention": null}"#).unwrap();
    assert_eq!(nulls, Policy::default());
}

// ---- 7. Ownership and retention ----

#[test]
fn retention_never_deletes_a_table_whose_key_is_not_the_policys_even_when_tagged_ours() {
    let policy = one_phase("[retention]\ndelete_after = 3\n");
    let other_key = ddb_rollover::policy::settings::KeySchema {
        partition: ddb_rollover::policy::settings::KeyAttribute {
            name: "id".into(),
            kind: ddb_rollover::policy::settings::AttributeKind::S,
        },
        sort: None,
    };
    let mut changed_key = ours(&policy, 6);
    changed_key.key = Some(other_key);
    let mut same_key = ours(&policy, 5);
    same_key.key = Some(policy.key.clone());
    let mut tables = vec![changed_key, same_key];
    tables.extend((0..=4).map(|age| ours(&policy, age)));
    let plan = resize(&policy, &tables);
    assert_eq!(tables_with(&plan, "delete"), [name(5), name(4), name(3)]);
    let kept = last(&plan, &name(6));
    assert_eq!(kept.decision, Decision::Skipped, "{kept:#?}");
    assert!(
        kept.reason.contains("id (S)") && kept.reason.contains("no positive evidence"),
        "{}",
        kept.reason
    );
}

#[test]
fn another_familys_table_is_foreign_and_warned_about_whatever_its_name() {
    let policy = one_phase("[retention]\ndelete_after = 1\n");
    let mut sibling = ours(&policy, 6);
    sibling.name = format!("timeseries_eu_{}", day(6));
    sibling
        .tags
        .as_mut()
        .unwrap()
        .insert(TAG_FAMILY.into(), "timeseries_eu".into());
    let mut same_name = ours(&policy, 5);
    same_name
        .tags
        .as_mut()
        .unwrap()
        .insert(TAG_FAMILY.into(), "timeseries_eu".into());
    let plan = resize(&policy, &[sibling.clone(), same_name]);
    assert_eq!(decisions(&plan, &sibling.name), [Decision::Foreign]);
    assert_eq!(decisions(&plan, &name(5)), [Decision::Foreign]);
    assert!(tables_with(&plan, "delete").is_empty(), "{plan:#?}");
    assert_eq!(plan.warnings.len(), 1, "{:?}", plan.warnings);
    assert!(plan.warnings[0].starts_with("2 table(s) of another ddb-rollover family (\"timeseries_eu\")"));
}

/// The account's table quota (2,500 tables by default): a scheduled run says it only once the
/// family passes it within a year, counting the tables named as ours it listed; `status` (where
/// an operator plans) says it whenever the policy can pass it, once.
#[test]
fn runs_warn_of_the_table_quota_within_a_year_and_status_always() {
    let quota = |warnings: &[String]| {
        warnings
            .iter()
            .filter(|w| w.contains("2500 tables per Region"))
            .count()
    };
    let kept_forever = policy("");
    // A new family keeping every table: 2,500 days away. No run says it; status does, once.
    for operation in [Operation::CreateNew, Operation::ResizeOld] {
        let warnings = plan(&kept_forever, now(), &[], operation).warnings;
        assert_eq!(quota(&warnings), 0, "{operation}: {warnings:?}");
    }
    let said = status(&kept_forever, now(), &[]).warnings;
    assert_eq!(quota(&said), 1, "{said:?}");
    assert!(said[0].contains("no retention.delete_after"), "{said:?}");

    // create_new describes its two tables and lists the older ones, which count too.
    let targets = [ours(&kept_forever, 0), ours(&kept_forever, -1)];
    let run = |older: i64| {
        let listed: Vec<String> = (1..=older).map(name).collect();
        plan_run(&kept_forever, now(), &targets, &listed, Operation::CreateNew).warnings
    };
    // 2,102 tables: the 2,501st is 399 days away; 2,202: 299 days.
    assert_eq!(quota(&run(2_100)), 0);
    let near = run(2_200);
    assert_eq!(quota(&near), 1, "{near:?}");
    assert!(
        near.iter()
            .any(|w| w.contains("with the 2202 tables it holds now") && w.contains("(in about 299 periods)")),
        "{near:?}"
    );

    // With retention: only when delete_after + premake + 1 passes the quota.
    let within = policy("premake = 1\n[retention]\ndelete_after = 2498\n");
    assert_eq!(quota(&status(&within, now(), &[]).warnings), 0);
    let too_many = status(
        &policy("premake = 2\n[retention]\ndelete_after = 2498\n"),
        now(),
        &[],
    )
    .warnings;
    assert!(
        too_many[0].starts_with("the policy keeps up to 2501 tables"),
        "{too_many:?}"
    );
}

/// Regression: a table under someone else's scalable target was left alone by the phase
/// change and deleted by retention in the same run, leaving their target pointing at nothing.
/// Deletion needs nothing foreign on the table: kept, and the reason says what.
#[test]
fn retention_never_deletes_a_table_under_a_scalable_target_it_did_not_create() {
    use ddb_rollover::policy::scaling::{
        ObservedScalableTarget, ObservedScalingPolicy, ScalableDimension, ScalableKey,
    };
    let policy = one_phase("[retention]\ndelete_after = 3\nkeep_newest = 1\n");
    let mut claimed = ours(&policy, 5);
    claimed.scaling = Some(vec![ObservedScalableTarget {
        key: ScalableKey {
            resource_id: format!("table/{}", name(5)),
            dimension: ScalableDimension::TableRead,
        },
        min: 1,
        max: 10,
        policies: vec![ObservedScalingPolicy {
            name: "someone-elses-read".into(),
            policy_type: "TargetTrackingScaling".into(),
            metric: None,
            target_value: None,
        }],
        scheduled_actions: Vec::new(),
    }]);
    let plan = resize(&policy, &[claimed, ours(&policy, 4), ours(&policy, 0)]);
    assert_eq!(tables_with(&plan, "delete"), [name(4)]);
    let kept = last(&plan, &name(5));
    assert_eq!(kept.decision, Decision::Skipped, "{kept:#?}");
    assert!(
        kept.reason
            .contains("scalable targets, scaling policies or scheduled actions"),
        "{}",
        kept.reason
    );
}

/// Regression: a table someone made by hand with our name and key (a local index the
/// policy never had proves it) was tagged into the family by one run and deleted by a later
/// one. No run writes the family tag onto an existing table, so nothing proves it ours, and
/// retention keeps it, run after run, saying why once per run.
#[test]
fn a_hand_made_table_named_and_keyed_like_ours_is_never_tagged_into_the_family_or_deleted() {
    let policy = one_phase("[retention]\ndelete_after = 3\nkeep_newest = 1\n");
    let mut hand_made = bare(6, COLD);
    hand_made
        .local_indexes
        .push(ddb_rollover::table::ObservedLocalIndex {
            name: "by_hand".into(),
            key: None,
            projection: None,
        });
    let plan = resize(&policy, &[hand_made, ours(&policy, 0)]);
    let steps = decisions(&plan, &name(6));
    assert!(
        !steps
            .iter()
            .any(|d| matches!(d, Decision::Tag(change) if change.tags.contains_key(TAG_FAMILY))),
        "{steps:#?}"
    );
    assert!(
        !steps.iter().any(|d| matches!(d, Decision::Delete(_))),
        "{steps:#?}"
    );
    let kept = last(&plan, &name(6));
    assert!(
        kept.reason.contains("no ddb-rollover:family tag") && kept.reason.contains("local secondary indexes"),
        "{}",
        kept.reason
    );
    assert_eq!(
        plan.warnings
            .iter()
            .filter(|w| w.contains("ddb-rollover adopt"))
            .count(),
        1,
        "{:#?}",
        plan.warnings
    );
}

/// Regression: `grace = "100y"` with `delete_after = 3` deleted tables still in phase 0,
/// taking writes. Validation now refuses such a grace (`policy_checks.rs`); the planner also
/// never archives or deletes inside a grace, whatever the policy says.
#[test]
fn nothing_is_archived_or_deleted_inside_a_write_grace_even_past_retention() {
    let mut policy = one_phase(ARCHIVE);
    policy.grace = Some(std::time::Duration::from_secs(100 * 365 * 24 * 3600));
    let tables: Vec<_> = (0..=7).map(|age| ours(&policy, age)).collect();
    let plan = resize(&policy, &tables);
    assert!(tables_with(&plan, "delete").is_empty(), "{plan:#?}");
    assert!(tables_with(&plan, "export").is_empty(), "{plan:#?}");
    let kept = last(&plan, &name(7));
    assert!(kept.reason.contains("write grace"), "{}", kept.reason);
}

/// Where the endpoint cannot read tags (DynamoDB Local), nothing proves a table the family's:
/// retention deletes nothing, and the report says so once, unless the policy opts in for such
/// endpoints (`retention.delete_without_tagging_api`).
#[test]
fn without_a_tagging_api_retention_deletes_only_when_the_policy_opts_in() {
    let unreadable = |policy: &Policy, age| {
        let mut table = ours(policy, age);
        table.tags = None;
        table.tags_unsupported = true;
        table
    };
    let policy = one_phase("[retention]\ndelete_after = 3\nkeep_newest = 1\n");
    let tables: Vec<_> = (0..=6).map(|age| unreadable(&policy, age)).collect();
    let plan = resize(&policy, &tables);
    assert!(tables_with(&plan, "delete").is_empty(), "{plan:#?}");
    let said: Vec<&String> = plan
        .warnings
        .iter()
        .filter(|w| w.contains("delete_without_tagging_api"))
        .collect();
    assert_eq!(said.len(), 1, "{:#?}", plan.warnings);

    let opted =
        one_phase("[retention]\ndelete_after = 3\nkeep_newest = 1\ndelete_without_tagging_api = true\n");
    let tables: Vec<_> = (0..=6).map(|age| unreadable(&opted, age)).collect();
    let plan = resize(&opted, &tables);
    assert_eq!(tables_with(&plan, "delete"), [name(6), name(5), name(4), name(3)]);
    assert!(!plan
        .warnings
        .iter()
        .any(|w| w.contains("delete_without_tagging_api")));
}

#[test]
fn an_archive_that_is_not_proven_keeps_its_table_with_the_reason() {
    let policy = one_phase(ARCHIVE);
    let mut missing = finally_exported(&policy, 6);
    missing.archive_proof = Some(ArchiveProof::Unproven {
        export: export_arn(6),
        reason: "1 of the 2 data file(s) the manifest lists are missing: s3://my-archive/x/data/1.json.gz"
            .into(),
    });
    let mut unread = finally_exported(&policy, 5);
    unread.archive_proof = None;
    // One at a time: each takes the run's one deletion.
    for (table, age, said) in [(missing, 6, "data/1.json.gz"), (unread, 5, "not checked in S3")] {
        let plan = resize(&policy, &[table, ours(&policy, 1), ours(&policy, 2)]);
        assert!(tables_with(&plan, "delete").is_empty(), "{plan:#?}");
        let kept = last(&plan, &name(age));
        assert_eq!(
            kept.decision,
            Decision::Deferred {
                retry_after: None,
                cause: DeferralCause::ArchiveUnproven
            },
            "{kept:#?}"
        );
        assert!(kept.reason.contains(said), "{}", kept.reason);
    }
}

#[test]
fn a_proven_archive_is_named_with_its_item_count_on_the_delete() {
    let policy = one_phase(ARCHIVE);
    let plan = resize(
        &policy,
        &[finally_exported(&policy, 6), ours(&policy, 1), ours(&policy, 2)],
    );
    let delete = last(&plan, &name(6));
    assert_eq!(delete.decision.action(), "delete", "{delete:#?}");
    assert!(
        delete.reason.contains("archive proven") && delete.reason.contains("42 item(s)"),
        "{}",
        delete.reason
    );
}

#[test]
fn without_archiving_no_proof_is_asked() {
    let policy = one_phase("[retention]\ndelete_after = 4\nkeep_newest = 2\n");
    let plan = resize(&policy, &[ours(&policy, 6), ours(&policy, 1), ours(&policy, 2)]);
    assert_eq!(tables_with(&plan, "delete"), [name(6)]);
}

/// Finding: deletion protection an operator turned on (the policy's template leaves it unset or
/// says false) was turned off by upkeep, or lifted by retention just before DeleteTable. It is
/// someone else's: never turned off, and the table is kept while it is on.
#[test]
fn a_protection_someone_turned_on_is_never_lifted() {
    for template in ["", "[template]\ndeletion_protection = false\n"] {
        let policy = one_phase(&format!(
            "{template}[retention]\ndelete_after = 3\nkeep_newest = 1\n"
        ));
        let mut protected = ours(&policy, 5);
        protected.deletion_protection = true;
        let mut young = ours(&policy, 1);
        young.deletion_protection = true;
        let plan = resize(&policy, &[protected, ours(&policy, 4), young, ours(&policy, 0)]);
        assert_eq!(tables_with(&plan, "delete"), [name(4)], "{template:?}");
        for age in [5, 1] {
            for item in items(&plan, &name(age)) {
                assert!(
                    !matches!(
                        &item.decision,
                        Decision::Delete(_)
                            | Decision::Configure(SettingChange {
                                setting: TableSetting::DeletionProtection(false),
                                ..
                            })
                    ),
                    "{template:?}: {item:#?}"
                );
            }
        }
        let kept = last(&plan, &name(5));
        assert_eq!(kept.decision, Decision::Skipped, "{kept:#?}");
        assert!(
            kept.reason.contains("deletion protection is on"),
            "{}",
            kept.reason
        );
        let verdict = kept.verdict.as_ref().unwrap();
        assert!(
            verdict.label().contains("1 foreign part(s)"),
            "{}",
            verdict.label()
        );
    }
}

fn scaled(policy: &Policy, age: i64, scheduled: &[&str]) -> ObservedTable {
    use ddb_rollover::policy::scaling::{
        policy_name, ObservedScalableTarget, ObservedScalingPolicy, ScalableDimension, ScalableKey,
    };
    let mut table = ours(policy, age);
    table.scaling = Some(
        [ScalableDimension::TableRead, ScalableDimension::TableWrite]
            .into_iter()
            .map(|dimension| ObservedScalableTarget {
                key: ScalableKey {
                    resource_id: format!("table/{}", name(age)),
                    dimension,
                },
                min: 1,
                max: 10,
                policies: vec![ObservedScalingPolicy {
                    name: policy_name(&policy.prefix, dimension),
                    policy_type: "TargetTrackingScaling".into(),
                    metric: Some(dimension.metric().into()),
                    target_value: None,
                }],
                scheduled_actions: if dimension.is_read() {
                    scheduled.iter().map(|s| s.to_string()).collect()
                } else {
                    Vec::new()
                },
            })
            .collect(),
    );
    table
}

/// Low finding: our scalable targets stayed registered after retention deleted their table
/// (AWS does not deregister them). Deregistered after the delete, with our policy: only ours.
#[test]
fn our_targets_are_deregistered_after_retention_deletes_their_table() {
    let policy = one_phase("[retention]\ndelete_after = 3\nkeep_newest = 1\n");
    let plan = resize(&policy, &[scaled(&policy, 4, &[]), ours(&policy, 0)]);
    assert_eq!(
        actions(&plan, &name(4)),
        ["delete", "deregister_scaling"],
        "{plan:#?}"
    );
    let Decision::DeregisterScaling(change) = &last(&plan, &name(4)).decision else {
        panic!()
    };
    assert_eq!(change.targets.len(), 2);
    assert!(change.targets.iter().all(|t| t.deregister_target));
}

/// Finding: a scheduled action someone put on our target was deleted with the target when the
/// run deregistered it. A target with a scheduled action is never deregistered, and the table is
/// kept while it is there.
#[test]
fn a_scheduled_action_keeps_the_target_registered_and_the_table() {
    let policy = one_phase("[retention]\ndelete_after = 3\nkeep_newest = 1\n");
    let plan = resize(&policy, &[scaled(&policy, 4, &["ops-nightly"]), ours(&policy, 0)]);
    assert!(tables_with(&plan, "delete").is_empty(), "{plan:#?}");
    for item in items(&plan, &name(4)) {
        if let Decision::DeregisterScaling(change) = &item.decision {
            for removal in &change.targets {
                assert!(
                    !(removal.deregister_target && removal.key.dimension.is_read()),
                    "{item:#?}"
                );
            }
        }
    }
    let kept = items(&plan, &name(4))
        .into_iter()
        .find(|i| i.reason.contains("no positive evidence"))
        .expect("kept for want of evidence");
    assert!(kept.reason.contains("scheduled actions"), "{}", kept.reason);
    let foreign: Vec<String> = kept
        .verdict
        .as_ref()
        .unwrap()
        .foreign
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        foreign
            .iter()
            .any(|f| f.contains("scheduled actions: ops-nightly")),
        "{foreign:?}"
    );
}

/// Finding (hostile read): someone rewrote the current table's period tags to a period years
/// ago; it was aged by them, dialled down and deleted. Tags anyone may write never make a table
/// older than its name says.
#[test]
fn period_tags_older_than_the_name_never_age_a_table() {
    let policy = one_phase("[retention]\ndelete_after = 1\nkeep_newest = 1\n");
    let mut current = ours(&policy, 0);
    let tags = current.tags.as_mut().unwrap();
    tags.insert(TAG_PERIOD_START.into(), "2015-01-01T00:00:00+00:00".into());
    tags.insert(TAG_PERIOD_END.into(), "2015-01-02T00:00:00+00:00".into());
    let plan = resize(&policy, &[ours(&policy, 3), ours(&policy, 2), current]);
    assert_eq!(items(&plan, &name(0))[0].age, Some(0), "{plan:#?}");
    assert!(
        decisions(&plan, &name(0))
            .iter()
            .all(|d| !matches!(d, Decision::Delete(_) | Decision::Update(_))),
        "{plan:#?}"
    );
    assert_eq!(tables_with(&plan, "delete"), [name(3), name(2)]);
}

/// Finding (hostile read): without archiving, a table carrying someone else's resource-based
/// policy was deleted with the policy. Now their statements are a foreign part that keeps it.
#[test]
fn someone_elses_resource_policy_keeps_the_table_without_archiving_too() {
    let policy = one_phase("[retention]\ndelete_after = 2\nkeep_newest = 1\n");
    let theirs = r#"{"Version":"2012-10-17","Statement":[{"Sid":"Analytics","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:role/a"},"Action":"dynamodb:Query","Resource":"*"}]}"#;
    let mut shared = ours(&policy, 4);
    shared.resource_policy = Some(ResourcePolicy {
        document: Some(theirs.into()),
        revision: Some("5".into()),
    });
    let plan = resize(&policy, &[shared, ours(&policy, 3), ours(&policy, 0)]);
    assert_eq!(tables_with(&plan, "delete"), [name(3)]);
    let kept = last(&plan, &name(4));
    assert_eq!(kept.decision, Decision::Skipped, "{kept:#?}");
    assert!(
        kept.reason.contains("someone else's statements"),
        "{}",
        kept.reason
    );
    // Not read this run: no deletion either.
    let mut unread = ours(&policy, 4);
    unread.resource_policy = None;
    let plan = ddb_rollover::plan::plan(&policy, now(), &[unread, ours(&policy, 0)], Operation::ResizeOld);
    assert!(tables_with(&plan, "delete").is_empty(), "{plan:#?}");
    assert!(last(&plan, &name(4)).reason.contains("was not read"));
}

/// Finding (hostile read): hand-made look-alikes for far-future periods counted as the newest
/// tables and pushed the real newest out of `keep_newest`.
#[test]
fn far_future_look_alikes_do_not_count_among_the_newest() {
    let policy = one_phase("[retention]\ndelete_after = 1\nkeep_newest = 3\nmax_deletes_per_run = 5\n");
    let mut tables: Vec<ObservedTable> = (0..=4).map(|age| ours(&policy, age)).collect();
    for far in ["timeseries_2030-01-01", "timeseries_2030-01-02"] {
        let mut look_alike = ObservedTable::active(far, Billing::Provisioned(COLD));
        look_alike.key = Some(policy.key.clone());
        look_alike.tags = Some(BTreeMap::new());
        tables.push(look_alike);
    }
    let plan = resize(&policy, &tables);
    // The newest three up to the last pre-built period (premake 1): ages 0, 1, 2.
    assert_eq!(tables_with(&plan, "delete"), [name(4), name(3)]);
}
