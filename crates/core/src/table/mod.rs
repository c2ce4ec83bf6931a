//! What a run sees of a table: the facts DescribeTable gives that decisions depend on.

pub(crate) mod archive;
pub(crate) mod changes;
pub(crate) mod evidence;
pub(crate) mod seal;
pub(crate) mod stream;

// What a table is and the changes to it, one name each; the evidence a table carries is the
// ledger's vocabulary (`crate::ledger`).
pub use archive::{
    ArchiveProof, ExportLocation, ImportState, ObjectBody, ObjectHead, READABLE_STORAGE_CLASSES,
};
pub use changes::{
    CapacityChange, ClassChange, DeleteRequest, ExportRequest, ImportRequest, IndexCapacityChange, IndexSpec,
    SettingChange, TableSetting, TableSpec, TagChange, TtlChange, WarmPart, WarmRaise,
};
pub use seal::{ResourcePolicy, SealRecord, NO_POLICY, SEAL_SID, SETTLE};
pub use stream::{
    DestinationChange, DestinationStatus, MappingChange, MappingRemoval, MappingState, MappingUpdate,
    ObservedDestination, ObservedMapping,
};

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::policy::scaling::ObservedScalableTarget;
use crate::policy::settings::{Billing, KeySchema, Projection, StreamSetting, TableClass};
use crate::policy::tags::{TAG_ARCHIVED, TAG_EXPORT};
use crate::policy::warm::WarmThroughput;
use evidence::TableIdentity;

/// A table's or an index's status, as DescribeTable reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TableStatus {
    /// Being created: ACTIVE within moments.
    Creating,
    /// An update is being carried out; the table still takes reads and writes.
    Updating,
    /// Being deleted.
    Deleting,
    /// Ready: takes reads, writes and updates.
    Active,
    /// Any other status (ARCHIVING, ARCHIVED, INACCESSIBLE_ENCRYPTION_CREDENTIALS,
    /// REPLICATION_NOT_AUTHORIZED, ...): never updated, takes no writes.
    Other(String),
}

impl TableStatus {
    /// The status for DescribeTable's TableStatus string; an unknown one is kept as [`TableStatus::Other`].
    pub fn from_wire(status: &str) -> TableStatus {
        match status {
            "CREATING" => TableStatus::Creating,
            "UPDATING" => TableStatus::Updating,
            "DELETING" => TableStatus::Deleting,
            "ACTIVE" => TableStatus::Active,
            other => TableStatus::Other(other.to_string()),
        }
    }

    /// What the status means for the table's writers, for every TableStatus DynamoDB's API
    /// reference lists (TableDescription): ACTIVE takes writes, and so does UPDATING ("the
    /// table remains available for data operations"); CREATING will, without anyone acting;
    /// every other status does not, and does not come back by itself. A status this version
    /// does not know counts as not taking writes.
    pub fn writes(&self) -> Writes {
        match self {
            TableStatus::Active | TableStatus::Updating => Writes::Taken,
            TableStatus::Creating => Writes::Soon,
            TableStatus::Deleting => Writes::Refused("being deleted"),
            TableStatus::Other(other) => Writes::Refused(match other.as_str() {
                "INACCESSIBLE_ENCRYPTION_CREDENTIALS" => {
                    "its KMS key is inaccessible, so reads and writes fail; DynamoDB archives it after seven days: restore access to the key"
                }
                "ARCHIVING" => {
                    "being archived (its KMS key was inaccessible for seven days): no operations are allowed"
                }
                "ARCHIVED" => "archived by DynamoDB (its KMS key was inaccessible): restore it from its backup, or delete it",
                "REPLICATION_NOT_AUTHORIZED" => {
                    "a global table replica whose replication a resource policy denies: writes may be refused"
                }
                _ => "in a status this version does not know, so not counted as taking writes",
            }),
        }
    }

    /// The status as DescribeTable spells it (`ACTIVE`, ...).
    pub fn as_str(&self) -> &str {
        match self {
            TableStatus::Creating => "CREATING",
            TableStatus::Updating => "UPDATING",
            TableStatus::Deleting => "DELETING",
            TableStatus::Active => "ACTIVE",
            TableStatus::Other(other) => other,
        }
    }
}

/// Whether a table in some status takes item writes ([`TableStatus::writes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// ACTIVE, UPDATING.
    Taken,
    /// CREATING: ACTIVE within moments, without anyone acting.
    Soon,
    /// Every other status, with what it means.
    Refused(&'static str),
}

/// One table as DescribeTable reported it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedTable {
    /// The table's name.
    pub name: String,
    /// The table's status.
    pub status: TableStatus,
    /// The primary key, as KeySchema and AttributeDefinitions describe it; `None` when the
    /// answer did not say (then only the name and tags can tell whose table it is).
    pub key: Option<KeySchema>,
    /// Billing mode and throughput.
    pub billing: Billing,
    /// How many times the table's provisioned throughput was lowered today (NumberOfDecreasesToday).
    pub decreases_today: u32,
    /// When the table's provisioned throughput was last lowered.
    pub last_decrease: Option<DateTime<Utc>>,
    /// When the table last switched to on-demand (BillingModeSummary).
    pub last_switch_to_on_demand: Option<DateTime<Utc>>,
    /// The table class (Standard or Standard-IA).
    pub table_class: TableClass,
    /// When the table class last changed (TableClassSummary).
    pub table_class_updated: Option<DateTime<Utc>>,
    /// The table's ARN; `None` when the answer did not give it.
    pub arn: Option<String>,
    /// When the table was created (CreationDateTime); with the ARN, the identity the ledger
    /// records. `None` when the answer did not give it.
    pub created: Option<DateTime<Utc>>,
    /// The TableId AWS assigned at CreateTable; `None` where the server gives none (moto,
    /// DynamoDB Local).
    pub table_id: Option<String>,
    /// Whether deletion protection is on.
    pub deletion_protection: bool,
    /// The stream's view type; `None`: no stream.
    pub stream: StreamSetting,
    /// The table's latest DynamoDB stream (`LatestStreamArn`), where event source mappings
    /// read; `None` when it never had one or the answer did not say.
    pub stream_arn: Option<String>,
    /// Whose key encrypts the table.
    pub encryption: ObservedEncryption,
    /// Global secondary indexes, as DescribeTable lists them.
    pub global_indexes: Vec<ObservedIndex>,
    /// Local secondary indexes, as DescribeTable lists them.
    pub local_indexes: Vec<ObservedLocalIndex>,
    /// The table's warm throughput (DescribeTable's WarmThroughput); `None` when the endpoint
    /// does not report it (dynalite, DynamoDB Local): then nothing is raised or waited for.
    pub warm: Option<ObservedWarm>,
    /// The next fields come from calls besides DescribeTable, made only when the policy needs
    /// them; `None` means not read.
    pub tags: Option<BTreeMap<String, String>>,
    /// DescribeTimeToLive's answer.
    pub ttl: Option<TtlState>,
    /// Whether point-in-time recovery is on (DescribeContinuousBackups).
    pub point_in_time_recovery: Option<bool>,
    /// The archive export named by the table's export tag, as DescribeExport reports it.
    pub export: Option<ExportState>,
    /// What S3 holds for the archive export, checked before a deletion: read only for an
    /// archived table of ours that is due for deletion.
    pub archive_proof: Option<ArchiveProof>,
    /// The table's resource-based policy (GetResourcePolicy): read for a table of ours due for
    /// deletion (someone else's statements keep it; the seal goes in it when archiving), and
    /// for one carrying our seal tag.
    pub resource_policy: Option<seal::ResourcePolicy>,
    /// The final export after the seal, named by the final-export tag, as DescribeExport
    /// reports it.
    pub final_export: Option<ExportState>,
    /// The scalable targets on the table and its GSIs (Application Auto Scaling), read when a
    /// decision needs them: autoscaling phases, capacity changes, deletions.
    pub scaling: Option<Vec<ObservedScalableTarget>>,
    /// The tags were asked for but the endpoint has no tagging API (DynamoDB Local).
    pub tags_unsupported: bool,
    /// The scalable targets were asked for but the endpoint has no Application Auto Scaling
    /// (DynamoDB Local, dynalite): no target can be on the table there.
    pub scaling_unsupported: bool,
    /// The resource-based policy was asked for but the endpoint has no GetResourcePolicy
    /// (dynalite, DynamoDB Local): no policy can be on the table there.
    pub resource_policy_unsupported: bool,
    /// The table's Kinesis data stream destinations (DescribeKinesisStreamingDestination): read
    /// for the family's tables when the policy names a stream, and for a table due for deletion
    /// (someone else's destination keeps it).
    pub destinations: Option<Vec<stream::ObservedDestination>>,
    /// The destinations were asked for but the endpoint has no such API (dynalite, DynamoDB
    /// Local, moto without the tests' proxy): no destination can be on the table there.
    pub destinations_unsupported: bool,
    /// The Lambda event source mappings on the table's latest DynamoDB stream
    /// (ListEventSourceMappings): read for create_new's tables when the policy names a consumer
    /// function, and for a table due for deletion that has a stream (someone else's mapping
    /// keeps it); `None` means not read.
    pub mappings: Option<Vec<stream::ObservedMapping>>,
    /// The mappings were asked for but the endpoint has no Lambda API.
    pub mappings_unsupported: bool,
}

/// One global secondary index as DescribeTable reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedIndex {
    /// The index's name.
    pub name: String,
    /// IndexStatus: CREATING, UPDATING, DELETING or ACTIVE.
    pub status: TableStatus,
    /// Still filling from the table's items after being added: no updates until done.
    pub backfilling: bool,
    /// In the table's billing mode: provisioned capacity, or on-demand maximums.
    pub billing: Billing,
    /// How many times the index's provisioned throughput was lowered today (NumberOfDecreasesToday).
    pub decreases_today: u32,
    /// When the index's provisioned throughput was last lowered.
    pub last_decrease: Option<DateTime<Utc>>,
    /// The index's key with its attribute types; `None` when the answer did not say (then the
    /// index is not provably the policy's).
    pub key: Option<KeySchema>,
    /// Which attributes the index holds; `None` when the answer did not say.
    pub projection: Option<Projection>,
    /// The index's warm throughput; `None` when the endpoint does not report it.
    pub warm: Option<ObservedWarm>,
}

/// A table's or an index's warm throughput as DescribeTable reports it, with its status:
/// UPDATING while a raise is carried out, then ACTIVE.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedWarm {
    /// Read and write units per second the table or index can take at once.
    #[serde(flatten)]
    pub units: WarmThroughput,
    /// ACTIVE, or UPDATING while a raise is carried out.
    pub status: TableStatus,
}

impl ObservedWarm {
    pub(crate) fn is_active(&self) -> bool {
        self.status == TableStatus::Active
    }
}

/// One local secondary index as DescribeTable reports it: set at CreateTable, never changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedLocalIndex {
    /// The index's name.
    pub name: String,
    /// The table's partition key and the index's sort key; `None` when the answer did not say.
    pub key: Option<KeySchema>,
    /// Which attributes the index holds; `None` when the answer did not say.
    pub projection: Option<Projection>,
}

impl ObservedIndex {
    /// Whether DynamoDB takes a throughput change for the index now.
    pub(crate) fn is_settled(&self) -> bool {
        self.status == TableStatus::Active && !self.backfilling
    }
}

/// Whose key encrypts the table, as SSEDescription reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "key", rename_all = "snake_case")]
pub enum ObservedEncryption {
    /// No SSEDescription (or DISABLED): DynamoDB's own key.
    #[default]
    AwsOwned,
    /// A KMS key, AWS managed or the customer's; DescribeTable does not say which.
    Kms {
        /// The KMS key's ARN, when the answer gives it.
        key_arn: Option<String>,
    },
}

/// DescribeTimeToLive's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TtlState {
    /// ENABLED, ENABLING, DISABLED or DISABLING.
    pub status: String,
    /// The item attribute TTL reads the expiry time from; `None` when TTL was never on.
    pub attribute: Option<String>,
}

impl TtlState {
    /// Whether TTL is on (or turning on) with this attribute.
    pub fn is_on_with(&self, attribute: &str) -> bool {
        matches!(self.status.as_str(), "ENABLED" | "ENABLING") && self.attribute.as_deref() == Some(attribute)
    }

    pub(crate) fn is_on(&self) -> bool {
        matches!(self.status.as_str(), "ENABLED" | "ENABLING")
    }
}

/// An export's progress, as DescribeExport reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExportStatus {
    /// Still writing to S3.
    InProgress,
    /// Finished: the data files and manifests are in S3.
    Completed,
    /// Gave up; DescribeExport says why.
    Failed,
}

/// One export as DescribeExport reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExportState {
    /// The export's ARN.
    pub arn: String,
    /// Its progress.
    pub status: ExportStatus,
    /// The instant the export holds the table as of (DescribeExport's ExportTime).
    pub export_time: Option<DateTime<Utc>>,
    /// When the export finished, as DescribeExport reports it.
    pub end_time: Option<DateTime<Utc>>,
    /// Why the export failed (FailureCode and FailureMessage), when it did.
    pub failure: Option<String>,
}

/// Where a table stands with its archive export: the one reading of the export and archived
/// tags and DescribeExport's answer, for the planner, `status` and the reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ArchiveState {
    /// The archived tag is set, or DescribeExport says COMPLETED: the table may be deleted.
    Completed {
        /// The export the export tag names, if any.
        export: Option<String>,
    },
    /// The export is still running.
    InProgress {
        /// The export's ARN.
        export: String,
    },
    /// The export failed: the table is not archived.
    Failed {
        /// The export's ARN.
        export: String,
        /// Why it failed, as DescribeExport says.
        message: String,
    },
    /// An export is recorded but its state was not read this run.
    Unknown {
        /// The export's ARN.
        export: String,
    },
    /// No export is recorded for the table.
    NotStarted,
}

impl ArchiveState {
    /// The state's name in the reports (`completed`, `in_progress`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            ArchiveState::Completed { .. } => "completed",
            ArchiveState::InProgress { .. } => "in_progress",
            ArchiveState::Failed { .. } => "failed",
            ArchiveState::Unknown { .. } => "unknown",
            ArchiveState::NotStarted => "not_started",
        }
    }
}

impl ObservedTable {
    /// The table's archive state, from its tags and the export they name (when read).
    pub(crate) fn archive_state(&self) -> ArchiveState {
        let tags = self.tags.as_ref();
        let export_tag = tags.and_then(|t| t.get(TAG_EXPORT)).cloned();
        if tags.is_some_and(|t| t.contains_key(TAG_ARCHIVED)) {
            return ArchiveState::Completed { export: export_tag };
        }
        match (&self.export, export_tag) {
            (Some(export), _) => match export.status {
                ExportStatus::Completed => ArchiveState::Completed {
                    export: Some(export.arn.clone()),
                },
                ExportStatus::InProgress => ArchiveState::InProgress {
                    export: export.arn.clone(),
                },
                ExportStatus::Failed => ArchiveState::Failed {
                    export: export.arn.clone(),
                    message: export.failure.clone().unwrap_or_else(|| "no reason given".into()),
                },
            },
            (None, Some(export)) => ArchiveState::Unknown { export },
            (None, None) => ArchiveState::NotStarted,
        }
    }

    /// The identity AWS gave the table, when DescribeTable told its ARN and creation time.
    pub fn identity(&self) -> Option<TableIdentity> {
        Some(TableIdentity::new(
            self.arn.as_deref()?,
            self.created?,
            self.table_id.as_deref(),
        ))
    }

    /// The table as DescribeTable alone gives it: none of the extra reads.
    pub fn described_only(&self) -> ObservedTable {
        ObservedTable {
            tags: None,
            ttl: None,
            point_in_time_recovery: None,
            export: None,
            archive_proof: None,
            resource_policy: None,
            final_export: None,
            scaling: None,
            tags_unsupported: false,
            scaling_unsupported: false,
            resource_policy_unsupported: false,
            destinations: None,
            destinations_unsupported: false,
            mappings: None,
            mappings_unsupported: false,
            ..self.clone()
        }
    }

    /// An ACTIVE, never-changed table, as a run that read its scalable targets, its Kinesis
    /// destinations and its event source mappings (none) sees it:
    /// the starting point for tests and fakes.
    pub fn active(name: &str, billing: Billing) -> ObservedTable {
        ObservedTable {
            name: name.to_string(),
            status: TableStatus::Active,
            key: None,
            billing,
            decreases_today: 0,
            last_decrease: None,
            last_switch_to_on_demand: None,
            table_class: TableClass::Standard,
            table_class_updated: None,
            arn: Some(format!("arn:aws:dynamodb:us-east-1:123456789012:table/{name}")),
            created: Some(DateTime::<Utc>::UNIX_EPOCH),
            table_id: None,
            deletion_protection: false,
            stream: None,
            stream_arn: None,
            encryption: ObservedEncryption::AwsOwned,
            global_indexes: Vec::new(),
            local_indexes: Vec::new(),
            warm: None,
            tags: None,
            ttl: None,
            point_in_time_recovery: None,
            export: None,
            archive_proof: None,
            resource_policy: None,
            final_export: None,
            scaling: Some(Vec::new()),
            tags_unsupported: false,
            scaling_unsupported: false,
            resource_policy_unsupported: false,
            destinations: Some(Vec::new()),
            destinations_unsupported: false,
            mappings: Some(Vec::new()),
            mappings_unsupported: false,
        }
    }
}
