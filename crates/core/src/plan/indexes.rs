//! Global secondary indexes in the planner: their throughput as part of a table's phase
//! change (each index's own decrease budget, every index's throughput with a switch to
//! provisioned), indexes that hold a change back while they build, the policy's new indexes
//! added to current and pre-built tables, and indexes the policy does not name, left alone.

use chrono::{DateTime, Utc};

use crate::plan::context::{Context, Owned, ThroughputChange};
use crate::plan::decision::{Decision, PlanItem};
use crate::plan::verdict::{ForeignPart, OursToChange};
use crate::policy::limits::decrease_allowed;
use crate::policy::scaling::resource_id;
use crate::policy::settings::{Billing, Capacity};
use crate::policy::Phase;
use crate::table::changes::{lowers, CapacityChange, IndexCapacityChange, IndexSpec, TableSetting};
use crate::table::{ObservedIndex, ObservedTable};

fn is_on_demand(billing: Billing) -> bool {
    matches!(billing, Billing::OnDemand(_))
}

impl Context<'_> {
    /// The UpdateTable that brings the table and its indexes to `want`'s throughput, touching
    /// only what the verdict says is ours: each capacity dimension (read, write) of the table
    /// unless a scalable target that is not only ours holds that dimension (the other one still
    /// follows the phase), and each of the policy's indexes likewise. `Err` names why a billing
    /// mode switch is refused: it sets the throughput of the table and of every index, so it is
    /// made only when nothing on the table is foreign.
    pub(crate) fn phase_change(&self, owned: &Owned, want: &Phase) -> Result<ThroughputChange, String> {
        let table = owned.table;
        let verdict = &owned.verdict;
        let switch = is_on_demand(table.billing) != is_on_demand(want.billing);
        if switch && !verdict.whole_table_is_ours() {
            let parts: Vec<String> = verdict.foreign.iter().map(ToString::to_string).collect();
            return Err(format!(
                "a switch to {} sets the throughput of the table and every index, and {} not this policy's: no switch until that changes",
                want.billing,
                parts.join(", ")
            ));
        }
        let mut left_out = Vec::new();
        let ours = verdict.table_capacity(&table.name);
        let to = ours.apply(table.billing, want.billing);
        if !ours.all() {
            left_out.extend(self.claims_note(owned, None, ours));
        }
        let mut indexes = Vec::new();
        for index in &table.global_indexes {
            let ours = verdict.index_capacity(&table.name, &index.name);
            if !ours.all() {
                left_out.extend(self.claims_note(owned, Some(&index.name), ours));
            }
            if ours.none() {
                continue;
            }
            let to = ours.apply(index.billing, want.billing_of_index(&index.name));
            let needed = match (index.billing, to) {
                _ if switch => true,
                // A switch to on-demand takes the indexes along; only maximums need saying.
                (Billing::Provisioned(_), Billing::OnDemand(limits)) => limits != Default::default(),
                (from, to) => from != to,
            };
            if needed {
                indexes.push(IndexCapacityChange {
                    index: index.name.clone(),
                    from: index.billing,
                    to,
                });
            }
        }
        Ok(ThroughputChange {
            change: self.change_if_any(table, to, indexes),
            left_out,
        })
    }

    /// create_new's raise of a pre-built table: the table and each of the policy's indexes to
    /// at least phase 0's provisioned capacity, never lower, and only the parts that are ours.
    pub(crate) fn raise_to_hot(&self, owned: &Owned, have: Capacity, hot: &Phase) -> ThroughputChange {
        let table = owned.table;
        let verdict = &owned.verdict;
        let at_least = |have: Capacity, want: Billing| match want {
            Billing::Provisioned(want) => Capacity {
                read: have.read.max(want.read),
                write: have.write.max(want.write),
            },
            Billing::OnDemand(_) => have,
        };
        let mut left_out = Vec::new();
        let ours = verdict.table_capacity(&table.name);
        let raised = at_least(have, hot.billing);
        let to = match ours.apply(Billing::Provisioned(have), Billing::Provisioned(raised)) {
            Billing::Provisioned(to) => to,
            Billing::OnDemand(_) => unreachable!("both sides are provisioned"),
        };
        if !ours.all() {
            left_out.extend(self.claims_note(owned, None, ours));
        }
        let mut indexes = Vec::new();
        for index in &table.global_indexes {
            let ours = verdict.index_capacity(&table.name, &index.name);
            if !ours.all() {
                left_out.extend(self.claims_note(owned, Some(&index.name), ours));
            }
            let Billing::Provisioned(have) = index.billing else {
                continue;
            };
            let raised = at_least(have, hot.billing_of_index(&index.name));
            let want = match ours.apply(index.billing, Billing::Provisioned(raised)) {
                Billing::Provisioned(want) => want,
                Billing::OnDemand(_) => unreachable!("both sides are provisioned"),
            };
            if want != have {
                indexes.push(IndexCapacityChange {
                    index: index.name.clone(),
                    from: index.billing,
                    to: Billing::Provisioned(want),
                });
            }
        }
        ThroughputChange {
            change: self.change_if_any(table, Billing::Provisioned(to), indexes),
            left_out,
        }
    }

    /// What holds the throughput of the table (`index` None) or of one index, for reasons: each
    /// dimension that is not `ours`, with the targets that hold it ("its write capacity, held by
    /// scalable target table/t write (policies: theirs)"), and a foreign index.
    fn claims_note(&self, owned: &Owned, index: Option<&str>, ours: OursToChange) -> Vec<String> {
        let verdict = &owned.verdict;
        let resource = resource_id(&owned.table.name, index);
        let whose = match index {
            None => "its".to_string(),
            Some(name) => format!("index {name}'s"),
        };
        let mut notes: Vec<String> = [(true, ours.read), (false, ours.write)]
            .into_iter()
            .filter(|(_, ours)| !ours)
            .filter_map(|(read, _)| {
                let claims = verdict.claims_on(&resource, read);
                (!claims.is_empty()).then(|| {
                    let held: Vec<String> = claims.iter().map(ToString::to_string).collect();
                    format!(
                        "{whose} {} capacity, held by {}",
                        if read { "read" } else { "write" },
                        held.join(" and ")
                    )
                })
            })
            .collect();
        if let Some(index) = index.filter(|name| !verdict.index_is_ours(name)) {
            notes.extend(
                verdict
                    .foreign
                    .iter()
                    .filter(|part| matches!(part, ForeignPart::Index { name, .. } if name == index))
                    .map(ToString::to_string),
            );
        }
        notes
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
    pub(crate) fn unsettled_index<'t>(&self, table: &'t ObservedTable) -> Option<&'t ObservedIndex> {
        table.global_indexes.iter().find(|index| !index.is_settled())
    }

    /// When the change's decreases are all within their budgets: `Err((when, which))` names the
    /// table or indexes whose budget is spent and the earliest time all are allowed again.
    pub(crate) fn decrease_budget(
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
    pub(crate) fn missing_indexes(&self, owned: &Owned) -> Vec<(TableSetting, String)> {
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

    /// Notes on indexes that differ from the policy and are left as they are: indexes that
    /// are not the policy's (the verdict's foreign parts), and the policy's indexes missing on a
    /// table older than the current one (added only to current and pre-built tables) or local
    /// ones (set at creation).
    pub(crate) fn index_notes(&self, owned: &Owned) -> Vec<PlanItem> {
        let table = owned.table;
        let mut notes = Vec::new();
        for part in &owned.verdict.foreign {
            if let ForeignPart::Index { .. } = part {
                notes.push(format!(
                    "{part}: not this policy's, left as it is (no throughput change or billing switch touches it)"
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
    pub(crate) fn index_specs(&self) -> Vec<IndexSpec> {
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
