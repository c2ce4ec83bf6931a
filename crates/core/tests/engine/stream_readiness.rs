//! The family's change stream end to end over the in-memory account ([`fake_aws::FakeAws`]: a
//! destination ENABLING for `destination_delay` of fake time, then ACTIVE, or ENABLE_FAILED when
//! its Kinesis stream is missing; one destination a table): create_new enables each table's
//! destination once the table is ACTIVE and waits for it on the control plane's clock; one still
//! ENABLING when the wait ends is not ready without failing the run; ENABLE_FAILED fails the run
//! loudly on the enable's own line, with DynamoDB's reason; someone else's destination is never
//! touched. Read back from the fake, not from the report.

use crate::common::at;
use crate::common::fake_runs::create_new;
use crate::common::policies::{policy_of, STRING_KEY};
use chrono::Duration;
use ddb_rollover::policy::Precision;
use ddb_rollover::table::DestinationStatus;
use ddb_rollover::Decision;
use ddb_rollover::{run, ApplyOptions, Operation, Outcome, Policy, RunReport};
use fake_aws::{Config, FakeAws};

const STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/timeseries-changes";
const THEIRS: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/audit";
const TABLES: [&str; 2] = ["timeseries_2018-10-25", "timeseries_2018-10-26"];

fn policy() -> Policy {
    policy_of(&[STRING_KEY, &format!("[stream]\nkinesis = \"{STREAM}\"\n")])
}

/// A fresh account whose tables take 20 s to create and whose destinations take
/// `destination_delay` to enable; the family's stream exists when `stream` says so.
fn fake(destination_delay: Duration, stream: bool) -> FakeAws {
    let config = Config {
        create_delay: Duration::seconds(20),
        destination_delay,
        ..Config::default()
    };
    let fake = FakeAws::new("timeseries", at("2018-10-25T23:45:00Z"), config);
    if stream {
        fake.create_kinesis_stream(STREAM);
    }
    fake
}

/// (stream, status, made by us) of each destination the fake holds for `table`.
fn destinations(fake: &FakeAws, table: &str) -> Vec<(String, DestinationStatus, bool)> {
    fake.destinations(table)
        .into_iter()
        .map(|d| (d.stream_arn.clone(), d.observed().status, d.maker.is_us()))
        .collect()
}

fn enable_line<'r>(report: &'r RunReport, table: &str) -> &'r ddb_rollover::TableLine {
    report
        .tables
        .iter()
        .find(|l| {
            l.item.facts.table == table && matches!(l.item.decision, Decision::EnableKinesisDestination(_))
        })
        .unwrap_or_else(|| panic!("no enable line for {table}: {report:#?}"))
}

#[test]
fn create_new_enables_each_new_tables_destination_and_waits_until_it_streams() {
    let fake = fake(Duration::seconds(30), true);
    let started = fake.now();
    let report = create_new(&fake, &policy());
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(ready.ready, "{}\n{report:#?}", ready.line());
    assert!(report.summary.failed == 0, "{report:#?}");
    for table in TABLES {
        assert_eq!(enable_line(&report, table).outcome, Outcome::Done);
        assert_eq!(
            destinations(&fake, table),
            [(STREAM.to_string(), DestinationStatus::Active, true)],
            "{table}"
        );
    }
    // CREATING for 20 s, then ENABLING for 30 s: waited out on the fake's clock, the enable's
    // wait for ACTIVE and readiness's each polling at once, then after 0.5 s doubling up to 10 s.
    let waited = fake.now() - started;
    assert!(
        waited >= Duration::seconds(50) && waited <= Duration::seconds(100),
        "{waited}"
    );
    // Streaming already: the next run enables nothing and waits for nothing.
    let before = fake.now();
    let again = create_new(&fake, &policy());
    assert!(again.next_table_ready.unwrap().ready);
    assert!(again
        .tables
        .iter()
        .all(|l| !matches!(l.item.decision, Decision::EnableKinesisDestination(_))));
    assert_eq!(fake.now(), before);
}

#[test]
fn a_destination_still_enabling_when_the_wait_ends_is_not_ready_and_not_a_failure() {
    let fake = fake(Duration::minutes(10), true);
    let report = create_new(&fake, &policy());
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(!ready.ready);
    assert!(
        ready.line().contains("Kinesis destination ENABLING"),
        "{}",
        ready.line()
    );
    assert_eq!(report.summary.failed, 0, "{report:#?}");
    assert_eq!(destinations(&fake, TABLES[1])[0].1, DestinationStatus::Enabling);
}

#[test]
fn a_destination_that_ends_enable_failed_fails_the_run_on_its_own_line() {
    let fake = fake(Duration::seconds(30), false);
    let report = create_new(&fake, &policy());
    assert!(!report.next_table_ready.as_ref().unwrap().ready);
    for table in TABLES {
        let line = enable_line(&report, table);
        assert_eq!(line.outcome, Outcome::Failed, "{line:#?}");
        let error = line.error.as_deref().unwrap();
        assert!(
            error.contains("ENABLE_FAILED") && error.contains(STREAM),
            "{error}"
        );
        assert_eq!(destinations(&fake, table)[0].1, DestinationStatus::EnableFailed);
    }
    assert!(report.summary.failed > 0);
    // The stream made: the next run enables them again, and they stream.
    fake.create_kinesis_stream(STREAM);
    let again = create_new(&fake, &policy());
    assert!(again.next_table_ready.as_ref().unwrap().ready, "{again:#?}");
    for table in TABLES {
        assert!(enable_line(&again, table).item.reason.contains("ENABLE_FAILED"));
        assert!(destinations(&fake, table)
            .iter()
            .any(|(s, status, _)| s == STREAM && *status == DestinationStatus::Active));
    }
}

#[test]
fn someone_elses_destination_is_left_and_the_table_without_ours_fails_the_run() {
    let fake = fake(Duration::seconds(30), true);
    fake.create_kinesis_stream(THEIRS);
    // The tables exist and stream already (a first run); then someone's destination replaces
    // ours on the pre-built table.
    assert!(create_new(&fake, &policy()).next_table_ready.unwrap().ready);
    fake.foreign_disable_destination("someone", TABLES[1], STREAM)
        .unwrap();
    fake.advance(Duration::minutes(5));
    fake.foreign_enable_destination("someone", TABLES[1], THEIRS, Precision::Millisecond)
        .unwrap();
    fake.advance(Duration::minutes(5));
    let report = create_new(&fake, &policy());
    let line = enable_line(&report, TABLES[1]);
    assert_eq!(line.outcome, Outcome::Failed, "{line:#?}");
    let verdict = line.item.verdict.as_ref().unwrap();
    assert!(verdict.label().contains("1 foreign part"), "{}", verdict.label());
    assert!(!report.next_table_ready.as_ref().unwrap().ready);
    // Theirs is untouched: still theirs, still streaming.
    let theirs: Vec<_> = destinations(&fake, TABLES[1])
        .into_iter()
        .filter(|(s, _, _)| s == THEIRS)
        .collect();
    assert_eq!(theirs, [(THEIRS.to_string(), DestinationStatus::Active, false)]);
}

/// The ledger records the stream each destination we enabled feeds: once the policy names
/// another stream, a table still feeding the old one is ours to delete, not someone else's
/// destination keeping it for good (which the policy's stream alone made it).
#[test]
fn a_destination_we_enabled_stays_ours_after_the_policy_names_another_stream() {
    const NEXT: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/timeseries-changes-v2";
    let retention = "[retention]\ndelete_after = 1\nkeep_newest = 1\nmax_deletes_per_run = 5\n";
    let with = |stream: &str| {
        policy_of(&[
            STRING_KEY,
            &format!("[stream]\nkinesis = \"{stream}\"\n"),
            retention,
        ])
    };
    let fake = fake(Duration::seconds(30), true);
    fake.create_kinesis_stream(NEXT);
    assert!(create_new(&fake, &with(STREAM)).next_table_ready.unwrap().ready);
    assert_eq!(
        destinations(&fake, TABLES[0]),
        [(STREAM.to_string(), DestinationStatus::Active, true)]
    );
    fake.set_now(at("2018-10-27T00:15:00Z"));
    let policy = with(NEXT);
    let at = ddb_rollover::simulation(&policy, &[Operation::ResizeOld], fake.now()).unwrap();
    let report = futures::executor::block_on(run(
        &fake,
        &policy,
        Operation::ResizeOld,
        &at,
        ApplyOptions::default(),
    ))
    .unwrap();
    fake.advance(Duration::minutes(5));
    assert!(
        fake.with_world(|w| !w.tables.contains_key(TABLES[0])),
        "kept: {report:#?}"
    );
}
