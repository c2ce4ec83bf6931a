//! The family's ledger on the in-memory account: what the runs do because of what it records
//! (issue 37's findings 2, 3, 7, 10 and 11, each on the daily family of `common::daily`), and
//! what they do when it is missing. Every state is read back from the fake, not from a report.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::control::ErrorKind;
use ddb_rollover::ledger::{keys, Lease, StoredRecord};
use ddb_rollover::policy::{Billing, Capacity};
use ddb_rollover::policy::{TAG_FAMILY, TAG_PERIOD_END, TAG_PERIOD_START};
use ddb_rollover::status;
use ddb_rollover::{check_clock, simulation, ClockAllowance};
use ddb_rollover::{init, Enrolment};
use ddb_rollover::{observe, run, ApplyOptions, CheckedInstant, Operation, Policy, RunReport, Scope};
use fake_aws::{FakeAws, Maker};

use crate::common::daily::*;

const LEDGER: &str = "back_ledger";

/// `operation` for the instant `at`, checked as the CLI and the functions check it against
/// the fake's clock (the wall): a past instant is allowed, and the run knows the wall.
async fn run_for(fake: &FakeAws, policy: &Policy, operation: Operation, at: DateTime<Utc>) -> RunReport {
    let checked: CheckedInstant =
        check_clock(policy, &[operation], at, fake.now(), ClockAllowance::default()).unwrap();
    run(fake, policy, operation, &checked, ApplyOptions::default())
        .await
        .unwrap()
}

/// The body of the ledger's record at `key`, read from the fake.
fn record_body(fake: &FakeAws, key: &str) -> Option<String> {
    fake.state().tables[LEDGER]
        .records
        .iter()
        .find(|((_, k), _)| k == key)
        .map(|(_, r)| r.body.clone())
}

fn capacity(fake: &FakeAws, table: &str) -> Billing {
    fake.state().tables[table].billing
}

/// Phase 1 of [`POLICY`]: yesterday's and older tables.
const AGED: Billing = Billing::Provisioned(Capacity { read: 5, write: 1 });
/// Phase 0 of [`POLICY`]: the current and pre-built tables.
const CURRENT: Billing = Billing::Provisioned(Capacity { read: 20, write: 50 });

/// Finding 2: `create-new --at` an instant in the past (a typo, a dead-letter replay) does not
/// make again the table of a period retention archived and deleted: the receipt that deletion
/// wrote keeps the period, and the run says so and fails (the table it was asked for is not
/// there).
#[tokio::test]
async fn a_past_instant_does_not_make_a_deleted_period_again() {
    let (policy, fake, _) = archived_and_deleted().await;
    assert!(!fake.state().tables.contains_key(TABLE));
    let report = run_for(&fake, &policy, Operation::CreateNew, at(day(1), "23:45:00")).await;
    assert!(
        !fake.state().tables.contains_key(TABLE),
        "{TABLE} made again: {report:#?}"
    );
    let line = report
        .tables
        .iter()
        .find(|l| l.item.facts.table == TABLE)
        .unwrap_or_else(|| panic!("no line for {TABLE}: {report:#?}"));
    assert!(line.item.reason.contains("receipt"), "{line:#?}");
    assert!(!report.succeeded(), "{report:#?}");
}

/// Finding 3: a new `timezone` moves the names' periods, not the tables': the table writers are
/// using now (its recorded period holds now) keeps phase 0, though by its name in the new zone
/// it is yesterday's; the one whose recorded period has passed is lowered as before.
#[tokio::test]
async fn a_new_time_zone_ages_tables_by_their_recorded_periods() {
    let policy = policy();
    let fake = account();
    for n in 1..=4 {
        day_runs(&fake, &policy, day(n)).await;
    }
    assert_eq!(capacity(&fake, "back_2018-10-05"), CURRENT);
    // Noon UTC on 10-05 is 02:00 on 10-06 in Kiritimati (UTC+14).
    let moved = Policy::from_toml(&POLICY.replace(
        "premake = 1\n",
        "premake = 1\ntimezone = \"Pacific/Kiritimati\"\n",
    ))
    .unwrap();
    fake.set_now(at(day(5), "12:00:00"));
    let report = run_for(&fake, &moved, Operation::ResizeOld, fake.now()).await;
    assert_eq!(
        capacity(&fake, "back_2018-10-05"),
        CURRENT,
        "the table of now was lowered: {report:#?}"
    );
    assert_eq!(capacity(&fake, "back_2018-10-04"), AGED);
}

/// Finding 7: a run while another run of the operation holds its lease (a redelivered schedule
/// beside a console test) waits up to two minutes for it; still held, it changes nothing and
/// says why; given back or lapsed meanwhile, the run reads again and does the work.
#[tokio::test]
async fn a_run_while_another_holds_the_lease_changes_nothing() {
    let policy = policy();
    let fake = account();
    for n in 1..=3 {
        day_runs(&fake, &policy, day(n)).await;
    }
    one_run(&fake, &policy, Operation::CreateNew, at(day(4), "23:45:00")).await;
    let when = at(day(5), "00:15:00");
    fake.set_now(when);
    let lease = Lease {
        holder: "another run".into(),
        until: when + Duration::minutes(10),
    };
    let key = keys::lease("resize_old");
    let record = StoredRecord {
        key: key.clone(),
        version: 1,
        body: serde_json::to_string(&lease).unwrap(),
        expires: Some(lease.until.timestamp()),
    };
    fake.put_record_as(&Maker::Us, LEDGER, "back", &record).unwrap();
    let sent = fake.requests().len();
    let report = run_for(&fake, &policy, Operation::ResizeOld, when).await;
    let changed: Vec<String> = fake.requests()[sent..]
        .iter()
        .filter(|r| !r.is_read() && r.table != LEDGER)
        .map(ToString::to_string)
        .collect();
    assert!(
        changed.is_empty(),
        "changed under another run's lease: {changed:?}"
    );
    assert_eq!(capacity(&fake, "back_2018-10-04"), CURRENT);
    assert!(
        report.tables.iter().any(|l| l.item.reason.contains("lease")),
        "{report:#?}"
    );
    // A lease that lapses within the run's wait (two minutes): the run waits for it, reads
    // again and does the work.
    fake.set_now(when + Duration::minutes(11));
    let until = fake.now() + Duration::seconds(30);
    let record = StoredRecord {
        version: 2,
        body: serde_json::to_string(&Lease { until, ..lease }).unwrap(),
        expires: Some(until.timestamp()),
        ..record
    };
    fake.put_record_as(&Maker::Us, LEDGER, "back", &record).unwrap();
    let report = run_for(&fake, &policy, Operation::ResizeOld, fake.now()).await;
    assert!(report.succeeded(), "{report:#?}");
    assert!(fake.now() >= until, "did not wait for the lease");
    assert_eq!(capacity(&fake, "back_2018-10-04"), AGED);
}

/// Finding 10: a create_new more than a period late with its original instant (a retried
/// event) does not raise an aged table back to phase 0: the wall clock has passed its period.
#[tokio::test]
async fn a_late_create_new_does_not_raise_an_aged_table() {
    let policy = policy();
    let fake = account();
    for n in 1..=4 {
        day_runs(&fake, &policy, day(n)).await;
    }
    assert_eq!(capacity(&fake, "back_2018-10-03"), AGED);
    fake.set_now(at(day(5), "01:00:00"));
    let report = run_for(&fake, &policy, Operation::CreateNew, at(day(2), "23:45:00")).await;
    assert_eq!(
        capacity(&fake, "back_2018-10-03"),
        AGED,
        "an aged table raised: {report:#?}"
    );
}

/// Finding 11: a seal the ledger records is shown by `status` and lifted when the table stops
/// being due for deletion, `[retention]` removed from the policy included (its resource-based
/// policy is read because the ledger says we sealed it); the record and `status` say so after.
#[tokio::test]
async fn a_recorded_seal_is_lifted_when_retention_is_called_off() {
    let policy = policy();
    let fake = account();
    let mut d = day(1);
    let sealed = |fake: &FakeAws| {
        fake.state()
            .tables
            .get(TABLE)
            .is_some_and(|t| t.resource_policy.is_some())
    };
    while !sealed(&fake) {
        day_runs(&fake, &policy, d).await;
        d += Duration::days(1);
        assert!(d < day(12), "{TABLE} never sealed");
    }
    let recorded_seal =
        |fake: &FakeAws| record_body(fake, &keys::table(TABLE)).map(|body| body.contains("\"seal\":{"));
    assert_eq!(recorded_seal(&fake), Some(true), "the seal is not in the ledger");
    // `status` shows it, from the ledger.
    let shown = |fake: &FakeAws, policy: &Policy| {
        let now = fake.now();
        let observation = futures::executor::block_on(observe(fake, policy, Scope::Full(now), 8)).unwrap();
        status(policy, now, &observation)
            .tables
            .into_iter()
            .find(|l| l.facts.table == TABLE)
            .and_then(|l| l.sealed)
    };
    assert!(shown(&fake, &policy).is_some(), "status does not show the seal");
    let called_off = Policy::from_toml(&POLICY[..POLICY.find("[retention]").unwrap()]).unwrap();
    one_run(&fake, &called_off, Operation::ResizeOld, at(d, "00:15:00")).await;
    assert!(!sealed(&fake), "still sealed with retention called off");
    assert_eq!(recorded_seal(&fake), Some(false));
    assert_eq!(shown(&fake, &called_off), None);
}

/// A family whose ledger table is gone (deleted by hand) is loud: create_new fails, naming the
/// ledger and `init`; nothing is deleted while it cannot be read, and no table is made.
#[tokio::test]
async fn a_missing_ledger_fails_the_run_and_names_init() {
    let policy = policy();
    let fake = account();
    for n in 1..=2 {
        day_runs(&fake, &policy, day(n)).await;
    }
    fake.foreign_deletion_protection("ops", LEDGER, false).ok();
    fake.advance(Duration::minutes(1));
    fake.foreign_delete_table("ops", LEDGER).unwrap();
    fake.advance(Duration::minutes(5));
    let when = at(day(3), "23:45:00");
    fake.set_now(when);
    let report = run(
        &fake,
        &policy,
        Operation::CreateNew,
        &simulation(&policy, &[Operation::CreateNew], when).unwrap(),
        ApplyOptions::default(),
    )
    .await
    .unwrap();
    assert!(!report.succeeded(), "{report:#?}");
    let text = format!("{report:?}");
    assert!(text.contains(LEDGER) && text.contains("init"), "{report:#?}");
    let tables = fake.state().tables;
    assert!(tables.contains_key("back_2018-10-01"), "deleted without a ledger");
    // Nor is a table made that nothing could record (hostile read, F4: it was).
    assert!(
        !tables.contains_key("back_2018-10-04"),
        "created without a ledger"
    );
}

/// A create_new that made the next table and crashed before recording it (its ledger write
/// failed): a run once the writer cannot be alive records the table DynamoDB shows, and the
/// period is ready. Before, the record the later run wanted to write was mistaken for a table
/// of someone else's holding the name: the run was blocked, and so was every run after it.
#[tokio::test]
async fn a_table_whose_record_was_lost_is_recorded_by_a_later_run() {
    let policy = policy();
    let fake = account();
    day_runs(&fake, &policy, day(1)).await;
    let next = "back_2018-10-03";
    fake.around(fake_aws::Around::After, "CreateTable", next, |fake| {
        fake.fail_times("PutItem", LEDGER, ErrorKind::Other, 1);
    });
    fake.set_now(at(day(2), "23:45:00"));
    let crashed = run_for(&fake, &policy, Operation::CreateNew, fake.now()).await;
    assert!(!crashed.succeeded(), "{crashed:#?}");
    assert!(fake.state().tables.contains_key(next));
    let intended = |fake: &FakeAws| {
        record_body(fake, &keys::table(next)).map(|body| body.contains("\"state\":\"intended\""))
    };
    assert_eq!(intended(&fake), Some(true), "the intent is not in the ledger");
    // A run for an instant in the past, minutes after the crash by the wall clock: the run
    // that wrote the intent may still be alive, so it is not resolved (intents age on the
    // wall clock, not on the instant a run acts for).
    fake.advance(Duration::minutes(3));
    run_for(
        &fake,
        &policy,
        Operation::ResizeOld,
        fake.now() - Duration::hours(6),
    )
    .await;
    assert_eq!(intended(&fake), Some(true), "resolved minutes after the intent");
    fake.advance(Duration::minutes(20));
    let later = run_for(&fake, &policy, Operation::CreateNew, fake.now()).await;
    assert!(later.succeeded(), "{later:#?}");
    assert!(
        later.next_table_ready.as_ref().is_some_and(|r| r.ready),
        "{later:#?}"
    );
    assert_eq!(intended(&fake), Some(false), "the table is not recorded as made");
}

/// A table carrying copies of our tags (family, period), made by someone once the ledger
/// exists, or made again under a name the ledger records: `init` records neither (hostile
/// read of issue 37, F1: `init --yes` enrolled both, and retention then deleted them). The
/// ledger's records stay as they were, and its `meta` keeps when and how it started.
#[tokio::test]
async fn init_records_no_table_made_after_the_ledger_or_over_a_record() {
    let policy = policy();
    let fake = account();
    day_runs(&fake, &policy, day(1)).await;
    day_runs(&fake, &policy, day(2)).await;
    let copied = |name: &str, start: &str, end: &str| {
        let mut spec = fake_aws::table_spec(
            name,
            policy.key.clone(),
            Billing::Provisioned(Capacity { read: 50, write: 50 }),
        );
        spec.tags = BTreeMap::from([
            (TAG_FAMILY.to_string(), "back".to_string()),
            (TAG_PERIOD_START.to_string(), start.to_string()),
            (TAG_PERIOD_END.to_string(), end.to_string()),
        ]);
        spec
    };
    // A look-alike of a period before the family's first table, made now.
    let look_alike = "back_2018-09-28";
    fake.foreign_create_table(
        "someone",
        &copied(
            look_alike,
            "2018-09-28T00:00:00+00:00",
            "2018-09-29T00:00:00+00:00",
        ),
    )
    .unwrap();
    // One of ours deleted and made again by someone, with our tags.
    let made_again = "back_2018-10-02";
    let recorded = |fake: &FakeAws, name: &str| record_body(fake, &keys::table(name));
    let before = recorded(&fake, made_again).expect("ours is recorded");
    let meta = record_body(&fake, keys::META);
    assert!(meta.is_some(), "the ledger is not started");
    fake.advance(Duration::minutes(10));
    fake.foreign_delete_table("someone", made_again).unwrap();
    fake.advance(Duration::minutes(1));
    fake.foreign_create_table(
        "someone",
        &copied(
            made_again,
            "2018-10-02T00:00:00+00:00",
            "2018-10-03T00:00:00+00:00",
        ),
    )
    .unwrap();
    fake.advance(Duration::minutes(1));
    let checked = simulation(&policy, &[Operation::CreateNew], fake.now()).unwrap();
    let report = init(&fake, &policy, &checked, false).await.unwrap();
    for name in [look_alike, made_again] {
        let line = report
            .tables
            .iter()
            .find(|l| l.table == name)
            .unwrap_or_else(|| panic!("no line for {name}: {report:#?}"));
        assert!(matches!(line.action, Enrolment::Refused { .. }), "{line:#?}");
    }
    assert_eq!(recorded(&fake, look_alike), None, "the look-alike was recorded");
    assert_eq!(
        recorded(&fake, made_again),
        Some(before),
        "our record was overwritten"
    );
    assert_eq!(
        record_body(&fake, keys::META),
        meta,
        "the ledger's start was rewritten"
    );
}
