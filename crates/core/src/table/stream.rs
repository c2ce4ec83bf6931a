//! A table's Kinesis data stream destinations, as DescribeKinesisStreamingDestination reports
//! them, and the change that enables the family's.

use serde::Serialize;

use crate::policy::stream::{KinesisDestination, Precision};

/// A destination's status (DestinationStatus in DynamoDB's API reference).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DestinationStatus {
    /// Being enabled: records are not yet promised to reach the stream.
    Enabling,
    /// Every item change is put into the stream.
    Active,
    /// Being disabled.
    Disabling,
    /// Disabled: no records, and the table may get another destination.
    Disabled,
    /// Enabling failed (the stream missing, Kinesis refusing): its description says why.
    EnableFailed,
    /// The precision is being changed; records still flow.
    Updating,
    /// A status this version does not know: counted as not streaming.
    Other(String),
}

impl DestinationStatus {
    /// The status for the API's DestinationStatus string.
    pub fn from_wire(status: &str) -> DestinationStatus {
        match status {
            "ENABLING" => DestinationStatus::Enabling,
            "ACTIVE" => DestinationStatus::Active,
            "DISABLING" => DestinationStatus::Disabling,
            "DISABLED" => DestinationStatus::Disabled,
            "ENABLE_FAILED" => DestinationStatus::EnableFailed,
            "UPDATING" => DestinationStatus::Updating,
            other => DestinationStatus::Other(other.to_string()),
        }
    }

    /// As the API spells it.
    pub fn as_str(&self) -> &str {
        match self {
            DestinationStatus::Enabling => "ENABLING",
            DestinationStatus::Active => "ACTIVE",
            DestinationStatus::Disabling => "DISABLING",
            DestinationStatus::Disabled => "DISABLED",
            DestinationStatus::EnableFailed => "ENABLE_FAILED",
            DestinationStatus::Updating => "UPDATING",
            DestinationStatus::Other(other) => other,
        }
    }

    /// Whether every item change reaches the stream: ACTIVE, or UPDATING its precision.
    pub fn streams(&self) -> bool {
        matches!(self, DestinationStatus::Active | DestinationStatus::Updating)
    }

    /// Whether the destination holds the table (or is about to): anything but DISABLED and
    /// ENABLE_FAILED. A table holds one such destination at a time.
    pub fn holds(&self) -> bool {
        !matches!(
            self,
            DestinationStatus::Disabled | DestinationStatus::EnableFailed
        )
    }
}

/// One of a table's Kinesis data stream destinations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedDestination {
    /// The Kinesis data stream's ARN.
    pub stream_arn: String,
    /// Where enabling (or disabling) it stands.
    pub status: DestinationStatus,
    /// Why, when DynamoDB says (ENABLE_FAILED's reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The records' creation-time precision, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
}

impl ObservedDestination {
    /// Whether this is the family's destination: the stream the policy names.
    pub fn is_to(&self, wanted: &KinesisDestination) -> bool {
        self.stream_arn == wanted.stream_arn.as_str()
    }
}

/// EnableKinesisStreamingDestination: stream the table's changes into the family's stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DestinationChange {
    /// The table's name.
    pub name: String,
    /// The family's stream and precision.
    #[serde(flatten)]
    pub destination: KinesisDestination,
}
