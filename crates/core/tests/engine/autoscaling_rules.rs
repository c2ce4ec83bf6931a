//! Autoscaling phases in the planner, with a fixed clock: registration when a table enters
//! (or is created in) an autoscaling phase, deregistration before the capacity change when it
//! leaves one, no capacity UpdateTable while the autoscaler owns the table, and tables under a
//! scalable target the policy did not create left alone and reported.

use crate::common::at;
use crate::common::plans::{assert_reason_mentions, create_new, resize_old};
use crate::common::policies::{policy_of, BLOG_HOT_PHASE};
use ddb_rollover::policy::{
    policy_name, ObservedScalableTarget, ObservedScalingPolicy, ScalableDimension, ScalableKey, TargetValue,
};
use ddb_rollover::policy::{Billing, Capacity, OnDemandLimits};
use ddb_rollover::table::ObservedTable;
use ddb_rollover::Observation;
use ddb_rollover::Policy;
use ddb_rollover::{plan as plan_for, Decision, Operation, Plan};

/// Hot: autoscaling 5-500 RCU / 10-1000 WCU at 70%; yesterday 100 / 1; older 1 / 1.
const POLICY: &str = r#"
prefix = "ts"
[[phases]]
min_age = 0
autoscaling = { min_read = 5, max_read = 500, min_write = 10, max_write = 1000 }
[[phases]]
min_age = 1
read = 100
write = 1
[[phases]]
min_age = 2
read = 1
write = 1
"#;

fn policy() -> Policy {
    Policy::from_toml(POLICY).unwrap()
}

fn provisioned(read: i64, write: i64) -> Billing {
    Billing::Provisioned(Capacity { read, write })
}

/// A table with its scalable targets read (`targets`).
fn table(name: &str, billing: Billing, targets: Vec<ObservedScalableTarget>) -> ObservedTable {
    let mut table = ObservedTable::active(name, billing);
    table.scaling = Some(targets);
    table
}

fn target(
    table: &str,
    dimension: ScalableDimension,
    min: i64,
    max: i64,
    policy: Option<(&str, f64)>,
) -> ObservedScalableTarget {
    ObservedScalableTarget {
        key: ScalableKey {
            resource_id: format!("table/{table}"),
            dimension,
        },
        min,
        max,
        policies: policy
            .into_iter()
            .map(|(name, target)| ObservedScalingPolicy {
                name: name.into(),
                arn: Some(format!("arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1:resource/dynamodb/table/{table}:policyName/{name}")),
                policy_type: "TargetTrackingScaling".into(),
                metric: Some(dimension.metric().into()),
                target_value: Some(TargetValue(target)),
            })
            .collect(),
        scheduled_actions: Vec::new(),
    }
}

/// Our two targets on a table, as the hot phase registers them (or with another target value).
fn ours(table: &str, target_value: f64) -> Vec<ObservedScalableTarget> {
    vec![
        target(
            table,
            ScalableDimension::TableRead,
            5,
            500,
            Some((&policy_name("ts", ScalableDimension::TableRead), target_value)),
        ),
        target(
            table,
            ScalableDimension::TableWrite,
            10,
            1000,
            Some((&policy_name("ts", ScalableDimension::TableWrite), target_value)),
        ),
    ]
}

/// [`ours`], with an operator's step-scaling policy added on the read target.
fn ours_with_an_operators_step_policy(table: &str) -> Vec<ObservedScalableTarget> {
    let mut targets = ours(table, 70.0);
    targets[0].policies.push(ObservedScalingPolicy {
        name: "operators-step-policy".into(),
        arn: Some("arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:2:operators".into()),
        policy_type: "StepScaling".into(),
        metric: None,
        target_value: None,
    });
    targets
}

/// (table, action, detail) for every item, in plan order.
fn steps(plan: &Plan) -> Vec<(String, &'static str, String)> {
    plan.items
        .iter()
        .map(|item| {
            let detail = match &item.decision {
                Decision::Create(spec) => spec.billing.to_string(),
                Decision::Update(change) => change.to.to_string(),
                Decision::RegisterScaling(change) => change
                    .targets
                    .iter()
                    .map(|t| format!("{} {}-{} {}% {}", t.key, t.min, t.max, t.target, t.policy_name))
                    .collect::<Vec<_>>()
                    .join("; "),
                Decision::DeregisterScaling(change) => change
                    .targets
                    .iter()
                    .map(|t| format!("{} {}", t.key, t.policy_name))
                    .collect::<Vec<_>>()
                    .join("; "),
                _ => String::new(),
            };
            (item.facts.table.clone(), item.decision.action(), detail)
        })
        .collect()
}

fn step(table: &str, action: &'static str, detail: &str) -> (String, &'static str, String) {
    (table.to_string(), action, detail.to_string())
}

/// No item of `plan` is an `action` step.
fn assert_no_step(plan: &Plan, action: &str) {
    assert!(
        plan.items.iter().all(|i| i.decision.action() != action),
        "{action}: {:#?}",
        plan.items
    );
}

/// `plan` has no change for `table`.
fn assert_leaves_alone(plan: &Plan, table: &str) {
    assert!(
        !plan
            .items
            .iter()
            .any(|i| i.facts.table == table && i.decision.is_change()),
        "{table}: {:#?}",
        plan.items
    );
}

const REGISTER_BOTH: &str =
    "table/T read 5-500 70% ddb-rollover-ts-read; table/T write 10-1000 70% ddb-rollover-ts-write";

fn register_both(table: &str) -> String {
    REGISTER_BOTH.replace("table/T", &format!("table/{table}"))
}

/// The step registering both of the hot phase's targets on `table`.
fn registers_both(table: &str) -> (String, &'static str, String) {
    step(table, "register_scaling", &register_both(table))
}

#[test]
fn create_new_creates_at_the_minimums_then_registers_in_the_same_run() {
    let plan = create_new(&policy(), &[]);
    assert_eq!(
        steps(&plan),
        [
            step("ts_2018-10-25", "create", "5 RCU / 10 WCU"),
            registers_both("ts_2018-10-25"),
            step("ts_2018-10-26", "create", "5 RCU / 10 WCU"),
            registers_both("ts_2018-10-26"),
        ]
    );
    assert!(
        plan.items[1]
            .reason
            .contains("autoscaling 5-500 RCU / 10-1000 WCU at 70%"),
        "{}",
        plan.items[1].reason
    );
}

/// Targets left registered on create_new's names by deleted tables (DynamoDB deregisters
/// nothing): ours alone (our policy, as the ledger recorded it of the deleted table) is
/// registered over; one with no policy of ours, with someone else's policy beside ours, or
/// with a policy of our name that the ledger never recorded, keeps its dimension, and the line
/// names it.
#[test]
fn a_target_left_on_the_name_is_not_registered_over() {
    let policy = policy();
    let now = at("2018-10-25T23:45:00Z");
    let mut left = ours("ts_2018-10-25", 70.0);
    // Our policy on the current table's write target was deleted: no policy of ours.
    left[1].policies.clear();
    left.extend(ours_with_an_operators_step_policy("ts_2018-10-26"));
    // The deleted tables' records: their policies, by ARN.
    let recorded = |name: &str| {
        let mut table = table(name, provisioned(5, 10), left.clone());
        table.key = Some(policy.key.clone());
        table
    };
    let book = ddb_rollover::ledger::Book::enrolling(
        &policy,
        &[recorded("ts_2018-10-25"), recorded("ts_2018-10-26")],
    );
    let plan = ddb_rollover::plan_run(
        &policy,
        now,
        &Observation {
            vacant_targets: left.clone(),
            book: book.clone(),
            ..Observation::default()
        }
        .seen(),
        Operation::CreateNew,
    );
    assert_eq!(
        steps(&plan),
        [
            step("ts_2018-10-25", "create", "5 RCU / 10 WCU"),
            step(
                "ts_2018-10-25",
                "register_scaling",
                "table/ts_2018-10-25 read 5-500 70% ddb-rollover-ts-read"
            ),
            step("ts_2018-10-26", "create", "5 RCU / 10 WCU"),
            step(
                "ts_2018-10-26",
                "register_scaling",
                "table/ts_2018-10-26 write 10-1000 70% ddb-rollover-ts-write"
            ),
        ]
    );
    assert_reason_mentions(
        &plan.items[1],
        &["scalable target table/ts_2018-10-25 write (no policy of ours)"],
    );
    assert_reason_mentions(
        &plan.items[3],
        &["table/ts_2018-10-26 read", "operators-step-policy"],
    );
    // The same targets with nothing recorded: a policy of our name is no proof.
    let plan = ddb_rollover::plan_run(
        &policy,
        now,
        &Observation {
            vacant_targets: left.clone(),
            ..Observation::default()
        }
        .seen(),
        Operation::CreateNew,
    );
    assert!(
        !plan
            .items
            .iter()
            .any(|i| i.decision.action() == "register_scaling"),
        "{:#?}",
        plan.items
    );
    // Every target someone else's: no registration at all, and the line says why.
    let mut theirs = ours("ts_2018-10-25", 70.0);
    theirs.iter_mut().for_each(|t| t.policies.clear());
    let plan = ddb_rollover::plan_run(
        &policy,
        now,
        &Observation {
            vacant_targets: theirs.clone(),
            ..Observation::default()
        }
        .seen(),
        Operation::CreateNew,
    );
    let skipped = plan
        .items
        .iter()
        .find(|i| i.facts.table == "ts_2018-10-25" && i.decision == Decision::Skipped)
        .expect("a line for the registration left out");
    assert_reason_mentions(skipped, &["no scalable target is this policy's to register"]);
    assert_eq!(steps(&plan)[3], registers_both("ts_2018-10-26"));
}

#[test]
fn create_new_registers_a_pre_built_table_and_never_raises_its_capacity() {
    // Pre-built below the minimums, no targets: registering brings it within the bounds.
    let observed = [
        table("ts_2018-10-25", provisioned(5, 10), ours("ts_2018-10-25", 70.0)),
        table("ts_2018-10-26", provisioned(1, 1), vec![]),
    ];
    let plan = create_new(&policy(), &observed);
    assert_eq!(
        steps(&plan),
        [
            step("ts_2018-10-25", "unchanged", ""),
            step("ts_2018-10-26", "unchanged", ""),
            registers_both("ts_2018-10-26"),
        ]
    );
    // Registered as the phase says: nothing to do.
    let observed = [table(
        "ts_2018-10-26",
        provisioned(40, 300),
        ours("ts_2018-10-26", 70.0),
    )];
    let plan = create_new(&policy(), &observed);
    assert_leaves_alone(&plan, "ts_2018-10-26");
}

#[test]
fn create_new_leaves_the_current_table_to_resize_old() {
    // A late retry of the 23:45 run must not register yesterday's table again.
    let observed = [table("ts_2018-10-25", provisioned(5, 10), vec![])];
    let plan = create_new(&policy(), &observed);
    assert_leaves_alone(&plan, "ts_2018-10-25");
}

#[test]
fn resize_old_registers_the_current_table_create_new_could_not() {
    // CreateTable's table was still CREATING when create_new tried: resize_old catches up.
    let observed = [table("ts_2018-10-26", provisioned(5, 10), vec![])];
    let plan = resize_old(&policy(), &observed);
    assert_eq!(
        steps(&plan),
        [
            step("ts_2018-10-26", "skipped", ""),
            registers_both("ts_2018-10-26"),
        ]
    );
}

#[test]
fn leaving_an_autoscaling_phase_deregisters_then_resizes_in_one_run() {
    let observed = [
        table(
            "ts_2018-10-25",
            provisioned(240, 800),
            ours("ts_2018-10-25", 70.0),
        ),
        table("ts_2018-10-26", provisioned(5, 10), ours("ts_2018-10-26", 70.0)),
    ];
    let plan = resize_old(&policy(), &observed);
    assert_eq!(
        steps(&plan),
        [
            step(
                "ts_2018-10-25",
                "deregister_scaling",
                "table/ts_2018-10-25 read ddb-rollover-ts-read; table/ts_2018-10-25 write ddb-rollover-ts-write"
            ),
            step("ts_2018-10-25", "update", "100 RCU / 1 WCU"),
            step("ts_2018-10-26", "skipped", ""),
        ]
    );
    // Once deregistered, only the capacity is the policy's business.
    let observed = [table("ts_2018-10-25", provisioned(100, 1), vec![])];
    let plan = resize_old(&policy(), &observed);
    assert_eq!(steps(&plan), [step("ts_2018-10-25", "unchanged", "")]);
}

#[test]
fn a_spent_decrease_budget_still_deregisters_and_defers_the_update() {
    let mut busy = table(
        "ts_2018-10-25",
        provisioned(240, 800),
        ours("ts_2018-10-25", 70.0),
    );
    busy.decreases_today = 27;
    busy.last_decrease = Some(at("2018-10-26T00:10:00Z"));
    let plan = resize_old(&policy(), &[busy]);
    let actions: Vec<_> = steps(&plan).into_iter().map(|(_, action, _)| action).collect();
    assert_eq!(actions, ["deregister_scaling", "deferred"]);
}

#[test]
fn in_an_autoscaling_phase_capacity_is_the_autoscalers() {
    // Phase 1 autoscales here; the table's capacity is outside the bounds: no UpdateTable,
    // registration (which brings it within them) only.
    let policy = policy_of(&[
        "prefix = \"ts\"\n",
        BLOG_HOT_PHASE,
        "[[phases]]\nmin_age = 1\nautoscaling = { min_read = 5, max_read = 500, min_write = 10, max_write = 1000 }\n",
    ]);
    let observed = [table("ts_2018-10-25", provisioned(300, 1000), vec![])];
    let plan1 = resize_old(&policy, &observed);
    assert_eq!(steps(&plan1), [registers_both("ts_2018-10-25")]);
    // Registered, at any capacity: unchanged.
    let observed = [table(
        "ts_2018-10-25",
        provisioned(17, 2),
        ours("ts_2018-10-25", 70.0),
    )];
    assert_eq!(
        steps(&resize_old(&policy, &observed)),
        [step("ts_2018-10-25", "unchanged", "")]
    );
    // Our policy with another target value (the phase changed): updated.
    let observed = [table(
        "ts_2018-10-25",
        provisioned(17, 2),
        ours("ts_2018-10-25", 50.0),
    )];
    let plan3 = resize_old(&policy, &observed);
    assert_eq!(steps(&plan3), [registers_both("ts_2018-10-25")]);
    assert_reason_mentions(&plan3.items[0], &["update"]);
    // On-demand: switched to provisioned at the minimums, then registered, in that order.
    let observed = [table(
        "ts_2018-10-25",
        Billing::OnDemand(OnDemandLimits::default()),
        vec![],
    )];
    assert_eq!(
        steps(&resize_old(&policy, &observed)),
        [
            step("ts_2018-10-25", "update", "5 RCU / 10 WCU"),
            registers_both("ts_2018-10-25"),
        ]
    );
    // An endpoint without Application Auto Scaling: nothing registered, left as is.
    let mut unread = ObservedTable::active("ts_2018-10-25", provisioned(300, 1000));
    unread.scaling = None;
    unread.scaling_unsupported = true;
    assert_eq!(
        steps(&resize_old(&policy, &[unread])),
        [step("ts_2018-10-25", "unchanged", "")]
    );
}

#[test]
fn a_foreign_scalable_target_is_reported_never_resized_against_or_deregistered() {
    // Someone else's target (no policy of ours) on yesterday's table, and ours on the read side.
    let mut targets = ours("ts_2018-10-25", 70.0);
    targets[1] = target(
        "ts_2018-10-25",
        ScalableDimension::TableWrite,
        1,
        50,
        Some(("their-write-policy", 60.0)),
    );
    let observed = [
        table("ts_2018-10-25", provisioned(240, 800), targets),
        // Another family's policy name does not make a target ours.
        table(
            "ts_2018-10-24",
            provisioned(100, 1),
            vec![target(
                "ts_2018-10-24",
                ScalableDimension::TableRead,
                1,
                10,
                Some(("ddb-rollover-ts_eu-read", 70.0)),
            )],
        ),
    ];
    let plan = resize_old(&policy(), &observed);
    // Our own read target is removed (every policy on it is ours), and the read capacity moves
    // to the phase; the write capacity is held by their write target, so it stays as it is.
    assert_eq!(
        steps(&plan),
        [
            step("ts_2018-10-24", "skipped", ""),
            step(
                "ts_2018-10-25",
                "deregister_scaling",
                "table/ts_2018-10-25 read ddb-rollover-ts-read"
            ),
            step("ts_2018-10-25", "update", "100 RCU / 800 WCU"),
        ]
    );
    let Decision::DeregisterScaling(removal) = &plan.items[1].decision else {
        panic!("{:#?}", plan.items)
    };
    assert!(removal.targets[0].deregister_target);
    let reason = &plan.items[2].reason;
    assert!(
        reason.contains("not this policy's")
            && reason.contains("table/ts_2018-10-25 write (policies: their-write-policy)"),
        "{reason}"
    );
    let verdict = plan.items[2].verdict.as_ref().expect("a verdict");
    assert_eq!(verdict.label(), "ours (ledger: created), 1 foreign part(s)");
    let warning = plan
        .warnings
        .iter()
        .find(|w| w.contains("Application Auto Scaling"))
        .expect("a warning");
    assert!(
        warning.starts_with("2 table(s)") && warning.contains("ts_2018-10-25"),
        "{warning}"
    );

    // create_new: a pre-built table with a foreign target on its read capacity gets ours on the
    // write capacity only; the read target is never registered over.
    let prebuilt = table(
        "ts_2018-10-27",
        provisioned(1, 1),
        vec![target("ts_2018-10-27", ScalableDimension::TableRead, 1, 10, None)],
    );
    let plan = plan_for(
        &policy(),
        at("2018-10-26T23:45:00Z"),
        &[prebuilt],
        Operation::CreateNew,
    );
    let changes: Vec<_> = steps(&plan)
        .into_iter()
        .filter(|(table, action, _)| table == "ts_2018-10-27" && *action != "unchanged")
        .collect();
    assert_eq!(
        changes,
        [step(
            "ts_2018-10-27",
            "register_scaling",
            "table/ts_2018-10-27 write 10-1000 70% ddb-rollover-ts-write"
        )],
        "{:#?}",
        plan.items
    );
    let register = plan
        .items
        .iter()
        .find(|i| i.facts.table == "ts_2018-10-27" && i.decision.action() == "register_scaling")
        .unwrap();
    assert_reason_mentions(register, &["table/ts_2018-10-27 read"]);
    assert!(plan.warnings.iter().any(|w| w.contains("ts_2018-10-27")));
}

/// Issue 38: a foreign scalable target on the write capacity alone also stopped the read
/// capacity's change (the whole table's throughput was held). Only the dimension under the
/// target is left as it is; the other follows the phase, and the reason says which dimension is
/// left and whose target holds it. Likewise the other way round, and for create_new's raise.
#[test]
fn a_foreign_target_on_one_dimension_leaves_only_that_dimension() {
    let fixed = Policy::from_toml("prefix = \"ts\"\n").unwrap();
    let write_held = table(
        "ts_2018-10-25",
        provisioned(300, 1000),
        vec![target(
            "ts_2018-10-25",
            ScalableDimension::TableWrite,
            1,
            2000,
            Some(("their-write-policy", 60.0)),
        )],
    );
    let plan = resize_old(&fixed, &[write_held]);
    assert_eq!(
        steps(&plan),
        [step("ts_2018-10-25", "update", "100 RCU / 1000 WCU")],
        "{:#?}",
        plan.items
    );
    assert_reason_mentions(
        &plan.items[0],
        &[
            "its write capacity, held by scalable target table/ts_2018-10-25 write (policies: their-write-policy)",
        ],
    );
    assert!(
        !plan.items[0].reason.contains("read capacity, held"),
        "{}",
        plan.items[0].reason
    );

    let read_held = table(
        "ts_2018-10-25",
        provisioned(300, 1000),
        vec![target(
            "ts_2018-10-25",
            ScalableDimension::TableRead,
            1,
            500,
            None,
        )],
    );
    let plan = resize_old(&fixed, &[read_held]);
    assert_eq!(steps(&plan), [step("ts_2018-10-25", "update", "300 RCU / 1 WCU")]);
    assert_reason_mentions(&plan.items[0], &["its read capacity, held by scalable target"]);

    // create_new raises a pre-built table's free dimension to phase 0, never the held one.
    let prebuilt = table(
        "ts_2018-10-26",
        provisioned(1, 1),
        vec![target(
            "ts_2018-10-26",
            ScalableDimension::TableWrite,
            1,
            10,
            None,
        )],
    );
    let plan = create_new(&fixed, &[prebuilt]);
    let raise = plan
        .items
        .iter()
        .find(|i| i.facts.table == "ts_2018-10-26" && i.decision.action() == "update")
        .unwrap_or_else(|| panic!("{:#?}", plan.items));
    let Decision::Update(change) = &raise.decision else {
        unreachable!()
    };
    assert_eq!(change.to, provisioned(300, 1));
    assert_reason_mentions(
        raise,
        &["its write capacity, held by scalable target table/ts_2018-10-26 write"],
    );
}

#[test]
fn fixed_phases_without_targets_plan_as_before() {
    let policy = Policy::default();
    assert!(!policy.uses_autoscaling());
    // As the run reads it: a capacity change is due, so its scalable targets are read (none).
    let observed = [table("timeseries_2018-10-25", provisioned(300, 1000), Vec::new())];
    let plan = resize_old(&policy, &observed);
    assert_eq!(
        steps(&plan),
        [step("timeseries_2018-10-25", "update", "100 RCU / 1 WCU")]
    );
    // Before they are read (a run's first plan), the change waits for them: the run reads
    // them, then decides.
    let mut unread = [ObservedTable::active(
        "timeseries_2018-10-25",
        provisioned(300, 1000),
    )];
    unread[0].scaling = None;
    let plan = resize_old(&policy, &unread);
    assert_eq!(
        plan.items[0].decision,
        Decision::Deferred {
            retry_after: None,
            cause: ddb_rollover::DeferralCause::ScalingNotRead
        }
    );
}

/// Regression: an operator's step-scaling policy on our scalable target was destroyed
/// when the table left its autoscaling phase (DeregisterScalableTarget deletes every policy on
/// the target). Now only our policy is deleted, the target stays, their policy is named, and
/// the capacity their target holds is not changed; retention does not delete the table.
#[test]
fn a_foreign_policy_on_our_target_keeps_the_target_and_its_capacity() {
    let targets = ours_with_an_operators_step_policy("ts_2018-10-25");
    let observed = [table("ts_2018-10-25", provisioned(240, 800), targets)];
    let plan = resize_old(&policy(), &observed);
    let Decision::DeregisterScaling(removal) = &plan.items[0].decision else {
        panic!("{:#?}", plan.items)
    };
    let shared = removal
        .targets
        .iter()
        .find(|t| t.key.dimension == ScalableDimension::TableRead)
        .expect("the read target");
    assert!(!shared.deregister_target, "{removal:#?}");
    let write = removal
        .targets
        .iter()
        .find(|t| t.key.dimension == ScalableDimension::TableWrite)
        .expect("the write target");
    assert!(write.deregister_target, "{removal:#?}");
    assert_reason_mentions(&plan.items[0], &["operators-step-policy"]);
    // Their policy holds the read capacity; the write capacity, our target gone, follows the
    // phase.
    let update = plan
        .items
        .iter()
        .find(|i| i.decision.action() == "update")
        .unwrap_or_else(|| panic!("{:#?}", plan.items));
    assert_eq!(steps(&plan)[1].2, "240 RCU / 1 WCU", "{:#?}", plan.items);
    assert_reason_mentions(update, &["its read capacity, held by", "operators-step-policy"]);

    // With retention due, the table is not deleted either: something foreign claims it.
    let policy = Policy::from_toml(&format!(
        "{POLICY}\n[retention]\ndelete_after = 1\nkeep_newest = 1\n"
    ))
    .unwrap();
    let targets = ours_with_an_operators_step_policy("ts_2018-10-25");
    let mut tagged = table("ts_2018-10-25", provisioned(240, 800), targets);
    tagged.key = Some(policy.key.clone());
    tagged.tags = Some(std::collections::BTreeMap::from([(
        "ddb-rollover:family".to_string(),
        "ts".to_string(),
    )]));
    let current = table("ts_2018-10-26", provisioned(5, 10), Vec::new());
    let plan = resize_old(&policy, &[tagged, current]);
    assert_no_step(&plan, "delete");
}
