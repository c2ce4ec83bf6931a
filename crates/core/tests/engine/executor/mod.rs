//! The executor over fake-aws's account ([`fake_aws::FakeAws`], with failures injected): dry
//! runs, bounded concurrency, how each kind of failure is reported, readiness, retention and
//! `status`'s predictions. Every test goes through one [`Rig`].

use std::collections::BTreeMap;
use std::time::Duration;

use ddb_rollover::control::{Archives, Clock, ErrorKind, Tables};
use ddb_rollover::policy::TAG_FAMILY;
use ddb_rollover::policy::{policy_name, ScalableDimension, ScalableKey};
use ddb_rollover::policy::{Billing, Capacity};
use ddb_rollover::table::ExportRequest;
use ddb_rollover::table::TableStatus;
use ddb_rollover::Decision;
use ddb_rollover::DeferralCause;
use ddb_rollover::Policy;
use ddb_rollover::{run, ApplyOptions, Operation, Outcome, RunReport};
use fake_aws::{table_spec, Around, Config, FakeAws, Maker, ScalingPolicy, Target};

use crate::common::at;
use crate::common::reports::table_outcomes;

mod readiness;
mod retention;
mod runs;
mod status;

const HOT: Capacity = Capacity {
    read: 300,
    write: 1000,
};

/// When the tests run create_new: a quarter of an hour before the day of 10-26 starts.
const CREATE_AT: &str = "2018-10-25T23:45:00Z";
/// When they run resize_old: a quarter of an hour into 10-26.
const RESIZE_AT: &str = "2018-10-26T00:15:00Z";

/// How many times each request lets the others in flight run, so concurrency is observable.
const REQUEST_YIELDS: usize = 8;

/// One account of the default policy's family (`timeseries`), starting at [`CREATE_AT`], and
/// the policy the runs plan with.
struct Rig {
    aws: FakeAws,
    policy: Policy,
}

impl Rig {
    /// An account where DynamoDB's changes take no time (tables ACTIVE at once, exports
    /// completed at once) holding `tables`: made by this family (its ledger records them),
    /// ACTIVE, untagged.
    fn new(tables: &[(&str, Capacity)]) -> Rig {
        Rig::with_config(Config::default_instant(), tables)
    }

    /// [`Rig::new`] with DynamoDB's delays from `config`.
    fn with_config(config: Config, tables: &[(&str, Capacity)]) -> Rig {
        let rig = Rig {
            aws: FakeAws::new("timeseries", at(CREATE_AT), config),
            policy: Policy::default(),
        };
        rig.aws.hold_requests(REQUEST_YIELDS);
        for (name, capacity) in tables {
            rig.aws.seed_table(&table_spec(
                name,
                rig.policy.key.clone(),
                Billing::Provisioned(*capacity),
            ));
        }
        // Made by this family: its ledger records them.
        rig.aws.seed_ledger(&rig.policy);
        rig
    }

    /// The family's tables of days `days` of October 2018, made by this family (its tag, the
    /// policy's key) with point-in-time recovery on.
    fn old_tables(days: std::ops::RangeInclusive<u32>) -> Rig {
        let names: Vec<String> = days.map(|d| format!("timeseries_2018-10-{d:02}")).collect();
        let rig = Rig::new(&names.iter().map(|n| (n.as_str(), HOT)).collect::<Vec<_>>());
        for name in &names {
            rig.aws.alter_table(name, |t| {
                t.tags = ours();
                t.pitr = true;
            });
        }
        rig
    }

    fn with_policy(mut self, policy: Policy) -> Rig {
        self.policy = policy;
        self
    }

    /// One run of `operation` at the simulated instant `at` (RFC 3339), the fake's clock moved
    /// there first.
    async fn run(&self, operation: Operation, at: &str, options: ApplyOptions) -> RunReport {
        let at = crate::common::at(at);
        self.aws.set_now(at);
        run(
            &self.aws,
            &self.policy,
            operation,
            &self.simulated(operation, at),
            options,
        )
        .await
        .unwrap()
    }

    /// create_new at [`CREATE_AT`] with the default options.
    async fn create_new(&self) -> RunReport {
        self.create_new_at(CREATE_AT).await
    }

    /// resize_old at [`RESIZE_AT`] with the default options.
    async fn resize_old(&self) -> RunReport {
        self.resize_old_at(RESIZE_AT).await
    }

    async fn create_new_at(&self, at: &str) -> RunReport {
        self.run(Operation::CreateNew, at, ApplyOptions::default()).await
    }

    async fn resize_old_at(&self, at: &str) -> RunReport {
        self.run(Operation::ResizeOld, at, ApplyOptions::default()).await
    }

    /// A simulation's instant (`allow_future_clock`), as the engine's entries take it.
    fn simulated(
        &self,
        operation: Operation,
        at: chrono::DateTime<chrono::Utc>,
    ) -> ddb_rollover::CheckedInstant {
        ddb_rollover::simulation(&self.policy, &[operation], at).expect("a labelled instant")
    }

    /// The control plane's clock, as the run reads it (deadlines are set on it).
    fn clock(&self) -> std::time::Instant {
        Clock::now(&self.aws)
    }

    /// The requests that asked for a change to a table of the family (sent, whether they
    /// succeeded or not), as `Operation table`; the ledger's own records are not among them.
    fn changes(&self) -> Vec<String> {
        self.aws
            .requests()
            .iter()
            .filter(|r| !r.is_read() && r.table != LEDGER)
            .map(ToString::to_string)
            .collect()
    }

    fn describes(&self) -> usize {
        self.aws
            .requests()
            .iter()
            .filter(|r| r.operation == "DescribeTable")
            .count()
    }

    /// The family's ledger as a run reads it now.
    fn book(&self) -> ddb_rollover::ledger::Book {
        let records = self.aws.with_world(|w| {
            w.tables[LEDGER]
                .records
                .iter()
                .filter(|((family, _), _)| family == "timeseries")
                .map(|(_, r)| r.clone())
                .collect()
        });
        ddb_rollover::ledger::Book::read(Some(records))
    }

    /// A table as DescribeTable would answer now, with its tags.
    fn table(&self, name: &str) -> Option<fake_aws::Table> {
        self.aws.with_world(|w| w.tables.get(name).cloned())
    }

    /// A table registered by the policy's autoscaling (the read side only is enough).
    fn autoscaled(&self, name: &str, capacity: Capacity) {
        self.aws.seed_table(&table_spec(
            name,
            self.policy.key.clone(),
            Billing::Provisioned(capacity),
        ));
        let dimension = ScalableDimension::TableRead;
        self.aws.seed_target(Target {
            key: ScalableKey {
                resource_id: format!("table/{name}"),
                dimension,
            },
            min: 5,
            max: 500,
            policies: vec![ScalingPolicy {
                name: policy_name("timeseries", dimension),
                arn: format!("arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1:resource/dynamodb/table/{name}:policyName/ours"),
                policy_type: "TargetTrackingScaling".into(),
                metric: Some(dimension.metric().into()),
                target_value: Some(70.0),
                maker: Maker::Us,
            }],
            scheduled_actions: Vec::new(),
            maker: Maker::Us,
        });
        // Made by this family, with its policy: its ledger records both.
        self.aws.seed_ledger(&self.policy);
    }
}

/// The family's ledger table.
const LEDGER: &str = "timeseries_ledger";

/// This family's tag.
fn ours() -> BTreeMap<String, String> {
    family("timeseries")
}

fn family(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(TAG_FAMILY.to_string(), name.to_string())])
}

/// Each table's main item (its first): template upkeep items follow it.
fn outcomes(report: &RunReport) -> Vec<(&str, Outcome)> {
    let mut main = table_outcomes(&report.tables);
    main.dedup_by(|b, a| a.0 == b.0);
    main
}

/// The report's line for `table`'s main item.
fn line<'r>(report: &'r RunReport, table: &str) -> &'r ddb_rollover::TableLine {
    report
        .tables
        .iter()
        .find(|l| l.item.facts.table == table)
        .unwrap_or_else(|| panic!("no line for {table}: {report:#?}"))
}

/// The changes `status` predicts for `operation`, per table (main item, then the other steps),
/// and the changes a run's report lines carry.
fn predicted(
    status: &ddb_rollover::StatusReport,
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
            (line.facts.table.clone(), actions)
        })
        .filter(|(_, actions)| !actions.is_empty())
        .collect()
}

fn made(report: &RunReport) -> BTreeMap<String, Vec<&'static str>> {
    let mut made: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for line in report
        .tables
        .iter()
        .filter(|l| l.item.decision.is_change() || matches!(l.item.decision, Decision::Blocked))
    {
        made.entry(line.item.facts.table.clone())
            .or_default()
            .push(line.item.decision.action());
    }
    made
}
