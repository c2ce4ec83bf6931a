//! Destinations against what AWS documents: their states on the fake clock, one a table,
//! ENABLE_FAILED for a missing stream, the errors, DeleteTable, IAM and each foreign act.

use chrono::{DateTime, Duration, TimeZone, Utc};
use ddb_rollover::control::{ErrorKind, Tables};
use ddb_rollover::policy::{Billing, Capacity};
use ddb_rollover::policy::{KinesisDestination, KinesisStreamArn, Precision};
use ddb_rollover::table::{DestinationChange, DestinationStatus};
use futures::executor::block_on;
use std::collections::BTreeMap;

use aws_model::destinations::{Status, NOT_ENABLEABLE};

use crate::{Config, Effect, FakeAws, Maker, FAMILY_TAG};

const OURS: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/ts-changes";
const THEIRS: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/someone-elses";
const TABLE: &str = "ts_a";

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 3, 30, 0, 0, 0).unwrap()
}

/// An account with the family's stream and an ACTIVE table of the family, at `start() + 1 min`.
fn fake() -> FakeAws {
    let fake = FakeAws::new("ts", start(), Config::default());
    fake.create_kinesis_stream(OURS);
    let spec = ddb_rollover::table::TableSpec {
        tags: BTreeMap::from([(FAMILY_TAG.to_string(), "ts".to_string())]),
        ..crate::table_spec(
            TABLE,
            crate::tests::key(),
            Billing::Provisioned(Capacity { read: 5, write: 5 }),
        )
    };
    fake.foreign_create_table("someone", &spec).unwrap();
    fake.advance(Duration::minutes(1));
    fake
}

fn change(stream: &str, precision: Precision) -> DestinationChange {
    DestinationChange {
        name: TABLE.into(),
        destination: KinesisDestination {
            stream_arn: KinesisStreamArn::parse(stream).unwrap(),
            precision,
        },
    }
}

/// DescribeKinesisStreamingDestination through the port, as (stream, status) pairs.
fn described(control: &FakeAws) -> Vec<(String, DestinationStatus)> {
    block_on(control.describe_kinesis_destinations(TABLE))
        .unwrap()
        .into_iter()
        .map(|d| (d.stream_arn, d.status))
        .collect()
}

fn delay() -> Duration {
    Config::default().destination_delay
}

#[test]
fn an_enabled_destination_is_enabling_for_the_delay_then_active() {
    let fake = fake();
    // The operator's credentials: the same port without the role's IAM.
    let control = fake.operator();
    let status = block_on(control.enable_kinesis_destination(&change(OURS, Precision::Microsecond))).unwrap();
    assert_eq!(status, DestinationStatus::Enabling);
    assert_eq!(
        described(&control),
        [(OURS.to_string(), DestinationStatus::Enabling)]
    );
    fake.advance(delay() - Duration::seconds(1));
    assert_eq!(described(&control)[0].1, DestinationStatus::Enabling);
    fake.advance(Duration::seconds(1));
    let observed = block_on(control.describe_kinesis_destinations(TABLE)).unwrap();
    assert_eq!(observed.len(), 1);
    assert_eq!(observed[0].status, DestinationStatus::Active);
    assert_eq!(observed[0].precision, Some(Precision::Microsecond));
    assert_eq!(observed[0].description, None);
    let truth = fake.destinations(TABLE);
    assert_eq!(truth[0].maker, Maker::Foreign("operator".into()));
    assert_eq!(truth[0].records_lost_since, None);
}

#[test]
fn a_missing_stream_ends_enable_failed_naming_it() {
    let fake = fake();
    let control = fake.operator();
    block_on(control.enable_kinesis_destination(&change(THEIRS, Precision::Millisecond))).unwrap();
    fake.advance(delay());
    let observed = block_on(control.describe_kinesis_destinations(TABLE)).unwrap();
    assert_eq!(observed[0].status, DestinationStatus::EnableFailed);
    let why = observed[0].description.clone().unwrap_or_default();
    assert!(why.contains(THEIRS), "{why}");
}

#[test]
fn a_table_holds_one_destination_until_it_is_disabled_or_failed() {
    let fake = fake();
    fake.create_kinesis_stream(THEIRS);
    let control = fake.operator();
    block_on(control.enable_kinesis_destination(&change(OURS, Precision::Millisecond))).unwrap();
    for stream in [THEIRS, OURS] {
        // While ENABLING, and once ACTIVE, another enable (even to the same stream) is refused.
        for _ in 0..2 {
            let refused =
                block_on(control.enable_kinesis_destination(&change(stream, Precision::Millisecond)))
                    .unwrap_err();
            assert_eq!(refused.kind, ErrorKind::Other);
            assert!(refused.message.starts_with("ValidationException"), "{refused}");
            assert!(refused.message.contains(NOT_ENABLEABLE), "{refused}");
            fake.advance(delay());
        }
    }
    assert_eq!(
        described(&control),
        [(OURS.to_string(), DestinationStatus::Active)]
    );
    fake.foreign_disable_destination("someone", TABLE, OURS).unwrap();
    assert!(block_on(control.enable_kinesis_destination(&change(THEIRS, Precision::Millisecond))).is_err());
    fake.advance(delay());
    block_on(control.enable_kinesis_destination(&change(THEIRS, Precision::Millisecond))).unwrap();
    assert_eq!(
        described(&control),
        [
            (OURS.to_string(), DestinationStatus::Disabled),
            (THEIRS.to_string(), DestinationStatus::Enabling)
        ]
    );
}

#[test]
fn after_enable_failed_the_table_takes_another_destination() {
    let fake = fake();
    let control = fake.operator();
    fake.foreign_enable_destination("someone", TABLE, THEIRS, Precision::Millisecond)
        .unwrap();
    fake.advance(delay());
    block_on(control.enable_kinesis_destination(&change(OURS, Precision::Millisecond))).unwrap();
    fake.advance(delay());
    assert_eq!(
        described(&control),
        [
            (THEIRS.to_string(), DestinationStatus::EnableFailed),
            (OURS.to_string(), DestinationStatus::Active)
        ]
    );
}

#[test]
fn a_missing_table_is_not_found_and_only_an_active_or_updating_one_takes_a_destination() {
    let fake = FakeAws::new("ts", start(), Config::default());
    fake.create_kinesis_stream(OURS);
    let control = fake.operator();
    let missing = block_on(control.describe_kinesis_destinations(TABLE)).unwrap_err();
    assert_eq!(missing.kind, ErrorKind::NotFound);
    let missing =
        block_on(control.enable_kinesis_destination(&change(OURS, Precision::Millisecond))).unwrap_err();
    assert_eq!(missing.kind, ErrorKind::NotFound);
    let spec = crate::table_spec(
        TABLE,
        crate::tests::key(),
        Billing::Provisioned(Capacity { read: 5, write: 5 }),
    );
    block_on(control.create_table(&spec)).unwrap();
    let creating =
        block_on(control.enable_kinesis_destination(&change(OURS, Precision::Millisecond))).unwrap_err();
    assert_eq!(creating.kind, ErrorKind::InUse, "{creating}");
    assert!(creating.message.contains("CREATING"), "{creating}");
    assert_eq!(described(&control), []);
    fake.advance(Config::default().create_delay);
    fake.foreign_update_capacity(
        "someone",
        TABLE,
        Billing::Provisioned(Capacity { read: 6, write: 6 }),
    )
    .unwrap();
    // UPDATING takes it.
    block_on(control.enable_kinesis_destination(&change(OURS, Precision::Millisecond))).unwrap();
}

#[test]
fn deleting_a_table_drops_its_destinations() {
    let fake = fake();
    let control = fake.operator();
    block_on(control.enable_kinesis_destination(&change(OURS, Precision::Millisecond))).unwrap();
    fake.advance(delay());
    fake.foreign_delete_table("someone", TABLE).unwrap();
    let deleting =
        block_on(control.enable_kinesis_destination(&change(OURS, Precision::Millisecond))).unwrap_err();
    assert_eq!(deleting.kind, ErrorKind::InUse);
    fake.advance(Config::default().delete_delay);
    assert!(fake.destinations(TABLE).is_empty());
    assert_eq!(
        block_on(control.describe_kinesis_destinations(TABLE))
            .unwrap_err()
            .kind,
        ErrorKind::NotFound
    );
    let spec = crate::table_spec(
        TABLE,
        crate::tests::key(),
        Billing::Provisioned(Capacity { read: 5, write: 5 }),
    );
    fake.foreign_create_table("someone", &spec).unwrap();
    assert_eq!(described(&control), []);
}

#[test]
fn another_familys_role_may_not_read_or_enable_our_tables_destinations() {
    let fake = fake();
    let sibling = fake.acting_as("ts_eu", "family ts_eu");
    let read = block_on(sibling.describe_kinesis_destinations(TABLE)).unwrap_err();
    assert!(read.message.starts_with("AccessDeniedException"), "{read}");
    assert!(
        read.message
            .contains("dynamodb:DescribeKinesisStreamingDestination"),
        "{read}"
    );
    let enable =
        block_on(sibling.enable_kinesis_destination(&change(OURS, Precision::Millisecond))).unwrap_err();
    assert!(
        enable
            .message
            .contains("dynamodb:EnableKinesisStreamingDestination"),
        "{enable}"
    );
    assert!(fake.destinations(TABLE).is_empty());
}

#[test]
fn someone_disables_an_active_destination_only() {
    let fake = fake();
    fake.foreign_enable_destination("someone", TABLE, OURS, Precision::Millisecond)
        .unwrap();
    let enabling = fake
        .foreign_disable_destination("someone", TABLE, OURS)
        .unwrap_err();
    assert!(enabling.message.contains("must be ACTIVE"), "{enabling}");
    fake.advance(delay());
    let logged = fake.log_len();
    fake.foreign_disable_destination("ops", TABLE, OURS).unwrap();
    let calls = fake.calls_since(logged);
    assert_eq!(calls[0].actor, Maker::Foreign("ops".into()));
    assert_eq!(
        calls[0].effects,
        [Effect::DisabledDestination {
            table: TABLE.into(),
            stream_arn: OURS.into()
        }]
    );
    assert_eq!(fake.destinations(TABLE)[0].status, Status::Disabling);
    fake.advance(delay());
    assert_eq!(fake.destinations(TABLE)[0].status, Status::Disabled);
    let none = fake
        .foreign_disable_destination("someone", TABLE, THEIRS)
        .unwrap_err();
    assert!(none.message.contains("not on the table"), "{none}");
}

#[test]
fn someone_updates_the_precision_records_flowing_meanwhile() {
    let fake = fake();
    fake.foreign_enable_destination("someone", TABLE, OURS, Precision::Millisecond)
        .unwrap();
    fake.advance(delay());
    let logged = fake.log_len();
    fake.foreign_update_destination_precision("ops", TABLE, OURS, Precision::Microsecond)
        .unwrap();
    assert_eq!(
        fake.calls_since(logged)[0].effects,
        [Effect::DestinationPrecision {
            table: TABLE.into(),
            stream_arn: OURS.into(),
            from: Precision::Millisecond,
            to: Precision::Microsecond,
        }]
    );
    let updating = &fake.destinations(TABLE)[0];
    assert_eq!(updating.status, Status::Updating);
    assert!(updating.status.streams());
    assert!(fake
        .foreign_update_destination_precision("ops", TABLE, OURS, Precision::Millisecond)
        .is_err());
    fake.advance(delay());
    let done = &fake.destinations(TABLE)[0];
    assert_eq!(
        (done.status, done.precision),
        (Status::Active, Precision::Microsecond)
    );
}

#[test]
fn someone_enables_a_destination_logged_with_who_and_what() {
    let fake = fake();
    fake.create_kinesis_stream(THEIRS);
    let logged = fake.log_len();
    fake.foreign_enable_destination("ops", TABLE, THEIRS, Precision::Microsecond)
        .unwrap();
    let calls = fake.calls_since(logged);
    assert_eq!(calls[0].operation, "EnableKinesisStreamingDestination");
    assert_eq!(calls[0].actor, Maker::Foreign("ops".into()));
    assert_eq!(
        calls[0].effects,
        [Effect::EnabledDestination {
            table: TABLE.into(),
            stream_arn: THEIRS.into(),
            precision: Precision::Microsecond,
        }]
    );
    assert_eq!(fake.destinations(TABLE)[0].maker, Maker::Foreign("ops".into()));
}

#[test]
fn a_deleted_stream_keeps_the_status_and_loses_the_records() {
    let fake = fake();
    fake.foreign_enable_destination("someone", TABLE, OURS, Precision::Millisecond)
        .unwrap();
    fake.advance(delay());
    let deleted_at = fake.now();
    let logged = fake.log_len();
    fake.foreign_delete_kinesis_stream("ops", OURS).unwrap();
    assert!(!fake.has_kinesis_stream(OURS));
    assert_eq!(
        fake.calls_since(logged)[0].effects,
        [Effect::DeletedKinesisStream {
            stream_arn: OURS.into(),
            losing: vec![TABLE.into()],
        }]
    );
    fake.advance(delay());
    let destination = &fake.destinations(TABLE)[0];
    assert_eq!(destination.status, Status::Active);
    assert_eq!(destination.records_lost_since, Some(deleted_at));
    let again = fake.foreign_delete_kinesis_stream("ops", OURS).unwrap_err();
    assert_eq!(again.kind, ErrorKind::NotFound);
}

#[test]
fn a_stream_deleted_while_enabling_fails_the_enable() {
    let fake = fake();
    fake.foreign_enable_destination("someone", TABLE, OURS, Precision::Millisecond)
        .unwrap();
    fake.foreign_delete_kinesis_stream("ops", OURS).unwrap();
    fake.advance(delay());
    let destination = &fake.destinations(TABLE)[0];
    assert_eq!(destination.status, Status::EnableFailed);
    assert_eq!(destination.records_lost_since, None);
}
