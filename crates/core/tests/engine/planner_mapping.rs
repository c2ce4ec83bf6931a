//! The planner's rules for the family's consumer function (`[stream.lambda]`), with a fixed
//! clock: create_new maps the function to every table it creates and to its existing tables
//! whose stream has no mapping of it (and only those), resize_old removes our mapping right after
//! deleting a table, a mapping of another function is someone else's part that is never touched
//! and keeps its table from deletion, the readiness of a table whose mapping is not Enabled, and
//! the section's validation.

use crate::common::plans::{assert_reason_mentions, create_new, resize_old};
use crate::common::policies::{invalid_fields, policy_of, ONE_PHASE, STRING_KEY};
use ddb_rollover::policy::StartingPosition;
use ddb_rollover::policy::StreamView;
use ddb_rollover::policy::TAG_FAMILY;
use ddb_rollover::table::ObservedTable;
use ddb_rollover::table::ResourcePolicy;
use ddb_rollover::table::{MappingState, ObservedMapping};
use ddb_rollover::Policy;
use ddb_rollover::{Condition, TargetTable};
use ddb_rollover::{Decision, Plan, PlanItem};
use ddb_rollover::{ForeignPart, NoEvidence};

const OURS: &str = "arn:aws:lambda:us-east-1:123456789012:function:ingest-consumer";
const THEIRS: &str = "arn:aws:lambda:us-east-1:123456789012:function:audit";
const TEMPLATE_STREAM: &str = "[template]\nstream = \"new_and_old_images\"\n";

fn consumer() -> String {
    format!("[stream.lambda]\nfunction = \"{OURS}\"\nbatch_size = 500\nstarting_position = \"latest\"\n")
}

fn policy() -> Policy {
    policy_of(&[STRING_KEY, TEMPLATE_STREAM, &consumer()])
}

/// Maps the consumer, and deletes tables 4 days old, keeping the newest 2.
fn deleting() -> Policy {
    policy_of(&[
        STRING_KEY,
        ONE_PHASE,
        TEMPLATE_STREAM,
        &consumer(),
        "[retention]\ndelete_after = 4\nkeep_newest = 2\n",
    ])
}

fn stream_of(name: &str) -> String {
    format!("arn:aws:dynamodb:us-east-1:123456789012:table/{name}/stream/2018-10-20T00:00:00.000")
}

fn mapping(name: &str, function: &str, state: MappingState) -> ObservedMapping {
    ObservedMapping {
        uuid: format!(
            "{}-{}",
            state.as_str(),
            function.rsplit(':').next().unwrap_or_default()
        ),
        function_arn: function.into(),
        event_source_arn: stream_of(name),
        state,
        reason: Some("User action".into()),
        last_result: None,
        last_modified: None,
        batch_size: None,
        filters: Vec::new(),
    }
}

/// One of our tables (family tag, the policy's key, a stream), as a run that listed the mappings
/// on its stream sees it (`None`: not listed).
fn ours(policy: &Policy, name: &str, mappings: Option<Vec<ObservedMapping>>) -> ObservedTable {
    let mut table = ObservedTable::active(name, policy.hot_phase().billing);
    table.key = Some(policy.key.clone());
    table.tags = Some([(TAG_FAMILY.to_string(), "timeseries".to_string())].into());
    table.stream = Some(StreamView::NewAndOldImages);
    table.stream_arn = Some(stream_of(name));
    table.mappings = mappings;
    table
}

fn items<'a>(plan: &'a Plan, table: &str) -> Vec<&'a PlanItem> {
    plan.items.iter().filter(|i| i.facts.table == table).collect()
}

fn map_item<'a>(plan: &'a Plan, table: &str) -> Option<&'a PlanItem> {
    items(plan, table)
        .into_iter()
        .find(|i| matches!(i.decision, Decision::CreateEventSourceMapping(_)))
}

#[test]
fn each_table_create_new_creates_gets_the_consumer_right_after() {
    let plan = create_new(&policy(), &[]);
    for name in ["timeseries_2018-10-25", "timeseries_2018-10-26"] {
        let table = items(&plan, name);
        let Decision::Create(spec) = &table[0].decision else {
            panic!("{name}: {plan:#?}")
        };
        assert_eq!(
            spec.stream,
            Some(StreamView::NewAndOldImages),
            "the template's stream"
        );
        let Decision::CreateEventSourceMapping(change) = &table.last().unwrap().decision else {
            panic!("{name}: the mapping follows the create: {plan:#?}")
        };
        assert_eq!(change.name, name);
        assert_eq!(change.consumer.function.as_str(), OURS);
        assert_eq!(change.consumer.batch_size, 500);
        assert_eq!(change.consumer.starting_position, StartingPosition::Latest);
        assert_reason_mentions(table.last().unwrap(), &["new table", OURS]);
    }
    let plain = create_new(&policy_of(&[STRING_KEY, TEMPLATE_STREAM]), &[]);
    assert!(plain
        .items
        .iter()
        .all(|i| !matches!(i.decision, Decision::CreateEventSourceMapping(_))));
}

#[test]
fn an_existing_table_is_mapped_only_when_no_mapping_of_the_function_is_on_its_stream() {
    let policy = policy();
    let name = "timeseries_2018-10-26";
    let theirs = mapping(name, THEIRS, MappingState::Enabled);
    let cases: Vec<(&str, Option<Vec<ObservedMapping>>, bool)> = vec![
        (
            "enabled",
            Some(vec![mapping(name, OURS, MappingState::Enabled)]),
            false,
        ),
        (
            "creating",
            Some(vec![mapping(name, OURS, MappingState::Creating)]),
            false,
        ),
        // Someone disabled ours: left for readiness to report, never fought.
        (
            "disabled",
            Some(vec![mapping(name, OURS, MappingState::Disabled)]),
            false,
        ),
        ("not listed", None, false),
        ("none", Some(vec![]), true),
        ("only someone else's", Some(vec![theirs]), true),
        (
            "ours being deleted",
            Some(vec![mapping(name, OURS, MappingState::Deleting)]),
            true,
        ),
    ];
    for (case, mappings, mapped) in cases {
        let plan = create_new(&policy, &[ours(&policy, name, mappings)]);
        match (map_item(&plan, name), mapped) {
            (None, false) => {}
            (Some(item), true) => assert_reason_mentions(item, &["no mapping", OURS]),
            (found, _) => panic!("{case}: mapping {found:?}, wanted {mapped}"),
        }
    }
}

#[test]
fn someone_elses_mapping_is_a_foreign_part_that_is_never_touched() {
    let policy = policy();
    let name = "timeseries_2018-10-26";
    let theirs = mapping(name, THEIRS, MappingState::Disabled);
    let plan = create_new(&policy, &[ours(&policy, name, Some(vec![theirs.clone()]))]);
    let verdict = items(&plan, name)[0].verdict.clone().expect("a verdict");
    assert_eq!(
        verdict.foreign,
        [ForeignPart::EventSourceMapping {
            uuid: theirs.uuid.clone(),
            function_arn: THEIRS.into(),
            state: "Disabled".into(),
        }]
    );
    let text = serde_json::to_string(&plan.items.iter().map(|i| &i.decision).collect::<Vec<_>>()).unwrap();
    assert!(!text.contains(THEIRS) && !text.contains(&theirs.uuid), "{text}");
}

#[test]
fn resize_old_removes_only_our_mapping_and_only_after_the_deletion() {
    let policy = deleting();
    let name = "timeseries_2018-10-20";
    let due = |mappings| {
        let mut table = ours(&policy, name, mappings);
        table.scaling = Some(Vec::new());
        table.resource_policy = Some(ResourcePolicy::default());
        table
    };
    let newer = ["timeseries_2018-10-25", "timeseries_2018-10-26"].map(|n| ours(&policy, n, Some(vec![])));
    let resize_old = |due: ObservedTable| resize_old(&policy, &[&newer[..], &[due]].concat());
    let decisions = |plan: &Plan| -> Vec<&'static str> {
        items(plan, name)
            .iter()
            .map(|i| i.decision.action())
            .filter(|a| matches!(*a, "delete" | "delete_event_source_mapping"))
            .collect()
    };

    let plan = resize_old(due(Some(vec![mapping(name, OURS, MappingState::Enabled)])));
    assert_eq!(
        decisions(&plan),
        ["delete", "delete_event_source_mapping"],
        "{plan:#?}"
    );
    let unmap = items(&plan, name)
        .into_iter()
        .find_map(|i| match &i.decision {
            Decision::DeleteEventSourceMapping(removal) => Some(removal.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (unmap.uuid.as_str(), unmap.function_arn.as_str()),
        ("Enabled-ingest-consumer", OURS)
    );

    // No mapping of ours: the table goes, nothing else is removed.
    assert_eq!(decisions(&resize_old(due(Some(vec![])))), ["delete"]);

    // Someone else's mapping, or mappings not listed: the table stays, nothing is removed.
    for (mappings, missing) in [
        (
            Some(vec![
                mapping(name, OURS, MappingState::Enabled),
                mapping(name, THEIRS, MappingState::Creating),
            ]),
            NoEvidence::ForeignEventSourceMapping,
        ),
        (None, NoEvidence::MappingsNotRead),
    ] {
        let plan = resize_old(due(mappings));
        assert!(decisions(&plan).is_empty(), "{missing:?}: {plan:#?}");
        let verdict = items(&plan, name)[0].verdict.clone().unwrap();
        assert!(verdict.not_deletable.contains(&missing), "{verdict:?}");
    }
    // An endpoint without Lambda can have no mapping: no evidence is missing.
    let mut unsupported = due(None);
    unsupported.mappings_unsupported = true;
    assert_eq!(decisions(&resize_old(unsupported)), ["delete"]);
}

#[test]
fn a_table_is_ready_only_once_its_mapping_is_enabled() {
    let target = |consumer: Option<&str>, detail: Option<&str>| TargetTable {
        table: "t_2".into(),
        status: Some("ACTIVE".into()),
        foreign: false,
        unfit: None,
        built_by_next_run: false,
        warm: None,
        stream: Some("ACTIVE".into()),
        stream_detail: None,
        consumer: consumer.map(str::to_string),
        consumer_detail: detail.map(str::to_string),
        poll_error: None,
    };
    assert_eq!(target(None, None).condition(), Condition::Ready);
    assert_eq!(target(Some("Enabled"), None).condition(), Condition::Ready);
    assert_eq!(target(Some("Updating"), None).condition(), Condition::Ready);
    assert_eq!(target(Some("Creating"), None).condition(), Condition::Settling);
    assert_eq!(target(Some("Enabling"), None).condition(), Condition::Settling);
    for (state, detail) in [
        ("Disabled", Some("User action")),
        ("NONE", None),
        ("UNKNOWN", None),
    ] {
        let Condition::Unusable(why) = target(Some(state), detail).condition() else {
            panic!("{state} is not ready and needs someone to act")
        };
        assert!(why.contains(state) && why.contains("consumer"), "{why}");
        if let Some(detail) = detail {
            assert!(why.contains(detail), "{why}");
        }
    }
}

#[test]
fn the_lambda_section_names_every_bad_field_and_needs_the_tables_stream() {
    let bad = format!(
        "{STRING_KEY}[stream.lambda]\nfunction = \"ingest-consumer\"\nbatch_size = 0\nfilters = [\"not json\"]\n"
    );
    assert_eq!(
        invalid_fields(Policy::from_toml(&bad)),
        [
            "stream.lambda.function",
            "stream.lambda.batch_size",
            "stream.lambda.filters",
            "template.stream"
        ]
    );
    let off = format!("{STRING_KEY}[template]\nstream = \"off\"\n{}", consumer());
    assert_eq!(invalid_fields(Policy::from_toml(&off)), ["template.stream"]);
}

#[test]
fn a_table_without_a_stream_gets_the_templates_stream_then_the_mapping() {
    let policy = policy();
    let name = "timeseries_2018-10-26";
    let mut table = ours(&policy, name, Some(vec![]));
    table.stream = None;
    let plan = create_new(&policy, &[table]);
    let actions: Vec<&str> = items(&plan, name)
        .iter()
        .map(|i| i.decision.action())
        .filter(|a| matches!(*a, "configure" | "create_event_source_mapping"))
        .collect();
    assert_eq!(actions, ["configure", "create_event_source_mapping"], "{plan:#?}");
}

#[test]
fn a_table_whose_stream_someone_turned_off_gets_a_new_stream_and_a_new_mapping() {
    let policy = policy();
    let name = "timeseries_2018-10-26";
    let mut table = ours(
        &policy,
        name,
        Some(vec![mapping(name, OURS, MappingState::Enabled)]),
    );
    table.stream = None;
    let plan = create_new(&policy, &[table]);
    let actions: Vec<&str> = items(&plan, name)
        .iter()
        .map(|i| i.decision.action())
        .filter(|a| a.contains("stream") || a.contains("mapping") || *a == "configure")
        .collect();
    assert_eq!(
        actions,
        [
            "configure",
            "delete_event_source_mapping",
            "create_event_source_mapping"
        ],
        "{plan:#?}"
    );
    let unmap = items(&plan, name)
        .into_iter()
        .find(|i| matches!(i.decision, Decision::DeleteEventSourceMapping(_)))
        .unwrap();
    assert_reason_mentions(unmap, &["stream is off", "Enabled-ingest-consumer"]);
}

#[test]
fn a_deleted_tables_mapping_goes_even_when_its_stream_was_off() {
    let policy = deleting();
    let name = "timeseries_2018-10-20";
    let mut due = ours(
        &policy,
        name,
        Some(vec![mapping(name, OURS, MappingState::Enabled)]),
    );
    due.stream = None;
    due.scaling = Some(Vec::new());
    due.resource_policy = Some(ResourcePolicy::default());
    let newer = ["timeseries_2018-10-25", "timeseries_2018-10-26"].map(|n| ours(&policy, n, Some(vec![])));
    let plan = resize_old(&policy, &[&newer[..], &[due]].concat());
    let actions: Vec<&str> = items(&plan, name)
        .iter()
        .map(|i| i.decision.action())
        .filter(|a| matches!(*a, "delete" | "delete_event_source_mapping"))
        .collect();
    assert_eq!(actions, ["delete", "delete_event_source_mapping"], "{plan:#?}");
}
