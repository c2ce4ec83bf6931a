//! [`ControlPlane`] on the AWS SDK's DynamoDB client: the only module that speaks the wire API.
//!
//! Retries with backoff for throttling and transient errors come from the SDK's own retry
//! config; this module only translates shapes and classifies the errors that are left.

use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::update_table::UpdateTableError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, OnDemandThroughput, ProvisionedThroughput,
    ScalarAttributeType, TableClass as SdkTableClass, TableDescription,
};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};

use crate::control::{ControlPlane, ControlPlaneError, ErrorKind};
use crate::observed::{Billing, ObservedTable, OnDemandLimits, TableClass, TableStatus};
use crate::plan::{CapacityChange, ClassChange, TableSpec};
use crate::policy::{AttributeKind, Capacity, KeyAttribute};

/// The DynamoDB control plane through an SDK client built once by the caller.
#[derive(Clone, Debug)]
pub struct DynamoDb {
    client: Client,
}

impl DynamoDb {
    pub fn new(client: Client) -> Self {
        DynamoDb { client }
    }

    pub fn client(&self) -> &Client {
        &self.client
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
            .attribute_definitions(attribute(&spec.key.partition))
            .key_schema(key_element(&spec.key.partition, KeyType::Hash));
        if let Some(sort) = &spec.key.sort {
            request = request
                .attribute_definitions(attribute(sort))
                .key_schema(key_element(sort, KeyType::Range));
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
        request.send().await.map(drop).map_err(|e| {
            let kind = e.as_service_error().and_then(|e| {
                if e.is_resource_in_use_exception() {
                    Some(ErrorKind::AlreadyExists)
                } else if e.is_limit_exceeded_exception() {
                    Some(ErrorKind::LimitExceeded)
                } else {
                    None
                }
            });
            classify("CreateTable", &spec.name, &e, kind)
        })
    }

    async fn update_capacity(&self, change: &CapacityChange) -> Result<(), ControlPlaneError> {
        let request = self.client.update_table().table_name(&change.name);
        let request = match (change.from, change.to) {
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
}

/// UpdateTable's ResourceInUseException means the table is busy: defer, as for LimitExceeded.
fn update_error<R: std::fmt::Debug>(table: &str, error: &SdkError<UpdateTableError, R>) -> ControlPlaneError {
    let kind = error.as_service_error().and_then(|e| {
        if e.is_resource_in_use_exception() {
            Some(ErrorKind::InUse)
        } else if e.is_limit_exceeded_exception() {
            Some(ErrorKind::LimitExceeded)
        } else if e.is_resource_not_found_exception() {
            Some(ErrorKind::NotFound)
        } else {
            None
        }
    });
    classify("UpdateTable", table, error, kind)
}

/// Describes an SDK error for the report. `kind` is what the caller read from the typed error
/// (what a ResourceInUseException means differs: "exists" for CreateTable, "busy" for
/// UpdateTable); without it, the error code decides.
fn classify<E, R>(
    operation: &'static str,
    table: &str,
    error: &SdkError<E, R>,
    kind: Option<ErrorKind>,
) -> ControlPlaneError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    let kind = kind.unwrap_or(match error.code() {
        Some("LimitExceededException") => ErrorKind::LimitExceeded,
        Some("ResourceNotFoundException") => ErrorKind::NotFound,
        _ => ErrorKind::Other,
    });
    let message = match error.as_service_error() {
        Some(service) => match (service.code(), service.message()) {
            (Some(code), Some(message)) => format!("{code}: {message}"),
            (Some(code), None) => code.to_string(),
            _ => service.to_string(),
        },
        None => DisplayErrorContext(error).to_string(),
    };
    ControlPlaneError {
        kind,
        operation,
        table: table.to_string(),
        message,
    }
}

fn observed_table(name: &str, table: &TableDescription) -> ObservedTable {
    let throughput = table.provisioned_throughput();
    let billing_summary = table.billing_mode_summary();
    let on_demand = billing_summary
        .and_then(|summary| summary.billing_mode())
        .is_some_and(|mode| *mode == BillingMode::PayPerRequest);
    let billing = if on_demand {
        // DynamoDB reports -1 (or nothing) for "no maximum".
        let max = |units: Option<i64>| units.filter(|u| *u > 0);
        let limits = table.on_demand_throughput();
        Billing::OnDemand(OnDemandLimits {
            max_read: max(limits.and_then(|l| l.max_read_request_units())),
            max_write: max(limits.and_then(|l| l.max_write_request_units())),
        })
    } else {
        Billing::Provisioned(Capacity {
            read: throughput.and_then(|t| t.read_capacity_units()).unwrap_or(0),
            write: throughput.and_then(|t| t.write_capacity_units()).unwrap_or(0),
        })
    };
    ObservedTable {
        name: table.table_name().unwrap_or(name).to_string(),
        status: TableStatus::from_wire(table.table_status().map(|s| s.as_str()).unwrap_or("UNKNOWN")),
        billing,
        decreases_today: throughput
            .and_then(|t| t.number_of_decreases_today())
            .map_or(0, |n| n.clamp(0, i64::from(u32::MAX)) as u32),
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
    }
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

fn key_element(key: &KeyAttribute, key_type: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(&key.name)
        .key_type(key_type)
        .build()
        .expect("both required fields are set")
}
