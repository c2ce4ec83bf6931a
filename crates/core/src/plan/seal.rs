//! Retention's deletion of a table when archiving is on, in three steps over several runs, so
//! the archive a deletion relies on holds every write DynamoDB accepted:
//! 1. seal against writes: our statement in the table's resource-based policy denies item
//!    writes to every principal (writers get AccessDeniedException, never silent loss);
//! 2. final export after the seal: a later run, once the seal has settled
//!    ([`SETTLE`](crate::table::seal::SETTLE)), exports the table; only an export whose
//!    ExportTime is after that counts;
//! 3. delete, once that export is proven in S3, and the policy is still the revision the seal
//!    put (a policy changed since means the seal counts again from then).
//!
//! A sealed table that stops being due for deletion (kept, in grace, a veto, the policy
//! changed) has our statement removed, and only ours.

use std::collections::{BTreeMap, BTreeSet};

use crate::plan::context::{Context, Owned};
use crate::plan::decision::{Decision, PlanItem};
use crate::plan::deferral::DeferralCause;
use crate::policy::tags::{TAG_FINAL_EXPORT, TAG_SEALED};
use crate::table::archive::ArchiveProof;
use crate::table::changes::{DeleteRequest, ExportRequest, SealRequest, TagChange, UnsealRequest};
use crate::table::seal::{SealRecord, SEAL_SID};
use crate::table::{ExportState, ExportStatus};

impl Context<'_> {
    /// This run's step of the deletion of `o` (due for deletion, archiving on, nothing vetoing
    /// it), taking one of the run's `deletes_left` while the table is in any of the steps.
    pub(super) fn sealed_deletion(
        &self,
        o: &Owned,
        age: i64,
        delete_after: u32,
        deletes_left: &mut u32,
    ) -> (Decision, String) {
        let table = o.table;
        let name = table.name.clone();
        let (Some(archive), Some(arn)) = (self.policy.archive(), table.arn.clone()) else {
            return (
                deferred(DeferralCause::ArchiveUnproven),
                format!("due for deletion (age {age}) but its ARN is unknown: it cannot be sealed against writes, so it is kept"),
            );
        };
        let Some(policy) = &table.resource_policy else {
            return (
                deferred(DeferralCause::ArchiveUnproven),
                format!(
                    "due for deletion (age {age}) but its resource-based policy was not read: it cannot be sealed against writes, so it is kept"
                ),
            );
        };
        if *deletes_left == 0 {
            return (
                deferred(DeferralCause::DeleteBudget),
                format!(
                    "due for deletion (age {age}) but this run's budget of deletions (max_deletes_per_run) is used: a later run seals, exports and deletes it"
                ),
            );
        }
        *deletes_left -= 1;

        if !policy.is_sealed() {
            return match policy.with_seal(&arn) {
                Ok(document) => (
                    Decision::Seal(SealRequest {
                        name,
                        arn,
                        document,
                        expected_revision: policy.expected_revision(),
                        at: self.now,
                    }),
                    format!(
                        "seal against writes: age {age} is past delete_after ({delete_after}); item writes are denied in its resource-based policy (statement {SEAL_SID}), then a later run makes the final export after the seal and deletes it"
                    ),
                ),
                Err(error) => (
                    deferred(DeferralCause::ArchiveUnproven),
                    format!("due for deletion (age {age}) but it cannot be sealed against writes: {error}. Kept"),
                ),
            };
        }

        let revision = policy.revision.clone().unwrap_or_default();
        let record = table
            .tags
            .as_ref()
            .and_then(|t| t.get(TAG_SEALED))
            .and_then(|v| SealRecord::from_tag(v))
            .filter(|r| r.revision == revision);
        let Some(record) = record else {
            let now = SealRecord {
                at: self.now,
                revision: revision.clone(),
            };
            return (
                Decision::Tag(TagChange {
                    name,
                    arn,
                    tags: BTreeMap::from([(TAG_SEALED.to_string(), now.tag_value())]),
                }),
                format!(
                    "seal against writes: our statement is in its resource-based policy, but revision {revision} is not the one the seal recorded (changed since, or never recorded): the seal counts from now"
                ),
            );
        };
        let settled = record.settled_at();
        if self.now < settled {
            return (
                Decision::Unchanged,
                format!(
                    "sealed against writes at {}: the final export after the seal waits until {} (the policy's propagation)",
                    record.at.to_rfc3339(),
                    settled.to_rfc3339()
                ),
            );
        }

        let recorded = table.tags.as_ref().and_then(|t| t.get(TAG_FINAL_EXPORT));
        let after_seal = |e: &ExportState| e.export_time.is_some_and(|t| t >= settled);
        match (&table.final_export, recorded) {
            (Some(export), _) if after_seal(export) && export.status == ExportStatus::Completed => {
                let receipt = |proof: &ArchiveProof| {
                    let archive = proof.record(export.export_time?)?;
                    self.receipt(o, Some(archive))
                };
                match &table.archive_proof {
                    Some(proof @ ArchiveProof::Proven { export: proven, .. }) if *proven == export.arn => {
                        match receipt(proof) {
                            Some(receipt) => (
                                Decision::Delete(DeleteRequest {
                                    name,
                                    lift_deletion_protection: table.deletion_protection,
                                    archived_by: Some(export.arn.clone()),
                                    receipt,
                                }),
                                format!(
                                    "delete: age {age} is past delete_after ({delete_after}), sealed against writes at {}, final export after the seal {} (as of {}); {}{}",
                                    record.at.to_rfc3339(),
                                    export.arn,
                                    export.export_time.map(|t| t.to_rfc3339()).unwrap_or_default(),
                                    proof.describe(),
                                    if table.deletion_protection {
                                        "; lift deletion protection just before"
                                    } else {
                                        ""
                                    }
                                ),
                            ),
                            None => (
                                Decision::Skipped,
                                format!("due for deletion (age {age}) but DescribeTable did not give its identity and key, which its deletion's receipt records: kept"),
                            ),
                        }
                    }
                    Some(ArchiveProof::Unproven { reason, .. }) => (
                        deferred(DeferralCause::ArchiveUnproven),
                        format!("due for deletion (age {age}) but its final export is not proven: {reason}: kept until a run proves it"),
                    ),
                    _ => (
                        deferred(DeferralCause::ArchiveUnproven),
                        format!("due for deletion (age {age}) but its final export was not checked in S3 this run: kept until a run proves it"),
                    ),
                }
            }
            (Some(export), _) if after_seal(export) && export.status == ExportStatus::InProgress => (
                Decision::Unchanged,
                format!(
                    "final export after the seal {} IN_PROGRESS: deleted once it completes and is proven",
                    export.arn
                ),
            ),
            (None, Some(value)) => (
                Decision::Unchanged,
                format!("final export after the seal {value} recorded but its state could not be read; a later run checks again"),
            ),
            _ if table.point_in_time_recovery == Some(false) => (
                deferred(DeferralCause::PointInTimeRecoveryOff),
                "sealed against writes, but the final export needs point-in-time recovery: turned on by this run, exported by a later one".to_string(),
            ),
            (export, _) => {
                let why = match export {
                    Some(e) if e.status == ExportStatus::Failed => {
                        format!(" (the last one FAILED: {})", e.failure.clone().unwrap_or_default())
                    }
                    Some(_) => " (the recorded one is from before the seal)".to_string(),
                    None => String::new(),
                };
                let Some(bucket_owner) = archive.expected_bucket_owner(&arn) else {
                    return (Decision::Unchanged, super::retention::no_owner(&arn, &archive.bucket));
                };
                (
                    Decision::Export(ExportRequest {
                        name: name.clone(),
                        table_arn: arn,
                        bucket: archive.bucket.clone(),
                        prefix: archive.prefix_for(&name),
                        bucket_owner,
                        after_seal: true,
                    }),
                    format!(
                        "final export after the seal{why}: sealed at {}, export to s3://{}/{}; deleted once it is proven",
                        record.at.to_rfc3339(),
                        archive.bucket,
                        archive.prefix_for(&name)
                    ),
                )
            }
        }
    }

    /// Our seal removed from every sealed table of `owned` that is not in the deletion's steps
    /// this run (`sealing`): it stopped being due for deletion.
    pub(super) fn unseal_items(
        &self,
        owned: &[Owned],
        sealing: &BTreeSet<String>,
        items: &mut BTreeMap<String, Vec<PlanItem>>,
    ) {
        for o in owned {
            let table = o.table;
            let (Some(policy), Some(arn)) = (&table.resource_policy, &table.arn) else {
                continue;
            };
            if !policy.is_sealed() || sealing.contains(&table.name) {
                continue;
            }
            let item = match policy.without_seal() {
                Ok(rest) => self.item(
                    o,
                    Decision::Unseal(UnsealRequest {
                        name: table.name.clone(),
                        arn: arn.clone(),
                        expected_revision: policy.expected_revision(),
                        rest: rest.clone(),
                    }),
                    format!(
                        "sealed against writes but no longer due for deletion: remove our statement {SEAL_SID} ({})",
                        if rest.is_some() {
                            "the rest of its resource-based policy is put back as it is"
                        } else {
                            "it is the whole resource-based policy: delete it"
                        }
                    ),
                ),
                Err(error) => self.item(
                    o,
                    Decision::Skipped,
                    format!("sealed against writes but no longer due for deletion; our statement cannot be removed: {error}"),
                ),
            };
            items.entry(table.name.clone()).or_default().push(item);
        }
    }
}

/// A deferral the next run takes up again, with no earlier time to say.
fn deferred(cause: DeferralCause) -> Decision {
    Decision::Deferred {
        retry_after: None,
        cause,
    }
}
