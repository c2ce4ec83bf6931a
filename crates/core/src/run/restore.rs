//! `restore`: an archived period comes back. For each period, the newest export (by its
//! summary's `exportTime`) under the
//! archive prefix that S3 proves a complete export of this table (its manifest naming the
//! table, every data file under its `data/` as listed and readable, none due to expire,
//! counts that agree, every read expecting the bucket's owner; the same proof retention
//! deletes on, [`crate::table::archive`]) is imported with ImportTable into `{prefix}_{label}`, with the
//! policy's key and global indexes and the capacity of the phase the period's age calls for.
//! Once the import COMPLETED and the table is ACTIVE it gets our family and period tags and
//! `ddb-rollover:keep-until` (now + the operator's keep), but only when DescribeImport counts
//! every item the archive lists and no error; otherwise the period fails and the table stays
//! untagged, so nothing of ours claims a short table. From then on `status`, the phases and
//! the application's fan-out queries treat it as any other table, and retention neither
//! archives nor deletes it before the keep ends (then it is exported again, since it may have
//! been written to, and deleted once that export is proven).
//!
//! ImportTable cannot create local secondary indexes, tags, a stream, a table class or deletion
//! protection: the runs add what they look after (tags, stream, deletion protection, the
//! phase's class); a policy with local indexes gets a table without them, which retention then
//! never deletes (its key layout is not the policy's), said on the line. Refused, before any
//! change: a period whose table exists, the current or a future period, a policy without
//! archiving, a period with no proven archive. Dry run unless asked. CLI only: an import takes
//! longer than a Lambda function may run.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::plan::restore::restore_spec;
use crate::plan::Operation;
use crate::policy::period::Slot;
use crate::policy::tags::{own_tags, TAG_KEEP_UNTIL, TAG_SHORT_IMPORT};
use crate::policy::Policy;
use crate::run::archive::Bucket;
use crate::run::clock::CheckedInstant;
use crate::run::control::{ControlPlane, ControlPlaneError};
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
pub type RestoreLine = OperatorLine<PeriodRestoration>;

/// What `restore` did with each period it was asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
    let owner = match policy.archive() {
        Some(archive) => archive_owner(control, policy, archive).await,
        None => Ok(None),
    };
    let mut tables = Vec::new();
    for &slot in slots {
        tables.push(restore_one(control, policy, now, keep_until, slot, &owner, options).await);
    }
    Ok(RestoreReport {
        at: now,
        prefix: policy.prefix.clone(),
        dry_run: options.dry_run,
        keep_until,
        tables,
    })
}

/// The account every read of the archive expects to own its bucket: `retention.bucket_owner`,
/// else the account of the family's tables ([`crate::policy::retention::Archive::expected_bucket_owner`]
/// of the first one DescribeTable shows: the period's own is gone, and a table named without
/// an ARN is always this account's). `None` when the family has no table to ask.
async fn archive_owner<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    archive: &crate::policy::retention::Archive,
) -> Result<Option<String>, ControlPlaneError> {
    if let Some(owner) = &archive.bucket_owner {
        return Ok(Some(owner.clone()));
    }
    for name in control.list_table_names(&format!("{}_", policy.prefix)).await? {
        let arn = match control.describe_table(&name).await {
            Ok(table) => table.and_then(|t| t.arn),
            // Deleted since it was listed: the next one tells.
            Err(e) if e.kind == crate::run::control::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if let Some(owner) = arn.as_deref().and_then(|arn| archive.expected_bucket_owner(arn)) {
            return Ok(Some(owner));
        }
    }
    Ok(None)
}

async fn restore_one<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    now: DateTime<Utc>,
    keep_until: DateTime<Utc>,
    slot: Slot,
    owner: &Result<Option<String>, ControlPlaneError>,
    options: RestoreOptions,
) -> RestoreLine {
    let calendar = policy.calendar();
    let (spec, phase) = restore_spec(policy, slot, now);
    let mut line = RestoreLine {
        table: spec.name.clone(),
        action: PeriodRestoration {
            period: calendar.label(slot),
            restoration: Restoration::Refused { reasons: Vec::new() },
        },
        outcome: LineOutcome::Refused,
        notes: Vec::new(),
        error: None,
    };
    let refuse = |mut line: RestoreLine, reason: String| {
        line.action.restoration = Restoration::Refused {
            reasons: vec![reason],
        };
        line
    };
    let failed = |mut line: RestoreLine, error: ControlPlaneError| {
        line.outcome = LineOutcome::Failed;
        line.error = Some(error.to_string());
        line
    };
    let Some(archive) = policy.archive() else {
        return refuse(
            line,
            "the policy archives nothing ([retention] archive_after and bucket)".into(),
        );
    };
    if slot >= calendar.floor(now) {
        return refuse(
            line,
            "the current and future periods are create_new's, not restore's".into(),
        );
    }
    match control.describe_table(&spec.name).await {
        Ok(None) => {}
        Ok(Some(table)) => {
            return refuse(
                line,
                format!(
                    "the table exists ({}): restore never replaces a table; delete it first, or `ddb-rollover adopt` a table an interrupted restore imported",
                    table.status.as_str()
                ),
            )
        }
        Err(e) if e.kind == crate::run::control::ErrorKind::NotFound => {}
        Err(e) => return failed(line, e),
    }
    let owner = match owner {
        Ok(Some(owner)) => owner,
        Ok(None) => {
            let bucket = &archive.bucket;
            let reason = format!(
                "no table of the family shows the account that must own s3://{bucket}: set retention.bucket_owner"
            );
            return refuse(line, reason);
        }
        Err(e) => return failed(line, e.clone()),
    };
    let prefix = archive.prefix_for(&spec.name);
    let bucket = Bucket {
        name: &archive.bucket,
        owner,
    };
    let found = match control.find_archives(&spec.name, bucket, &prefix).await {
        Ok(found) => found,
        Err(e) => return failed(line, e),
    };
    let proven = found.iter().rev().find_map(|(location, proof)| match proof {
        ArchiveProof::Proven { manifest, items, .. } => {
            Some((location.export.clone(), manifest.clone(), *items))
        }
        ArchiveProof::Unproven { .. } => None,
    });
    let Some((export, manifest, items)) = proven else {
        let mut reasons: Vec<String> = found
            .iter()
            .filter_map(|(location, proof)| match proof {
                ArchiveProof::Unproven { reason, .. } => Some(format!(
                    "s3://{}/{}: {reason}",
                    archive.bucket,
                    location.manifest.clone().unwrap_or_default()
                )),
                ArchiveProof::Proven { .. } => None,
            })
            .collect();
        if reasons.is_empty() {
            reasons.push(format!("no export under s3://{}/{prefix}", archive.bucket));
        }
        line.action.restoration = Restoration::Refused { reasons };
        return line;
    };
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
        export: export.clone(),
        manifest: manifest.clone(),
        items,
        phase,
        billing: spec.billing.to_string(),
    };
    if options.dry_run {
        line.outcome = LineOutcome::Planned;
        return line;
    }
    let request = ImportRequest {
        client_token: client_token(&spec.name, &export),
        bucket: archive.bucket.clone(),
        data_prefix: data_prefix(&manifest),
        spec,
    };
    let import = match control.import_table(&request).await {
        Ok(arn) => arn,
        Err(e) => return failed(line, e),
    };
    line.notes.push(format!("import {import}"));
    let deadline = control.now() + options.wait;
    let name = request.spec.name.clone();
    loop {
        let state = match control.describe_import(&name, &import).await {
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
                    line.outcome = LineOutcome::Failed;
                    // Marked, so that no run takes it for the period's table (its name and key
                    // are ours): never managed, archived or deleted until an operator decides.
                    let arn = table.arn.as_deref().unwrap_or_default();
                    let marker = TagChange::one(&name, arn, TAG_SHORT_IMPORT, tag_value(&short));
                    let marked = match control.tag_table(&marker).await {
                        Ok(()) => format!("marked {TAG_SHORT_IMPORT}, not ours: no run touches it"),
                        Err(e) => format!("its {TAG_SHORT_IMPORT} marker could not be written ({e}): do not let runs take it for the period's table"),
                    };
                    line.error = Some(format!(
                        "import {import}: {short}; the table {name} is left without our family tags, {marked}: look into it, delete it and restore again"
                    ));
                    return line;
                }
                let mut tags = policy.template.tags.clone();
                tags.extend(own_tags(&policy.prefix, &calendar, slot, &policy.hash()));
                tags.insert(TAG_KEEP_UNTIL.to_string(), keep_until.to_rfc3339());
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
                    Err(e) => failed(line, e),
                };
            }
            _ if control.now() >= deadline => {
                line.outcome = LineOutcome::Importing;
                line.notes.push(format!(
                    "still importing after {:?}: the table is not ours until it has our tags; once it is ACTIVE, `ddb-rollover adopt {name}` tags it",
                    options.wait
                ));
                return line;
            }
            _ => control.sleep(POLL).await,
        }
    }
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
