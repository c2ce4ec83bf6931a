//! ImportTable and DescribeImport: `restore` brings an archived period back from its export.
//! A restored table is a past period's: no warm throughput (ImportTable takes none for the
//! table), whatever its phase says.

use aws_sdk_dynamodb::types::{
    BillingMode, ImportStatus, InputCompressionType, InputFormat, S3BucketSource, TableCreationParameters,
};
use aws_sdk_dynamodb::Client;

use super::errors::classify;
use super::requests::{attribute_definitions, global_index, key_elements, sse_specification, throughput};
use ddb_rollover::control::ControlPlaneError;
use ddb_rollover::policy::Billing;
use ddb_rollover::table::ImportRequest;
use ddb_rollover::table::ImportState;

/// Starts the import of an export's `data/` folder (DynamoDB JSON, GZIP: how exports write
/// it) into a new table; returns the import's ARN.
pub(super) async fn import_table(
    client: &Client,
    request: &ImportRequest,
) -> Result<String, ControlPlaneError> {
    let spec = &request.spec;
    let mut table = TableCreationParameters::builder()
        .table_name(&spec.name)
        .set_key_schema(Some(key_elements(&spec.key)))
        .set_attribute_definitions(Some(attribute_definitions(spec)))
        .set_global_secondary_indexes((!spec.global_indexes.is_empty()).then(|| {
            spec.global_indexes
                .iter()
                .map(|index| global_index(index, None))
                .collect()
        }));
    table = match spec.billing {
        Billing::Provisioned(capacity) => table
            .billing_mode(BillingMode::Provisioned)
            .provisioned_throughput(throughput(capacity)),
        Billing::OnDemand(_) => table.billing_mode(BillingMode::PayPerRequest),
    };
    if let Some(encryption) = &spec.encryption {
        table = table.sse_specification(sse_specification(encryption));
    }
    let source = S3BucketSource::builder()
        .s3_bucket(&request.bucket)
        .s3_key_prefix(&request.data_prefix)
        .build()
        .expect("the bucket is set");
    let output = client
        .import_table()
        .client_token(&request.client_token)
        .s3_bucket_source(source)
        .input_format(InputFormat::DynamodbJson)
        .input_compression_type(InputCompressionType::Gzip)
        .table_creation_parameters(table.build().expect("the required fields are set"))
        .send()
        .await
        .map_err(|e| classify("ImportTable", &spec.name, &e, None))?;
    output
        .import_table_description()
        .and_then(|d| d.import_arn())
        .map(str::to_owned)
        .ok_or_else(|| ControlPlaneError::failed("ImportTable", &spec.name, "the response has no ImportArn"))
}

pub(super) async fn describe_import(
    client: &Client,
    table: &str,
    arn: &str,
) -> Result<ImportState, ControlPlaneError> {
    let output = client
        .describe_import()
        .import_arn(arn)
        .send()
        .await
        .map_err(|e| classify("DescribeImport", table, &e, None))?;
    let description = output.import_table_description();
    let status = description.and_then(|d| d.import_status());
    Ok(match status {
        Some(ImportStatus::Completed) => ImportState::Completed {
            items: description
                .map(|d| d.imported_item_count())
                .and_then(|n| u64::try_from(n).ok()),
            errors: description
                .map(|d| d.error_count())
                .and_then(|n| u64::try_from(n).ok()),
        },
        Some(ImportStatus::InProgress) | None => ImportState::InProgress,
        Some(other) => ImportState::Failed {
            message: format!(
                "{}: {} {}",
                other.as_str(),
                description.and_then(|d| d.failure_code()).unwrap_or(""),
                description.and_then(|d| d.failure_message()).unwrap_or("")
            ),
        },
    })
}
