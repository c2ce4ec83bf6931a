//! Kinesis Data Streams destinations of DynamoDB tables, and the account's Kinesis data
//! streams they depend on, as AWS documents them (DynamoDB API Reference:
//! EnableKinesisStreamingDestination, DescribeKinesisStreamingDestination,
//! DisableKinesisStreamingDestination, UpdateKinesisStreamingDestination,
//! KinesisDataStreamDestination):
//!
//! - the account holds Kinesis data streams by ARN ([`crate::FakeAws::create_kinesis_stream`]; someone
//!   may delete one, [`crate::FakeAws::foreign_delete_kinesis_stream`]);
//! - EnableKinesisStreamingDestination: `NotFound` for a missing table (ResourceNotFoundException),
//!   `InUse` unless the table is ACTIVE or UPDATING (ResourceInUseException: "The operation
//!   conflicts with the resource's availability"); a table streams to one Kinesis data stream
//!   (Developer Guide, "You can only stream data from a DynamoDB table to one Kinesis data
//!   stream"), so while one destination is anything but DISABLED or ENABLE_FAILED another
//!   enable is refused with the ValidationException AWS answers; the new destination is ENABLING for [`crate::Config::destination_delay`]
//!   of fake time, then ACTIVE if its stream exists then, else ENABLE_FAILED with a
//!   DestinationStatusDescription naming the missing stream;
//! - DisableKinesisStreamingDestination of an ACTIVE destination: DISABLING, then DISABLED
//!   after the same delay; UpdateKinesisStreamingDestination of an ACTIVE one's precision:
//!   UPDATING (records still flow), then ACTIVE;
//! - DescribeKinesisStreamingDestination: every destination of the table, in any status, with
//!   its description and precision; `NotFound` for a missing table;
//! - deleting a table drops its destinations when the table is gone.
//!
//! The statuses and which transitions are allowed, and where each ends, are
//! `aws_model::destinations`' rules, which testkit's proxy follows too; this module holds what a
//! destination is (its fake time and ground truth), `mutations::destinations` the changes.
//!
//! A stream deleted under an ACTIVE (or UPDATING) destination: AWS documents no change of the
//! destination's status for it, so the fake keeps the status and records, as ground truth,
//! that the records are lost from then on ([`Destination::records_lost_since`]).
//!
//! Every change is logged with its actor ([`crate::Effect::EnabledDestination`],
//! [`crate::Effect::DisabledDestination`], [`crate::Effect::DestinationPrecision`],
//! [`crate::Effect::DeletedKinesisStream`]); [`crate::FakeAws::destinations`] reads a table's.

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::Precision;
use ddb_rollover::table::{DestinationStatus as Observed, ObservedDestination};

use aws_model::destinations::{enable_failed, Status as DestinationStatus};

use crate::maker::Maker;

/// How long enabling, disabling or updating a destination takes by default, in fake time.
pub(crate) fn default_delay() -> Duration {
    Duration::minutes(2)
}

/// One Kinesis data stream destination of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Destination {
    /// The Kinesis data stream it streams into.
    pub stream_arn: String,
    /// Its DestinationStatus, as `aws_model::destinations` moves it.
    pub status: DestinationStatus,
    /// DestinationStatusDescription (why enabling failed).
    pub description: Option<String>,
    /// ApproximateCreationDateTimePrecision of its records.
    pub precision: Precision,
    /// When the current ENABLING, DISABLING or UPDATING ends.
    pub ready_at: Option<DateTime<Utc>>,
    /// Who enabled it.
    pub maker: Maker,
    /// Since when its stream has been gone while it still streams (ACTIVE or UPDATING): every
    /// item change from then on reaches no stream.
    pub records_lost_since: Option<DateTime<Utc>>,
}

impl Destination {
    /// What DescribeKinesisStreamingDestination reports of it.
    pub fn observed(&self) -> ObservedDestination {
        ObservedDestination {
            stream_arn: self.stream_arn.clone(),
            status: Observed::from_wire(self.status.as_str()),
            description: self.description.clone(),
            precision: Some(self.precision),
        }
    }

    /// Ends the transition in progress once its time has come; an enabling ends ACTIVE only if
    /// its stream `exists`.
    pub(crate) fn tick(&mut self, now: DateTime<Utc>, exists: bool) {
        if self.ready_at.is_none_or(|at| at > now) {
            return;
        }
        self.ready_at = None;
        let was = self.status;
        self.status = was.settled(exists);
        if was == DestinationStatus::Enabling && self.status == DestinationStatus::EnableFailed {
            self.description = Some(enable_failed(&self.stream_arn, None));
        }
    }
}

/// An act on Kinesis data streams and destinations, for the scenarios' accounts: a stream
/// created or deleted, a destination enabled, disabled or its precision updated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KinesisAct {
    /// Someone creates the Kinesis data stream (set-up, not logged).
    CreateStream {
        /// The Kinesis data stream's ARN.
        stream_arn: String,
    },
    /// Someone deletes the Kinesis data stream.
    DeleteStream {
        /// The Kinesis data stream's ARN.
        stream_arn: String,
    },
    /// EnableKinesisStreamingDestination of `table` into `stream_arn`.
    Enable {
        /// The table whose destination it is.
        table: String,
        /// The Kinesis data stream's ARN.
        stream_arn: String,
        /// The precision of the records' creation time.
        precision: Precision,
    },
    /// DisableKinesisStreamingDestination of `table`'s destination into `stream_arn`.
    Disable {
        /// The table whose destination it is.
        table: String,
        /// The Kinesis data stream's ARN.
        stream_arn: String,
    },
    /// UpdateKinesisStreamingDestination of the destination's precision.
    UpdatePrecision {
        /// The table whose destination it is.
        table: String,
        /// The Kinesis data stream's ARN.
        stream_arn: String,
        /// The precision of the records' creation time.
        precision: Precision,
    },
}

#[cfg(test)]
mod tests;
