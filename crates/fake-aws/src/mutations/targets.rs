//! Application Auto Scaling's mutations: register a target (bringing the table's capacity within
//! its bounds), put a policy, deregister a target with everything on it.

use aws_model::scaling;
use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::policy::{table_of, ScalableKey};
use ddb_rollover::policy::{Billing, Capacity};

use crate::account::FakeAws;
use crate::errors::error;
use crate::log::Effect;
use crate::maker::Maker;
use crate::objects::Status;
use crate::objects::{ScalingPolicy, Target};
use crate::world::World;

impl FakeAws {
    /// The resource a scalable target scales must exist (a table being created does not, yet).
    pub(crate) fn check_resource(
        world: &World,
        operation: &'static str,
        key: &ScalableKey,
    ) -> Result<(), ControlPlaneError> {
        let table_name = table_of(&key.resource_id).unwrap_or_default();
        let missing = || {
            error(
                ErrorKind::InUse,
                operation,
                table_name,
                format!(
                    "ValidationException: DynamoDB resource {} does not exist",
                    key.resource_id
                ),
            )
        };
        let table = world.tables.get(table_name).ok_or_else(missing)?;
        if !matches!(table.status, Status::Active | Status::Updating) {
            return Err(missing());
        }
        if let Some((_, index)) = key.resource_id.split_once("/index/") {
            if table.gsi(index).is_none() {
                return Err(missing());
            }
        }
        Ok(())
    }

    pub(crate) fn register_target(
        world: &mut World,
        actor: &Maker,
        key: &ScalableKey,
        min: i64,
        max: i64,
        effects: &mut Vec<Effect>,
    ) {
        let before = world.targets.get(key).map(|t| (t.min, t.max));
        let target = world.targets.entry(key.clone()).or_insert_with(|| Target {
            key: key.clone(),
            min,
            max,
            policies: Vec::new(),
            scheduled_actions: Vec::new(),
            maker: actor.clone(),
        });
        target.min = min;
        target.max = max;
        effects.push(Effect::RegisteredTarget {
            key: key.clone(),
            before,
            after: (min, max),
        });
        Self::clamp(world, key, min, max, effects);
    }

    /// The autoscaler brings the resource's provisioned capacity within [min, max] (a decrease
    /// only within the resource's decrease budget).
    pub(crate) fn clamp(world: &mut World, key: &ScalableKey, min: i64, max: i64, effects: &mut Vec<Effect>) {
        let now = world.now;
        let Some(table_name) = table_of(&key.resource_id).map(str::to_string) else {
            return;
        };
        let index = key.resource_id.split_once("/index/").map(|(_, i)| i.to_string());
        let Some(table) = world.tables.get_mut(&table_name) else {
            return;
        };
        let (billing, decreases, warm) = match &index {
            None => (&mut table.billing, &mut table.decreases, &mut table.warm),
            Some(index) => match table.gsis.iter_mut().find(|g| g.name == *index) {
                Some(gsi) => (&mut gsi.billing, &mut gsi.decreases, &mut gsi.warm),
                None => return,
            },
        };
        let Billing::Provisioned(capacity) = *billing else {
            return;
        };
        let units = if key.dimension.is_read() {
            capacity.read
        } else {
            capacity.write
        };
        let wanted = units.clamp(min, max.max(min));
        if wanted == units || (wanted < units && !decreases.allowed(now)) {
            return;
        }
        if wanted < units {
            decreases.at.push(now);
        }
        let to = if key.dimension.is_read() {
            Capacity {
                read: wanted,
                ..capacity
            }
        } else {
            Capacity {
                write: wanted,
                ..capacity
            }
        };
        let from = *billing;
        *billing = Billing::Provisioned(to);
        warm.grow_to(*billing);
        effects.push(Effect::AutoscalerCapacity {
            table: table_name,
            index,
            from,
            to: Billing::Provisioned(to),
        });
    }

    pub(crate) fn put_policy(
        world: &mut World,
        actor: &Maker,
        key: &ScalableKey,
        policy: ScalingPolicy,
        effects: &mut Vec<Effect>,
    ) -> Result<String, ControlPlaneError> {
        let table = table_of(&key.resource_id).unwrap_or_default().to_string();
        let Some(target) = world.targets.get_mut(key) else {
            return Err(error(
                ErrorKind::NotFound,
                "PutScalingPolicy",
                &table,
                format!("ObjectNotFoundException: No scalable target registered for {key}"),
            ));
        };
        let (created, arn) = match target.policies.iter_mut().find(|p| p.name == policy.name) {
            Some(existing) => {
                let (maker, arn) = (existing.maker.clone(), existing.arn.clone());
                *existing = ScalingPolicy {
                    maker,
                    arn: arn.clone(),
                    ..policy.clone()
                };
                (false, arn)
            }
            None => {
                let arn = format!(
                    "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:{:08x}-0000-4000-8000-{:012x}:resource/dynamodb/{}:policyName/{}",
                    world.next_id, world.next_id, key.resource_id, policy.name
                );
                world.next_id += 1;
                let target = world.targets.get_mut(key).expect("found above");
                target.policies.push(ScalingPolicy {
                    maker: actor.clone(),
                    arn: arn.clone(),
                    ..policy.clone()
                });
                (true, arn)
            }
        };
        effects.push(Effect::PutPolicy {
            key: key.clone(),
            name: policy.name,
            created,
        });
        Ok(arn)
    }

    /// DeregisterScalableTarget: the target goes, with every policy and scheduled action on it
    /// (`aws_model::scaling::DELETED_WITH_TARGET`: the target holds both kinds).
    pub(crate) fn deregister_target(
        world: &mut World,
        key: &ScalableKey,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        let Some(target) = world.targets.remove(key) else {
            return Err(error(
                ErrorKind::NotFound,
                "DeregisterScalableTarget",
                table_of(&key.resource_id).unwrap_or_default(),
                format!(
                    "ObjectNotFoundException: {}",
                    scaling::no_target(&key.resource_id, &key.dimension.to_string())
                ),
            ));
        };
        effects.push(Effect::DeregisteredTarget {
            key: key.clone(),
            maker: target.maker,
            policies: target.policies,
            scheduled_actions: target.scheduled_actions,
        });
        Ok(())
    }
}
