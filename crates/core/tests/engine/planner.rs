//! The planner's rules, one test each, with a fixed clock.

use crate::common::at;
use crate::common::plans::{assert_reason_mentions, create_new, resize_old};
use crate::common::policies::{policy_of, BLOG_HOT_PHASE};
use chrono::{Duration, TimeZone, Utc};
use ddb_rollover::policy::Capacity;
use ddb_rollover::policy::{Billing, OnDemandLimits, TableClass};
use ddb_rollover::table::{CapacityChange, ClassChange};
use ddb_rollover::table::{ObservedTable, TableStatus};
use ddb_rollover::DeferralCause;
use ddb_rollover::Policy;
use ddb_rollover::{plan, Decision, Operation, Plan};

const HOT: Capacity = Capacity {
    read: 300,
    write: 1000,
};
const WARM: Capacity = Capacity { read: 100, write: 1 };
const COLD: Capacity = Capacity { read: 1, write: 1 };

fn table(name: &str, capacity: Capacity) -> ObservedTable {
    ObservedTable::active(name, Billing::Provisioned(capacity))
}

fn with_status(mut t: ObservedTable, status: TableStatus) -> ObservedTable {
    t.status = status;
    t
}

/// (table, action) pairs, where action is create/update with the target capacity.
fn changes(plan: &Plan) -> Vec<(String, String)> {
    plan.items
        .iter()
        .filter_map(|item| match &item.decision {
            Decision::Create(spec) => Some((item.facts.table.clone(), format!("create {}", spec.billing))),
            Decision::Update(change) => Some((item.facts.table.clone(), format!("update {}", change.to))),
            _ => None,
        })
        .collect()
}

fn decision_of<'a>(plan: &'a Plan, table: &str) -> &'a Decision {
    &plan
        .items
        .iter()
        .find(|item| item.facts.table == table)
        .unwrap_or_else(|| panic!("{table} not in plan: {plan:#?}"))
        .decision
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn create_new_before_midnight_builds_tomorrows_table_hot() {
    let policy = Policy::default();
    let plan = create_new(&Policy::default(), &[]);
    assert_eq!(plan.current_period, "2018-10-25");
    assert_eq!(
        changes(&plan),
        pairs(&[
            ("timeseries_2018-10-25", "create 300 RCU / 1000 WCU"),
            ("timeseries_2018-10-26", "create 300 RCU / 1000 WCU"),
        ])
    );
    let Decision::Create(spec) = decision_of(&plan, "timeseries_2018-10-26") else {
        panic!()
    };
    assert_eq!(spec.key, policy.key);
}

#[test]
fn create_new_builds_premake_periods_ahead() {
    let policy = Policy::from_toml("premake = 3").unwrap();
    let existing = [table("timeseries_2018-10-25", HOT)];
    let plan = plan(
        &policy,
        at("2018-10-25T12:00:00Z"),
        &existing,
        Operation::CreateNew,
    );
    let created: Vec<_> = changes(&plan).into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        created,
        [
            "timeseries_2018-10-26",
            "timeseries_2018-10-27",
            "timeseries_2018-10-28"
        ]
    );
    assert_eq!(decision_of(&plan, "timeseries_2018-10-25"), &Decision::Unchanged);
}

#[test]
fn create_new_never_lowers_but_raises_to_phase_zero() {
    let existing = [
        table(
            "timeseries_2018-10-25",
            Capacity {
                read: 500,
                write: 2000,
            },
        ),
        table("timeseries_2018-10-26", Capacity { read: 5, write: 1200 }),
    ];
    let plan = create_new(&Policy::default(), &existing);
    assert_eq!(decision_of(&plan, "timeseries_2018-10-25"), &Decision::Unchanged);
    assert_eq!(
        decision_of(&plan, "timeseries_2018-10-26"),
        &Decision::Update(CapacityChange {
            name: "timeseries_2018-10-26".into(),
            from: Billing::Provisioned(Capacity { read: 5, write: 1200 }),
            to: Billing::Provisioned(Capacity {
                read: 300,
                write: 1200
            }),
            indexes: Vec::new(),
        })
    );
}

/// A retry of the 23:45 run delivered after resize_old (still deciding as of 23:45) must not
/// raise the table resize_old just dialled down.
#[test]
fn create_new_never_raises_the_current_table() {
    let existing = [
        table("timeseries_2018-10-25", WARM),
        table("timeseries_2018-10-26", HOT),
    ];
    let plan = create_new(&Policy::default(), &existing);
    assert!(changes(&plan).is_empty(), "{plan:#?}");
    assert_eq!(decision_of(&plan, "timeseries_2018-10-25"), &Decision::Unchanged);
}

#[test]
fn create_new_leaves_past_tables_and_busy_or_on_demand_tables_alone() {
    let mut on_demand = table("timeseries_2018-10-26", COLD);
    on_demand.billing = Billing::OnDemand(Default::default());
    let existing = [
        table("timeseries_2018-10-20", HOT),
        with_status(table("timeseries_2018-10-25", COLD), TableStatus::Creating),
        on_demand,
    ];
    let plan = create_new(&Policy::default(), &existing);
    assert!(changes(&plan).is_empty(), "{plan:#?}");
    assert_eq!(decision_of(&plan, "timeseries_2018-10-20"), &Decision::Skipped);
    assert_eq!(decision_of(&plan, "timeseries_2018-10-25"), &Decision::Unchanged);
    assert_eq!(decision_of(&plan, "timeseries_2018-10-26"), &Decision::Unchanged);
}

#[test]
fn resize_old_moves_each_table_to_the_phase_of_its_age() {
    let existing = [
        table("timeseries_2018-10-22", HOT),
        table("timeseries_2018-10-23", WARM),
        table("timeseries_2018-10-24", COLD),
        table("timeseries_2018-10-25", HOT),
        table("timeseries_2018-10-26", HOT),
        table("timeseries_2018-10-27", HOT),
    ];
    let plan = resize_old(&Policy::default(), &existing);
    assert_eq!(
        changes(&plan),
        pairs(&[
            ("timeseries_2018-10-22", "update 1 RCU / 1 WCU"),
            ("timeseries_2018-10-23", "update 1 RCU / 1 WCU"),
            ("timeseries_2018-10-25", "update 100 RCU / 1 WCU"),
        ])
    );
    assert_eq!(decision_of(&plan, "timeseries_2018-10-24"), &Decision::Unchanged);
    assert_eq!(decision_of(&plan, "timeseries_2018-10-26"), &Decision::Skipped);
    assert_eq!(decision_of(&plan, "timeseries_2018-10-27"), &Decision::Skipped);
    let ages: Vec<_> = plan.items.iter().map(|i| i.facts.age.unwrap()).collect();
    assert_eq!(ages, [4, 3, 2, 1, 0, -1]);
}

#[test]
fn resize_old_changes_nothing_that_is_already_right() {
    let existing = [
        table("timeseries_2018-10-24", COLD),
        table("timeseries_2018-10-25", WARM),
    ];
    let plan = resize_old(&Policy::default(), &existing);
    assert!(changes(&plan).is_empty());
    assert!(plan.items.iter().all(|i| i.decision == Decision::Unchanged));
}

#[test]
fn resize_old_raises_a_table_below_its_phase() {
    let existing = [table("timeseries_2018-10-25", COLD)];
    let plan = resize_old(&Policy::default(), &existing);
    assert_eq!(
        changes(&plan),
        pairs(&[("timeseries_2018-10-25", "update 100 RCU / 1 WCU")])
    );
}

#[test]
fn resize_old_defers_tables_that_are_not_active() {
    for status in [
        TableStatus::Creating,
        TableStatus::Updating,
        TableStatus::Deleting,
        TableStatus::Other("ARCHIVING".into()),
    ] {
        let existing = [with_status(table("timeseries_2018-10-20", HOT), status.clone())];
        let plan = resize_old(&Policy::default(), &existing);
        assert_eq!(
            plan.items[0].decision,
            Decision::Deferred {
                retry_after: None,
                cause: DeferralCause::TableBusy
            }
        );
        assert!(
            plan.items[0].reason.contains(status.as_str()),
            "{}",
            plan.items[0].reason
        );
    }
}

#[test]
fn resize_old_defers_decreases_beyond_dynamodbs_daily_budget() {
    let policy = Policy::default();
    let now = at("2018-10-26T00:15:00Z");
    let mut spent = table("timeseries_2018-10-24", HOT);
    spent.decreases_today = 4;
    spent.last_decrease = Some(now - Duration::minutes(10));
    let mut rested = table("timeseries_2018-10-23", HOT);
    rested.decreases_today = 4;
    rested.last_decrease = Some(now - Duration::minutes(61));
    let mut yesterday_spent = table("timeseries_2018-10-22", HOT);
    yesterday_spent.decreases_today = 27;
    yesterday_spent.last_decrease = Some(now - Duration::minutes(30));
    let plan = plan(
        &policy,
        now,
        &[spent, rested, yesterday_spent],
        Operation::ResizeOld,
    );
    assert_eq!(
        decision_of(&plan, "timeseries_2018-10-24"),
        &Decision::Deferred {
            retry_after: Some(now + Duration::minutes(50)),
            cause: DeferralCause::DecreaseBudget
        }
    );
    assert!(matches!(
        decision_of(&plan, "timeseries_2018-10-23"),
        Decision::Update(_)
    ));
    // The last decrease was before midnight UTC: today's budget is fresh.
    assert!(matches!(
        decision_of(&plan, "timeseries_2018-10-22"),
        Decision::Update(_)
    ));
}

#[test]
fn increases_are_not_limited_by_the_decrease_budget() {
    let policy = Policy::default();
    let now = at("2018-10-26T00:15:00Z");
    let mut t = table("timeseries_2018-10-25", COLD);
    t.decreases_today = 27;
    t.last_decrease = Some(now - Duration::minutes(1));
    let plan = plan(&policy, now, &[t], Operation::ResizeOld);
    assert!(matches!(plan.items[0].decision, Decision::Update(_)));
}

#[test]
fn on_demand_tables_switch_to_provisioned_at_any_time() {
    let mut t = table("timeseries_2018-10-20", COLD);
    t.billing = Billing::OnDemand(Default::default());
    t.decreases_today = 27;
    t.last_decrease = Some(at("2018-10-26T00:10:00Z"));
    let plan = resize_old(&Policy::default(), &[t]);
    let Decision::Update(change) = &plan.items[0].decision else {
        panic!("{plan:#?}")
    };
    assert!(!change.is_decrease());
    assert_eq!(change.to, Billing::Provisioned(COLD));
}

#[test]
fn foreign_and_unrelated_tables_are_never_touched() {
    let policy = Policy::default();
    let existing = [
        table("timeseries_backup", HOT),
        table("timeseries_2018-10-20-copy", HOT),
        table("timeseries_eu_2018-10-20", HOT),
        table("timeseries2018-10-20", HOT),
        table("orders", HOT),
    ];
    for operation in [Operation::CreateNew, Operation::ResizeOld] {
        let plan = plan(&policy, at("2018-10-26T00:15:00Z"), &existing, operation);
        let foreign: Vec<_> = plan
            .items
            .iter()
            .filter(|i| i.decision == Decision::Foreign)
            .map(|i| i.facts.table.as_str())
            .collect();
        assert_eq!(
            foreign,
            [
                "timeseries_2018-10-20-copy",
                "timeseries_backup",
                "timeseries_eu_2018-10-20"
            ]
        );
        assert!(changes(&plan)
            .iter()
            .all(|(t, _)| t.starts_with("timeseries_2018-10-2") && t.len() == 21));
        assert!(!plan
            .items
            .iter()
            .any(|i| i.facts.table == "orders" || i.facts.table == "timeseries2018-10-20"));
    }
}

#[test]
fn one_run_catches_up_after_missed_days() {
    // Six days of tables, all still hot: the resize runs were missed.
    let existing: Vec<_> = (20..=26)
        .map(|d| table(&format!("timeseries_2018-10-{d}"), HOT))
        .collect();
    let plan = resize_old(&Policy::default(), &existing);
    let mut expected: Vec<(String, String)> = (20..=24)
        .map(|d| {
            (
                format!("timeseries_2018-10-{d}"),
                "update 1 RCU / 1 WCU".to_string(),
            )
        })
        .collect();
    expected.push(("timeseries_2018-10-25".into(), "update 100 RCU / 1 WCU".into()));
    assert_eq!(changes(&plan), expected);
}

#[test]
fn the_plan_depends_only_on_its_inputs() {
    let policy = Policy::default();
    let mut existing: Vec<_> = (15..=26)
        .map(|d| table(&format!("timeseries_2018-10-{d}"), HOT))
        .collect();
    let now = at("2018-10-26T00:15:00Z");
    let first = plan(&policy, now, &existing, Operation::ResizeOld);
    existing.reverse();
    assert_eq!(plan(&policy, now, &existing, Operation::ResizeOld), first);
}

#[test]
fn every_item_says_why() {
    let policy = Policy::default();
    let existing = [table("timeseries_2018-10-20", HOT), table("timeseries_junk", HOT)];
    for operation in [Operation::CreateNew, Operation::ResizeOld] {
        let plan = plan(&policy, at("2018-10-26T00:15:00Z"), &existing, operation);
        assert!(plan.items.iter().all(|i| !i.reason.is_empty()), "{plan:#?}");
    }
}

#[test]
fn hourly_tables_across_a_dst_change_are_distinct() {
    let policy = Policy::from_toml("period = \"hour\"\ntimezone = \"Europe/Berlin\"\npremake = 4").unwrap();
    // 00:30 UTC on 2018-10-28 is 02:30 CEST; Berlin falls back at 01:00 UTC.
    let plan = plan(
        &policy,
        Utc.with_ymd_and_hms(2018, 10, 28, 0, 30, 0).unwrap(),
        &[],
        Operation::CreateNew,
    );
    let created: Vec<_> = changes(&plan).into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        created,
        [
            "timeseries_2018-10-28T02",
            "timeseries_2018-10-28T02.2",
            "timeseries_2018-10-28T03",
            "timeseries_2018-10-28T04",
            "timeseries_2018-10-28T05",
        ]
    );
}

#[test]
fn monthly_tables_in_a_time_zone() {
    let policy = Policy::from_toml("period = \"month\"\ntimezone = \"America/New_York\"").unwrap();
    // 2018-11-01T02:00Z is still October 31st in New York.
    let plan = plan(&policy, at("2018-11-01T02:00:00Z"), &[], Operation::CreateNew);
    assert_eq!(plan.current_period, "2018-10");
    let created: Vec<_> = changes(&plan).into_iter().map(|(t, _)| t).collect();
    assert_eq!(created, ["timeseries_2018-10", "timeseries_2018-11"]);
}

/// Blog phases, then on-demand in Standard-IA from a week old.
fn tiered_policy() -> Policy {
    policy_of(&[
        BLOG_HOT_PHASE,
        r#"
        [[phases]]
        min_age = 1
        read = 100
        write = 1
        [[phases]]
        min_age = 7
        billing = "on_demand"
        max_read = 50
        table_class = "standard_ia"
        "#,
    ])
}

const ARCHIVE_BILLING: Billing = Billing::OnDemand(OnDemandLimits {
    max_read: Some(50),
    max_write: None,
});

#[test]
fn an_on_demand_phase_switches_billing_first_then_the_table_class() {
    let policy = tiered_policy();
    let now = at("2018-10-26T00:15:00Z");
    let old = table("timeseries_2018-10-19", WARM);
    let plan1 = plan(&policy, now, std::slice::from_ref(&old), Operation::ResizeOld);
    let Decision::Update(change) = &plan1.items[0].decision else {
        panic!("{plan1:#?}")
    };
    assert!(change.is_switch_to_on_demand());
    assert_eq!(change.to, ARCHIVE_BILLING);
    assert_reason_mentions(&plan1.items[0], &["table class follows"]);

    let mut switched = old.clone();
    switched.billing = ARCHIVE_BILLING;
    switched.last_switch_to_on_demand = Some(now);
    let plan2 = plan(
        &policy,
        now,
        std::slice::from_ref(&switched),
        Operation::ResizeOld,
    );
    assert_eq!(
        plan2.items[0].decision,
        Decision::UpdateClass(ClassChange {
            name: "timeseries_2018-10-19".into(),
            from: TableClass::Standard,
            to: TableClass::StandardIa,
        })
    );

    switched.table_class = TableClass::StandardIa;
    switched.table_class_updated = Some(now);
    let plan3 = plan(&policy, now, &[switched], Operation::ResizeOld);
    assert_eq!(plan3.items[0].decision, Decision::Unchanged);
}

/// resize_old under the tiered policy at 00:15 on 2018-10-26 defers `t` for `cause` until
/// `wait` from then.
fn assert_spaced(t: ObservedTable, wait: Duration, cause: DeferralCause) {
    let now = at("2018-10-26T00:15:00Z");
    let plan = plan(&tiered_policy(), now, &[t], Operation::ResizeOld);
    assert_eq!(
        plan.items[0].decision,
        Decision::Deferred {
            retry_after: Some(now + wait),
            cause
        }
    );
}

#[test]
fn switches_to_on_demand_are_spaced_six_hours_apart() {
    let mut t = table("timeseries_2018-10-19", WARM);
    t.last_switch_to_on_demand = Some(at("2018-10-25T22:15:00Z"));
    assert_spaced(t, Duration::hours(4), DeferralCause::OnDemandSwitchSpacing);
}

#[test]
fn table_class_changes_are_spaced_fifteen_days_apart() {
    let mut t = table("timeseries_2018-10-01", WARM);
    t.billing = ARCHIVE_BILLING;
    t.table_class_updated = Some(at("2018-10-23T00:15:00Z"));
    assert_spaced(t, Duration::days(12), DeferralCause::ClassChangeSpacing);
}

#[test]
fn an_on_demand_hot_phase_creates_on_demand_tables_in_its_class() {
    let policy = Policy::from_toml(
        "[[phases]]\nmin_age = 0\nbilling = \"on_demand\"\nmax_write = 4000\ntable_class = \"standard\"",
    )
    .unwrap();
    let plan = create_new(&policy, &[]);
    let Decision::Create(spec) = &plan.items[1].decision else {
        panic!("{plan:#?}")
    };
    assert_eq!(
        spec.billing,
        Billing::OnDemand(OnDemandLimits {
            max_read: None,
            max_write: Some(4000)
        })
    );
    assert_eq!(spec.table_class, Some(TableClass::Standard));
}

#[test]
fn ages_across_a_dst_change_match_the_calendar() {
    let policy = Policy::from_toml("period = \"hour\"\ntimezone = \"Europe/Berlin\"\npremake = 3").unwrap();
    let calendar = policy.calendar();
    let naming = policy.naming();
    let now = Utc.with_ymd_and_hms(2018, 10, 28, 6, 30, 0).unwrap();
    let current = calendar.floor(now);
    // Every other hour from two days before to one day after the fall-back change.
    let mut slot = calendar.floor(now - Duration::days(2));
    let mut existing = Vec::new();
    while slot.start() < now + Duration::days(1) {
        existing.push(table(&naming.table_name(slot), HOT));
        slot = calendar.next(calendar.next(slot));
    }
    for operation in [Operation::CreateNew, Operation::ResizeOld] {
        let plan = plan(&policy, now, &existing, operation);
        for item in &plan.items {
            let slot = calendar.parse(item.facts.period.as_deref().unwrap()).unwrap();
            assert_eq!(
                item.facts.age,
                Some(calendar.periods_between(slot, current)),
                "{}",
                item.facts.table
            );
        }
    }
}
