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

/// Everything CreateTable needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableSpec {
    pub name: String,
    pub key: KeySchema,
    pub billing: Billing,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub global_indexes: Vec<IndexSpec>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub local_indexes: Vec<LocalIndex>,
    /// `None`: DynamoDB's default (Standard).
    pub table_class: Option<TableClass>,
    pub deletion_protection: bool,
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
    pub index: GlobalIndex,
    pub billing: Billing,
}

/// An UpdateTable that sets the billing mode and throughput of the table and its global
/// secondary indexes, in one call: DynamoDB needs every index's throughput with a switch to
/// provisioned, and counts each index's decreases on its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CapacityChange {
    pub name: String,
    pub from: Billing,
    pub to: Billing,
    /// The indexes whose throughput this call sets; empty for a table without indexes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<IndexCapacityChange>,
}

/// One global secondary index's part of a [`CapacityChange`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IndexCapacityChange {
    pub index: String,
    pub from: Billing,
    pub to: Billing,
}

/// Whether going from `from` to `to` lowers provisioned throughput.
pub fn lowers(from: Billing, to: Billing) -> bool {
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
    pub name: String,
    pub from: TableClass,
    pub to: TableClass,
}

/// TagResource: set these tags (added, or overwriting the same keys).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TagChange {
    pub name: String,
    pub arn: String,
    pub tags: BTreeMap<String, String>,
}

/// UpdateTimeToLive: turn TTL on with this attribute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TtlChange {
    pub name: String,
    pub attribute: String,
}

/// One UpdateTable that changes a setting besides capacity and class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SettingChange {
    pub name: String,
    pub setting: TableSetting,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TableSetting {
    DeletionProtection(bool),
    Stream(StreamSetting),
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
    pub parts: Vec<WarmPart>,
}

/// The table (`index` None) or one of its global indexes, from what DescribeTable reported to
/// what the UpdateTable asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WarmPart {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    pub from: WarmThroughput,
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
    pub name: String,
    pub table_arn: String,
    pub bucket: String,
    pub prefix: String,
    /// The final export after the seal (recorded in the final-export tag), not the archive
    /// export at `archive_after` (the export tag).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub after_seal: bool,
}

/// PutResourcePolicy of the table's policy with our seal statement added, conditional on the
/// revision it was read at; then the seal tag records when, and the revision put.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SealRequest {
    pub name: String,
    pub arn: String,
    pub document: String,
    pub expected_revision: String,
    pub at: DateTime<Utc>,
}

/// Our seal statement removed: DeleteResourcePolicy when the policy holds nothing else, else
/// PutResourcePolicy of the rest; both conditional on the revision read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnsealRequest {
    pub name: String,
    pub arn: String,
    /// The policy without our statement; `None`: delete the policy.
    pub rest: Option<String>,
    pub expected_revision: String,
}

/// ImportTable of an archive's data files into a new table (`restore`): the table as
/// [`TableSpec`] says, except what ImportTable cannot create (local indexes, tags, stream,
/// table class, deletion protection: the spec leaves them out).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportRequest {
    pub spec: TableSpec,
    pub bucket: String,
    /// The export's `data/` folder: ImportTable reads every object under it.
    pub data_prefix: String,
    /// ImportTable's idempotency token: a retried call starts no second import.
    pub client_token: String,
}

/// DeleteTable, after lifting deletion protection if the table has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeleteRequest {
    pub name: String,
    pub lift_deletion_protection: bool,
    /// The completed export that archived the table, when archiving is on.
    pub archived_by: Option<String>,
}
