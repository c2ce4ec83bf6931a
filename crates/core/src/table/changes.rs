//! The change requests the planner hands the executor and the control plane carries out: one
//! struct per DynamoDB call (CreateTable, UpdateTable, TagResource, ...), holding exactly what
//! that call needs.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::policy::settings::{
    Billing, Encryption, GlobalIndex, KeySchema, LocalIndex, StreamSetting, TableClass,
};
use crate::policy::warm::WarmThroughput;
use crate::table::evidence::Receipt;

/// Everything CreateTable needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableSpec {
    /// The table's name.
    pub name: String,
    /// The partition key and optional sort key.
    pub key: KeySchema,
    /// Billing mode and, when provisioned, read and write capacity units.
    pub billing: Billing,
    /// The global secondary indexes to create with the table.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub global_indexes: Vec<IndexSpec>,
    /// The local secondary indexes, which only CreateTable can make.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub local_indexes: Vec<LocalIndex>,
    /// `None`: DynamoDB's default (Standard).
    pub table_class: Option<TableClass>,
    /// Whether deletion protection is on.
    pub deletion_protection: bool,
    /// The stream's view type; `None`: no stream.
    pub stream: StreamSetting,
    /// `None`: DynamoDB's default (AWS owned key).
    pub encryption: Option<Encryption>,
    /// The user's tags and ours.
    pub tags: BTreeMap<String, String>,
    /// Warm throughput for the table and each of `global_indexes`; `None`: DynamoDB's starting
    /// values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmThroughput>,
}

/// A global secondary index and its throughput, as CreateTable or an index creation sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IndexSpec {
    /// The index's name, key and projection.
    pub index: GlobalIndex,
    /// The index's billing mode and throughput.
    pub billing: Billing,
}

/// An UpdateTable that sets the billing mode and throughput of the table and its global
/// secondary indexes, in one call: DynamoDB needs every index's throughput with a switch to
/// provisioned, and counts each index's decreases on its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CapacityChange {
    /// The table's name.
    pub name: String,
    /// The table's billing as DescribeTable reported it.
    pub from: Billing,
    /// The billing the phase asks for.
    pub to: Billing,
    /// The indexes whose throughput this call sets; empty for a table without indexes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<IndexCapacityChange>,
}

/// One global secondary index's part of a [`CapacityChange`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IndexCapacityChange {
    /// The index's name.
    pub index: String,
    /// The index's billing as DescribeTable reported it.
    pub from: Billing,
    /// The billing the phase asks for.
    pub to: Billing,
}

/// Whether going from `from` to `to` lowers provisioned throughput.
pub(crate) fn lowers(from: Billing, to: Billing) -> bool {
    match (from, to) {
        (Billing::Provisioned(from), Billing::Provisioned(to)) => {
            to.read < from.read || to.write < from.write
        }
        _ => false,
    }
}

impl CapacityChange {
    /// Whether DynamoDB counts this update against the table's daily decrease budget.
    pub fn is_decrease(&self) -> bool {
        lowers(self.from, self.to)
    }

    /// Whether the table's own throughput or billing mode changes (an UpdateTable may change
    /// only its indexes').
    pub fn changes_table(&self) -> bool {
        self.from != self.to
    }

    /// Whether this is a provisioned to on-demand switch, which DynamoDB limits.
    pub fn is_switch_to_on_demand(&self) -> bool {
        matches!(
            (self.from, self.to),
            (Billing::Provisioned(_), Billing::OnDemand(_))
        )
    }
}

/// An UpdateTable that changes the table class; sent on its own, never with a capacity change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClassChange {
    /// The table's name.
    pub name: String,
    /// The table class DescribeTable reported.
    pub from: TableClass,
    /// The table class the phase asks for.
    pub to: TableClass,
}

/// TagResource: set these tags (added, or overwriting the same keys).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TagChange {
    /// The table's name.
    pub name: String,
    /// The table's ARN, which TagResource takes.
    pub arn: String,
    /// The tags to set, by key.
    pub tags: BTreeMap<String, String>,
}

impl TagChange {
    /// Sets the one tag `key` to `value`.
    pub(crate) fn one(name: &str, arn: &str, key: &str, value: String) -> TagChange {
        TagChange {
            name: name.to_string(),
            arn: arn.to_string(),
            tags: BTreeMap::from([(key.to_string(), value)]),
        }
    }
}

/// UpdateTimeToLive: turn TTL on with this attribute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TtlChange {
    /// The table's name.
    pub name: String,
    /// The item attribute that holds the expiry time, in epoch seconds.
    pub attribute: String,
}

/// One UpdateTable that changes a setting besides capacity and class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SettingChange {
    /// The table's name.
    pub name: String,
    /// The setting and the value to give it.
    pub setting: TableSetting,
}

/// A table setting [`SettingChange`] sets, with its new value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TableSetting {
    /// Deletion protection on or off.
    DeletionProtection(bool),
    /// The stream's view type; `None`: stream off.
    Stream(StreamSetting),
    /// Server-side encryption, with the AWS owned key or a KMS key.
    Encryption(Encryption),
    /// Create a global secondary index the policy added (one per UpdateTable).
    AddIndex(IndexSpec),
    /// Raise the warm throughput of the table and of the policy's indexes that are below the
    /// phase's (one UpdateTable); never a lower value, which DynamoDB refuses.
    Warm(WarmRaise),
}

/// The parts of a table whose warm throughput an UpdateTable raises, each to at least the
/// phase's on both dimensions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WarmRaise {
    /// The table's part and each raised index's part.
    pub parts: Vec<WarmPart>,
}

/// The table (`index` None) or one of its global indexes, from what DescribeTable reported to
/// what the UpdateTable asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WarmPart {
    /// The index's name; `None`: the table itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// The warm throughput DescribeTable reported.
    pub from: WarmThroughput,
    /// The warm throughput the UpdateTable asks for.
    pub to: WarmThroughput,
}

impl WarmRaise {
    /// The table's own part, if it is raised.
    pub fn table(&self) -> Option<&WarmPart> {
        self.parts.iter().find(|part| part.index.is_none())
    }

    /// The indexes' parts.
    pub fn indexes(&self) -> impl Iterator<Item = (&str, &WarmPart)> {
        self.parts
            .iter()
            .filter_map(|part| part.index.as_deref().map(|index| (index, part)))
    }
}

/// "table 12000 read / 4000 write units/s -> 40000 read / 20000 write units/s".
impl fmt::Display for WarmPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.index {
            None => write!(f, "table {} -> {}", self.from, self.to),
            Some(index) => write!(f, "index {index} {} -> {}", self.from, self.to),
        }
    }
}

impl fmt::Display for TableSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableSetting::DeletionProtection(on) => write!(f, "deletion protection {}", on_off(*on)),
            TableSetting::Stream(None) => f.write_str("stream off"),
            TableSetting::Stream(Some(view)) => write!(f, "stream {}", view.as_policy_str()),
            TableSetting::Encryption(encryption) => write!(f, "encryption {encryption}"),
            TableSetting::AddIndex(spec) => write!(
                f,
                "index {} ({}, {}, {})",
                spec.index.name, spec.index.key, spec.index.projection, spec.billing
            ),
            TableSetting::Warm(raise) => {
                let parts: Vec<String> = raise.parts.iter().map(ToString::to_string).collect();
                write!(f, "warm throughput: {}", parts.join(", "))
            }
        }
    }
}

pub(crate) fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// ExportTableToPointInTime of the table as it is now, to `s3://{bucket}/{prefix}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExportRequest {
    /// The table's name.
    pub name: String,
    /// The table's ARN, which ExportTableToPointInTime takes.
    pub table_arn: String,
    /// The S3 bucket the export writes to.
    pub bucket: String,
    /// The key prefix in `bucket` the export writes under.
    pub prefix: String,
    /// `S3BucketOwner`: the account that must own `bucket`, or the export fails instead of
    /// writing into a bucket whose name passed to someone else
    /// (`policy::retention::Archive::expected_bucket_owner`).
    pub bucket_owner: String,
    /// The final export after the seal (recorded in the final-export tag), not the archive
    /// export at `archive_after` (the export tag).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub after_seal: bool,
}

/// PutResourcePolicy of the table's policy with our seal statement added, conditional on the
/// revision it was read at; then the seal tag records when, and the revision put.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SealRequest {
    /// The table's name.
    pub name: String,
    /// The table's ARN, which PutResourcePolicy takes.
    pub arn: String,
    /// The whole resource policy to put, as JSON, our seal statement included.
    pub document: String,
    /// The policy revision read before; DynamoDB refuses the put if it changed since.
    pub expected_revision: String,
    /// When the table is sealed, recorded in the seal tag.
    pub at: DateTime<Utc>,
}

/// Our seal statement removed: DeleteResourcePolicy when the policy holds nothing else, else
/// PutResourcePolicy of the rest; both conditional on the revision read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnsealRequest {
    /// The table's name.
    pub name: String,
    /// The table's ARN, which the resource policy calls take.
    pub arn: String,
    /// The policy without our statement; `None`: delete the policy.
    pub rest: Option<String>,
    /// The policy revision read before; DynamoDB refuses the call if it changed since.
    pub expected_revision: String,
}

/// ImportTable of an archive's data files into a new table (`restore`): the table as
/// [`TableSpec`] says, except what ImportTable cannot create (local indexes, tags, stream,
/// table class, deletion protection: the spec leaves them out).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportRequest {
    /// The table to create, without what ImportTable cannot create.
    pub spec: TableSpec,
    /// The S3 bucket that holds the archive.
    pub bucket: String,
    /// The export's `data/` folder: ImportTable reads every object under it.
    pub data_prefix: String,
    /// ImportTable's idempotency token: a retried call starts no second import.
    pub client_token: String,
}

/// DeleteTable, after lifting deletion protection if the table has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeleteRequest {
    /// The table's name.
    pub name: String,
    /// Whether to turn deletion protection off before DeleteTable.
    pub lift_deletion_protection: bool,
    /// The completed export that archived the table, when archiving is on.
    pub archived_by: Option<String>,
    /// What the deletion relies on, written to the family's ledger just before DeleteTable:
    /// the table's identity and period, and the proven archive. Only `restore` (naming it)
    /// brings the period back; `create_new` never makes it again.
    pub receipt: Receipt,
}
