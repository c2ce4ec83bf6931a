//! The ledger port on DynamoDB's client: the family's records as items of its ledger table
//! (`family` + `record` keys, `version`, `body`, `expires`), every write conditional.

use std::collections::HashMap;

use aws_sdk_dynamodb::client::Waiters;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    PointInTimeRecoverySpecification, ScalarAttributeType, Tag,
};

use super::errors::classify;
use super::DynamoDb;
use ddb_rollover::control::{ControlPlaneError, ErrorKind, Expect, Ledger};
use ddb_rollover::ledger::StoredRecord;
use ddb_rollover::policy::TAG_FAMILY;

const FAMILY: &str = "family";
const RECORD: &str = "record";
const VERSION: &str = "version";
const BODY: &str = "body";
const EXPIRES: &str = "expires";

/// How long a new ledger may stay CREATING.
const LEDGER_ACTIVE_WITHIN: std::time::Duration = std::time::Duration::from_secs(120);

/// The tag that marks the ledger table for people (and IAM conditions).
pub(crate) const TAG_LEDGER: &str = "ddb-rollover:ledger";

impl Ledger for DynamoDb {
    async fn read_ledger(
        &self,
        ledger: &str,
        family: &str,
    ) -> Result<Option<Vec<StoredRecord>>, ControlPlaneError> {
        let pages = self
            .client
            .query()
            .table_name(ledger)
            .key_condition_expression("#f = :f")
            .expression_attribute_names("#f", FAMILY)
            .expression_attribute_values(":f", AttributeValue::S(family.to_string()))
            .consistent_read(true)
            .into_paginator()
            .items()
            .send()
            .collect::<Vec<_>>()
            .await;
        let mut records = Vec::new();
        for item in pages {
            match item {
                Ok(item) => records.push(stored(&item)),
                Err(e) if e.code() == Some("ResourceNotFoundException") => return Ok(None),
                Err(e) => return Err(classify("Query", ledger, &e, None)),
            }
        }
        Ok(Some(records))
    }

    async fn create_ledger(&self, ledger: &str, family: &str) -> Result<(), ControlPlaneError> {
        let key = |name: &str, kind| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(kind)
                .build()
                .expect("the required fields are set")
        };
        let attribute = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .expect("the required fields are set")
        };
        let tag = |key: &str, value: &str| Tag::builder().key(key).value(value).build().expect("set");
        let created = self
            .client
            .create_table()
            .table_name(ledger)
            .key_schema(key(FAMILY, KeyType::Hash))
            .key_schema(key(RECORD, KeyType::Range))
            .attribute_definitions(attribute(FAMILY))
            .attribute_definitions(attribute(RECORD))
            .billing_mode(BillingMode::PayPerRequest)
            .deletion_protection_enabled(true)
            .tags(tag(TAG_FAMILY, family))
            .tags(tag(TAG_LEDGER, "true"))
            .send()
            .await;
        let made = match created {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some("ResourceInUseException") => Err(classify(
                "CreateTable",
                ledger,
                &e,
                Some(ErrorKind::AlreadyExists),
            )),
            // A server that does not take tags at CreateTable, or deletion protection, answers
            // ValidationException or UnknownOperation: the ledger is made without them.
            Err(e)
                if matches!(
                    e.code(),
                    Some("ValidationException" | "UnknownOperationException")
                ) =>
            {
                self.client
                    .create_table()
                    .table_name(ledger)
                    .key_schema(key(FAMILY, KeyType::Hash))
                    .key_schema(key(RECORD, KeyType::Range))
                    .attribute_definitions(attribute(FAMILY))
                    .attribute_definitions(attribute(RECORD))
                    .billing_mode(BillingMode::PayPerRequest)
                    .send()
                    .await
                    .map(drop)
                    .map_err(|e| match e.code() {
                        Some("ResourceInUseException") => {
                            classify("CreateTable", ledger, &e, Some(ErrorKind::AlreadyExists))
                        }
                        _ => classify("CreateTable", ledger, &e, None),
                    })
            }
            Err(e) => Err(classify("CreateTable", ledger, &e, None)),
        };
        // Another run making it at the same moment: it is written to once ACTIVE all the same.
        let made_by_another = matches!(&made, Err(e) if e.kind == ErrorKind::AlreadyExists);
        if !made_by_another {
            made.clone()?;
        }
        // Records can be written once it is ACTIVE (the SDK's waiter polls DescribeTable).
        self.client
            .wait_until_table_exists()
            .table_name(ledger)
            .wait(LEDGER_ACTIVE_WITHIN)
            .await
            .map_err(|e| {
                ControlPlaneError::failed(
                    "CreateTable",
                    ledger,
                    format!("the ledger was created but is not ACTIVE after {LEDGER_ACTIVE_WITHIN:?}: {e}"),
                )
            })?;
        if made_by_another {
            return made;
        }
        self.protect_ledger(ledger).await;
        Ok(())
    }

    async fn put_record(
        &self,
        ledger: &str,
        family: &str,
        record: &StoredRecord,
        expect: Expect,
    ) -> Result<(), ControlPlaneError> {
        let mut item = HashMap::from([
            (FAMILY.to_string(), AttributeValue::S(family.to_string())),
            (RECORD.to_string(), AttributeValue::S(record.key.clone())),
            (VERSION.to_string(), AttributeValue::N(record.version.to_string())),
            (BODY.to_string(), AttributeValue::S(record.body.clone())),
        ]);
        if let Some(expires) = record.expires {
            item.insert(EXPIRES.to_string(), AttributeValue::N(expires.to_string()));
        }
        let (condition, names, values) = condition(expect);
        self.client
            .put_item()
            .table_name(ledger)
            .set_item(Some(item))
            .condition_expression(condition)
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(values)
            .send()
            .await
            .map(drop)
            .map_err(|e| write_error("PutItem", ledger, &record.key, &e))
    }

    async fn delete_record(
        &self,
        ledger: &str,
        family: &str,
        key: &str,
        expect: Expect,
    ) -> Result<(), ControlPlaneError> {
        let (condition, names, values) = condition(expect);
        self.client
            .delete_item()
            .table_name(ledger)
            .key(FAMILY, AttributeValue::S(family.to_string()))
            .key(RECORD, AttributeValue::S(key.to_string()))
            .condition_expression(condition)
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(values)
            .send()
            .await
            .map(drop)
            .map_err(|e| write_error("DeleteItem", ledger, key, &e))
    }
}

impl DynamoDb {
    /// Point-in-time recovery on the ledger, where the endpoint has it (best effort: the
    /// stack's ledger has it from CloudFormation; a local server may lack the API).
    async fn protect_ledger(&self, ledger: &str) {
        let on = PointInTimeRecoverySpecification::builder()
            .point_in_time_recovery_enabled(true)
            .build()
            .expect("the required field is set");
        if let Err(e) = self
            .client
            .update_continuous_backups()
            .table_name(ledger)
            .point_in_time_recovery_specification(on)
            .send()
            .await
        {
            tracing::info!(ledger, error = %e.code().unwrap_or("unknown"), "point-in-time recovery not turned on for the ledger");
        }
    }
}

/// The condition expression of `expect`, with its names and values.
fn condition(
    expect: Expect,
) -> (
    String,
    HashMap<String, String>,
    Option<HashMap<String, AttributeValue>>,
) {
    let mut names = HashMap::from([("#r".to_string(), RECORD.to_string())]);
    match expect {
        Expect::Absent => ("attribute_not_exists(#r)".into(), names, None),
        Expect::Version(version) => {
            // Only the names the expression uses: DynamoDB refuses an unused one.
            let names = HashMap::from([("#v".to_string(), VERSION.to_string())]);
            (
                "#v = :v".into(),
                names,
                Some(HashMap::from([(
                    ":v".to_string(),
                    AttributeValue::N(version.to_string()),
                )])),
            )
        }
        Expect::Lapsed(now) => {
            names.insert("#e".into(), EXPIRES.into());
            (
                "attribute_not_exists(#r) OR #e < :now".into(),
                names,
                Some(HashMap::from([(
                    ":now".to_string(),
                    AttributeValue::N(now.to_string()),
                )])),
            )
        }
    }
}

/// A write's error: a failed condition is a [`ErrorKind::Conflict`].
fn write_error<E, R>(
    operation: &'static str,
    ledger: &str,
    key: &str,
    error: &aws_sdk_dynamodb::error::SdkError<E, R>,
) -> ControlPlaneError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug + 'static,
{
    let kind = (error.code() == Some("ConditionalCheckFailedException")).then_some(ErrorKind::Conflict);
    classify(operation, ledger, error, kind).reworded(|message| format!("record {key}: {message}"))
}

/// One item as a stored record; an item without the attributes every record has (someone
/// wrote it by hand) keeps its key and no body, so the book names it as unreadable.
fn stored(item: &HashMap<String, AttributeValue>) -> StoredRecord {
    let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
    let number = |name: &str| {
        item.get(name)
            .and_then(|v| v.as_n().ok())
            .and_then(|n| n.parse::<i64>().ok())
    };
    let key = text(RECORD).unwrap_or_default();
    match (text(BODY), number(VERSION).and_then(|v| u64::try_from(v).ok())) {
        (Some(body), Some(version)) if version > 0 => StoredRecord {
            key,
            version,
            body,
            expires: number(EXPIRES),
        },
        _ => StoredRecord {
            key,
            version: 0,
            body: String::new(),
            expires: None,
        },
    }
}
