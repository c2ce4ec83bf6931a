//! Kinesis Data Streams destinations' changes ([`crate::destinations`] holds what a destination
//! is): Enable, Disable, Update and a stream's deletion, by our calls and by foreign acts, and
//! the account's Kinesis streams. What each is allowed and where it ends are
//! `aws_model::destinations`' rules.

use aws_model::destinations::{may_enable, needs_active, Status as DestinationStatus};
use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::policy::Precision;
use ddb_rollover::table::{DestinationStatus as Observed, ObservedDestination};

use crate::account::FakeAws;
use crate::destinations::{Destination, KinesisAct};
use crate::errors::{error, in_use, not_found, validation};
use crate::log::Effect;
use crate::maker::Maker;
use crate::objects::Status;
use crate::world::World;

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
