//! [`ControlPlane`] on the AWS SDK's DynamoDB client: the only module that speaks the wire API.
//!
//! Retries with backoff for throttling and transient errors come from the SDK's own retry
//! config; this module only translates shapes and classifies the errors that are left.

use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ProvisionedThroughput, ScalarAttributeType,
    TableDescription,
};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};

use crate::control::{ControlPlane, ControlPlaneError, ErrorKind};
use crate::observed::{Billing, ObservedTable, TableStatus};
use crate::plan::{CapacityChange, TableSpec};
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
            .billing_mode(BillingMode::Provisioned)
            .provisioned_throughput(throughput(spec.capacity))
            .attribute_definitions(attribute(&spec.key.partition))
            .key_schema(key_element(&spec.key.partition, KeyType::Hash));
        if let Some(sort) = &spec.key.sort {
            request = request
                .attribute_definitions(attribute(sort))
                .key_schema(key_element(sort, KeyType::Range));
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
        let mut request = self
            .client
            .update_table()
            .table_name(&change.name)
            .provisioned_throughput(throughput(change.to));
        if change.from == Billing::OnDemand {
            request = request.billing_mode(BillingMode::Provisioned);
        }
        request.send().await.map(drop).map_err(|e| {
            let kind = e.as_service_error().and_then(|e| {
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
            classify("UpdateTable", &change.name, &e, kind)
        })
    }
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
    let on_demand = table
        .billing_mode_summary()
        .and_then(|summary| summary.billing_mode())
        .is_some_and(|mode| *mode == BillingMode::PayPerRequest);
    let billing = if on_demand {
        Billing::OnDemand
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
        last_decrease: throughput
            .and_then(|t| t.last_decrease_date_time())
            .and_then(|t| DateTime::<Utc>::from_timestamp(t.secs(), t.subsec_nanos())),
    }
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
