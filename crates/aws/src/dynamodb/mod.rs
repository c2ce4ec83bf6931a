//! The control-plane ports on the AWS SDK's clients: [`Tables`] on DynamoDB's here (the only
//! module that speaks its wire API), `Scaling` in `scaling`, `Archives` in `archives`,
//! `Mappings` in `mappings`, `Ledger` in `ledger`.
//!
//! Retries with backoff for throttling and transient errors come from the SDK's own retry
//! config; this module only translates shapes and classifies the errors that are left.

mod archives;
mod describe;
mod destinations;
mod errors;
mod import;
mod ledger;
mod mappings;
mod proofs;
mod requests;
mod scaling;

use describe::{observed_table, utc};
use errors::{classify, update_error};
use requests::{
    attribute, attribute_definitions, global_index, index_update, index_warm_update, key_elements,
    on_demand_throughput, projection, sdk_table_class, sse_specification, stream_specification,
    table_name_of, tags, throughput, warm_throughput,
};
use std::collections::BTreeMap;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    BillingMode, CreateGlobalSecondaryIndexAction, ExportFormat, ExportStatus as SdkExportStatus,
    GlobalSecondaryIndexUpdate, LocalSecondaryIndex, OnDemandThroughput, PointInTimeRecoverySpecification,
    PointInTimeRecoveryStatus, TimeToLiveSpecification,
};
use aws_sdk_dynamodb::Client;

use crate::Server;
use ddb_rollover::control::{Clock, ControlPlaneError, ErrorKind, Tables};
use ddb_rollover::ledger::TableIdentity;
use ddb_rollover::policy::Billing;
use ddb_rollover::policy::KeySchema;
use ddb_rollover::table::ImportState;
use ddb_rollover::table::ResourcePolicy;
use ddb_rollover::table::{
    CapacityChange, ClassChange, ExportRequest, ImportRequest, SettingChange, TableSetting, TableSpec,
    TagChange, TtlChange,
};
use ddb_rollover::table::{DestinationChange, DestinationStatus, ObservedDestination};
use ddb_rollover::table::{ExportState, ExportStatus, ObservedTable, TtlState};

/// The DynamoDB control plane through an SDK client built once by the caller, and Application
/// Auto Scaling through its own client when the policy has autoscaling phases.
#[derive(Clone, Debug)]
pub struct DynamoDb {
    client: Client,
    autoscaling: Option<aws_sdk_applicationautoscaling::Client>,
    /// Lambda, for the event source mappings of the policy's consumer function.
    lambda: Option<aws_sdk_lambda::Client>,
    /// S3, for the proof of an archive before its table is deleted.
    archives: Option<archives::S3>,
    /// Whose answers these are: only a local server's may say an API is not there.
    server: Server,
}

impl DynamoDb {
    /// The control plane over `client` on AWS, without Application Auto Scaling or S3.
    pub fn new(client: Client) -> Self {
        DynamoDb {
            client,
            autoscaling: None,
            lambda: None,
            archives: None,
            server: Server::Aws,
        }
    }

    /// The control plane over `client` on a local server (moto, dynalite, DynamoDB Local),
    /// whose answers may say an API is not there.
    pub fn local(client: Client) -> Self {
        DynamoDb::new(client).on(Server::Local)
    }

    /// On `server`: whose answers these are ([`Server`]).
    pub fn on(self, server: Server) -> Self {
        DynamoDb { server, ..self }
    }

    /// With Lambda, for the event source mappings on the tables' streams.
    pub fn with_lambda(self, client: aws_sdk_lambda::Client) -> Self {
        DynamoDb {
            lambda: Some(client),
            ..self
        }
    }

    /// With Application Auto Scaling, for autoscaling phases.
    pub fn with_autoscaling(self, client: aws_sdk_applicationautoscaling::Client) -> Self {
        DynamoDb {
            autoscaling: Some(client),
            ..self
        }
    }

    /// With S3, to prove archives before a deletion and find them for a restore.
    #[cfg(feature = "s3")]
    pub fn with_archives(self, s3: aws_sdk_s3::Client) -> Self {
        DynamoDb {
            archives: Some(s3),
            ..self
        }
    }

    /// The DynamoDB client the calls go through.
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn autoscaling(
        &self,
        operation: &'static str,
    ) -> Result<&aws_sdk_applicationautoscaling::Client, ControlPlaneError> {
        self.autoscaling
            .as_ref()
            .ok_or_else(|| ControlPlaneError::no_autoscaling(operation))
    }
}

impl Tables for DynamoDb {
    async fn list_table_names(&self, prefix: &str) -> Result<Vec<String>, ControlPlaneError> {
        // ListTables returns at most 100 names a page; the paginator follows LastEvaluatedTableName.
        let names = self
            .client
            .list_tables()
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.server.judge(classify("ListTables", prefix, &e, None)))?;
        Ok(names
            .into_iter()
            .filter(|name| name.starts_with(prefix))
            .collect())
    }

    async fn describe_table(&self, name: &str) -> Result<Option<ObservedTable>, ControlPlaneError> {
        match self.client.describe_table().table_name(name).send().await {
            Ok(output) => Ok(output.table().map(|t| observed_table(name, t))),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_resource_not_found_exception()) =>
            {
                Ok(None)
            }
            Err(e) => Err(self.server.judge(classify("DescribeTable", name, &e, None))),
        }
    }

    async fn create_table(&self, spec: &TableSpec) -> Result<Option<TableIdentity>, ControlPlaneError> {
        let mut request = self
            .client
            .create_table()
            .table_name(&spec.name)
            .set_key_schema(Some(key_elements(&spec.key)))
            .set_attribute_definitions(Some(attribute_definitions(spec)));
        for index in &spec.global_indexes {
            request = request.global_secondary_indexes(global_index(index, spec.warm));
        }
        if let Some(warm) = spec.warm {
            request = request.warm_throughput(warm_throughput(warm));
        }
        for index in &spec.local_indexes {
            let key = KeySchema {
                partition: spec.key.partition.clone(),
                sort: Some(index.sort.clone()),
            };
            request = request.local_secondary_indexes(
                LocalSecondaryIndex::builder()
                    .index_name(&index.name)
                    .set_key_schema(Some(key_elements(&key)))
                    .projection(projection(&index.projection))
                    .build()
                    .expect("the required fields are set"),
            );
        }
        request = match spec.billing {
            Billing::Provisioned(capacity) => request
                .billing_mode(BillingMode::Provisioned)
                .provisioned_throughput(throughput(capacity)),
            Billing::OnDemand(limits) => {
                let request = request.billing_mode(BillingMode::PayPerRequest);
                match on_demand_throughput(limits) {
                    Some(max) => request.on_demand_throughput(max),
                    None => request,
                }
            }
        };
        if let Some(class) = spec.table_class {
            request = request.table_class(sdk_table_class(class));
        }
        if spec.deletion_protection {
            request = request.deletion_protection_enabled(true);
        }
        if let Some(view) = spec.stream {
            request = request.stream_specification(stream_specification(Some(view)));
        }
        if let Some(encryption) = &spec.encryption {
            request = request.sse_specification(sse_specification(encryption));
        }
        if !spec.tags.is_empty() {
            request = request.set_tags(Some(tags(&spec.tags)));
        }
        let created = request.send().await.map_err(|e| {
            // For CreateTable, ResourceInUse means the name is taken, not that a table is busy.
            let kind = e
                .as_service_error()
                .filter(|e| e.is_resource_in_use_exception())
                .map(|_| ErrorKind::AlreadyExists);
            self.server.judge(classify("CreateTable", &spec.name, &e, kind))
        })?;
        // The identity AWS gave the table: what the family's ledger records.
        let identity = created.table_description().and_then(|table| {
            Some(TableIdentity::new(
                table.table_arn()?,
                table.creation_date_time().and_then(utc)?,
                table.table_id(),
            ))
        });
        Ok(identity)
    }

    async fn update_capacity(&self, change: &CapacityChange) -> Result<(), ControlPlaneError> {
        let mut request = self.client.update_table().table_name(&change.name);
        for index in &change.indexes {
            request = request.global_secondary_index_updates(index_update(index));
        }
        let request = match (change.from, change.to) {
            // Only the indexes change: the table's throughput is left out (sending it unchanged
            // is a ValidationException).
            _ if !change.changes_table() => request,
            (Billing::Provisioned(_), Billing::Provisioned(to)) => {
                request.provisioned_throughput(throughput(to))
            }
            (Billing::OnDemand(_), Billing::Provisioned(to)) => request
                .billing_mode(BillingMode::Provisioned)
                .provisioned_throughput(throughput(to)),
            (from, Billing::OnDemand(limits)) => {
                let request = if matches!(from, Billing::Provisioned(_)) {
                    request.billing_mode(BillingMode::PayPerRequest)
                } else {
                    request
                };
                // -1 removes a maximum that the phase no longer sets.
                request.on_demand_throughput(
                    OnDemandThroughput::builder()
                        .max_read_request_units(limits.max_read.unwrap_or(-1))
                        .max_write_request_units(limits.max_write.unwrap_or(-1))
                        .build(),
                )
            }
        };
        request
            .send()
            .await
            .map(drop)
            .map_err(|e| update_error(&change.name, &e))
    }

    async fn update_table_class(&self, change: &ClassChange) -> Result<(), ControlPlaneError> {
        self.client
            .update_table()
            .table_name(&change.name)
            .table_class(sdk_table_class(change.to))
            .send()
            .await
            .map(drop)
            .map_err(|e| update_error(&change.name, &e))
    }

    async fn list_tags(&self, arn: &str) -> Result<BTreeMap<String, String>, ControlPlaneError> {
        let table = table_name_of(arn);
        let mut found = BTreeMap::new();
        let mut next_token = None;
        loop {
            let page = self
                .client
                .list_tags_of_resource()
                .resource_arn(arn)
                .set_next_token(next_token)
                .send()
                .await
                .map_err(|e| self.server.judge(classify("ListTagsOfResource", table, &e, None)))?;
            for tag in page.tags() {
                found.insert(tag.key().to_string(), tag.value().to_string());
            }
            next_token = page.next_token().map(str::to_string);
            if next_token.is_none() {
                return Ok(found);
            }
        }
    }

    async fn describe_ttl(&self, name: &str) -> Result<TtlState, ControlPlaneError> {
        let output = self
            .client
            .describe_time_to_live()
            .table_name(name)
            .send()
            .await
            .map_err(|e| self.server.judge(classify("DescribeTimeToLive", name, &e, None)))?;
        let description = output.time_to_live_description();
        Ok(TtlState {
            status: description
                .and_then(|d| d.time_to_live_status())
                .map_or("DISABLED", |s| s.as_str())
                .to_string(),
            attribute: description.and_then(|d| d.attribute_name()).map(str::to_string),
        })
    }

    async fn describe_point_in_time_recovery(&self, name: &str) -> Result<bool, ControlPlaneError> {
        let output = self
            .client
            .describe_continuous_backups()
            .table_name(name)
            .send()
            .await
            .map_err(|e| {
                self.server
                    .judge(classify("DescribeContinuousBackups", name, &e, None))
            })?;
        Ok(output
            .continuous_backups_description()
            .and_then(|d| d.point_in_time_recovery_description())
            .and_then(|d| d.point_in_time_recovery_status())
            .is_some_and(|s| *s == PointInTimeRecoveryStatus::Enabled))
    }

    async fn describe_export(&self, table: &str, arn: &str) -> Result<ExportState, ControlPlaneError> {
        let output = self
            .client
            .describe_export()
            .export_arn(arn)
            .send()
            .await
            .map_err(|e| self.server.judge(classify("DescribeExport", table, &e, None)))?;
        let description = output.export_description();
        let status = match description.and_then(|d| d.export_status()) {
            Some(SdkExportStatus::Completed) => ExportStatus::Completed,
            Some(SdkExportStatus::Failed) => ExportStatus::Failed,
            _ => ExportStatus::InProgress,
        };
        let failure = description.and_then(|d| match (d.failure_code(), d.failure_message()) {
            (None, None) => None,
            (code, message) => Some(format!("{}: {}", code.unwrap_or("?"), message.unwrap_or(""))),
        });
        Ok(ExportState {
            arn: arn.to_string(),
            status,
            export_time: description.and_then(|d| d.export_time()).and_then(utc),
            end_time: description.and_then(|d| d.end_time()).and_then(utc),
            failure,
        })
    }

    async fn import_table(&self, request: &ImportRequest) -> Result<String, ControlPlaneError> {
        import::import_table(&self.client, request)
            .await
            .map_err(|e| self.server.judge(e))
    }

    async fn describe_import(&self, table: &str, arn: &str) -> Result<ImportState, ControlPlaneError> {
        import::describe_import(&self.client, table, arn)
            .await
            .map_err(|e| self.server.judge(e))
    }

    async fn tag_table(&self, change: &TagChange) -> Result<(), ControlPlaneError> {
        self.client
            .tag_resource()
            .resource_arn(&change.arn)
            .set_tags(Some(tags(&change.tags)))
            .send()
            .await
            .map(drop)
            .map_err(|e| self.server.judge(classify("TagResource", &change.name, &e, None)))
    }

    async fn enable_ttl(&self, change: &TtlChange) -> Result<(), ControlPlaneError> {
        let specification = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(&change.attribute)
            .build()
            .expect("both required fields are set");
        self.client
            .update_time_to_live()
            .table_name(&change.name)
            .time_to_live_specification(specification)
            .send()
            .await
            .map(drop)
            .map_err(|e| {
                self.server
                    .judge(classify("UpdateTimeToLive", &change.name, &e, None))
            })
    }

    async fn enable_point_in_time_recovery(&self, name: &str) -> Result<(), ControlPlaneError> {
        let specification = PointInTimeRecoverySpecification::builder()
            .point_in_time_recovery_enabled(true)
            .build()
            .expect("the required field is set");
        self.client
            .update_continuous_backups()
            .table_name(name)
            .point_in_time_recovery_specification(specification)
            .send()
            .await
            .map(drop)
            .map_err(|e| {
                self.server
                    .judge(classify("UpdateContinuousBackups", name, &e, None))
            })
    }

    async fn configure(&self, change: &SettingChange) -> Result<(), ControlPlaneError> {
        let request = self.client.update_table().table_name(&change.name);
        let request = match &change.setting {
            TableSetting::DeletionProtection(on) => request.deletion_protection_enabled(*on),
            TableSetting::Stream(stream) => request.stream_specification(stream_specification(*stream)),
            TableSetting::Encryption(encryption) => request.sse_specification(sse_specification(encryption)),
            TableSetting::AddIndex(spec) => {
                let key = &spec.index.key;
                let mut create = CreateGlobalSecondaryIndexAction::builder()
                    .index_name(&spec.index.name)
                    .set_key_schema(Some(key_elements(key)))
                    .projection(projection(&spec.index.projection));
                create = match spec.billing {
                    Billing::Provisioned(capacity) => create.provisioned_throughput(throughput(capacity)),
                    Billing::OnDemand(limits) => {
                        create.set_on_demand_throughput(on_demand_throughput(limits))
                    }
                };
                // The new index's key attributes must be defined; the table's already are.
                std::iter::once(&key.partition)
                    .chain(&key.sort)
                    .fold(request, |request, key| {
                        request.attribute_definitions(attribute(key))
                    })
                    .global_secondary_index_updates(
                        GlobalSecondaryIndexUpdate::builder()
                            .create(create.build().expect("the required fields are set"))
                            .build(),
                    )
            }
            // The table's and the indexes' raises in one UpdateTable (the Developer Guide's
            // example sends them together).
            TableSetting::Warm(raise) => {
                let request = request.set_warm_throughput(raise.table().map(|part| warm_throughput(part.to)));
                raise.indexes().fold(request, |request, (index, part)| {
                    request.global_secondary_index_updates(index_warm_update(index, part))
                })
            }
        };
        request
            .send()
            .await
            .map(drop)
            .map_err(|e| update_error(&change.name, &e))
    }

    async fn export_table(&self, request: &ExportRequest) -> Result<String, ControlPlaneError> {
        let output = self
            .client
            .export_table_to_point_in_time()
            .table_arn(&request.table_arn)
            .s3_bucket(&request.bucket)
            .s3_prefix(&request.prefix)
            .s3_bucket_owner(&request.bucket_owner)
            .export_format(ExportFormat::DynamodbJson)
            .send()
            .await
            .map_err(|e| {
                self.server
                    .judge(classify("ExportTableToPointInTime", &request.name, &e, None))
            })?;
        output
            .export_description()
            .and_then(|d| d.export_arn())
            .map(str::to_string)
            .ok_or_else(|| {
                ControlPlaneError::failed(
                    "ExportTableToPointInTime",
                    &request.name,
                    "the response has no ExportArn",
                )
            })
    }

    async fn describe_kinesis_destinations(
        &self,
        table: &str,
    ) -> Result<Vec<ObservedDestination>, ControlPlaneError> {
        let output = self
            .client
            .describe_kinesis_streaming_destination()
            .table_name(table)
            .send()
            .await
            .map_err(|e| {
                self.server
                    .judge(classify("DescribeKinesisStreamingDestination", table, &e, None))
            })?;
        Ok(output
            .kinesis_data_stream_destinations()
            .iter()
            .map(destinations::observed_destination)
            .collect())
    }

    async fn enable_kinesis_destination(
        &self,
        change: &DestinationChange,
    ) -> Result<DestinationStatus, ControlPlaneError> {
        let output = self
            .client
            .enable_kinesis_streaming_destination()
            .table_name(&change.name)
            .stream_arn(change.destination.stream_arn.as_str())
            .enable_kinesis_streaming_configuration(destinations::enable_configuration(
                change.destination.precision,
            ))
            .send()
            .await
            .map_err(|e| {
                self.server.judge(classify(
                    "EnableKinesisStreamingDestination",
                    &change.name,
                    &e,
                    None,
                ))
            })?;
        Ok(DestinationStatus::from_wire(
            output
                .destination_status()
                .map_or("ENABLING", |status| status.as_str()),
        ))
    }

    async fn get_resource_policy(&self, table: &str, arn: &str) -> Result<ResourcePolicy, ControlPlaneError> {
        match self.client.get_resource_policy().resource_arn(arn).send().await {
            Ok(output) => Ok(ResourcePolicy {
                document: output.policy().map(str::to_string),
                revision: output.revision_id().map(str::to_string),
            }),
            // No policy on the table.
            Err(e) if e.code() == Some("PolicyNotFoundException") => Ok(ResourcePolicy::default()),
            Err(e) => Err(self.server.judge(classify("GetResourcePolicy", table, &e, None))),
        }
    }

    async fn put_resource_policy(
        &self,
        table: &str,
        arn: &str,
        document: &str,
        expected_revision: &str,
    ) -> Result<String, ControlPlaneError> {
        let output = self
            .client
            .put_resource_policy()
            .resource_arn(arn)
            .policy(document)
            .expected_revision_id(expected_revision)
            .send()
            .await
            .map_err(|e| self.server.judge(classify("PutResourcePolicy", table, &e, None)))?;
        Ok(output.revision_id().unwrap_or_default().to_string())
    }

    async fn delete_resource_policy(
        &self,
        table: &str,
        arn: &str,
        expected_revision: &str,
    ) -> Result<(), ControlPlaneError> {
        self.client
            .delete_resource_policy()
            .resource_arn(arn)
            .expected_revision_id(expected_revision)
            .send()
            .await
            .map(drop)
            .map_err(|e| {
                self.server
                    .judge(classify("DeleteResourcePolicy", table, &e, None))
            })
    }

    async fn delete_table(&self, name: &str) -> Result<(), ControlPlaneError> {
        self.client
            .delete_table()
            .table_name(name)
            .send()
            .await
            .map(drop)
            .map_err(|e| self.server.judge(classify("DeleteTable", name, &e, None)))
    }
}

/// The wall clock.
impl Clock for DynamoDb {}
