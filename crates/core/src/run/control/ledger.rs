//! The ledger port: the family's own record of its acts, one DynamoDB table of small items
//! (`crate::ledger`). Reads are one Query of the family's partition; every write is conditional,
//! so two runs never overwrite each other's record unseen.

use std::future::Future;

use super::ControlPlaneError;
use crate::ledger::StoredRecord;

/// What a conditional write expects to find at the key; anything else is
/// [`ErrorKind::Conflict`](super::ErrorKind::Conflict) and nothing is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// No item.
    Absent,
    /// The item at this version.
    Version(u64),
    /// No item, or one whose `expires` is before this instant (epoch seconds): a lease free to take.
    Lapsed(i64),
}

/// The family's ledger table.
pub trait Ledger: Sync {
    /// Every record in `family`'s partition of the table `ledger` (a strongly consistent Query,
    /// every page); `Ok(None)` when the table does not exist.
    fn read_ledger(
        &self,
        ledger: &str,
        family: &str,
    ) -> impl Future<Output = Result<Option<Vec<StoredRecord>>, ControlPlaneError>> + Send;

    /// CreateTable of the ledger (key `family` + `record`, on-demand, deletion protection on,
    /// tagged with the family), then point-in-time recovery on where the endpoint has it.
    /// `AlreadyExists` when it exists.
    fn create_ledger(
        &self,
        ledger: &str,
        family: &str,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// PutItem of `record` in `family`'s partition, when `expect` holds.
    fn put_record(
        &self,
        ledger: &str,
        family: &str,
        record: &StoredRecord,
        expect: Expect,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// DeleteItem of the record `key`, when `expect` holds.
    fn delete_record(
        &self,
        ledger: &str,
        family: &str,
        key: &str,
        expect: Expect,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;
}
