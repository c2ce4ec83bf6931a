//! What each table should become: the table `create_new` builds or raises for a period, and
//! the phase `resize_old` moves an older table to, limited to the parts the verdict finds ours.

use std::collections::BTreeMap;

use crate::plan::deferral::DeferralCause;
use crate::policy::limits::{ON_DEMAND_SWITCH_SPACING, TABLE_CLASS_CHANGE_SPACING};
use crate::policy::period::Slot;
use crate::policy::settings::Billing;
use crate::policy::tags::own_tags;
use crate::policy::Phase;
use crate::table::changes::{ClassChange, TableSpec};
use crate::table::TableStatus;

use crate::plan::context::{
    describe_phase, index_state, left_out_note, scaling_not_read, warm_suffix, Context, Owned,
    ThroughputChange,
};
use crate::plan::decision::{Decision, PlanItem};
use crate::plan::scaling;

impl Context<'_> {
    pub(super) fn create_new_item(&self, slot: Slot, name: &str, existing: Option<&Owned>) -> PlanItem {
        let hot = self.policy.hot_phase();
        let period = self.policy.calendar().label(slot);
        let name = name.to_string();
        let when = if slot == self.current {
            "current"
        } else {
            "upcoming"
        };
        let Some(owned) = existing else {
            let spec = self.table_spec(slot, name.clone());
            return self.item_for(
                slot,
                &name,
                &period,
                None,
                Decision::Create(spec),
                format!(
                    "{when} period's table is missing: create it with phase 0 ({}{})",
                    hot.billing,
                    warm_suffix(hot)
                ),
            );
        };
        let table = owned.table;
        let (decision, reason) = match (&table.status, table.billing, hot.billing) {
            // Someone deleted the period's table: it must exist again before the boundary.
            (TableStatus::Deleting, _, _) => (
                Decision::Recreate(self.table_spec(slot, name.clone())),
                format!(
                    "the {when} period's table is being deleted (DELETING): wait until it is gone, then create it again with phase 0 ({}{})",
                    hot.billing,
                    warm_suffix(hot)
                ),
            ),
            // Only pre-built tables are raised: a late retry of the 23:45 run, landing after
            // resize_old dialled the then-current table down, must not raise it again.
            (TableStatus::Active, _, _) if slot == self.current => (
                Decision::Unchanged,
                format!(
                    "current period's table exists with {}; create_new raises only pre-built tables",
                    table.billing
                ),
            ),
            // The run's instant is more than a period behind (a replay, a late retry): resize_old
            // dialled this table down already, as the ledger records.
            (TableStatus::Active, _, _) if !self.raises(slot, &table.name) => (
                Decision::Unchanged,
                format!(
                    "exists with {}; resize_old dialled it down already (the family's ledger records it), and create_new never raises such a table again (this run's instant is more than a period behind)",
                    table.billing
                ),
            ),
            (TableStatus::Active, Billing::Provisioned(have), _) if hot.autoscaling.is_some() => (
                Decision::Unchanged,
                format!(
                    "pre-built with {have}; phase 0 has {}: the autoscaler owns its capacity",
                    hot.autoscaling.expect("matched")
                ),
            ),
            (TableStatus::Active, Billing::Provisioned(have), Billing::Provisioned(hot_capacity)) => {
                let raise = self.raise_to_hot(owned, have, hot);
                let left = left_out_note(&raise.left_out);
                match (raise.change, self.unsettled_index(table)) {
                    (None, _) if raise.left_out.is_empty() => (
                        Decision::Unchanged,
                        format!("exists with {have}, at or above phase 0 ({hot_capacity})"),
                    ),
                    (None, _) => (
                        Decision::Skipped,
                        format!("pre-built with {have}; what is this policy's is at or above phase 0 ({hot_capacity}){left}"),
                    ),
                    (Some(_), _) if !owned.verdict.scaling_known() => scaling_not_read(),
                    (Some(_), Some(index)) => (
                        Decision::Deferred {
                            retry_after: None,
                            cause: DeferralCause::IndexBusy,
                        },
                        format!(
                            "pre-built below phase 0, but its index {} is {}: DynamoDB changes throughput once every index is ACTIVE; a later run raises it",
                            index.name,
                            index_state(index)
                        ),
                    ),
                    (Some(change), None) => {
                        let what = if change.changes_table() {
                            format!("pre-built with {have}, below phase 0 ({hot_capacity})")
                        } else {
                            "pre-built with indexes below phase 0".to_string()
                        };
                        (
                            Decision::Update(change),
                            format!("{what}: raise it (create_new never lowers){left}"),
                        )
                    }
                }
            }
            (TableStatus::Active, have, _) => (
                Decision::Unchanged,
                format!("exists with {have}; create_new raises only provisioned capacity: left as is"),
            ),
            (status, _, _) => (
                Decision::Unchanged,
                format!("exists ({}); left as is", status.as_str()),
            ),
        };
        // A pre-built table with more warm throughput than phase 0 keeps it, and says so.
        let reason = if slot != self.current && table.status == TableStatus::Active {
            format!("{reason}{}", self.warm_kept_note(owned, 0))
        } else {
            reason
        };
        self.item(owned, decision, reason)
    }

    /// CreateTable for `slot`: phase 0's billing and class, and the template's settings and
    /// tags (ours included: the family tag is written here and nowhere else, and the table's
    /// period never depends on its name again).
    pub(super) fn table_spec(&self, slot: Slot, name: String) -> TableSpec {
        let hot = self.policy.hot_phase();
        let template = &self.policy.template;
        let mut tags = template.tags.clone();
        tags.extend(self.own_tags(slot));
        TableSpec {
            name,
            key: self.policy.key.clone(),
            billing: hot.billing,
            global_indexes: self.index_specs(),
            local_indexes: self.policy.local_indexes.clone(),
            table_class: hot.table_class,
            deletion_protection: template.deletion_protection.unwrap_or(false),
            stream: template.stream.flatten(),
            encryption: template.encryption.clone(),
            tags,
            warm: hot.warm,
        }
    }

    /// The tags ddb-rollover sets on a table of `slot` at creation.
    pub(crate) fn own_tags(&self, slot: Slot) -> BTreeMap<String, String> {
        own_tags(
            &self.policy.prefix,
            &self.policy.calendar(),
            slot,
            &self.policy_hash,
        )
    }

    /// resize_old's items for a table, in the order they run: removal of our scalable targets
    /// (leaving an autoscaling phase), the capacity or class change, registration (entering or
    /// staying in one). An unchanged main item is left out when a scaling item says more.
    pub(super) fn resize_old_items(&self, owned: &Owned) -> Vec<PlanItem> {
        let table = owned.table;
        let age = self.age(owned.slot);
        let mut items = Vec::new();
        if age > 0 {
            items.extend(self.deregister_item(owned));
        }
        let main = self.resize_old_item(owned);
        let provisioned_after = match &main.decision {
            Decision::Update(change) => scaling::is_provisioned(change.to),
            _ => scaling::is_provisioned(table.billing),
        };
        let register = self.register_item(owned, provisioned_after);
        if !(main.decision == Decision::Unchanged && (register.is_some() || !items.is_empty())) {
            items.push(main);
        }
        items.extend(register);
        items
    }

    pub(super) fn resize_old_item(&self, owned: &Owned) -> PlanItem {
        let (slot, table) = (owned.slot, owned.table);
        let age = self.age(slot);
        if age <= 0 {
            let why = if age == 0 {
                "current period: kept hot by create_new"
            } else {
                "future period: kept hot by create_new"
            };
            return self.item(owned, Decision::Skipped, why.into());
        }
        let phase_index = self.phase_index(slot);
        let want: &Phase = &self.policy.phases[phase_index];
        let phase = match self.policy.grace_end(slot).filter(|until| self.now < *until) {
            Some(until) => format!(
                "phase 0 ({}) in its write grace until {} (period end + grace: late writes; the first resize_old run after lowers it)",
                describe_phase(want),
                until.to_rfc3339()
            ),
            None => format!("phase {phase_index} ({}) for age {age}", describe_phase(want)),
        };

        if table.status != TableStatus::Active {
            return self.item(
                owned,
                Decision::Deferred {
                    retry_after: None,
                    cause: DeferralCause::TableBusy,
                },
                format!(
                    "needs {phase} but is {}: DynamoDB updates only ACTIVE tables; a later run retries",
                    table.status.as_str()
                ),
            );
        }
        let class_change = want
            .table_class
            .filter(|class| *class != table.table_class)
            .map(|to| ClassChange {
                name: table.name.clone(),
                from: table.table_class,
                to,
            });
        // An autoscaling phase leaves a provisioned table's capacity, and its indexes', to the
        // autoscaler; only an on-demand table is switched (to provisioned at the minimums).
        let throughput = match (want.autoscaling, table.billing) {
            (Some(_), Billing::Provisioned(_)) => Ok(ThroughputChange::default()),
            _ => self.phase_change(owned, want),
        };
        let (change, left_out) = match throughput {
            Ok(ThroughputChange { change, left_out }) => (change, left_out),
            // A switch that would touch what is not ours: the class may still follow.
            Err(refused) => (None, vec![refused]),
        };
        let left = left_out_note(&left_out);
        let Some(change) = change else {
            let Some(change) = class_change else {
                if left_out.is_empty() {
                    return self.item(owned, Decision::Unchanged, format!("already at {phase}"));
                }
                return self.item(
                    owned,
                    Decision::Skipped,
                    format!("needs {phase}; what is this policy's is there{left}"),
                );
            };
            if let Some(deferred) = self.too_soon_after(
                owned,
                table.table_class_updated,
                TABLE_CLASS_CHANGE_SPACING,
                DeferralCause::ClassChangeSpacing,
                format!("needs {phase} but its table class changed recently; at most one change per 15 days"),
            ) {
                return deferred;
            }
            let reason = format!(
                "table class {} -> {} for {phase}{left}{}",
                change.from,
                change.to,
                self.warm_kept_note(owned, phase_index)
            );
            return self.item(owned, Decision::UpdateClass(change), reason);
        };
        if !owned.verdict.scaling_known() {
            let (decision, reason) = scaling_not_read();
            return self.item(owned, decision, reason);
        }
        if let Some(index) = self.unsettled_index(table) {
            return self.item(
                owned,
                Decision::Deferred {
                    retry_after: None,
                    cause: DeferralCause::IndexBusy,
                },
                format!(
                    "needs {phase} but its index {} is {}: DynamoDB changes throughput once every index is ACTIVE; a later run retries",
                    index.name,
                    index_state(index)
                ),
            );
        }
        if let Err((retry_after, which)) = self.decrease_budget(table, &change) {
            return self.deferred(
                owned,
                retry_after,
                DeferralCause::DecreaseBudget,
                format!("needs {phase} but DynamoDB's decrease budget is used up: {which}"),
            );
        }
        if change.is_switch_to_on_demand() {
            if let Some(deferred) = self.too_soon_after(
                owned,
                table.last_switch_to_on_demand,
                ON_DEMAND_SWITCH_SPACING,
                DeferralCause::OnDemandSwitchSpacing,
                format!(
                    "needs {phase} but it switched to on-demand recently; at most one switch per 6 hours"
                ),
            ) {
                return deferred;
            }
        }
        let mut reason = if change.changes_table() {
            format!("{} -> {phase}", table.billing)
        } else {
            format!("indexes -> {phase}")
        };
        if !change.indexes.is_empty() {
            let names: Vec<&str> = change.indexes.iter().map(|i| i.index.as_str()).collect();
            reason.push_str(&format!(", with indexes {}", names.join(", ")));
        }
        reason.push_str(&left);
        reason.push_str(&self.warm_kept_note(owned, phase_index));
        if class_change.is_some() {
            reason.push_str("; the table class follows in a later run (one change per UpdateTable)");
        }
        self.item(owned, Decision::Update(change), reason)
    }
}
