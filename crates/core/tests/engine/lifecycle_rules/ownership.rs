//! Ownership under retention: nothing is archived, lowered or deleted without positive evidence.

use super::*;
use ddb_rollover::Observation;

// ---- 7. Ownership and retention ----

#[test]
fn retention_never_deletes_a_table_whose_key_is_not_the_policys_even_when_tagged_ours() {
    let policy = one_phase("[retention]\ndelete_after = 3\n");
    let other_key = ddb_rollover::policy::KeySchema {
        partition: ddb_rollover::policy::KeyAttribute {
            name: "id".into(),
            kind: ddb_rollover::policy::AttributeKind::S,
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
    assert_reason_mentions(kept, &["id (S)", "no positive evidence"]);
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
    let said = status(
        &kept_forever,
        now(),
        &Observation::enrolled(&kept_forever, vec![]),
    )
    .warnings;
    assert_eq!(quota(&said), 1, "{said:?}");
    assert!(said[0].contains("no retention.delete_after"), "{said:?}");

    // create_new describes its two tables and lists the older ones, which count too.
    let targets = [ours(&kept_forever, 0), ours(&kept_forever, -1)];
    let run = |older: i64| {
        let listed: Vec<String> = (1..=older).map(name).collect();
        plan_run(
            &kept_forever,
            now(),
            &Observation {
                listed_only: listed.clone(),
                ..Observation::enrolled(&kept_forever, targets.to_vec())
            }
            .seen(),
            Operation::CreateNew,
        )
        .warnings
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
    assert_eq!(
        quota(&status(&within, now(), &Observation::enrolled(&within, vec![])).warnings),
        0
    );
    let too_many = status(
        &policy("premake = 2\n[retention]\ndelete_after = 2498\n"),
        now(),
        &Observation::enrolled(&policy("premake = 2\n[retention]\ndelete_after = 2498\n"), vec![]),
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
    use ddb_rollover::policy::{
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
            arn: Some(format!(
                "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1:policyName/{}",
                "someone-elses-read"
            )),
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
/// A table named and keyed like ours that the family's ledger does not record (made by hand,
/// or made again under the name by anyone) is not ours: never tagged, never changed, never
/// deleted, and said once, with the way to vouch for it.
#[test]
fn a_table_the_ledger_does_not_record_is_never_changed_tagged_or_deleted() {
    let policy = one_phase("[retention]\ndelete_after = 3\nkeep_newest = 1\n");
    let hand_made = bare(6, COLD);
    let current = ours(&policy, 0);
    let seen = Observation {
        book: ddb_rollover::ledger::Book::enrolling(&policy, std::slice::from_ref(&current)),
        tables: vec![hand_made, current],
        ..Observation::default()
    };
    let plan = plan_run(&policy, now(), &seen.seen(), Operation::ResizeOld);
    assert_eq!(decisions(&plan, &name(6)), [Decision::Foreign]);
    assert_reason_mentions(last(&plan, &name(6)), &["ledger has no record of it"]);
    let said: Vec<&String> = plan.warnings.iter().filter(|w| w.contains(&name(6))).collect();
    assert_eq!(said.len(), 1, "{:#?}", plan.warnings);
    assert!(said[0].contains("ddb-rollover adopt"), "{said:?}");
}

/// On an endpoint without a tagging API (DynamoDB Local), the ledger alone proves a table this
/// family's: retention deletes what is due, and only that.
#[test]
fn without_a_tagging_api_the_ledger_alone_lets_retention_delete() {
    let unreadable = |policy: &Policy, age| {
        let mut table = ours(policy, age);
        table.tags = None;
        table.tags_unsupported = true;
        table
    };
    let policy = one_phase("[retention]\ndelete_after = 3\nkeep_newest = 1\n");
    let tables: Vec<_> = (0..=6).map(|age| unreadable(&policy, age)).collect();
    let plan = resize(&policy, &tables);
    assert_eq!(tables_with(&plan, "delete"), [name(6), name(5), name(4), name(3)]);
    // A table nobody recorded, there: never.
    let seen = Observation {
        book: ddb_rollover::ledger::Book::enrolling(&policy, &tables[..6]),
        tables: tables.clone(),
        ..Observation::default()
    };
    let plan = plan_run(&policy, now(), &seen.seen(), Operation::ResizeOld);
    assert_eq!(tables_with(&plan, "delete"), [name(5), name(4), name(3)]);
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
    assert_reason_mentions(delete, &["archive proven", "42 item(s)"]);
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
        assert_reason_mentions(kept, &["deletion protection is on"]);
        let verdict = kept.verdict.as_ref().unwrap();
        assert!(
            verdict.label().contains("1 foreign part(s)"),
            "{}",
            verdict.label()
        );
    }
}

fn scaled(policy: &Policy, age: i64, scheduled: &[&str]) -> ObservedTable {
    use ddb_rollover::policy::{
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
                    arn: Some(format!(
                        "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1:policyName/{}",
                        policy_name(&policy.prefix, dimension)
                    )),
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
    assert_eq!(items(&plan, &name(0))[0].facts.age, Some(0), "{plan:#?}");
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
    assert_reason_mentions(kept, &["someone else's statements"]);
    // Not read this run: no deletion either.
    let mut unread = ours(&policy, 4);
    unread.resource_policy = None;
    let plan = ddb_rollover::plan(&policy, now(), &[unread, ours(&policy, 0)], Operation::ResizeOld);
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
