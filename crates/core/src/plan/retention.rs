//! Retention steps for resize_old: export old tables to S3, and delete the oldest once they are
//! past `delete_after`, archived first when archiving is on, within the per-run budget, never
//! the current, a future or one of the newest `keep_newest` tables, never inside a table's
//! write grace, and only with the positive evidence the table's verdict carries (our family
//! tag, the policy's key and local indexes, nothing foreign on it).

use std::collections::{BTreeMap, BTreeSet};

use crate::plan::context::{Context, Owned};
use crate::plan::decision::{Decision, PlanItem};
use crate::plan::deferral::DeferralCause;
use crate::plan::verdict::NoEvidence;
use crate::policy::tags::{keep_until, TAG_ARCHIVED};
use crate::table::archive::ArchiveProof;
use crate::table::changes::{DeleteRequest, ExportRequest, TagChange};
use crate::table::{ArchiveState, ExportStatus, ObservedTable, TableStatus};

impl Context<'_> {
    /// The retention items of each table, by table name; empty without `[retention]`.
    /// `owned` is sorted oldest first, so the per-run delete budget goes to the oldest tables.
    pub(crate) fn retention_items(&self, owned: &[Owned]) -> BTreeMap<String, Vec<PlanItem>> {
        let mut items: BTreeMap<String, Vec<PlanItem>> = BTreeMap::new();
        // The tables in the sealed deletion's steps this run; any other sealed table is unsealed.
        let mut sealing = BTreeSet::new();
        let Some(retention) = &self.policy.retention else {
            self.unseal_items(owned, &sealing, &mut items);
            return items;
        };
        // The newest N among the tables up to the last pre-built period: a look-alike or a
        // table made for a far-future period (by hand, or by a create_new with a clock years
        // ahead) is not one of the newest and must not push the real ones out.
        let horizon = -i64::from(self.policy.premake);
        // Oldest first: the far-future ones are the last, after every counted one.
        let counted = owned.iter().filter(|o| self.age(o.slot) >= horizon).count();
        let keep_from = counted.saturating_sub(retention.keep_newest as usize);
        let mut deletes_left = retention.max_deletes_per_run;
        for (index, o) in owned.iter().enumerate() {
            let age = self.age(o.slot);
            if age < 1 {
                continue;
            }
            let table = o.table;
            let state = table.archive_state();
            let archive_due = self.policy.archive().filter(|a| age >= i64::from(a.after));
            let delete_due = retention
                .delete_after
                .is_some_and(|after| age >= i64::from(after));
            let mut steps = Vec::new();
            if (archive_due.is_some() || delete_due) && self.in_grace(o.slot) {
                let until = self
                    .policy
                    .grace_end(o.slot)
                    .map(|t| t.to_rfc3339())
                    .unwrap_or_default();
                steps.push(self.item(
                    o,
                    Decision::Skipped,
                    format!("age {age} is past retention's ages but the table is in its write grace until {until}: neither archived nor deleted before"),
                ));
                items.insert(table.name.clone(), steps);
                continue;
            }

            // Restored by `restore`: kept as the operator asked, whatever its age.
            let kept = table
                .tags
                .as_ref()
                .and_then(keep_until)
                .filter(|until| self.now < *until);
            if let (Some(until), true) = (kept, archive_due.is_some() || delete_due) {
                steps.push(self.item(
                    o,
                    Decision::Skipped,
                    format!(
                        "age {age} is past retention's ages but the table was restored to be kept until {} (restore --keep): neither archived nor deleted before",
                        until.to_rfc3339()
                    ),
                ));
                items.insert(table.name.clone(), steps);
                continue;
            }

            // Record a completed export, so later runs need no DescribeExport.
            let archived_tag = table.tags.as_ref().is_none_or(|t| t.contains_key(TAG_ARCHIVED));
            if let (Some(export), false) = (&table.export, archived_tag) {
                if export.status == ExportStatus::Completed {
                    if let Some(arn) = table.arn.clone() {
                        let when = export.end_time.unwrap_or(self.now).to_rfc3339();
                        steps.push(self.item(
                            o,
                            Decision::Tag(TagChange {
                                name: table.name.clone(),
                                arn,
                                tags: BTreeMap::from([(TAG_ARCHIVED.to_string(), when)]),
                            }),
                            format!("export {} COMPLETED: record the table as archived", export.arn),
                        ));
                    }
                }
            }

            if delete_due {
                let delete_after = retention.delete_after.unwrap_or_default();
                let archived_by = match &state {
                    ArchiveState::Completed { export } => Some(export.clone()),
                    _ if archive_due.is_none() => Some(None),
                    _ => None,
                };
                if index < keep_from && o.verdict.not_deletable.is_empty() && self.policy.archive().is_some()
                {
                    sealing.insert(table.name.clone());
                }
                let step = if index >= keep_from {
                    Some((
                        Decision::Skipped,
                        format!(
                            "age {age} is past delete_after ({delete_after}) but the table is one of the newest {} (keep_newest): kept",
                            retention.keep_newest
                        ),
                    ))
                } else if !o.verdict.not_deletable.is_empty() {
                    let missing: Vec<String> =
                        o.verdict.not_deletable.iter().map(ToString::to_string).collect();
                    Some((
                        Decision::Skipped,
                        format!(
                            "age {age} is past delete_after ({delete_after}) but there is no positive evidence it may be deleted: {}. Kept",
                            missing.join("; ")
                        ),
                    ))
                } else if table.status != TableStatus::Active {
                    Some((
                        deferred(DeferralCause::TableBusy),
                        format!(
                            "due for deletion (age {age}) but {}: a later run deletes it",
                            table.status.as_str()
                        ),
                    ))
                } else if sealing.contains(&table.name) {
                    Some(self.sealed_deletion(o, age, delete_after, &mut deletes_left))
                } else if let Some(why) = archived_by.as_ref().and_then(|_| unproven_archive(self, table)) {
                    Some((
                        deferred(DeferralCause::ArchiveUnproven),
                        format!("due for deletion (age {age}) but {why}: kept until a run proves it"),
                    ))
                } else if let Some(archived_by) = archived_by {
                    if deletes_left == 0 {
                        Some((
                            deferred(DeferralCause::DeleteBudget),
                            format!(
                                "due for deletion (age {age}) but this run's budget of {} deletions (max_deletes_per_run) is used: the next run deletes it",
                                retention.max_deletes_per_run
                            ),
                        ))
                    } else if let Some(receipt) = self.receipt(o, None) {
                        deletes_left -= 1;
                        let mut reason = format!("age {age} is past delete_after ({delete_after})");
                        if let Some(export) = &archived_by {
                            reason.push_str(&format!(", archived by export {export}"));
                        }
                        if let Some(proof) = &table.archive_proof {
                            reason.push_str(&format!("; {}", proof.describe()));
                        }
                        if table.deletion_protection {
                            reason.push_str("; lift deletion protection just before");
                        }
                        Some((
                            Decision::Delete(DeleteRequest {
                                name: table.name.clone(),
                                lift_deletion_protection: table.deletion_protection,
                                archived_by,
                                receipt,
                            }),
                            reason,
                        ))
                    } else {
                        Some((
                            Decision::Skipped,
                            format!("due for deletion (age {age}) but DescribeTable did not give its identity and key, which its deletion's receipt records: kept"),
                        ))
                    }
                } else {
                    // Not archived yet: the archive step below explains; deleted once COMPLETED.
                    None
                };
                if let Some((decision, reason)) = step {
                    let deleting = matches!(decision, Decision::Delete(_));
                    steps.push(self.item(o, decision, reason));
                    if deleting {
                        steps.extend(self.deregister_deleted_item(o));
                        steps.extend(self.unmap_deleted_item(o));
                        items.insert(table.name.clone(), steps);
                        continue;
                    }
                }
            }

            if let Some(archive) = archive_due {
                let waiting = if delete_due {
                    "; the deletion relies on a later export, after the seal"
                } else {
                    ""
                };
                // The export's reason, or why it cannot be sent (no account to name as the
                // bucket's owner: never on AWS, whose table ARNs carry it).
                let export_now = |reason: String| {
                    table
                        .arn
                        .clone()
                        .map(|table_arn| match archive.expected_bucket_owner(&table_arn) {
                            Some(bucket_owner) => (
                                Decision::Export(ExportRequest {
                                    name: table.name.clone(),
                                    table_arn,
                                    bucket: archive.bucket.clone(),
                                    prefix: archive.prefix_for(&table.name),
                                    bucket_owner,
                                    after_seal: false,
                                }),
                                reason,
                            ),
                            None => (Decision::Unchanged, no_owner(&table_arn, &archive.bucket)),
                        })
                };
                let step = match &state {
                    ArchiveState::Completed { .. } => None,
                    _ if table.status != TableStatus::Active => Some((
                        deferred(DeferralCause::TableBusy),
                        format!("due for archiving but {}: a later run exports it", table.status.as_str()),
                    )),
                    ArchiveState::InProgress { export: arn } => Some((
                        Decision::Unchanged,
                        format!("export {arn} IN_PROGRESS{waiting}"),
                    )),
                    ArchiveState::Unknown { export: arn } => Some((
                        Decision::Unchanged,
                        format!("export {arn} recorded but its state could not be read; a later run checks again"),
                    )),
                    ArchiveState::Failed { message, .. } => export_now(format!(
                        "the last export FAILED ({message}): export again to s3://{}/{}",
                        archive.bucket,
                        archive.prefix_for(&table.name)
                    )),
                    ArchiveState::NotStarted if table.point_in_time_recovery != Some(true) => Some((
                        deferred(DeferralCause::PointInTimeRecoveryOff),
                        format!(
                            "age {age} is past archive_after ({}) but exports need point-in-time recovery: turned on by this run, exported by a later one",
                            archive.after
                        ),
                    )),
                    ArchiveState::NotStarted => export_now(format!(
                        "age {age} is past archive_after ({}): export to s3://{}/{}{waiting}",
                        archive.after,
                        archive.bucket,
                        archive.prefix_for(&table.name)
                    )),
                };
                if let Some((decision, reason)) = step {
                    steps.push(self.item(o, decision, reason));
                }
            }
            if !steps.is_empty() {
                items.insert(table.name.clone(), steps);
            }
        }
        self.unseal_items(owned, &sealing, &mut items);
        items
    }
}

/// Why an archived table's deletion waits for its archive's proof, if it does: with archiving
/// on, only a [`ArchiveProof::Proven`] export (manifest, every data file, counts that agree)
/// lets the table go.
fn unproven_archive(ctx: &Context, table: &ObservedTable) -> Option<String> {
    ctx.policy.archive()?;
    match &table.archive_proof {
        Some(ArchiveProof::Proven { .. }) => None,
        Some(ArchiveProof::Unproven { reason, .. }) => Some(format!("its archive is not proven: {reason}")),
        None => Some("its archive was not checked in S3 this run".into()),
    }
}

/// Why a table's export is not sent: its ARN names no account to expect as the bucket's owner.
pub(super) fn no_owner(table_arn: &str, bucket: &str) -> String {
    format!(
        "due for export, but its ARN {table_arn} names no account to expect as the owner of {bucket}: set retention.bucket_owner"
    )
}

/// A deferral the next run takes up again, with no earlier time to say.
fn deferred(cause: DeferralCause) -> Decision {
    Decision::Deferred {
        retry_after: None,
        cause,
    }
}

/// The warnings for tables past `delete_after` that retention keeps for want of evidence that
/// they are this family's: without a family tag (hand-made, or made before the tag; an operator
/// adopts them or keeps them knowingly), and, once, on an endpoint that cannot read tags.
pub(crate) fn kept_warnings(ctx: &Context, owned: &[Owned]) -> Vec<String> {
    let Some(delete_after) = ctx.policy.retention.as_ref().and_then(|r| r.delete_after) else {
        return Vec::new();
    };
    let due: Vec<&Owned> = owned
        .iter()
        .filter(|o| ctx.age(o.slot) >= i64::from(delete_after))
        .collect();
    let kept_for = |missing: NoEvidence| -> Vec<&str> {
        due.iter()
            .filter(|o| o.verdict.not_deletable.contains(&missing))
            .map(|o| o.table.name.as_str())
            .collect()
    };
    let mut warnings = Vec::new();
    let untagged = kept_for(NoEvidence::NoFamilyTag);
    if !untagged.is_empty() {
        warnings.push(format!(
            "{} table(s) past retention.delete_after are kept: the ledger records them, but their family tag is gone (a deletion never rests on less evidence than a table was made with): {}. \
             `ddb-rollover adopt` tags a table an operator vouches for again",
            untagged.len(),
            listed(&untagged)
        ));
    }
    warnings
}

/// "a, b, c, d, e and 3 more".
fn listed(names: &[&str]) -> String {
    const SHOWN: usize = 5;
    let mut text = names.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}
