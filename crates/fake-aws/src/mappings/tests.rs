//! Event source mappings against what AWS documents: the tables' stream ARNs, the states on the
//! fake clock, one mapping of a function on a stream, the errors, DeleteTable leaving them, IAM
//! and each foreign act.

use chrono::{DateTime, Duration, TimeZone, Utc};
use ddb_rollover::control::{ErrorKind, Mappings, Tables};
use ddb_rollover::policy::{Billing, Capacity, StreamView};
use ddb_rollover::policy::{FunctionArn, LambdaConsumer, StartingPosition};
use ddb_rollover::table::{MappingChange, MappingRemoval, MappingState};
use ddb_rollover::table::{SettingChange, TableSetting, TableSpec};
use futures::executor::block_on;
use std::collections::BTreeMap;

use aws_model::family_role::FAMILY_CONSUMER;

use crate::{table_of_stream, Config, Effect, FakeAws, Maker, MappingAct, FAMILY_TAG, FUNCTION_GONE};

const TABLE: &str = "ts_a";
/// Someone else's Lambda function.
const FOREIGN_CONSUMER: &str = "arn:aws:lambda:us-east-1:123456789012:function:someone-elses-consumer";

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 3, 30, 0, 0, 0).unwrap()
}

fn spec(name: &str, family: &str, stream: bool) -> TableSpec {
    TableSpec {
        tags: BTreeMap::from([(FAMILY_TAG.to_string(), family.to_string())]),
        stream: stream.then_some(StreamView::NewAndOldImages),
        ..crate::table_spec(
            name,
            crate::tests::key(),
            Billing::Provisioned(Capacity { read: 5, write: 5 }),
        )
    }
}

/// An account with the family's consumer function and an ACTIVE table of the family with a
/// stream, at `start() + 1 min`.
fn fake() -> FakeAws {
    let fake = FakeAws::new("ts", start(), Config::default());
    fake.create_function(FAMILY_CONSUMER);
    fake.foreign_create_table("someone", &spec(TABLE, "ts", true))
        .unwrap();
    fake.advance(Duration::minutes(1));
    fake
}

fn change(function: &str) -> MappingChange {
    MappingChange {
        name: TABLE.into(),
        consumer: LambdaConsumer {
            function: FunctionArn::parse(function).unwrap(),
            batch_size: 100,
            starting_position: StartingPosition::TrimHorizon,
            filters: Vec::new(),
        },
    }
}

fn stream(fake: &FakeAws) -> String {
    fake.stream_arn(TABLE).expect("the table has a stream")
}

/// ListEventSourceMappings through the port, as (function, state) pairs.
fn listed(control: &FakeAws, stream_arn: &str) -> Vec<(String, MappingState)> {
    block_on(control.list_event_source_mappings(TABLE, stream_arn))
        .unwrap()
        .into_iter()
        .map(|m| (m.function_arn, m.state))
        .collect()
}

fn delay() -> Duration {
    Config::default().mapping_delay
}

#[test]
fn a_table_with_a_stream_describes_its_latest_stream_arn() {
    let fake = fake();
    let described = block_on(fake.describe_table(TABLE)).unwrap().unwrap();
    let arn = described.stream_arn.expect("LatestStreamArn");
    assert!(
        arn.starts_with("arn:aws:dynamodb:us-east-1:123456789012:table/ts_a/stream/2024-03-30T00:00:00"),
        "{arn}"
    );
    assert_eq!(table_of_stream(&arn), Some(TABLE));
    // A table without a stream has none.
    fake.foreign_create_table("someone", &spec("ts_b", "ts", false))
        .unwrap();
    assert_eq!(
        block_on(fake.describe_table("ts_b")).unwrap().unwrap().stream_arn,
        None
    );
}

#[test]
fn turning_the_stream_off_keeps_its_arn_and_on_again_makes_a_new_one() {
    let fake = fake();
    let control = fake.operator();
    let first = stream(&fake);
    let set = |on: bool| SettingChange {
        name: TABLE.into(),
        setting: TableSetting::Stream(on.then_some(StreamView::NewAndOldImages)),
    };
    block_on(control.configure(&set(false))).unwrap();
    fake.advance(Duration::minutes(1));
    let off = block_on(fake.describe_table(TABLE)).unwrap().unwrap();
    assert_eq!(
        (off.stream, off.stream_arn.as_deref()),
        (None, Some(first.as_str()))
    );
    // A mapping cannot be made on a stream that is off.
    let refused =
        block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &first)).unwrap_err();
    assert_eq!(refused.kind, ErrorKind::NotFound, "{refused}");
    block_on(control.configure(&set(true))).unwrap();
    fake.advance(Duration::minutes(1));
    let second = stream(&fake);
    assert_ne!(second, first, "a stream turned on again is a new stream");
    assert_eq!(table_of_stream(&second), Some(TABLE));
}

#[test]
fn a_new_mapping_is_creating_for_the_delay_then_enabled() {
    let fake = fake();
    let control = fake.operator();
    let arn = stream(&fake);
    let made = block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap();
    assert_eq!(made.state, MappingState::Creating);
    assert_eq!(
        (made.function_arn.as_str(), made.event_source_arn.as_str()),
        (FAMILY_CONSUMER, arn.as_str())
    );
    assert_eq!(
        listed(&control, &arn),
        [(FAMILY_CONSUMER.to_string(), MappingState::Creating)]
    );
    fake.advance(delay() - Duration::seconds(1));
    assert_eq!(listed(&control, &arn)[0].1, MappingState::Creating);
    fake.advance(Duration::seconds(1));
    let listed_now = block_on(control.list_event_source_mappings(TABLE, &arn)).unwrap();
    assert_eq!(listed_now.len(), 1);
    assert_eq!(listed_now[0].state, MappingState::Enabled);
    assert_eq!(listed_now[0].uuid, made.uuid);
    // Logged with the stream's table, the function and the stream.
    let log = fake.snapshot().log;
    let created = log
        .iter()
        .rev()
        .find(|c| c.operation == "CreateEventSourceMapping")
        .unwrap();
    assert_eq!(
        created.effects,
        [Effect::CreatedMapping {
            table: TABLE.into(),
            uuid: made.uuid.clone(),
            function_arn: FAMILY_CONSUMER.into(),
            stream_arn: arn.clone(),
        }]
    );
}

#[test]
fn a_second_mapping_of_a_function_on_a_stream_conflicts_but_another_function_may_map() {
    let fake = fake();
    let control = fake.operator();
    let arn = stream(&fake);
    block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap();
    let again = block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap_err();
    assert_eq!(again.kind, ErrorKind::AlreadyExists);
    assert!(again.message.starts_with("ResourceConflictException"), "{again}");
    fake.create_function(FOREIGN_CONSUMER);
    fake.mapping_act(
        "someone",
        &MappingAct::Map {
            function_arn: FOREIGN_CONSUMER.into(),
            stream_arn: arn.clone(),
        },
    )
    .unwrap();
    let mut functions: Vec<String> = listed(&control, &arn).into_iter().map(|(f, _)| f).collect();
    functions.sort();
    assert_eq!(functions, [FAMILY_CONSUMER, FOREIGN_CONSUMER]);
}

#[test]
fn a_missing_function_or_stream_is_not_found() {
    let fake = fake();
    let control = fake.operator();
    let arn = stream(&fake);
    let no_function =
        block_on(control.create_event_source_mapping(&change(FOREIGN_CONSUMER), &arn)).unwrap_err();
    assert_eq!(no_function.kind, ErrorKind::NotFound);
    assert!(
        no_function.message.contains("Function not found"),
        "{no_function}"
    );
    let other = format!("{arn}x");
    let no_stream =
        block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &other)).unwrap_err();
    assert_eq!(no_stream.kind, ErrorKind::NotFound);
    // The function deleted by someone: its mappings stay, and say so; a new one is refused.
    block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap();
    fake.mapping_act(
        "someone",
        &MappingAct::DeleteFunction {
            function_arn: FAMILY_CONSUMER.into(),
        },
    )
    .unwrap();
    assert!(!fake.has_function(FAMILY_CONSUMER));
    let kept = block_on(control.list_event_source_mappings(TABLE, &arn)).unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].last_result.as_deref(), Some(FUNCTION_GONE));
    fake.foreign_create_table("someone", &spec("ts_b", "ts", true))
        .unwrap();
    fake.advance(Duration::minutes(1));
    let b = MappingChange {
        name: "ts_b".into(),
        ..change(FAMILY_CONSUMER)
    };
    let refused =
        block_on(control.create_event_source_mapping(&b, &fake.stream_arn("ts_b").unwrap())).unwrap_err();
    assert_eq!(refused.kind, ErrorKind::NotFound);
}

#[test]
fn a_deleted_mapping_is_deleting_then_gone_and_an_unknown_one_not_found() {
    let fake = fake();
    let control = fake.operator();
    let arn = stream(&fake);
    let made = block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap();
    fake.advance(delay());
    let removal = MappingRemoval {
        name: TABLE.into(),
        uuid: made.uuid.clone(),
        function_arn: FAMILY_CONSUMER.into(),
    };
    block_on(control.delete_event_source_mapping(&removal)).unwrap();
    assert_eq!(
        listed(&control, &arn),
        [(FAMILY_CONSUMER.to_string(), MappingState::Deleting)]
    );
    let twice = block_on(control.delete_event_source_mapping(&removal)).unwrap_err();
    assert_eq!(twice.kind, ErrorKind::InUse, "{twice}");
    fake.advance(delay());
    assert!(listed(&control, &arn).is_empty());
    let gone = block_on(control.delete_event_source_mapping(&removal)).unwrap_err();
    assert_eq!(gone.kind, ErrorKind::NotFound, "{gone}");
}

#[test]
fn deleting_a_table_leaves_its_mappings() {
    let fake = fake();
    let control = fake.operator();
    let arn = stream(&fake);
    block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap();
    fake.advance(delay());
    fake.foreign_delete_table("someone", TABLE).unwrap();
    fake.advance(Duration::hours(1));
    assert!(!fake.snapshot().tables.contains_key(TABLE));
    assert_eq!(
        fake.mappings_on(&arn)
            .into_iter()
            .map(|m| (m.function_arn, m.state))
            .collect::<Vec<_>>(),
        [(FAMILY_CONSUMER.to_string(), MappingState::Enabled)]
    );
    // Its stream is gone: no new mapping on it; made again, the table has another stream.
    let refused = block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap_err();
    assert_eq!(refused.kind, ErrorKind::NotFound);
    fake.foreign_create_table("someone", &spec(TABLE, "ts", true))
        .unwrap();
    assert_ne!(stream(&fake), arn);
}

#[test]
fn someone_disabling_a_mapping_makes_it_disabling_then_disabled() {
    let fake = fake();
    let control = fake.operator();
    let arn = stream(&fake);
    let made = block_on(control.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap();
    let disable = MappingAct::Disable {
        uuid: made.uuid.clone(),
    };
    // Only an Enabled mapping can be disabled.
    let early = fake.mapping_act("someone", &disable).unwrap_err();
    assert_eq!(early.kind, ErrorKind::InUse);
    fake.advance(delay());
    fake.mapping_act("someone", &disable).unwrap();
    assert_eq!(listed(&control, &arn)[0].1, MappingState::Disabling);
    fake.advance(delay());
    assert_eq!(listed(&control, &arn)[0].1, MappingState::Disabled);
    let log = fake.snapshot().log;
    let call = log
        .iter()
        .rev()
        .find(|c| c.operation == "UpdateEventSourceMapping" && c.succeeded())
        .unwrap();
    assert_eq!(call.actor, Maker::Foreign("someone".into()));
    // Someone deleting it: gone after the delay.
    fake.mapping_act("someone", &MappingAct::Unmap { uuid: made.uuid })
        .unwrap();
    fake.advance(delay());
    assert!(fake.mappings_on(&arn).is_empty());
}

#[test]
fn the_family_role_maps_and_unmaps_only_its_consumer_function() {
    let fake = fake();
    fake.create_function(FOREIGN_CONSUMER);
    let arn = stream(&fake);
    // Our role: CreateEventSourceMapping only of ConsumerFunctionArn.
    let refused = block_on(fake.create_event_source_mapping(&change(FOREIGN_CONSUMER), &arn)).unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Other);
    assert!(refused.message.starts_with("AccessDeniedException"), "{refused}");
    assert!(
        refused.message.contains("lambda:CreateEventSourceMapping"),
        "{refused}"
    );
    assert!(fake.mappings_on(&arn).is_empty(), "a refused call makes nothing");
    let ours = block_on(fake.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap();
    // Our role lists every mapping on the stream, whoever made it.
    let theirs = fake.foreign_map("someone", FOREIGN_CONSUMER, &arn).unwrap();
    fake.advance(delay());
    assert_eq!(
        block_on(fake.list_event_source_mappings(TABLE, &arn))
            .unwrap()
            .len(),
        2
    );
    // DeleteEventSourceMapping only of a mapping of ConsumerFunctionArn, whatever the removal says.
    let removal = |uuid: &str| MappingRemoval {
        name: TABLE.into(),
        uuid: uuid.into(),
        function_arn: FAMILY_CONSUMER.into(),
    };
    let denied = block_on(fake.delete_event_source_mapping(&removal(&theirs))).unwrap_err();
    assert!(denied.message.starts_with("AccessDeniedException"), "{denied}");
    assert!(
        denied.message.contains(&format!("event-source-mapping:{theirs}")),
        "{denied}"
    );
    block_on(fake.delete_event_source_mapping(&removal(&ours.uuid))).unwrap();
    fake.advance(delay());
    let left: Vec<String> = fake.mappings_on(&arn).into_iter().map(|m| m.uuid).collect();
    assert_eq!(left, [theirs]);
    // An unknown mapping is NotFound (Lambda looks it up before IAM's lambda:FunctionArn).
    let unknown = block_on(fake.delete_event_source_mapping(&removal("nope"))).unwrap_err();
    assert_eq!(unknown.kind, ErrorKind::NotFound);
}

#[test]
fn another_familys_role_is_refused_nothing_lambda_scopes_by_table() {
    // The mapping grants are scoped by the function, not by the table: the nested family's
    // role (the same ConsumerFunctionArn in the fake's stacks) may map it on any stream, which
    // is why ownership of a mapping is the function on a stream of a table of ours.
    let fake = fake();
    let sibling = fake.acting_as("ts_eu", "family ts_eu");
    let arn = stream(&fake);
    block_on(sibling.create_event_source_mapping(&change(FAMILY_CONSUMER), &arn)).unwrap();
    let made = fake.mappings_on(&arn);
    assert_eq!(made.len(), 1);
    assert_eq!(made[0].maker, Maker::Foreign("family ts_eu".into()));
}
