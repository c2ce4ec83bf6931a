//! Human-readable tables for the terminal; `--output json` prints the core's reports as-is.

use ddb_rollover::policy::Billing;
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::route::PeriodTable;
use ddb_rollover::table::ArchiveState;
use ddb_rollover::table::ObservedWarm;
use ddb_rollover::table::TableSetting;
use ddb_rollover::Decision;
use ddb_rollover::OperatorLine;
use ddb_rollover::Verdict;
use ddb_rollover::{AdoptReport, Adoption};
use ddb_rollover::{Enrolment, InitReport};
use ddb_rollover::{NextRun, StatusReport, TableStatusLine, WarmStatus};
use ddb_rollover::{Restoration, RestoreReport};
use ddb_rollover::{RunReport, Summary};

/// Left-aligned columns under a header, two spaces apart; the last column is not padded.
fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    aligned(std::iter::once(&header).chain(rows))
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
pub(crate) fn aligned<'a>(rows: impl Iterator<Item = &'a Vec<String>> + Clone) -> String {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows.clone() {
        widths.resize(widths.len().max(row.len()), 0);
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let last = row.len().saturating_sub(1);
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                if i == last {
                    cell.clone()
                } else {
                    format!("{cell:<width$}", width = widths[i])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The tables holding a time or a time range, oldest first.
pub(crate) fn period_tables(tables: &[PeriodTable]) -> String {
    let rows: Vec<Vec<String>> = tables
        .iter()
        .map(|t| vec![t.name.clone(), rfc3339(t.start), rfc3339(t.end)])
        .collect();
    columns(&["TABLE", "FROM", "UNTIL"], &rows)
}

fn opt<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn billing(value: Option<Billing>) -> String {
    opt(value)
}

fn action(decision: &Decision) -> String {
    match decision {
        Decision::Create(spec) => format!("create {}", spec.billing),
        Decision::Recreate(spec) => format!("recreate {}", spec.billing),
        Decision::Update(change) => match (change.changes_table(), change.indexes.len()) {
            (true, 0) => format!("update to {}", change.to),
            (true, n) => format!("update to {} and {n} index(es)", change.to),
            (false, n) => format!("update {n} index(es)"),
        },
        Decision::UpdateClass(change) => format!("class to {}", change.to),
        Decision::Tag(change) => format!("tag {}", change.tags.len()),
        Decision::EnableTtl(change) => format!("ttl on {}", change.attribute),
        Decision::EnablePointInTimeRecovery { .. } => "pitr on".into(),
        Decision::Configure(change) => match &change.setting {
            TableSetting::AddIndex(spec) => format!("create index {}", spec.index.name),
            TableSetting::Warm(raise) => format!("raise warm throughput ({} part(s))", raise.parts.len()),
            setting => setting.to_string(),
        },
        Decision::Export(request) if request.after_seal => "final export after the seal".into(),
        Decision::Export(_) => "export".into(),
        Decision::Seal(_) => "seal against writes".into(),
        Decision::Unseal(_) => "unseal".into(),
        Decision::Delete(_) => "delete".into(),
        Decision::EnableKinesisDestination(change) => {
            format!(
                "stream to {}",
                stream_name(change.destination.stream_arn.as_str())
            )
        }
        Decision::CreateEventSourceMapping(change) => {
            format!("map to {}", function_name(change.consumer.function.as_str()))
        }
        Decision::UpdateEventSourceMapping(update) => {
            format!("reset mapping to {}", function_name(&update.function_arn))
        }
        Decision::DeleteEventSourceMapping(removal) => {
            format!("unmap {}", function_name(&removal.function_arn))
        }
        Decision::RegisterScaling(change) => {
            let target = change.targets.first().map_or(0, |t| t.target);
            format!("autoscale {} target(s) at {target}%", change.targets.len())
        }
        Decision::DeregisterScaling(change) => format!("stop autoscaling {} target(s)", change.targets.len()),
        Decision::Record(_) => "record in the ledger".into(),
        Decision::Unchanged => "none".into(),
        Decision::Deferred { .. } => "defer".into(),
        Decision::Skipped => "skip".into(),
        Decision::Foreign => "foreign".into(),
        Decision::Blocked => "blocked".into(),
        // A decision newer than this table: its action's name.
        other => other.action().into(),
    }
}

/// A Kinesis stream's name from its ARN (`…:stream/NAME`), short enough for a table row.
fn stream_name(arn: &str) -> &str {
    arn.rsplit_once("stream/").map_or(arn, |(_, name)| name)
}

/// A table's STREAM cell: its Kinesis destination's status, then its consumer mapping's.
fn stream_cell(line: &TableStatusLine) -> String {
    let parts: Vec<String> = line
        .stream
        .iter()
        .cloned()
        .chain(line.consumer.iter().map(|state| format!("mapping {state}")))
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// `NAME` (or `NAME:QUALIFIER`) of `arn:aws:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER]`.
fn function_name(arn: &str) -> &str {
    arn.split_once(":function:").map_or(arn, |(_, name)| name)
}

pub(crate) fn summary(summary: &Summary) -> String {
    let mut text = format!(
        "{} done, {} planned, {} unchanged, {} deferred, {} failed, {} foreign, {} skipped",
        summary.done,
        summary.planned,
        summary.unchanged,
        summary.deferred,
        summary.failed,
        summary.foreign,
        summary.skipped
    );
    if summary.gone > 0 {
        text.push_str(&format!(
            ", {} gone (deleted by another run meanwhile)",
            summary.gone
        ));
    }
    if summary.failed > 0 {
        text.push_str(&format!(
            "; {} of {} tables failed",
            summary.failed_tables, summary.tables
        ));
    }
    text
}

/// `warning: ...` lines, one per warning.
fn warnings(warnings: &[String]) -> String {
    warnings.iter().map(|w| format!("warning: {w}\n")).collect()
}

pub(crate) fn run_report(report: &RunReport) -> String {
    let rows: Vec<Vec<String>> = report
        .tables
        .iter()
        .map(|line| {
            let reason = match &line.error {
                Some(error) => format!("{} ({error})", line.item.reason),
                None => line.item.reason.clone(),
            };
            vec![
                line.item.facts.table.clone(),
                opt(line.item.facts.age),
                opt(line.item.facts.phase),
                opt(line.item.facts.status.clone()),
                billing(line.item.facts.billing),
                verdict(line.item.verdict.as_ref()),
                action(&line.item.decision),
                line.outcome.as_str().to_string(),
                reason,
            ]
        })
        .collect();
    let health = report
        .next_table_ready
        .as_ref()
        .map(|ready| format!("health: {}\n", ready.line()))
        .unwrap_or_default();
    format!(
        "{}{} at {} (current period {}, prefix {}){}\n{}{}\n{}{}",
        if report.dry_run { "[dry run] " } else { "" },
        report.operation,
        report.at.to_rfc3339(),
        report.current_period,
        report.prefix,
        if rows.is_empty() { "\nno tables" } else { "" },
        columns(
            &["TABLE", "AGE", "PHASE", "STATUS", "CAPACITY", "VERDICT", "ACTION", "OUTCOME", "REASON"],
            &rows
        ),
        summary(&report.summary),
        health,
        warnings(&report.warnings)
    )
}

pub(crate) fn status_report(report: &StatusReport) -> String {
    // The WARM column only where the policy asks for warm throughput somewhere.
    let warm_column = report
        .tables
        .iter()
        .any(|line| line.warm.as_ref().is_some_and(|w| w.wanted.is_some()));
    // The STREAM column only where the policy names a Kinesis stream or a consumer function.
    let stream_column = report
        .tables
        .iter()
        .any(|line| line.stream.is_some() || line.consumer.is_some());
    let rows: Vec<Vec<String>> = report
        .tables
        .iter()
        .map(|line| {
            // The main change, then the other changes; "nothing" only when there is none.
            let mut changes: Vec<String> = line
                .pending_change()
                .map(|(operation, next)| format!("{operation}: {}: {}", action(&next.decision), next.reason))
                .into_iter()
                .collect();
            changes.extend(line.other_changes.iter().map(|other| {
                format!(
                    "{}: {}: {}",
                    other.operation,
                    action(&other.decision),
                    other.reason
                )
            }));
            let mut next = if changes.is_empty() {
                "nothing".to_string()
            } else {
                changes.join("; ")
            };
            if let Some(deferral) = &line.last_deferral {
                next.push_str(&format!(" (last deferred {deferral})"));
            }
            let day = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
            let mut retention = Vec::new();
            if let Some(archive) = &line.archive {
                retention.push(match archive.state {
                    ArchiveState::NotStarted => format!("archive due {}", day(archive.due)),
                    ref state => format!("archive {}", state.as_str()),
                });
            }
            if let Some(at) = line.sealed {
                retention.push(format!("sealed {}", day(at)));
            }
            if let Some(due) = line.delete_due {
                retention.push(format!("delete due {}", day(due)));
            }
            let retention = if retention.is_empty() {
                "-".to_string()
            } else {
                retention.join(", ")
            };
            let mut next_phase = line
                .next_phase
                .map(|n| format!("{} from {}", n.phase, n.from.format("%Y-%m-%d %H:%M UTC")));
            if let (Some(text), Some(until)) = (&mut next_phase, line.grace_until) {
                text.push_str(&format!(" (write grace until {})", until.format("%H:%M UTC")));
            }
            let mut row = vec![
                line.facts.table.clone(),
                opt(line.facts.period.clone()),
                opt(line.facts.age),
                opt(line.facts.phase),
                line.facts.status.clone().unwrap_or_else(|| "MISSING".into()),
                billing(line.facts.billing),
            ];
            if warm_column {
                row.push(line.warm.as_ref().map_or_else(|| "-".into(), warm_cell));
            }
            if stream_column {
                row.push(stream_cell(line));
            }
            row.extend([status_verdict(line), opt(next_phase), retention, next]);
            row
        })
        .collect();
    let mut header = vec!["TABLE", "PERIOD", "AGE", "PHASE", "STATUS", "CAPACITY"];
    if warm_column {
        header.push("WARM");
    }
    if stream_column {
        header.push("STREAM");
    }
    header.extend(["VERDICT", "NEXT PHASE", "RETENTION", "NEXT RUN"]);
    format!(
        "status at {} (current period {}, prefix {})\nhealth: {}\n{}{}",
        report.at.to_rfc3339(),
        report.current_period,
        report.prefix,
        report.health.line(),
        columns(&header, &rows),
        warnings(&report.warnings)
    )
}

/// "40000/20000" (read / write units per second).
fn units(warm: WarmThroughput) -> String {
    format!("{}/{}", warm.read, warm.write)
}

/// The WARM cell: the table's warm throughput and status, what its phase wants when it has less,
/// and each of the policy's indexes that differs from the table: `40000/20000 ACTIVE`,
/// `12000/4000 ACTIVE, wants 40000/20000; index by_device 12000/4000 UPDATING`.
fn warm_cell(warm: &WarmStatus) -> String {
    let reported = |have: &ObservedWarm| format!("{} {}", units(have.units), have.status.as_str());
    let mut cell = match (&warm.table, warm.wanted) {
        (Some(have), _) => reported(have),
        (None, Some(wanted)) => format!("not reported (wants {})", units(wanted)),
        (None, None) => "-".into(),
    };
    if let (Some(wanted), Some(_)) = (warm.wanted, &warm.table) {
        if !warm.covers_wanted() {
            cell.push_str(&format!(", wants {}", units(wanted)));
        }
    }
    for (index, have) in &warm.indexes {
        if warm.table.as_ref() != Some(have) {
            cell.push_str(&format!("; index {index} {}", reported(have)));
        }
    }
    cell
}

/// What `init` did or would do.
pub(crate) fn init_report(report: &InitReport) -> String {
    let rows = operator_rows(&report.tables, |enrolment| match enrolment {
        Enrolment::Record => "record: made before the ledger (family tag, key, period)".into(),
        Enrolment::AlreadyRecorded => "already in the ledger".into(),
        Enrolment::Refused { reason } => format!("not recorded: {reason}"),
    });
    let pending = report.created_ledger
        || !report.started_before
        || report
            .tables
            .iter()
            .any(|l| matches!(l.action, Enrolment::Record));
    let ledger = match (report.created_ledger, report.started_before) {
        (true, _) => format!("create the ledger table {}", report.ledger),
        (false, false) => format!("start the ledger {}", report.ledger),
        (false, true) => format!("the ledger {} was started before", report.ledger),
    };
    operator_report(
        report.dry_run,
        pending,
        format!(
            "init at {} (prefix {}): {ledger}",
            report.at.to_rfc3339(),
            report.prefix
        ),
        "nothing was written; run again with --yes to start the ledger and record these tables",
        &rows,
    )
}

/// What `adopt` did or would do with each table.
pub(crate) fn adopt_report(report: &AdoptReport) -> String {
    let rows = operator_rows(&report.tables, |adoption| match adoption {
        Adoption::Record {
            identity,
            tags,
            feeds,
            ..
        } => {
            let tagged = if tags.is_empty() {
                "; no tags: the endpoint keeps none".to_string()
            } else {
                format!(
                    " and tag {}",
                    tags.iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let taken: Vec<String> = feeds
                .destinations
                .iter()
                .map(|stream| format!("its destination to {stream}"))
                .chain(
                    feeds
                        .mappings
                        .iter()
                        .map(|uuid| format!("event source mapping {uuid} of the family's consumer")),
                )
                .collect();
            let taken = if taken.is_empty() {
                String::new()
            } else {
                format!("; takes as ours (vouch for each): {}", taken.join(", "))
            };
            format!(
                "record in the ledger (created {}){tagged}{taken}",
                rfc3339(identity.created)
            )
        }
        Adoption::AlreadyOurs => "already in the family's ledger".into(),
        Adoption::Refused { reasons } => format!("refused: {}", reasons.join("; ")),
    });
    let pending = report
        .tables
        .iter()
        .any(|l| matches!(l.action, Adoption::Record { .. }));
    operator_report(
        report.dry_run,
        pending,
        format!("adopt at {} (prefix {})", report.at.to_rfc3339(), report.prefix),
        "nothing was written; run again with --yes to record and tag these tables",
        &rows,
    )
}

/// The lines of `adopt` or `restore`: the table, the outcome, what (`what` says it from the
/// line's action, then the notes and the error).
fn operator_rows<A>(lines: &[OperatorLine<A>], what: impl Fn(&A) -> String) -> Vec<Vec<String>> {
    lines
        .iter()
        .map(|line| {
            let mut detail = what(&line.action);
            for note in &line.notes {
                detail.push_str(&format!("; {note}"));
            }
            if let Some(error) = &line.error {
                detail.push_str(&format!(" ({error})"));
            }
            vec![line.table.clone(), line.outcome.as_str().to_string(), detail]
        })
        .collect()
}

/// `adopt`'s or `restore`'s report: a title (marked when a dry run), the lines, and what to do
/// when a dry run left something to do.
fn operator_report(
    dry_run: bool,
    pending: bool,
    title: String,
    dry_run_note: &str,
    rows: &[Vec<String>],
) -> String {
    let footer = if dry_run && pending {
        format!("dry run: {dry_run_note}\n")
    } else {
        String::new()
    };
    format!(
        "{}{title}\n{}{footer}",
        if dry_run { "[dry run] " } else { "" },
        columns(&["TABLE", "OUTCOME", "WHAT"], rows),
    )
}

/// The one ownership verdict a decision rests on, short: `ours (family tag)`, `-` for a table
/// that does not exist.
fn verdict(verdict: Option<&Verdict>) -> String {
    verdict.map_or_else(|| "-".into(), Verdict::label)
}

/// The verdict each run decides on: one when both runs that look at the table agree (they read
/// the same of it), each named when they do not.
fn status_verdict(line: &TableStatusLine) -> String {
    let of = |next: &Option<NextRun>| next.as_ref().and_then(|n| n.verdict.as_ref()).map(Verdict::label);
    match (of(&line.create_new), of(&line.resize_old)) {
        (Some(create), Some(resize)) if create != resize => {
            format!("create_new: {create}; resize_old: {resize}")
        }
        (create, resize) => resize.or(create).unwrap_or_else(|| "-".into()),
    }
}

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub(crate) fn restore_report(report: &RestoreReport) -> String {
    let rows = operator_rows(&report.tables, |action| {
        match &action.restoration {
        Restoration::Import {
            export,
            manifest,
            receipt,
            items,
            phase,
            billing,
        } => format!(
            "import {items} item(s) of {export} ({manifest}), as receipt {receipt} recorded, at phase {phase}: {billing}"
        ),
        Restoration::Refused { reasons } => format!("refused: {}", reasons.join("; ")),
    }
    });
    let pending = report
        .tables
        .iter()
        .any(|l| matches!(l.action.restoration, Restoration::Import { .. }));
    operator_report(
        report.dry_run,
        pending,
        format!(
            "restore at {} (prefix {}, kept until {})",
            report.at.to_rfc3339(),
            report.prefix,
            report.keep_until.to_rfc3339()
        ),
        "nothing was imported; run again with --yes to restore these periods",
        &rows,
    )
}
