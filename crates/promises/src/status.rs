//! Promise 5: `status` predicts each run exactly.

use std::collections::{BTreeMap, BTreeSet};

use ddb_rollover::Operation;
use ddb_rollover::Outcome;
use ddb_rollover::UnreadEvidence;

use crate::facts::RunFacts;
use crate::tally::count;

/// Promise 5: for every table, the changes `status` predicted for the operation (its next run's
/// decision and that operation's other changes) are the changes the run planned, on the same
/// verdict; a change the role refused was warned of.
pub fn status_predicts_run(f: &RunFacts<'_>) -> Vec<String> {
    let mut predicted: BTreeMap<&str, Vec<&'static str>> = BTreeMap::new();
    let mut reasons: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for line in &f.status.tables {
        let main = match f.operation {
            Operation::CreateNew => &line.create_new,
            Operation::ResizeOld => &line.resize_old,
        };
        let entry = predicted.entry(line.facts.table.as_str()).or_default();
        let why = reasons.entry(line.facts.table.as_str()).or_default();
        if let Some(next) = main {
            why.push(format!("{}: {}", next.decision.action(), next.reason));
            if next.decision.is_change() {
                entry.push(next.decision.action());
            }
        }
        for other in line.other_changes.iter().filter(|o| o.operation == f.operation) {
            why.push(format!("{}: {}", other.decision.action(), other.reason));
            if other.decision.is_change() {
                entry.push(other.decision.action());
            }
        }
    }
    let mut done: BTreeMap<&str, Vec<&'static str>> = BTreeMap::new();
    // Changes deferred because another run holds the operation's lease: a run's condition, not a
    // table's, which status (reading no lease) predicts as the changes themselves.
    let mut leased: BTreeMap<&str, usize> = BTreeMap::new();
    for line in &f.report.tables {
        let entry = done.entry(line.item.facts.table.as_str()).or_default();
        if line.item.decision.is_change() {
            entry.push(line.item.decision.action());
        }
        if line.deferral == Some(ddb_rollover::DeferralCause::LeaseHeld) {
            *leased.entry(line.item.facts.table.as_str()).or_default() += 1;
        }
    }
    let names: BTreeSet<&str> = predicted.keys().chain(done.keys()).copied().collect();
    let mut out = Vec::new();
    // A change the role refused (a name of our shape that another family's tag claims, which
    // the run decided on without reading its tags): status, reading everything, warned of it.
    for line in f.report.tables.iter().filter(|l| {
        l.outcome == Outcome::Failed
            && l.error
                .as_deref()
                .is_some_and(|e| e.contains("AccessDeniedException"))
    }) {
        let table = line.item.facts.table.as_str();
        if !f.status.warnings.iter().any(|w| w.contains(table)) {
            out.push(format!(
                "{}: {table}: the run's {} was refused by the role ({}), and status did not warn of it; its warnings: {:?}",
                f.step,
                line.item.decision.action(),
                line.error.as_deref().unwrap_or_default(),
                f.status.warnings
            ));
        }
    }
    for line in &f.report.tables {
        // An evidence read that failed: the run's line for the read (no verdict: it is no
        // table's decision), which status names alike.
        if line.outcome == Outcome::Failed && line.item.reason.ends_with(UnreadEvidence::CONSEQUENCE) {
            let named = f.status.unread.iter().any(|read| {
                line.item
                    .reason
                    .starts_with(&format!("{} failed for", read.operation))
                    && read.tables.contains(&line.item.facts.table)
            });
            if !named {
                out.push(format!(
                    "{}: the run failed on a read ({}), which status did not name; it named {:?}",
                    f.step, line.item.reason, f.status.unread
                ));
            }
            continue;
        }
        let Some(status_line) = f
            .status
            .tables
            .iter()
            .find(|l| l.facts.table == line.item.facts.table)
        else {
            continue;
        };
        let main = match f.operation {
            Operation::CreateNew => &status_line.create_new,
            Operation::ResizeOld => &status_line.resize_old,
        };
        let predicted = main.as_ref().and_then(|n| n.verdict.as_ref());
        if predicted != line.item.verdict.as_ref() {
            out.push(format!(
                "{}: {}: status's {} verdict was {:?}, the run's line ({}) decided on {:?}",
                f.step,
                line.item.facts.table,
                f.operation,
                predicted,
                line.item.decision.action(),
                line.item.verdict
            ));
        }
    }
    for name in names {
        let mut want = predicted.get(name).cloned().unwrap_or_default();
        let mut have = done.get(name).cloned().unwrap_or_default();
        want.sort_unstable();
        have.sort_unstable();
        if let Some(&deferred) = leased.get(name) {
            count("promise 5: changes deferred for a held lease");
            if have.is_empty() && deferred == want.len() {
                continue;
            }
        }
        if want != have {
            out.push(format!(
                "{}: {name}: status predicted the changes {want:?} for {}, the run planned {have:?}; status said {:?}; the run's lines: {}",
                f.step,
                f.operation,
                reasons.get(name).cloned().unwrap_or_default(),
                f.lines_of(name)
            ));
        }
    }
    out
}
