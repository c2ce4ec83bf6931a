//! The executor against an in-memory control plane: dry runs, bounded concurrency, and how
//! each kind of failure is reported.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chrono::{DateTime, Utc};
use ddb_rollover::plan::deferral::DeferralCause;
use ddb_rollover::plan::Decision;
use ddb_rollover::policy::scaling::{
    policy_name, ObservedScalableTarget, ObservedScalingPolicy, ScalableDimension, ScalableKey, TargetValue,
};
use ddb_rollover::policy::settings::Billing;
use ddb_rollover::policy::settings::Capacity;
use ddb_rollover::policy::tags::TAG_FAMILY;
use ddb_rollover::policy::Policy;
use ddb_rollover::run::control::{Archives, Clock, ErrorKind, Tables};
use ddb_rollover::table::changes::ExportRequest;
use ddb_rollover::table::{ObservedTable, TableStatus};
use ddb_rollover::{run, ApplyOptions, Operation, Outcome};

use crate::common::at;

mod fake;
mod readiness;
mod retention;
mod runs;
mod status;

use fake::FakeDynamo;

const HOT: Capacity = Capacity {
    read: 300,
    write: 1000,
};

/// Each table's main item (its first): template upkeep items follow it.
fn outcomes(report: &ddb_rollover::RunReport) -> Vec<(String, Outcome)> {
    let mut main: Vec<(String, Outcome)> = report
        .tables
        .iter()
        .map(|l| (l.item.table.clone(), l.outcome))
        .collect();
    main.dedup_by(|b, a| a.0 == b.0);
    main
}

/// One run of `operation` under `policy` on `fake`, at the simulated instant `at` (RFC 3339).
async fn run_at(
    fake: &FakeDynamo,
    policy: &Policy,
    operation: Operation,
    at: &str,
    options: ApplyOptions,
) -> ddb_rollover::RunReport {
    let now = simulated(policy, operation, self::at(at));
    run(fake, policy, operation, &now, options).await.unwrap()
}

/// A simulation's instant (`allow_future_clock`), as the engine's entries take it.
fn simulated(policy: &Policy, operation: Operation, at: DateTime<Utc>) -> ddb_rollover::CheckedInstant {
    ddb_rollover::run::clock::simulation(policy, &[operation], at).expect("a labelled instant")
}

/// A policy that archives after 2 days and deletes after 4, one deletion per run.
fn retention_policy(extra: &str) -> Policy {
    Policy::from_toml(&format!(
        "[retention]\narchive_after = 2\nbucket = \"archive\"\ndelete_after = 4\nmax_deletes_per_run = 1\nkeep_newest = 2\n{extra}"
    ))
    .unwrap()
}

fn old_tables(days: std::ops::RangeInclusive<u32>) -> FakeDynamo {
    let names: Vec<String> = days.map(|d| format!("timeseries_2018-10-{d:02}")).collect();
    let fake = FakeDynamo::with_tables(&names.iter().map(|n| (n.as_str(), HOT)).collect::<Vec<_>>());
    for name in &names {
        // Made by this family: our family tag, the policy's key (as DescribeTable gives it).
        fake.with_table(name, |t| {
            t.key = Some(Policy::default().key);
            t.tags = Some(BTreeMap::from([(
                TAG_FAMILY.to_string(),
                "timeseries".to_string(),
            )]));
            t.point_in_time_recovery = Some(true);
        });
    }
    fake
}

/// A table registered by the autoscaling policy below (read side only is enough).
fn autoscaled(name: &str, capacity: Capacity) -> ObservedTable {
    let mut table = ObservedTable::active(name, Billing::Provisioned(capacity));
    let dimension = ScalableDimension::TableRead;
    table.scaling = Some(vec![ObservedScalableTarget {
        key: ScalableKey {
            resource_id: format!("table/{name}"),
            dimension,
        },
        min: 5,
        max: 500,
        policies: vec![ObservedScalingPolicy {
            name: policy_name("timeseries", dimension),
            policy_type: "TargetTrackingScaling".into(),
            metric: Some(dimension.metric().into()),
            target_value: Some(TargetValue(70.0)),
        }],
        scheduled_actions: Vec::new(),
    }]);
    table
}

fn describe_calls(fake: &FakeDynamo) -> usize {
    fake.calls
        .lock()
        .unwrap()
        .iter()
        .filter(|c| c.starts_with("DescribeTable"))
        .count()
}

/// The changes `status` predicts for `operation`, per table (main item, then the other steps),
/// and the changes a run's report lines carry.
fn predicted(
    status: &ddb_rollover::run::status::StatusReport,
    operation: Operation,
) -> BTreeMap<String, Vec<&'static str>> {
    status
        .tables
        .iter()
        .map(|line| {
            let main = match operation {
                Operation::CreateNew => &line.create_new,
                Operation::ResizeOld => &line.resize_old,
            };
            let actions: Vec<&'static str> = main
                .iter()
                .map(|n| &n.decision)
                .chain(
                    line.other_changes
                        .iter()
                        .filter(|c| c.operation == operation)
                        .map(|c| &c.decision),
                )
                .filter(|d| d.is_change() || matches!(d, Decision::Blocked))
                .map(Decision::action)
                .collect();
            (line.table.clone(), actions)
        })
        .filter(|(_, actions)| !actions.is_empty())
        .collect()
}

fn made(report: &ddb_rollover::RunReport) -> BTreeMap<String, Vec<&'static str>> {
    let mut made: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for line in report
        .tables
        .iter()
        .filter(|l| l.item.decision.is_change() || matches!(l.item.decision, Decision::Blocked))
    {
        made.entry(line.item.table.clone())
            .or_default()
            .push(line.item.decision.action());
    }
    made
}
