//! The sampled replay: a fixed, documented sample of the promises' scenarios
//! (`promises`, `crates/promises/`, the same [`Case`]s, steps and invariants as `promises.rs`) played on
//! moto through the real SDK adapter (`DynamoDb::local(client).with_autoscaling(client)`), with
//! the foreign acts made with the SDK directly and the promises checked on the state read back
//! from moto with the SDK (DescribeTable, ListTagsOfResource, DescribeTimeToLive,
//! DescribeContinuousBackups, DescribeScalableTargets, DescribeScalingPolicies), never from our
//! report. What each run changed is the difference between the state read just before and just
//! after it: nothing else acts on the account meanwhile.
//!
//! Where moto departs from AWS in a way the promises depend on, the testkit proxy behaves as
//! AWS does instead of a check being weakened:
//! - DeregisterScalableTarget deletes the target's policies on AWS, not on moto:
//!   `Proxy::deregister_deletes_policies` on every path to moto that can deregister (ours, the
//!   nested family's, people's);
//! - moto has no IAM: our runs and the nested family's go through `Proxy::family_role`, which
//!   refuses what `template.yaml`'s role refuses (a write to another family's table, a
//!   DeleteTable without our family tag); the operator's `adopt` and people's acts use
//!   administrator credentials (no role), as in the fake.
//!
//! Other differences are kept out of the sample's policies, not out of the checks: moto keeps
//! no table class and no on-demand maximums (a phase with them would be re-sent every run,
//! see README), enforces no decrease budget (NumberOfDecreasesToday is always 0), has no
//! transient statuses (tables are ACTIVE at once, and deleted at once), and does not bring a
//! table's capacity within a scalable target's new bounds. Registering a scalable target on a
//! table that does not exist, or putting a policy on a target that does not exist, is refused by
//! the harness before the call, as AWS refuses it.
//!
//! The sample (each case a fresh moto; under ~60 s in all): see [`sample`].
//!
//! Run: `cargo test --workspace --test system -- engine::promises_moto`; `PROMISES_MOTO_SEEDS=n` adds `n`
//! cases drawn from `promises.rs`'s generator with fixed seeds (policies without table
//! classes, on-demand maximums or archiving).

use std::collections::BTreeMap;
use std::sync::Mutex;

use aws_sdk_applicationautoscaling as aas;
use aws_sdk_dynamodb as ddb;
use chrono::{DateTime, Duration, TimeZone, Utc};
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::{
    AttributeKind, Billing, Capacity, GlobalIndex, KeyAttribute, KeySchema, LocalIndex, OnDemandLimits,
    Projection, StreamView, TableClass,
};
use ddb_rollover::policy::{ScalableDimension, ScalableKey};
use ddb_rollover::status;
use ddb_rollover::table::TableSpec;
use ddb_rollover::{adopt, AdoptReport};
use ddb_rollover::{observe, run, Operation, Policy, Scope};
use ddb_rollover_aws::dynamodb::DynamoDb;
use fake_aws::{Call, Effect, Gsi, Maker, ScalingPolicy, Status, Table, Target, Warm, World};
use promises as scenarios;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};
use scenarios::{
    case_strategy, checks, options, print_stats, stats, Account, Act, Case, GsiKind, Harness, Knobs,
    NameKind, PhaseKind, PhaseSpec, PolicySpec, Ran, RetentionSpec, Slowness, Step, TagKind, PREFIX, SIBLING,
    SIBLING_ACTOR,
};
use testkit::{LocalDynamo, Proxy, Server};

mod account;
mod acts;
mod diff;
mod sample;
mod sdk;

use account::*;
use diff::*;
use sample::*;
use sdk::*;

/// Plays one case on a fresh moto; then checks it exercised what it is there for.
fn replay(sampled: &Sampled) -> Result<(), String> {
    let Sampled {
        name,
        case,
        exercises,
    } = sampled;
    let policy = Policy::from_toml(&case.toml).expect("a valid policy");
    let sibling = Policy::from_toml(&case.spec.toml(SIBLING)).expect("the same policy under another prefix");
    let harness = Harness::new(
        case,
        policy,
        sibling,
        MotoAccount::start(case.start),
        checks(),
        Knobs {
            without: Default::default(),
        },
    );
    let before = stats();
    harness.run_case().map_err(|e| format!("{name}: {e}\n{case:?}"))?;
    let after = stats();
    let seen: Vec<&String> = after
        .iter()
        .filter(|(key, n)| before.get(*key) != Some(*n))
        .map(|(key, _)| key)
        .collect();
    let missing: Vec<&str> = exercises
        .iter()
        .copied()
        .filter(|want| !seen.iter().any(|key| key.contains(want)))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{name}: kept the promises but did not exercise {missing:?}; it did: {seen:#?}"
        ))
    }
}

#[test]
fn the_sampled_scenarios_keep_the_promises_on_moto() {
    let seeds = std::env::var("PROMISES_MOTO_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut failures = Vec::new();
    for sampled in sample().into_iter().chain(seeded(seeds)) {
        let started = std::time::Instant::now();
        match replay(&sampled) {
            Ok(()) => eprintln!("{}: ok in {:.1} s", sampled.name, started.elapsed().as_secs_f64()),
            Err(e) => failures.push(e),
        }
    }
    print_stats();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
