//! The table template and retention rules of the planner and `status`, one rule per test, with
//! a fixed clock: resize_old's run just after midnight UTC, 2018-10-26 being the current day.

use std::collections::BTreeMap;

use crate::common::at;
use crate::common::plans::assert_reason_mentions;
use crate::common::policies::{ARCHIVE, ONE_PHASE};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use ddb_rollover::policy::Billing;
use ddb_rollover::policy::Capacity;
use ddb_rollover::policy::{Encryption, StreamView};
use ddb_rollover::policy::{
    TAG_ARCHIVED, TAG_EXPORT, TAG_FAMILY, TAG_FINAL_EXPORT, TAG_LAST_DEFERRAL, TAG_PERIOD_END,
    TAG_PERIOD_START, TAG_POLICY_HASH, TAG_SEALED,
};
use ddb_rollover::table::ArchiveProof;
use ddb_rollover::table::{
    ArchiveState, ExportState, ExportStatus, ObservedEncryption, ObservedTable, TableStatus, TtlState,
};
use ddb_rollover::table::{DeleteRequest, ExportRequest, SettingChange, TableSetting, TagChange, TtlChange};
use ddb_rollover::table::{ResourcePolicy, SealRecord};
use ddb_rollover::DeferralCause;
use ddb_rollover::Policy;
use ddb_rollover::{plan, plan_run, Decision, Operation, Plan, PlanItem};
use ddb_rollover::{status, TableStatusLine};

const HOT: Capacity = Capacity {
    read: 300,
    write: 1000,
};
const WARM: Capacity = Capacity { read: 100, write: 1 };
const COLD: Capacity = Capacity { read: 1, write: 1 };

/// Every template setting that upkeep restores on an existing table.
const UPKEEP: &str = r#"
[template]
ttl_attribute = "expires_at"
point_in_time_recovery = true
deletion_protection = true
tags = { team = "iot" }
"#;

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
        table_arn: table.arn.clone().unwrap_or_default(),
        items: 42,
        files: crate::common::two_files(),
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
    plan.items
        .iter()
        .filter(|item| item.facts.table == table)
        .collect()
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
        .map(|item| item.facts.table.clone())
        .collect()
}

fn line<'a>(lines: &'a [TableStatusLine], table: &str) -> &'a TableStatusLine {
    lines
        .iter()
        .find(|l| l.facts.table == table)
        .unwrap_or_else(|| panic!("{table} not in status"))
}

mod create_and_upkeep;
mod ownership;
mod retention;
mod status_and_policy;
