//! Warm throughput in the planner: the raise of a table of ours, and of the policy's global
//! indexes on it, that DescribeTable shows below its phase's `warm`; never a lower value
//! (DynamoDB refuses one), and why a raise waits. A global index the verdict does not find the
//! policy's is never touched. Creation carries the phase's warm throughput in the TableSpec
//! ([`Context::table_spec`]); this module is about tables that exist.

use super::{index_state, Context, Decision, Owned, PlanItem};
use crate::plan::deferral::DeferralCause;
use crate::policy::warm::WarmThroughput;
use crate::table::changes::{SettingChange, TableSetting, WarmPart, WarmRaise};
use crate::table::TableStatus;

impl Context<'_> {
    /// The raise a table needs for phase `phase`, as its own UpdateTable item after the table's
    /// main one: `None` when the phase asks for no warm throughput, when every part of ours is
    /// at or above it, or when DescribeTable does not report it (dynalite, DynamoDB Local: a raise
    /// could never be seen to succeed there). A raise waits while the table is not ACTIVE,
    /// while an index is being built, while a raise is still UPDATING, and when the run already
    /// makes another UpdateTable on the table (`table_update_planned`): DynamoDB takes one table
    /// update at a time.
    pub(super) fn warm_item(
        &self,
        owned: &Owned,
        phase: usize,
        table_update_planned: bool,
    ) -> Option<PlanItem> {
        let want = self.policy.phases[phase].warm?;
        let table = owned.table;
        let raise = self.warm_raise(owned, want)?;
        let what = format!("warm throughput below phase {phase}'s ({want})");
        let deferred = |cause, why: String| {
            (
                Decision::Deferred {
                    retry_after: None,
                    cause,
                },
                format!("{what}, but {why}; a later run raises it"),
            )
        };
        let (decision, reason) = if table.status != TableStatus::Active {
            deferred(
                DeferralCause::TableBusy,
                format!(
                    "the table is {}: DynamoDB updates only ACTIVE tables",
                    table.status.as_str()
                ),
            )
        } else if let Some(index) = self.unsettled_index(table) {
            deferred(
                DeferralCause::IndexBusy,
                format!("its index {} is {}", index.name, index_state(index)),
            )
        } else if let Some(part) = self.warm_updating(owned) {
            deferred(
                DeferralCause::WarmUpdating,
                format!("the warm throughput of {part} is still UPDATING"),
            )
        } else if table_update_planned {
            deferred(
                DeferralCause::OneUpdateAtATime,
                "the run updates the table already (DynamoDB applies one table update at a time)".into(),
            )
        } else {
            let parts: Vec<String> = raise.parts.iter().map(ToString::to_string).collect();
            (
                Decision::Configure(SettingChange {
                    name: table.name.clone(),
                    setting: TableSetting::Warm(raise),
                }),
                format!("{what}: raise {} (pre-warming; never lowered)", parts.join(", ")),
            )
        };
        Some(self.item(owned, decision, reason))
    }

    /// The parts of ours below `want` on some dimension, each raised to at least `want`.
    fn warm_raise(&self, owned: &Owned, want: WarmThroughput) -> Option<WarmRaise> {
        let table = owned.table;
        let mut parts = Vec::new();
        let mut part = |index: Option<&str>, have: WarmThroughput| {
            if !have.covers(want) {
                parts.push(WarmPart {
                    index: index.map(str::to_string),
                    from: have,
                    to: have.raised_to(want),
                });
            }
        };
        if let Some(have) = &table.warm {
            part(None, have.units);
        }
        for index in &table.global_indexes {
            if let Some(have) = index
                .warm
                .as_ref()
                .filter(|_| owned.verdict.index_is_ours(&index.name))
            {
                part(Some(&index.name), have.units);
            }
        }
        (!parts.is_empty()).then_some(WarmRaise { parts })
    }

    /// The first part of ours ("the table", "index NAME") whose warm throughput is not ACTIVE.
    fn warm_updating(&self, owned: &Owned) -> Option<String> {
        let table = owned.table;
        if table.warm.as_ref().is_some_and(|w| !w.is_active()) {
            return Some("the table".into());
        }
        table
            .global_indexes
            .iter()
            .filter(|index| owned.verdict.index_is_ours(&index.name))
            .find(|index| index.warm.as_ref().is_some_and(|w| !w.is_active()))
            .map(|index| format!("index {}", index.name))
    }

    /// "; unchanged: warm throughput cannot be lowered (...)" when a part of ours has more warm
    /// throughput than phase `phase` asks for (or, asking none, more than DynamoDB's starting
    /// values for its billing): said where the table's phase changes, once, and only when the
    /// policy uses warm throughput at all (else every provisioned decrease would say it).
    pub(super) fn warm_kept_note(&self, owned: &Owned, phase: usize) -> String {
        if !self.policy.phases.iter().any(|p| p.warm.is_some()) {
            return String::new();
        }
        let want = &self.policy.phases[phase];
        let reference = want
            .warm
            .unwrap_or_else(|| WarmThroughput::floor_for(want.billing));
        let table = owned.table;
        let above = |have: WarmThroughput| have.read > reference.read || have.write > reference.write;
        let mut kept: Vec<String> = Vec::new();
        if let Some(have) = table.warm.as_ref().filter(|w| above(w.units)) {
            kept.push(format!("the table's {}", have.units));
        }
        for index in &table.global_indexes {
            if let Some(have) = index
                .warm
                .as_ref()
                .filter(|w| owned.verdict.index_is_ours(&index.name) && above(w.units))
            {
                kept.push(format!("index {}'s {}", index.name, have.units));
            }
        }
        if kept.is_empty() {
            String::new()
        } else {
            format!(
                "; unchanged: warm throughput cannot be lowered ({} stay)",
                kept.join(", ")
            )
        }
    }
}
