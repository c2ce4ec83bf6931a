//! A table's change feeds: its Kinesis data stream destinations, as
//! DescribeKinesisStreamingDestination reports them, and the Lambda event source mappings on
//! its DynamoDB stream, as ListEventSourceMappings reports them; and the changes that enable
//! the family's destination, map its consumer and unmap it.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::policy::stream::{KinesisDestination, LambdaConsumer, Precision};

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

/// An event source mapping's state (`State` in Lambda's API reference).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum MappingState {
    /// Being made: not polling yet.
    Creating,
    /// Being enabled.
    Enabling,
    /// Polling the stream and invoking the function.
    Enabled,
    /// Being disabled.
    Disabling,
    /// Disabled (by someone, or by Lambda after errors): the stream is not read.
    Disabled,
    /// Its settings are being changed; it keeps polling.
    Updating,
    /// Being deleted.
    Deleting,
    /// A state this version does not know: counted as not reading.
    Other(String),
}

impl MappingState {
    /// The state for the API's `State` string.
    pub fn from_wire(state: &str) -> MappingState {
        match state {
            "Creating" => MappingState::Creating,
            "Enabling" => MappingState::Enabling,
            "Enabled" => MappingState::Enabled,
            "Disabling" => MappingState::Disabling,
            "Disabled" => MappingState::Disabled,
            "Updating" => MappingState::Updating,
            "Deleting" => MappingState::Deleting,
            other => MappingState::Other(other.to_string()),
        }
    }

    /// As the API spells it.
    pub fn as_str(&self) -> &str {
        match self {
            MappingState::Creating => "Creating",
            MappingState::Enabling => "Enabling",
            MappingState::Enabled => "Enabled",
            MappingState::Disabling => "Disabling",
            MappingState::Disabled => "Disabled",
            MappingState::Updating => "Updating",
            MappingState::Deleting => "Deleting",
            MappingState::Other(other) => other,
        }
    }

    /// Whether the function gets every change: Enabled, or Updating its settings.
    pub fn reads(&self) -> bool {
        matches!(self, MappingState::Enabled | MappingState::Updating)
    }

    /// Whether the mapping is on its way to reading: Creating or Enabling.
    pub fn starting(&self) -> bool {
        matches!(self, MappingState::Creating | MappingState::Enabling)
    }

    /// Whether the mapping still exists for good: anything but Deleting.
    pub fn stays(&self) -> bool {
        *self != MappingState::Deleting
    }
}

/// One Lambda event source mapping on a table's DynamoDB stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedMapping {
    /// The mapping's identifier (what DeleteEventSourceMapping takes).
    pub uuid: String,
    /// The function it invokes, as Lambda reports it (an ARN).
    pub function_arn: String,
    /// The stream it reads.
    pub event_source_arn: String,
    /// Its state.
    pub state: MappingState,
    /// Why it is in that state (`StateTransitionReason`), when Lambda says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The last batch's result (`LastProcessingResult`), when Lambda says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_result: Option<String>,
    /// When it was last created or updated (`LastModified`), when Lambda says: what resolves
    /// a crashed run's mapping intent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<DateTime<Utc>>,
    /// Records per invocation (`BatchSize`), when Lambda says: ours is put back to the
    /// policy's when someone changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u32>,
    /// Its filter patterns (`FilterCriteria.Filters[].Pattern`); empty: none, every record.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<String>,
}

impl ObservedMapping {
    /// Whether this mapping feeds the policy's consumer function: ours on our table's stream.
    pub fn is_to(&self, consumer: &LambdaConsumer) -> bool {
        self.function_arn == consumer.function.as_str()
    }

    /// How this mapping's settings differ from the policy's, in words ("batch size 7, the
    /// policy says 100"); empty when they are the policy's. Only what UpdateEventSourceMapping
    /// can put back: the starting position matters at creation only, and Lambda cannot change
    /// it. A batch size Lambda did not report is not counted as drift.
    pub fn drift_from(&self, consumer: &LambdaConsumer) -> Vec<String> {
        let mut drift = Vec::new();
        if let Some(have) = self.batch_size.filter(|have| *have != consumer.batch_size) {
            drift.push(format!(
                "batch size {have}, the policy says {}",
                consumer.batch_size
            ));
        }
        if !same_filters(&self.filters, &consumer.filters) {
            let shown = |filters: &[String]| match filters {
                [] => "none".to_string(),
                some => some.join(", "),
            };
            drift.push(format!(
                "filters {}, the policy says {}",
                shown(&self.filters),
                shown(&consumer.filters)
            ));
        }
        drift
    }
}

/// Whether two lists of filter patterns select the same records: the same patterns as JSON
/// values, in any order (Lambda ORs them), so Lambda's own spelling of a pattern (spacing, key
/// order) never reads as drift and never makes a run update the mapping again and again. A
/// pattern that is not JSON is compared as written, without its outer whitespace.
pub(crate) fn same_filters(have: &[String], want: &[String]) -> bool {
    fn value(pattern: &str) -> Result<serde_json::Value, String> {
        serde_json::from_str(pattern).map_err(|_| pattern.trim().to_string())
    }
    if have.len() != want.len() {
        return false;
    }
    let mut unmatched: Vec<_> = have.iter().map(|p| value(p)).collect();
    want.iter().all(|pattern| {
        let wanted = value(pattern);
        match unmatched.iter().position(|h| *h == wanted) {
            Some(at) => {
                drop(unmatched.swap_remove(at));
                true
            }
            None => false,
        }
    })
}

/// CreateEventSourceMapping: the family's consumer function on the table's DynamoDB stream
/// (whose ARN is looked up when the step runs: a table this run creates has none before).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MappingChange {
    /// The table's name.
    pub name: String,
    /// The function and the mapping's settings.
    #[serde(flatten)]
    pub consumer: LambdaConsumer,
}

/// UpdateEventSourceMapping of ours, by its UUID: the policy's batch size and filters back
/// after someone changed them. Never its function (a mapping someone re-pointed is left as it
/// is) nor its state (one someone disabled stays disabled).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MappingUpdate {
    /// The table's name (the mapping reads its stream).
    pub name: String,
    /// The mapping's identifier.
    pub uuid: String,
    /// The function it invokes: the policy's consumer (IAM scopes the call by it).
    pub function_arn: String,
    /// The policy's records per invocation.
    pub batch_size: u32,
    /// The policy's filter patterns; empty: none (the update removes the mapping's filters).
    pub filters: Vec<String>,
}

/// DeleteEventSourceMapping: ours, once its table is deleted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MappingRemoval {
    /// The table's name (the mapping read its stream).
    pub name: String,
    /// The mapping's identifier.
    pub uuid: String,
    /// The function it invoked.
    pub function_arn: String,
}

#[cfg(test)]
mod tests {
    use crate::table::stream::same_filters;

    fn list(patterns: &[&str]) -> Vec<String> {
        patterns.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn filters_are_the_same_as_json_in_any_order_and_differ_otherwise() {
        let policy = list(&[
            r#"{"eventName": ["INSERT"]}"#,
            r#"{"dynamodb": {"Keys": {"pk": {"S": ["a"]}}}}"#,
        ]);
        let respelled = list(&[
            r#"{"dynamodb":{"Keys":{"pk":{"S":["a"]}}}}"#,
            "{ \"eventName\" : [\"INSERT\"] }\n",
        ]);
        assert!(same_filters(&respelled, &policy));
        assert!(same_filters(&[], &[]));
        assert!(!same_filters(&[], &policy[..1]));
        assert!(!same_filters(&policy[..1], &[]));
        assert!(!same_filters(
            &list(&[r#"{"eventName": ["REMOVE"]}"#]),
            &policy[..1]
        ));
        // A pattern twice is not the same as two patterns.
        assert!(!same_filters(
            &list(&[policy[0].as_str(), policy[0].as_str()]),
            &policy
        ));
        // Not JSON: compared as written, without outer whitespace.
        assert!(same_filters(&list(&[" not json "]), &list(&["not json"])));
    }
}
