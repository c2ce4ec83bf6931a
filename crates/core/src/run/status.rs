//! `status`: each table of the policy with its age, phase, state, and what the next run of
//! each operation would do, with the verdict it decides on. Each operation is planned on what
//! its own run would read (`run_view`), by the same planner, so status says exactly what the
//! run will do; what status alone sees (its tags read everything) is said in warnings.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::plan::operator_warnings;
use crate::plan::verdict::{ConsumerState, Judge, NotOurs, Owner, StreamState, Verdict};
use crate::plan::{plan_run, Decision, Operation, PlanItem, TableFacts};
use crate::policy::period::Slot;
use crate::policy::tags::TAG_LAST_DEFERRAL;
use crate::policy::warm::WarmThroughput;
use crate::policy::Policy;
use crate::run::control::ControlPlaneError;
use crate::run::observe::{run_view, Observation};
use crate::run::readiness::{assess_between_runs, Readiness};
use crate::run::report::UnreadEvidence;
use crate::table::{ArchiveState, ObservedTable, ObservedWarm};

/// What one operation would do with a table next time it runs, and the verdict it decides on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NextRun {
    /// What the operation would do with the table.
    pub decision: Decision,
    /// Why, in words for the operator.
    pub reason: String,
    /// The ownership verdict the decision rests on; `None` for a table that does not exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// A change besides a table's main one (template upkeep, retention) that a run will make.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OtherChange {
    /// The operation that makes the change.
    pub operation: Operation,
    /// The change.
    pub decision: Decision,
    /// Why, in words for the operator.
    pub reason: String,
}

/// Where a table stands with its archive export, and when it is due.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArchiveStatus {
    /// Whether the export is done, running, failed or not started.
    #[serde(flatten)]
    pub state: ArchiveState,
    /// When the table reaches `archive_after` (resize_old's first run after exports it).
    pub due: DateTime<Utc>,
}

/// A table's warm throughput: what its phase asks for, and what DescribeTable reports for the
/// table and each of the policy's indexes on it, with their status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WarmStatus {
    /// What the table's phase asks for; `None`: nothing (DynamoDB's own values stay).
    pub wanted: Option<WarmThroughput>,
    /// The table's; `None`: the endpoint does not report warm throughput.
    pub table: Option<ObservedWarm>,
    /// The policy's indexes on the table, by name (a foreign index is never raised or shown).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub indexes: BTreeMap<String, ObservedWarm>,
}

impl WarmStatus {
    /// Whether every part reported has at least what the phase asks for.
    pub fn covers_wanted(&self) -> bool {
        let Some(wanted) = self.wanted else {
            return true;
        };
        self.table
            .iter()
            .chain(self.indexes.values())
            .all(|have| have.units.covers(wanted))
    }
}

/// The next phase a table will move to, and from when (resize_old's first run after).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NextPhase {
    /// Index into the policy's phases.
    pub phase: usize,
    /// When the table enters it.
    pub from: DateTime<Utc>,
}

/// Where one table stands, and what the next runs will do with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TableStatusLine {
    /// The table, where it stands.
    #[serde(flatten)]
    pub facts: TableFacts,
    /// What the next create_new run would do with the table.
    pub create_new: Option<NextRun>,
    /// What the next resize_old run would do with the table.
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
    /// When we sealed it against item writes, as the family's ledger records it; `None` when
    /// it is not sealed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sealed: Option<DateTime<Utc>>,
    /// The last change DynamoDB refused at run time, with when (from the table's tag).
    pub last_deferral: Option<String>,
    /// The warm throughput wanted and reported, for a table of the policy's when its phase asks
    /// for some or the endpoint reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmStatus>,
    /// For a table of the policy's when the policy names a Kinesis stream: the status of its
    /// destination to it (`ACTIVE`, `ENABLING`, `ENABLE_FAILED: why`, `NONE`, `UNKNOWN`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// For a table of the policy's when the policy names a consumer function: the state of its
    /// mapping to it (`Enabled`, `Creating`, `Disabled: why`, `NONE`, `UNKNOWN`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumer: Option<String>,
}

impl TableStatusLine {
    /// The change the next runs would make, or the failure one would end with (blocked), if
    /// any, as "operation: reason".
    pub fn pending_change(&self) -> Option<(Operation, &NextRun)> {
        [
            (Operation::CreateNew, &self.create_new),
            (Operation::ResizeOld, &self.resize_old),
        ]
        .into_iter()
        .find_map(|(operation, next)| {
            next.as_ref()
                .filter(|n| {
                    n.decision.is_change()
                        || matches!(n.decision, Decision::Deferred { .. } | Decision::Blocked)
                })
                .map(|n| (operation, n))
        })
    }

    /// Whether a run would fail on the table: a decision it cannot carry out without an
    /// operator (a name taken by a table that is not ours, a ledger it cannot rest on, a
    /// deleted period), which fails that run.
    pub fn blocked(&self) -> bool {
        self.create_new
            .iter()
            .chain(&self.resize_old)
            .map(|next| &next.decision)
            .chain(self.other_changes.iter().map(|change| &change.decision))
            .any(|decision| *decision == Decision::Blocked)
    }
}

/// Where every table of the policy stands, as `status` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StatusReport {
    /// When the status was taken.
    pub at: DateTime<Utc>,
    /// The policy's table-name prefix.
    pub prefix: String,
    /// The label of the period `at` falls in.
    pub current_period: String,
    /// One line per table.
    pub tables: Vec<TableStatusLine>,
    /// Neighbours under the policy's name prefix, as `plan` reports them.
    pub warnings: Vec<String>,
    /// Whether the current and every pre-built table exist, are this policy's and serve
    /// (create_new's `next_table_ready`, by the same derivation on what a create_new run reads
    /// of this observation: no waiting).
    pub health: Readiness,
    /// The evidence reads that failed, once per read: each fails the runs that need it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<UnreadEvidence>,
}

impl StatusReport {
    /// Whether the next runs would go through and the tables writers need are ready: no line is
    /// blocked and no evidence read failed (a run would fail on either) and the health line is ready (what create_new's
    /// `NextTableReady` says). `status` exits 1 otherwise, as the run would.
    pub fn succeeded(&self) -> bool {
        self.health.ready && self.unread.is_empty() && !self.tables.iter().any(TableStatusLine::blocked)
    }
}

/// The status of every table `observation` holds, which holds everything about every table
/// under the prefix (an observation of [`crate::Scope::Full`]) and the family's ledger.
pub fn status(policy: &Policy, now: DateTime<Utc>, observation: &Observation) -> StatusReport {
    let observed = &observation.tables;
    let run_plan = |operation| {
        let view = run_view(policy, operation, now, observation);
        let plan = plan_run(policy, now, &view.seen(), operation);
        (plan, view)
    };
    let (create, create_view) = run_plan(Operation::CreateNew);
    let (resize, resize_view) = run_plan(Operation::ResizeOld);
    // The reads the runs would fail on: each run's own (status reads every table's evidence).
    // (UnreadEvidence says each call once, naming each table once.)
    let unread: Vec<ControlPlaneError> = create_view
        .unread
        .iter()
        .chain(&resize_view.unread)
        .map(|failed| failed.error.clone())
        .collect();
    let create_view = create_view.tables;
    // The health create_new's own readiness would find, on what that run reads.
    let health = assess_between_runs(policy, now, &create_view, &observation.book);
    let warnings = operator_warnings(policy, now, &observation.seen(), &[&create, &resize]);
    let current_period = create.current_period.clone();
    let mut lines: BTreeMap<String, TableStatusLine> = BTreeMap::new();
    for (operation, items) in [
        (Operation::CreateNew, create.items),
        (Operation::ResizeOld, resize.items),
    ] {
        for item in items {
            let line = lines
                .entry(item.facts.table.clone())
                .or_insert_with(|| empty_line(&item));
            // A run that only lists a name says nothing of its period; the one that owns it does.
            if line.facts.slot.is_none() && item.facts.slot.is_some() {
                line.facts = item.facts.clone();
            }
            let main = match operation {
                Operation::CreateNew => &mut line.create_new,
                Operation::ResizeOld => &mut line.resize_old,
            };
            if main.is_none() {
                *main = Some(NextRun {
                    decision: item.decision,
                    reason: item.reason,
                    verdict: item.verdict,
                });
            } else if !line
                .other_changes
                .iter()
                .any(|c| c.operation == operation && c.decision == item.decision && c.reason == item.reason)
            {
                line.other_changes.push(OtherChange {
                    operation,
                    decision: item.decision,
                    reason: item.reason,
                });
            }
        }
    }
    let judge = Judge::new(policy, &observation.book);
    // A table appears once, under the family whose it is: another family's (its tags, which
    // status reads, say so) is named in that family's warning, not shown as a row of ours,
    // unless a run of ours would fail on it (it holds a name of ours).
    let theirs = |line: &TableStatusLine| {
        let other_family = observed
            .iter()
            .find(|t| t.name == line.facts.table)
            .and_then(|t| judge.verdict(t))
            .is_some_and(|v| {
                matches!(
                    v.owner,
                    Owner::NotOurs {
                        why: NotOurs::OtherFamily { .. }
                    }
                )
            });
        other_family && !line.blocked()
    };
    let mut tables: Vec<TableStatusLine> = lines.into_values().filter(|line| !theirs(line)).collect();
    for line in &mut tables {
        let table = observed.iter().find(|t| t.name == line.facts.table);
        // A run that only lists a name (create_new lists every table but its own, resize_old
        // every name that is no period label) says nothing of its status: status read it.
        if let (None, Some(table)) = (&line.facts.status, table) {
            line.facts.status = Some(table.status.as_str().to_string());
            line.facts.billing = Some(table.billing);
        }
        line.warm = line
            .facts
            .phase
            .zip(table)
            .and_then(|(phase, table)| warm_status(policy, &judge, phase, table));
        let ours = table.and_then(|t| judge.verdict(t)).filter(|v| v.is_ours());
        line.stream = ours.as_ref().and_then(|v| stream_cell(v.stream.as_ref()?));
        line.consumer = ours.as_ref().and_then(|v| consumer_cell(v.consumer.as_ref()?));
        line.sealed = observation
            .book
            .table(&line.facts.table)
            .and_then(|entry| entry.record.seal.as_ref())
            .map(|seal| seal.at);
        line.last_deferral = table
            .and_then(|t| t.tags.as_ref())
            .and_then(|tags| tags.get(TAG_LAST_DEFERRAL))
            .cloned();
        // Only tables the planner found ours have a period.
        if let Some(slot) = line.facts.slot {
            let calendar = policy.calendar();
            line.grace_until = policy
                .grace_end(slot)
                .filter(|until| now < *until && line.facts.age.is_some_and(|age| age > 0));
            line.next_phase = next_phase(policy, slot, line.facts.phase, now);
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
        current_period,
        tables,
        warnings,
        health,
        unread: UnreadEvidence::of(&unread),
    }
}

/// What `status` shows of a table's warm throughput in phase `phase`: `None` for a table that is
/// not ours, or when the phase asks for none and the endpoint reports none.
fn warm_status(policy: &Policy, judge: &Judge, phase: usize, table: &ObservedTable) -> Option<WarmStatus> {
    let verdict = judge.verdict(table).filter(Verdict::is_ours)?;
    let wanted = policy.phases.get(phase).and_then(|p| p.warm);
    let indexes: BTreeMap<String, ObservedWarm> = verdict
        .warm_parts(table)
        .into_iter()
        .filter_map(|(index, warm)| Some((index?.to_string(), warm.clone())))
        .collect();
    (wanted.is_some() || table.warm.is_some()).then(|| WarmStatus {
        wanted,
        table: table.warm.clone(),
        indexes,
    })
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
        facts: item.facts.clone(),
        create_new: None,
        resize_old: None,
        next_phase: None,
        grace_until: None,
        other_changes: Vec::new(),
        archive: None,
        delete_due: None,
        sealed: None,
        last_deferral: None,
        warm: None,
        stream: None,
        consumer: None,
    }
}

/// What `status` shows of a table's destination to the policy's stream; `None` where the
/// endpoint has no destinations.
fn stream_cell(state: &StreamState) -> Option<String> {
    Some(match state {
        StreamState::Unsupported => return None,
        StreamState::NotRead => "UNKNOWN".into(),
        StreamState::Absent => "NONE".into(),
        StreamState::Ours {
            status,
            description: Some(why),
        } if !status.streams() => format!("{}: {why}", status.as_str()),
        StreamState::Ours { status, .. } => status.as_str().to_string(),
    })
}

/// What `status` shows of a table's mapping to the policy's consumer function; `None` where the
/// endpoint has no Lambda.
fn consumer_cell(state: &ConsumerState) -> Option<String> {
    Some(match state {
        ConsumerState::Unsupported => return None,
        ConsumerState::NotRead => "UNKNOWN".into(),
        ConsumerState::Absent => "NONE".into(),
        ConsumerState::Ours {
            state,
            reason: Some(why),
            ..
        } if !state.reads() => format!("{}: {why}", state.as_str()),
        ConsumerState::Ours { state, .. } => state.as_str().to_string(),
        ConsumerState::Repointed {
            uuid,
            function_arn,
            state,
        } => format!(
            "REPOINTED: {}",
            crate::run::readiness::repointed_detail(uuid, function_arn, state)
        ),
    })
}
