//! `restore`: an archived period comes back, from exactly the archive its deletion relied on.
//! The family's ledger holds each deletion's receipt: the table's identity and period, and the
//! export with every data file as the proof found it (key, ETag, size, MD5). `restore` reads
//! that receipt, never what S3 says today: it checks the recorded files again
//! ([`crate::run::archive::recheck`]: the manifest still names that export of that table, in
//! this Region and account, and `data/` holds exactly the recorded files, unchanged and
//! readable), then imports them with ImportTable into `{prefix}_{label}`, with the policy's key
//! and global indexes and the capacity of the phase the period's age calls for. An intent is
//! recorded before the import; once the import COMPLETED, the table is ACTIVE and DescribeImport
//! counts every item the receipt lists and no error, the ledger records the table (its
//! identity, the import, the receipt) and it gets our family and period tags and
//! `ddb-rollover:keep-until` (now + the operator's keep). A short import is not recorded and is
//! marked, so nothing of ours claims a short table. Still importing when the wait ends: a later
//! `restore` of the same period resumes from the intent. From then on `status`, the phases and
//! the application's fan-out queries treat it as any other table, and retention neither
//! archives nor deletes it before the keep ends (then it is exported again, since it may have
//! been written to, and deleted once that export is proven).
//!
//! ImportTable cannot create local secondary indexes, tags, a stream, a table class or deletion
//! protection: the runs add what they look after (tags, stream, deletion protection, the
//! phase's class); a policy with local indexes gets a table without them, which retention then
//! never deletes (its key layout is not the policy's), said on the line. Refused, before any
//! change: a period whose table exists, the current or a future period, a policy without
//! archiving, a period with no receipt of a deletion on an archive, an archive that is no longer
//! as recorded. Dry run unless asked. CLI only: an import takes longer than a Lambda function
//! may run.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::ledger::{ArchiveRecord, Book, Origin, TableRecord, TableState};
use crate::plan::restore::restore_spec;
use crate::plan::Operation;
use crate::policy::period::Slot;
use crate::policy::tags::{own_tags, TAG_KEEP_UNTIL, TAG_SHORT_IMPORT};
use crate::policy::Policy;
use crate::run::clock::CheckedInstant;
use crate::run::control::{ControlPlane, ControlPlaneError, ErrorKind};
use crate::run::ledger::Recorder;
use crate::run::operator::{LineOutcome, OperatorLine};
use crate::table::archive::{data_prefix, ArchiveProof, ImportState};
use crate::table::changes::{ImportRequest, TagChange};
use crate::table::TableStatus;

/// How often a waiting restore asks DescribeImport and DescribeTable.
const POLL: Duration = Duration::from_secs(10);

/// What `restore` does with one period.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Restoration {
    /// Import this export into the table.
    Import {
        /// The ARN of the export the table is restored from.
        export: String,
        /// The key of the export's `manifest-summary.json`.
        manifest: String,
        /// The deletion's receipt in the family's ledger that names the export.
        receipt: String,
        /// How many items the export's manifest counts.
        items: u64,
        /// The phase the period's age calls for, whose capacity the table is created with.
        phase: usize,
        /// The phase's throughput the table is created with, as reports show it.
        billing: String,
    },
    /// Not restored, for these reasons.
    Refused {
        /// What is missing or wrong, one sentence each.
        reasons: Vec<String>,
    },
}

/// One period and what `restore` does with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PeriodRestoration {
    /// The period's label.
    pub period: String,
    /// What `restore` does with the period.
    #[serde(flatten)]
    pub restoration: Restoration,
}

/// One period's restore and how it ended (`importing`: still running when the wait ended, the
/// table gets its tags from a later `restore` of the same period). Its notes say what the
/// restored table lacks or gets later.
pub(crate) type RestoreLine = OperatorLine<PeriodRestoration>;

/// What `restore` did with each period it was asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RestoreReport {
    /// When the restore ran.
    pub at: DateTime<Utc>,
    /// The policy's table-name prefix.
    pub prefix: String,
    /// Whether the restore only planned, changing nothing.
    pub dry_run: bool,
    /// Retention leaves the restored tables alone until then.
    pub keep_until: DateTime<Utc>,
    /// One line per period.
    pub tables: Vec<RestoreLine>,
}

impl RestoreReport {
    /// Every period was restored (or would be, in a dry run).
    pub fn succeeded(&self) -> bool {
        self.tables
            .iter()
            .all(|l| matches!(l.outcome, LineOutcome::Planned | LineOutcome::Done))
    }
}

/// How a restore runs.
#[derive(Clone, Copy, Debug)]
pub struct RestoreOptions {
    /// How long retention keeps the restored tables (from now).
    pub keep: chrono::Duration,
    /// Plan and report, change nothing.
    pub dry_run: bool,
    /// How long to wait for each import and its table (then `importing`).
    pub wait: Duration,
}

/// Restores `slots` (see the module's documentation).
pub async fn restore<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    at: &CheckedInstant,
    slots: &[Slot],
    options: RestoreOptions,
) -> Result<RestoreReport, ControlPlaneError> {
    // Restoring creates a table and writes tags dated by the clock: checked as create_new's is.
    at.assert_covers(policy, Operation::CreateNew, options.dry_run);
    let now = at.at();
    let keep_until = now + options.keep;
    let ledger = policy.naming().ledger_name();
    let book = Book::read(control.read_ledger(&ledger, &policy.prefix).await?);
    let recorder = Recorder::new(control, policy, &book, at.wall().unwrap_or(now));
    let mut tables = Vec::new();
    for &slot in slots {
        let restoring = Restoring {
            control,
            recorder: &recorder,
            book: &book,
            policy,
            now,
            keep_until,
            options,
        };
        tables.push(restoring.restore_one(slot).await);
    }
    Ok(RestoreReport {
        at: now,
        prefix: policy.prefix.clone(),
        dry_run: options.dry_run,
        keep_until,
        tables,
    })
}

/// One restore's facts, shared by its periods.
struct Restoring<'a, C> {
    control: &'a C,
    recorder: &'a Recorder<'a, C>,
    book: &'a Book,
    policy: &'a Policy,
    now: DateTime<Utc>,
    keep_until: DateTime<Utc>,
    options: RestoreOptions,
}

impl<C: ControlPlane> Restoring<'_, C> {
    async fn restore_one(&self, slot: Slot) -> RestoreLine {
        let (control, policy, now) = (self.control, self.policy, self.now);
        let calendar = policy.calendar();
        let (spec, phase) = restore_spec(policy, slot, now);
        let name = spec.name.clone();
        let line = RestoreLine {
            table: name.clone(),
            action: PeriodRestoration {
                period: calendar.label(slot),
                restoration: Restoration::Refused { reasons: Vec::new() },
            },
            outcome: LineOutcome::Refused,
            notes: Vec::new(),
            error: None,
        };
        if policy.archive().is_none() {
            return refuse(
                line,
                "the policy archives nothing ([retention] archive_after and bucket)".into(),
            );
        }
        if slot >= calendar.floor(now) {
            return refuse(
                line,
                "the current and future periods are create_new's, not restore's".into(),
            );
        }
        // An import a restore started and did not see end: this restore resumes it.
        let started =
            self.book
                .table(&name)
                .and_then(|entry| match (&entry.record.state, &entry.record.origin) {
                    (
                        TableState::Intended { .. },
                        Origin::Restored {
                            import_arn, receipt, ..
                        },
                    ) => Some((entry.record.clone(), import_arn.clone(), receipt.clone())),
                    _ => None,
                });
        match control.describe_table(&name).await {
            Ok(None) => {}
            Ok(Some(_)) if started.is_some() => {}
            Ok(Some(table)) => {
                return refuse(
                    line,
                    format!(
                        "the table exists ({}): restore never replaces a table; delete it first",
                        table.status.as_str()
                    ),
                )
            }
            Err(e) if e.kind == ErrorKind::NotFound => {}
            Err(e) => return failed(line, e),
        }
        let Some(receipt) =
            self.book.receipts_of(&name).iter().rev().find(|r| {
                started.as_ref().is_none_or(|(_, _, key)| *key == r.key) && r.record.archive.is_some()
            })
        else {
            return refuse(
                line,
                format!(
                    "the family's ledger holds no receipt of a deletion of {name} on an archive: restore brings back only a period retention deleted, from the archive its receipt names (a period deleted before the ledger: docs/operations.md, \"Restore\")"
                ),
            );
        };
        let Some(archive) = receipt.record.archive.as_ref() else {
            return refuse(line, "its receipt names no archive".into());
        };
        // The account that must own the bucket: the policy's, else the deleted table's own.
        let Some(owner) = policy
            .archive()
            .and_then(|a| a.expected_bucket_owner(&receipt.record.identity.arn))
        else {
            return refuse(
                line,
                format!(
                    "the deleted table's ARN {} names no account to expect as the archive bucket's owner: set retention.bucket_owner",
                    receipt.record.identity.arn
                ),
            );
        };
        let proof = match control.recheck_archive(&name, archive, &owner).await {
            Ok(proof) => proof,
            Err(e) => return failed(line, e),
        };
        if let ArchiveProof::Unproven { reason, .. } = &proof {
            return refuse(
                line,
                format!(
                    "the archive its receipt {} names is not as recorded: {reason}",
                    receipt.key
                ),
            );
        }
        let mut line = line;
        if !policy.local_indexes.is_empty() {
            let names: Vec<&str> = policy.local_indexes.iter().map(|i| i.name.as_str()).collect();
            line.notes.push(format!(
                "ImportTable cannot create local secondary indexes: the table has none of {}, so retention never deletes it (its layout is not the policy's)",
                names.join(", ")
            ));
        }
        line.notes.push(
            "tags, stream, deletion protection and the phase's table class come from the next runs (ImportTable cannot set them)"
                .into(),
        );
        line.action.restoration = Restoration::Import {
            export: archive.export_arn.clone(),
            manifest: archive.manifest.clone(),
            receipt: receipt.key.clone(),
            items: archive.items,
            phase,
            billing: spec.billing.to_string(),
        };
        if self.options.dry_run {
            line.outcome = LineOutcome::Planned;
            return line;
        }
        let (record, import) = match started {
            Some((record, import, _)) => (record, import),
            None => match self.import(&spec, slot, receipt.key.clone(), archive).await {
                Ok(started) => started,
                Err(e) => return failed(line, e),
            },
        };
        line.notes.push(format!("import {import}"));
        self.finish(line, record, &import, (archive, &owner), slot).await
    }

    /// The intent, then ImportTable of the receipt's data files.
    async fn import(
        &self,
        spec: &crate::table::changes::TableSpec,
        slot: Slot,
        receipt: String,
        archive: &ArchiveRecord,
    ) -> Result<(TableRecord, String), ControlPlaneError> {
        let mut record = TableRecord {
            origin: Origin::Restored {
                import_arn: String::new(),
                receipt,
                imported: 0,
            },
            ..crate::ledger::intent(self.policy, &spec.name, slot, self.recorder.clock())
        };
        let request = ImportRequest {
            client_token: client_token(&spec.name, &archive.export_arn),
            bucket: archive.bucket.clone(),
            data_prefix: data_prefix(&archive.manifest),
            spec: spec.clone(),
        };
        // The intent first, without the import's ARN (not known yet): an intent of a restore
        // is resolved only by a restore, which checks the import's counts.
        self.recorder.table(&record).await.map_err(|e| {
            e.reworded(|m| {
                format!("ImportTable not sent: the intent could not be written to the ledger ({m})")
            })
        })?;
        let import = self.control.import_table(&request).await?;
        if let Origin::Restored { import_arn, .. } = &mut record.origin {
            *import_arn = import.clone();
        }
        self.recorder.table(&record).await?;
        Ok((record, import))
    }

    /// Waits for the import and its table; records and tags the table when every item came
    /// back from the archive as recorded, marks it otherwise. ImportTable reads S3 after the
    /// check before it: the recorded files are checked again once it has read them, so a file
    /// overwritten meanwhile leaves the table unrecorded and marked.
    async fn finish(
        &self,
        mut line: RestoreLine,
        mut record: TableRecord,
        import: &str,
        (archive, owner): (&ArchiveRecord, &str),
        slot: Slot,
    ) -> RestoreLine {
        let items = archive.items;
        let control = self.control;
        let deadline = control.now() + self.options.wait;
        let name = record.name.clone();
        loop {
            let state = match control.describe_import(&name, import).await {
                Ok(state) => state,
                Err(e) => return failed(line, e),
            };
            let table = match &state {
                ImportState::Completed { .. } => match control.describe_table(&name).await {
                    Ok(table) => table,
                    Err(e) => return failed(line, e),
                },
                _ => None,
            };
            match (state, table) {
                (ImportState::Failed { message }, _) => {
                    line.outcome = LineOutcome::Failed;
                    line.error = Some(format!("import {import}: {message}"));
                    let _ = self.recorder.forget_table(&name).await;
                    return line;
                }
                (
                    ImportState::Completed {
                        items: imported,
                        errors,
                    },
                    Some(table),
                ) if table.status == TableStatus::Active => {
                    if let Some(short) = import_shortfall(items, imported, errors) {
                        return self
                            .short(line, &name, table.arn.as_deref(), import, &short)
                            .await;
                    }
                    match control.recheck_archive(&name, archive, owner).await {
                        Ok(ArchiveProof::Unproven { reason, .. }) => {
                            let changed = format!(
                                "the archive changed while it was imported, so the table may hold what S3 held then, not what the receipt names: {reason}"
                            );
                            return self
                                .short(line, &name, table.arn.as_deref(), import, &changed)
                                .await;
                        }
                        Ok(_) => {}
                        Err(e) => return failed(line, e),
                    }
                    let Some(identity) = table.identity() else {
                        return failed(
                            line,
                            ControlPlaneError::failed(
                                "DescribeTable",
                                &name,
                                "no ARN and creation time to record: the table is not ours until `ddb-rollover adopt` records it",
                            ),
                        );
                    };
                    record.state = TableState::Made { identity };
                    if let Origin::Restored {
                        imported: counted, ..
                    } = &mut record.origin
                    {
                        *counted = imported.unwrap_or_default();
                    }
                    if let Err(e) = self.recorder.table(&record).await {
                        return failed(line, e);
                    }
                    let calendar = self.policy.calendar();
                    let mut tags = self.policy.template.tags.clone();
                    tags.extend(own_tags(
                        &self.policy.prefix,
                        &calendar,
                        slot,
                        &self.policy.hash(),
                    ));
                    tags.insert(TAG_KEEP_UNTIL.to_string(), self.keep_until.to_rfc3339());
                    let change = TagChange {
                        name: name.clone(),
                        arn: table.arn.clone().unwrap_or_default(),
                        tags,
                    };
                    return match control.tag_table(&change).await {
                        Ok(()) => {
                            line.outcome = LineOutcome::Done;
                            line
                        }
                        Err(e) if e.kind == ErrorKind::Unsupported => {
                            line.outcome = LineOutcome::Done;
                            line
                        }
                        Err(e) => failed(line, e),
                    };
                }
                _ if control.now() >= deadline => {
                    line.outcome = LineOutcome::Importing;
                    line.notes.push(format!(
                        "still importing after {:?}: the table is not ours until the import is checked; run the same `ddb-rollover restore` again to finish it",
                        self.options.wait
                    ));
                    return line;
                }
                _ => control.sleep(POLL).await,
            }
        }
    }

    /// A short import: not recorded (the intent goes), and marked, so that no run takes it for
    /// the period's table.
    async fn short(
        &self,
        mut line: RestoreLine,
        name: &str,
        arn: Option<&str>,
        import: &str,
        short: &str,
    ) -> RestoreLine {
        line.outcome = LineOutcome::Failed;
        let _ = self.recorder.forget_table(name).await;
        let marker = TagChange::one(name, arn.unwrap_or_default(), TAG_SHORT_IMPORT, tag_value(short));
        let marked = match self.control.tag_table(&marker).await {
            Ok(()) => format!("marked {TAG_SHORT_IMPORT}, not ours: no run touches it"),
            Err(e) => format!("its {TAG_SHORT_IMPORT} marker could not be written ({e}); the ledger does not record it, so no run takes it for the period's table"),
        };
        line.error = Some(format!(
            "import {import}: {short}; the table {name} is not recorded in the family's ledger, {marked}: look into it, delete it and restore again"
        ));
        line
    }
}

fn refuse(mut line: RestoreLine, reason: String) -> RestoreLine {
    line.action.restoration = Restoration::Refused {
        reasons: vec![reason],
    };
    line
}

fn failed(mut line: RestoreLine, error: ControlPlaneError) -> RestoreLine {
    line.outcome = LineOutcome::Failed;
    line.error = Some(error.to_string());
    line
}

/// A tag value: at most 256 characters, as DynamoDB allows.
fn tag_value(text: &str) -> String {
    text.chars().take(256).collect()
}

/// What disagrees between a COMPLETED import (`ImportedItemCount`, `ErrorCount`) and the
/// archive's item count; `None` when every item came back.
fn import_shortfall(archived: u64, imported: Option<u64>, errors: Option<u64>) -> Option<String> {
    let mut wrong = Vec::new();
    match imported {
        Some(n) if n == archived => {}
        Some(n) => wrong.push(format!("{n} item(s) imported but the archive lists {archived}")),
        None => wrong.push(format!(
            "DescribeImport gives no imported item count (the archive lists {archived})"
        )),
    }
    if let Some(errors) = errors.filter(|n| *n > 0) {
        wrong.push(format!(
            "{errors} item(s) could not be imported (ErrorCount; ImportTable logs them to CloudWatch Logs)"
        ));
    }
    (!wrong.is_empty()).then(|| wrong.join(", "))
}

/// ImportTable's idempotency token for one table and export (at most 64 characters).
fn client_token(table: &str, export: &str) -> String {
    Sha256::digest(format!("{table}\n{export}"))
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An import is the period's table only when DescribeImport counts every item the receipt
    /// lists and no error: anything else is named.
    #[test]
    fn an_import_short_of_the_archive_is_named() {
        assert_eq!(import_shortfall(7, Some(7), Some(0)), None);
        assert_eq!(import_shortfall(7, Some(7), None), None);
        let short = import_shortfall(7, Some(6), Some(1)).unwrap();
        assert!(
            short.contains("6 item(s) imported but the archive lists 7"),
            "{short}"
        );
        assert!(short.contains("1 item(s) could not be imported"), "{short}");
        let unknown = import_shortfall(7, None, None).unwrap();
        assert!(unknown.contains("gives no imported item count"), "{unknown}");
    }

    #[test]
    fn the_import_token_is_stable_and_fits() {
        let token = client_token("t", "arn:export");
        assert_eq!(token, client_token("t", "arn:export"));
        assert_ne!(token, client_token("t", "arn:other"));
        assert_eq!(token.len(), 32);
    }
}
