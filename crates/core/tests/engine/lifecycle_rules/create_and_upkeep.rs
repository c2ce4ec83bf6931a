//! create_new's tables, the template's upkeep on existing tables, and the stream.

use super::*;

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
    // The template's tags, and our own period and policy tags (for people and IAM; the ledger
    // records the period): never the family tag, which only CreateTable and adopt write.
    let mut want_tags = own_tags(&policy, 3);
    want_tags.remove(TAG_FAMILY);
    want_tags.insert("team".into(), "iot".into());
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
    assert_reason_mentions(last, &["one table update at a time"]);
}

/// The tags each TagResource of `table` in `plan` writes.
fn tags_written(plan: &Plan, table: &str) -> Vec<BTreeMap<String, String>> {
    decisions(plan, table)
        .into_iter()
        .filter_map(|d| match d {
            Decision::Tag(change) => Some(change.tags),
            _ => None,
        })
        .collect()
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
    let tag_changes = tags_written(&resize(&policy, &[table]), &name(3));
    // The family tag is missing (hand-made, or from before it existed): never written onto an
    // existing table (only CreateTable and `adopt` write it); the user's tag is restored.
    assert_eq!(tag_changes, [tags(&[("team", "iot")])]);
}

#[test]
fn our_period_and_policy_tags_are_restored_on_our_familys_tables_only() {
    let policy = policy(UPKEEP);
    let mut table = bare(3, COLD);
    table.tags = Some(tags(&[(TAG_FAMILY, "timeseries"), ("team", "iot")]));
    let tag_changes = tags_written(&resize(&policy, &[table]), &name(3));
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
