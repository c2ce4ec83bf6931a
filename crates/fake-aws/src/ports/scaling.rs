//! [`Scaling`] on the fake: Application Auto Scaling as the SDK adapter drives it.

use ddb_rollover::control::{ControlPlaneError, Scaling};
use ddb_rollover::policy::{
    left_registered, table_of, DeregisterScaling, ObservedScalableTarget, RegisterScaling,
};

use crate::account::FakeAws;
use crate::log::Effect;
use crate::objects::{ScalingPolicy, Target};

impl Scaling for FakeAws {
    async fn describe_scaling(
        &self,
        tables: &[String],
    ) -> Result<Vec<ObservedScalableTarget>, ControlPlaneError> {
        self.request("DescribeScalableTargets", "").await?;
        let world = self.lock();
        Ok(world
            .targets
            .values()
            .filter(|t| table_of(&t.key.resource_id).is_some_and(|name| tables.iter().any(|n| n == name)))
            .map(Target::observed)
            .collect())
    }

    async fn register_scaling(&self, change: &RegisterScaling) -> Result<Vec<String>, ControlPlaneError> {
        self.change("RegisterScalableTarget", &change.name, |world, effects| {
            let mut arns = Vec::new();
            for target in &change.targets {
                const OP: &str = "RegisterScalableTarget";
                let table = table_of(&target.key.resource_id).unwrap_or_default().to_string();
                self.may_scale(
                    world,
                    OP,
                    "application-autoscaling:RegisterScalableTarget",
                    &table,
                )?;
                Self::check_resource(world, OP, &target.key)?;
                Self::register_target(world, &self.actor, &target.key, target.min, target.max, effects);
                let policy = ScalingPolicy {
                    name: target.policy_name.clone(),
                    arn: String::new(),
                    policy_type: "TargetTrackingScaling".into(),
                    metric: Some(target.key.dimension.metric().to_string()),
                    target_value: Some(f64::from(target.target)),
                    maker: self.actor.clone(),
                };
                arns.push(Self::put_policy(
                    world,
                    &self.actor,
                    &target.key,
                    policy,
                    effects,
                )?);
            }
            Ok(arns)
        })
        .await
    }

    /// As the SDK adapter does it (`autoscaling_sdk::deregister`): DeleteScalingPolicy of our
    /// policy (already gone counts as deleted), then, when the change asks for it,
    /// DescribeScalingPolicies, DescribeScheduledActions and DeregisterScalableTarget only if
    /// no policy and no scheduled action is left on the target (a missing target counts as
    /// deregistered).
    async fn deregister_scaling(&self, change: &DeregisterScaling) -> Result<Vec<String>, ControlPlaneError> {
        self.change("DeregisterScalableTarget", &change.name, |world, effects| {
            let mut kept = Vec::new();
            for removal in &change.targets {
                if let Some(target) = world.targets.get_mut(&removal.key) {
                    if let Some(at) = target.policies.iter().position(|p| p.name == removal.policy_name) {
                        let policy = target.policies.remove(at);
                        effects.push(Effect::DeletedPolicy {
                            key: removal.key.clone(),
                            policy,
                        });
                    }
                }
                let left = world
                    .targets
                    .get(&removal.key)
                    .map(|t| t.policies.len() + t.scheduled_actions.len());
                if removal.deregister_target && left == Some(0) {
                    Self::deregister_target(world, &removal.key, effects)?;
                } else if removal.deregister_target {
                    if let Some(target) = world.targets.get(&removal.key) {
                        let (what, names): (&str, Vec<&str>) = if target.policies.is_empty() {
                            (
                                "scheduled actions",
                                target.scheduled_actions.iter().map(|a| a.name.as_str()).collect(),
                            )
                        } else {
                            (
                                "policies",
                                target.policies.iter().map(|p| p.name.as_str()).collect(),
                            )
                        };
                        kept.push(left_registered(&removal.key, what, &names));
                    }
                }
            }
            Ok(kept)
        })
        .await
    }
}
