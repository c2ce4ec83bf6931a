//! The sampled replay: a fixed, documented sample of the promises' scenarios
//! (`fake_aws::scenarios`, the same [`Case`]s, steps and invariants as `promises.rs`) played on
//! moto through the real SDK adapter (`DynamoDb::new(client).with_autoscaling(client)`), with
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
//! Run: `cargo test -p ddb-rollover --test promises_moto`; `PROMISES_MOTO_SEEDS=n` adds `n`
//! cases drawn from `promises.rs`'s generator with fixed seeds (policies without table
//! classes, on-demand maximums or archiving).

use std::collections::BTreeMap;
use std::sync::Mutex;

use aws_sdk_applicationautoscaling as aas;
use aws_sdk_dynamodb as ddb;
use chrono::{DateTime, Duration, TimeZone, Utc};
use ddb_rollover::aws::dynamodb::DynamoDb;
use ddb_rollover::policy::scaling::{ScalableDimension, ScalableKey};
use ddb_rollover::policy::settings::{
    AttributeKind, Billing, Capacity, GlobalIndex, KeyAttribute, KeySchema, LocalIndex, OnDemandLimits,
    Projection, StreamView, TableClass,
};
use ddb_rollover::policy::warm::WarmThroughput;
use ddb_rollover::run::adopt::{adopt, AdoptReport};
use ddb_rollover::run::status::status;
use ddb_rollover::table::changes::TableSpec;
use ddb_rollover::{observe, run, Operation, Policy, Scope};
use fake_aws::scenarios;
use fake_aws::{Call, Effect, Gsi, Maker, ScalingPolicy, Status, Table, Target, Warm, World};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};
use scenarios::{
    case_strategy, checks, options, print_stats, stats, Account, Act, Case, GsiKind, Harness, Knobs,
    NameKind, PhaseKind, PhaseSpec, PolicySpec, Ran, RetentionSpec, Slowness, Step, TagKind, PREFIX, SIBLING,
    SIBLING_ACTOR,
};
use testkit::{LocalDynamo, Proxy, Server};

// ------------------------------------------------------------------------------------------
// Clients

fn scaling_client(endpoint: &str) -> aas::Client {
    aas::Client::from_conf(
        aas::Config::builder()
            .behavior_version(aas::config::BehaviorVersion::latest())
            .region(aas::config::Region::new(testkit::REGION))
            .credentials_provider(aas::config::Credentials::new(
                testkit::ACCESS_KEY_ID,
                testkit::SECRET_ACCESS_KEY,
                None,
                None,
                "test",
            ))
            .endpoint_url(endpoint)
            .build(),
    )
}

fn table_client(endpoint: &str) -> ddb::Client {
    ddb::Client::from_conf(testkit::sdk_config(endpoint).build())
}

/// A proxy in front of moto that behaves as AWS does where moto does not: deregistering a
/// scalable target deletes its policies; with `role`, that family's IAM role.
fn aws_proxy(moto: &LocalDynamo, role: Option<&str>) -> Proxy {
    let proxy = Proxy::start(moto.endpoint());
    proxy.deregister_deletes_policies();
    if let Some(prefix) = role {
        proxy.family_role(prefix);
    }
    proxy
}

async fn control(proxy: &Proxy) -> DynamoDb {
    DynamoDb::new(table_client(&proxy.endpoint()))
        .with_autoscaling(scaling_client(&proxy.endpoint()))
        .with_archives(crate::support::aws_clients(&proxy.endpoint()).await.s3)
}

// ------------------------------------------------------------------------------------------
// The account: moto, its state read back with the SDK, and the ground truth kept here

/// Who made what: moto does not know, the scenario does.
#[derive(Clone, Default)]
struct Ledger {
    /// Table name -> (maker, adopted, created at).
    tables: BTreeMap<String, (Maker, bool, DateTime<Utc>)>,
    targets: BTreeMap<ScalableKey, Maker>,
    policies: BTreeMap<(ScalableKey, String), Maker>,
    scheduled_actions: BTreeMap<(ScalableKey, String), Maker>,
    /// Who last turned each table's deletion protection on.
    protections: BTreeMap<String, Maker>,
}

impl Ledger {
    /// Records `who` as the maker of everything in `after` that is not in `before`.
    fn made(&mut self, who: &Maker, before: &World, after: &World, now: DateTime<Utc>) {
        for name in after.tables.keys().filter(|n| !before.tables.contains_key(*n)) {
            self.tables.insert(name.clone(), (who.clone(), false, now));
        }
        for (key, target) in &after.targets {
            if !before.targets.contains_key(key) {
                self.targets.insert(key.clone(), who.clone());
            }
            let had = before.targets.get(key);
            for policy in &target.policies {
                if !had.is_some_and(|t| t.policies.iter().any(|p| p.name == policy.name)) {
                    self.policies
                        .insert((key.clone(), policy.name.clone()), who.clone());
                }
            }
        }
    }
}

struct MotoAccount {
    runtime: tokio::runtime::Runtime,
    /// Kept for its lifetime: the server stops when dropped.
    _moto: LocalDynamo,
    /// Administrator clients straight to moto: the state is read back with them.
    admin: ddb::Client,
    admin_scaling: aas::Client,
    /// People's acts and the operator: AWS's behaviour, no role.
    _person_proxy: Proxy,
    person: ddb::Client,
    person_scaling: aas::Client,
    operator: DynamoDb,
    /// Our runs and the nested family's, each through its family's role.
    _our_proxy: Proxy,
    ours: DynamoDb,
    _sibling_proxy: Proxy,
    sibling: DynamoDb,
    clock: Mutex<DateTime<Utc>>,
    ledger: Mutex<Ledger>,
}

fn who(name: &str) -> Maker {
    Maker::Foreign(name.to_string())
}

fn sdk_error<E: aws_sdk_dynamodb::error::ProvideErrorMetadata>(e: E) -> String {
    format!("{}: {}", e.code().unwrap_or("?"), e.message().unwrap_or("?"))
}

fn sdk_dimension(dimension: ScalableDimension) -> aas::types::ScalableDimension {
    aas::types::ScalableDimension::from(dimension.as_wire_str())
}

fn attribute_kind(kind: &ddb::types::ScalarAttributeType) -> AttributeKind {
    match kind {
        ddb::types::ScalarAttributeType::N => AttributeKind::N,
        ddb::types::ScalarAttributeType::B => AttributeKind::B,
        _ => AttributeKind::S,
    }
}

fn scalar(kind: AttributeKind) -> ddb::types::ScalarAttributeType {
    match kind {
        AttributeKind::S => ddb::types::ScalarAttributeType::S,
        AttributeKind::N => ddb::types::ScalarAttributeType::N,
        AttributeKind::B => ddb::types::ScalarAttributeType::B,
    }
}

/// A key schema read back, with the attributes' types from the table's definitions.
fn key_of(
    elements: &[ddb::types::KeySchemaElement],
    definitions: &[ddb::types::AttributeDefinition],
) -> KeySchema {
    let attribute = |element: &ddb::types::KeySchemaElement| KeyAttribute {
        name: element.attribute_name().to_string(),
        kind: attribute_kind(
            definitions
                .iter()
                .find(|d| d.attribute_name() == element.attribute_name())
                .map(|d| d.attribute_type())
                .unwrap_or_else(|| {
                    panic!(
                        "moto describes the key attribute {} without its definition",
                        element.attribute_name()
                    )
                }),
        ),
    };
    let partition = elements
        .iter()
        .find(|e| *e.key_type() == ddb::types::KeyType::Hash)
        .map(attribute)
        .expect("a partition key");
    let sort = elements
        .iter()
        .find(|e| *e.key_type() == ddb::types::KeyType::Range)
        .map(attribute);
    KeySchema { partition, sort }
}

fn projection_of(projection: Option<&ddb::types::Projection>) -> Projection {
    match projection.and_then(|p| p.projection_type()) {
        Some(ddb::types::ProjectionType::KeysOnly) => Projection::KeysOnly,
        Some(ddb::types::ProjectionType::Include) => Projection::Include(
            projection
                .map(|p| p.non_key_attributes().to_vec())
                .unwrap_or_default(),
        ),
        _ => Projection::All,
    }
}

fn provisioned_of(throughput: Option<&ddb::types::ProvisionedThroughputDescription>) -> Billing {
    let throughput = throughput.expect("provisioned throughput");
    Billing::Provisioned(Capacity {
        read: throughput.read_capacity_units().unwrap_or_default(),
        write: throughput.write_capacity_units().unwrap_or_default(),
    })
}

fn on_demand_of(limits: Option<&ddb::types::OnDemandThroughput>) -> Billing {
    Billing::OnDemand(OnDemandLimits {
        max_read: limits.and_then(|l| l.max_read_request_units()).filter(|n| *n > 0),
        max_write: limits
            .and_then(|l| l.max_write_request_units())
            .filter(|n| *n > 0),
    })
}

fn sdk_key(key: &KeySchema) -> Vec<ddb::types::KeySchemaElement> {
    let element = |attribute: &KeyAttribute, kind| {
        ddb::types::KeySchemaElement::builder()
            .attribute_name(&attribute.name)
            .key_type(kind)
            .build()
            .expect("name and key type")
    };
    let mut elements = vec![element(&key.partition, ddb::types::KeyType::Hash)];
    elements.extend(key.sort.iter().map(|s| element(s, ddb::types::KeyType::Range)));
    elements
}

fn sdk_projection(projection: &Projection) -> ddb::types::Projection {
    let builder = ddb::types::Projection::builder();
    match projection {
        Projection::All => builder.projection_type(ddb::types::ProjectionType::All),
        Projection::KeysOnly => builder.projection_type(ddb::types::ProjectionType::KeysOnly),
        Projection::Include(attributes) => builder
            .projection_type(ddb::types::ProjectionType::Include)
            .set_non_key_attributes(Some(attributes.clone())),
    }
    .build()
}

fn sdk_throughput(capacity: Capacity) -> ddb::types::ProvisionedThroughput {
    ddb::types::ProvisionedThroughput::builder()
        .read_capacity_units(capacity.read)
        .write_capacity_units(capacity.write)
        .build()
        .expect("both units")
}

fn definitions<'a>(keys: impl IntoIterator<Item = &'a KeyAttribute>) -> Vec<ddb::types::AttributeDefinition> {
    let mut seen: BTreeMap<&str, AttributeKind> = BTreeMap::new();
    for attribute in keys {
        seen.entry(&attribute.name).or_insert(attribute.kind);
    }
    seen.into_iter()
        .map(|(name, kind)| {
            ddb::types::AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(scalar(kind))
                .build()
                .expect("name and type")
        })
        .collect()
}

/// A warm throughput description as the fake models it: moto reports every table's and index's
/// (ACTIVE at once), the dimensions AWS's starting values when left out.
fn warm_of(read: Option<i64>, write: Option<i64>, status: Option<&str>, now: DateTime<Utc>) -> Warm {
    Warm {
        units: WarmThroughput {
            read: read.unwrap_or(0),
            write: write.unwrap_or(0),
        },
        ready_at: (status.is_some_and(|s| s != "ACTIVE")).then_some(now),
    }
}

fn key_attributes(key: &KeySchema) -> Vec<&KeyAttribute> {
    std::iter::once(&key.partition).chain(key.sort.as_ref()).collect()
}

impl MotoAccount {
    fn start(now: DateTime<Utc>) -> MotoAccount {
        let moto = LocalDynamo::start(Server::Moto);
        let person_proxy = aws_proxy(&moto, None);
        let our_proxy = aws_proxy(&moto, Some(PREFIX));
        let sibling_proxy = aws_proxy(&moto, Some(SIBLING));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let (operator, ours, sibling) = runtime.block_on(async {
            (
                control(&person_proxy).await,
                control(&our_proxy).await,
                control(&sibling_proxy).await,
            )
        });
        MotoAccount {
            runtime,
            admin: table_client(moto.endpoint()),
            admin_scaling: scaling_client(moto.endpoint()),
            person: table_client(&person_proxy.endpoint()),
            person_scaling: scaling_client(&person_proxy.endpoint()),
            operator,
            ours,
            sibling,
            _moto: moto,
            _person_proxy: person_proxy,
            _our_proxy: our_proxy,
            _sibling_proxy: sibling_proxy,
            clock: Mutex::new(now),
            ledger: Mutex::new(Ledger::default()),
        }
    }

    fn block<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The account as moto tells it, with the ledger's makers.
    fn read_world(&self) -> World {
        self.block(self.read_world_async())
    }

    async fn read_world_async(&self) -> World {
        let now = self.now();
        let mut names = Vec::new();
        let mut start: Option<String> = None;
        loop {
            let page = self
                .admin
                .list_tables()
                .set_exclusive_start_table_name(start.clone())
                .send()
                .await
                .expect("ListTables");
            names.extend(page.table_names().iter().cloned());
            match page.last_evaluated_table_name() {
                Some(last) => start = Some(last.to_string()),
                None => break,
            }
        }
        let ledger = self.ledger().clone();
        let mut tables = BTreeMap::new();
        for name in names {
            let Ok(described) = self.admin.describe_table().table_name(&name).send().await else {
                continue;
            };
            let t = described.table().expect("a table").clone();
            let definitions = t.attribute_definitions();
            let on_demand = t
                .billing_mode_summary()
                .and_then(|s| s.billing_mode())
                .is_some_and(|m| *m == ddb::types::BillingMode::PayPerRequest);
            let billing = if on_demand {
                on_demand_of(t.on_demand_throughput())
            } else {
                provisioned_of(t.provisioned_throughput())
            };
            let gsis = t
                .global_secondary_indexes()
                .iter()
                .map(|g| Gsi {
                    name: g.index_name().unwrap_or_default().to_string(),
                    key: key_of(g.key_schema(), definitions),
                    projection: projection_of(g.projection()),
                    billing: if on_demand {
                        on_demand_of(g.on_demand_throughput())
                    } else {
                        provisioned_of(g.provisioned_throughput())
                    },
                    decreases: Default::default(),
                    status: Status::Active,
                    ready_at: None,
                    maker: Maker::Us,
                    warm: g.warm_throughput().map_or(warm_of(None, None, None, now), |w| {
                        warm_of(
                            w.read_units_per_second(),
                            w.write_units_per_second(),
                            w.status().map(|s| s.as_str()),
                            now,
                        )
                    }),
                })
                .collect();
            let key = key_of(t.key_schema(), definitions);
            let lsis = t
                .local_secondary_indexes()
                .iter()
                .map(|l| LocalIndex {
                    name: l.index_name().unwrap_or_default().to_string(),
                    sort: key_of(l.key_schema(), definitions)
                        .sort
                        .expect("a local index has a sort key"),
                    projection: projection_of(l.projection()),
                })
                .collect();
            let arn = t.table_arn().unwrap_or_default().to_string();
            let tags = self
                .admin
                .list_tags_of_resource()
                .resource_arn(&arn)
                .send()
                .await
                .map(|out| {
                    out.tags()
                        .iter()
                        .map(|tag| (tag.key().to_string(), tag.value().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            let ttl = self
                .admin
                .describe_time_to_live()
                .table_name(&name)
                .send()
                .await
                .ok()
                .and_then(|out| out.time_to_live_description().cloned())
                .filter(|d| d.time_to_live_status() == Some(&ddb::types::TimeToLiveStatus::Enabled))
                .and_then(|d| d.attribute_name().map(str::to_string));
            let pitr = self
                .admin
                .describe_continuous_backups()
                .table_name(&name)
                .send()
                .await
                .ok()
                .and_then(|out| out.continuous_backups_description().cloned())
                .and_then(|d| d.point_in_time_recovery_description().cloned())
                .is_some_and(|d| {
                    d.point_in_time_recovery_status() == Some(&ddb::types::PointInTimeRecoveryStatus::Enabled)
                });
            let stream = t
                .stream_specification()
                .filter(|s| s.stream_enabled())
                .and_then(|s| s.stream_view_type())
                .map(|view| match view {
                    ddb::types::StreamViewType::KeysOnly => StreamView::KeysOnly,
                    ddb::types::StreamViewType::NewImage => StreamView::NewImage,
                    ddb::types::StreamViewType::OldImage => StreamView::OldImage,
                    _ => StreamView::NewAndOldImages,
                });
            let status = match t.table_status() {
                Some(ddb::types::TableStatus::Creating) => Status::Creating,
                Some(ddb::types::TableStatus::Updating) => Status::Updating,
                Some(ddb::types::TableStatus::Deleting) => Status::Deleting,
                _ => Status::Active,
            };
            let (maker, adopted, created_at) =
                ledger
                    .tables
                    .get(&name)
                    .cloned()
                    .unwrap_or((who("unknown"), false, now));
            tables.insert(
                name.clone(),
                Table {
                    name: name.clone(),
                    arn,
                    status,
                    ready_at: None,
                    key,
                    gsis,
                    lsis,
                    billing,
                    decreases: Default::default(),
                    on_demand_switches: Vec::new(),
                    class: TableClass::Standard,
                    class_changes: Vec::new(),
                    deletion_protection: t.deletion_protection_enabled().unwrap_or(false),
                    protected_by: None,
                    stream,
                    encryption: Default::default(),
                    tags,
                    ttl,
                    pitr,
                    maker,
                    adopted,
                    created_at,
                    deleted_by: None,
                    items: Default::default(),
                    resource_policy: None,
                    warm: t.warm_throughput().map_or(warm_of(None, None, None, now), |w| {
                        warm_of(
                            w.read_units_per_second(),
                            w.write_units_per_second(),
                            w.status().map(|s| s.as_str()),
                            now,
                        )
                    }),
                },
            );
        }
        let mut targets = BTreeMap::new();
        let mut token: Option<String> = None;
        loop {
            let page = self
                .admin_scaling
                .describe_scalable_targets()
                .service_namespace(aas::types::ServiceNamespace::Dynamodb)
                .set_next_token(token.clone())
                .send()
                .await
                .expect("DescribeScalableTargets");
            for target in page.scalable_targets() {
                let Some(dimension) = ScalableDimension::from_wire(target.scalable_dimension().as_str())
                else {
                    continue;
                };
                let key = ScalableKey {
                    resource_id: target.resource_id().to_string(),
                    dimension,
                };
                let maker = ledger.targets.get(&key).cloned().unwrap_or(who("unknown"));
                targets.insert(
                    key.clone(),
                    Target {
                        key,
                        min: i64::from(target.min_capacity()),
                        max: i64::from(target.max_capacity()),
                        policies: Vec::new(),
                        scheduled_actions: Vec::new(),
                        maker,
                    },
                );
            }
            match page.next_token() {
                Some(next) if !next.is_empty() => token = Some(next.to_string()),
                _ => break,
            }
        }
        let mut token: Option<String> = None;
        loop {
            let page = self
                .admin_scaling
                .describe_scaling_policies()
                .service_namespace(aas::types::ServiceNamespace::Dynamodb)
                .set_next_token(token.clone())
                .send()
                .await
                .expect("DescribeScalingPolicies");
            for policy in page.scaling_policies() {
                let Some(dimension) = ScalableDimension::from_wire(policy.scalable_dimension().as_str())
                else {
                    continue;
                };
                let key = ScalableKey {
                    resource_id: policy.resource_id().to_string(),
                    dimension,
                };
                // A policy on no target (moto keeps what AWS would have deleted): it is not
                // on any target, so it scales nothing; the proxy makes sure it never happens.
                let Some(target) = targets.get_mut(&key) else {
                    panic!(
                        "scaling policy {} on {key} outlived its target: the proxy's DeregisterScalableTarget should have deleted it",
                        policy.policy_name()
                    );
                };
                let tracking = policy.target_tracking_scaling_policy_configuration();
                target.policies.push(ScalingPolicy {
                    name: policy.policy_name().to_string(),
                    policy_type: policy.policy_type().as_str().to_string(),
                    metric: tracking
                        .and_then(|c| c.predefined_metric_specification())
                        .map(|m| m.predefined_metric_type().as_str().to_string()),
                    target_value: tracking.map(|c| c.target_value()),
                    maker: ledger
                        .policies
                        .get(&(key.clone(), policy.policy_name().to_string()))
                        .cloned()
                        .unwrap_or(who("unknown")),
                });
            }
            match page.next_token() {
                Some(next) if !next.is_empty() => token = Some(next.to_string()),
                _ => break,
            }
        }
        // moto 5.2 answers DescribeScheduledActions in one page.
        let scheduled = self
            .admin_scaling
            .describe_scheduled_actions()
            .service_namespace(aas::types::ServiceNamespace::Dynamodb)
            .send()
            .await
            .expect("DescribeScheduledActions");
        for action in scheduled.scheduled_actions() {
            let Some(dimension) = action
                .scalable_dimension()
                .and_then(|d| ScalableDimension::from_wire(d.as_str()))
            else {
                continue;
            };
            let key = ScalableKey {
                resource_id: action.resource_id().to_string(),
                dimension,
            };
            let name = action.scheduled_action_name().to_string();
            let Some(target) = targets.get_mut(&key) else {
                panic!("scheduled action {name} on {key} outlived its target: the proxy's DeregisterScalableTarget should have deleted it");
            };
            target.scheduled_actions.push(fake_aws::ScheduledAction {
                maker: ledger
                    .scheduled_actions
                    .get(&(key.clone(), name.clone()))
                    .cloned()
                    .unwrap_or(who("unknown")),
                name,
            });
        }
        for table in tables.values_mut().filter(|t| t.deletion_protection) {
            table.protected_by = Some(
                ledger
                    .protections
                    .get(&table.name)
                    .cloned()
                    .unwrap_or_else(|| table.maker.clone()),
            );
        }
        World::from_state(now, tables, targets)
    }

    /// Runs an act of `actor`'s and records what it made.
    fn acting<T>(&self, actor: &Maker, act: impl FnOnce() -> T) -> T {
        let before = self.read_world();
        let out = act();
        let after = self.read_world();
        self.ledger().made(actor, &before, &after, self.now());
        out
    }

    fn table_arn(&self, table: &str) -> Result<String, String> {
        self.block(self.admin.describe_table().table_name(table).send())
            .map_err(sdk_error)?
            .table()
            .and_then(|t| t.table_arn())
            .map(str::to_string)
            .ok_or_else(|| "no ARN".to_string())
    }

    fn exists(&self, key: &ScalableKey) -> bool {
        let Some(rest) = key.resource_id.strip_prefix("table/") else {
            return false;
        };
        let (table, index) = match rest.split_once("/index/") {
            Some((table, index)) => (table, Some(index)),
            None => (rest, None),
        };
        let Ok(out) = self.block(self.admin.describe_table().table_name(table).send()) else {
            return false;
        };
        let t = out.table().expect("a table");
        index.is_none_or(|index| {
            t.global_secondary_indexes()
                .iter()
                .any(|g| g.index_name() == Some(index))
        })
    }
}

/// What our run did: the difference between the state before and after it, as the calls the
/// invariants read (one per effect, at the run's time).
fn diff(before: &World, after: &World, at: DateTime<Utc>) -> Vec<Call> {
    let mut effects = Vec::new();
    for (name, old) in &before.tables {
        let Some(new) = after.tables.get(name) else {
            effects.push((
                "DeleteTable",
                Effect::DeletedTable {
                    table: Box::new(old.clone()),
                },
            ));
            continue;
        };
        if old.billing != new.billing {
            effects.push((
                "UpdateTable",
                Effect::TableCapacity {
                    table: name.clone(),
                    from: old.billing,
                    to: new.billing,
                },
            ));
        }
        if old.warm.units != new.warm.units {
            effects.push((
                "UpdateTable",
                Effect::Warm {
                    table: name.clone(),
                    index: None,
                    from: old.warm.units,
                    to: new.warm.units,
                },
            ));
        }
        for gsi in &new.gsis {
            if let Some(was) = old.gsi(&gsi.name).filter(|was| was.warm.units != gsi.warm.units) {
                effects.push((
                    "UpdateTable",
                    Effect::Warm {
                        table: name.clone(),
                        index: Some(gsi.name.clone()),
                        from: was.warm.units,
                        to: gsi.warm.units,
                    },
                ));
            }
            match old.gsi(&gsi.name) {
                None => effects.push((
                    "UpdateTable",
                    Effect::AddedIndex {
                        table: name.clone(),
                        index: gsi.name.clone(),
                    },
                )),
                Some(was) if was.billing != gsi.billing => effects.push((
                    "UpdateTable",
                    Effect::IndexCapacity {
                        table: name.clone(),
                        index: gsi.name.clone(),
                        from: was.billing,
                        to: gsi.billing,
                    },
                )),
                Some(_) => {}
            }
        }
        if old.deletion_protection != new.deletion_protection {
            effects.push((
                "UpdateTable",
                Effect::Setting {
                    table: name.clone(),
                    setting: format!("deletion protection {}", new.deletion_protection),
                },
            ));
        }
        if old.stream != new.stream {
            effects.push((
                "UpdateTable",
                Effect::Setting {
                    table: name.clone(),
                    setting: format!("stream {:?}", new.stream),
                },
            ));
        }
        let written: BTreeMap<String, String> = new
            .tags
            .iter()
            .filter(|(k, v)| old.tags.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !written.is_empty() {
            effects.push((
                "TagResource",
                Effect::Tagged {
                    table: name.clone(),
                    tags: written,
                    before: old.tags.clone(),
                },
            ));
        }
        let removed: Vec<String> = old
            .tags
            .keys()
            .filter(|k| !new.tags.contains_key(*k))
            .cloned()
            .collect();
        if !removed.is_empty() {
            effects.push((
                "UntagResource",
                Effect::Untagged {
                    table: name.clone(),
                    keys: removed,
                },
            ));
        }
        if let (None, Some(attribute)) = (&old.ttl, &new.ttl) {
            effects.push((
                "UpdateTimeToLive",
                Effect::Ttl {
                    table: name.clone(),
                    attribute: attribute.clone(),
                },
            ));
        }
        if !old.pitr && new.pitr {
            effects.push(("UpdateContinuousBackups", Effect::Pitr { table: name.clone() }));
        }
    }
    for name in after.tables.keys().filter(|n| !before.tables.contains_key(*n)) {
        effects.push(("CreateTable", Effect::CreatedTable { table: name.clone() }));
    }
    for (key, old) in &before.targets {
        let Some(new) = after.targets.get(key) else {
            effects.push((
                "DeregisterScalableTarget",
                Effect::DeregisteredTarget {
                    key: key.clone(),
                    maker: old.maker.clone(),
                    policies: old.policies.clone(),
                    scheduled_actions: old.scheduled_actions.clone(),
                },
            ));
            continue;
        };
        for action in &old.scheduled_actions {
            if !new.scheduled_actions.iter().any(|a| a.name == action.name) {
                effects.push((
                    "DeleteScheduledAction",
                    Effect::DeletedScheduledAction {
                        key: key.clone(),
                        action: action.clone(),
                    },
                ));
            }
        }
        if (old.min, old.max) != (new.min, new.max) {
            effects.push((
                "RegisterScalableTarget",
                Effect::RegisteredTarget {
                    key: key.clone(),
                    before: Some((old.min, old.max)),
                    after: (new.min, new.max),
                },
            ));
        }
        for policy in &old.policies {
            match new.policies.iter().find(|p| p.name == policy.name) {
                None => effects.push((
                    "DeleteScalingPolicy",
                    Effect::DeletedPolicy {
                        key: key.clone(),
                        policy: policy.clone(),
                    },
                )),
                Some(now) if (now.target_value, &now.metric) != (policy.target_value, &policy.metric) => {
                    effects.push((
                        "PutScalingPolicy",
                        Effect::PutPolicy {
                            key: key.clone(),
                            name: policy.name.clone(),
                            created: false,
                        },
                    ))
                }
                Some(_) => {}
            }
        }
        for policy in new
            .policies
            .iter()
            .filter(|p| !old.policies.iter().any(|o| o.name == p.name))
        {
            effects.push((
                "PutScalingPolicy",
                Effect::PutPolicy {
                    key: key.clone(),
                    name: policy.name.clone(),
                    created: true,
                },
            ));
        }
    }
    for (key, new) in after
        .targets
        .iter()
        .filter(|(k, _)| !before.targets.contains_key(*k))
    {
        effects.push((
            "RegisterScalableTarget",
            Effect::RegisteredTarget {
                key: key.clone(),
                before: None,
                after: (new.min, new.max),
            },
        ));
        for policy in &new.policies {
            effects.push((
                "PutScalingPolicy",
                Effect::PutPolicy {
                    key: key.clone(),
                    name: policy.name.clone(),
                    created: true,
                },
            ));
        }
    }
    effects
        .into_iter()
        .map(|(operation, effect)| Call {
            at,
            actor: Maker::Us,
            role: Some(PREFIX.to_string()),
            operation,
            table: effect.table().to_string(),
            error: None,
            effects: vec![effect],
        })
        .collect()
}

impl Account for MotoAccount {
    fn now(&self) -> DateTime<Utc> {
        *self.clock.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_now(&self, t: DateTime<Utc>) {
        let mut clock = self.clock.lock().unwrap_or_else(|e| e.into_inner());
        if t > *clock {
            *clock = t;
        }
    }

    fn advance(&self, by: Duration) {
        *self.clock.lock().unwrap_or_else(|e| e.into_inner()) += by;
    }

    fn world(&self) -> World {
        self.read_world()
    }

    fn our_run(&self, policy: &Policy, operation: Operation) -> Result<scenarios::Ran, String> {
        let now = self.now();
        let observation = self
            .block(observe(&self.ours, policy, Scope::Full, 8))
            .map_err(|e| format!("the full observation failed: {e}"))?;
        let status = status(policy, now, &observation.tables);
        let before = self.read_world();
        let report = self
            .block(run(
                &self.ours,
                policy,
                operation,
                &ddb_rollover::run::clock::simulation(policy, &[operation], now).unwrap(),
                options(),
            ))
            .map_err(|e| format!("the run failed to start: {e}"))?;
        let after = self.read_world();
        if std::env::var_os("PROMISES_TRACE").is_some() {
            eprintln!("--- {operation} at {now}");
            for line in &report.tables {
                eprintln!(
                    "  {} {} {} {:?} {}",
                    line.item.table,
                    line.item.decision.action(),
                    line.outcome.as_str(),
                    line.error,
                    line.item.reason
                );
            }
        }
        self.ledger().made(&Maker::Us, &before, &after, now);
        let calls = diff(&before, &after, now);
        Ok(Ran {
            before,
            after,
            calls,
            report,
            status,
        })
    }

    fn sibling_run(&self, sibling: &Policy, operation: Operation) {
        let now = self.now();
        self.acting(&who(SIBLING_ACTOR), || {
            let _ = self.block(run(
                &self.sibling,
                sibling,
                operation,
                &ddb_rollover::run::clock::simulation(sibling, &[operation], now).unwrap(),
                options(),
            ));
        });
    }

    fn adopt(&self, policy: &Policy, table: &str) -> (Result<AdoptReport, String>, Vec<String>) {
        let before = self.read_world();
        let names = [table.to_string()];
        let report = self
            .block(adopt(
                &self.operator,
                policy,
                &ddb_rollover::run::clock::simulation(
                    policy,
                    &[ddb_rollover::Operation::CreateNew],
                    self.now(),
                )
                .unwrap(),
                &names,
                false,
            ))
            .map_err(|e| e.to_string());
        let after = self.read_world();
        let tagged: Vec<String> = after
            .tables
            .values()
            .filter(|t| {
                t.family() == Some(PREFIX)
                    && before
                        .tables
                        .get(&t.name)
                        .is_some_and(|b| b.family() != Some(PREFIX))
            })
            .map(|t| t.name.clone())
            .collect();
        let mut ledger = self.ledger();
        for name in &tagged {
            if let Some(entry) = ledger.tables.get_mut(name) {
                entry.1 = true;
            }
        }
        (report, tagged)
    }

    fn create_table(&self, by: &str, spec: &TableSpec) -> Result<(), String> {
        let mut keys = key_attributes(&spec.key);
        for index in &spec.global_indexes {
            keys.extend(key_attributes(&index.index.key));
        }
        keys.extend(spec.local_indexes.iter().map(|l| &l.sort));
        let mut request = self
            .person
            .create_table()
            .table_name(&spec.name)
            .set_attribute_definitions(Some(definitions(keys)))
            .set_key_schema(Some(sdk_key(&spec.key)));
        request = match spec.billing {
            Billing::Provisioned(capacity) => request
                .billing_mode(ddb::types::BillingMode::Provisioned)
                .provisioned_throughput(sdk_throughput(capacity)),
            Billing::OnDemand(_) => request.billing_mode(ddb::types::BillingMode::PayPerRequest),
        };
        for index in &spec.global_indexes {
            let mut gsi = ddb::types::GlobalSecondaryIndex::builder()
                .index_name(&index.index.name)
                .set_key_schema(Some(sdk_key(&index.index.key)))
                .projection(sdk_projection(&index.index.projection));
            if let Billing::Provisioned(capacity) = index.billing {
                gsi = gsi.provisioned_throughput(sdk_throughput(capacity));
            }
            request = request.global_secondary_indexes(gsi.build().expect("a global index"));
        }
        for index in &spec.local_indexes {
            let lsi = ddb::types::LocalSecondaryIndex::builder()
                .index_name(&index.name)
                .set_key_schema(Some(sdk_key(&KeySchema {
                    partition: spec.key.partition.clone(),
                    sort: Some(index.sort.clone()),
                })))
                .projection(sdk_projection(&index.projection))
                .build()
                .expect("a local index");
            request = request.local_secondary_indexes(lsi);
        }
        for (key, value) in &spec.tags {
            request = request.tags(
                ddb::types::Tag::builder()
                    .key(key)
                    .value(value)
                    .build()
                    .expect("a tag"),
            );
        }
        self.block(request.send()).map_err(sdk_error)?;
        self.ledger()
            .tables
            .insert(spec.name.clone(), (who(by), false, self.now()));
        Ok(())
    }

    fn tag(&self, _by: &str, table: &str, tags: BTreeMap<String, String>) -> Result<(), String> {
        let arn = self.table_arn(table)?;
        let tags = tags
            .into_iter()
            .map(|(k, v)| ddb::types::Tag::builder().key(k).value(v).build().expect("a tag"))
            .collect();
        self.block(
            self.person
                .tag_resource()
                .resource_arn(arn)
                .set_tags(Some(tags))
                .send(),
        )
        .map(drop)
        .map_err(sdk_error)
    }

    fn untag(&self, _by: &str, table: &str, keys: &[String]) -> Result<(), String> {
        let arn = self.table_arn(table)?;
        self.block(
            self.person
                .untag_resource()
                .resource_arn(arn)
                .set_tag_keys(Some(keys.to_vec()))
                .send(),
        )
        .map(drop)
        .map_err(sdk_error)
    }

    fn update_capacity(&self, _by: &str, table: &str, to: Billing) -> Result<(), String> {
        let indexes: Vec<String> = self
            .read_world()
            .tables
            .get(table)
            .map(|t| t.gsis.iter().map(|g| g.name.clone()).collect())
            .unwrap_or_default();
        let mut request = self.person.update_table().table_name(table);
        request = match to {
            Billing::Provisioned(capacity) => {
                let mut request = request
                    .billing_mode(ddb::types::BillingMode::Provisioned)
                    .provisioned_throughput(sdk_throughput(capacity));
                for index in &indexes {
                    request = request.global_secondary_index_updates(
                        ddb::types::GlobalSecondaryIndexUpdate::builder()
                            .update(
                                ddb::types::UpdateGlobalSecondaryIndexAction::builder()
                                    .index_name(index)
                                    .provisioned_throughput(sdk_throughput(capacity))
                                    .build()
                                    .expect("an index update"),
                            )
                            .build(),
                    );
                }
                request
            }
            Billing::OnDemand(_) => request.billing_mode(ddb::types::BillingMode::PayPerRequest),
        };
        self.block(request.send()).map(drop).map_err(sdk_error)
    }

    fn update_index_capacity(&self, _by: &str, table: &str, index: &str, to: Billing) -> Result<(), String> {
        let Billing::Provisioned(capacity) = to else {
            return Err("an index alone is only ever set to provisioned throughput".into());
        };
        let update = ddb::types::GlobalSecondaryIndexUpdate::builder()
            .update(
                ddb::types::UpdateGlobalSecondaryIndexAction::builder()
                    .index_name(index)
                    .provisioned_throughput(sdk_throughput(capacity))
                    .build()
                    .expect("an index update"),
            )
            .build();
        self.block(
            self.person
                .update_table()
                .table_name(table)
                .global_secondary_index_updates(update)
                .send(),
        )
        .map(drop)
        .map_err(sdk_error)
    }

    fn disable_key(&self, _by: &str, _table: &str) -> Result<(), String> {
        Err("moto keeps no KMS key state: its tables never turn INACCESSIBLE_ENCRYPTION_CREDENTIALS".into())
    }

    fn delete_table(&self, _by: &str, table: &str) -> Result<(), String> {
        self.block(self.person.delete_table().table_name(table).send())
            .map(drop)
            .map_err(sdk_error)
    }

    fn add_index(&self, by: &str, table: &str, index: &GlobalIndex, billing: Billing) -> Result<(), String> {
        let mut gsi = ddb::types::CreateGlobalSecondaryIndexAction::builder()
            .index_name(&index.name)
            .set_key_schema(Some(sdk_key(&index.key)))
            .projection(sdk_projection(&index.projection));
        if let Billing::Provisioned(capacity) = billing {
            gsi = gsi.provisioned_throughput(sdk_throughput(capacity));
        }
        let update = ddb::types::GlobalSecondaryIndexUpdate::builder()
            .create(gsi.build().expect("an index"))
            .build();
        let _ = by;
        // AWS refuses an index that exists and merges the definitions it is given with the
        // table's; moto takes the duplicate and replaces the definitions (the other indexes'
        // keys would lose their types): send every key attribute, and refuse as AWS does.
        let world = self.read_world();
        let Some(have) = world.tables.get(table) else {
            return Err(format!("ResourceNotFoundException: {table}"));
        };
        if have.gsi(&index.name).is_some() {
            return Err(format!(
                "ValidationException: Attempting to create an index which already exists: {}",
                index.name
            ));
        }
        let mut keys = key_attributes(&have.key);
        for gsi in &have.gsis {
            keys.extend(key_attributes(&gsi.key));
        }
        keys.extend(have.lsis.iter().map(|l| &l.sort));
        keys.extend(key_attributes(&index.key));
        self.block(
            self.person
                .update_table()
                .table_name(table)
                .set_attribute_definitions(Some(definitions(keys)))
                .global_secondary_index_updates(update)
                .send(),
        )
        .map(drop)
        .map_err(sdk_error)
    }

    fn register_target(&self, by: &str, key: &ScalableKey, min: i64, max: i64) -> Result<(), String> {
        // AWS validates the DynamoDB resource; moto does not.
        if !self.exists(key) {
            return Err(format!(
                "ValidationException: DynamoDB resource {} does not exist",
                key.resource_id
            ));
        }
        self.block(
            self.person_scaling
                .register_scalable_target()
                .service_namespace(aas::types::ServiceNamespace::Dynamodb)
                .resource_id(&key.resource_id)
                .scalable_dimension(sdk_dimension(key.dimension))
                .min_capacity(i32::try_from(min).expect("small"))
                .max_capacity(i32::try_from(max).expect("small"))
                .send(),
        )
        .map_err(sdk_error)?;
        self.ledger()
            .targets
            .entry(key.clone())
            .or_insert_with(|| who(by));
        Ok(())
    }

    fn put_policy(&self, by: &str, key: &ScalableKey, name: &str, policy_type: &str) -> Result<(), String> {
        // AWS refuses a policy on a target that is not registered; moto does not.
        if !self.read_world().targets.contains_key(key) {
            return Err(format!(
                "ObjectNotFoundException: No scalable target registered for {key}"
            ));
        }
        let request = self
            .person_scaling
            .put_scaling_policy()
            .policy_name(name)
            .service_namespace(aas::types::ServiceNamespace::Dynamodb)
            .resource_id(&key.resource_id)
            .scalable_dimension(sdk_dimension(key.dimension));
        let request = if policy_type == "TargetTrackingScaling" {
            let metric = aas::types::PredefinedMetricSpecification::builder()
                .predefined_metric_type(aas::types::MetricType::from(key.dimension.metric()))
                .build()
                .expect("a metric");
            request
                .policy_type(aas::types::PolicyType::TargetTrackingScaling)
                .target_tracking_scaling_policy_configuration(
                    aas::types::TargetTrackingScalingPolicyConfiguration::builder()
                        .target_value(50.0)
                        .predefined_metric_specification(metric)
                        .build()
                        .expect("a configuration"),
                )
        } else {
            let step = aas::types::StepAdjustment::builder()
                .metric_interval_lower_bound(0.0)
                .scaling_adjustment(1)
                .build()
                .expect("a step");
            request
                .policy_type(aas::types::PolicyType::StepScaling)
                .step_scaling_policy_configuration(
                    aas::types::StepScalingPolicyConfiguration::builder()
                        .step_adjustments(step)
                        .build(),
                )
        };
        self.block(request.send()).map_err(sdk_error)?;
        self.ledger()
            .policies
            .entry((key.clone(), name.to_string()))
            .or_insert_with(|| who(by));
        Ok(())
    }

    fn deregister_target(&self, _by: &str, key: &ScalableKey) -> Result<(), String> {
        self.block(
            self.person_scaling
                .deregister_scalable_target()
                .service_namespace(aas::types::ServiceNamespace::Dynamodb)
                .resource_id(&key.resource_id)
                .scalable_dimension(sdk_dimension(key.dimension))
                .send(),
        )
        .map(drop)
        .map_err(sdk_error)
    }

    fn raise_warm(
        &self,
        _by: &str,
        table: &str,
        index: Option<&str>,
        to: WarmThroughput,
    ) -> Result<(), String> {
        let warm = ddb::types::WarmThroughput::builder()
            .read_units_per_second(to.read)
            .write_units_per_second(to.write)
            .build();
        let request = self.person.update_table().table_name(table);
        let request = match index {
            None => request.warm_throughput(warm),
            Some(index) => request.global_secondary_index_updates(
                ddb::types::GlobalSecondaryIndexUpdate::builder()
                    .update(
                        ddb::types::UpdateGlobalSecondaryIndexAction::builder()
                            .index_name(index)
                            .warm_throughput(warm)
                            .build()
                            .expect("an index update"),
                    )
                    .build(),
            ),
        };
        self.block(request.send()).map(drop).map_err(sdk_error)
    }

    fn put_scheduled_action(&self, by: &str, key: &ScalableKey, name: &str) -> Result<(), String> {
        // AWS refuses a scheduled action on a target that is not registered; moto does not.
        if !self.read_world().targets.contains_key(key) {
            return Err(format!(
                "ObjectNotFoundException: No scalable target registered for {key}"
            ));
        }
        self.block(
            self.person_scaling
                .put_scheduled_action()
                .service_namespace(aas::types::ServiceNamespace::Dynamodb)
                .scheduled_action_name(name)
                .resource_id(&key.resource_id)
                .scalable_dimension(sdk_dimension(key.dimension))
                .schedule("cron(0 6 * * ? *)")
                .scalable_target_action(
                    aas::types::ScalableTargetAction::builder()
                        .min_capacity(5)
                        .max_capacity(50)
                        .build(),
                )
                .send(),
        )
        .map_err(sdk_error)?;
        self.ledger()
            .scheduled_actions
            .entry((key.clone(), name.to_string()))
            .or_insert_with(|| who(by));
        Ok(())
    }

    fn delete_scheduled_action(&self, _by: &str, key: &ScalableKey, name: &str) -> Result<(), String> {
        self.block(
            self.person_scaling
                .delete_scheduled_action()
                .service_namespace(aas::types::ServiceNamespace::Dynamodb)
                .scheduled_action_name(name)
                .resource_id(&key.resource_id)
                .scalable_dimension(sdk_dimension(key.dimension))
                .send(),
        )
        .map(drop)
        .map_err(sdk_error)
    }

    fn set_deletion_protection(&self, by: &str, table: &str, on: bool) -> Result<(), String> {
        self.block(
            self.person
                .update_table()
                .table_name(table)
                .deletion_protection_enabled(on)
                .send(),
        )
        .map_err(sdk_error)?;
        if on {
            self.ledger().protections.insert(table.to_string(), who(by));
        }
        Ok(())
    }

    fn delete_policy(&self, _by: &str, key: &ScalableKey, name: &str) -> Result<(), String> {
        self.block(
            self.person_scaling
                .delete_scaling_policy()
                .policy_name(name)
                .service_namespace(aas::types::ServiceNamespace::Dynamodb)
                .resource_id(&key.resource_id)
                .scalable_dimension(sdk_dimension(key.dimension))
                .send(),
        )
        .map(drop)
        .map_err(sdk_error)
    }
}

// ------------------------------------------------------------------------------------------
// The sample

fn phase(gap: u32, kind: PhaseKind) -> PhaseSpec {
    PhaseSpec {
        gap,
        kind,
        class: None,
        warm: None,
    }
}

fn daily(premake: u32, phases: Vec<PhaseSpec>) -> PolicySpec {
    PolicySpec {
        period: "day",
        timezone: "UTC",
        premake,
        gsi: true,
        lsi: false,
        grace: None,
        ttl: false,
        deletion_protection: false,
        phases,
        retention: None,
    }
}

/// One replayed case: its name, the case, and what it must exercise (each a piece of the
/// `PROMISES_STATS` keys its runs must produce: a line's action, outcome and error, an
/// effect, an adoption), so a change to the engine or the harness cannot quietly take the
/// sample's point away.
struct Sampled {
    name: String,
    case: Case,
    exercises: Vec<&'static str>,
}

fn case(name: &str, spec: PolicySpec, steps: Vec<Step>, exercises: &[&'static str]) -> Sampled {
    let toml = spec.toml(PREFIX);
    Policy::from_toml(&toml).unwrap_or_else(|e| panic!("{name}: {e}\n{toml}"));
    Sampled {
        name: name.to_string(),
        case: Case {
            spec,
            toml,
            start: Utc.with_ymd_and_hms(2024, 3, 29, 12, 0, 0).unwrap(),
            slow: Slowness::default(),
            steps,
        },
        exercises: exercises.to_vec(),
    }
}

fn foreign(act: Act) -> Step {
    Step::Foreign(act)
}

fn schedule(cycles: u32) -> Step {
    Step::Schedule { cycles }
}

fn hand_made(at: i32, name: NameKind, our_key: bool, gsi: GsiKind, tags: TagKind) -> Step {
    foreign(Act::HandMade {
        at,
        name,
        our_key,
        gsi,
        lsi: false,
        tags,
        on_demand: false,
    })
}

/// The replayed cases, each documented by what it covers.
fn sample() -> Vec<Sampled> {
    vec![
        // Foreign scaling: someone's target with a target-tracking policy on a dimension of a
        // table of ours that left autoscaling, their step policy on one of our targets (a shared
        // target), their bounds on our index's target, our policy deleted from one target and
        // another of ours deregistered by them; the tables go from autoscaling to a fixed phase,
        // to autoscaling with other bounds, and to a fixed phase again. Our policy alone leaves
        // a shared target (never deregistered: through the proxy, as on AWS, that would delete
        // theirs), and a dimension a foreign target holds keeps its throughput.
        case(
            "foreign scalable targets and policies",
            daily(
                1,
                vec![
                    phase(0, PhaseKind::Autoscaling { wide: false }),
                    phase(1, PhaseKind::Provisioned(50, 50)),
                    phase(1, PhaseKind::Autoscaling { wide: true }),
                    phase(1, PhaseKind::Provisioned(1, 1)),
                ],
            ),
            vec![
                schedule(1),
                foreign(Act::Target {
                    pick: 0,
                    index: false,
                    read: true,
                    policy: true,
                }),
                foreign(Act::StepPolicy { pick: 1 }),
                foreign(Act::Target {
                    pick: 1,
                    index: true,
                    read: false,
                    policy: false,
                }),
                schedule(1),
                foreign(Act::DropScaling {
                    pick: 0,
                    deregister: false,
                }),
                foreign(Act::DropScaling {
                    pick: 2,
                    deregister: true,
                }),
                schedule(3),
            ],
            &[
                "line resize_old deregister_scaling done",
                "line resize_old register_scaling done",
                "line create_new register_scaling done",
                "effect DeletedPolicy",
                "effect DeregisteredTarget",
                "verdict foreign part: shared target",
                "verdict foreign part: target",
            ],
        ),
        // Hand-made tables and another family: a table named like yesterday's of ours, with our
        // key, tagged for `ts_eu` (resize_old does not read its tags and plans its phase
        // change: the role refuses it, the run fails loudly, nothing changes); a look-alike
        // (another key) holding tomorrow's name (create_new fails loudly, the table is never
        // touched); a suffixed name; the nested family's own runs and an untagged `ts_eu_...`
        // table with an index of its own; another family's tag put on one of our tables (its
        // next phase change refused) and our family tag removed from another (retention keeps
        // it: no positive evidence).
        case(
            "hand-made tables and another family's tags",
            PolicySpec {
                retention: Some(RetentionSpec {
                    delete_after: Some(3),
                    archive_after: None,
                    keep_newest: 1,
                    max_deletes: 3,
                }),
                ..daily(
                    1,
                    vec![
                        phase(0, PhaseKind::Provisioned(100, 100)),
                        phase(1, PhaseKind::Provisioned(10, 5)),
                        phase(1, PhaseKind::OnDemand(None)),
                    ],
                )
            },
            vec![
                hand_made(-1, NameKind::Exact, true, GsiKind::Policy, TagKind::OtherFamily),
                hand_made(-1, NameKind::Suffixed, true, GsiKind::None, TagKind::None),
                hand_made(1, NameKind::Exact, false, GsiKind::None, TagKind::User),
                foreign(Act::Sibling(Operation::CreateNew)),
                hand_made(0, NameKind::Nested, true, GsiKind::Extra, TagKind::None),
                schedule(2),
                foreign(Act::Sibling(Operation::ResizeOld)),
                foreign(Act::TagOtherFamily { pick: 1 }),
                foreign(Act::UntagFamily { pick: 0 }),
                schedule(2),
                foreign(Act::Sibling(Operation::CreateNew)),
                schedule(2),
            ],
            &[
                "line resize_old update failed: UpdateTable ts_2024-03-28: AccessDeniedException",
                "line resize_old update failed: UpdateTable ts_2024-03-31: AccessDeniedException",
                "line create_new blocked failed",
                "verdict not ours (family \"ts_eu\")",
                "verdict not ours (key)",
                "retention kept: NoFamilyTag",
                "effect DeletedTable",
            ],
        ),
        // Write grace, retention and adoption: two tables restored by hand (our name, key and
        // indexes, no tags) are managed by name but never deleted until the operator's real
        // `adopt` tags them; the operator's `adopt` of a look-alike is refused; inside the grace
        // a past table stays in phase 0 and is not deleted, after it retention deletes (lifting
        // deletion protection first) what carries our family tag and is old enough.
        case(
            "grace, retention and adoption",
            PolicySpec {
                grace: Some("2h"),
                lsi: true,
                deletion_protection: true,
                retention: Some(RetentionSpec {
                    delete_after: Some(2),
                    archive_after: None,
                    keep_newest: 1,
                    max_deletes: 3,
                }),
                ..daily(
                    0,
                    vec![
                        phase(0, PhaseKind::Provisioned(100, 100)),
                        phase(1, PhaseKind::Provisioned(5, 5)),
                    ],
                )
            },
            vec![
                schedule(1),
                foreign(Act::Restored {
                    ago: 3,
                    on_demand: false,
                }),
                foreign(Act::Restored {
                    ago: 4,
                    on_demand: true,
                }),
                hand_made(-5, NameKind::Exact, false, GsiKind::None, TagKind::None),
                Step::Before { periods: 1 },
                Step::CreateNew,
                Step::After {
                    periods: 1,
                    past_grace: false,
                },
                Step::ResizeOld,
                foreign(Act::Adopt {
                    pick: 0,
                    claimable: true,
                }),
                foreign(Act::Adopt {
                    pick: 0,
                    claimable: false,
                }),
                Step::After {
                    periods: 0,
                    past_grace: true,
                },
                Step::ResizeOld,
                foreign(Act::Adopt {
                    pick: 0,
                    claimable: true,
                }),
                schedule(3),
            ],
            &[
                "adopt done",
                "adopt refused: not this policy's table: its key",
                "promise 2: deleted a table adopted",
                "promise 2: deleted a table we made",
                "verdict ours (adopted)",
                "verdict ours (name, tags not read)",
                "retention kept: NoFamilyTag",
                "effect Setting",
            ],
        ),
        // Deleted, lowered and re-indexed tables: someone deletes the furthest pre-built table
        // and then the current one between runs (create_new makes them again), lowers a
        // pre-built table (create_new raises it) and switches another to on-demand (create_new
        // leaves it; resize_old switches it back, whole-table switches only while nothing on it
        // is foreign), adds an index of their own to one table (never resized, no billing
        // switch on that table) and tries one named like the policy's on another key.
        case(
            "deleted, lowered and re-indexed tables",
            PolicySpec {
                ttl: true,
                retention: Some(RetentionSpec {
                    delete_after: Some(3),
                    archive_after: None,
                    keep_newest: 2,
                    max_deletes: 1,
                }),
                ..daily(
                    2,
                    vec![
                        phase(0, PhaseKind::Provisioned(50, 50)),
                        phase(1, PhaseKind::Provisioned(10, 5)),
                        phase(2, PhaseKind::Provisioned(1, 1)),
                    ],
                )
            },
            vec![
                schedule(1),
                foreign(Act::DeleteNewest),
                Step::CreateNew,
                foreign(Act::Delete { pick: 1 }),
                foreign(Act::Capacity {
                    pick: 2,
                    to: Some((1, 1)),
                }),
                foreign(Act::Capacity { pick: 3, to: None }),
                Step::CreateNew,
                foreign(Act::AddIndex {
                    pick: 0,
                    like_policy: false,
                }),
                foreign(Act::AddIndex {
                    pick: 2,
                    like_policy: true,
                }),
                schedule(3),
                foreign(Act::DeleteNewest),
                schedule(2),
            ],
            &[
                "line create_new create done",
                "line create_new update done",
                "line resize_old update done",
                "verdict foreign part: index",
                "promise 2: deleted a table we made",
                "effect Ttl",
            ],
        ),
        // Warm throughput: an on-demand hot phase with warm throughput pre-builds its tables
        // with it (the table and the policy's index); a provisioned phase without any keeps
        // it (never lowered); a later on-demand phase asking more raises it on the table and the
        // policy's index, never on an index someone added; someone pre-warms a table above
        // everything (no run lowers it) and tries to lower an index's (the proxy refuses it, as
        // AWS does: moto would take it).
        case(
            "warm throughput pre-built, kept and raised",
            daily(
                1,
                vec![
                    PhaseSpec {
                        warm: Some((40_000, 20_000)),
                        ..phase(0, PhaseKind::OnDemand(None))
                    },
                    phase(1, PhaseKind::Provisioned(10, 5)),
                    PhaseSpec {
                        warm: Some((30_000, 30_000)),
                        ..phase(1, PhaseKind::OnDemand(None))
                    },
                ],
            ),
            vec![
                schedule(1),
                foreign(Act::PreWarm {
                    pick: 0,
                    index: false,
                    high: true,
                }),
                foreign(Act::PreWarm {
                    pick: 1,
                    index: true,
                    high: false,
                }),
                foreign(Act::AddIndex {
                    pick: 1,
                    like_policy: false,
                }),
                schedule(4),
            ],
            &[
                "line create_new create done",
                "line resize_old update done",
                "line resize_old configure done",
                "effect Warm",
                "verdict foreign part: index",
            ],
        ),
    ]
}

/// `n` cases from the generator of `promises.rs`, with fixed seeds, leaving out what moto
/// does not keep (table classes, on-demand maximums) and archiving.
fn seeded(n: u64) -> Vec<Sampled> {
    let knobs = Knobs {
        without: ["table_class", "on_demand_max", "archive"]
            .into_iter()
            .map(String::from)
            .collect(),
    };
    (0..n)
        .map(|seed| {
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&seed.to_le_bytes());
            let mut runner = TestRunner::new_with_rng(
                ProptestConfig::default(),
                TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
            );
            let case = case_strategy(knobs.clone())
                .new_tree(&mut runner)
                .expect("a case")
                .current();
            Sampled {
                name: format!("seed {seed}"),
                case,
                exercises: Vec::new(),
            }
        })
        .collect()
}

/// Plays one case on a fresh moto; then checks it exercised what it is there for.
fn replay(sampled: &Sampled) -> Result<(), String> {
    let Sampled {
        name,
        case,
        exercises,
    } = sampled;
    let policy = Policy::from_toml(&case.toml).expect("a valid policy");
    let sibling = Policy::from_toml(&case.spec.toml(SIBLING)).expect("the same policy under another prefix");
    let harness = Harness {
        case,
        policy,
        sibling,
        account: MotoAccount::start(case.start),
        checks: checks(),
        knobs: Knobs {
            without: Default::default(),
        },
    };
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
