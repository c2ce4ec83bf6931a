//! The planner's rules for global secondary indexes and the write grace, with a fixed clock.

use crate::common::at;
use crate::common::plans::{assert_reason_mentions, create_new, resize_old};
use crate::common::policies::{policy_of, BY_DEVICE, BY_SITE, STRING_KEY};
use ddb_rollover::policy::{
    AttributeKind, Billing, Capacity, KeyAttribute, KeySchema, OnDemandLimits, Projection,
};
use ddb_rollover::table::{CapacityChange, TableSetting};
use ddb_rollover::table::{ObservedIndex, ObservedTable, TableStatus};
use ddb_rollover::DeferralCause;
use ddb_rollover::Policy;
use ddb_rollover::{plan, Decision, Operation, Plan, PlanItem};

/// Phases 0 and 1 with their index throughput.
const PHASES: &str = r#"
[[phases]]
min_age = 0
read = 300
write = 1000
index_read = 20
index_write = 200

[[phases]]
min_age = 1
read = 100
write = 1
index_read = 5
index_write = 1
"#;

fn policy() -> Policy {
    policy_of(&[STRING_KEY, BY_DEVICE, BY_SITE, PHASES])
}

fn provisioned(read: i64, write: i64) -> Billing {
    Billing::Provisioned(Capacity { read, write })
}

/// An index as DescribeTable reports it: the policy's key and projection when the policy names
/// it, else a key of its own.
fn index(name: &str, billing: Billing) -> ObservedIndex {
    let policy = policy();
    let (key, projection) = match policy.indexes.iter().find(|i| i.name == name) {
        Some(index) => (index.key.clone(), index.projection.clone()),
        None => (
            KeySchema {
                partition: KeyAttribute {
                    name: format!("{name}_key"),
                    kind: AttributeKind::S,
                },
                sort: None,
            },
            Projection::All,
        ),
    };
    ObservedIndex {
        name: name.into(),
        status: TableStatus::Active,
        backfilling: false,
        billing,
        decreases_today: 0,
        last_decrease: None,
        key: Some(key),
        projection: Some(projection),
        warm: None,
    }
}

/// A table with the policy's two indexes at `index_billing` (the policy's key).
fn table(name: &str, billing: Billing, index_billing: Billing) -> ObservedTable {
    let mut t = ObservedTable::active(name, billing);
    t.key = Some(policy().key);
    t.global_indexes = vec![index("by_device", index_billing), index("by_site", index_billing)];
    t
}

/// Table `name` at phase 0, its two indexes too.
fn hot(name: &str) -> ObservedTable {
    table(name, provisioned(300, 1000), provisioned(20, 200))
}

fn items<'a>(plan: &'a Plan, table: &str) -> Vec<&'a PlanItem> {
    plan.items.iter().filter(|i| i.facts.table == table).collect()
}

fn update_of<'a>(plan: &'a Plan, table: &str) -> &'a CapacityChange {
    match &items(plan, table)[0].decision {
        Decision::Update(change) => change,
        other => panic!("{table}: expected an update, got {other:?}: {plan:#?}"),
    }
}

#[test]
fn a_phase_change_sets_every_policy_index_in_the_same_update() {
    let yesterday = hot("timeseries_2018-10-25");
    let plan = resize_old(&policy(), &[yesterday]);
    let change = update_of(&plan, "timeseries_2018-10-25");
    assert_eq!(change.to, provisioned(100, 1));
    let parts: Vec<(&str, Billing)> = change.indexes.iter().map(|i| (i.index.as_str(), i.to)).collect();
    assert_eq!(
        parts,
        [("by_device", provisioned(5, 1)), ("by_site", provisioned(5, 1))]
    );
}

#[test]
fn an_index_out_of_decrease_budget_defers_the_change_and_says_which() {
    let mut yesterday = hot("timeseries_2018-10-25");
    // The table's own budget is fine; one index used its four free decreases minutes ago.
    yesterday.global_indexes[1].decreases_today = 4;
    yesterday.global_indexes[1].last_decrease = Some(at("2018-10-26T00:05:00Z"));
    let plan = resize_old(&policy(), &[yesterday]);
    let item = items(&plan, "timeseries_2018-10-25")[0];
    assert_eq!(
        item.decision,
        Decision::Deferred {
            retry_after: Some(at("2018-10-26T01:05:00Z")),
            cause: DeferralCause::DecreaseBudget
        }
    );
    assert!(item.reason.contains("index by_site"), "{}", item.reason);
    assert!(!item.reason.contains("by_device"), "{}", item.reason);
}

#[test]
fn only_indexes_below_their_phase_are_changed_when_the_table_is_right() {
    let mut yesterday = table("timeseries_2018-10-25", provisioned(100, 1), provisioned(5, 1));
    yesterday.global_indexes[0].billing = provisioned(20, 200);
    let plan = resize_old(&policy(), &[yesterday]);
    let change = update_of(&plan, "timeseries_2018-10-25");
    assert!(!change.changes_table());
    assert_eq!(change.indexes.len(), 1);
    assert_eq!(change.indexes[0].index, "by_device");
}

/// A switch to provisioned must set every index's throughput (DynamoDB refuses it otherwise,
/// proven on DynamoDB Local in tests/engine/indexes.rs): with an index that is not the policy's on the
/// table, the switch would touch it, so it is not made, and the reason names the index.
#[test]
fn a_switch_to_provisioned_is_refused_while_an_index_is_not_the_policys() {
    let on_demand = Billing::OnDemand(OnDemandLimits::default());
    let yesterday = table("timeseries_2018-10-25", on_demand, on_demand);
    // Every index the policy's: switched, with every index's throughput.
    let plan_ours = resize_old(&policy(), std::slice::from_ref(&yesterday));
    let change = update_of(&plan_ours, "timeseries_2018-10-25");
    let parts: Vec<&str> = change.indexes.iter().map(|i| i.index.as_str()).collect();
    assert_eq!(parts, ["by_device", "by_site"]);
    assert!(change.indexes.iter().all(|i| i.to == provisioned(5, 1)));

    let mut with_hand_made = yesterday;
    with_hand_made.global_indexes.push(index("by_hand", on_demand));
    let plan = resize_old(&policy(), &[with_hand_made]);
    let main = items(&plan, "timeseries_2018-10-25")[0];
    assert_eq!(main.decision, Decision::Skipped, "{plan:#?}");
    assert_reason_mentions(main, &["a switch to", "index by_hand (not in the policy)"]);
    // Noted, not otherwise touched.
    assert!(items(&plan, "timeseries_2018-10-25")
        .iter()
        .any(|i| i.decision == Decision::Unchanged
            && i.reason
                .contains("index by_hand (not in the policy): not this policy's")));
}

/// Regression: a hand-made table's index named like the policy's but on another key got
/// the policy's throughput. An index is the policy's only when its name, key schema and
/// projection are.
#[test]
fn an_index_named_like_the_policys_on_another_key_or_projection_is_not_touched() {
    for (field, tweak) in [
        (
            "key",
            Box::new(|i: &mut ObservedIndex| i.key.as_mut().unwrap().partition.name = "customer".into())
                as Box<dyn Fn(&mut ObservedIndex)>,
        ),
        (
            "projection",
            Box::new(|i: &mut ObservedIndex| i.projection = Some(Projection::KeysOnly)),
        ),
    ] {
        let mut yesterday = hot("timeseries_2018-10-25");
        tweak(&mut yesterday.global_indexes[1]);
        let plan = resize_old(&policy(), &[yesterday]);
        let change = update_of(&plan, "timeseries_2018-10-25");
        let parts: Vec<&str> = change.indexes.iter().map(|i| i.index.as_str()).collect();
        assert_eq!(parts, ["by_device"], "{field}: {change:?}");
        let main = items(&plan, "timeseries_2018-10-25")[0];
        assert!(
            main.reason.contains("index by_site ("),
            "{field}: {}",
            main.reason
        );
        let verdict = main.verdict.as_ref().unwrap();
        assert!(!verdict.index_is_ours("by_site") && verdict.index_is_ours("by_device"));
    }
}

#[test]
fn an_index_the_policy_does_not_name_is_left_alone_otherwise() {
    let mut yesterday = hot("timeseries_2018-10-25");
    yesterday.global_indexes.push(index("by_hand", provisioned(7, 7)));
    let plan = resize_old(&policy(), &[yesterday]);
    let change = update_of(&plan, "timeseries_2018-10-25");
    assert!(change.indexes.iter().all(|i| i.index != "by_hand"), "{change:?}");
}

#[test]
fn a_building_index_defers_its_tables_change() {
    for (status, backfilling) in [(TableStatus::Creating, false), (TableStatus::Active, true)] {
        let mut yesterday = hot("timeseries_2018-10-25");
        yesterday.global_indexes[0].status = status.clone();
        yesterday.global_indexes[0].backfilling = backfilling;
        let plan = resize_old(&policy(), &[yesterday]);
        let item = items(&plan, "timeseries_2018-10-25")[0];
        assert_eq!(
            item.decision,
            Decision::Deferred {
                retry_after: None,
                cause: DeferralCause::IndexBusy
            },
            "{status:?}"
        );
        assert!(item.reason.contains("index by_device"), "{}", item.reason);
    }
}

#[test]
fn a_new_index_goes_to_current_and_pre_built_tables_one_per_run_and_is_only_noted_on_old_ones() {
    let old_index = |name: &str, billing| {
        let mut t = table(name, billing, provisioned(5, 1));
        t.global_indexes.clear();
        t
    };
    let observed = [
        old_index("timeseries_2018-10-24", provisioned(100, 1)),
        old_index("timeseries_2018-10-25", provisioned(300, 1000)),
        old_index("timeseries_2018-10-26", provisioned(300, 1000)),
    ];
    let create = create_new(&policy(), &observed);
    for name in ["timeseries_2018-10-25", "timeseries_2018-10-26"] {
        let added: Vec<&str> = items(&create, name)
            .iter()
            .filter_map(|i| match &i.decision {
                Decision::Configure(change) => match &change.setting {
                    TableSetting::AddIndex(spec) => Some(spec.index.name.as_str()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        // One creation per UpdateTable: the second index waits for a later run.
        assert_eq!(added, ["by_device"], "{name}");
        assert!(items(&create, name)
            .iter()
            .any(|i| matches!(&i.decision, Decision::Deferred { .. }) && i.reason.contains("by_site")));
    }
    let resize = resize_old(&policy(), &observed);
    let old = items(&resize, "timeseries_2018-10-24");
    assert!(
        old.iter().all(|i| !matches!(i.decision, Decision::Configure(_))),
        "{old:#?}"
    );
    assert!(old.iter().any(|i| i
        .reason
        .contains("the policy's index by_device is not on this table")));
}

#[test]
fn a_new_index_waits_while_another_builds() {
    let mut today = hot("timeseries_2018-10-25");
    today.global_indexes.truncate(1);
    today.global_indexes[0].status = TableStatus::Creating;
    let create = create_new(&policy(), &[today]);
    assert!(items(&create, "timeseries_2018-10-25")
        .iter()
        .all(|i| !matches!(i.decision, Decision::Configure(_))));
}

#[test]
fn create_new_raises_a_pre_built_tables_indexes_to_phase_0() {
    let tomorrow = table("timeseries_2018-10-26", provisioned(300, 1000), provisioned(5, 1));
    let today = hot("timeseries_2018-10-25");
    let create = create_new(&policy(), &[today, tomorrow]);
    let change = update_of(&create, "timeseries_2018-10-26");
    assert!(!change.changes_table());
    assert!(change.indexes.iter().all(|i| i.to == provisioned(20, 200)));
    assert_eq!(
        items(&create, "timeseries_2018-10-25")[0].decision,
        Decision::Unchanged
    );
}

#[test]
fn tables_are_created_with_the_indexes_at_phase_0() {
    let create = create_new(&policy(), &[]);
    let Decision::Create(spec) = &create.items[0].decision else {
        panic!("{create:#?}")
    };
    let indexes: Vec<(&str, Billing)> = spec
        .global_indexes
        .iter()
        .map(|i| (i.index.name.as_str(), i.billing))
        .collect();
    assert_eq!(
        indexes,
        [
            ("by_device", provisioned(20, 200)),
            ("by_site", provisioned(20, 200))
        ]
    );
}

#[test]
fn with_a_grace_yesterdays_table_keeps_phase_0_until_the_grace_ends() {
    let policy = Policy::from_toml("grace = \"2h\"").unwrap();
    let yesterday = ObservedTable::active("timeseries_2018-10-25", provisioned(300, 1000));
    let early = plan(
        &policy,
        at("2018-10-26T01:00:00Z"),
        std::slice::from_ref(&yesterday),
        Operation::ResizeOld,
    );
    let item = items(&early, "timeseries_2018-10-25")[0];
    assert_eq!(item.decision, Decision::Unchanged);
    assert_eq!(item.facts.phase, Some(0));
    assert_reason_mentions(item, &["2018-10-26T02:00:00+00:00"]);
    let late = plan(
        &policy,
        at("2018-10-26T02:15:00Z"),
        &[yesterday],
        Operation::ResizeOld,
    );
    assert_eq!(update_of(&late, "timeseries_2018-10-25").to, provisioned(100, 1));
}
