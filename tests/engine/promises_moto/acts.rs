//! The scenarios' [`Account`] on moto: our runs, the nested family's, the operator's and
//! people's acts, each through its own clients.

use super::*;
use crate::support::scaling::{deregister_target, put_policy, register_target, Scales};

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
            .block(observe(&self.ours, policy, Scope::Full(now), 8))
            .map_err(|e| format!("the full observation failed: {e}"))?;
        let status = status(policy, now, &observation);
        let before = self.read_world();
        let report = self
            .block(run(
                &self.ours,
                policy,
                operation,
                &ddb_rollover::simulation(policy, &[operation], now).unwrap(),
                options(),
            ))
            .map_err(|e| format!("the run failed to start: {e}"))?;
        let after = self.read_world();
        if std::env::var_os("PROMISES_TRACE").is_some() {
            eprintln!("--- {operation} at {now}");
            for line in &report.tables {
                eprintln!(
                    "  {} {} {} {:?} {}",
                    line.item.facts.table,
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
                &ddb_rollover::simulation(sibling, &[operation], now).unwrap(),
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
                &ddb_rollover::simulation(policy, &[ddb_rollover::Operation::CreateNew], self.now()).unwrap(),
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

    fn init(&self, policy: &Policy) -> Result<Vec<String>, String> {
        use ddb_rollover::LineOutcome;
        use ddb_rollover::{init, Enrolment};
        let clock =
            ddb_rollover::simulation(policy, &[ddb_rollover::Operation::CreateNew], self.now()).unwrap();
        let report = self
            .block(init(&self.operator, policy, &clock, false))
            .map_err(|e| e.to_string())?;
        // Ground truth: a table it recorded that our runs did not make is the operator's now.
        let mut enrolled = Vec::new();
        let mut ledger = self.ledger();
        for line in &report.tables {
            if line.action != Enrolment::Record || line.outcome != LineOutcome::Done {
                continue;
            }
            if let Some(entry) = ledger.tables.get_mut(&line.table) {
                if entry.0 != Maker::Us {
                    entry.1 = true;
                    enrolled.push(line.table.clone());
                }
            }
        }
        if !report.succeeded() {
            return Err(format!("init failed: {report:?}"));
        }
        Ok(enrolled)
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
        self.act(request.send())?;
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
        self.act(
            self.person
                .tag_resource()
                .resource_arn(arn)
                .set_tags(Some(tags))
                .send(),
        )
    }

    fn untag(&self, _by: &str, table: &str, keys: &[String]) -> Result<(), String> {
        let arn = self.table_arn(table)?;
        self.act(
            self.person
                .untag_resource()
                .resource_arn(arn)
                .set_tag_keys(Some(keys.to_vec()))
                .send(),
        )
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
        self.act(request.send())
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
        self.act(
            self.person
                .update_table()
                .table_name(table)
                .global_secondary_index_updates(update)
                .send(),
        )
    }

    fn disable_key(&self, _by: &str, _table: &str) -> Result<(), String> {
        Err("moto keeps no KMS key state: its tables never turn INACCESSIBLE_ENCRYPTION_CREDENTIALS".into())
    }

    fn delete_table(&self, _by: &str, table: &str) -> Result<(), String> {
        self.act(self.person.delete_table().table_name(table).send())
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
        self.act(
            self.person
                .update_table()
                .table_name(table)
                .set_attribute_definitions(Some(definitions(keys)))
                .global_secondary_index_updates(update)
                .send(),
        )
    }

    fn register_target(&self, by: &str, key: &ScalableKey, min: i64, max: i64) -> Result<(), String> {
        // AWS validates the DynamoDB resource; moto does not.
        if !self.exists(key) {
            return Err(format!(
                "ValidationException: DynamoDB resource {} does not exist",
                key.resource_id
            ));
        }
        let (min, max) = (
            i32::try_from(min).expect("small"),
            i32::try_from(max).expect("small"),
        );
        let dimension = sdk_dimension(key.dimension);
        self.act(register_target(&self.person_scaling, &key.resource_id, dimension, min, max).send())?;
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
        let scales = if policy_type == "TargetTrackingScaling" {
            Scales::Tracking(50.0)
        } else {
            Scales::Step
        };
        let dimension = sdk_dimension(key.dimension);
        self.act(put_policy(&self.person_scaling, &key.resource_id, dimension, name, scales).send())?;
        self.ledger()
            .policies
            .entry((key.clone(), name.to_string()))
            .or_insert_with(|| who(by));
        Ok(())
    }

    fn deregister_target(&self, _by: &str, key: &ScalableKey) -> Result<(), String> {
        let dimension = sdk_dimension(key.dimension);
        self.act(deregister_target(&self.person_scaling, &key.resource_id, dimension).send())
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
        self.act(request.send())
    }

    fn put_scheduled_action(&self, by: &str, key: &ScalableKey, name: &str) -> Result<(), String> {
        // AWS refuses a scheduled action on a target that is not registered; moto does not.
        if !self.read_world().targets.contains_key(key) {
            return Err(format!(
                "ObjectNotFoundException: No scalable target registered for {key}"
            ));
        }
        self.act(
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
        )?;
        self.ledger()
            .scheduled_actions
            .entry((key.clone(), name.to_string()))
            .or_insert_with(|| who(by));
        Ok(())
    }

    fn delete_scheduled_action(&self, _by: &str, key: &ScalableKey, name: &str) -> Result<(), String> {
        self.act(
            self.person_scaling
                .delete_scheduled_action()
                .service_namespace(aas::types::ServiceNamespace::Dynamodb)
                .scheduled_action_name(name)
                .resource_id(&key.resource_id)
                .scalable_dimension(sdk_dimension(key.dimension))
                .send(),
        )
    }

    fn set_deletion_protection(&self, by: &str, table: &str, on: bool) -> Result<(), String> {
        self.act(
            self.person
                .update_table()
                .table_name(table)
                .deletion_protection_enabled(on)
                .send(),
        )?;
        if on {
            self.ledger().protections.insert(table.to_string(), who(by));
        }
        Ok(())
    }

    fn delete_policy(&self, _by: &str, key: &ScalableKey, name: &str) -> Result<(), String> {
        self.act(
            self.person_scaling
                .delete_scaling_policy()
                .policy_name(name)
                .service_namespace(aas::types::ServiceNamespace::Dynamodb)
                .resource_id(&key.resource_id)
                .scalable_dimension(sdk_dimension(key.dimension))
                .send(),
        )
    }
}
