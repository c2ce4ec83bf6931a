//! What `status` reports of the lifecycle, and the policy's validation of its fields.

use super::*;
use ddb_rollover::Observation;

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
    let report = status(&policy, now(), &Observation::enrolled(&policy, tables.to_vec()));
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
    let report = status(
        &policy,
        now(),
        &Observation::enrolled(&policy, vec![ours(&policy, 1)]),
    );
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
    let report = status(
        &policy,
        now(),
        &Observation::enrolled(&policy, vec![table, ours(&policy, 2)]),
    );
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
    let report = status(&policy, now(), &Observation::enrolled(&policy, vec![table]));
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
    let report = status(&policy, now(), &Observation::enrolled(&policy, vec![table]));
    let other: Vec<_> = line(&report.tables, &name(3))
        .other_changes
        .iter()
        .map(|c| c.decision.action())
        .collect();
    assert_eq!(other, ["enable_point_in_time_recovery", "deferred", "deferred"]);
}

/// status() is built from the planner, so a family table the planner ages by its period tags
/// has a delete time.
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
    let daily = tagged(daily, TAG_FAMILY, "timeseries");
    let report = status(&policy, now(), &Observation::enrolled(&policy, vec![daily]));
    // Its last hour, 2018-10-20T23, turns 48 hours old at 2018-10-22T23:00.
    assert_eq!(
        line(&report.tables, "timeseries_2018-10-20").delete_due,
        Some(at("2018-10-22T23:00:00Z"))
    );
}

// ---- 8. Policy validation ----

fn invalid_fields(toml: &str) -> Vec<String> {
    crate::common::policies::invalid_fields(Policy::from_toml(toml))
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
