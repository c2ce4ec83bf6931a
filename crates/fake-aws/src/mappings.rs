//! Lambda's event source mappings on the tables' DynamoDB streams, and the streams and
//! functions they depend on, as AWS documents them (Lambda API Reference:
//! CreateEventSourceMapping, DeleteEventSourceMapping, ListEventSourceMappings,
//! UpdateEventSourceMapping, EventSourceMappingConfiguration; DynamoDB API Reference:
//! TableDescription.LatestStreamArn):
//!
//! - a table's stream: a table created with a StreamSpecification, or whose stream UpdateTable
//!   turns on, gets a new stream ARN (`{table ARN}/stream/{timestamp}`, LatestStreamArn, a new
//!   one each time the stream is turned on again); turning the stream off keeps the ARN
//!   ([`new_stream_arn`]);
//! - the account's Lambda functions by ARN ([`crate::FakeAws::create_function`]; someone may delete
//!   one, [`crate::FakeAws::foreign_delete_function`]: "To delete Lambda event source mappings that
//!   invoke a function, use DeleteEventSourceMapping", so its mappings stay, with
//!   LastProcessingResult saying the function is gone);
//! - mappings live in the account, not in the table ([`crate::World::mappings`], by UUID):
//!   deleting a table leaves its mappings (which is why resize_old removes ours);
//! - CreateEventSourceMapping: the function must exist (ResourceNotFoundException:
//!   `NotFound`), the stream must be the latest, turned-on stream of a table the account holds
//!   (a missing stream is modelled as `NotFound` too), and a second mapping of the same function
//!   on the same stream is a ResourceConflictException (`AlreadyExists`); a new mapping is
//!   `Creating` for [`crate::Config::mapping_delay`] of fake time, then `Enabled`;
//! - DeleteEventSourceMapping: an unknown UUID is `NotFound`; one `Updating` or `Deleting` is a
//!   ResourceInUseException (`InUse`: "you tried to delete an event source mapping currently
//!   UPDATING"); otherwise it is `Deleting` for the same delay, then gone;
//! - UpdateEventSourceMapping `Enabled = false` (someone pausing the consumer) of an `Enabled`
//!   mapping: `Disabling`, then `Disabled`; any other state is `InUse`;
//! - UpdateEventSourceMapping of `BatchSize` and `FilterCriteria` (an empty one removes the
//!   filters): an unknown UUID is `NotFound`; one `Creating`, `Enabling`, `Disabling`,
//!   `Updating` or `Deleting` is `InUse`; an `Enabled` one is `Updating` for the delay, then
//!   `Enabled` (it keeps polling); a `Disabled` one takes the settings and stays `Disabled`;
//!   `FunctionName` re-points it to another function (someone's act only);
//! - ListEventSourceMappings(EventSourceArn): every mapping on that stream, in any state.
//!
//! IAM (through the family role, [`crate::iam`]): CreateEventSourceMapping on `*` with the
//! request's function as `lambda:FunctionArn`, UpdateEventSourceMapping and
//! DeleteEventSourceMapping on the mapping's ARN with the mapping's function as
//! `lambda:FunctionArn`, ListEventSourceMappings on `*`.
//!
//! Every change is logged with its actor ([`crate::Effect::CreatedMapping`],
//! [`crate::Effect::DeletedMapping`], [`crate::Effect::DisabledMapping`], [`crate::Effect::UpdatedMapping`],
//! [`crate::Effect::DeletedFunction`]).

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::table::{MappingState, ObservedMapping};

use crate::maker::Maker;
use crate::objects::TABLE_ARN_PREFIX;

/// How long a mapping stays Creating, Disabling or Deleting by default, in fake time.
pub(crate) fn default_delay() -> Duration {
    Duration::seconds(30)
}

/// The fake account's event source mapping ARNs: `{MAPPING_ARN_PREFIX}{uuid}`.
pub const MAPPING_ARN_PREFIX: &str = "arn:aws:lambda:us-east-1:123456789012:event-source-mapping:";

/// The LastProcessingResult of a mapping whose function was deleted.
pub const FUNCTION_GONE: &str = "PROBLEM: Function not found";

/// The table whose stream `stream_arn` is (whether or not the table still exists).
pub fn table_of_stream(stream_arn: &str) -> Option<&str> {
    stream_arn
        .strip_prefix(TABLE_ARN_PREFIX)?
        .split_once("/stream/")
        .map(|(table, _)| table)
}

/// One Lambda event source mapping.
#[derive(Clone, Debug, PartialEq)]
pub struct Mapping {
    /// Its UUID, Lambda's id for it.
    pub uuid: String,
    /// The function it invokes (an ARN).
    pub function_arn: String,
    /// The stream it reads.
    pub event_source_arn: String,
    /// Its State (Creating, Enabled, ...).
    pub state: MappingState,
    /// When the current Creating, Disabling or Deleting ends.
    pub ready_at: Option<DateTime<Utc>>,
    /// Who made it.
    pub maker: Maker,
    /// LastProcessingResult.
    pub last_result: Option<String>,
    /// LastModified: when it was created, or last updated.
    pub last_modified: DateTime<Utc>,
    /// BatchSize.
    pub batch_size: u32,
    /// FilterCriteria's patterns, as sent (Lambda keeps each pattern's text).
    pub filters: Vec<String>,
}

impl Mapping {
    /// What ListEventSourceMappings reports of it.
    pub fn observed(&self) -> ObservedMapping {
        ObservedMapping {
            uuid: self.uuid.clone(),
            function_arn: self.function_arn.clone(),
            event_source_arn: self.event_source_arn.clone(),
            state: self.state.clone(),
            reason: Some("User action".to_string()),
            last_result: self.last_result.clone(),
            last_modified: Some(self.last_modified),
            batch_size: Some(self.batch_size),
            filters: self.filters.clone(),
        }
    }

    /// The table whose stream it reads.
    pub fn table(&self) -> &str {
        table_of_stream(&self.event_source_arn).unwrap_or_default()
    }

    /// Ends the transition in progress once its time has come; `false` once a deletion ended
    /// (the mapping is gone).
    pub(crate) fn tick(&mut self, now: DateTime<Utc>) -> bool {
        if self.ready_at.is_none_or(|at| at > now) {
            return true;
        }
        self.ready_at = None;
        self.state = match self.state {
            MappingState::Creating | MappingState::Enabling | MappingState::Updating => MappingState::Enabled,
            MappingState::Disabling => MappingState::Disabled,
            MappingState::Deleting => return false,
            ref other => other.clone(),
        };
        true
    }
}

/// An act on Lambda, for the scenarios' accounts: a function created or deleted, a mapping
/// made, deleted or disabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MappingAct {
    /// Someone creates the Lambda function (set-up, not logged).
    CreateFunction {
        /// The function's ARN.
        function_arn: String,
    },
    /// Someone deletes the Lambda function.
    DeleteFunction {
        /// The function's ARN.
        function_arn: String,
    },
    /// CreateEventSourceMapping of the function on the stream.
    Map {
        /// The function's ARN.
        function_arn: String,
        /// The table's stream it reads.
        stream_arn: String,
    },
    /// DeleteEventSourceMapping.
    Unmap {
        /// The mapping's UUID.
        uuid: String,
    },
    /// UpdateEventSourceMapping with `Enabled: false`.
    Disable {
        /// The mapping's UUID.
        uuid: String,
    },
    /// UpdateEventSourceMapping of its batch size and filters.
    Configure {
        /// The mapping's UUID.
        uuid: String,
        /// The BatchSize to set.
        batch_size: u32,
        /// The FilterCriteria patterns to set.
        filters: Vec<String>,
    },
    /// UpdateEventSourceMapping of its FunctionName: it invokes another function from now on.
    Repoint {
        /// The mapping's UUID.
        uuid: String,
        /// The function's ARN.
        function_arn: String,
    },
}

#[cfg(test)]
mod tests;
