//! What a restored period's table is: the planner's decision for `restore`
//! ([`crate::run::restore`]), pure like the rest of the plan.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::policy::period::Slot;
use crate::policy::Policy;
use crate::table::changes::{IndexSpec, TableSpec};

/// What ImportTable can create of the policy's table for `slot` at `now`: the key, the global
/// indexes, the capacity of the phase its age calls for (autoscaling phases start at their
/// minimums, as CreateTable does), the encryption. The rest is left to the runs.
pub(crate) fn restore_spec(policy: &Policy, slot: Slot, now: DateTime<Utc>) -> (TableSpec, usize) {
    let phase_index = policy.phase_at(slot, now);
    let phase = &policy.phases[phase_index];
    let spec = TableSpec {
        name: policy.naming().table_name(slot),
        key: policy.key.clone(),
        billing: phase.billing,
        global_indexes: policy
            .indexes
            .iter()
            .map(|index| IndexSpec {
                index: index.clone(),
                billing: phase.billing_of_index(&index.name),
            })
            .collect(),
        local_indexes: Vec::new(),
        table_class: None,
        deletion_protection: false,
        stream: None,
        encryption: policy.template.encryption.clone(),
        tags: BTreeMap::new(),
        // ImportTable takes no warm throughput for the table.
        warm: None,
    };
    (spec, phase_index)
}
