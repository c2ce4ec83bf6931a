//! Reports that fit where they go: CloudWatch Logs keeps at most 256 KB of one log event (the
//! rest is cut), and a function error's message is read by people in the console and alarms.
//! A run over thousands of tables can fail hundreds of them; both must still read whole.

use std::collections::BTreeSet;

use ddb_rollover::TableLine;
use ddb_rollover::{Outcome, RunReport};

/// CloudWatch Logs' limit for one log event.
pub const MAX_LOG_EVENT_BYTES: usize = 256 * 1024;

/// One part of the logged report, before the JSON log format escapes it (quotes double at
/// worst) and adds its own fields: well under half of [`MAX_LOG_EVENT_BYTES`].
const PART_BYTES: usize = 96 * 1024;

/// Lambda's limit for a synchronous response is 6 MB; a response stays below this.
const MAX_RESPONSE_BYTES: usize = 5 * 1024 * 1024;

/// A line's error or reason longer than this is cut in the logged report.
const MAX_TEXT: usize = 2_000;

/// Failed tables named in the function error; the rest are counted.
const NAMED_FAILURES: usize = 10;

/// An error message in the function error is cut after this many characters.
const MAX_ERROR_IN_SUMMARY: usize = 300;

/// The report's lines as JSON arrays, each at most `PART_BYTES`: logged one event per part,
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
        if !seen.insert(line.item.facts.table.as_str()) || named.len() == NAMED_FAILURES {
            continue;
        }
        let error = line.error.as_deref().unwrap_or(&line.item.reason);
        let error = cut(error, MAX_ERROR_IN_SUMMARY);
        named.push(if error.contains(&line.item.facts.table) {
            error
        } else {
            format!("{}: {error}", line.item.facts.table)
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

/// The report as the function's response: its summary and the lines where something happened
/// (changed, planned, deferred, failed); the quiet ones are counted in `omitted_lines` and
/// logged with the rest. A report over Lambda's 6 MB response limit would fail the invocation
/// however well it went, so if even that is too big, the last lines are cut and counted too.
pub fn response(report: RunReport) -> RunReport {
    let mut report = report.without_quiet_lines();
    let size = |r: &RunReport| serde_json::to_vec(r).map_or(usize::MAX, |json| json.len());
    while size(&report) > MAX_RESPONSE_BYTES && !report.tables.is_empty() {
        let cut = report.tables.len().div_ceil(10);
        report.tables.truncate(report.tables.len() - cut);
        report.omitted_lines += cut;
    }
    report
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report_fixtures::{line, report};
    use ddb_rollover::Decision;
    use ddb_rollover::Operation;

    /// 600 tables, every other one failed with a long SDK error: what a regional outage looks
    /// like to a run over a big account.
    fn big_failed_report() -> RunReport {
        let error = format!(
            "UpdateTable {{}}: dispatch failure: io error: {}. DynamoDB could not be reached",
            "connection reset by peer ".repeat(40)
        );
        let lines = (0..600)
            .map(|i| {
                let table = format!("timeseries_{:04}-01-01", 1000 + i);
                let failed = i % 2 == 0;
                let mut line = if failed {
                    line(&table, Decision::Skipped, Outcome::Failed, None)
                } else {
                    line(&table, Decision::Unchanged, Outcome::Unchanged, None)
                };
                line.item.facts.age = Some(3);
                line.item.facts.phase = Some(2);
                line.item.reason = "already at phase 2 (1 RCU / 1 WCU) for age 3".into();
                line.error = failed.then(|| error.replace("{}", &table));
                line
            })
            .collect();
        report(Operation::ResizeOld, lines)
    }

    #[test]
    fn the_function_error_counts_tables_and_stays_short() {
        let report = big_failed_report();
        let summary = failure_summary(&report);
        assert!(
            summary.starts_with("300 of 600 tables failed (UpdateTable timeseries_1000-01-01: "),
            "{summary}"
        );
        assert!(summary.contains(" and 290 more."), "{summary}");
        assert!(summary.len() < 8 * 1024, "{} bytes", summary.len());
        assert!(!summary.contains('\n'));
    }

    #[test]
    fn a_response_over_lambdas_limit_keeps_what_changed_and_counts_the_rest() {
        let small = big_failed_report();
        let quiet = response(small.clone());
        assert_eq!(quiet.tables.len(), 300, "the unchanged lines are left out");
        assert_eq!((quiet.omitted_lines, &quiet.summary), (300, &small.summary));
        // 20,000 tables of one account, a few of them changed: too big for 6 MB as a whole.
        let mut lines = Vec::new();
        for copy in 0..34 {
            for line in &small.tables {
                let mut line = line.clone();
                line.item.facts.table = format!("{}_{copy}", line.item.facts.table);
                line.outcome = if copy == 0 {
                    Outcome::Done
                } else {
                    Outcome::Unchanged
                };
                lines.push(line);
            }
        }
        let big = RunReport::new(
            small.operation,
            small.at,
            small.prefix.clone(),
            small.current_period.clone(),
            false,
            lines,
        );
        assert!(serde_json::to_vec(&big).unwrap().len() > MAX_RESPONSE_BYTES);
        let fitted = response(big.clone());
        assert!(serde_json::to_vec(&fitted).unwrap().len() <= MAX_RESPONSE_BYTES);
        assert_eq!(fitted.summary, big.summary);
        assert_eq!(fitted.tables.len(), 600);
        assert!(fitted.tables.iter().all(|l| l.outcome == Outcome::Done));
        assert_eq!(fitted.omitted_lines, 600 * 33);
    }

    #[test]
    fn the_logged_report_is_whole_and_every_part_fits_one_log_event() {
        let report = big_failed_report();
        let parts = report_chunks(&report);
        assert!(parts.len() > 1, "the report should need several parts");
        let mut tables = 0;
        for part in &parts {
            // The JSON log format embeds the part as an escaped string.
            let escaped = serde_json::to_string(part).unwrap();
            assert!(escaped.len() < MAX_LOG_EVENT_BYTES / 2, "{} bytes", escaped.len());
            let lines: Vec<serde_json::Value> = serde_json::from_str(part).unwrap();
            tables += lines.len();
        }
        assert_eq!(tables, 600);
    }
}
