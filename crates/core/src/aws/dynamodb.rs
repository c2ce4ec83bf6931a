//! [`ControlPlane`] on the AWS SDK's DynamoDB client: the only module that speaks the wire API.
//!
//! Retries with backoff for throttling and transient errors come from the SDK's own retry
//! config; this module only translates shapes and classifies the errors that are left.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::update_table::UpdateTableError;
use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, CreateGlobalSecondaryIndexAction, ExportFormat,
    ExportStatus as SdkExportStatus, GlobalSecondaryIndex, GlobalSecondaryIndexDescription,
    GlobalSecondaryIndexUpdate, KeySchemaElement, KeyType, LocalSecondaryIndex, OnDemandThroughput,
    PointInTimeRecoverySpecification, PointInTimeRecoveryStatus, Projection as SdkProjection, ProjectionType,
    ProvisionedThroughput, ProvisionedThroughputDescription, ScalarAttributeType, SseSpecification,
    SseStatus, SseType, StreamSpecification, StreamViewType, TableClass as SdkTableClass, TableDescription,
    Tag, TimeToLiveSpecification, UpdateGlobalSecondaryIndexAction,
};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};

use crate::aws::autoscaling;
use crate::policy::limits::TABLE_QUOTA_ADVICE;
use crate::policy::scaling::{DeregisterScaling, ObservedScalableTarget, RegisterScaling};
use crate::policy::settings::{AttributeKind, Capacity, KeyAttribute, KeySchema, Projection};
use crate::policy::settings::{Billing, OnDemandLimits, TableClass};
use crate::policy::settings::{Encryption, StreamSetting, StreamView};
use crate::run::control::{no_autoscaling, ControlPlane, ControlPlaneError, ErrorKind};
use crate::table::changes::{
    CapacityChange, ClassChange, ExportRequest, IndexCapacityChange, IndexSpec, SettingChange, TableSetting,
    TableSpec, TagChange, TtlChange,
};
use crate::table::{
    ExportState, ExportStatus, ObservedEncryption, ObservedIndex, ObservedLocalIndex, ObservedTable,
    TableStatus, TtlState,
};

/// The DynamoDB control plane through an SDK client built once by the caller, and Application
/// Auto Scaling through its own client when the policy has autoscaling phases.
#[derive(Clone, Debug)]
pub struct DynamoDb {
    client: Client,
    autoscaling: Option<aws_sdk_applicationautoscaling::Client>,
}

impl DynamoDb {
    pub fn new(client: Client) -> Self {
        DynamoDb {
            client,
            autoscaling: None,
        }
    }

    /// With Application Auto Scaling, for autoscaling phases ([`crate::aws::autoscaling`]).
    pub fn with_autoscaling(self, client: aws_sdk_applicationautoscaling::Client) -> Self {
        DynamoDb {
            autoscaling: Some(client),
            ..self
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    fn autoscaling(
        &self,
        operation: &'static str,
    ) -> Result<&aws_sdk_applicationautoscaling::Client, ControlPlaneError> {
        self.autoscaling.as_ref().ok_or_else(|| no_autoscaling(operation))
    }
}

impl ControlPlane for DynamoDb {
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
            .map_err(|e| classify("ListTables", prefix, &e, None))?;
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
            Err(e) => Err(classify("DescribeTable", name, &e, None)),
        }
    }

    async fn create_table(&self, spec: &TableSpec) -> Result<(), ControlPlaneError> {
        let mut request = self
            .client
            .create_table()
            .table_name(&spec.name)
            .set_key_schema(Some(key_elements(&spec.key)));
        // One definition per attribute used in any key, the table's or an index's.
        let mut attributes: BTreeMap<&str, &KeyAttribute> = BTreeMap::new();
        let keys = std::iter::once(&spec.key)
            .chain(spec.global_indexes.iter().map(|i| &i.index.key))
            .flat_map(|key| std::iter::once(&key.partition).chain(&key.sort))
            .chain(spec.local_indexes.iter().map(|i| &i.sort));
        for key in keys {
            attributes.entry(&key.name).or_insert(key);
        }
        for key in attributes.values() {
            request = request.attribute_definitions(attribute(key));
        }
        for spec in &spec.global_indexes {
            request = request.global_secondary_indexes(global_index(spec));
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
        request.send().await.map(drop).map_err(|e| {
            // For CreateTable, ResourceInUse means the name is taken, not that a table is busy.
            let kind = e
                .as_service_error()
                .filter(|e| e.is_resource_in_use_exception())
                .map(|_| ErrorKind::AlreadyExists);
            classify("CreateTable", &spec.name, &e, kind)
        })
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
                .map_err(|e| classify("ListTagsOfResource", table, &e, None))?;
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
            .map_err(|e| classify("DescribeTimeToLive", name, &e, None))?;
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
            .map_err(|e| classify("DescribeContinuousBackups", name, &e, None))?;
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
            .map_err(|e| classify("DescribeExport", table, &e, None))?;
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
            end_time: description.and_then(|d| d.end_time()).and_then(utc),
            failure,
        })
    }

    async fn tag_table(&self, change: &TagChange) -> Result<(), ControlPlaneError> {
        self.client
            .tag_resource()
            .resource_arn(&change.arn)
            .set_tags(Some(tags(&change.tags)))
            .send()
            .await
            .map(drop)
            .map_err(|e| classify("TagResource", &change.name, &e, None))
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
            .map_err(|e| classify("UpdateTimeToLive", &change.name, &e, None))
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
            .map_err(|e| classify("UpdateContinuousBackups", name, &e, None))
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
            .export_format(ExportFormat::DynamodbJson)
            .send()
            .await
            .map_err(|e| classify("ExportTableToPointInTime", &request.name, &e, None))?;
        output
            .export_description()
            .and_then(|d| d.export_arn())
            .map(str::to_string)
            .ok_or_else(|| ControlPlaneError {
                kind: ErrorKind::Other,
                operation: "ExportTableToPointInTime",
                table: request.name.clone(),
                message: "the response has no ExportArn".into(),
            })
    }

    async fn delete_table(&self, name: &str) -> Result<(), ControlPlaneError> {
        self.client
            .delete_table()
            .table_name(name)
            .send()
            .await
            .map(drop)
            .map_err(|e| classify("DeleteTable", name, &e, None))
    }

    async fn describe_scaling(
        &self,
        tables: &[String],
    ) -> Result<Vec<ObservedScalableTarget>, ControlPlaneError> {
        autoscaling::describe(self.autoscaling("DescribeScalableTargets")?, tables).await
    }

    async fn register_scaling(&self, change: &RegisterScaling) -> Result<(), ControlPlaneError> {
        autoscaling::register(self.autoscaling("RegisterScalableTarget")?, change).await
    }

    async fn deregister_scaling(&self, change: &DeregisterScaling) -> Result<(), ControlPlaneError> {
        autoscaling::deregister(self.autoscaling("DeregisterScalableTarget")?, change).await
    }
}

/// The table name in a table ARN (`...:table/NAME`), for error reports.
fn table_name_of(arn: &str) -> &str {
    arn.rsplit_once(":table/").map_or(arn, |(_, name)| name)
}

fn tags(tags: &BTreeMap<String, String>) -> Vec<Tag> {
    tags.iter()
        .map(|(key, value)| {
            Tag::builder()
                .key(key)
                .value(value)
                .build()
                .expect("both required fields are set")
        })
        .collect()
}

fn stream_specification(stream: StreamSetting) -> StreamSpecification {
    StreamSpecification::builder()
        .stream_enabled(stream.is_some())
        .set_stream_view_type(stream.map(|view| StreamViewType::from(view.as_wire_str())))
        .build()
        .expect("the required field is set")
}

fn sse_specification(encryption: &Encryption) -> SseSpecification {
    match encryption {
        Encryption::AwsOwned => SseSpecification::builder().enabled(false).build(),
        Encryption::AwsManaged => SseSpecification::builder()
            .enabled(true)
            .sse_type(SseType::Kms)
            .build(),
        Encryption::CustomerManaged { kms_key } => SseSpecification::builder()
            .enabled(true)
            .sse_type(SseType::Kms)
            .kms_master_key_id(kms_key)
            .build(),
    }
}

/// What a server answers for an operation it does not implement: HTTP 400 with `__type`
/// `com.amazonaws.dynamodb.v20120810#UnknownOperationException` (DynamoDB Local 3.3.1, message
/// "Tagging is not currently supported in DynamoDB Local." for ListTagsOfResource, TagResource
/// and UntagResource, "An unknown operation was requested." for DescribeContinuousBackups,
/// UpdateContinuousBackups, ExportTableToPointInTime, DescribeExport) or
/// `com.amazon.coral.service#UnknownOperationException` with an empty message (dynalite). The
/// SDK reads the code after the `#`.
const UNKNOWN_OPERATION: &str = "UnknownOperationException";

/// The start of DynamoDB's ValidationException message for an UpdateTable whose throughput is
/// already what it asks for (another run got there first).
const UNCHANGED_THROUGHPUT: &str = "will not change";

/// UpdateTable's one error that means something besides its code: the ValidationException
/// for throughput that is already what it asks for (another run got there first).
fn update_error<R: std::fmt::Debug + 'static>(
    table: &str,
    error: &SdkError<UpdateTableError, R>,
) -> ControlPlaneError {
    let kind = error
        .as_service_error()
        .filter(|e| {
            e.meta().code() == Some("ValidationException")
                && e.meta()
                    .message()
                    .is_some_and(|m| m.contains(UNCHANGED_THROUGHPUT))
        })
        .map(|_| ErrorKind::NoChange);
    classify("UpdateTable", table, error, kind)
}

/// Describes an SDK error for the report. The error code decides its kind (ResourceInUse:
/// busy, LimitExceeded, ResourceNotFound: gone, UnknownOperation: unsupported), unless the
/// caller read a different meaning from the typed error (`kind`: CreateTable's ResourceInUse
/// is "exists", UpdateTable's unchanged-throughput ValidationException is "no change").
fn classify<E, R>(
    operation: &'static str,
    table: &str,
    error: &SdkError<E, R>,
    kind: Option<ErrorKind>,
) -> ControlPlaneError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug + 'static,
{
    let kind = kind.unwrap_or(match error.code() {
        Some("LimitExceededException") => ErrorKind::LimitExceeded,
        Some("ResourceNotFoundException") => ErrorKind::NotFound,
        Some("ResourceInUseException") => ErrorKind::InUse,
        Some(UNKNOWN_OPERATION) => ErrorKind::Unsupported,
        _ => ErrorKind::Other,
    });
    let message = match error.as_service_error() {
        Some(service) => {
            let text = match (service.code(), service.message()) {
                (Some(code), Some(message)) => format!("{code}: {message}"),
                (Some(code), None) => code.to_string(),
                _ => one_line(service),
            };
            match service.code().and_then(|code| advice_for_code(code, operation)) {
                Some(advice) => format!("{}. {advice}", text.trim_end_matches('.')),
                None => text,
            }
        }
        None => {
            let advice = match error {
                SdkError::DispatchFailure(_) | SdkError::TimeoutError(_) => {
                    "DynamoDB could not be reached: check the endpoint, the region and the network; a later run retries"
                }
                SdkError::ResponseError(_) => "DynamoDB's answer could not be read; a later run retries",
                _ => "the request could not be built or sent; a later run retries",
            };
            format!("{}. {advice}", one_line(error))
        }
    };
    ControlPlaneError {
        kind,
        operation,
        table: table.to_string(),
        message,
    }
}

/// An error and its sources as one line (`dispatch failure: io error: Connection refused`),
/// without the Rust debug dump the SDK's own context printer appends.
fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(error) = next {
        let text = error.to_string();
        // Wrappers often repeat their source's text: keep each piece once.
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = error.source();
    }
    parts.join(": ").replace('\n', " ")
}

/// What to do about a service error, for the codes where the answer is known.
fn advice_for_code(code: &str, operation: &str) -> Option<String> {
    Some(match code {
        "AccessDeniedException" | "UnrecognizedClientException" => format!(
            "the caller may not call dynamodb:{operation} on this table: check the role's policy (and its family-tag conditions) or the credentials"
        ),
        "ThrottlingException" | "ProvisionedThroughputExceededException" | "RequestLimitExceeded" => {
            "DynamoDB throttled the call after the SDK's retries: a later run retries; spread runs out if it persists".into()
        }
        "InternalServerError" | "ServiceUnavailable" | "InternalFailure" => {
            "DynamoDB failed on its side: a later run retries".into()
        }
        "ValidationException" => {
            "DynamoDB refused the request as invalid: check the policy's values for this table (capacity, class, template); every run sends it again until it is fixed".into()
        }
        UNKNOWN_OPERATION => format!(
            "this endpoint does not implement dynamodb:{operation}: local servers (DynamoDB Local, dynalite) lack parts of DynamoDB's API, AWS has it all"
        ),
        // A period's table that cannot be created must not wait for a later run.
        "LimitExceededException" if operation == "CreateTable" => TABLE_QUOTA_ADVICE.into(),
        "LimitExceededException" => {
            "an account or table limit was reached (concurrent table operations, decreases): a later run retries".into()
        }
        _ => return None,
    })
}

fn observed_table(name: &str, table: &TableDescription) -> ObservedTable {
    let throughput = table.provisioned_throughput();
    let billing_summary = table.billing_mode_summary();
    let on_demand = billing_summary
        .and_then(|summary| summary.billing_mode())
        .is_some_and(|mode| *mode == BillingMode::PayPerRequest);
    let billing = billing_of(on_demand, throughput, table.on_demand_throughput());
    ObservedTable {
        name: table.table_name().unwrap_or(name).to_string(),
        status: TableStatus::from_wire(table.table_status().map(|s| s.as_str()).unwrap_or("UNKNOWN")),
        key: key_schema(table.key_schema(), table.attribute_definitions()),
        billing,
        decreases_today: decreases_today(throughput),
        last_decrease: throughput.and_then(|t| t.last_decrease_date_time()).and_then(utc),
        last_switch_to_on_demand: billing_summary
            .and_then(|s| s.last_update_to_pay_per_request_date_time())
            .and_then(utc),
        table_class: match table.table_class_summary().and_then(|c| c.table_class()) {
            Some(SdkTableClass::StandardInfrequentAccess) => TableClass::StandardIa,
            _ => TableClass::Standard,
        },
        table_class_updated: table
            .table_class_summary()
            .and_then(|c| c.last_update_date_time())
            .and_then(utc),
        arn: table.table_arn().map(str::to_string),
        deletion_protection: table.deletion_protection_enabled().unwrap_or(false),
        stream: table
            .stream_specification()
            .filter(|s| s.stream_enabled())
            .and_then(|s| s.stream_view_type())
            .and_then(|v| StreamView::from_wire(v.as_str())),
        global_indexes: table
            .global_secondary_indexes()
            .iter()
            .map(|index| observed_index(index, on_demand, table.attribute_definitions()))
            .collect(),
        local_indexes: table
            .local_secondary_indexes()
            .iter()
            .map(|index| ObservedLocalIndex {
                name: index.index_name().unwrap_or_default().to_string(),
                key: key_schema(index.key_schema(), table.attribute_definitions()),
                projection: index.projection().and_then(observed_projection),
            })
            .collect(),
        encryption: match table.sse_description() {
            Some(sse)
                if matches!(
                    sse.status(),
                    Some(SseStatus::Enabled | SseStatus::Enabling | SseStatus::Updating)
                ) =>
            {
                ObservedEncryption::Kms {
                    key_arn: sse.kms_master_key_arn().map(str::to_string),
                }
            }
            _ => ObservedEncryption::AwsOwned,
        },
        tags: None,
        ttl: None,
        point_in_time_recovery: None,
        export: None,
        scaling: None,
        tags_unsupported: false,
        scaling_unsupported: false,
    }
}

/// A table's or an index's throughput, in the table's billing mode.
fn billing_of(
    on_demand: bool,
    throughput: Option<&ProvisionedThroughputDescription>,
    limits: Option<&OnDemandThroughput>,
) -> Billing {
    if on_demand {
        // DynamoDB reports -1 (or nothing) for "no maximum".
        let max = |units: Option<i64>| units.filter(|u| *u > 0);
        Billing::OnDemand(OnDemandLimits {
            max_read: max(limits.and_then(|l| l.max_read_request_units())),
            max_write: max(limits.and_then(|l| l.max_write_request_units())),
        })
    } else {
        Billing::Provisioned(Capacity {
            read: throughput.and_then(|t| t.read_capacity_units()).unwrap_or(0),
            write: throughput.and_then(|t| t.write_capacity_units()).unwrap_or(0),
        })
    }
}

fn decreases_today(throughput: Option<&ProvisionedThroughputDescription>) -> u32 {
    throughput
        .and_then(|t| t.number_of_decreases_today())
        .map_or(0, |n| n.clamp(0, i64::from(u32::MAX)) as u32)
}

fn observed_index(
    index: &GlobalSecondaryIndexDescription,
    on_demand: bool,
    definitions: &[AttributeDefinition],
) -> ObservedIndex {
    let throughput = index.provisioned_throughput();
    ObservedIndex {
        name: index.index_name().unwrap_or_default().to_string(),
        status: TableStatus::from_wire(index.index_status().map_or("ACTIVE", |s| s.as_str())),
        backfilling: index.backfilling().unwrap_or(false),
        billing: billing_of(on_demand, throughput, index.on_demand_throughput()),
        decreases_today: decreases_today(throughput),
        last_decrease: throughput.and_then(|t| t.last_decrease_date_time()).and_then(utc),
        key: key_schema(index.key_schema(), definitions),
        projection: index.projection().and_then(observed_projection),
    }
}

/// An index's projection as DescribeTable reports it; `None` for a type this version does not
/// know (then the index is not provably the policy's).
fn observed_projection(projection: &SdkProjection) -> Option<Projection> {
    match projection.projection_type()? {
        ProjectionType::All => Some(Projection::All),
        ProjectionType::KeysOnly => Some(Projection::KeysOnly),
        ProjectionType::Include => Some(Projection::Include(projection.non_key_attributes().to_vec())),
        _ => None,
    }
}

/// A table's or an index's key with its attribute types (from the table's AttributeDefinitions);
/// `None` when the description lacks it.
fn key_schema(elements: &[KeySchemaElement], definitions: &[AttributeDefinition]) -> Option<KeySchema> {
    let attribute = |key_type: KeyType| -> Option<KeyAttribute> {
        let name = elements
            .iter()
            .find(|k| *k.key_type() == key_type)?
            .attribute_name();
        let kind = match definitions
            .iter()
            .find(|a| a.attribute_name() == name)?
            .attribute_type()
        {
            ScalarAttributeType::S => AttributeKind::S,
            ScalarAttributeType::N => AttributeKind::N,
            ScalarAttributeType::B => AttributeKind::B,
            _ => return None,
        };
        Some(KeyAttribute {
            name: name.to_string(),
            kind,
        })
    };
    let partition = attribute(KeyType::Hash)?;
    let sort = elements
        .iter()
        .any(|k| *k.key_type() == KeyType::Range)
        .then(|| attribute(KeyType::Range));
    Some(KeySchema {
        partition,
        sort: match sort {
            None => None,
            Some(Some(sort)) => Some(sort),
            // A sort key whose type is not described: the key is unknown.
            Some(None) => return None,
        },
    })
}

fn utc(time: &aws_sdk_dynamodb::primitives::DateTime) -> Option<DateTime<Utc>> {
    DateTime::<Utc>::from_timestamp(time.secs(), time.subsec_nanos())
}

fn sdk_table_class(class: TableClass) -> SdkTableClass {
    match class {
        TableClass::Standard => SdkTableClass::Standard,
        TableClass::StandardIa => SdkTableClass::StandardInfrequentAccess,
    }
}

/// The maximum on-demand throughput to send at creation, if the phase sets one.
fn on_demand_throughput(limits: OnDemandLimits) -> Option<OnDemandThroughput> {
    (limits.max_read.is_some() || limits.max_write.is_some()).then(|| {
        OnDemandThroughput::builder()
            .set_max_read_request_units(limits.max_read)
            .set_max_write_request_units(limits.max_write)
            .build()
    })
}

fn throughput(capacity: Capacity) -> ProvisionedThroughput {
    ProvisionedThroughput::builder()
        .read_capacity_units(capacity.read)
        .write_capacity_units(capacity.write)
        .build()
        .expect("both required fields are set")
}

fn attribute(key: &KeyAttribute) -> AttributeDefinition {
    let kind = match key.kind {
        AttributeKind::S => ScalarAttributeType::S,
        AttributeKind::N => ScalarAttributeType::N,
        AttributeKind::B => ScalarAttributeType::B,
    };
    AttributeDefinition::builder()
        .attribute_name(&key.name)
        .attribute_type(kind)
        .build()
        .expect("both required fields are set")
}

/// A key schema as DynamoDB takes it: the partition (HASH) key, then the sort (RANGE) key.
fn key_elements(key: &KeySchema) -> Vec<KeySchemaElement> {
    std::iter::once(key_element(&key.partition, KeyType::Hash))
        .chain(key.sort.as_ref().map(|sort| key_element(sort, KeyType::Range)))
        .collect()
}

fn projection(projection: &Projection) -> SdkProjection {
    match projection {
        Projection::KeysOnly => SdkProjection::builder().projection_type(ProjectionType::KeysOnly),
        Projection::All => SdkProjection::builder().projection_type(ProjectionType::All),
        Projection::Include(attributes) => SdkProjection::builder()
            .projection_type(ProjectionType::Include)
            .set_non_key_attributes(Some(attributes.clone())),
    }
    .build()
}

fn global_index(spec: &IndexSpec) -> GlobalSecondaryIndex {
    let index = GlobalSecondaryIndex::builder()
        .index_name(&spec.index.name)
        .set_key_schema(Some(key_elements(&spec.index.key)))
        .projection(projection(&spec.index.projection));
    match spec.billing {
        Billing::Provisioned(capacity) => index.provisioned_throughput(throughput(capacity)),
        Billing::OnDemand(limits) => index.set_on_demand_throughput(on_demand_throughput(limits)),
    }
    .build()
    .expect("the required fields are set")
}

/// One index's throughput in an UpdateTable; on-demand maximums the phase no longer sets are
/// removed with -1, as for the table.
fn index_update(change: &IndexCapacityChange) -> GlobalSecondaryIndexUpdate {
    let update = UpdateGlobalSecondaryIndexAction::builder().index_name(&change.index);
    let update = match change.to {
        Billing::Provisioned(capacity) => update.provisioned_throughput(throughput(capacity)),
        Billing::OnDemand(limits) => update.on_demand_throughput(
            OnDemandThroughput::builder()
                .max_read_request_units(limits.max_read.unwrap_or(-1))
                .max_write_request_units(limits.max_write.unwrap_or(-1))
                .build(),
        ),
    };
    GlobalSecondaryIndexUpdate::builder()
        .update(update.build().expect("the required field is set"))
        .build()
}

fn key_element(key: &KeyAttribute, key_type: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(&key.name)
        .key_type(key_type)
        .build()
        .expect("both required fields are set")
}
