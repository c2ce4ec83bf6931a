//! Loud and consistent over the in-memory account ([`fake_aws::FakeAws`]): a current or next
//! table that cannot take the writers' items fails create_new (not ready, a failed line), and
//! `status`'s health line says the same as the run, from the same derivation on what the run
//! reads. Results are read back from the fake's ground truth.

use std::collections::BTreeMap;

use crate::common::at;
use crate::common::fake_runs::create_new;
use crate::common::reports::line_with;
use chrono::Duration;
use ddb_rollover::policy::TAG_FAMILY;
use ddb_rollover::policy::{AttributeKind, Billing, Capacity, KeyAttribute, KeySchema};
use ddb_rollover::status;
use ddb_rollover::table::TableSpec;
use ddb_rollover::{observe, Outcome, Policy, Scope};
use fake_aws::{Config, FakeAws, Status, KEY_LOSS_UNTIL_ARCHIVING};

const NEXT: &str = "timeseries_2018-10-26";

fn fake() -> FakeAws {
    FakeAws::new("timeseries", at("2018-10-25T23:45:00Z"), Config::default())
}

/// `status`'s health line at the fake's clock, from a full observation.
fn health(fake: &FakeAws, policy: &Policy) -> (bool, String) {
    let observed = futures::executor::block_on(observe(fake, policy, Scope::Full(fake.now()), 4)).unwrap();
    let report = status(policy, fake.now(), &observed);
    (report.health.ready, report.health.line())
}

fn other_key() -> KeySchema {
    KeySchema {
        partition: KeyAttribute {
            name: "id".into(),
            kind: AttributeKind::S,
        },
        sort: None,
    }
}

/// Someone else's table at the next period's name: `key`, and `family` as its family tag.
fn hand_made(fake: &FakeAws, key: KeySchema, family: Option<&str>) {
    let tags = family
        .map(|f| BTreeMap::from([(TAG_FAMILY.to_string(), f.to_string())]))
        .unwrap_or_default();
    let spec = TableSpec {
        name: NEXT.into(),
        key,
        billing: Billing::Provisioned(Capacity { read: 5, write: 5 }),
        global_indexes: Vec::new(),
        local_indexes: Vec::new(),
        table_class: None,
        deletion_protection: false,
        stream: Default::default(),
        encryption: None,
        tags,
        warm: None,
    };
    fake.foreign_create_table("someone", &spec).unwrap();
    fake.advance(Duration::minutes(1));
}

/// create_new failed for `table`, said not ready, and `status` just before said the same
/// (NOT READY, with the same words for `table`).
fn loud_and_consistent(fake: &FakeAws, policy: &Policy, table: &str, says: &str) {
    let (status_ready, status_line) = health(fake, policy);
    let report = create_new(fake, policy);
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(!report.succeeded(), "{report:#?}");
    let line = line_with(&report, table, Outcome::Failed);
    assert!(
        line.error.as_deref().unwrap_or_default().contains(says),
        "{:?}",
        line.error
    );
    assert!(!ready.ready);
    assert!(ready.line().contains(says), "{}", ready.line());
    assert!(!status_ready, "status said ready: {status_line}");
    assert!(status_line.contains(says), "{status_line}");
    let mine = |line: &str| {
        line.split(", ")
            .find(|part| part.contains(table))
            .map(|s| s.trim_start_matches("NOT READY: ").to_string())
    };
    assert_eq!(
        mine(&status_line),
        mine(&ready.line()),
        "status and create_new disagree"
    );
}

/// A table carrying our family tag but another key at the next period's name: the writers'
/// items do not fit it. `status` used to say `next table ready` (its full view read the family
/// tag) while create_new failed saying no family tag claimed it (its run never read the tags).
#[test]
fn our_family_tag_on_another_key_is_not_ready_in_status_and_create_new_alike() {
    let fake = fake();
    let policy = Policy::default();
    hand_made(&fake, other_key(), Some("timeseries"));
    // Nobody recorded it: not ours, whatever its tag says.
    loud_and_consistent(&fake, &policy, NEXT, "taken by a table that is not this policy's");
    // Nothing of it was touched: still someone else's key, still there.
    let world = fake.state();
    assert_eq!(world.tables[NEXT].key, other_key());
}

/// A hand-made look-alike (another key, no tag) and another family's table at the name: not
/// ours, loud in both.
#[test]
fn a_table_not_ours_at_the_next_name_fails_create_new_and_status_agrees() {
    for family in [None, Some("timeseries_eu")] {
        let fake = fake();
        let key = if family.is_some() {
            Policy::default().key
        } else {
            other_key()
        };
        hand_made(&fake, key, family);
        loud_and_consistent(
            &fake,
            &Policy::default(),
            NEXT,
            "taken by a table that is not this policy's",
        );
    }
}

/// Every status that takes no writes and does not come back by itself fails create_new: the
/// KMS key lost (INACCESSIBLE_ENCRYPTION_CREDENTIALS), then, seven days on, ARCHIVING and
/// ARCHIVED (a table pre-built far enough ahead to still be one create_new needs).
#[test]
fn a_pre_built_table_whose_key_is_lost_or_that_is_archived_fails_create_new() {
    let policy = Policy {
        premake: 10,
        ..Policy::default()
    };
    let furthest = "timeseries_2018-11-04";
    for (wait, status, shown) in [
        (
            Duration::zero(),
            Status::InaccessibleEncryptionCredentials,
            "INACCESSIBLE_ENCRYPTION_CREDENTIALS",
        ),
        (KEY_LOSS_UNTIL_ARCHIVING, Status::Archiving, "ARCHIVING"),
        (
            KEY_LOSS_UNTIL_ARCHIVING + Duration::minutes(1),
            Status::Archived,
            "ARCHIVED",
        ),
    ] {
        let fake = fake();
        let first = create_new(&fake, &policy);
        assert!(first.succeeded(), "{first:#?}");
        fake.advance(Duration::minutes(5));
        fake.foreign_disable_key("someone", furthest).unwrap();
        fake.advance(wait);
        assert_eq!(fake.state().tables[furthest].status, status, "{shown}");
        loud_and_consistent(&fake, &policy, furthest, shown);
        // Nothing was made in its place: still the one whose key was lost.
        let world = fake.state();
        let table = &world.tables[furthest];
        assert!(
            matches!(
                table.status,
                Status::InaccessibleEncryptionCredentials | Status::Archiving | Status::Archived
            ),
            "{shown}: {:?}",
            table.status
        );
    }
}
