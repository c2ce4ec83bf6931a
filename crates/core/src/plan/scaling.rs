//! Autoscaling phases: which of a table's scalable targets to register (with our
//! target-tracking policy) or remove, asking the table's verdict whose each target is.
//!
//! A table in an autoscaling phase gets no capacity UpdateTable: the autoscaler owns its
//! capacity, and registering brings a capacity outside the bounds back within them. A table
//! moving to a phase without autoscaling has our targets removed first, then its capacity
//! changed, in the same run (its items run in order; a failed removal holds the update back,
//! see [`crate::run::apply`]). A target that is not ours is never registered over or deregistered;
//! one that also carries someone else's policy or a scheduled action loses only our policy
//! (deregistering it would delete theirs). After retention deletes a table, our own targets on
//! it are deregistered: DynamoDB leaves them registered.

use crate::plan::context::{Context, Owned};
use crate::plan::decision::{Decision, PlanItem};
use crate::plan::verdict::{judge_target, ForeignPart, TargetOwner};
use crate::policy::scaling::{
    policy_name, scalable_keys, Autoscaling, DeregisterScaling, ObservedScalableTarget, RegisterScaling,
    ScalableKey, ScalingRemoval,
};
use crate::policy::settings::Billing;
use crate::table::TableStatus;

impl Context<'_> {
    /// The policy's global secondary indexes on the table (by the verdict: name, key and
    /// projection): their capacity scales with the table's. Other indexes are left alone.
    pub(crate) fn scaled_index_names<'t>(&self, owned: &'t Owned) -> Vec<&'t str> {
        owned
            .table
            .global_indexes
            .iter()
            .filter(|index| owned.verdict.index_is_ours(&index.name))
            .map(|index| index.name.as_str())
            .collect()
    }

    /// The names of the GSIs the policy creates tables with.
    pub(crate) fn policy_index_names(&self) -> Vec<&str> {
        self.policy.indexes.iter().map(|i| i.name.as_str()).collect()
    }

    /// Register (or update) our targets that are missing or differ from the phase's bounds,
    /// when the table's phase has autoscaling; a key held by a target that is not only ours is
    /// left to it. `provisioned_after`: the table is provisioned, or the run's earlier item
    /// switches it to provisioned.
    pub(crate) fn register_item(&self, owned: &Owned, provisioned_after: bool) -> Option<PlanItem> {
        let table = owned.table;
        let phase_index = self.phase_index(owned.slot);
        let want = self.policy.phases[phase_index].autoscaling?;
        let observed = table.scaling.as_ref()?;
        if table.status != TableStatus::Active || !provisioned_after {
            return None;
        }
        let prefix = &self.policy.prefix;
        let mut left_out = Vec::new();
        let keys: Vec<ScalableKey> = scalable_keys(&table.name, self.scaled_index_names(owned))
            .into_iter()
            .filter(|key| match owned.verdict.target(key) {
                TargetOwner::Absent => true,
                TargetOwner::Ours => !observed.iter().any(|t| t.key == *key && t.matches(prefix, &want)),
                TargetOwner::Shared | TargetOwner::Foreign => {
                    left_out.push(key.to_string());
                    false
                }
            })
            .collect();
        if keys.is_empty() {
            return None;
        }
        let updating = keys
            .iter()
            .any(|key| owned.verdict.target(key) == TargetOwner::Ours);
        let change = RegisterScaling::new(prefix, &table.name, keys, &want);
        let mut reason = format!(
            "phase {phase_index} has {want}: {} {} scalable target(s) with a target-tracking policy",
            if updating { "update" } else { "register" },
            change.targets.len()
        );
        if !left_out.is_empty() {
            reason.push_str(&format!(
                "; left to the targets on them that are not only this policy's: {}",
                left_out.join(", ")
            ));
        }
        Some(self.item(owned, Decision::RegisterScaling(change), reason))
    }

    /// Remove our policies when the table's phase has no autoscaling (any more): with the
    /// target when every policy on it is ours, else only ours (the target and the other
    /// policies stay).
    pub(crate) fn deregister_item(&self, owned: &Owned) -> Option<PlanItem> {
        let table = owned.table;
        let phase_index = self.phase_index(owned.slot);
        if self.policy.phases[phase_index].autoscaling.is_some() || table.status != TableStatus::Active {
            return None;
        }
        let prefix = &self.policy.prefix;
        let removal = |key: &ScalableKey, deregister_target| ScalingRemoval {
            key: key.clone(),
            policy_name: policy_name(prefix, key.dimension),
            deregister_target,
        };
        let mut targets: Vec<ScalingRemoval> = owned
            .verdict
            .our_targets
            .iter()
            .map(|key| removal(key, true))
            .collect();
        let mut kept = Vec::new();
        for part in &owned.verdict.foreign {
            if let ForeignPart::SharedTarget { key, .. } = part {
                targets.push(removal(key, false));
                kept.push(part.to_string());
            }
        }
        if targets.is_empty() {
            return None;
        }
        let mut reason = format!(
            "phase {phase_index} has no autoscaling: remove this policy's scaling from {} scalable target(s) before its capacity changes",
            targets.len()
        );
        if !kept.is_empty() {
            reason.push_str(&format!(
                "; only our policy is deleted where others are attached (deregistering would delete theirs): {}",
                kept.join(", ")
            ));
        }
        let change = DeregisterScaling {
            name: table.name.clone(),
            targets,
        };
        Some(self.item(owned, Decision::DeregisterScaling(change), reason))
    }

    /// After retention's DeleteTable (the item before it): deregister our own targets on the
    /// table, which deleting a table does not. Only targets every policy of which is ours and
    /// that carry no scheduled action: a table with any other target is never deleted (the
    /// verdict's evidence), and the run checks again before each deregistration.
    pub(crate) fn deregister_deleted_item(&self, owned: &Owned) -> Option<PlanItem> {
        let prefix = &self.policy.prefix;
        let targets: Vec<ScalingRemoval> = owned
            .verdict
            .our_targets
            .iter()
            .map(|key| ScalingRemoval {
                key: key.clone(),
                policy_name: policy_name(prefix, key.dimension),
                deregister_target: true,
            })
            .collect();
        if targets.is_empty() {
            return None;
        }
        let reason = format!(
            "once the table is deleted: deregister this policy's {} scalable target(s) on it (deleting a table leaves its targets registered)",
            targets.len()
        );
        let change = DeregisterScaling {
            name: owned.table.name.clone(),
            targets,
        };
        Some(self.item(owned, Decision::DeregisterScaling(change), reason))
    }

    /// Registration for a table this run creates in an autoscaling phase 0. A target left
    /// registered on the name by a deleted table (DynamoDB deregisters nothing) is judged like
    /// any other: registered over only when it is ours alone, else its dimension is left to it.
    pub(crate) fn register_new(
        &self,
        name: &str,
        want: &Autoscaling,
        vacant_targets: &[ObservedScalableTarget],
        recorded: &[String],
    ) -> (Decision, String) {
        let prefix = &self.policy.prefix;
        let mut left_out = Vec::new();
        let keys: Vec<ScalableKey> = scalable_keys(name, self.policy_index_names())
            .into_iter()
            .filter(|key| {
                let part = vacant_targets
                    .iter()
                    .find(|target| target.key == *key)
                    .and_then(|target| judge_target(prefix, target, recorded));
                match part {
                    Some(part) => {
                        left_out.push(part.to_string());
                        false
                    }
                    None => true,
                }
            })
            .collect();
        let left_to = if left_out.is_empty() {
            String::new()
        } else {
            format!(
                "; left to the targets registered on the name before the table existed, which are not only this policy's: {}",
                left_out.join(", ")
            )
        };
        if keys.is_empty() {
            return (
                Decision::Skipped,
                format!("phase 0 has {want}, but no scalable target is this policy's to register{left_to}"),
            );
        }
        let change = RegisterScaling::new(prefix, name, keys, want);
        let reason = format!(
            "phase 0 has {want}: register {} scalable target(s) with a target-tracking policy{left_to}",
            change.targets.len()
        );
        (Decision::RegisterScaling(change), reason)
    }
}

/// Whether a table with this billing can be registered (Application Auto Scaling scales
/// provisioned capacity only).
pub(crate) fn is_provisioned(billing: Billing) -> bool {
    matches!(billing, Billing::Provisioned(_))
}

/// One warning naming the owned tables with scalable targets, scaling policies or scheduled
/// actions this policy did not create.
pub(crate) fn foreign_scaling_warning(owned: &[Owned]) -> Option<String> {
    let names: Vec<&str> = owned
        .iter()
        .filter(|o| {
            o.verdict.foreign.iter().any(|part| {
                matches!(
                    part,
                    ForeignPart::Target { .. } | ForeignPart::SharedTarget { .. }
                )
            })
        })
        .map(|o| o.table.name.as_str())
        .collect();
    if names.is_empty() {
        return None;
    }
    const SHOWN: usize = 5;
    let mut listed = names.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        listed.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    Some(format!(
        "{} table(s) of this policy carry Application Auto Scaling targets, scaling policies or scheduled actions it did not create: {listed}. \
         The throughput they hold is left to them (never changed, deregistered, or deleted with the table); \
         remove them to let the policy manage it",
        names.len()
    ))
}
