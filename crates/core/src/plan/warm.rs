//! Warm throughput in the planner: the raise of a table of ours, and of the policy's global
//! indexes on it, that DescribeTable shows below its phase's `warm`; never a lower value
//! (DynamoDB refuses one), and why a raise waits. A global index the verdict does not find the
//! policy's is never touched. Creation carries the phase's warm throughput in the TableSpec
//! ([`Context::table_spec`]); this module is about tables that exist.

use crate::plan::context::{index_state, Context, Owned};
use crate::plan::decision::{Decision, PlanItem};
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
        let parts: Vec<WarmPart> = owned
            .verdict
            .warm_parts(owned.table)
            .into_iter()
            .filter(|(_, have)| !have.units.covers(want))
            .map(|(index, have)| WarmPart {
                index: index.map(str::to_string),
                from: have.units,
                to: have.units.raised_to(want),
            })
            .collect();
        (!parts.is_empty()).then_some(WarmRaise { parts })
    }

    /// The first part of ours ("the table", "index NAME") whose warm throughput is not ACTIVE.
    fn warm_updating(&self, owned: &Owned) -> Option<String> {
        let parts = owned.verdict.warm_parts(owned.table);
        let (index, _) = parts.into_iter().find(|(_, warm)| !warm.is_active())?;
        Some(index.map_or_else(|| "the table".into(), |name| format!("index {name}")))
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
        let kept: Vec<String> = owned
            .verdict
            .warm_parts(owned.table)
            .into_iter()
            .filter(|(_, have)| !reference.covers(have.units))
            .map(|(index, have)| match index {
                None => format!("the table's {}", have.units),
                Some(name) => format!("index {name}'s {}", have.units),
            })
            .collect();
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
