//! Retention's deletion of an archived table goes through the seal: seal against writes, a
//! final export after the seal, delete; and a sealed table no longer due is unsealed. Planner
//! rules with a fixed clock (resize_old just after midnight UTC, 2018-10-26 the current day).

use ddb_rollover::Observation;
use std::collections::BTreeMap;

use crate::common::at;
use crate::common::plans::assert_reason_mentions;
use crate::common::policies::{policy_of, ARCHIVE, ONE_PHASE};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use ddb_rollover::policy::{Billing, Capacity};
use ddb_rollover::policy::{
    TAG_ARCHIVED, TAG_EXPORT, TAG_FAMILY, TAG_FINAL_EXPORT, TAG_KEEP_UNTIL, TAG_PERIOD_END, TAG_PERIOD_START,
    TAG_SEALED,
};
use ddb_rollover::status;
use ddb_rollover::table::ArchiveProof;
use ddb_rollover::table::{ExportState, ExportStatus, ObservedTable};
use ddb_rollover::table::{ResourcePolicy, SealRecord, NO_POLICY, SEAL_SID, SETTLE};
use ddb_rollover::DeferralCause;
use ddb_rollover::ForeignPart;
use ddb_rollover::Policy;
use ddb_rollover::{plan, Decision, Operation, Plan, PlanItem};

const FINAL: &str = "export/01540500000000-f1a1f1a1";

fn now() -> DateTime<Utc> {
    at("2018-10-26T00:15:00Z")
}

fn name(age: i64) -> String {
    let day = NaiveDate::from_ymd_opt(2018, 10, 26).unwrap() - Duration::days(age);
    format!("timeseries_{day}")
}

fn arn(age: i64) -> String {
    format!("arn:aws:dynamodb:us-east-1:123456789012:table/{}", name(age))
}

/// Archive at 2 days, delete at 4, keep the newest 2, one deletion per run.
fn policy() -> Policy {
    policy_of(&[ONE_PHASE, ARCHIVE])
}

/// Our table `age` days old, archived at `archive_after`, its resource policy read (none).
fn archived(age: i64) -> ObservedTable {
    let policy = policy();
    let calendar = policy.calendar();
    let slot = calendar.floor(now() - Duration::days(age));
    let mut table = ObservedTable::active(&name(age), Billing::Provisioned(Capacity { read: 1, write: 1 }));
    table.key = Some(policy.key.clone());
    table.point_in_time_recovery = Some(true);
    table.tags = Some(BTreeMap::from([
        (TAG_FAMILY.to_string(), "timeseries".to_string()),
        (TAG_PERIOD_START.to_string(), slot.start().to_rfc3339()),
        (TAG_PERIOD_END.to_string(), calendar.end(slot).to_rfc3339()),
        (
            TAG_EXPORT.to_string(),
            "export/01540000000000-abcdef12".to_string(),
        ),
        (TAG_ARCHIVED.to_string(), "2018-10-20T03:00:00+00:00".to_string()),
    ]));
    table.archive_proof = Some(proof(&format!("{}/export/01540000000000-abcdef12", arn(age))));
    table.resource_policy = Some(ResourcePolicy::default());
    table
}

fn proof(export: &str) -> ArchiveProof {
    ArchiveProof::Proven {
        export: export.to_string(),
        bucket: "my-archive".into(),
        manifest: "ddb-rollover/x/AWSDynamoDB/y/manifest-summary.json".into(),
        table_arn: String::new(),
        items: 5,
        files: crate::common::two_files(),
    }
}

fn tag(mut table: ObservedTable, key: &str, value: &str) -> ObservedTable {
    table.tags.as_mut().unwrap().insert(key.into(), value.into());
    table
}

/// `table` sealed (our statement alone, or beside `theirs`) at `sealed_at`, revision "41".
fn sealed(table: ObservedTable, sealed_at: DateTime<Utc>, theirs: Option<&str>) -> ObservedTable {
    let before = ResourcePolicy {
        document: theirs.map(str::to_string),
        revision: theirs.map(|_| "40".to_string()),
    };
    let document = before.with_seal(table.arn.as_deref().unwrap()).unwrap();
    let record = SealRecord {
        at: sealed_at,
        revision: "41".into(),
    };
    let mut table = tag(table, TAG_SEALED, &record.tag_value());
    table.resource_policy = Some(ResourcePolicy {
        document: Some(document),
        revision: Some("41".into()),
    });
    table
}

/// The final export after the seal, as DescribeExport reports it.
fn final_export(
    mut table: ObservedTable,
    age: i64,
    export_time: DateTime<Utc>,
    status: ExportStatus,
) -> ObservedTable {
    let export = format!("{}/{FINAL}", arn(age));
    table = tag(table, TAG_FINAL_EXPORT, FINAL);
    table.final_export = Some(ExportState {
        arn: export.clone(),
        status,
        export_time: Some(export_time),
        end_time: None,
        failure: None,
    });
    table.archive_proof = (status == ExportStatus::Completed).then(|| proof(&export));
    table
}

fn young() -> [ObservedTable; 2] {
    [archived(1), archived(2)]
}

fn resize(tables: &[ObservedTable]) -> Plan {
    plan(&policy(), now(), tables, Operation::ResizeOld)
}

fn last<'a>(plan: &'a Plan, table: &str) -> &'a PlanItem {
    plan.items
        .iter()
        .rfind(|i| i.facts.table == table)
        .unwrap_or_else(|| panic!("{table} not in {plan:#?}"))
}

fn with(table: ObservedTable) -> Vec<ObservedTable> {
    let mut tables = young().to_vec();
    tables.push(table);
    tables
}

#[test]
fn an_archived_table_due_for_deletion_is_sealed_against_writes_not_deleted() {
    let plan = resize(&with(archived(5)));
    let step = last(&plan, &name(5));
    let Decision::Seal(request) = &step.decision else {
        panic!("expected the seal first, got {step:#?}");
    };
    assert_eq!(request.expected_revision, NO_POLICY);
    assert!(request.document.contains(SEAL_SID), "{}", request.document);
    assert!(
        request.document.contains("dynamodb:PutItem"),
        "{}",
        request.document
    );
    assert!(step.reason.starts_with("seal against writes"), "{}", step.reason);
    assert!(
        !plan
            .items
            .iter()
            .any(|i| matches!(i.decision, Decision::Delete(_))),
        "nothing is deleted before its seal: {plan:#?}"
    );
}

#[test]
fn someone_elses_policy_keeps_the_table_never_sealed_nor_deleted() {
    let theirs = r#"{"Version":"2012-10-17","Statement":[{"Sid":"Readers","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:role/r"},"Action":"dynamodb:GetItem","Resource":"*"}]}"#;
    let mut table = archived(5);
    table.resource_policy = Some(ResourcePolicy {
        document: Some(theirs.into()),
        revision: Some("17".into()),
    });
    let plan = resize(&with(table));
    let step = last(&plan, &name(5));
    // DeleteTable would destroy their statements: a veto, like a foreign index.
    assert_eq!(step.decision, Decision::Skipped, "{step:#?}");
    assert_reason_mentions(step, &["someone else's statements"]);
    let verdict = step.verdict.as_ref().unwrap();
    assert_eq!(
        verdict.foreign,
        [ForeignPart::ResourcePolicy {
            statements: vec!["Readers".into()]
        }]
    );
}

/// Finding (hostile read): a statement under our Sid that is not our seal (an Allow) was taken
/// for the seal, and the final export and deletion would have followed with writes still open.
#[test]
fn our_sid_on_someone_elses_statement_is_no_seal_and_keeps_the_table() {
    let impostor = format!(
        r#"{{"Version":"2012-10-17","Statement":[{{"Sid":"{SEAL_SID}","Effect":"Allow","Principal":"*","Action":"dynamodb:PutItem","Resource":"*"}}]}}"#
    );
    let record = SealRecord {
        at: now() - Duration::hours(24),
        revision: "41".into(),
    };
    let mut table = tag(archived(5), TAG_SEALED, &record.tag_value());
    table.resource_policy = Some(ResourcePolicy {
        document: Some(impostor),
        revision: Some("41".into()),
    });
    let plan = resize(&with(table));
    let step = last(&plan, &name(5));
    assert!(
        !matches!(
            step.decision,
            Decision::Export(_) | Decision::Delete(_) | Decision::Unseal(_)
        ),
        "{step:#?}"
    );
    assert_reason_mentions(step, &["someone else's statements"]);
}

#[test]
fn the_final_export_waits_until_the_seal_has_settled() {
    let table = sealed(archived(5), now() - SETTLE + Duration::minutes(1), None);
    let plan = resize(&with(table));
    let step = last(&plan, &name(5));
    assert_eq!(step.decision, Decision::Unchanged, "{step:#?}");
    assert!(step.reason.contains("waits until"), "{}", step.reason);
}

#[test]
fn a_settled_seal_gets_its_final_export() {
    let table = sealed(archived(5), now() - Duration::hours(24), None);
    let plan = resize(&with(table));
    let step = last(&plan, &name(5));
    match &step.decision {
        Decision::Export(request) => assert!(request.after_seal, "{request:?}"),
        other => panic!("expected the final export, got {other:?}"),
    }
    assert!(
        step.reason.starts_with("final export after the seal"),
        "{}",
        step.reason
    );
}

#[test]
fn an_export_from_before_the_seal_never_lets_the_table_go() {
    let sealed_at = now() - Duration::hours(24);
    let table = final_export(
        sealed(archived(5), sealed_at, None),
        5,
        sealed_at + SETTLE - Duration::seconds(1),
        ExportStatus::Completed,
    );
    let plan = resize(&with(table));
    let step = last(&plan, &name(5));
    assert!(
        matches!(&step.decision, Decision::Export(r) if r.after_seal),
        "an export as of before the seal settled is exported again: {step:#?}"
    );
}

#[test]
fn the_table_is_deleted_on_its_proven_final_export_only() {
    let sealed_at = now() - Duration::hours(24);
    let table = final_export(
        sealed(archived(5), sealed_at, None),
        5,
        sealed_at + SETTLE + Duration::minutes(5),
        ExportStatus::Completed,
    );
    let plan = resize(&with(table.clone()));
    let step = last(&plan, &name(5));
    match &step.decision {
        Decision::Delete(request) => {
            assert_eq!(
                request.archived_by.as_deref(),
                Some(format!("{}/{FINAL}", arn(5)).as_str())
            )
        }
        other => panic!("expected the delete, got {other:?}"),
    }
    assert!(step.reason.starts_with("delete:"), "{}", step.reason);

    // The archive export's proof is not the final export's: kept.
    let mut unproven = table;
    unproven.archive_proof = Some(proof(&format!("{}/export/01540000000000-abcdef12", arn(5))));
    let plan = resize(&with(unproven));
    assert_eq!(
        last(&plan, &name(5)).decision,
        Decision::Deferred {
            retry_after: None,
            cause: DeferralCause::ArchiveUnproven
        }
    );

    // Still exporting: waits.
    let exporting = final_export(
        sealed(archived(5), sealed_at, None),
        5,
        sealed_at + SETTLE + Duration::minutes(5),
        ExportStatus::InProgress,
    );
    assert_eq!(
        last(&resize(&with(exporting)), &name(5)).decision,
        Decision::Unchanged
    );
}

#[test]
fn a_policy_changed_since_the_seal_makes_the_seal_count_from_now() {
    let sealed_at = now() - Duration::hours(24);
    let mut table = final_export(
        sealed(archived(5), sealed_at, None),
        5,
        sealed_at + SETTLE + Duration::minutes(5),
        ExportStatus::Completed,
    );
    // Someone put the policy again (our statement in it): a new revision.
    table.resource_policy.as_mut().unwrap().revision = Some("99".into());
    let plan = resize(&with(table));
    match &last(&plan, &name(5)).decision {
        Decision::Tag(change) => {
            let record = SealRecord::from_tag(&change.tags[TAG_SEALED]).unwrap();
            assert_eq!(record.at, now());
            assert_eq!(record.revision, "99");
        }
        other => panic!("expected the seal recorded again, not {other:?}"),
    }
}

#[test]
fn a_seal_someone_removed_is_put_again() {
    let sealed_at = now() - Duration::hours(24);
    let mut table = sealed(archived(5), sealed_at, None);
    table.resource_policy = Some(ResourcePolicy::default());
    let plan = resize(&with(table));
    assert!(
        matches!(last(&plan, &name(5)).decision, Decision::Seal(_)),
        "{plan:#?}"
    );
}

#[test]
fn without_the_resource_policy_nothing_is_sealed_or_deleted() {
    let mut table = archived(5);
    table.resource_policy = None;
    let plan = resize(&with(table));
    let step = last(&plan, &name(5));
    assert_eq!(step.decision, Decision::Skipped, "{step:#?}");
    assert_reason_mentions(step, &["resource-based policy was not read"]);
}

#[test]
fn a_sealed_table_no_longer_due_is_unsealed_keeping_everyone_elses_statements() {
    let theirs = r#"{"Version":"2012-10-17","Statement":[{"Sid":"Readers","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:role/r"},"Action":"dynamodb:GetItem","Resource":"*"}]}"#;
    // Restored and kept by the operator after the seal.
    let kept = tag(
        sealed(archived(5), now() - Duration::hours(2), Some(theirs)),
        TAG_KEEP_UNTIL,
        "2018-11-30T00:00:00+00:00",
    );
    let plan = resize(&with(kept));
    match &last(&plan, &name(5)).decision {
        Decision::Unseal(request) => {
            assert_eq!(request.expected_revision, "41");
            let rest = request.rest.as_deref().expect("their statement stays");
            assert!(rest.contains("Readers") && !rest.contains(SEAL_SID), "{rest}");
        }
        other => panic!("expected the unseal, got {other:?}"),
    }

    // One of the newest keep_newest (the policy changed): our statement alone, deleted.
    let newest = sealed(archived(2), now() - Duration::hours(2), None);
    let plan = resize(&[archived(1), newest]);
    match &last(&plan, &name(2)).decision {
        Decision::Unseal(request) => assert_eq!(request.rest, None),
        other => panic!("expected the unseal, got {other:?}"),
    }
}

#[test]
fn status_shows_each_step_of_the_deletion() {
    let policy = policy();
    let sealed_at = now() - Duration::hours(24);
    let tables = with(sealed(archived(5), sealed_at, None));
    let mut more = tables.clone();
    more.push(archived(6));
    let report = status(&policy, now(), &Observation::enrolled(&policy, more.to_vec()));
    let step = |age: i64| {
        let line = report.tables.iter().find(|l| l.facts.table == name(age)).unwrap();
        let next = line.resize_old.as_ref().unwrap();
        let others: Vec<&str> = line.other_changes.iter().map(|c| c.decision.action()).collect();
        (next.decision.action(), others, next.reason.clone())
    };
    // The older table takes the run's one deletion: sealed; the next waits for the budget.
    let (action, others, _) = step(6);
    assert!(
        action == "seal" || others.contains(&"seal"),
        "{action} {others:?}"
    );
    let (action, others, _) = step(5);
    assert!(
        action == "deferred" || others.contains(&"deferred"),
        "{action} {others:?}"
    );
}
