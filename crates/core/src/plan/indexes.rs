//! Global secondary indexes in the planner: their throughput as part of a table's phase
//! change (each index's own decrease budget, every index's throughput with a switch to
//! provisioned), indexes that hold a change back while they build, the policy's new indexes
//! added to current and pre-built tables, and indexes the policy does not name, left alone.

use chrono::{DateTime, Utc};

use super::{Context, Decision, Owned, PlanItem};
use crate::changes::{lowers, CapacityChange, IndexCapacityChange, IndexSpec, TableSetting};
use crate::limits::decrease_allowed;
use crate::observed::{ObservedIndex, ObservedTable};
use crate::policy::Phase;
use crate::settings::{Billing, Capacity};

impl Context<'_> {
    /// Whether the policy names the index `name`.
    pub(crate) fn is_policy_index(&self, name: &str) -> bool {
        self.policy.indexes.iter().any(|i| i.name == name)
    }

    /// The UpdateTable that brings the table and its indexes to `want`'s throughput; `None`
    /// when all of them already have it. Indexes the policy does not name are left as they
    /// are, except in a switch to provisioned, which DynamoDB takes only with every index's
    /// throughput: they get the phase's default index capacity.
    pub fn phase_change(&self, table: &ObservedTable, want: &Phase) -> Option<CapacityChange> {
        let to_provisioned = matches!(
            (table.billing, want.billing),
            (Billing::OnDemand(_), Billing::Provisioned(_))
        );
        let indexes = table
            .global_indexes
            .iter()
            .filter_map(|index| {
                let ours = self.is_policy_index(&index.name);
                let to = if ours {
                    want.billing_of_index(&index.name)
                } else {
                    want.index_billing
                };
                let needed = match (index.billing, to) {
                    _ if to_provisioned => true,
                    _ if !ours => false,
                    // A switch to on-demand takes the indexes along; only maximums need saying.
                    (Billing::Provisioned(_), Billing::OnDemand(limits)) => limits != Default::default(),
                    (from, to) => from != to,
                };
                needed.then(|| IndexCapacityChange {
                    index: index.name.clone(),
                    from: index.billing,
                    to,
                })
            })
            .collect();
        self.change_if_any(table, want.billing, indexes)
    }

    /// create_new's raise of a pre-built table: the table and each of the policy's indexes to
    /// at least phase 0's provisioned capacity, never lower.
    pub fn raise_to_hot(&self, table: &ObservedTable, have: Capacity, hot: &Phase) -> Option<CapacityChange> {
        let at_least = |have: Capacity, want: Billing| match want {
            Billing::Provisioned(want) => Capacity {
                read: have.read.max(want.read),
                write: have.write.max(want.write),
            },
            Billing::OnDemand(_) => have,
        };
        let indexes = table
            .global_indexes
            .iter()
            .filter(|index| self.is_policy_index(&index.name))
            .filter_map(|index| {
                let Billing::Provisioned(have) = index.billing else {
                    return None;
                };
                let want = at_least(have, hot.billing_of_index(&index.name));
                (want != have).then(|| IndexCapacityChange {
                    index: index.name.clone(),
                    from: index.billing,
                    to: Billing::Provisioned(want),
                })
            })
            .collect();
        self.change_if_any(table, Billing::Provisioned(at_least(have, hot.billing)), indexes)
    }

    fn change_if_any(
        &self,
        table: &ObservedTable,
        to: Billing,
        indexes: Vec<IndexCapacityChange>,
    ) -> Option<CapacityChange> {
        (table.billing != to || !indexes.is_empty()).then(|| CapacityChange {
            name: table.name.clone(),
            from: table.billing,
            to,
            indexes,
        })
    }

    /// An index that is still being built, changed or dropped: DynamoDB takes no throughput
    /// change for the table until it is ACTIVE and done backfilling.
    pub fn unsettled_index<'t>(&self, table: &'t ObservedTable) -> Option<&'t ObservedIndex> {
        table.global_indexes.iter().find(|index| !index.is_settled())
    }

    /// When the change's decreases are all within their budgets: `Err((when, which))` names the
    /// table or indexes whose budget is spent and the earliest time all are allowed again.
    pub fn decrease_budget(
        &self,
        table: &ObservedTable,
        change: &CapacityChange,
    ) -> Result<(), (DateTime<Utc>, String)> {
        let mut spent: Vec<(DateTime<Utc>, String)> = Vec::new();
        if change.is_decrease() {
            if let Err(at) = decrease_allowed(self.now, table.decreases_today, table.last_decrease) {
                spent.push((
                    at,
                    format!(
                        "the table's ({} decreases today, last at {})",
                        table.decreases_today,
                        table.last_decrease.map(|t| t.to_rfc3339()).unwrap_or_default()
                    ),
                ));
            }
        }
        for part in change.indexes.iter().filter(|part| lowers(part.from, part.to)) {
            let Some(index) = table.global_indexes.iter().find(|i| i.name == part.index) else {
                continue;
            };
            if let Err(at) = decrease_allowed(self.now, index.decreases_today, index.last_decrease) {
                spent.push((
                    at,
                    format!(
                        "index {}'s ({} decreases today, last at {})",
                        index.name,
                        index.decreases_today,
                        index.last_decrease.map(|t| t.to_rfc3339()).unwrap_or_default()
                    ),
                ));
            }
        }
        match spent.iter().map(|(at, _)| *at).max() {
            None => Ok(()),
            Some(latest) => Err((
                latest,
                spent
                    .into_iter()
                    .map(|(_, which)| which)
                    .collect::<Vec<_>>()
                    .join(", "),
            )),
        }
    }

    /// The policy's indexes that a current or pre-built table lacks, to create in order, one
    /// per UpdateTable (DynamoDB's rule; upkeep defers the rest), and none while another index
    /// is building. Older tables keep the indexes they were made with.
    pub fn missing_indexes(&self, owned: &Owned) -> Vec<(TableSetting, String)> {
        let table = owned.table;
        if self.age(owned.slot) > 0 || self.unsettled_index(table).is_some() {
            return Vec::new();
        }
        let when = if self.age(owned.slot) == 0 {
            "the current"
        } else {
            "a pre-built"
        };
        // In the table's own billing mode: phase 0's throughput when it has that mode.
        let hot = self.policy.hot_phase();
        self.policy
            .indexes
            .iter()
            .filter(|want| !table.global_indexes.iter().any(|have| have.name == want.name))
            .map(|index| {
                let billing = match (table.billing, hot.billing_of_index(&index.name)) {
                    (Billing::Provisioned(_), want @ Billing::Provisioned(_)) => want,
                    (Billing::OnDemand(_), want @ Billing::OnDemand(_)) => want,
                    (Billing::Provisioned(have), Billing::OnDemand(_)) => Billing::Provisioned(have),
                    (Billing::OnDemand(_), Billing::Provisioned(_)) => Billing::OnDemand(Default::default()),
                };
                (
                    TableSetting::AddIndex(IndexSpec {
                        index: index.clone(),
                        billing,
                    }),
                    format!("the policy's index {} is missing on {when} table", index.name),
                )
            })
            .collect()
    }

    /// Notes on indexes that differ from the policy and are left as they are: indexes the
    /// policy does not name, and the policy's indexes missing on a table older than the
    /// current one (added only to current and pre-built tables) or local ones (set at creation).
    pub fn index_notes(&self, owned: &Owned) -> Vec<PlanItem> {
        let table = owned.table;
        let mut notes = Vec::new();
        for index in &table.global_indexes {
            if !self.is_policy_index(&index.name) {
                notes.push(format!(
                    "index {} is not in the policy: left as it is (its throughput changes only when a switch to provisioned needs it)",
                    index.name
                ));
            }
        }
        if self.age(owned.slot) > 0 {
            for index in &self.policy.indexes {
                if !table.global_indexes.iter().any(|i| i.name == index.name) {
                    notes.push(format!(
                        "the policy's index {} is not on this table: indexes the policy adds go to the current and pre-built tables only",
                        index.name
                    ));
                }
            }
        }
        for index in &self.policy.local_indexes {
            if !table.local_indexes.iter().any(|have| have.name == index.name) {
                notes.push(format!(
                    "the policy's local index {} is not on this table: DynamoDB creates local indexes with the table only",
                    index.name
                ));
            }
        }
        notes
            .into_iter()
            .map(|note| self.item(owned, Decision::Unchanged, note))
            .collect()
    }

    /// The indexes CreateTable makes, with phase 0's throughput.
    pub fn index_specs(&self) -> Vec<IndexSpec> {
        let hot = self.policy.hot_phase();
        self.policy
            .indexes
            .iter()
            .map(|index| IndexSpec {
                index: index.clone(),
                billing: hot.billing_of_index(&index.name),
            })
            .collect()
    }
}
