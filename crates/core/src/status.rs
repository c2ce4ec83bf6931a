//! `status`: each table of the policy with its age, phase, state, and what the next run of
//! each operation would do. Built from the planner, so it can never disagree with a real run.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::observed::{ArchiveState, ObservedTable};
use crate::period::Slot;
use crate::plan::{plan, Decision, Operation, PlanItem};
use crate::policy::Policy;
use crate::readiness::{assess_between_runs, Readiness};
use crate::settings::Billing;
use crate::tags::TAG_LAST_DEFERRAL;

/// What one operation would do with a table next time it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NextRun {
    pub decision: Decision,
    pub reason: String,
}

/// A change besides a table's main one (template upkeep, retention) that a run will make.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OtherChange {
    pub operation: Operation,
    pub decision: Decision,
    pub reason: String,
}

/// Where a table stands with its archive export, and when it is due.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArchiveStatus {
    #[serde(flatten)]
    pub state: ArchiveState,
    /// When the table reaches `archive_after` (resize_old's first run after exports it).
    pub due: DateTime<Utc>,
}

/// The next phase a table will move to, and from when (resize_old's first run after).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NextPhase {
    pub phase: usize,
    pub from: DateTime<Utc>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableStatusLine {
    pub table: String,
    pub period: Option<String>,
    #[serde(skip)]
    pub slot: Option<Slot>,
    pub age: Option<i64>,
    pub phase: Option<usize>,
    /// TableStatus, or `None` for a table create_new would make.
    pub status: Option<String>,
    pub billing: Option<Billing>,
    pub create_new: Option<NextRun>,
    pub resize_old: Option<NextRun>,
    /// `None` for foreign tables and tables already in the last phase.
    pub next_phase: Option<NextPhase>,
    /// Until when a past table keeps phase 0 for late writes (the policy's `grace`); `None`
    /// when there is no grace or it is over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace_until: Option<DateTime<Utc>>,
    /// Template upkeep and retention steps the next runs take, after the main change.
    pub other_changes: Vec<OtherChange>,
    /// `None` when archiving is off or the table is not ours.
    pub archive: Option<ArchiveStatus>,
    /// When the table reaches `delete_after`; `None` when deleting is off.
    pub delete_due: Option<DateTime<Utc>>,
    /// The last change DynamoDB refused at run time, with when (from the table's tag).
    pub last_deferral: Option<String>,
}

impl TableStatusLine {
    /// The change the next runs would make, if any, as "operation: reason".
    pub fn pending_change(&self) -> Option<(Operation, &NextRun)> {
        [
            (Operation::CreateNew, &self.create_new),
            (Operation::ResizeOld, &self.resize_old),
        ]
        .into_iter()
        .find_map(|(operation, next)| {
            next.as_ref()
                .filter(|n| n.decision.is_change() || matches!(n.decision, Decision::Deferred { .. }))
                .map(|n| (operation, n))
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StatusReport {
    pub at: DateTime<Utc>,
    pub prefix: String,
    pub current_period: String,
    pub tables: Vec<TableStatusLine>,
    /// Neighbours under the policy's name prefix, as `plan` reports them.
    pub warnings: Vec<String>,
    /// Whether the current and every pre-built table exist, are this policy's and serve
    /// (create_new's `next_table_ready`, from this observation: no waiting).
    pub health: Readiness,
}

pub fn status(policy: &Policy, now: DateTime<Utc>, observed: &[ObservedTable]) -> StatusReport {
    let create = plan(policy, now, observed, Operation::CreateNew);
    let resize = plan(policy, now, observed, Operation::ResizeOld);
    let mut lines: BTreeMap<String, TableStatusLine> = BTreeMap::new();
    for (operation, items) in [
        (Operation::CreateNew, create.items),
        (Operation::ResizeOld, resize.items),
    ] {
        for item in items {
            let line = lines
                .entry(item.table.clone())
                .or_insert_with(|| empty_line(&item));
            let main = match operation {
                Operation::CreateNew => &mut line.create_new,
                Operation::ResizeOld => &mut line.resize_old,
            };
            if main.is_none() {
                *main = Some(NextRun {
                    decision: item.decision,
                    reason: item.reason,
                });
            } else if !line
                .other_changes
                .iter()
                .any(|c| c.decision == item.decision && c.reason == item.reason)
            {
                line.other_changes.push(OtherChange {
                    operation,
                    decision: item.decision,
                    reason: item.reason,
                });
            }
        }
    }
    let mut tables: Vec<TableStatusLine> = lines.into_values().collect();
    for line in &mut tables {
        let table = observed.iter().find(|t| t.name == line.table);
        line.last_deferral = table
            .and_then(|t| t.tags.as_ref())
            .and_then(|tags| tags.get(TAG_LAST_DEFERRAL))
            .cloned();
        // Only tables the planner found ours have a period.
        if let Some(slot) = line.slot {
            let calendar = policy.calendar();
            line.grace_until = policy
                .grace_end(slot)
                .filter(|until| now < *until && line.age.is_some_and(|age| age > 0));
            line.next_phase = next_phase(policy, slot, line.phase, now);
            line.delete_due = policy
                .retention
                .as_ref()
                .and_then(|r| r.delete_after)
                .map(|after| calendar.start_after(slot, after));
            line.archive = policy.archive().map(|archive| ArchiveStatus {
                state: table.map_or(ArchiveState::NotStarted, ObservedTable::archive_state),
                due: calendar.start_after(slot, archive.after),
            });
        }
    }
    StatusReport {
        at: now,
        prefix: policy.prefix.clone(),
        current_period: create.current_period,
        tables,
        warnings: create.warnings,
        health: assess_between_runs(policy, now, observed),
    }
}

/// The table's next phase and from when ([`Policy::next_phase_change`]): when its age reaches
/// a later phase's `min_age`, or its write grace ends, whichever changes the phase first (a
/// grace longer than a period may end in a phase past 1). `None` for a table without a phase
/// (not ours) and for one that stays where it is.
fn next_phase(policy: &Policy, slot: Slot, phase: Option<usize>, now: DateTime<Utc>) -> Option<NextPhase> {
    phase?;
    let (phase, from) = policy.next_phase_change(slot, now)?;
    Some(NextPhase { phase, from })
}

fn empty_line(item: &PlanItem) -> TableStatusLine {
    TableStatusLine {
        table: item.table.clone(),
        period: item.period.clone(),
        slot: item.slot,
        age: item.age,
        phase: item.phase,
        status: item.status.clone(),
        billing: item.billing,
        create_new: None,
        resize_old: None,
        next_phase: None,
        grace_until: None,
        other_changes: Vec::new(),
        archive: None,
        delete_due: None,
        last_deferral: None,
    }
}
