//! [`MotoAccount`]: moto behind the proxy's AWS behaviours, its state read back with the SDK,
//! and the ledger of who made what (moto does not know, the scenario does).

use super::*;

/// Who made what: moto does not know, the scenario does.
#[derive(Clone, Default)]
pub(super) struct Ledger {
    /// Table name -> (maker, adopted, created at).
    pub(super) tables: BTreeMap<String, (Maker, bool, DateTime<Utc>)>,
    pub(super) targets: BTreeMap<ScalableKey, Maker>,
    pub(super) policies: BTreeMap<(ScalableKey, String), Maker>,
    pub(super) scheduled_actions: BTreeMap<(ScalableKey, String), Maker>,
    /// Who last turned each table's deletion protection on.
    pub(super) protections: BTreeMap<String, Maker>,
}

impl Ledger {
    /// Records `who` as the maker of everything in `after` that is not in `before`.
    pub(super) fn made(&mut self, who: &Maker, before: &World, after: &World, now: DateTime<Utc>) {
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

pub(super) struct MotoAccount {
    pub(super) runtime: tokio::runtime::Runtime,
    /// Kept for its lifetime: the server stops when dropped.
    pub(super) _moto: LocalDynamo,
    /// Administrator clients straight to moto: the state is read back with them.
    pub(super) admin: ddb::Client,
    pub(super) admin_scaling: aas::Client,
    /// People's acts and the operator: AWS's behaviour, no role.
    pub(super) _person_proxy: Proxy,
    pub(super) person: ddb::Client,
    pub(super) person_scaling: aas::Client,
    pub(super) operator: DynamoDb,
    /// Our runs and the nested family's, each through its family's role.
    pub(super) _our_proxy: Proxy,
    pub(super) ours: DynamoDb,
    pub(super) _sibling_proxy: Proxy,
    pub(super) sibling: DynamoDb,
    pub(super) clock: Mutex<DateTime<Utc>>,
    pub(super) ledger: Mutex<Ledger>,
}

impl MotoAccount {
    pub(super) fn start(now: DateTime<Utc>) -> MotoAccount {
        let moto = LocalDynamo::start(Server::Moto);
        let person_proxy = aws_proxy(&moto, None);
        let our_proxy = aws_proxy(&moto, Some(PREFIX));
        let sibling_proxy = aws_proxy(&moto, Some(SIBLING));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let (operator, ours, sibling) = runtime.block_on(async {
            // Each family's ledger, as its SAM stack makes it before any run (the family role
            // may not create it): the first run starts it.
            let admin = table_client(moto.endpoint());
            for family in [PREFIX, SIBLING] {
                crate::support::ledger::stack_ledger(&admin, family).await;
            }
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

    pub(super) fn block<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    pub(super) fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The account as moto tells it, with the ledger's makers.
    pub(super) fn read_world(&self) -> World {
        self.block(self.read_world_async())
    }

    pub(super) async fn read_world_async(&self) -> World {
        let now = self.now();
        let names = testkit::all_table_names(&self.admin).await;
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
            // A family's ledger: its items, as the engine's own adapter reads them.
            let mut records = BTreeMap::new();
            if let Some(family) = name.strip_suffix("_ledger") {
                use ddb_rollover::control::Ledger as _;
                let read = ddb_rollover_aws::dynamodb::DynamoDb::local(self.admin.clone())
                    .read_ledger(&name, family)
                    .await
                    .unwrap_or_else(|e| panic!("the ledger {name}: {e}"));
                for record in read.unwrap_or_default() {
                    records.insert((family.to_string(), record.key.clone()), record);
                }
            }
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
                    stream_arn: t.latest_stream_arn().map(str::to_string),
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
                    table_id: t.table_id().unwrap_or_default().to_string(),
                    records,
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
        for target in crate::support::scaling::targets(&self.admin_scaling).await {
            let Some(key) = scalable_key(target.resource_id(), Some(target.scalable_dimension())) else {
                continue;
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
        for policy in crate::support::scaling::policies(&self.admin_scaling).await {
            let Some(key) = scalable_key(policy.resource_id(), Some(policy.scalable_dimension())) else {
                continue;
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
                arn: policy.policy_arn().to_string(),
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
        // moto 5.2 answers DescribeScheduledActions in one page.
        let scheduled = self
            .admin_scaling
            .describe_scheduled_actions()
            .service_namespace(aas::types::ServiceNamespace::Dynamodb)
            .send()
            .await
            .expect("DescribeScheduledActions");
        for action in scheduled.scheduled_actions() {
            let Some(key) = scalable_key(action.resource_id(), action.scalable_dimension()) else {
                continue;
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

    /// Sends one of the person's requests and blocks on it: done, or the service's refusal.
    pub(super) fn act<T, E: aws_sdk_dynamodb::error::ProvideErrorMetadata>(
        &self,
        request: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<(), String> {
        self.block(request).map(drop).map_err(sdk_error)
    }

    /// Runs an act of `actor`'s and records what it made.
    pub(super) fn acting<T>(&self, actor: &Maker, act: impl FnOnce() -> T) -> T {
        let before = self.read_world();
        let out = act();
        let after = self.read_world();
        self.ledger().made(actor, &before, &after, self.now());
        out
    }

    pub(super) fn table_arn(&self, table: &str) -> Result<String, String> {
        self.block(self.admin.describe_table().table_name(table).send())
            .map_err(sdk_error)?
            .table()
            .and_then(|t| t.table_arn())
            .map(str::to_string)
            .ok_or_else(|| "no ARN".to_string())
    }

    pub(super) fn exists(&self, key: &ScalableKey) -> bool {
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

/// The target `resource_id` and `dimension` (as Application Auto Scaling spells it) name; None
/// for a dimension that is not a DynamoDB one.
fn scalable_key(resource_id: &str, dimension: Option<&aas::types::ScalableDimension>) -> Option<ScalableKey> {
    Some(ScalableKey {
        resource_id: resource_id.to_string(),
        dimension: ScalableDimension::from_wire(dimension?.as_str())?,
    })
}
