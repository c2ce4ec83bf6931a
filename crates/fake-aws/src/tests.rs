//! The fake against what AWS documents: statuses on the fake clock, decrease budgets, the role's
//! IAM, Application Auto Scaling's deregistration, the clock, the operator, seals and exports.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::control::{Clock, ControlPlaneError, ErrorKind, Scaling, Tables};
use ddb_rollover::policy::{Billing, Capacity, KeySchema};
use ddb_rollover::policy::{DeregisterScaling, RegisterScaling, ScalableDimension};
use ddb_rollover::table::TableStatus;
use ddb_rollover::table::{CapacityChange, ExportRequest, TableSpec, TagChange};
use ddb_rollover::table::{ResourcePolicy, NO_POLICY};

use crate::objects::arn_of;
use crate::*;
use chrono::TimeZone;
use ddb_rollover::policy::{AttributeKind, KeyAttribute};
use ddb_rollover::policy::{ScalingRemoval, ScalingTarget};
use ddb_rollover::table::IndexCapacityChange;
use futures::executor::block_on;

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 3, 30, h, m, 0).unwrap()
}

/// A number partition key `pk` and no sort key.
pub(crate) fn key() -> KeySchema {
    KeySchema {
        partition: KeyAttribute {
            name: "pk".into(),
            kind: AttributeKind::N,
        },
        sort: None,
    }
}

fn spec(name: &str, family: Option<&str>) -> TableSpec {
    let billing = Billing::Provisioned(Capacity {
        read: 100,
        write: 100,
    });
    TableSpec {
        tags: family
            .map(|f| BTreeMap::from([(FAMILY_TAG.to_string(), f.to_string())]))
            .unwrap_or_default(),
        ..table_spec(name, key(), billing)
    }
}

fn capacity(name: &str, from: i64, to: i64) -> CapacityChange {
    CapacityChange {
        name: name.into(),
        from: Billing::Provisioned(Capacity {
            read: from,
            write: from,
        }),
        to: Billing::Provisioned(Capacity { read: to, write: to }),
        indexes: Vec::<IndexCapacityChange>::new(),
    }
}

fn kind<T>(result: Result<T, ControlPlaneError>) -> ErrorKind {
    result.err().expect("an error").kind
}

#[test]
fn decrease_budget() {
    let mut d = Decreases::default();
    for m in 0..4 {
        assert!(d.allowed(at(0, m)));
        d.at.push(at(0, m));
    }
    assert!(!d.allowed(at(0, 30)));
    assert!(d.allowed(at(1, 3)));
    d.at.push(at(1, 3));
    assert!(!d.allowed(at(1, 30)));
    // A new UTC day.
    assert!(d.allowed(Utc.with_ymd_and_hms(2024, 3, 31, 0, 0, 0).unwrap()));
    assert_eq!(d.today(at(5, 0)), 5);
}

#[test]
fn tables_go_through_their_statuses_on_the_fake_clock() {
    let fake = FakeAws::new("ts", at(0, 0), Config::default());
    // The role creates only tables that carry its family tag.
    assert_eq!(
        kind(block_on(fake.create_table(&spec("ts_a", None)))),
        ErrorKind::Other
    );
    block_on(fake.create_table(&spec("ts_a", Some("ts")))).unwrap();
    assert_eq!(
        kind(block_on(fake.create_table(&spec("ts_a", Some("ts"))))),
        ErrorKind::AlreadyExists
    );
    let status = || block_on(fake.describe_table("ts_a")).unwrap().map(|t| t.status);
    assert_eq!(status(), Some(TableStatus::Creating));
    assert_eq!(
        kind(block_on(fake.update_capacity(&capacity("ts_a", 100, 50)))),
        ErrorKind::InUse
    );
    block_on(fake.sleep(std::time::Duration::from_secs(20)));
    assert_eq!(fake.now(), at(0, 0) + Duration::seconds(20));
    assert_eq!(status(), Some(TableStatus::Active));
    // Unchanged throughput, then four decreases, then one an hour.
    assert_eq!(
        kind(block_on(fake.update_capacity(&capacity("ts_a", 50, 100)))),
        ErrorKind::NoChange
    );
    for units in [90, 80, 70, 60] {
        block_on(fake.update_capacity(&capacity("ts_a", units + 10, units))).unwrap();
        assert_eq!(status(), Some(TableStatus::Updating));
        fake.advance(Duration::minutes(1));
    }
    assert_eq!(
        block_on(fake.describe_table("ts_a"))
            .unwrap()
            .unwrap()
            .decreases_today,
        4
    );
    assert_eq!(
        kind(block_on(fake.update_capacity(&capacity("ts_a", 60, 50)))),
        ErrorKind::LimitExceeded
    );
    fake.advance(Duration::hours(1));
    block_on(fake.update_capacity(&capacity("ts_a", 60, 50))).unwrap();
    fake.advance(Duration::minutes(1));
    // Deleting: DELETING, listed, then gone.
    block_on(fake.delete_table("ts_a")).unwrap();
    assert_eq!(status(), Some(TableStatus::Deleting));
    // The family's ledger (the stack's) is listed beside it.
    assert_eq!(
        block_on(fake.list_table_names("ts_")).unwrap(),
        ["ts_a", "ts_ledger"]
    );
    fake.advance(Duration::minutes(1));
    assert_eq!(status(), None);
    assert_eq!(
        kind(block_on(fake.update_capacity(&capacity("ts_a", 50, 60)))),
        ErrorKind::NotFound
    );
    assert_eq!(fake.snapshot().gone.len(), 1);
}

#[test]
fn the_role_changes_only_its_familys_tables_and_deletes_only_tagged_ones() {
    let fake = FakeAws::new("ts", at(0, 0), Config::default());
    fake.foreign_create_table("someone", &spec("ts_eu_a", Some("ts_eu")))
        .unwrap();
    fake.foreign_create_table("someone", &spec("ts_b", None)).unwrap();
    fake.foreign_create_table("someone", &spec("other_c", None))
        .unwrap();
    fake.advance(Duration::minutes(1));
    let denied = |result: Result<(), ControlPlaneError>| {
        let e = result.expect_err("denied");
        assert_eq!(e.kind, ErrorKind::Other);
        assert!(e.message.starts_with("AccessDeniedException"), "{}", e.message);
    };
    denied(block_on(fake.update_capacity(&capacity("ts_eu_a", 100, 50))));
    denied(block_on(fake.update_capacity(&capacity("other_c", 100, 50))));
    assert!(block_on(fake.describe_table("other_c")).is_err());
    let tag = |name: &str, family: &str| TagChange {
        name: name.into(),
        arn: arn_of(name),
        tags: BTreeMap::from([(FAMILY_TAG.to_string(), family.to_string())]),
    };
    denied(block_on(fake.tag_table(&tag("ts_b", "ts_eu"))));
    // An untagged table may be changed and deleted only once it carries the family tag.
    denied(block_on(fake.delete_table("ts_b")));
    block_on(fake.update_capacity(&capacity("ts_b", 100, 50))).unwrap();
    block_on(fake.tag_table(&tag("ts_b", "ts"))).unwrap();
    fake.advance(Duration::minutes(1));
    block_on(fake.delete_table("ts_b")).unwrap();
    let calls = fake.calls_since(0);
    assert!(calls.iter().filter(|c| c.actor == Maker::Us).any(|c| matches!(
        c.effects.as_slice(),
        [Effect::Tagged { before, .. }] if before.is_empty()
    )));
    // Another family's role: its own tables only.
    let sibling = fake.acting_as("ts_eu", "family ts_eu");
    block_on(sibling.update_capacity(&capacity("ts_eu_a", 100, 50))).unwrap();
    assert_eq!(
        fake.snapshot().tables["ts_eu_a"].maker,
        Maker::Foreign("someone".into())
    );
}

/// The template's role decides: CreateTable needs our family tag in the request (none, or
/// another family's, is refused), and DeleteTable needs it on the table.
#[test]
fn the_templates_role_decides_create_and_delete_by_the_family_tag() {
    let fake = FakeAws::new("ts", at(0, 0), Config::default());
    for refused in [spec("ts_a", None), spec("ts_a", Some("ts_eu"))] {
        let e = block_on(fake.create_table(&refused)).expect_err("no family tag of ours");
        assert!(
            e.message
                .contains("not authorized to perform: dynamodb:CreateTable"),
            "{e}"
        );
    }
    block_on(fake.create_table(&spec("ts_a", Some("ts")))).unwrap();
    fake.foreign_create_table("someone", &spec("ts_b", None)).unwrap();
    fake.advance(Duration::minutes(1));
    let e = block_on(fake.delete_table("ts_b")).expect_err("an untagged table");
    assert!(
        e.message
            .contains("not authorized to perform: dynamodb:DeleteTable"),
        "{e}"
    );
    block_on(fake.delete_table("ts_a")).unwrap();
}

#[test]
fn deregistering_a_target_deletes_every_policy_and_deleting_a_table_leaves_targets() {
    let fake = FakeAws::new("ts", at(0, 0), Config::default());
    block_on(fake.create_table(&spec("ts_a", Some("ts")))).unwrap();
    let key = key_for("ts_a", None, ScalableDimension::TableWrite);
    let register = RegisterScaling {
        name: "ts_a".into(),
        targets: vec![ScalingTarget {
            key: key.clone(),
            min: 5,
            max: 50,
            target: 70,
            policy_name: "ddb-rollover-ts-write".into(),
        }],
    };
    // Not while CREATING (Application Auto Scaling: the resource does not exist yet).
    assert_eq!(kind(block_on(fake.register_scaling(&register))), ErrorKind::InUse);
    fake.advance(Duration::minutes(1));
    block_on(fake.register_scaling(&register)).unwrap();
    // The autoscaler brought the write capacity within the bounds (a decrease).
    let table = &fake.snapshot().tables["ts_a"];
    assert_eq!(
        table.billing,
        Billing::Provisioned(Capacity { read: 100, write: 50 })
    );
    assert_eq!(table.decreases.today(fake.now()), 1);
    fake.foreign_put_policy("ops", &key, "ops-step", "StepScaling")
        .unwrap();
    let observed = block_on(fake.describe_scaling(&["ts_a".to_string()])).unwrap();
    assert_eq!(observed[0].policies.len(), 2);
    // The adapter's contract: our policy goes; the target stays while a policy is left.
    let ours = DeregisterScaling {
        name: "ts_a".into(),
        targets: vec![ScalingRemoval {
            key: key.clone(),
            policy_name: "ddb-rollover-ts-write".into(),
            deregister_target: true,
        }],
    };
    let logged = fake.log_len();
    let kept = block_on(fake.deregister_scaling(&ours)).unwrap();
    // Said for the run's report, as the SDK adapter says it.
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        kept[0].contains("left registered") && kept[0].contains("ops-step"),
        "{kept:?}"
    );
    let effects = &fake.calls_since(logged)[0].effects;
    assert!(
        matches!(&effects[..], [Effect::DeletedPolicy { policy, .. }] if policy.name == "ddb-rollover-ts-write")
    );
    let observed = block_on(fake.describe_scaling(&["ts_a".to_string()])).unwrap();
    assert_eq!(observed[0].policies.len(), 1);
    // DeregisterScalableTarget itself deletes every policy on the target.
    let logged = fake.log_len();
    fake.foreign_deregister_target("ops", &key).unwrap();
    let effects = &fake.calls_since(logged)[0].effects;
    assert!(
        matches!(&effects[..], [Effect::DeregisteredTarget { policies, .. }]
        if policies.len() == 1 && policies[0].name == "ops-step")
    );
    // Ours alone: deleted, then deregistered; asked not to deregister, the target stays.
    block_on(fake.register_scaling(&register)).unwrap();
    let keep = DeregisterScaling {
        targets: vec![ScalingRemoval {
            deregister_target: false,
            ..ours.targets[0].clone()
        }],
        ..ours.clone()
    };
    block_on(fake.deregister_scaling(&keep)).unwrap();
    assert_eq!(fake.snapshot().targets[&key].policies.len(), 0);
    block_on(fake.register_scaling(&register)).unwrap();
    let logged = fake.log_len();
    block_on(fake.deregister_scaling(&ours)).unwrap();
    let effects = &fake.calls_since(logged)[0].effects;
    assert!(matches!(
        &effects[..],
        [Effect::DeletedPolicy { .. }, Effect::DeregisteredTarget { policies, .. }] if policies.is_empty()
    ));
    assert!(fake.snapshot().targets.is_empty());
    // A deleted table's targets stay.
    fake.foreign_register_target("ops", &key, 1, 10).unwrap();
    fake.advance(Duration::minutes(1));
    block_on(fake.delete_table("ts_a")).unwrap();
    fake.advance(Duration::minutes(5));
    assert_eq!(fake.snapshot().tables.keys().collect::<Vec<_>>(), ["ts_ledger"]);
    assert_eq!(
        block_on(fake.describe_scaling(&["ts_a".to_string()]))
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn the_control_planes_clock_is_the_fake_time() {
    let fake = FakeAws::new("ts", at(0, 0), Config::default());
    let start = Clock::now(&fake);
    block_on(fake.sleep(std::time::Duration::from_secs(90)));
    assert_eq!(Clock::now(&fake) - start, std::time::Duration::from_secs(90));
    fake.set_now(at(1, 0));
    assert_eq!(Clock::now(&fake) - start, std::time::Duration::from_secs(3600));
    // Every view of the account shares it.
    assert_eq!(
        Clock::now(&fake.operator()) - start,
        std::time::Duration::from_secs(3600)
    );
}

#[test]
fn the_operator_is_not_bound_by_the_role() {
    let fake = FakeAws::new("ts", at(0, 0), Config::default());
    fake.foreign_create_table("someone", &spec("ts_b", None)).unwrap();
    fake.advance(Duration::minutes(1));
    let tag = TagChange {
        name: "ts_b".into(),
        arn: arn_of("ts_b"),
        tags: BTreeMap::from([(FAMILY_TAG.to_string(), "ts".to_string())]),
    };
    block_on(fake.operator().tag_table(&tag)).unwrap();
    let call = fake.calls_since(0).pop().unwrap();
    assert_eq!(call.actor, Maker::Foreign("operator".into()));
    assert_eq!(call.role, None);
    assert!(!fake.snapshot().tables["ts_b"].adopted);
    fake.mark_adopted("ts_b");
    assert!(fake.snapshot().tables["ts_b"].adopted);
}

#[test]
fn item_writes_are_refused_under_a_seal_and_exports_hold_the_table_as_of_their_time() {
    let fake = FakeAws::new("ts", at(0, 0), Config::default());
    block_on(fake.create_table(&spec("ts_a", Some("ts")))).unwrap();
    fake.advance(Duration::minutes(1));
    block_on(fake.enable_point_in_time_recovery("ts_a")).unwrap();
    let items = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    fake.write_items("app", "ts_a", &items(&["1", "2", "3"])).unwrap();
    let export = |fake: &FakeAws| {
        block_on(fake.export_table(&ExportRequest {
            name: "ts_a".into(),
            table_arn: arn_of("ts_a"),
            bucket: "b".into(),
            prefix: "p/ts_a/".into(),
            bucket_owner: crate::ACCOUNT_ID.into(),
            after_seal: false,
        }))
        .unwrap()
    };
    let first = export(&fake);
    fake.write_items("app", "ts_a", &items(&["4", "5"])).unwrap();
    assert_eq!(
        fake.snapshot().exports[&first].items.len(),
        3,
        "as of its ExportTime"
    );

    // The seal: a conditional put on no policy, then a deny that applies after the delay.
    let none = block_on(fake.get_resource_policy("ts_a", &arn_of("ts_a"))).unwrap();
    assert_eq!(none, ResourcePolicy::default());
    let document = none.with_seal(&arn_of("ts_a")).unwrap();
    let stale = block_on(fake.put_resource_policy("ts_a", &arn_of("ts_a"), &document, "123"));
    assert!(stale.unwrap_err().message.contains("PolicyNotFoundException"));
    let revision = block_on(fake.put_resource_policy("ts_a", &arn_of("ts_a"), &document, NO_POLICY)).unwrap();
    fake.write_items("app", "ts_a", &items(&["6"])).unwrap();
    fake.advance(Config::default().policy_delay);
    let refused = fake.write_items("app", "ts_a", &items(&["7"])).unwrap_err();
    assert!(refused.message.contains("AccessDeniedException"), "{refused}");
    let sealed = export(&fake);
    assert_eq!(fake.snapshot().exports[&sealed].items.len(), 6);

    // DeleteTable keeps what the table held, writes while DELETING included.
    block_on(fake.delete_table("ts_a")).unwrap();
    let world = fake.snapshot();
    let Some(Effect::DeletedTable { table }) = world.log.last().and_then(|c| c.effects.first()) else {
        panic!("{:?}", world.log.last());
    };
    assert_eq!(table.items.len(), 6);
    assert_eq!(world.writes.len(), 6);

    // Unsealing names the revision it read.
    let other = block_on(fake.delete_resource_policy("ts_a", &arn_of("ts_a"), "1"));
    assert!(other.unwrap_err().message.contains("PolicyNotFoundException"));
    block_on(fake.delete_resource_policy("ts_a", &arn_of("ts_a"), &revision)).unwrap();
}

/// S3 as the archive proof reads it: a read expecting another owner than the bucket's is 403,
/// a lifecycle Expiration rule is said on every read of the objects under its prefix, and an
/// export naming an owner that does not own the bucket FAILS without writing.
#[test]
fn buckets_have_owners_and_lifecycle_rules() {
    use ddb_rollover::control::{ArchiveStore, Bucket};
    let fake = FakeAws::new("ts", at(0, 0), Config::default());
    fake.foreign_put_object("someone", "b", "p/k", b"x");
    let ours = Bucket {
        name: "b",
        owner: crate::ACCOUNT_ID,
    };
    let theirs = Bucket {
        name: "b",
        owner: "210987654321",
    };
    let s3 = fake.snapshot().s3_snapshot();
    assert_eq!(block_on(s3.head(ours, "p/k")).unwrap().unwrap().expiration, None);
    let refused = block_on(s3.get(theirs, "p/k")).unwrap_err();
    assert!(
        refused.contains("403") && refused.contains("210987654321"),
        "{refused}"
    );

    fake.foreign_put_lifecycle_expiration("someone", "b", "tidy up", "p/", 3);
    let s3 = fake.snapshot().s3_snapshot();
    let expiration = block_on(s3.head(ours, "p/k")).unwrap().unwrap().expiration;
    assert_eq!(
        expiration.as_deref(),
        Some("expiry-date=\"Wed, 03 Apr 2024 00:00:00 GMT\", rule-id=\"tidy%20up\"")
    );
    assert_eq!(
        block_on(s3.get(ours, "p/k")).unwrap().unwrap().expiration,
        expiration
    );
    fake.foreign_delete_lifecycle("someone", "b");
    let s3 = fake.snapshot().s3_snapshot();
    assert_eq!(block_on(s3.get(ours, "p/k")).unwrap().unwrap().expiration, None);

    // The bucket's name taken by another account: an export naming ours fails, unwritten.
    fake.foreign_bucket_owner("someone", "b", "210987654321");
    block_on(fake.create_table(&spec("ts_a", Some("ts")))).unwrap();
    fake.advance(Duration::minutes(1));
    block_on(fake.enable_point_in_time_recovery("ts_a")).unwrap();
    let export = block_on(fake.export_table(&ExportRequest {
        name: "ts_a".into(),
        table_arn: arn_of("ts_a"),
        bucket: "b".into(),
        prefix: "p/ts_a/".into(),
        bucket_owner: crate::ACCOUNT_ID.into(),
        after_seal: false,
    }))
    .unwrap();
    fake.advance(Duration::hours(2));
    let world = fake.snapshot();
    assert_eq!(
        world.exports[&export].status,
        ddb_rollover::table::ExportStatus::Failed
    );
    assert!(
        world.s3.keys().all(|(_, key)| key == "p/k"),
        "{:?}",
        world.s3.keys()
    );
}
