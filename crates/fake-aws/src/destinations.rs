//! Kinesis Data Streams destinations of DynamoDB tables, and the account's Kinesis data
//! streams they depend on, as AWS documents them (DynamoDB API Reference:
//! EnableKinesisStreamingDestination, DescribeKinesisStreamingDestination,
//! DisableKinesisStreamingDestination, UpdateKinesisStreamingDestination,
//! KinesisDataStreamDestination):
//!
//! - the account holds Kinesis data streams by ARN ([`FakeAws::create_kinesis_stream`]; someone
//!   may delete one, [`FakeAws::foreign_delete_kinesis_stream`]);
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
//! `aws_model::destinations`' rules, which testkit's proxy follows too; this module keeps the
//! account's destinations, their fake time and their ground truth.
//!
//! A stream deleted under an ACTIVE (or UPDATING) destination: AWS documents no change of the
//! destination's status for it, so the fake keeps the status and records, as ground truth,
//! that the records are lost from then on ([`Destination::records_lost_since`]).
//!
//! Every change is logged with its actor ([`Effect::EnabledDestination`],
//! [`Effect::DisabledDestination`], [`Effect::DestinationPrecision`],
//! [`Effect::DeletedKinesisStream`]); [`FakeAws::destinations`] reads a table's.

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::stream::Precision;
use ddb_rollover::run::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::table::stream::{DestinationStatus as Observed, ObservedDestination};

use aws_model::destinations::{enable_failed, may_enable, needs_active, Status as DestinationStatus};

use crate::errors::{error, in_use, not_found, validation};
use crate::{Effect, FakeAws, Maker, Status, World};

/// How long enabling, disabling or updating a destination takes by default, in fake time.
pub fn default_delay() -> Duration {
    Duration::minutes(2)
}

/// One Kinesis data stream destination of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Destination {
    pub stream_arn: String,
    pub status: DestinationStatus,
    /// DestinationStatusDescription (why enabling failed).
    pub description: Option<String>,
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
    CreateStream {
        stream_arn: String,
    },
    DeleteStream {
        stream_arn: String,
    },
    Enable {
        table: String,
        stream_arn: String,
        precision: Precision,
    },
    Disable {
        table: String,
        stream_arn: String,
    },
    UpdatePrecision {
        table: String,
        stream_arn: String,
        precision: Precision,
    },
}

/// EnableKinesisStreamingDestination of `table` into `stream_arn` by `actor`.
pub(crate) fn enable(
    world: &mut World,
    actor: &Maker,
    table: &str,
    stream_arn: &str,
    precision: Precision,
    effects: &mut Vec<Effect>,
) -> Result<Observed, ControlPlaneError> {
    const OP: &str = "EnableKinesisStreamingDestination";
    let t = FakeAws::table_mut(world, OP, table)?;
    if !matches!(t.status, Status::Active | Status::Updating) {
        return Err(in_use(OP, table, t.status));
    }
    let ready_at = world.now + world.config.destination_delay;
    let list = world.destinations.entry(table.to_string()).or_default();
    may_enable(list.iter().map(|d| (d.stream_arn.as_str(), d.status)))
        .map_err(|why| validation(OP, table, why))?;
    list.retain(|d| d.stream_arn != stream_arn);
    list.push(Destination {
        stream_arn: stream_arn.to_string(),
        status: DestinationStatus::Enabling,
        description: None,
        precision,
        ready_at: Some(ready_at),
        maker: actor.clone(),
        records_lost_since: None,
    });
    effects.push(Effect::EnabledDestination {
        table: table.to_string(),
        stream_arn: stream_arn.to_string(),
        precision,
    });
    Ok(Observed::Enabling)
}

/// The table's destination into `stream_arn` for a change that needs it ACTIVE.
fn active_destination<'w>(
    world: &'w mut World,
    operation: &'static str,
    verb: &str,
    table: &str,
    stream_arn: &str,
) -> Result<&'w mut Destination, ControlPlaneError> {
    let t = FakeAws::table_mut(world, operation, table)?;
    if !matches!(t.status, Status::Active | Status::Updating) {
        return Err(in_use(operation, table, t.status));
    }
    let destination = world
        .destinations
        .get_mut(table)
        .and_then(|list| list.iter_mut().find(|d| d.stream_arn == stream_arn));
    needs_active(
        operation,
        verb,
        stream_arn,
        destination.as_ref().map(|d| d.status),
    )
    .map_err(|why| validation(operation, table, why))?;
    Ok(destination.expect("an ACTIVE destination"))
}

/// DisableKinesisStreamingDestination: an ACTIVE destination is DISABLING, then DISABLED.
pub(crate) fn disable(
    world: &mut World,
    table: &str,
    stream_arn: &str,
    effects: &mut Vec<Effect>,
) -> Result<(), ControlPlaneError> {
    let ready_at = world.now + world.config.destination_delay;
    let destination = active_destination(
        world,
        "DisableKinesisStreamingDestination",
        "disable",
        table,
        stream_arn,
    )?;
    destination.status = DestinationStatus::Disabling;
    destination.ready_at = Some(ready_at);
    effects.push(Effect::DisabledDestination {
        table: table.to_string(),
        stream_arn: stream_arn.to_string(),
    });
    Ok(())
}

/// UpdateKinesisStreamingDestination of an ACTIVE destination's precision: UPDATING, then
/// ACTIVE.
pub(crate) fn update_precision(
    world: &mut World,
    table: &str,
    stream_arn: &str,
    precision: Precision,
    effects: &mut Vec<Effect>,
) -> Result<(), ControlPlaneError> {
    let ready_at = world.now + world.config.destination_delay;
    let destination = active_destination(
        world,
        "UpdateKinesisStreamingDestination",
        "update",
        table,
        stream_arn,
    )?;
    effects.push(Effect::DestinationPrecision {
        table: table.to_string(),
        stream_arn: stream_arn.to_string(),
        from: destination.precision,
        to: precision,
    });
    destination.precision = precision;
    destination.status = DestinationStatus::Updating;
    destination.ready_at = Some(ready_at);
    Ok(())
}

/// Kinesis DeleteStream: the stream is gone; destinations still streaming into it lose their
/// records from now on (their status stays, as AWS documents no change).
pub(crate) fn delete_stream(
    world: &mut World,
    stream_arn: &str,
    effects: &mut Vec<Effect>,
) -> Result<(), ControlPlaneError> {
    if !world.kinesis_streams.remove(stream_arn) {
        return Err(error(
            ErrorKind::NotFound,
            "DeleteStream",
            stream_arn,
            format!("ResourceNotFoundException: Stream {stream_arn} not found"),
        ));
    }
    let now = world.now;
    let mut losing = Vec::new();
    for (table, list) in &mut world.destinations {
        for d in list
            .iter_mut()
            .filter(|d| d.stream_arn == stream_arn && d.status.streams())
        {
            d.records_lost_since.get_or_insert(now);
            losing.push(table.clone());
        }
    }
    effects.push(Effect::DeletedKinesisStream {
        stream_arn: stream_arn.to_string(),
        losing,
    });
    Ok(())
}

/// Ends the destinations' transitions whose time has come, and drops those of `gone` tables.
pub(crate) fn tick(world: &mut World, gone: &[String]) {
    let now = world.now;
    for name in gone {
        world.destinations.remove(name);
    }
    let streams = &world.kinesis_streams;
    for destination in world.destinations.values_mut().flatten() {
        let exists = streams.contains(&destination.stream_arn);
        destination.tick(now, exists);
    }
}

impl FakeAws {
    /// A Kinesis data stream in the account (the operator's or the family's own, made before
    /// any destination into it).
    pub fn create_kinesis_stream(&self, stream_arn: &str) {
        self.lock().kinesis_streams.insert(stream_arn.to_string());
    }

    /// Whether the account holds the Kinesis data stream `stream_arn`.
    pub fn has_kinesis_stream(&self, stream_arn: &str) -> bool {
        self.lock().kinesis_streams.contains(stream_arn)
    }

    /// Ground truth: the table's destinations, in any status (none for a missing table).
    pub fn destinations(&self, table: &str) -> Vec<Destination> {
        self.lock().destinations.get(table).cloned().unwrap_or_default()
    }

    /// Someone deletes the Kinesis data stream (Kinesis DeleteStream), logged by its ARN.
    pub fn foreign_delete_kinesis_stream(
        &self,
        who: &str,
        stream_arn: &str,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "DeleteStream", stream_arn, |world, _, effects| {
            delete_stream(world, stream_arn, effects)
        })
    }

    /// Someone's EnableKinesisStreamingDestination on `table`, within DynamoDB's rules.
    pub fn foreign_enable_destination(
        &self,
        who: &str,
        table: &str,
        stream_arn: &str,
        precision: Precision,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(
            who,
            "EnableKinesisStreamingDestination",
            table,
            |world, actor, effects| enable(world, actor, table, stream_arn, precision, effects).map(drop),
        )
    }

    /// Someone's DisableKinesisStreamingDestination.
    pub fn foreign_disable_destination(
        &self,
        who: &str,
        table: &str,
        stream_arn: &str,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(
            who,
            "DisableKinesisStreamingDestination",
            table,
            |world, _, effects| disable(world, table, stream_arn, effects),
        )
    }

    /// Someone's UpdateKinesisStreamingDestination of the destination's precision.
    pub fn foreign_update_destination_precision(
        &self,
        who: &str,
        table: &str,
        stream_arn: &str,
        precision: Precision,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(
            who,
            "UpdateKinesisStreamingDestination",
            table,
            |world, _, effects| update_precision(world, table, stream_arn, precision, effects),
        )
    }

    /// One [`KinesisAct`] by `who` (a stream's creation is not logged: it is set-up).
    pub fn kinesis_act(&self, who: &str, act: &KinesisAct) -> Result<(), ControlPlaneError> {
        match act {
            KinesisAct::CreateStream { stream_arn } => {
                self.create_kinesis_stream(stream_arn);
                Ok(())
            }
            KinesisAct::DeleteStream { stream_arn } => self.foreign_delete_kinesis_stream(who, stream_arn),
            KinesisAct::Enable {
                table,
                stream_arn,
                precision,
            } => self.foreign_enable_destination(who, table, stream_arn, *precision),
            KinesisAct::Disable { table, stream_arn } => {
                self.foreign_disable_destination(who, table, stream_arn)
            }
            KinesisAct::UpdatePrecision {
                table,
                stream_arn,
                precision,
            } => self.foreign_update_destination_precision(who, table, stream_arn, *precision),
        }
    }

    /// DescribeKinesisStreamingDestination's answer from the world (the table must exist).
    pub(crate) fn described_destinations(
        world: &World,
        table: &str,
    ) -> Result<Vec<ObservedDestination>, ControlPlaneError> {
        if !world.tables.contains_key(table) {
            return Err(not_found("DescribeKinesisStreamingDestination", table));
        }
        Ok(world
            .destinations
            .get(table)
            .map(|list| list.iter().map(Destination::observed).collect())
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests;
