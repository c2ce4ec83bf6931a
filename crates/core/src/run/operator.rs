//! One line of what an operator command over named tables (`adopt`, `restore`) did with each:
//! the table, the command's own decision, and how it ended.

use serde::Serialize;

/// How one table's `adopt` or `restore` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LineOutcome {
    /// Dry run: it would be done.
    Planned,
    /// Done.
    Done,
    /// Nothing to do: already as asked.
    Unchanged,
    /// A restore's import was still running when the wait ended: a later `restore` of the same
    /// period tags the table.
    Importing,
    /// Not done, for the reasons on the line, before any change.
    Refused,
    /// A call failed; see the line's error.
    Failed,
}

impl LineOutcome {
    /// The outcome's name in reports (`planned`, `done`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            LineOutcome::Planned => "planned",
            LineOutcome::Done => "done",
            LineOutcome::Unchanged => "unchanged",
            LineOutcome::Importing => "importing",
            LineOutcome::Refused => "refused",
            LineOutcome::Failed => "failed",
        }
    }

    /// The table is as the operator asked (or would be, in a dry run).
    pub fn succeeded(self) -> bool {
        matches!(
            self,
            LineOutcome::Planned | LineOutcome::Done | LineOutcome::Unchanged
        )
    }
}

/// One named table: what the command does with it (`A`) and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OperatorLine<A> {
    /// The table's name.
    pub table: String,
    /// What the command does with the table.
    #[serde(flatten)]
    pub action: A,
    /// How it ended.
    pub outcome: LineOutcome,
    /// What stays as it was or comes later, one sentence each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The error, when a call failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
