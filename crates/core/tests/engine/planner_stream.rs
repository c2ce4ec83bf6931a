//! The planner's rules for the family's change stream (`[stream] kinesis`), with a fixed clock:
//! create_new enables the destination on every table it creates and on its existing tables that
//! do not stream into the policy's stream (and only on those), a destination to another stream
//! is someone else's part that never changes and keeps a table from deletion, the readiness of
//! a table whose destination is not ACTIVE, and the section's validation.

use crate::common::plans::{assert_reason_mentions, create_new, resize_old};
use crate::common::policies::{invalid_fields, policy_of, ONE_PHASE, STRING_KEY};
use ddb_rollover::policy::Precision;
use ddb_rollover::policy::TAG_FAMILY;
use ddb_rollover::table::ObservedTable;
use ddb_rollover::table::ResourcePolicy;
use ddb_rollover::table::{DestinationStatus, ObservedDestination};
use ddb_rollover::Policy;
use ddb_rollover::{Condition, TargetTable};
use ddb_rollover::{Decision, Plan, PlanItem};
use ddb_rollover::{ForeignPart, NoEvidence};

const OURS: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/timeseries-changes";
const THEIRS: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/audit";

fn streaming() -> String {
    format!("[stream]\nkinesis = \"{OURS}\"\nprecision = \"microsecond\"\n")
}

fn policy() -> Policy {
    policy_of(&[STRING_KEY, &streaming()])
}

/// Deletes tables 4 days old, keeping the newest 2.
fn deleting() -> Policy {
    policy_of(&[
        STRING_KEY,
        ONE_PHASE,
        "[retention]\ndelete_after = 4\nkeep_newest = 2\n",
    ])
}

fn destination(arn: &str, status: DestinationStatus, description: Option<&str>) -> ObservedDestination {
    ObservedDestination {
        stream_arn: arn.into(),
        status,
        description: description.map(str::to_string),
        precision: Some(Precision::Microsecond),
    }
}

/// One of our tables (family tag, the policy's key), as a run that read its destinations sees it.
fn ours(policy: &Policy, name: &str, destinations: Option<Vec<ObservedDestination>>) -> ObservedTable {
    let mut table = ObservedTable::active(name, policy.hot_phase().billing);
    table.key = Some(policy.key.clone());
    table.tags = Some([(TAG_FAMILY.to_string(), "timeseries".to_string())].into());
    table.destinations = destinations;
    table
}

fn items<'a>(plan: &'a Plan, table: &str) -> Vec<&'a PlanItem> {
    plan.items.iter().filter(|i| i.facts.table == table).collect()
}

fn enable_item<'a>(plan: &'a Plan, table: &str) -> Option<&'a PlanItem> {
    items(plan, table)
        .into_iter()
        .find(|i| matches!(i.decision, Decision::EnableKinesisDestination(_)))
}

#[test]
fn each_table_create_new_creates_streams_into_the_family_stream() {
    let plan = create_new(&policy(), &[]);
    for name in ["timeseries_2018-10-25", "timeseries_2018-10-26"] {
        let table = items(&plan, name);
        assert!(
            matches!(table[0].decision, Decision::Create(_)),
            "{name}: {plan:#?}"
        );
        let Decision::EnableKinesisDestination(change) = &table[1].decision else {
            panic!("{name}: the enable follows the create: {plan:#?}")
        };
        assert_eq!(change.name, name);
        assert_eq!(change.destination.stream_arn.as_str(), OURS);
        assert_eq!(change.destination.precision, Precision::Microsecond);
        assert_reason_mentions(table[1], &["new table", OURS]);
    }
}

#[test]
fn without_a_stream_nothing_is_enabled() {
    let plan = create_new(&policy_of(&[STRING_KEY]), &[]);
    assert!(plan
        .items
        .iter()
        .all(|i| !matches!(i.decision, Decision::EnableKinesisDestination(_))));
}

/// A case: its name, the destinations DescribeKinesisStreamingDestination gives (`None`: not
/// read), and the words the enable's reason says (`None`: no enable).
type Case = (
    &'static str,
    Option<Vec<ObservedDestination>>,
    Option<&'static [&'static str]>,
);

#[test]
fn an_existing_table_is_enabled_only_when_its_changes_do_not_reach_the_stream() {
    let policy = policy();
    let name = "timeseries_2018-10-26";
    let cases: Vec<Case> = vec![
        (
            "streaming",
            Some(vec![destination(OURS, DestinationStatus::Active, None)]),
            None,
        ),
        (
            "enabling",
            Some(vec![destination(OURS, DestinationStatus::Enabling, None)]),
            None,
        ),
        (
            "updating",
            Some(vec![destination(OURS, DestinationStatus::Updating, None)]),
            None,
        ),
        ("not read", None, None),
        ("none", Some(vec![]), Some(&["do not reach"])),
        (
            "disabled by someone",
            Some(vec![destination(OURS, DestinationStatus::Disabled, None)]),
            Some(&["do not reach"]),
        ),
        (
            "failed before",
            Some(vec![destination(
                OURS,
                DestinationStatus::EnableFailed,
                Some("Kinesis stream not found"),
            )]),
            Some(&["ENABLE_FAILED", "Kinesis stream not found", "again"]),
        ),
        (
            "disabled then failed: the latest counts",
            Some(vec![
                destination(OURS, DestinationStatus::Disabled, None),
                destination(OURS, DestinationStatus::EnableFailed, None),
            ]),
            Some(&["ENABLE_FAILED"]),
        ),
    ];
    for (case, destinations, enabled) in cases {
        let table = ours(&policy, name, destinations);
        let plan = create_new(&policy, &[table]);
        match (enable_item(&plan, name), enabled) {
            (None, None) => {}
            (Some(item), Some(words)) => assert_reason_mentions(item, words),
            (found, _) => panic!("{case}: enable {found:?}, wanted {enabled:?}"),
        }
    }
}

#[test]
fn someone_elses_destination_is_a_foreign_part_that_is_never_touched() {
    let policy = policy();
    let name = "timeseries_2018-10-26";
    let theirs = destination(THEIRS, DestinationStatus::Active, None);
    let plan = create_new(&policy, &[ours(&policy, name, Some(vec![theirs]))]);
    let verdict = items(&plan, name)[0].verdict.clone().expect("a verdict");
    assert_eq!(
        verdict.foreign,
        [ForeignPart::KinesisDestination {
            stream_arn: THEIRS.into(),
            status: "ACTIVE".into(),
        }]
    );
    // Ours is still asked for (DynamoDB decides whether a table feeds two streams); theirs
    // gets no action: no decision names their stream.
    let enable = enable_item(&plan, name).expect("our destination is enabled");
    assert!(
        matches!(&enable.decision, Decision::EnableKinesisDestination(c) if c.destination.stream_arn.as_str() == OURS)
    );
    let text = serde_json::to_string(&plan.items.iter().map(|i| &i.decision).collect::<Vec<_>>()).unwrap();
    assert!(!text.contains(THEIRS), "{text}");
    // A destination of theirs that no longer holds the table is no part of theirs.
    let gone = destination(THEIRS, DestinationStatus::Disabled, None);
    let plan = create_new(&policy, &[ours(&policy, name, Some(vec![gone]))]);
    assert!(items(&plan, name)[0].verdict.as_ref().unwrap().foreign.is_empty());
}

#[test]
fn a_foreign_destination_or_unread_destinations_keep_a_table_from_deletion() {
    let policy = deleting();
    let name = "timeseries_2018-10-20";
    let due = |destinations| {
        let mut table = ours(&policy, name, destinations);
        table.scaling = Some(Vec::new());
        table.resource_policy = Some(ResourcePolicy::default());
        table
    };
    let deleted = |plan: &Plan| {
        items(plan, name)
            .iter()
            .any(|i| matches!(i.decision, Decision::Delete(_)))
    };
    // The newest two, which retention keeps, then the table due.
    let newer = ["timeseries_2018-10-25", "timeseries_2018-10-26"].map(|n| ours(&policy, n, Some(vec![])));
    let resize_old = |policy: &Policy, due: &[ObservedTable]| resize_old(policy, &[&newer[..], due].concat());
    let plan = resize_old(&policy, &[due(Some(vec![]))]);
    assert!(deleted(&plan), "the control case is deleted: {plan:#?}");

    let theirs = destination(THEIRS, DestinationStatus::Enabling, None);
    for (destinations, missing) in [
        (Some(vec![theirs]), NoEvidence::ForeignKinesisDestination),
        (None, NoEvidence::DestinationsNotRead),
    ] {
        let plan = resize_old(&policy, &[due(destinations)]);
        assert!(!deleted(&plan), "{missing:?}: {plan:#?}");
        let verdict = items(&plan, name)[0].verdict.clone().unwrap();
        assert!(verdict.not_deletable.contains(&missing), "{verdict:?}");
    }
    // An endpoint without destinations can have none: no evidence is missing.
    let mut unsupported = due(None);
    unsupported.destinations_unsupported = true;
    assert!(deleted(&resize_old(&policy, &[unsupported])));
}

#[test]
fn a_table_is_ready_only_once_its_destination_streams() {
    let target = |stream: Option<&str>, detail: Option<&str>| TargetTable {
        table: "t_2".into(),
        status: Some("ACTIVE".into()),
        foreign: false,
        unfit: None,
        built_by_next_run: false,
        warm: None,
        stream: stream.map(str::to_string),
        stream_detail: detail.map(str::to_string),
        consumer: None,
        consumer_detail: None,
        poll_error: None,
    };
    assert_eq!(target(None, None).condition(), Condition::Ready);
    assert_eq!(target(Some("ACTIVE"), None).condition(), Condition::Ready);
    assert_eq!(target(Some("UPDATING"), None).condition(), Condition::Ready);
    assert_eq!(target(Some("ENABLING"), None).condition(), Condition::Settling);
    for (status, detail) in [
        ("ENABLE_FAILED", Some("Kinesis stream not found")),
        ("NONE", None),
        ("UNKNOWN", None),
    ] {
        let Condition::Unusable(why) = target(Some(status), detail).condition() else {
            panic!("{status} is not ready and needs someone to act")
        };
        assert!(why.contains(status) && why.contains("Kinesis"), "{why}");
        if let Some(detail) = detail {
            assert!(why.contains(detail), "{why}");
        }
    }
}

#[test]
fn the_stream_section_names_every_bad_field() {
    let bad = format!("{STRING_KEY}[stream]\nkinesis = \"arn:aws:sqs:us-east-1:123456789012:queue\"\nprecision = \"second\"\n");
    assert_eq!(
        invalid_fields(Policy::from_toml(&bad)),
        ["stream.precision", "stream.kinesis"]
    );
    let unknown = format!("{STRING_KEY}[stream]\nkinesis_arn = \"{OURS}\"\n");
    assert!(Policy::from_toml(&unknown).is_err());
    // The section changes the policy's hash only when it asks for something.
    assert_eq!(
        policy_of(&[STRING_KEY]).hash(),
        policy_of(&[STRING_KEY, "[stream]\n"]).hash()
    );
    assert_ne!(policy_of(&[STRING_KEY]).hash(), policy().hash());
}
