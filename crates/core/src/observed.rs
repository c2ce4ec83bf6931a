//! What a run sees of a table: the facts DescribeTable gives that decisions depend on.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::policy::Capacity;

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

/// How a table pays for throughput.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Billing {
    Provisioned(Capacity),
    OnDemand,
}

impl std::fmt::Display for Billing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Billing::Provisioned(capacity) => capacity.fmt(f),
            Billing::OnDemand => f.write_str("on-demand"),
        }
    }
}

/// One table as DescribeTable reported it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedTable {
    pub name: String,
    pub status: TableStatus,
    pub billing: Billing,
    pub decreases_today: u32,
    pub last_decrease: Option<DateTime<Utc>>,
}
