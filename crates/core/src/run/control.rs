//! The control-plane calls the executor needs, as a trait: implemented on the AWS SDK client
//! in [`crate::aws::dynamodb`], and by in-memory fakes in tests.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use crate::policy::scaling::{DeregisterScaling, ObservedScalableTarget, RegisterScaling};
use crate::table::archive::{ArchiveProof, ExportLocation, ImportState};
use crate::table::changes::{
    CapacityChange, ClassChange, ExportRequest, ImportRequest, SettingChange, TableSpec, TagChange, TtlChange,
};
use crate::table::seal::ResourcePolicy;
use crate::table::{ExportState, ObservedTable, TtlState};

/// How the executor should treat a failed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// Anything else: the table's action failed; the run goes on with the rest.
    Other,
}

#[derive(Clone, Debug, thiserror::Error)]
#[error("{operation} {table}: {message}")]
pub struct ControlPlaneError {
    pub kind: ErrorKind,
    pub operation: &'static str,
    pub table: String,
    pub message: String,
}

/// The DynamoDB control plane as the executor sees it.
pub trait ControlPlane: Sync {
    /// Every table name that starts with `prefix`, across all ListTables pages.
    fn list_table_names(
        &self,
        prefix: &str,
    ) -> impl Future<Output = Result<Vec<String>, ControlPlaneError>> + Send;

    /// `Ok(None)` when the table does not exist.
    fn describe_table(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ObservedTable>, ControlPlaneError>> + Send;

    fn create_table(&self, spec: &TableSpec) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    fn update_capacity(
        &self,
        change: &CapacityChange,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    fn update_table_class(
        &self,
        change: &ClassChange,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// The table's tags (ListTagsOfResource, every page).
    fn list_tags(
        &self,
        arn: &str,
    ) -> impl Future<Output = Result<BTreeMap<String, String>, ControlPlaneError>> + Send;

    fn describe_ttl(&self, name: &str) -> impl Future<Output = Result<TtlState, ControlPlaneError>> + Send;

    /// Whether point-in-time recovery is on (DescribeContinuousBackups).
    fn describe_point_in_time_recovery(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<bool, ControlPlaneError>> + Send;

    /// `table` is for error reports.
    fn describe_export(
        &self,
        table: &str,
        arn: &str,
    ) -> impl Future<Output = Result<ExportState, ControlPlaneError>> + Send;

    fn tag_table(&self, change: &TagChange) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    fn enable_ttl(&self, change: &TtlChange) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    fn enable_point_in_time_recovery(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    fn configure(&self, change: &SettingChange)
        -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// Starts the export; returns its ARN.
    fn export_table(
        &self,
        request: &ExportRequest,
    ) -> impl Future<Output = Result<String, ControlPlaneError>> + Send;

    /// DeleteTable. Lifting deletion protection first is the executor's step ([`Self::configure`]).
    fn delete_table(&self, name: &str) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// The clock a run's waits and time budget are measured on: the wall clock, or an
    /// in-memory control plane's own (which [`Self::sleep`] moves), so tests never wait on
    /// the wall clock.
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Waits between two polls of a table (a create_new run waiting for the tables it created,
    /// or for a deleted one to be gone). A real control plane sleeps; an in-memory one moves
    /// its own clock instead.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        futures_timer::Delay::new(duration)
    }

    /// Every DynamoDB scalable target of Application Auto Scaling whose resource id is one of
    /// `tables`' (`table/NAME`, `table/NAME/index/...`), with the scaling policies attached to
    /// each: read once per run, and only when the policy has autoscaling phases. `Unsupported`
    /// by default (a control plane without Application Auto Scaling).
    fn describe_scaling(
        &self,
        tables: &[String],
    ) -> impl Future<Output = Result<Vec<ObservedScalableTarget>, ControlPlaneError>> + Send {
        let _ = tables;
        async { Err(no_autoscaling("DescribeScalableTargets")) }
    }

    /// RegisterScalableTarget and PutScalingPolicy for each target.
    fn register_scaling(
        &self,
        change: &RegisterScaling,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send {
        let _ = change;
        async { Err(no_autoscaling("RegisterScalableTarget")) }
    }

    /// DeleteScalingPolicy and DeregisterScalableTarget for each target.
    fn deregister_scaling(
        &self,
        change: &DeregisterScaling,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send {
        let _ = change;
        async { Err(no_autoscaling("DeregisterScalableTarget")) }
    }

    /// GetResourcePolicy: the table's resource-based policy and its revision; a table without
    /// one (PolicyNotFoundException) has `document: None`. `Unsupported` by default (then no
    /// table is sealed, so no archived table is deleted).
    fn get_resource_policy(
        &self,
        table: &str,
        arn: &str,
    ) -> impl Future<Output = Result<ResourcePolicy, ControlPlaneError>> + Send {
        let _ = arn;
        let error = unsupported(
            "GetResourcePolicy",
            table,
            "this control plane has no resource-based policies",
        );
        async { Err(error) }
    }

    /// PutResourcePolicy with `ExpectedRevisionId` (`NO_POLICY`: only if the table has none);
    /// returns the new revision. A revision that no longer matches is PolicyNotFoundException.
    fn put_resource_policy(
        &self,
        table: &str,
        arn: &str,
        document: &str,
        expected_revision: &str,
    ) -> impl Future<Output = Result<String, ControlPlaneError>> + Send {
        let _ = (arn, document, expected_revision);
        let error = unsupported(
            "PutResourcePolicy",
            table,
            "this control plane has no resource-based policies",
        );
        async { Err(error) }
    }

    /// DeleteResourcePolicy with `ExpectedRevisionId`.
    fn delete_resource_policy(
        &self,
        table: &str,
        arn: &str,
        expected_revision: &str,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send {
        let _ = (arn, expected_revision);
        let error = unsupported(
            "DeleteResourcePolicy",
            table,
            "this control plane has no resource-based policies",
        );
        async { Err(error) }
    }

    /// What S3 holds for the COMPLETED export `export` of `table`: its manifest, every data
    /// file the manifest lists, and item counts that agree ([`crate::run::archive::prove`]),
    /// read before retention deletes the table. `Unsupported` by default (no S3 reader), and
    /// then no archived table is deleted.
    fn prove_archive(
        &self,
        table: &str,
        export: &str,
    ) -> impl Future<Output = Result<ArchiveProof, ControlPlaneError>> + Send {
        let _ = export;
        let error = unsupported("GetObject", table, "no S3 reader: archives cannot be checked");
        async { Err(error) }
    }

    /// Every export under `prefix` in `bucket` (each `manifest-summary.json`), with what S3
    /// proves of it: `restore` imports the newest proven one. `Unsupported` by default.
    fn find_archives(
        &self,
        table: &str,
        bucket: &str,
        prefix: &str,
    ) -> impl Future<Output = Result<Vec<(ExportLocation, ArchiveProof)>, ControlPlaneError>> + Send {
        let _ = (bucket, prefix);
        let error = unsupported("ListObjectsV2", table, "no S3 reader: archives cannot be found");
        async { Err(error) }
    }

    /// ImportTable; returns the import's ARN. `Unsupported` by default.
    fn import_table(
        &self,
        request: &ImportRequest,
    ) -> impl Future<Output = Result<String, ControlPlaneError>> + Send {
        let error = unsupported(
            "ImportTable",
            &request.spec.name,
            "this control plane cannot import",
        );
        async { Err(error) }
    }

    /// DescribeImport. `Unsupported` by default.
    fn describe_import(
        &self,
        table: &str,
        arn: &str,
    ) -> impl Future<Output = Result<ImportState, ControlPlaneError>> + Send {
        let _ = arn;
        let error = unsupported("DescribeImport", table, "this control plane cannot import");
        async { Err(error) }
    }
}

/// The error of a control plane without an optional API.
pub(crate) fn unsupported(operation: &'static str, table: &str, message: &str) -> ControlPlaneError {
    ControlPlaneError {
        kind: ErrorKind::Unsupported,
        operation,
        table: table.to_string(),
        message: message.to_string(),
    }
}

/// The error of a control plane without Application Auto Scaling.
pub fn no_autoscaling(operation: &'static str) -> ControlPlaneError {
    ControlPlaneError {
        kind: ErrorKind::Unsupported,
        operation,
        table: String::new(),
        message: "no Application Auto Scaling client: autoscaling phases need one".into(),
    }
}
