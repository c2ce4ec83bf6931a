//! `init`: an operator starts the family's ledger where tables of the family exist already
//! (a deployment from before the ledger, or a ledger someone deleted): every table under the
//! prefix named as one of the family's periods (under any period setting) is read in full, and
//! the ones carrying this family's tag, the policy's key and a period are recorded with the
//! identity DynamoDB shows now ([`crate::ledger::enrolment`]). The others are named with why
//! they are not (`adopt` is the way to vouch for one). Then the `meta` record starts the
//! ledger, and the runs rest on it. The ledger table is created first where it is missing.
//! Dry run unless asked; running it again records only tables created before the ledger table
//! (by the CreationDateTime AWS gave each) that it does not record yet, and never a name it
//! records: a table made again under a recorded name, or one made after the ledger with a
//! copied tag, is someone else's.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::ledger::{enrolment, Book, Meta};
use crate::plan::Operation;
use crate::policy::naming::Ownership;
use crate::policy::Policy;
use crate::run::clock::CheckedInstant;
use crate::run::control::{ControlPlane, ControlPlaneError, ErrorKind};
use crate::run::ledger::Recorder;
use crate::run::observe::observe_tables;
use crate::run::operator::{LineOutcome, OperatorLine};

/// What `init` does with one table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Enrolment {
    /// Recorded as this family's, made before the ledger.
    Record,
    /// The ledger records it already.
    AlreadyRecorded,
    /// Not recorded, for this reason.
    Refused {
        /// Why.
        reason: String,
    },
}

/// One table's enrolment and how it ended.
pub(crate) type EnrolmentLine = OperatorLine<Enrolment>;

/// What `init` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct InitReport {
    /// When it ran.
    pub at: DateTime<Utc>,
    /// The policy's table-name prefix.
    pub prefix: String,
    /// The ledger table.
    pub ledger: String,
    /// Whether it only planned, changing nothing.
    pub dry_run: bool,
    /// Whether the ledger table was (or would be) created.
    pub created_ledger: bool,
    /// Whether the ledger was started already (its `meta` record is there).
    pub started_before: bool,
    /// One line per table named as one of the family's periods.
    pub tables: Vec<EnrolmentLine>,
}

impl InitReport {
    /// Every table that could be recorded was (a refusal is a table `adopt` may vouch for, not
    /// a failure); no call failed.
    pub fn succeeded(&self) -> bool {
        self.tables.iter().all(|l| l.outcome != LineOutcome::Failed)
    }
}

/// Starts the family's ledger, recording the tables made before it (see the module's
/// documentation).
pub async fn init<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    at: &CheckedInstant,
    dry_run: bool,
) -> Result<InitReport, ControlPlaneError> {
    at.assert_covers(policy, Operation::CreateNew, dry_run);
    let now = at.at();
    let naming = policy.naming();
    let ledger = naming.ledger_name();
    let mut book = Book::read(control.read_ledger(&ledger, &policy.prefix).await?);
    let missing = book.state == crate::ledger::LedgerState::Missing;
    let started_before = matches!(book.state, crate::ledger::LedgerState::Started(_));
    if missing && !dry_run {
        match control.create_ledger(&ledger, &policy.prefix).await {
            Ok(()) => {}
            Err(e) if e.kind == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        book = Book::read(control.read_ledger(&ledger, &policy.prefix).await?);
    }
    let names: Vec<String> = control
        .list_table_names(&naming.name_prefix())
        .await?
        .into_iter()
        .filter(|name| *name != ledger)
        .filter(|name| {
            matches!(naming.classify(name), Ownership::Owned(_)) || naming.is_label_of_any_period(name)
        })
        .collect();
    let observation = observe_tables(control, policy, &names).await?;
    // What AWS says the ledger table was created at (none before a dry run's creation): a
    // table created since was not made before the ledger, whatever tags it carries.
    let ledger_created = match control.describe_table(&ledger).await? {
        Some(table) => table.created,
        None => None,
    };
    let recorder = Recorder::new(control, policy, &book, at.wall().unwrap_or(now));
    let mut tables = Vec::new();
    let mut enrolled: u64 = book.tables.len() as u64;
    for name in &names {
        let line = |action, outcome, error| EnrolmentLine {
            table: name.clone(),
            action,
            outcome,
            notes: Vec::new(),
            error,
        };
        if let Some(error) = observation.unreadable.iter().find(|e| e.table == *name) {
            tables.push(line(
                Enrolment::Refused {
                    reason: "it could not be read".into(),
                },
                LineOutcome::Failed,
                Some(error.to_string()),
            ));
            continue;
        }
        let Some(table) = observation.tables.iter().find(|t| t.name == *name) else {
            continue;
        };
        if let Some(entry) = book.table(name) {
            let (action, outcome) = match (entry.record.identity(), table.identity()) {
                (Some(recorded), Some(shown)) if recorded.is(&shown) => {
                    (Enrolment::AlreadyRecorded, LineOutcome::Unchanged)
                }
                (Some(_), _) => (
                    Enrolment::Refused {
                        reason: "the ledger records this name with another identity: the table there now was made again by someone, and init never records over the family's own record".into(),
                    },
                    LineOutcome::Refused,
                ),
                (None, _) => (
                    Enrolment::Refused {
                        reason: "the ledger holds a run's intent for this name: the runs resolve it by what AWS shows, not init".into(),
                    },
                    LineOutcome::Refused,
                ),
            };
            tables.push(line(action, outcome, None));
            continue;
        }
        if let (Some(ledger_created), Some(created)) = (ledger_created, table.created) {
            if created >= ledger_created {
                let reason = format!(
                    "it was created at {} and the ledger at {}: not made before the ledger, so a family tag on it proves nothing (ddb-rollover adopt records a table an operator vouches for)",
                    created.to_rfc3339(),
                    ledger_created.to_rfc3339()
                );
                tables.push(line(Enrolment::Refused { reason }, LineOutcome::Refused, None));
                continue;
            }
        }
        match enrolment(policy, table, now) {
            Err(reason) => tables.push(line(Enrolment::Refused { reason }, LineOutcome::Refused, None)),
            Ok(_) if dry_run => tables.push(line(Enrolment::Record, LineOutcome::Planned, None)),
            Ok(record) => match recorder.table(&record).await {
                Ok(()) => {
                    enrolled += 1;
                    tables.push(line(Enrolment::Record, LineOutcome::Done, None));
                }
                Err(e) => tables.push(line(Enrolment::Record, LineOutcome::Failed, Some(e.to_string()))),
            },
        }
    }
    // A started ledger keeps its `meta`: when and how it started is what it was.
    if !dry_run && !started_before && tables.iter().all(|l| l.outcome != LineOutcome::Failed) {
        recorder.start(&Meta::Init { at: now, enrolled }).await?;
    }
    Ok(InitReport {
        at: now,
        prefix: policy.prefix.clone(),
        ledger,
        dry_run,
        created_ledger: missing,
        started_before,
        tables,
    })
}
