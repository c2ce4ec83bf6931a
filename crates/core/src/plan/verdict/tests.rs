//! The verdict's rules, one per test: whose a table and each of its parts is, on what evidence.

use std::collections::BTreeMap;

use super::*;
use crate::ledger::{Book, Origin, PeriodBounds, TableIdentity, TableState};
use crate::policy::scaling::{ObservedScalableTarget, ObservedScalingPolicy, ScalableDimension};
use crate::policy::settings::{AttributeKind, Billing, Capacity, KeyAttribute};
use crate::policy::tags::{TAG_PERIOD_END, TAG_PERIOD_START};
use crate::table::{ObservedIndex, ObservedLocalIndex, TableStatus};

const POLICY: &str = r#"
prefix = "ts"
[key]
partition = { name = "pk", type = "S" }
sort = { name = "sk", type = "S" }
[[indexes]]
name = "by_site"
partition = { name = "site", type = "S" }
[[local_indexes]]
name = "by_time"
sort = { name = "t", type = "N" }
[retention]
delete_after = 3
"#;

fn policy() -> Policy {
    Policy::from_toml(POLICY).unwrap()
}

fn string(name: &str) -> KeyAttribute {
    KeyAttribute {
        name: name.into(),
        kind: AttributeKind::S,
    }
}

/// A table exactly as the policy makes it, as a run reads it: key, indexes, scalable targets
/// (none), and `tags` (None: not read).
fn table(name: &str, tags: Option<&[(&str, &str)]>) -> ObservedTable {
    let policy = policy();
    let mut table = ObservedTable::active(name, Billing::Provisioned(Capacity { read: 1, write: 1 }));
    table.key = Some(policy.key.clone());
    table.global_indexes = vec![ObservedIndex {
        name: "by_site".into(),
        status: TableStatus::Active,
        backfilling: false,
        billing: Billing::Provisioned(Capacity { read: 1, write: 1 }),
        decreases_today: 0,
        last_decrease: None,
        key: Some(policy.indexes[0].key.clone()),
        projection: Some(Projection::All),
        warm: None,
    }];
    table.local_indexes = vec![ObservedLocalIndex {
        name: "by_time".into(),
        key: Some(KeySchema {
            partition: string("pk"),
            sort: Some(policy.local_indexes[0].sort.clone()),
        }),
        projection: Some(Projection::All),
    }];
    table.tags = tags.map(|tags| {
        tags.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>()
    });
    // Read, and none: the tests below play someone else's statements where they mean to.
    table.resource_policy = Some(crate::table::seal::ResourcePolicy::default());
    table
}

/// The verdict with a ledger that records the table as made by the family when it carries our
/// family tag or its tags were not read ([`Book::enrolling`]).
fn verdict(table: &ObservedTable) -> Option<Verdict> {
    judged(table, &Book::enrolling(&policy(), std::slice::from_ref(table)))
}

fn judged(table: &ObservedTable, book: &Book) -> Option<Verdict> {
    Judge::new(&policy(), book).verdict(table)
}

/// A ledger holding one record of `name`: `state`, made by this family for 2018-10-18.
fn ledger_with(name: &str, state: TableState) -> Book {
    let mut book = Book::default();
    let record = crate::ledger::TableRecord {
        name: name.into(),
        state,
        origin: Origin::Created,
        period: PeriodBounds {
            start: at("2018-10-18T00:00:00Z"),
            end: at("2018-10-19T00:00:00Z"),
        },
        key: policy().key,
        policy_hash: policy().hash(),
        scaling_policies: Vec::new(),
        seal: None,
        lowered: None,
        feeds: None,
    };
    book.tables.insert(
        name.into(),
        crate::ledger::Entry {
            key: crate::ledger::keys::table(name),
            version: 1,
            record,
        },
    );
    book
}

fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339).unwrap().to_utc()
}

fn period_tags(family: Option<&str>) -> Vec<(&str, &str)> {
    let mut tags = vec![
        (TAG_PERIOD_START, "2018-10-18T00:00:00+00:00"),
        (TAG_PERIOD_END, "2018-10-19T00:00:00+00:00"),
    ];
    tags.extend(family.map(|f| (TAG_FAMILY, f)));
    tags
}

fn owned_by(verdict: &Verdict) -> Option<OwnedBy> {
    match verdict.owner {
        Owner::Ours { by, .. } => Some(by),
        Owner::NotOurs { .. } => None,
    }
}

#[test]
fn a_table_is_ours_while_the_ledger_records_the_identity_dynamodb_shows() {
    let family = [(TAG_FAMILY, "ts")];
    let made = table("ts_2018-10-18", Some(&family));
    let identity = made.identity().unwrap();
    let book = ledger_with("ts_2018-10-18", TableState::Made { identity });
    let ours = judged(&made, &book).unwrap();
    assert_eq!(owned_by(&ours), Some(OwnedBy::Created));
    assert!(ours.not_deletable.is_empty(), "{ours:#?}");
    assert_eq!(ours.label(), "ours (ledger: created)");

    // Made again under the name (by anyone): another creation time, not ours, whatever its tags.
    let mut again = made.clone();
    again.created = Some(at("2018-10-20T10:00:00Z"));
    assert_eq!(
        judged(&again, &book).unwrap().owner,
        Owner::NotOurs {
            why: NotOurs::MadeAgain {
                recorded: DateTime::<Utc>::UNIX_EPOCH,
                created: Some(at("2018-10-20T10:00:00Z")),
            }
        }
    );
    // The same creation time with another TableId (AWS gives one): not ours either.
    let mut other_id = made.clone();
    other_id.table_id = Some("another".into());
    let recorded_id = TableIdentity {
        table_id: Some("ours".into()),
        ..made.identity().unwrap()
    };
    let with_id = ledger_with(
        "ts_2018-10-18",
        TableState::Made {
            identity: recorded_id,
        },
    );
    assert!(!judged(&other_id, &with_id).unwrap().is_ours());

    // Our family tag copied onto a table nobody recorded proves nothing.
    assert_eq!(
        judged(&made, &Book::default()).unwrap().owner,
        Owner::NotOurs {
            why: NotOurs::NotRecorded
        }
    );

    // Recorded, but its tags unread: ours, not deletable on this run's facts; its family tag
    // gone: never deleted on less evidence than it was made with.
    let unread = table("ts_2018-10-18", None);
    assert_eq!(
        judged(&unread, &book).unwrap().not_deletable,
        [NoEvidence::TagsNotRead]
    );
    let untagged = table("ts_2018-10-18", Some(&[]));
    assert_eq!(
        judged(&untagged, &book).unwrap().not_deletable,
        [NoEvidence::NoFamilyTag]
    );
    // No tagging API (DynamoDB Local): the ledger alone proves it.
    let mut no_api = table("ts_2018-10-18", None);
    no_api.tags_unsupported = true;
    assert!(judged(&no_api, &book).unwrap().not_deletable.is_empty());

    // Another family's tag on a table nobody recorded says whose it is; on one the ledger
    // records, identity wins (managed), but it is never deleted without our family tag.
    for name in ["ts_2018-10-18", "ts_eu_2018-10-18"] {
        let other = table(name, Some(&[(TAG_FAMILY, "ts_eu")]));
        let verdict = judged(&other, &Book::default()).unwrap();
        assert_eq!(
            verdict.owner,
            Owner::NotOurs {
                why: NotOurs::OtherFamily {
                    family: "ts_eu".into()
                }
            }
        );
        assert_eq!(verdict.not_deletable, [NoEvidence::NotOurs]);
    }
    let retagged = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts_eu")]));
    let managed = judged(&retagged, &book).unwrap();
    assert_eq!(owned_by(&managed), Some(OwnedBy::Created));
    assert_eq!(managed.not_deletable, [NoEvidence::NoFamilyTag]);
    assert_eq!(
        judged(&table("ts_eu_2018-10-18", None), &Book::default())
            .unwrap()
            .owner,
        Owner::NotOurs {
            why: NotOurs::UnknownName
        }
    );
    assert!(verdict(&table("other_2018-10-18", None)).is_none());
}

/// An intent a crashed run left: the table of its name and key created since, with our family
/// tag, is the one that run made; one created before the intent, keyed otherwise, without the
/// tag, or whose tags were not read, is not.
#[test]
fn an_intent_claims_only_the_table_of_its_name_and_key_created_since() {
    let intended = ledger_with(
        "ts_2018-10-18",
        TableState::Intended {
            at: at("2018-10-17T23:45:00Z"),
        },
    );
    let mut since = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
    since.created = Some(at("2018-10-17T23:45:02Z"));
    let resolved = judged(&since, &intended).unwrap();
    assert_eq!(owned_by(&resolved), Some(OwnedBy::Intent));
    // Recorded by this run; deleted, if ever, by a later one.
    assert!(resolved.not_deletable.contains(&NoEvidence::NotRecordedYet));
    let mut before = since.clone();
    before.created = Some(at("2018-10-17T23:30:00Z"));
    assert!(!judged(&before, &intended).unwrap().is_ours());
    let mut other_key = since.clone();
    other_key.key = Some(KeySchema {
        partition: string("id"),
        sort: None,
    });
    assert!(!judged(&other_key, &intended).unwrap().is_ours());
    // Someone's table of the name and key, made in between, without our family tag.
    let mut theirs = since.clone();
    theirs.tags = Some(BTreeMap::new());
    assert!(!judged(&theirs, &intended).unwrap().is_ours());
    let mut unread = since.clone();
    unread.tags = None;
    assert!(!judged(&unread, &intended).unwrap().is_ours());
    // An endpoint without tags (DynamoDB Local): the name, key and creation time.
    let mut untaggable = unread;
    untaggable.tags_unsupported = true;
    assert_eq!(
        owned_by(&judged(&untaggable, &intended).unwrap()),
        Some(OwnedBy::Intent)
    );
}

/// Ages come from the period recorded when the table was made; a name that says later keeps
/// it younger, and a record older than the name never makes it older.
#[test]
fn the_recorded_period_ages_a_table_and_a_later_name_keeps_it_younger() {
    let made = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
    let identity = made.identity().unwrap();
    let slot = |book: &Book, t: &ObservedTable| judged(t, book).and_then(|v| v.slot());
    let calendar = policy().calendar();
    let day = |label: &str| calendar.parse(label).unwrap();
    let book = ledger_with(
        "ts_2018-10-18",
        TableState::Made {
            identity: identity.clone(),
        },
    );
    assert_eq!(slot(&book, &made), Some(day("2018-10-18")));
    // A record saying the 19th (the table was made in another zone): the later, the 19th.
    let mut later = book.clone();
    later.tables.get_mut("ts_2018-10-18").unwrap().record.period = PeriodBounds {
        start: at("2018-10-19T00:00:00Z"),
        end: at("2018-10-20T00:00:00Z"),
    };
    assert_eq!(slot(&later, &made), Some(day("2018-10-19")));
    // A record edited to say the 1st: the name's 18th stands.
    let mut older = book;
    older.tables.get_mut("ts_2018-10-18").unwrap().record.period = PeriodBounds {
        start: at("2018-10-01T00:00:00Z"),
        end: at("2018-10-02T00:00:00Z"),
    };
    assert_eq!(slot(&older, &made), Some(day("2018-10-18")));
    // A name of another period setting is placed by its record alone.
    let monthly = table("ts_2018-10", Some(&period_tags(Some("ts"))));
    let book = ledger_with(
        "ts_2018-10",
        TableState::Made {
            identity: monthly.identity().unwrap(),
        },
    );
    assert_eq!(slot(&book, &monthly), Some(day("2018-10-18")));
    assert_eq!(
        judged(&monthly, &Book::default()).unwrap().owner,
        Owner::NotOurs {
            why: NotOurs::UnknownName
        }
    );
}

#[test]
fn a_look_alike_is_not_ours_and_a_recorded_table_rekeyed_is_never_deletable() {
    let other_key = KeySchema {
        partition: string("id"),
        sort: None,
    };
    let mut look_alike = table("ts_2018-10-18", Some(&[]));
    look_alike.key = Some(other_key.clone());
    assert_eq!(
        judged(&look_alike, &Book::default()).unwrap().owner,
        Owner::NotOurs {
            why: NotOurs::LookAlike {
                have: other_key.clone()
            }
        }
    );
    look_alike.tags = Some(BTreeMap::from([(TAG_FAMILY.to_string(), "ts".to_string())]));
    let book = ledger_with(
        "ts_2018-10-18",
        TableState::Made {
            identity: look_alike.identity().unwrap(),
        },
    );
    let changed_key = judged(&look_alike, &book).unwrap();
    assert_eq!(owned_by(&changed_key), Some(OwnedBy::Created));
    assert_eq!(
        changed_key.not_deletable,
        [NoEvidence::KeyDiffers {
            have: Some(other_key)
        }]
    );
}

#[test]
fn a_local_index_the_policy_never_had_proves_the_table_was_not_made_by_it() {
    let mut table = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
    table.local_indexes.push(ObservedLocalIndex {
        name: "by_hand".into(),
        key: None,
        projection: None,
    });
    assert_eq!(
        verdict(&table).unwrap().not_deletable,
        [NoEvidence::LocalIndexesDiffer]
    );
}

#[test]
fn an_index_is_the_policys_only_with_its_name_key_and_projection() {
    let family = [(TAG_FAMILY, "ts")];
    for (what, tweak) in [
        (
            "key",
            (|i: &mut ObservedIndex| {
                i.key = Some(KeySchema {
                    partition: string("customer"),
                    sort: None,
                })
            }) as fn(&mut ObservedIndex),
        ),
        ("projection", |i: &mut ObservedIndex| {
            i.projection = Some(Projection::KeysOnly)
        }),
        ("name", |i: &mut ObservedIndex| i.name = "by_hand".into()),
        ("unknown key", |i: &mut ObservedIndex| i.key = None),
    ] {
        let mut t = table("ts_2018-10-18", Some(&family));
        tweak(&mut t.global_indexes[0]);
        let v = verdict(&t).unwrap();
        let name = t.global_indexes[0].name.clone();
        assert!(!v.index_is_ours(&name), "{what}");
        assert!(!v.index_capacity_is_ours("ts_2018-10-18", &name), "{what}");
        assert!(!v.whole_table_is_ours(), "{what}");
        // The table's throughput stays ours, but deleting it would destroy their index.
        assert!(v.table_capacity_is_ours("ts_2018-10-18"), "{what}");
        assert_eq!(v.not_deletable, [NoEvidence::ForeignIndexes], "{what}");
    }
    // An Include projection compares as a set.
    let policy = Policy::from_toml(&POLICY.replace(
        "partition = { name = \"site\", type = \"S\" }",
        "partition = { name = \"site\", type = \"S\" }\nprojection = { include = [\"a\", \"b\"] }",
    ))
    .unwrap();
    let mut t = table("ts_2018-10-18", Some(&family));
    t.global_indexes[0].projection = Some(Projection::Include(vec!["b".into(), "a".into()]));
    assert!(
        Judge::new(&policy, &Book::enrolling(&policy, std::slice::from_ref(&t)))
            .verdict(&t)
            .unwrap()
            .index_is_ours("by_site")
    );
}

fn target(resource: &str, dimension: ScalableDimension, policies: &[&str]) -> ObservedScalableTarget {
    ObservedScalableTarget {
        key: ScalableKey {
            resource_id: resource.into(),
            dimension,
        },
        min: 1,
        max: 10,
        policies: policies
            .iter()
            .map(|name| ObservedScalingPolicy {
                name: name.to_string(),
                arn: Some(format!(
                    "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1:policyName/{}",
                    name
                )),
                policy_type: "StepScaling".into(),
                metric: None,
                target_value: None,
            })
            .collect(),
        scheduled_actions: Vec::new(),
    }
}

#[test]
fn a_target_is_ours_only_when_every_policy_on_it_is() {
    let mut t = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
    t.scaling = Some(vec![
        target(
            "table/ts_2018-10-18",
            ScalableDimension::TableRead,
            &["ddb-rollover-ts-read"],
        ),
        target(
            "table/ts_2018-10-18",
            ScalableDimension::TableWrite,
            &["ddb-rollover-ts-write", "operators-step"],
        ),
        target(
            "table/ts_2018-10-18/index/by_site",
            ScalableDimension::IndexRead,
            &["theirs"],
        ),
        // Another family's policy name is someone else's.
        target(
            "table/ts_2018-10-18/index/by_site",
            ScalableDimension::IndexWrite,
            &["ddb-rollover-ts_eu-write"],
        ),
    ]);
    let v = verdict(&t).unwrap();
    let key = |resource: &str, dimension| ScalableKey {
        resource_id: resource.into(),
        dimension,
    };
    assert_eq!(
        v.target(&key("table/ts_2018-10-18", ScalableDimension::TableRead)),
        TargetOwner::Ours
    );
    assert_eq!(
        v.target(&key("table/ts_2018-10-18", ScalableDimension::TableWrite)),
        TargetOwner::Shared
    );
    assert_eq!(
        v.target(&key(
            "table/ts_2018-10-18/index/by_site",
            ScalableDimension::IndexRead
        )),
        TargetOwner::Foreign
    );
    assert_eq!(
        v.target(&key(
            "table/ts_2018-10-18/index/by_site",
            ScalableDimension::IndexWrite
        )),
        TargetOwner::Foreign
    );
    assert!(!v.table_capacity_is_ours("ts_2018-10-18"));
    assert!(v.index_is_ours("by_site") && !v.index_capacity_is_ours("ts_2018-10-18", "by_site"));
    assert_eq!(v.not_deletable, [NoEvidence::ForeignScaling]);

    // Not read: nothing known, so nothing proven.
    t.scaling = None;
    assert_eq!(verdict(&t).unwrap().not_deletable, [NoEvidence::ScalingNotRead]);
    // An endpoint without Application Auto Scaling has no targets: proven.
    t.scaling_unsupported = true;
    assert!(verdict(&t).unwrap().not_deletable.is_empty());
}

#[test]
fn a_scheduled_action_makes_a_target_someone_elses_and_vetoes_deletion() {
    let mut t = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
    let mut read = target(
        "table/ts_2018-10-18",
        ScalableDimension::TableRead,
        &["ddb-rollover-ts-read"],
    );
    read.scheduled_actions = vec!["nightly-scale-up".into()];
    let mut index_write = target(
        "table/ts_2018-10-18/index/by_site",
        ScalableDimension::IndexWrite,
        &[],
    );
    index_write.scheduled_actions = vec!["weekend".into()];
    t.scaling = Some(vec![read.clone(), index_write.clone()]);
    let v = verdict(&t).unwrap();
    // Our policy with their scheduled action: ours is removed, the target never deregistered.
    assert_eq!(v.target(&read.key), TargetOwner::Shared);
    assert_eq!(v.target(&index_write.key), TargetOwner::Foreign);
    assert!(v.our_targets.is_empty());
    assert!(!v.table_capacity_is_ours("ts_2018-10-18"));
    assert!(!v.index_capacity_is_ours("ts_2018-10-18", "by_site"));
    assert_eq!(v.not_deletable, [NoEvidence::ForeignScaling]);
    let shown: Vec<String> = v.foreign.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "scalable target table/ts_2018-10-18 read (ours, and also scheduled actions: nightly-scale-up)",
            "scalable target table/ts_2018-10-18/index/by_site write (scheduled actions: weekend)",
        ]
    );
}

#[test]
fn deletion_protection_is_ours_only_when_the_policy_asks_for_it() {
    let mut t = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
    t.deletion_protection = true;
    for template in ["", "[template]\ndeletion_protection = false\n"] {
        let policy = Policy::from_toml(&format!("{POLICY}{template}")).unwrap();
        let v = Judge::new(&policy, &Book::enrolling(&policy, std::slice::from_ref(&t)))
            .verdict(&t)
            .unwrap();
        assert!(v.protection_is_foreign(), "{template:?}");
        assert_eq!(v.foreign, [ForeignPart::DeletionProtection], "{template:?}");
        assert_eq!(
            v.not_deletable,
            [NoEvidence::ForeignDeletionProtection],
            "{template:?}"
        );
        // It holds no throughput: capacity and billing stay ours.
        assert!(v.table_capacity_is_ours("ts_2018-10-18") && v.whole_table_is_ours());
    }
    let asks = Policy::from_toml(&format!("{POLICY}[template]\ndeletion_protection = true\n")).unwrap();
    let v = Judge::new(&asks, &Book::enrolling(&asks, std::slice::from_ref(&t)))
        .verdict(&t)
        .unwrap();
    assert!(!v.protection_is_foreign() && v.foreign.is_empty() && v.not_deletable.is_empty());
    // Off: nothing to say.
    t.deletion_protection = false;
    assert!(verdict(&t).unwrap().foreign.is_empty());
}
