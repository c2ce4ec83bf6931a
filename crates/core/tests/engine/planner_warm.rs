//! The planner's rules for warm throughput, with a fixed clock: what CreateTable carries, the
//! raise of a pre-built (or aged) table below its phase's, never a lower value, the foreign
//! index left alone, the waits (busy table, building index, a raise still UPDATING, another
//! UpdateTable first), and the policy's validation of `warm`.

use crate::common::at;
use crate::common::plans::{create_new, resize_old};
use crate::common::policies::{
    policy_of, BLOG_HOT_PHASE, BY_DEVICE, STRING_KEY, WARM_HOT_PHASE, WARM_WANT as WANT,
};
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::TAG_FAMILY;
use ddb_rollover::policy::{AttributeKind, Billing, Capacity, KeyAttribute, KeySchema, Projection};
use ddb_rollover::table::{ObservedIndex, ObservedTable, ObservedWarm, TableStatus};
use ddb_rollover::table::{TableSetting, WarmPart};
use ddb_rollover::DeferralCause;
use ddb_rollover::Policy;
use ddb_rollover::{plan, Decision, Operation, Plan, PlanItem};

/// An on-demand hot phase pre-warmed to 40,000 / 20,000, a provisioned one without warm
/// throughput, and an on-demand one asking more writes.
const LATER_PHASES: &str = r#"
[[phases]]
min_age = 1
read = 100
write = 1

[[phases]]
min_age = 3
billing = "on_demand"
warm = { read = 30000, write = 30000 }
"#;

fn policy() -> Policy {
    policy_of(&[STRING_KEY, BY_DEVICE, WARM_HOT_PHASE, LATER_PHASES])
}

fn warm(read: i64, write: i64) -> Option<ObservedWarm> {
    Some(ObservedWarm {
        units: WarmThroughput { read, write },
        status: TableStatus::Active,
    })
}

fn on_demand() -> Billing {
    Billing::OnDemand(Default::default())
}

/// An index as DescribeTable reports it: the policy's `by_device`, or one of someone else's.
fn index(name: &str, units: Option<ObservedWarm>) -> ObservedIndex {
    let (key, projection) = match policy().indexes.iter().find(|i| i.name == name) {
        Some(index) => (index.key.clone(), index.projection.clone()),
        None => (
            KeySchema {
                partition: KeyAttribute {
                    name: "other".into(),
                    kind: AttributeKind::S,
                },
                sort: None,
            },
            Projection::KeysOnly,
        ),
    };
    ObservedIndex {
        name: name.into(),
        status: TableStatus::Active,
        backfilling: false,
        billing: on_demand(),
        decreases_today: 0,
        last_decrease: None,
        key: Some(key),
        projection: Some(projection),
        warm: units,
    }
}

/// One of our tables (family tag), on-demand, the policy's index; table and index warm as given.
fn ours(name: &str, table: Option<ObservedWarm>, by_device: Option<ObservedWarm>) -> ObservedTable {
    let mut t = ObservedTable::active(name, on_demand());
    t.key = Some(policy().key);
    t.tags = Some([(TAG_FAMILY.to_string(), "timeseries".to_string())].into());
    t.warm = table;
    t.global_indexes = vec![index("by_device", by_device)];
    t
}

/// `t` with the table and its index at phase 1's 100 / 1.
fn at_phase_1(mut t: ObservedTable) -> ObservedTable {
    let phase_1 = Billing::Provisioned(Capacity { read: 100, write: 1 });
    t.billing = phase_1;
    t.global_indexes[0].billing = phase_1;
    t
}

fn items<'a>(plan: &'a Plan, table: &str) -> Vec<&'a PlanItem> {
    plan.items.iter().filter(|i| i.facts.table == table).collect()
}

/// The table's warm throughput item, if it has one.
fn warm_item<'a>(plan: &'a Plan, table: &str) -> Option<&'a PlanItem> {
    items(plan, table).into_iter().find(|i| {
        i.reason.starts_with("warm throughput below")
            || matches!(&i.decision, Decision::Configure(c) if matches!(c.setting, TableSetting::Warm(_)))
    })
}

fn raise_parts(item: &PlanItem) -> Vec<WarmPart> {
    match &item.decision {
        Decision::Configure(change) => match &change.setting {
            TableSetting::Warm(raise) => raise.parts.clone(),
            other => panic!("not a warm raise: {other:?}"),
        },
        other => panic!("not a warm raise: {other:?}: {}", item.reason),
    }
}

fn part(index: Option<&str>, from: (i64, i64), to: (i64, i64)) -> WarmPart {
    WarmPart {
        index: index.map(str::to_string),
        from: WarmThroughput {
            read: from.0,
            write: from.1,
        },
        to: WarmThroughput {
            read: to.0,
            write: to.1,
        },
    }
}

#[test]
fn create_new_creates_the_tables_with_the_phases_warm_throughput() {
    let plan = create_new(&policy(), &[]);
    for name in ["timeseries_2018-10-25", "timeseries_2018-10-26"] {
        let Decision::Create(spec) = &items(&plan, name)[0].decision else {
            panic!("{name}: {plan:#?}")
        };
        assert_eq!(spec.warm, Some(WANT), "{name}");
        assert_eq!(spec.global_indexes.len(), 1, "the index gets the same");
        assert!(
            items(&plan, name)[0]
                .reason
                .ends_with("(on-demand, warm throughput 40000 read / 20000 write units/s)"),
            "{}",
            items(&plan, name)[0].reason
        );
    }
    // Without warm throughput in phase 0, CreateTable asks none.
    let plain = Policy::default();
    let plan = create_new(&plain, &[]);
    let Decision::Create(spec) = &plan.items[0].decision else {
        panic!()
    };
    assert_eq!(spec.warm, None);
}

#[test]
fn a_pre_built_table_below_is_raised_the_current_one_is_not() {
    let current = ours("timeseries_2018-10-25", warm(12_000, 4_000), warm(12_000, 4_000));
    // Read already above the phase's: only writes go up, read stays.
    let pre_built = ours("timeseries_2018-10-26", warm(50_000, 4_000), warm(12_000, 4_000));
    let plan = create_new(&policy(), &[current, pre_built]);
    assert!(warm_item(&plan, "timeseries_2018-10-25").is_none(), "{plan:#?}");
    let item = warm_item(&plan, "timeseries_2018-10-26").expect("a raise");
    assert_eq!(
        raise_parts(item),
        [
            part(None, (50_000, 4_000), (50_000, 20_000)),
            part(Some("by_device"), (12_000, 4_000), (40_000, 20_000)),
        ]
    );
    assert!(item.reason.contains("never lowered"), "{}", item.reason);
}

#[test]
fn a_table_at_or_above_is_never_lowered_and_says_so() {
    let pre_built = ours(
        "timeseries_2018-10-26",
        warm(60_000, 30_000),
        warm(40_000, 20_000),
    );
    let plan = create_new(&policy(), &[pre_built]);
    assert!(warm_item(&plan, "timeseries_2018-10-26").is_none(), "{plan:#?}");
    let main = items(&plan, "timeseries_2018-10-26")[0];
    assert_eq!(main.decision, Decision::Unchanged);
    assert!(
        main.reason.ends_with(
            "; unchanged: warm throughput cannot be lowered (the table's 60000 read / 30000 write units/s stay)"
        ),
        "{}",
        main.reason
    );

    // Moving to a phase without warm throughput: the phase change says it once...
    let yesterday = ours(
        "timeseries_2018-10-25",
        warm(40_000, 20_000),
        warm(40_000, 20_000),
    );
    let plan = resize_old(&policy(), std::slice::from_ref(&yesterday));
    let main = items(&plan, "timeseries_2018-10-25")[0];
    assert!(matches!(main.decision, Decision::Update(_)), "{main:#?}");
    assert!(
        main.reason.contains(
            "unchanged: warm throughput cannot be lowered (the table's 40000 read / 20000 write units/s, index by_device's 40000 read / 20000 write units/s stay)"
        ),
        "{}",
        main.reason
    );
    assert!(warm_item(&plan, "timeseries_2018-10-25").is_none());
    // ...and the runs after, with the table in its phase, say nothing more.
    let moved = at_phase_1(yesterday);
    let plan = ddb_rollover::plan(
        &policy(),
        at("2018-10-27T00:15:00Z"),
        &[moved],
        Operation::ResizeOld,
    );
    let main = items(&plan, "timeseries_2018-10-25")[0];
    assert_eq!(main.decision, Decision::Unchanged, "{main:#?}");
    assert!(!main.reason.contains("warm"), "{}", main.reason);
}

#[test]
fn an_aged_table_is_raised_to_its_phases_warm_throughput() {
    // Age 3: the last phase asks 30,000 / 30,000; the table kept 40,000 / 20,000 from phase 0.
    let mut old = ours(
        "timeseries_2018-10-22",
        warm(40_000, 20_000),
        warm(40_000, 20_000),
    );
    old.billing = on_demand();
    let plan = plan(
        &policy(),
        at("2018-10-25T00:15:00Z"),
        &[old],
        Operation::ResizeOld,
    );
    let item = warm_item(&plan, "timeseries_2018-10-22").expect("a raise");
    assert_eq!(
        raise_parts(item),
        [
            part(None, (40_000, 20_000), (40_000, 30_000)),
            part(Some("by_device"), (40_000, 20_000), (40_000, 30_000)),
        ]
    );
}

#[test]
fn an_index_that_is_not_the_policys_is_never_raised() {
    let mut pre_built = ours("timeseries_2018-10-26", warm(40_000, 20_000), warm(12_000, 4_000));
    pre_built
        .global_indexes
        .push(index("ops_index", warm(12_000, 4_000)));
    let plan = create_new(&policy(), &[pre_built.clone()]);
    let item = warm_item(&plan, "timeseries_2018-10-26").expect("a raise");
    assert_eq!(
        raise_parts(item),
        [part(Some("by_device"), (12_000, 4_000), (40_000, 20_000))]
    );
    // Only the foreign index below: nothing to raise.
    pre_built.global_indexes[0].warm = warm(40_000, 20_000);
    let plan = create_new(&policy(), &[pre_built]);
    assert!(warm_item(&plan, "timeseries_2018-10-26").is_none(), "{plan:#?}");
}

#[test]
fn a_raise_waits_for_a_busy_table_a_building_index_an_updating_raise_or_another_update() {
    let now = at("2018-10-25T23:45:00Z");
    let below = || ours("timeseries_2018-10-26", warm(12_000, 4_000), warm(12_000, 4_000));
    let cause = |table: ObservedTable| {
        let plan = plan(&policy(), now, &[table], Operation::CreateNew);
        match &warm_item(&plan, "timeseries_2018-10-26")
            .unwrap_or_else(|| panic!("{plan:#?}"))
            .decision
        {
            Decision::Deferred { cause, .. } => *cause,
            other => panic!("not deferred: {other:?}"),
        }
    };
    let mut updating = below();
    updating.status = TableStatus::Updating;
    assert_eq!(cause(updating), DeferralCause::TableBusy);
    let mut building = below();
    building.global_indexes[0].status = TableStatus::Creating;
    assert_eq!(cause(building), DeferralCause::IndexBusy);
    let mut warming = below();
    warming.global_indexes[0].warm = Some(ObservedWarm {
        units: WarmThroughput {
            read: 20_000,
            write: 8_000,
        },
        status: TableStatus::Updating,
    });
    assert_eq!(cause(warming), DeferralCause::WarmUpdating);
    // The policy's stream is missing too: the raise goes first, the stream waits.
    let streamed = policy_of(&[
        STRING_KEY,
        BY_DEVICE,
        WARM_HOT_PHASE,
        LATER_PHASES,
        "[template]\nstream = \"keys_only\"\n",
    ]);
    let plan = plan(&streamed, now, &[below()], Operation::CreateNew);
    let decisions: Vec<&str> = items(&plan, "timeseries_2018-10-26")
        .iter()
        .map(|i| i.decision.action())
        .filter(|action| *action != "tag")
        .collect();
    assert_eq!(decisions, ["unchanged", "configure", "deferred"], "{plan:#?}");
    // A phase change is the table's UpdateTable this run: the raise waits for the next.
    let yesterday = at_phase_1(ours(
        "timeseries_2018-10-22",
        warm(12_000, 4_000),
        warm(12_000, 4_000),
    ));
    let plan = ddb_rollover::plan(
        &policy(),
        at("2018-10-25T00:15:00Z"),
        &[yesterday],
        Operation::ResizeOld,
    );
    let item = warm_item(&plan, "timeseries_2018-10-22").expect("a deferred raise");
    assert!(
        matches!(
            item.decision,
            Decision::Deferred {
                cause: DeferralCause::OneUpdateAtATime,
                ..
            }
        ),
        "{item:#?}"
    );
}

#[test]
fn an_endpoint_that_reports_no_warm_throughput_gets_no_raise() {
    // dynalite and DynamoDB Local: DescribeTable has no WarmThroughput.
    let pre_built = ours("timeseries_2018-10-26", None, None);
    let plan = create_new(&policy(), &[pre_built]);
    assert!(warm_item(&plan, "timeseries_2018-10-26").is_none(), "{plan:#?}");
}

#[test]
fn every_bad_warm_field_is_named_with_what_is_allowed() {
    // Warm throughput below what is allowed: without a write, under DynamoDB's default, under
    // the phase's capacity.
    const TOO_LOW: &str = r#"
[[phases]]
min_age = 0
billing = "on_demand"
warm = { read = 5000 }
[[phases]]
min_age = 1
read = 300
write = 1000
warm = { read = 299, write = 1000 }
"#;
    let with_unknown_key = format!(
        "{TOO_LOW}[[phases]]\nmin_age = 2\nread = 1\nwrite = 1\nwarm = {{ read = 12000, write = 4000, burst = 1 }}\n"
    );
    let error = Policy::from_toml(&with_unknown_key).unwrap_err();
    // Unknown keys are refused by the parser first, with the key named.
    assert!(error.to_string().contains("burst"), "{error}");
    let error = Policy::from_toml(TOO_LOW).unwrap_err();
    let fields: Vec<&str> = error.fields().iter().map(|f| f.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "phases[0].warm.read",
            "phases[0].warm.write",
            "phases[1].warm.read"
        ],
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.contains("phases[0].warm.read: 5000 is below 12000, DynamoDB's on-demand default"),
        "{text}"
    );
    assert!(
        text.contains("phases[0].warm.write: required with warm"),
        "{text}"
    );
    assert!(
        text.contains("phases[1].warm.read: 299 is below 300, the phase's highest provisioned capacity"),
        "{text}"
    );
    // An index override raises the floor: warm throughput is at least every index's capacity.
    let error = Policy::from_toml(&format!(
        "{BY_DEVICE}{BLOG_HOT_PHASE}\
         index_overrides = {{ by_device = {{ read = 400, write = 1000 }} }}\n\
         warm = {{ read = 300, write = 1000 }}\n"
    ))
    .unwrap_err();
    let fields: Vec<&str> = error.fields().iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["phases[0].warm.read"], "{error}");
    // The minimums themselves are allowed, and the policy's JSON carries `warm` back.
    let policy = Policy::from_toml(
        "[[phases]]\nmin_age = 0\nbilling = \"on_demand\"\nwarm = { read = 12000, write = 4000 }\n",
    )
    .unwrap();
    assert_eq!(policy.hot_phase().warm, Some(WarmThroughput::ON_DEMAND));
    assert_eq!(policy.to_document().validate().unwrap(), policy);
    // A policy without warm keeps its hash: the document has no `warm` then.
    assert!(!serde_json::to_string(&Policy::default().to_document())
        .unwrap()
        .contains("warm"));
}
