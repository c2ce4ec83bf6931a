//! DynamoDB's mutations: create, update throughput (within the decrease budgets), delete, tag,
//! add an index, put and delete a resource-based policy.

use std::collections::{BTreeMap, BTreeSet};

use chrono::Duration;
use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::{Billing, Encryption, GlobalIndex, OnDemandLimits};
use ddb_rollover::table::ObservedEncryption;
use ddb_rollover::table::NO_POLICY;
use ddb_rollover::table::{IndexSpec, TableSpec};

use crate::account::FakeAws;
use crate::budgets::{lowers, Decreases, ON_DEMAND_SWITCHES_PER_DAY};
use crate::errors::{error, in_use, limit, not_found, policy_not_found, validation};
use crate::log::Effect;
use crate::maker::Maker;
use crate::mutations::{mappings, warm};
use crate::objects::arn_of;
use crate::objects::Status;
use crate::objects::{Gsi, Table, TablePolicy};
use crate::warm::Warm;
use crate::world::World;

/// One capacity UpdateTable, however it is asked for.
pub(crate) struct CapacityRequest<'a> {
    pub(crate) table_to: Option<Billing>,
    pub(crate) indexes: Vec<(&'a str, Billing)>,
}

pub(crate) fn encryption_of(encryption: &Encryption) -> ObservedEncryption {
    match encryption {
        Encryption::AwsOwned => ObservedEncryption::AwsOwned,
        Encryption::AwsManaged => ObservedEncryption::Kms {
            key_arn: Some("arn:aws:kms:us-east-1:123456789012:key/aws-managed-dynamodb".into()),
        },
        Encryption::CustomerManaged { kms_key } => ObservedEncryption::Kms {
            key_arn: Some(kms_key.clone()),
        },
    }
}

impl FakeAws {
    pub(crate) fn table_mut<'w>(
        world: &'w mut World,
        operation: &'static str,
        table: &str,
    ) -> Result<&'w mut Table, ControlPlaneError> {
        world
            .tables
            .get_mut(table)
            .ok_or_else(|| not_found(operation, table))
    }

    /// The table `name` for a change DynamoDB takes only while it is ACTIVE (`InUse` otherwise).
    pub(crate) fn active_table_mut<'w>(
        world: &'w mut World,
        operation: &'static str,
        name: &str,
    ) -> Result<&'w mut Table, ControlPlaneError> {
        let table = Self::table_mut(world, operation, name)?;
        if table.status != Status::Active {
            return Err(in_use(operation, name, table.status));
        }
        Ok(table)
    }

    pub(crate) fn create(
        world: &mut World,
        actor: &Maker,
        spec: &TableSpec,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "CreateTable";
        if world.tables.contains_key(&spec.name) {
            return Err(error(
                ErrorKind::AlreadyExists,
                OP,
                &spec.name,
                format!("ResourceInUseException: Table already exists: {}", spec.name),
            ));
        }
        if !spec.local_indexes.is_empty() && spec.key.sort.is_none() {
            return Err(validation(
                OP,
                &spec.name,
                "local secondary indexes need a table with a sort key",
            ));
        }
        for index in &spec.global_indexes {
            if std::mem::discriminant(&index.billing) != std::mem::discriminant(&spec.billing) {
                return Err(validation(
                    OP,
                    &spec.name,
                    format!("index {} must be in the table's billing mode", index.index.name),
                ));
            }
        }
        let now = world.now;
        let ready = now + world.config.create_delay;
        // CreateTable's warm throughput serves the table and every index (DynamoDB refuses it
        // below where each starts).
        let warm_ready = ready + world.config.warm_delay;
        let warm_at_creation = |billing: Billing| {
            Warm::at_creation(billing, spec.warm, warm_ready)
                .map_err(|message| warm::refused_at_creation(&spec.name, message))
        };
        let table_warm = warm_at_creation(spec.billing)?;
        let gsis = spec
            .global_indexes
            .iter()
            .map(|IndexSpec { index, billing }| {
                Ok(Gsi {
                    name: index.name.clone(),
                    key: index.key.clone(),
                    projection: index.projection.clone(),
                    billing: *billing,
                    decreases: Decreases::default(),
                    status: Status::Creating,
                    ready_at: Some(ready),
                    maker: actor.clone(),
                    warm: warm_at_creation(*billing)?,
                })
            })
            .collect::<Result<Vec<Gsi>, ControlPlaneError>>()?;
        let stream_arn = spec.stream.map(|_| mappings::new_stream_arn(world, &spec.name));
        world.tables.insert(
            spec.name.clone(),
            Table {
                name: spec.name.clone(),
                arn: arn_of(&spec.name),
                status: Status::Creating,
                ready_at: Some(ready),
                key: spec.key.clone(),
                gsis,
                lsis: spec.local_indexes.clone(),
                billing: spec.billing,
                decreases: Decreases::default(),
                on_demand_switches: Vec::new(),
                class: spec.table_class.unwrap_or_default(),
                class_changes: Vec::new(),
                deletion_protection: spec.deletion_protection,
                protected_by: spec.deletion_protection.then(|| actor.clone()),
                stream: spec.stream,
                stream_arn,
                encryption: spec.encryption.as_ref().map(encryption_of).unwrap_or_default(),
                tags: spec.tags.clone(),
                ttl: None,
                pitr: false,
                maker: actor.clone(),
                adopted: false,
                created_at: now,
                deleted_by: None,
                warm: table_warm,
                items: BTreeSet::new(),
                resource_policy: None,
                table_id: format!("{:08x}-0000-4000-8000-{:012x}", world.next_id, world.next_id),
                records: BTreeMap::new(),
            },
        );
        world.next_id += 1;
        effects.push(Effect::CreatedTable {
            table: spec.name.clone(),
        });
        Ok(())
    }

    /// An UpdateTable of throughput and billing mode, with DynamoDB's checks.
    pub(crate) fn update_throughput(
        world: &mut World,
        name: &str,
        request: CapacityRequest<'_>,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        let now = world.now;
        let delay = world.config.update_delay;
        let table = Self::active_table_mut(world, OP, name)?;
        if let Some(gsi) = table.gsis.iter().find(|g| g.status != Status::Active) {
            return Err(in_use(OP, name, gsi.status));
        }
        let before = table.billing;
        let after = request.table_to.unwrap_or(before);
        let switch_to_provisioned =
            matches!((before, after), (Billing::OnDemand(_), Billing::Provisioned(_)));
        let switch_to_on_demand = matches!((before, after), (Billing::Provisioned(_), Billing::OnDemand(_)));
        // Every index's throughput after the call.
        let mut index_after: Vec<(String, Billing)> = Vec::new();
        for (index, to) in &request.indexes {
            let Some(gsi) = table.gsi(index) else {
                return Err(validation(
                    OP,
                    name,
                    format!("One or more parameter values were invalid: index {index} does not exist"),
                ));
            };
            if std::mem::discriminant(to) != std::mem::discriminant(&after) {
                return Err(validation(
                    OP,
                    name,
                    format!("index {} must be in the table's billing mode", gsi.name),
                ));
            }
            index_after.push((gsi.name.clone(), *to));
        }
        for gsi in &table.gsis {
            if index_after.iter().any(|(n, _)| *n == gsi.name) {
                continue;
            }
            let to = match after {
                Billing::Provisioned(_) if switch_to_provisioned => {
                    return Err(validation(
                        OP,
                        name,
                        format!(
                            "One or more parameter values were invalid: ProvisionedThroughput must be specified for index: {}",
                            gsi.name
                        ),
                    ))
                }
                Billing::OnDemand(_) if switch_to_on_demand => Billing::OnDemand(OnDemandLimits::default()),
                _ => gsi.billing,
            };
            index_after.push((gsi.name.clone(), to));
        }
        let table_changes = after != before;
        let indexes_change = index_after
            .iter()
            .any(|(n, to)| table.gsi(n).is_some_and(|g| g.billing != *to));
        // The table's throughput was asked for but is what it is; or nothing changes at all.
        if !table_changes && (request.table_to.is_some() || !indexes_change) {
            return Err(error(
                ErrorKind::NoChange,
                OP,
                name,
                format!(
                    "ValidationException: The provisioned throughput for the table {name} will not change. The requested value equals the current value."
                ),
            ));
        }
        if lowers(before, after) && !table.decreases.allowed(now) {
            return Err(limit(
                OP,
                name,
                format!(
                    "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. \
                     After the first 4 decreases, each subsequent decrease in the same UTC day can be performed at most \
                     once every 3600 seconds. Number of decreases today: {}. Last decrease at {:?}.",
                    table.decreases.today(now),
                    table.decreases.last()
                ),
            ));
        }
        for (index, to) in &index_after {
            let gsi = table.gsi(index).expect("checked");
            if lowers(gsi.billing, *to) && !gsi.decreases.allowed(now) {
                return Err(limit(
                    OP,
                    name,
                    format!(
                        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day \
                         (index {index}: {} decreases today)",
                        gsi.decreases.today(now)
                    ),
                ));
            }
        }
        if switch_to_on_demand {
            let recent = crate::budgets::within(&table.on_demand_switches, now, Duration::hours(24));
            if recent >= ON_DEMAND_SWITCHES_PER_DAY {
                return Err(limit(
                    OP,
                    name,
                    format!("Subscriber limit exceeded: {recent} switches to PAY_PER_REQUEST in the last 24 hours"),
                ));
            }
        }
        // Carried out.
        if table_changes {
            if lowers(before, after) {
                table.decreases.at.push(now);
            }
            if switch_to_on_demand {
                table.on_demand_switches.push(now);
            }
            table.billing = after;
            table.warm.grow_to(after);
            effects.push(Effect::TableCapacity {
                table: name.to_string(),
                from: before,
                to: after,
            });
        }
        for (index, to) in index_after {
            let gsi = table.gsis.iter_mut().find(|g| g.name == index).expect("checked");
            if gsi.billing == to {
                continue;
            }
            if lowers(gsi.billing, to) {
                gsi.decreases.at.push(now);
            }
            effects.push(Effect::IndexCapacity {
                table: name.to_string(),
                index: index.clone(),
                from: gsi.billing,
                to,
            });
            gsi.billing = to;
            gsi.warm.grow_to(to);
        }
        table.status = Status::Updating;
        table.ready_at = Some(now + delay);
        Ok(())
    }

    pub(crate) fn delete(
        world: &mut World,
        actor: &Maker,
        name: &str,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteTable";
        let now = world.now;
        let delay = world.config.delete_delay;
        let table = Self::active_table_mut(world, OP, name)?;
        if table.deletion_protection {
            return Err(validation(
                OP,
                name,
                format!("Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first: {name}"),
            ));
        }
        effects.push(Effect::DeletedTable {
            table: Box::new(table.clone()),
        });
        table.status = Status::Deleting;
        table.ready_at = Some(now + delay);
        table.deleted_by = Some(actor.clone());
        Ok(())
    }

    pub(crate) fn tag(
        world: &mut World,
        name: &str,
        tags: &BTreeMap<String, String>,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "TagResource";
        let table = Self::table_mut(world, OP, name)?;
        if matches!(table.status, Status::Creating | Status::Deleting) {
            return Err(in_use(OP, name, table.status));
        }
        effects.push(Effect::Tagged {
            table: name.to_string(),
            tags: tags.clone(),
            before: table.tags.clone(),
        });
        table.tags.extend(tags.clone());
        Ok(())
    }

    pub(crate) fn add_index(
        world: &mut World,
        actor: &Maker,
        name: &str,
        index: &GlobalIndex,
        billing: Billing,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        let now = world.now;
        let ready = now + world.config.index_delay;
        let table = Self::active_table_mut(world, OP, name)?;
        if table.gsi(&index.name).is_some() {
            return Err(validation(
                OP,
                name,
                format!(
                    "Attempting to create an index which already exists: {}",
                    index.name
                ),
            ));
        }
        if std::mem::discriminant(&billing) != std::mem::discriminant(&table.billing) {
            return Err(validation(
                OP,
                name,
                format!("index {} must be in the table's billing mode", index.name),
            ));
        }
        table.gsis.push(Gsi {
            name: index.name.clone(),
            key: index.key.clone(),
            projection: index.projection.clone(),
            billing,
            decreases: Decreases::default(),
            status: Status::Creating,
            ready_at: Some(ready),
            maker: actor.clone(),
            warm: Warm {
                units: WarmThroughput::floor_for(billing),
                ready_at: None,
            },
        });
        table.status = Status::Updating;
        table.ready_at = Some(ready);
        effects.push(Effect::AddedIndex {
            table: name.to_string(),
            index: index.name.clone(),
        });
        Ok(())
    }

    pub(crate) fn put_resource_policy_in(
        world: &mut World,
        operation: &'static str,
        table: &str,
        document: &str,
        expected: Option<&str>,
    ) -> Result<String, ControlPlaneError> {
        let now = world.now;
        let delay = world.config.policy_delay;
        let id = world.next_id;
        world.next_id += 1;
        let t = Self::table_mut(world, operation, table)?;
        let current = t.resource_policy.as_ref().map(|p| p.revision.as_str());
        match (expected, current) {
            (Some(NO_POLICY), Some(current)) => {
                return Err(policy_not_found(
                    operation,
                    table,
                    &format!("a policy exists with revision id {current}"),
                ))
            }
            (Some(expected), Some(current)) if expected != current => {
                return Err(policy_not_found(
                    operation,
                    table,
                    &format!("the policy has revision id {current}, not {expected}"),
                ))
            }
            (Some(expected), None) if expected != NO_POLICY => {
                return Err(policy_not_found(operation, table, "the table has no policy"))
            }
            _ => {}
        }
        let revision = format!("{}{id:04}", now.timestamp_millis());
        t.resource_policy = Some(TablePolicy {
            document: document.to_string(),
            revision: revision.clone(),
            applies_at: now + delay,
        });
        Ok(revision)
    }

    pub(crate) fn delete_resource_policy_in(
        world: &mut World,
        operation: &'static str,
        table: &str,
        expected: Option<&str>,
    ) -> Result<(), ControlPlaneError> {
        let t = Self::table_mut(world, operation, table)?;
        match (expected, &t.resource_policy) {
            (Some(expected), Some(p)) if p.revision != expected => Err(policy_not_found(
                operation,
                table,
                &format!("the policy has revision id {}, not {expected}", p.revision),
            )),
            (Some(_), None) => Err(policy_not_found(operation, table, "the table has no policy")),
            _ => {
                t.resource_policy = None;
                Ok(())
            }
        }
    }
}
