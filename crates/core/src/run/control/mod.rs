//! The control-plane calls the executor needs, as six ports: [`Tables`] (DynamoDB),
//! [`Scaling`] (Application Auto Scaling), [`Archives`] (the exports S3 holds), [`Mappings`]
//! (Lambda's event source mappings), [`Ledger`] (the family's own record of its acts) and
//! [`Clock`]. [`ControlPlane`] names all six together, which is what a run needs. Implemented on the AWS
//! SDK clients in `ddb_rollover_aws::dynamodb` (crates/aws), and by in-memory fakes in tests.

mod archives;
mod clock;
mod ledger;
mod mappings;
mod scaling;
mod tables;

pub(crate) use crate::ledger::StoredRecord;
pub use archives::Archives;
pub use clock::Clock;
pub use ledger::{Expect, Ledger};
pub use mappings::Mappings;
pub use scaling::Scaling;
pub use tables::Tables;

/// How the executor should treat a failed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// CreateTable on a name that exists (ResourceInUseException): for us, done.
    AlreadyExists,
    /// The table is CREATING, UPDATING or DELETING (ResourceInUseException on update): defer.
    InUse,
    /// LimitExceededException: too many decreases or concurrent control-plane operations: defer.
    LimitExceeded,
    /// ResourceNotFoundException: the table is gone (another run, or a person, deleted it).
    NotFound,
    /// UpdateTable's ValidationException "The provisioned throughput for the table will not
    /// change": another run made the same change first.
    NoChange,
    /// The endpoint does not implement the operation (UnknownOperationException): DynamoDB
    /// Local has no tagging API, no continuous backups and no exports; dynalite lacks some
    /// too. The observation leaves out what needs it and says so once (see
    /// [`crate::run::observe::Observation::skipped`]).
    Unsupported,
    /// A conditional write found something else than it expected (ConditionalCheckFailed):
    /// another run, or someone, changed the ledger since this run read it.
    Conflict,
    /// Anything else: the table's action failed; the run goes on with the rest.
    Other,
}

/// One control-plane call that failed, and how a run should take it.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{operation} {table}: {message}")]
#[non_exhaustive]
pub struct ControlPlaneError {
    /// How a run should take the failure.
    pub kind: ErrorKind,
    /// The operation called (`UpdateTable`, ...).
    pub operation: &'static str,
    /// The table the call was about.
    pub table: String,
    /// What went wrong, as the service said it.
    pub message: String,
}

impl ControlPlaneError {
    /// The failure of `operation` on `table`, taken as `kind` says: how a control plane
    /// outside this crate (the SDK's, a fake) reports one.
    pub fn new(
        kind: ErrorKind,
        operation: &'static str,
        table: &str,
        message: impl Into<String>,
    ) -> ControlPlaneError {
        ControlPlaneError {
            kind,
            operation,
            table: table.to_string(),
            message: message.into(),
        }
    }

    /// A call that failed for none of the reasons [`ErrorKind`] tells apart: the table's action
    /// failed, the run goes on with the rest.
    pub fn failed(operation: &'static str, table: &str, message: impl Into<String>) -> ControlPlaneError {
        ControlPlaneError::new(ErrorKind::Other, operation, table, message)
    }

    /// The error of a control plane without an optional API.
    pub fn unsupported(operation: &'static str, table: &str, message: &str) -> ControlPlaneError {
        ControlPlaneError::new(ErrorKind::Unsupported, operation, table, message)
    }

    /// The error of a control plane without Application Auto Scaling.
    pub fn no_autoscaling(operation: &'static str) -> ControlPlaneError {
        ControlPlaneError::new(
            ErrorKind::Unsupported,
            operation,
            "",
            "no Application Auto Scaling client: autoscaling phases need one",
        )
    }

    /// The same failure, its message said again by `message` (which is given the old one).
    pub fn reworded(self, message: impl FnOnce(&str) -> String) -> ControlPlaneError {
        ControlPlaneError {
            message: message(&self.message),
            ..self
        }
    }
}

/// The whole control plane a run drives: every type with the six ports is one.
pub trait ControlPlane: Tables + Scaling + Archives + Mappings + Ledger + Clock {}

impl<T: Tables + Scaling + Archives + Mappings + Ledger + Clock> ControlPlane for T {}
