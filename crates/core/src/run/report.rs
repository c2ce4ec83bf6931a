//! The RunReport: what a run did with each table, as the CLI prints it and the Lambda
//! functions return it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::plan::deferral::DeferralCause;
use crate::plan::{Decision, Operation, PlanItem, TableFacts};
use crate::run::control::ControlPlaneError;
use crate::run::readiness::Readiness;

/// What became of one plan item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The change was made (or a concurrent run had made it).
    Done,
    /// Dry run: the change would be made.
    Planned,
    /// Nothing to change.
    Unchanged,
    /// A change is needed but DynamoDB would refuse it now; a later run does it.
    Deferred,
    /// The call failed; see `error`.
    Failed,
    /// Has the prefix but is not ours; never touched.
    Foreign,
    /// Not this operation's concern.
    Skipped,
    /// The table vanished during the run (another run or a person deleted it): nothing to do.
    Gone,
}

impl Outcome {
    /// The outcome's name in reports (`done`, `planned`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Planned => "planned",
            Outcome::Unchanged => "unchanged",
            Outcome::Deferred => "deferred",
            Outcome::Failed => "failed",
            Outcome::Foreign => "foreign",
            Outcome::Skipped => "skipped",
            Outcome::Gone => "gone",
        }
    }
}

/// One plan item and what became of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TableLine {
    /// The table, its decision and why.
    #[serde(flatten)]
    pub item: PlanItem,
    /// What became of the decision.
    pub outcome: Outcome,
    /// The call's error, when it failed (or why a change was deferred at run time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the change waits, on every deferred line: the planner's cause, or DynamoDB's
    /// refusal or the time budget at run time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferral: Option<DeferralCause>,
}

impl TableLine {
    /// A line; a deferred decision's line carries the decision's cause.
    pub fn new(item: PlanItem, outcome: Outcome, error: Option<String>) -> TableLine {
        let deferral = match (&item.decision, outcome) {
            (Decision::Deferred { cause, .. }, Outcome::Deferred) => Some(*cause),
            _ => None,
        };
        TableLine {
            item,
            outcome,
            error,
            deferral,
        }
    }

    /// A change deferred at run time, for `cause`.
    pub fn deferred(item: PlanItem, cause: DeferralCause, error: Option<String>) -> TableLine {
        TableLine {
            item,
            outcome: Outcome::Deferred,
            error,
            deferral: Some(cause),
        }
    }
}

/// How many lines had each outcome.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Summary {
    /// Lines with outcome `done`.
    pub done: usize,
    /// Lines with outcome `planned`.
    pub planned: usize,
    /// Lines with outcome `unchanged`.
    pub unchanged: usize,
    /// Lines with outcome `deferred`.
    pub deferred: usize,
    /// Lines with outcome `failed`.
    pub failed: usize,
    /// Lines with outcome `foreign`.
    pub foreign: usize,
    /// Lines with outcome `skipped`.
    pub skipped: usize,
    /// Lines with outcome `gone`.
    pub gone: usize,
    /// Tables with at least one failed action (a table may have several).
    pub failed_tables: usize,
    /// Tables the report covers.
    pub tables: usize,
}

/// What a run did with each table: the CLI prints it, the Lambda functions return it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RunReport {
    /// The operation run.
    pub operation: Operation,
    /// The run's time.
    pub at: DateTime<Utc>,
    /// The policy's table-name prefix.
    pub prefix: String,
    /// The label of the period `at` falls in.
    pub current_period: String,
    /// Whether the run only planned, changing nothing.
    pub dry_run: bool,
    /// How many lines had each outcome.
    pub summary: Summary,
    /// What an operator should know besides the tables' outcomes (see [`crate::Plan::warnings`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// One line per plan item, in the plan's order.
    pub tables: Vec<TableLine>,
    /// Lines left out of `tables` to fit a size limit (counted in `summary`, never changes or
    /// failures): see [`RunReport::without_quiet_lines`].
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted_lines: usize,
    /// create_new runs (not dry runs): whether the current and every pre-built table exist,
    /// are this policy's and ACTIVE once the run ends (see [`crate::Readiness`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_table_ready: Option<Readiness>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl RunReport {
    /// A report of `tables`, with the summary counted from them.
    pub fn new(
        operation: Operation,
        at: DateTime<Utc>,
        prefix: String,
        current_period: String,
        dry_run: bool,
        tables: Vec<TableLine>,
    ) -> RunReport {
        let mut summary = Summary::default();
        for line in &tables {
            *match line.outcome {
                Outcome::Done => &mut summary.done,
                Outcome::Planned => &mut summary.planned,
                Outcome::Unchanged => &mut summary.unchanged,
                Outcome::Deferred => &mut summary.deferred,
                Outcome::Failed => &mut summary.failed,
                Outcome::Foreign => &mut summary.foreign,
                Outcome::Skipped => &mut summary.skipped,
                Outcome::Gone => &mut summary.gone,
            } += 1;
        }
        let distinct = |lines: &mut dyn Iterator<Item = &TableLine>| {
            lines
                .map(|line| line.item.facts.table.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        };
        summary.tables = distinct(&mut tables.iter());
        summary.failed_tables = distinct(&mut tables.iter().filter(|l| l.outcome == Outcome::Failed));
        RunReport {
            operation,
            at,
            prefix,
            current_period,
            dry_run,
            summary,
            warnings: Vec::new(),
            tables,
            omitted_lines: 0,
            next_table_ready: None,
        }
    }

    /// The report without the lines where nothing happened (unchanged, skipped, foreign, gone):
    /// what is left when a report must shrink to fit (a Lambda response is at most 6 MB).
    /// `summary` still counts every line.
    pub fn without_quiet_lines(mut self) -> RunReport {
        let before = self.tables.len();
        self.tables.retain(|line| {
            !matches!(
                line.outcome,
                Outcome::Unchanged | Outcome::Skipped | Outcome::Foreign | Outcome::Gone
            )
        });
        self.omitted_lines += before - self.tables.len();
        self
    }

    /// A create_new run's readiness, with a failed line for each current or pre-built table
    /// that is missing or cannot take writes when the run ends ([`Readiness::lost`]) and has no
    /// failed line yet: the period would have no table of ours, so the run fails (exit 1, a
    /// Lambda error).
    pub(crate) fn with_readiness(self, ready: Readiness) -> RunReport {
        let mut tables = self.tables;
        for lost in ready.lost() {
            let failed = tables
                .iter()
                .any(|line| line.item.facts.table == lost.table && line.outcome == Outcome::Failed);
            if failed {
                continue;
            }
            let error = lost.trouble();
            // The destination this run enabled did not become ACTIVE (ENABLE_FAILED: the stream
            // missing, Kinesis refusing), or the mapping it created did not become Enabled: that
            // action failed, with DynamoDB's or Lambda's reason.
            let kinesis = lost.kinesis_is_the_trouble();
            let enabled = tables.iter_mut().find(|line| {
                line.item.facts.table == lost.table
                    && line.outcome == Outcome::Done
                    && match line.item.decision {
                        Decision::EnableKinesisDestination(_) => kinesis,
                        Decision::CreateEventSourceMapping(_) => !kinesis,
                        _ => false,
                    }
            });
            if let Some(line) = enabled.filter(|_| lost.stream_is_the_trouble()) {
                line.outcome = Outcome::Failed;
                line.error = Some(error);
                continue;
            }
            // The verdict the run decided on for the table, as its own line carries it.
            let verdict = tables
                .iter()
                .find(|line| line.item.facts.table == lost.table)
                .and_then(|line| line.item.verdict.clone());
            tables.push(TableLine::new(
                PlanItem {
                    facts: TableFacts {
                        status: lost.status.clone(),
                        ..TableFacts::named(&lost.table)
                    },
                    verdict,
                    ..PlanItem::unobserved(
                        &lost.table,
                        Decision::Blocked,
                        "the next table is not ready".into(),
                    )
                },
                Outcome::Failed,
                Some(error),
            ));
        }
        tables.sort_by(|a, b| a.item.facts.table.cmp(&b.item.facts.table));
        let report = RunReport::new(
            self.operation,
            self.at,
            self.prefix,
            self.current_period,
            self.dry_run,
            tables,
        );
        RunReport {
            warnings: self.warnings,
            omitted_lines: self.omitted_lines,
            next_table_ready: Some(ready),
            ..report
        }
    }

    /// A failed line for each evidence read that failed ([`Observation::unread`](crate::run::observe::Observation)),
    /// once per read, naming every table it failed on and the error (with the grant to add
    /// when it was refused): the tables are kept, and the run fails (exit 1, a Lambda error,
    /// the alarm), since a read that fails is no evidence of anything.
    pub(crate) fn with_unread(self, unread: &[ControlPlaneError]) -> RunReport {
        if unread.is_empty() {
            return self;
        }
        let mut tables = self.tables;
        for read in UnreadEvidence::of(unread) {
            tables.push(TableLine::new(
                PlanItem::unobserved(&read.tables[0], Decision::Blocked, read.reason()),
                Outcome::Failed,
                Some(read.error),
            ));
        }
        tables.sort_by(|a, b| a.item.facts.table.cmp(&b.item.facts.table));
        let report = RunReport::new(
            self.operation,
            self.at,
            self.prefix,
            self.current_period,
            self.dry_run,
            tables,
        );
        RunReport {
            warnings: self.warnings,
            omitted_lines: self.omitted_lines,
            next_table_ready: self.next_table_ready,
            ..report
        }
    }

    pub(crate) fn with_warnings(self, warnings: Vec<String>) -> RunReport {
        RunReport { warnings, ..self }
    }

    /// False when any action failed: the CLI exits 1 and the Lambda invocation errors.
    pub fn succeeded(&self) -> bool {
        self.summary.failed == 0
    }

    /// The lines with `outcome`.
    pub fn lines_with(&self, outcome: Outcome) -> impl Iterator<Item = &TableLine> {
        self.tables.iter().filter(move |line| line.outcome == outcome)
    }
}

/// One evidence read that failed this run, for every table it failed on: what a run's failed
/// line and `status`'s warning say, once per read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UnreadEvidence {
    /// The call (`DescribeKinesisStreamingDestination`, ...).
    pub operation: &'static str,
    /// The tables it failed on, sorted.
    pub tables: Vec<String>,
    /// The first error, as the service said it (with the grant to add when it was refused),
    /// and how many other errors there were.
    pub error: String,
}

impl UnreadEvidence {
    /// The failed reads, one per call, in the calls' order.
    pub fn of(unread: &[ControlPlaneError]) -> Vec<UnreadEvidence> {
        let mut by_read: BTreeMap<&'static str, Vec<&ControlPlaneError>> = BTreeMap::new();
        for error in unread {
            by_read.entry(error.operation).or_default().push(error);
        }
        by_read
            .into_iter()
            .map(|(operation, errors)| {
                let mut tables: Vec<String> = errors.iter().map(|e| e.table.clone()).collect();
                tables.sort_unstable();
                tables.dedup();
                let mut messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
                messages.sort_unstable();
                messages.dedup();
                let error = match messages.len() {
                    1 => messages[0].to_string(),
                    n => format!("{} (and {} other errors)", messages[0], n - 1),
                };
                UnreadEvidence {
                    operation,
                    tables,
                    error,
                }
            })
            .collect()
    }

    /// What every unread line's reason ends with: the run's line for a failed read is told
    /// from a table's by it.
    pub const CONSEQUENCE: &'static str =
        "each is kept, neither deleted nor reported ready on evidence that was not read, until a run can read it";

    /// What it means for the tables.
    pub fn reason(&self) -> String {
        format!(
            "{} failed for {} table{} ({}): {}",
            self.operation,
            self.tables.len(),
            if self.tables.len() == 1 { "" } else { "s" },
            self.tables.join(", "),
            Self::CONSEQUENCE
        )
    }
}

impl std::fmt::Display for UnreadEvidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.reason(), self.error)
    }
}
