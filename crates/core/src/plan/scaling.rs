//! Autoscaling phases: which of a table's scalable targets to register (with our
//! target-tracking policy) or deregister, and which tables are left alone because a scalable
//! target that this policy did not create is on them.
//!
//! A table in an autoscaling phase gets no capacity UpdateTable: the autoscaler owns its
//! capacity, and registering brings a capacity outside the bounds back within them. A table
//! moving to a phase without autoscaling has our targets deregistered first, then its capacity
//! changed, in the same run (its items run in order; a failed deregistration holds the update
//! back, see [`crate::apply`]).

use super::{Context, Decision, Owned, PlanItem};
use crate::observed::{ObservedTable, TableStatus};
use crate::scaling::{
    policy_name, scalable_keys, Autoscaling, DeregisterScaling, ObservedScalableTarget, RegisterScaling,
    ScalableKey, ScalingRemoval,
};
use crate::settings::Billing;

impl Context<'_> {
    /// The policy's global secondary indexes on `table`: their capacity scales with the
    /// table's. An index the policy does not name is left alone.
    pub(crate) fn scaled_index_names<'t>(&self, table: &'t ObservedTable) -> Vec<&'t str> {
        table
            .global_indexes
            .iter()
            .filter(|index| self.is_policy_index(&index.name))
            .map(|index| index.name.as_str())
            .collect()
    }

    /// The names of the GSIs the policy creates tables with.
    pub(crate) fn policy_index_names(&self) -> Vec<&str> {
        self.policy.indexes.iter().map(|i| i.name.as_str()).collect()
    }

    /// The targets on `table` that this policy did not create (none when not read).
    pub(crate) fn foreign_targets<'t>(&self, table: &'t ObservedTable) -> Vec<&'t ObservedScalableTarget> {
        table
            .scaling
            .iter()
            .flatten()
            .filter(|t| !t.is_ours(&self.policy.prefix))
            .collect()
    }

    /// The table's main item when a foreign scalable target is on it: never resized against
    /// it, never registered over it, never deregistered.
    pub(crate) fn foreign_scaling_item(&self, owned: &Owned) -> Option<PlanItem> {
        let foreign = self.foreign_targets(owned.table);
        if foreign.is_empty() {
            return None;
        }
        Some(self.item(
            owned,
            Decision::Skipped,
            format!(
                "under scalable target(s) this policy did not create ({}): capacity is not changed against them and \
                 they are never deregistered; deregister them (or attach no other autoscaling) to let the policy manage the table",
                describe_targets(&foreign)
            ),
        ))
    }

    /// Register (or update) the targets that are missing or differ from the phase's bounds,
    /// when the table's phase has autoscaling. `provisioned_after`: the table is provisioned,
    /// or the run's earlier item switches it to provisioned.
    pub(crate) fn register_item(&self, owned: &Owned, provisioned_after: bool) -> Option<PlanItem> {
        let table = owned.table;
        let phase_index = self.phase_index(owned.slot);
        let want = self.policy.phases[phase_index].autoscaling?;
        let observed = table.scaling.as_ref()?;
        if table.status != TableStatus::Active || !provisioned_after {
            return None;
        }
        let prefix = &self.policy.prefix;
        let keys: Vec<ScalableKey> = scalable_keys(&table.name, self.scaled_index_names(table))
            .into_iter()
            .filter(|key| {
                !observed
                    .iter()
                    .any(|t| t.key == *key && t.is_ours(prefix) && t.matches(prefix, &want))
            })
            .collect();
        if keys.is_empty() {
            return None;
        }
        let updating = observed.iter().any(|t| t.is_ours(prefix));
        let change = RegisterScaling::new(prefix, &table.name, keys, &want);
        let reason = format!(
            "phase {phase_index} has {want}: {} {} scalable target(s) with a target-tracking policy",
            if updating { "update" } else { "register" },
            change.targets.len()
        );
        Some(self.item(owned, Decision::RegisterScaling(change), reason))
    }

    /// Deregister our targets when the table's phase has no autoscaling (any more).
    pub(crate) fn deregister_item(&self, owned: &Owned) -> Option<PlanItem> {
        let table = owned.table;
        let phase_index = self.phase_index(owned.slot);
        if self.policy.phases[phase_index].autoscaling.is_some() || table.status != TableStatus::Active {
            return None;
        }
        let prefix = &self.policy.prefix;
        let targets: Vec<ScalingRemoval> = table
            .scaling
            .iter()
            .flatten()
            .filter(|t| t.is_ours(prefix))
            .map(|t| ScalingRemoval {
                key: t.key.clone(),
                policy_name: policy_name(prefix, t.key.dimension),
                deregister_target: true,
            })
            .collect();
        if targets.is_empty() {
            return None;
        }
        let reason = format!(
            "phase {phase_index} has no autoscaling: deregister this policy's {} scalable target(s) before its capacity changes",
            targets.len()
        );
        let change = DeregisterScaling {
            name: table.name.clone(),
            targets,
        };
        Some(self.item(owned, Decision::DeregisterScaling(change), reason))
    }

    /// Registration for a table this run creates in an autoscaling phase 0.
    pub(crate) fn register_new(&self, name: &str, want: &Autoscaling) -> RegisterScaling {
        RegisterScaling::new(
            &self.policy.prefix,
            name,
            scalable_keys(name, self.policy_index_names()),
            want,
        )
    }
}

/// Whether a table with this billing can be registered (Application Auto Scaling scales
/// provisioned capacity only).
pub(crate) fn is_provisioned(billing: Billing) -> bool {
    matches!(billing, Billing::Provisioned(_))
}

/// "table/t write (1-10), table/t read (5-50)".
fn describe_targets(targets: &[&ObservedScalableTarget]) -> String {
    targets
        .iter()
        .map(|t| format!("{} ({}-{})", t.key, t.min, t.max))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One warning naming the owned tables under scalable targets the policy did not create.
pub(crate) fn foreign_scaling_warning(prefix: &str, tables: &[&ObservedTable]) -> Option<String> {
    let names: Vec<&str> = tables
        .iter()
        .filter(|t| t.scaling.iter().flatten().any(|target| !target.is_ours(prefix)))
        .map(|t| t.name.as_str())
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
        "{} table(s) of this policy are under Application Auto Scaling targets it did not create: {listed}. \
         Their capacity is left to those targets (never changed or deregistered by this policy); deregister \
         the targets to let the policy manage them",
        names.len()
    ))
}
