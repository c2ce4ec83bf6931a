//! [`Ledger`] on the fake: the family's ledger as the items of an ordinary table of the world
//! (it is listed, described, tagged and deleted like any other), read and written through the
//! role's IAM with DynamoDB's conditional writes.

use std::time::Duration;

use ddb_rollover::control::{Clock, ControlPlaneError, ErrorKind, Expect, Ledger};
use ddb_rollover::ledger::StoredRecord;

use crate::account::FakeAws;
use crate::errors::{error, not_found};
use crate::maker::Maker;
use crate::objects::LedgerWrite;
use crate::objects::Status;
use crate::specs::ledger_spec;
use crate::world::World;

fn conflict(operation: &'static str, ledger: &str, key: &str) -> ControlPlaneError {
    error(
        ErrorKind::Conflict,
        operation,
        ledger,
        format!("record {key}: ConditionalCheckFailedException: The conditional request failed"),
    )
}

/// Whether the item at `key` meets `expect`.
fn holds(world: &World, ledger: &str, family: &str, key: &str, expect: Expect) -> bool {
    let item = world
        .tables
        .get(ledger)
        .and_then(|t| t.records.get(&(family.to_string(), key.to_string())));
    match (expect, item) {
        (Expect::Absent, item) => item.is_none(),
        (Expect::Version(v), Some(item)) => item.version == v,
        (Expect::Version(_), None) => false,
        (Expect::Lapsed(_), None) => true,
        (Expect::Lapsed(now), Some(item)) => item.expires.is_some_and(|e| e < now),
    }
}

/// The ledger table, when it exists and takes item calls.
fn usable<'w>(
    world: &'w mut World,
    operation: &'static str,
    ledger: &str,
) -> Result<&'w mut crate::objects::Table, ControlPlaneError> {
    match world.tables.get_mut(ledger) {
        Some(table) if table.status != Status::Deleting => Ok(table),
        _ => Err(not_found(operation, ledger)),
    }
}

impl Ledger for FakeAws {
    async fn read_ledger(
        &self,
        ledger: &str,
        family: &str,
    ) -> Result<Option<Vec<StoredRecord>>, ControlPlaneError> {
        self.request("Query", ledger).await?;
        self.may_read("Query", "dynamodb:Query", ledger)?;
        let world = self.lock();
        let Some(table) = world.tables.get(ledger).filter(|t| t.status != Status::Deleting) else {
            return Ok(None);
        };
        Ok(Some(
            table
                .records
                .iter()
                .filter(|((f, _), _)| f == family)
                .map(|(_, record)| record.clone())
                .collect(),
        ))
    }

    async fn create_ledger(&self, ledger: &str, family: &str) -> Result<(), ControlPlaneError> {
        const OP: &str = "CreateTable";
        let spec = ledger_spec(ledger, family);
        self.change(OP, ledger, |world, effects| {
            self.may_create(OP, &spec)?;
            Self::create(world, &self.actor, &spec, effects)
        })
        .await?;
        // As the SDK's waiter: until it is ACTIVE (the fake's clock moves).
        while self
            .lock()
            .tables
            .get(ledger)
            .is_some_and(|t| t.status == Status::Creating)
        {
            self.sleep(Duration::from_secs(1)).await;
        }
        Ok(())
    }

    async fn put_record(
        &self,
        ledger: &str,
        family: &str,
        record: &StoredRecord,
        expect: Expect,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "PutItem";
        self.change(OP, ledger, |world, _| {
            self.may_change(world, OP, "dynamodb:PutItem", ledger)?;
            Self::put_item(world, &self.actor, ledger, family, record, Some(expect))
        })
        .await
    }

    async fn delete_record(
        &self,
        ledger: &str,
        family: &str,
        key: &str,
        expect: Expect,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteItem";
        self.change(OP, ledger, |world, _| {
            self.may_change(world, OP, "dynamodb:DeleteItem", ledger)?;
            Self::delete_item(world, &self.actor, ledger, family, key, Some(expect))
        })
        .await
    }
}

impl FakeAws {
    /// PutItem of one ledger item, conditional on `expect` when given; the write is kept in
    /// [`World::ledger_writes`] with who made it.
    pub(crate) fn put_item(
        world: &mut World,
        actor: &Maker,
        ledger: &str,
        family: &str,
        record: &StoredRecord,
        expect: Option<Expect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "PutItem";
        usable(world, OP, ledger)?;
        if expect.is_some_and(|expect| !holds(world, ledger, family, &record.key, expect)) {
            return Err(conflict(OP, ledger, &record.key));
        }
        let table = usable(world, OP, ledger)?;
        table
            .records
            .insert((family.to_string(), record.key.clone()), record.clone());
        Self::wrote_item(world, actor, ledger, family, &record.key, Some(record.clone()));
        Ok(())
    }

    /// DeleteItem of one ledger item, conditional on `expect` when given (DynamoDB deletes a
    /// missing item without complaint).
    pub(crate) fn delete_item(
        world: &mut World,
        actor: &Maker,
        ledger: &str,
        family: &str,
        key: &str,
        expect: Option<Expect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteItem";
        usable(world, OP, ledger)?;
        if expect.is_some_and(|expect| !holds(world, ledger, family, key, expect)) {
            return Err(conflict(OP, ledger, key));
        }
        let table = usable(world, OP, ledger)?;
        if table
            .records
            .remove(&(family.to_string(), key.to_string()))
            .is_some()
        {
            Self::wrote_item(world, actor, ledger, family, key, None);
        }
        Ok(())
    }

    fn wrote_item(
        world: &mut World,
        actor: &Maker,
        ledger: &str,
        family: &str,
        key: &str,
        record: Option<StoredRecord>,
    ) {
        let at = world.now;
        world.ledger_writes.push(LedgerWrite {
            at,
            actor: actor.clone(),
            ledger: ledger.to_string(),
            family: family.to_string(),
            key: key.to_string(),
            record,
        });
    }

    /// Someone with rights on the family's ledger (an operator's credentials, another tool, a
    /// crashed run of ours as `actor` [`Maker::Us`]) puts an item, unconditionally.
    pub fn put_record_as(
        &self,
        actor: &Maker,
        ledger: &str,
        family: &str,
        record: &StoredRecord,
    ) -> Result<(), ControlPlaneError> {
        self.call(actor, None, "PutItem", ledger, |world, _| {
            Self::put_item(world, actor, ledger, family, record, None)
        })
    }

    /// Someone with rights on the family's ledger deletes an item, unconditionally.
    pub fn delete_record_as(
        &self,
        actor: &Maker,
        ledger: &str,
        family: &str,
        key: &str,
    ) -> Result<(), ControlPlaneError> {
        self.call(actor, None, "DeleteItem", ledger, |world, _| {
            Self::delete_item(world, actor, ledger, family, key, None)
        })
    }
}
