//! Retention: exports, deletion after archiving or without it, and ages read from tags.

use super::*;

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
            bucket_owner: "123456789012".into(),
            after_seal: false,
        })
    );
    assert!(tables_with(&plan, "delete").is_empty(), "{plan:#?}");
    let due = last(&plan, &name(5));
    assert!(due.reason.contains("after the seal"), "{}", due.reason);
}

/// An export names the account that must own the bucket (`S3BucketOwner`): the policy's
/// `bucket_owner`, else the account in the table's ARN; a table whose ARN names none is not
/// exported, and the line says what to set.
#[test]
fn exports_name_the_bucket_owner() {
    let named = one_phase(&format!("{ARCHIVE}bucket_owner = \"210987654321\"\n"));
    let plan = resize(&named, &[ours(&named, 2), ours(&named, 1)]);
    let Decision::Export(request) = &last(&plan, &name(2)).decision else {
        panic!("{plan:#?}");
    };
    assert_eq!(request.bucket_owner, "210987654321");

    let policy = one_phase(ARCHIVE);
    let mut table = ours(&policy, 2);
    table.arn = Some(format!("arn:aws:dynamodb:us-east-1::table/{}", name(2)));
    let plan = resize(&policy, &[table, ours(&policy, 1)]);
    let line = last(&plan, &name(2));
    assert_eq!(line.decision, Decision::Unchanged, "{line:#?}");
    assert_reason_mentions(line, &["names no account", "retention.bucket_owner"]);
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
    assert_reason_mentions(waiting, &["point-in-time recovery"]);
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
        assert_reason_mentions(waiting, &["max_deletes_per_run"]);
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
    let decided = decisions(&plan, &name(3));
    let [Decision::Delete(DeleteRequest {
        name: deleted,
        lift_deletion_protection: true,
        archived_by: None,
        receipt,
    })] = decided.as_slice()
    else {
        panic!("{decided:#?}")
    };
    assert_eq!(
        (deleted, &receipt.name, receipt.archive.is_none()),
        (&name(3), &name(3), true)
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
    let Decision::Delete(DeleteRequest {
        name: deleted,
        lift_deletion_protection: false,
        archived_by: None,
        receipt,
    }) = &last(&plan, &name(6)).decision
    else {
        panic!("{plan:#?}")
    };
    // The receipt names the table deleted, by the identity DescribeTable gave, and its period.
    assert_eq!(deleted, &name(6));
    assert_eq!(receipt.name, name(6));
    assert_eq!(Some(&receipt.identity), ours(&policy, 6).identity().as_ref());
    assert_eq!(receipt.period.start.date_naive(), day(6));
}

// ---- 6. Age from tags ----

/// Period tags alone are no evidence: a table named with another period setting's label that
/// carries them but no family tag is someone else's, whatever its age. With the family tag it
/// is ours, aged by its period's end.
#[test]
fn period_tags_without_the_family_tag_are_no_evidence() {
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
    assert_eq!(decisions(&plan, "timeseries_2018-10-20"), [Decision::Foreign]);

    let family = tagged(daily, TAG_FAMILY, "timeseries");
    let plan = resize(&policy, &[family, current]);
    let items = items(&plan, "timeseries_2018-10-20");
    // The last hour of 2018-10-20 is 5 days and 1 hour before the current hour.
    assert_eq!(items[0].facts.age, Some(121), "{items:#?}");
    assert!(
        !decisions(&plan, "timeseries_2018-10-20").contains(&Decision::Foreign),
        "{items:#?}"
    );
}
