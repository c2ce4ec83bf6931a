//! The DynamoDB port: tables, their tags, TTL, point-in-time recovery, settings, exports,
//! imports and resource-based policies. Everything a run reads of or changes on a table goes
//! through here, so the executor never sees the SDK's shapes.

use std::collections::BTreeMap;
use std::future::Future;

use super::ControlPlaneError;
use crate::table::archive::ImportState;
use crate::table::changes::{
    CapacityChange, ClassChange, ExportRequest, ImportRequest, SettingChange, TableSpec, TagChange, TtlChange,
};
use crate::table::evidence::TableIdentity;
use crate::table::seal::ResourcePolicy;
use crate::table::stream::{DestinationChange, DestinationStatus, ObservedDestination};
use crate::table::{ExportState, ObservedTable, TtlState};

/// The DynamoDB control plane as the executor sees it.
pub trait Tables: Sync {
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

    /// CreateTable; returns the identity DynamoDB gave the table (`None` when its answer did
    /// not give the ARN and creation time).
    fn create_table(
        &self,
        spec: &TableSpec,
    ) -> impl Future<Output = Result<Option<TableIdentity>, ControlPlaneError>> + Send;

    /// UpdateTable of the billing mode and throughput of the table and its indexes.
    fn update_capacity(
        &self,
        change: &CapacityChange,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// UpdateTable of the table class.
    fn update_table_class(
        &self,
        change: &ClassChange,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// The table's tags (ListTagsOfResource, every page).
    fn list_tags(
        &self,
        arn: &str,
    ) -> impl Future<Output = Result<BTreeMap<String, String>, ControlPlaneError>> + Send;

    /// DescribeTimeToLive.
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

    /// TagResource.
    fn tag_table(&self, change: &TagChange) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// UpdateTimeToLive, turning TTL on.
    fn enable_ttl(&self, change: &TtlChange) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// UpdateContinuousBackups, turning point-in-time recovery on.
    fn enable_point_in_time_recovery(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// UpdateTable of one setting, or the index creation it carries.
    fn configure(&self, change: &SettingChange)
        -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// Starts the export; returns its ARN.
    fn export_table(
        &self,
        request: &ExportRequest,
    ) -> impl Future<Output = Result<String, ControlPlaneError>> + Send;

    /// DeleteTable. Lifting deletion protection first is the executor's step ([`Self::configure`]).
    fn delete_table(&self, name: &str) -> impl Future<Output = Result<(), ControlPlaneError>> + Send;

    /// GetResourcePolicy: the table's resource-based policy and its revision; a table without
    /// one (PolicyNotFoundException) has `document: None`. `Unsupported` by default (then no
    /// table is sealed, so no archived table is deleted).
    fn get_resource_policy(
        &self,
        table: &str,
        arn: &str,
    ) -> impl Future<Output = Result<ResourcePolicy, ControlPlaneError>> + Send {
        let _ = arn;
        let error = ControlPlaneError::unsupported(
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
        let error = ControlPlaneError::unsupported(
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
        let error = ControlPlaneError::unsupported(
            "DeleteResourcePolicy",
            table,
            "this control plane has no resource-based policies",
        );
        async { Err(error) }
    }

    /// DescribeKinesisStreamingDestination: every Kinesis data stream destination the table
    /// has, in any status. `Unsupported` by default (then no destination can be on a table).
    fn describe_kinesis_destinations(
        &self,
        table: &str,
    ) -> impl Future<Output = Result<Vec<ObservedDestination>, ControlPlaneError>> + Send {
        let error = ControlPlaneError::unsupported(
            "DescribeKinesisStreamingDestination",
            table,
            "this control plane has no Kinesis data stream destinations",
        );
        async { Err(error) }
    }

    /// EnableKinesisStreamingDestination; returns the status DynamoDB answered (ENABLING until
    /// DescribeKinesisStreamingDestination says otherwise). `Unsupported` by default.
    fn enable_kinesis_destination(
        &self,
        change: &DestinationChange,
    ) -> impl Future<Output = Result<DestinationStatus, ControlPlaneError>> + Send {
        let error = ControlPlaneError::unsupported(
            "EnableKinesisStreamingDestination",
            &change.name,
            "this control plane has no Kinesis data stream destinations",
        );
        async { Err(error) }
    }

    /// ImportTable; returns the import's ARN. `Unsupported` by default.
    fn import_table(
        &self,
        request: &ImportRequest,
    ) -> impl Future<Output = Result<String, ControlPlaneError>> + Send {
        let error = ControlPlaneError::unsupported(
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
        let error =
            ControlPlaneError::unsupported("DescribeImport", table, "this control plane cannot import");
        async { Err(error) }
    }
}
