//! What the account holds: tables and their indexes, resource policies, item writes, scalable
//! targets and their policies, exports and imports.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::ledger::StoredRecord;
use ddb_rollover::policy::{Billing, KeySchema, LocalIndex, Projection, StreamSetting, TableClass};
use ddb_rollover::policy::{
    ObservedScalableTarget, ObservedScalingPolicy, ScalableDimension, ScalableKey, TargetValue,
};
use ddb_rollover::table::{
    ExportStatus, ObservedEncryption, ObservedIndex, ObservedLocalIndex, ObservedTable, TableStatus,
};

use crate::budgets::Decreases;
use crate::maker::Maker;
use crate::s3;
use crate::s3::S3Object;
use crate::warm::Warm;

/// The tag key `template.yaml`'s IAM conditions check (`aws:ResourceTag/ddb-rollover:family`).
pub const FAMILY_TAG: &str = "ddb-rollover:family";
/// The fake account's table ARNs: `{TABLE_ARN_PREFIX}{name}`.
pub const TABLE_ARN_PREFIX: &str = "arn:aws:dynamodb:us-east-1:123456789012:table/";

/// A table's or an index's status, as the fake keeps it (DynamoDB's, and the archiving that
/// follows a lost key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// CreateTable's, until the table is ready.
    Creating,
    /// An UpdateTable in progress.
    Updating,
    /// Ready.
    Active,
    /// DeleteTable's, until the table is gone.
    Deleting,
    /// The table's KMS key is disabled or its grant revoked: reads and writes fail; after
    /// [`KEY_LOSS_UNTIL_ARCHIVING`] DynamoDB starts archiving the table.
    InaccessibleEncryptionCredentials,
    /// Being archived: no operations are allowed; ARCHIVED after the account's `update_delay`.
    Archiving,
    /// Archived (ArchivalSummary): only a restore from its backup brings the data back.
    Archived,
}

impl Status {
    /// The status as DescribeTable reports it.
    pub fn observed(self) -> TableStatus {
        match self {
            Status::Creating => TableStatus::Creating,
            Status::Updating => TableStatus::Updating,
            Status::Active => TableStatus::Active,
            Status::Deleting => TableStatus::Deleting,
            Status::InaccessibleEncryptionCredentials => {
                TableStatus::Other("INACCESSIBLE_ENCRYPTION_CREDENTIALS".into())
            }
            Status::Archiving => TableStatus::Other("ARCHIVING".into()),
            Status::Archived => TableStatus::Other("ARCHIVED".into()),
        }
    }
}

/// How long a table's KMS key may stay inaccessible before DynamoDB archives the table
/// (TableDescription.TableStatus: "more than seven days").
pub const KEY_LOSS_UNTIL_ARCHIVING: Duration = Duration::days(7);

/// The fake account's ARN of the table `name`.
pub(crate) fn arn_of(name: &str) -> String {
    format!("{TABLE_ARN_PREFIX}{name}")
}

/// The table an ARN (or a name) names.
pub(crate) fn name_of_arn(arn: &str) -> &str {
    arn.strip_prefix(TABLE_ARN_PREFIX)
        .map_or(arn, |rest| rest.split('/').next().unwrap_or(rest))
}

/// A global secondary index.
#[derive(Clone, Debug, PartialEq)]
pub struct Gsi {
    /// Its name.
    pub name: String,
    /// Its key.
    pub key: KeySchema,
    /// Its projection.
    pub projection: Projection,
    /// In the table's billing mode.
    pub billing: Billing,
    /// Its decreases today (its own budget).
    pub decreases: Decreases,
    /// Its IndexStatus.
    pub status: Status,
    /// When its CREATING or UPDATING ends.
    pub ready_at: Option<DateTime<Utc>>,
    /// Who added it.
    pub maker: Maker,
    /// Its warm throughput.
    pub warm: Warm,
}

/// One table, with everything DynamoDB knows about it and who made it.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Its name.
    pub name: String,
    /// Its ARN.
    pub arn: String,
    /// Its status.
    pub status: Status,
    /// When the current CREATING / UPDATING / DELETING ends.
    pub ready_at: Option<DateTime<Utc>>,
    /// Its key schema.
    pub key: KeySchema,
    /// Its global secondary indexes.
    pub gsis: Vec<Gsi>,
    /// Its local secondary indexes.
    pub lsis: Vec<LocalIndex>,
    /// Its billing mode and capacity.
    pub billing: Billing,
    /// Its throughput decreases today.
    pub decreases: Decreases,
    /// Provisioned-to-on-demand switches.
    pub on_demand_switches: Vec<DateTime<Utc>>,
    /// Its table class.
    pub class: TableClass,
    /// When its class changed, for the 30-day limit.
    pub class_changes: Vec<DateTime<Utc>>,
    /// Whether DeleteTable is refused.
    pub deletion_protection: bool,
    /// Who turned deletion protection on (at CreateTable or by UpdateTable), while it is on.
    pub protected_by: Option<Maker>,
    /// Its DynamoDB stream, if on.
    pub stream: StreamSetting,
    /// The ARN of its latest DynamoDB stream (LatestStreamArn): a new one each time the stream
    /// is turned on, kept once it is turned off.
    pub stream_arn: Option<String>,
    /// Its encryption at rest.
    pub encryption: ObservedEncryption,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
    /// The TTL attribute when TTL is on.
    pub ttl: Option<String>,
    /// Whether point-in-time recovery is on.
    pub pitr: bool,
    /// Who made it.
    pub maker: Maker,
    /// The operator adopted it (wrote our family tag on purpose).
    pub adopted: bool,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Who deleted it (while DELETING, and once gone).
    pub deleted_by: Option<Maker>,
    /// Its warm throughput.
    pub warm: Warm,
    /// The items it holds (by key); application writes only add.
    pub items: BTreeSet<String>,
    /// Its resource-based policy, if any.
    pub resource_policy: Option<TablePolicy>,
    /// The TableId DynamoDB gave it at creation: a table made again under the name has another.
    pub table_id: String,
    /// The family ledger's records, when it is a ledger table, by (family, record key).
    pub records: BTreeMap<(String, String), StoredRecord>,
}

/// A table's resource-based policy.
#[derive(Clone, Debug, PartialEq)]
pub struct TablePolicy {
    /// The policy document.
    pub document: String,
    /// Its RevisionId.
    pub revision: String,
    /// When it starts to apply to requests.
    pub applies_at: DateTime<Utc>,
}

/// One change of a ledger item that took effect (PutItem, DeleteItem), by anyone: the ground
/// truth of who wrote each record, which the ledger's own items do not keep.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerWrite {
    /// When it took effect.
    pub at: DateTime<Utc>,
    /// Who wrote it.
    pub actor: Maker,
    /// The ledger table.
    pub ledger: String,
    /// The family partition written.
    pub family: String,
    /// The record's key.
    pub key: String,
    /// The item as written; `None`: deleted.
    pub record: Option<StoredRecord>,
}

/// An item write DynamoDB accepted.
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    /// When DynamoDB accepted it.
    pub at: DateTime<Utc>,
    /// The table written to.
    pub table: String,
    /// The item's key.
    pub item: String,
}

impl Table {
    /// The family its tag names, if any.
    pub fn family(&self) -> Option<&str> {
        self.tags.get(FAMILY_TAG).map(String::as_str)
    }

    /// Its global secondary index `name`.
    pub fn gsi(&self, name: &str) -> Option<&Gsi> {
        self.gsis.iter().find(|g| g.name == name)
    }

    /// What DescribeTable answers at `now` (none of the other calls' reads).
    pub fn observed(&self, now: DateTime<Utc>) -> ObservedTable {
        let partition = self.key.partition.clone();
        ObservedTable {
            name: self.name.clone(),
            status: self.status.observed(),
            key: Some(self.key.clone()),
            billing: self.billing,
            decreases_today: self.decreases.today(now),
            last_decrease: self.decreases.last(),
            last_switch_to_on_demand: self.on_demand_switches.iter().max().copied(),
            table_class: self.class,
            table_class_updated: self.class_changes.iter().max().copied(),
            arn: Some(self.arn.clone()),
            created: Some(self.created_at),
            table_id: Some(self.table_id.clone()),
            deletion_protection: self.deletion_protection,
            stream: self.stream,
            stream_arn: self.stream_arn.clone(),
            encryption: self.encryption.clone(),
            global_indexes: self
                .gsis
                .iter()
                .map(|g| ObservedIndex {
                    name: g.name.clone(),
                    status: g.status.observed(),
                    backfilling: g.status == Status::Creating,
                    billing: g.billing,
                    decreases_today: g.decreases.today(now),
                    last_decrease: g.decreases.last(),
                    key: Some(g.key.clone()),
                    projection: Some(g.projection.clone()),
                    warm: Some(g.warm.observed()),
                })
                .collect(),
            local_indexes: self
                .lsis
                .iter()
                .map(|l| ObservedLocalIndex {
                    name: l.name.clone(),
                    key: Some(KeySchema {
                        partition: partition.clone(),
                        sort: Some(l.sort.clone()),
                    }),
                    projection: Some(l.projection.clone()),
                })
                .collect(),
            warm: Some(self.warm.observed()),
            ..ObservedTable::active(&self.name, self.billing)
        }
        .described_only()
    }
}

/// A scaling policy on a scalable target.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalingPolicy {
    /// Its name.
    pub name: String,
    /// PolicyARN: given when the policy is first put, kept when it is put again.
    pub arn: String,
    /// `TargetTrackingScaling` or `StepScaling`.
    pub policy_type: String,
    /// The predefined metric it tracks, if target tracking.
    pub metric: Option<String>,
    /// Its target value, if target tracking.
    pub target_value: Option<f64>,
    /// Who put it.
    pub maker: Maker,
}

/// A scheduled action on a scalable target (PutScheduledAction).
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledAction {
    /// Its name.
    pub name: String,
    /// Who put it.
    pub maker: Maker,
}

/// A scalable target of Application Auto Scaling.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// Its resource and dimension.
    pub key: ScalableKey,
    /// MinCapacity.
    pub min: i64,
    /// MaxCapacity.
    pub max: i64,
    /// Its scaling policies.
    pub policies: Vec<ScalingPolicy>,
    /// Its scheduled actions.
    pub scheduled_actions: Vec<ScheduledAction>,
    /// Who registered it.
    pub maker: Maker,
}

impl Target {
    /// What DescribeScalableTargets and DescribeScalingPolicies report of it.
    pub fn observed(&self) -> ObservedScalableTarget {
        ObservedScalableTarget {
            key: self.key.clone(),
            min: self.min,
            max: self.max,
            policies: self
                .policies
                .iter()
                .map(|p| ObservedScalingPolicy {
                    name: p.name.clone(),
                    arn: Some(p.arn.clone()),
                    policy_type: p.policy_type.clone(),
                    metric: p.metric.clone(),
                    target_value: p.target_value.map(TargetValue),
                })
                .collect(),
            scheduled_actions: self.scheduled_actions.iter().map(|a| a.name.clone()).collect(),
        }
    }
}

/// One ImportTable: the table it creates and what it read (counted when it started).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// The table it creates.
    pub table: String,
    /// The bucket and the prefix of the data files it read: which archive a restore brought back.
    pub bucket: String,
    /// The S3 prefix it reads.
    pub data_prefix: String,
    /// `ImportedItemCount` and `ErrorCount`, or why it FAILED.
    pub counts: Result<(u64, u64), String>,
}

#[derive(Clone, Debug, PartialEq)]
/// An export of a table to S3 (ExportTableToPointInTime).
pub struct Export {
    /// Its ARN (`{table ARN}/export/{id}`).
    pub arn: String,
    /// The table exported.
    pub table: String,
    /// IN_PROGRESS, COMPLETED or FAILED.
    pub status: ExportStatus,
    /// When it ends.
    pub done_at: DateTime<Utc>,
    /// The bucket it writes to.
    pub bucket: String,
    /// Where the export writes, as AWS lays it out: `{prefix}/AWSDynamoDB/{id}/` holds
    /// `manifest-summary.json`, `manifest-files.json` and `data/`, written when it completes.
    pub directory: String,
    /// Its data files and their item counts.
    pub files: Vec<(String, u64)>,
    /// The instant it holds the table as of, and the items the table held then.
    pub export_time: DateTime<Utc>,
    /// The items the table held at `export_time`.
    pub items: BTreeSet<String>,
    /// The request's `S3BucketOwner`; the export FAILS when the bucket is not that account's.
    pub bucket_owner: Option<String>,
    /// Why it FAILED.
    pub failure: Option<String>,
}

impl Export {
    /// Its `manifest-summary.json`'s key (DescribeExport's `ExportManifest`).
    pub fn manifest_key(&self) -> String {
        aws_model::exports::summary_key(&self.directory)
    }

    /// Its `manifest-files.json`'s key.
    pub fn files_key(&self) -> String {
        aws_model::exports::files_key(&self.directory)
    }

    pub(crate) fn items(&self) -> u64 {
        self.files.iter().map(|(_, n)| n).sum()
    }

    /// The objects a COMPLETED export leaves in S3: data files and both manifests.
    pub fn objects(&self) -> Vec<(String, S3Object)> {
        s3::export_objects(
            &self.arn,
            &arn_of(&self.table),
            &self.directory,
            &self.files,
            self.export_time,
        )
    }
}

/// The scalable keys of a table's read and write, and of an index's.
pub fn key_for(table: &str, index: Option<&str>, dimension: ScalableDimension) -> ScalableKey {
    ScalableKey {
        resource_id: ddb_rollover::policy::resource_id(table, index),
        dimension,
    }
}
