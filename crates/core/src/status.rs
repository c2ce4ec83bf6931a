//! `status`: each table of the policy with its age, phase, state, and what the next run of
//! each operation would do. Built from the planner, so it can never disagree with a real run.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::observed::{Billing, ObservedTable};
use crate::plan::{plan, Decision, Operation, PlanItem};
use crate::policy::Policy;

/// What one operation would do with a table next time it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NextRun {
    pub decision: Decision,
    pub reason: String,
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
    pub age: Option<i64>,
    pub phase: Option<usize>,
    /// TableStatus, or `None` for a table create_new would make.
    pub status: Option<String>,
    pub billing: Option<Billing>,
    pub create_new: Option<NextRun>,
    pub resize_old: Option<NextRun>,
    /// `None` for foreign tables and tables already in the last phase.
    pub next_phase: Option<NextPhase>,
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
            let next = Some(NextRun {
                decision: item.decision,
                reason: item.reason,
            });
            match operation {
                Operation::CreateNew => line.create_new = next,
                Operation::ResizeOld => line.resize_old = next,
            }
        }
    }
    let mut tables: Vec<TableStatusLine> = lines.into_values().collect();
    for line in &mut tables {
        line.next_phase = next_phase(policy, line);
    }
    StatusReport {
        at: now,
        prefix: policy.prefix.clone(),
        current_period: create.current_period,
        tables,
    }
}

/// When the table's age reaches the next phase's `min_age`: the start of the period that many
/// periods after its own.
fn next_phase(policy: &Policy, line: &TableStatusLine) -> Option<NextPhase> {
    let calendar = policy.calendar();
    let slot = calendar.parse(line.period.as_deref()?).ok()?;
    let phase = line.phase? + 1;
    let min_age = policy.phases.get(phase)?.min_age;
    let mut due = slot;
    for _ in 0..min_age {
        due = calendar.next(due);
    }
    Some(NextPhase {
        phase,
        from: due.start(),
    })
}

fn empty_line(item: &PlanItem) -> TableStatusLine {
    TableStatusLine {
        table: item.table.clone(),
        period: item.period.clone(),
        age: item.age,
        phase: item.phase,
        status: item.status.clone(),
        billing: item.billing,
        create_new: None,
        resize_old: None,
        next_phase: None,
    }
}
