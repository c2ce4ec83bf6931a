//! Reports that fit where they go: CloudWatch Logs keeps at most 256 KB of one log event (the
//! rest is cut), and a function error's message is read by people in the console and alarms.
//! A run over thousands of tables can fail hundreds of them; both must still read whole.

use std::collections::BTreeSet;

use ddb_rollover::report::TableLine;
use ddb_rollover::{Outcome, RunReport};

/// CloudWatch Logs' limit for one log event.
pub const MAX_LOG_EVENT_BYTES: usize = 256 * 1024;

/// One part of the logged report, before the JSON log format escapes it (quotes double at
/// worst) and adds its own fields: well under half of [`MAX_LOG_EVENT_BYTES`].
const PART_BYTES: usize = 96 * 1024;

/// A line's error or reason longer than this is cut in the logged report.
const MAX_TEXT: usize = 2_000;

/// Failed tables named in the function error; the rest are counted.
const NAMED_FAILURES: usize = 10;

/// An error message in the function error is cut after this many characters.
const MAX_ERROR_IN_SUMMARY: usize = 300;

/// The report's lines as JSON arrays, each at most [`PART_BYTES`]: logged one event per part,
/// so the whole report is in the log and no event is cut.
pub fn report_chunks(report: &RunReport) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::from("[");
    for line in &report.tables {
        let json = serde_json::to_string(&shortened(line)).expect("a report line serializes");
        if part.len() > 1 && part.len() + json.len() + 2 > PART_BYTES {
            part.push(']');
            parts.push(std::mem::replace(&mut part, String::from("[")));
        }
        if part.len() > 1 {
            part.push(',');
        }
        part.push_str(&json);
    }
    part.push(']');
    parts.push(part);
    parts
}

/// "3 of 600 tables failed: CreateTable ts_2018-10-26: ...; ...; and 290 more (every table is
/// in the function's log)": failures counted by table, a bounded message whatever the count.
pub fn failure_summary(report: &RunReport) -> String {
    let s = &report.summary;
    let mut named = Vec::new();
    let mut seen = BTreeSet::new();
    for line in report.lines_with(Outcome::Failed) {
        if !seen.insert(line.item.table.as_str()) || named.len() == NAMED_FAILURES {
            continue;
        }
        let error = line.error.as_deref().unwrap_or(&line.item.reason);
        let error = cut(error, MAX_ERROR_IN_SUMMARY);
        named.push(if error.contains(&line.item.table) {
            error
        } else {
            format!("{}: {error}", line.item.table)
        });
    }
    let more = s.failed_tables.saturating_sub(named.len());
    let mut text = format!(
        "{} of {} tables failed ({})",
        s.failed_tables,
        s.tables,
        named.join("; ")
    );
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text.push_str(
        ". A retry or the next scheduled run tries them again; every table's outcome is in the function's log (\"run report\")",
    );
    text
}

fn shortened(line: &TableLine) -> TableLine {
    let mut line = line.clone();
    line.item.reason = cut(&line.item.reason, MAX_TEXT);
    line.error = line.error.map(|e| cut(&e, MAX_TEXT));
    line
}

/// At most `max` characters, with `...` when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}
