//! Retention steps for resize_old: export old tables to S3, and delete the oldest once they are
//! past `delete_after`, archived first when archiving is on, within the per-run budget, never
//! the current, a future or one of the newest `keep_newest` tables.

use std::collections::BTreeMap;

use super::{Context, Decision, Owned, PlanItem};
use crate::changes::{DeleteRequest, ExportRequest, TagChange};
use crate::deferral::DeferralCause;
use crate::observed::{ArchiveState, ExportStatus, TableStatus};
use crate::ownership::DeleteGuard;
use crate::tags::{TAG_ARCHIVED, TAG_FAMILY};

impl Context<'_> {
    /// The retention items of each table, by table name; empty without `[retention]`.
    /// `owned` is sorted oldest first, so the per-run delete budget goes to the oldest tables.
    pub fn retention_items(&self, owned: &[Owned]) -> BTreeMap<String, Vec<PlanItem>> {
        let mut items: BTreeMap<String, Vec<PlanItem>> = BTreeMap::new();
        let Some(retention) = &self.policy.retention else {
            return items;
        };
        let keep_from = owned.len().saturating_sub(retention.keep_newest as usize);
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
                let step = if index >= keep_from {
                    Some((
                        Decision::Skipped,
                        format!(
                            "age {age} is past delete_after ({delete_after}) but the table is one of the newest {} (keep_newest): kept",
                            retention.keep_newest
                        ),
                    ))
                } else if let DeleteGuard::KeyDiffers { have } = &o.delete {
                    Some((
                        Decision::Skipped,
                        format!(
                            "age {age} is past delete_after ({delete_after}) but its key is {}, not the policy's {}: not provably this policy's data, never deleted",
                            have,
                            self.policy.key
                        ),
                    ))
                } else if o.delete == DeleteGuard::FamilyTagMissing {
                    Some((
                        deferred(DeferralCause::FamilyTagMissing),
                        format!(
                            "due for deletion (age {age}) but it does not carry {TAG_FAMILY} = {:?} yet: this run tags it, a later run deletes it",
                            self.policy.prefix
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
                } else if let Some(archived_by) = archived_by {
                    if deletes_left == 0 {
                        Some((
                            deferred(DeferralCause::DeleteBudget),
                            format!(
                                "due for deletion (age {age}) but this run's budget of {} deletions (max_deletes_per_run) is used: the next run deletes it",
                                retention.max_deletes_per_run
                            ),
                        ))
                    } else {
                        deletes_left -= 1;
                        let mut reason = format!("age {age} is past delete_after ({delete_after})");
                        if let Some(export) = &archived_by {
                            reason.push_str(&format!(", archived by export {export}"));
                        }
                        if table.deletion_protection {
                            reason.push_str("; lift deletion protection just before");
                        }
                        Some((
                            Decision::Delete(DeleteRequest {
                                name: table.name.clone(),
                                lift_deletion_protection: table.deletion_protection,
                                archived_by,
                            }),
                            reason,
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
                        items.insert(table.name.clone(), steps);
                        continue;
                    }
                }
            }

            if let Some(archive) = archive_due {
                let waiting = if delete_due {
                    "; deleted once it completes"
                } else {
                    ""
                };
                let export_now = || {
                    table.arn.clone().map(|table_arn| {
                        Decision::Export(ExportRequest {
                            name: table.name.clone(),
                            table_arn,
                            bucket: archive.bucket.clone(),
                            prefix: archive.prefix_for(&table.name),
                        })
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
                    ArchiveState::Failed { message, .. } => export_now().map(|decision| {
                        (
                            decision,
                            format!("the last export FAILED ({message}): export again to s3://{}/{}", archive.bucket, archive.prefix_for(&table.name)),
                        )
                    }),
                    ArchiveState::NotStarted if table.point_in_time_recovery != Some(true) => Some((
                        deferred(DeferralCause::PointInTimeRecoveryOff),
                        format!(
                            "age {age} is past archive_after ({}) but exports need point-in-time recovery: turned on by this run, exported by a later one",
                            archive.after
                        ),
                    )),
                    ArchiveState::NotStarted => export_now().map(|decision| {
                        (
                            decision,
                            format!(
                                "age {age} is past archive_after ({}): export to s3://{}/{}{waiting}",
                                archive.after,
                                archive.bucket,
                                archive.prefix_for(&table.name)
                            ),
                        )
                    }),
                };
                if let Some((decision, reason)) = step {
                    steps.push(self.item(o, decision, reason));
                }
            }
            if !steps.is_empty() {
                items.insert(table.name.clone(), steps);
            }
        }
        items
    }
}

/// A deferral the next run takes up again, with no earlier time to say.
fn deferred(cause: DeferralCause) -> Decision {
    Decision::Deferred {
        retry_after: None,
        cause,
    }
}
