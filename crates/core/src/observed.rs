//! What a run sees of a table: the facts DescribeTable gives that decisions depend on.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::policy::{Capacity, KeySchema};
use crate::template::StreamSetting;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TableStatus {
    Creating,
    Updating,
    Deleting,
    Active,
    /// Any other status (ARCHIVING, INACCESSIBLE_ENCRYPTION_CREDENTIALS, ...): never updated.
    Other(String),
}

impl TableStatus {
    pub fn from_wire(status: &str) -> TableStatus {
        match status {
            "CREATING" => TableStatus::Creating,
            "UPDATING" => TableStatus::Updating,
            "DELETING" => TableStatus::Deleting,
            "ACTIVE" => TableStatus::Active,
            other => TableStatus::Other(other.to_string()),
        }
    }

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

/// How a table pays for throughput: the policy's wish for a phase, or what DescribeTable says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Billing {
    Provisioned(Capacity),
    OnDemand(OnDemandLimits),
}

/// On-demand maximum throughput (request units per second); `None` is DynamoDB's default, no
/// table-level maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OnDemandLimits {
    pub max_read: Option<i64>,
    pub max_write: Option<i64>,
}

impl std::fmt::Display for Billing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Billing::Provisioned(capacity) => capacity.fmt(f),
            Billing::OnDemand(OnDemandLimits {
                max_read: None,
                max_write: None,
            }) => f.write_str("on-demand"),
            Billing::OnDemand(limits) => {
                let max = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
                write!(
                    f,
                    "on-demand (max {} / {})",
                    max(limits.max_read),
                    max(limits.max_write)
                )
            }
        }
    }
}

/// DynamoDB's table classes: Standard-IA stores for less and charges more per request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TableClass {
    #[default]
    Standard,
    StandardIa,
}

impl TableClass {
    /// The policy's spelling: `standard` or `standard_ia`.
    pub fn from_policy_str(value: &str) -> Result<TableClass, String> {
        match value {
            "standard" => Ok(TableClass::Standard),
            "standard_ia" => Ok(TableClass::StandardIa),
            other => Err(format!(
                "unknown table class {other:?}: use \"standard\" or \"standard_ia\""
            )),
        }
    }

    pub fn as_policy_str(self) -> &'static str {
        match self {
            TableClass::Standard => "standard",
            TableClass::StandardIa => "standard_ia",
        }
    }
}

impl std::fmt::Display for TableClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_policy_str())
    }
}

/// One table as DescribeTable reported it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedTable {
    pub name: String,
    pub status: TableStatus,
    /// The primary key, as KeySchema and AttributeDefinitions describe it; `None` when the
    /// answer did not say (then only the name and tags can tell whose table it is).
    pub key: Option<KeySchema>,
    pub billing: Billing,
    pub decreases_today: u32,
    pub last_decrease: Option<DateTime<Utc>>,
    /// When the table last switched to on-demand (BillingModeSummary).
    pub last_switch_to_on_demand: Option<DateTime<Utc>>,
    pub table_class: TableClass,
    /// When the table class last changed (TableClassSummary).
    pub table_class_updated: Option<DateTime<Utc>>,
    pub arn: Option<String>,
    pub deletion_protection: bool,
    pub stream: StreamSetting,
    pub encryption: ObservedEncryption,
    /// The next fields come from calls besides DescribeTable, made only when the policy needs
    /// them; `None` means not read.
    pub tags: Option<BTreeMap<String, String>>,
    pub ttl: Option<TtlState>,
    pub point_in_time_recovery: Option<bool>,
    /// The archive export named by the table's export tag, as DescribeExport reports it.
    pub export: Option<ExportState>,
}

/// Whose key encrypts the table, as SSEDescription reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "key", rename_all = "snake_case")]
pub enum ObservedEncryption {
    /// No SSEDescription (or DISABLED): DynamoDB's own key.
    #[default]
    AwsOwned,
    /// A KMS key, AWS managed or the customer's; DescribeTable does not say which.
    Kms { key_arn: Option<String> },
}

/// DescribeTimeToLive's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TtlState {
    /// ENABLED, ENABLING, DISABLED or DISABLING.
    pub status: String,
    pub attribute: Option<String>,
}

impl TtlState {
    /// Whether TTL is on (or turning on) with this attribute.
    pub fn is_on_with(&self, attribute: &str) -> bool {
        matches!(self.status.as_str(), "ENABLED" | "ENABLING") && self.attribute.as_deref() == Some(attribute)
    }

    pub fn is_on(&self) -> bool {
        matches!(self.status.as_str(), "ENABLED" | "ENABLING")
    }
}

/// An export's progress, as DescribeExport reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExportStatus {
    InProgress,
    Completed,
    Failed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExportState {
    pub arn: String,
    pub status: ExportStatus,
    pub end_time: Option<DateTime<Utc>>,
    pub failure: Option<String>,
}

impl ObservedTable {
    /// An ACTIVE, never-changed table: the starting point for tests and fakes.
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
            deletion_protection: false,
            stream: None,
            encryption: ObservedEncryption::AwsOwned,
            tags: None,
            ttl: None,
            point_in_time_recovery: None,
            export: None,
        }
    }
}
