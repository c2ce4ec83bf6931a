//! The errors the fake answers, shaped and classified as the SDK adapter classifies DynamoDB's,
//! and the fake account's table ARNs.

use ddb_rollover::control::{ControlPlaneError, ErrorKind};

use crate::objects::Status;

pub(crate) fn error(
    kind: ErrorKind,
    operation: &'static str,
    table: &str,
    message: impl Into<String>,
) -> ControlPlaneError {
    ControlPlaneError::new(kind, operation, table, message)
}

pub(crate) fn not_found(operation: &'static str, table: &str) -> ControlPlaneError {
    error(
        ErrorKind::NotFound,
        operation,
        table,
        format!("ResourceNotFoundException: Requested resource not found: Table: {table} not found"),
    )
}

pub(crate) fn in_use(operation: &'static str, table: &str, status: Status) -> ControlPlaneError {
    error(
        ErrorKind::InUse,
        operation,
        table,
        format!(
            "ResourceInUseException: Attempt to change a resource which is still in use: Table is {}: {table}",
            status.observed().as_str()
        ),
    )
}

pub(crate) fn limit(operation: &'static str, table: &str, message: impl Into<String>) -> ControlPlaneError {
    error(
        ErrorKind::LimitExceeded,
        operation,
        table,
        format!("LimitExceededException: {}", message.into()),
    )
}

/// DescribeExport's answer for an export ARN the account never made.
pub(crate) fn export_not_found(table: &str, export: &str) -> ControlPlaneError {
    error(
        ErrorKind::Other,
        "DescribeExport",
        table,
        format!("ExportNotFoundException: Export not found: {export}"),
    )
}

pub(crate) fn policy_not_found(operation: &'static str, table: &str, why: &str) -> ControlPlaneError {
    error(
        ErrorKind::Other,
        operation,
        table,
        format!(
            "PolicyNotFoundException: Resource-based policy not found for the provided ResourceArn: {why}"
        ),
    )
}

pub(crate) fn validation(
    operation: &'static str,
    table: &str,
    message: impl Into<String>,
) -> ControlPlaneError {
    error(
        ErrorKind::Other,
        operation,
        table,
        format!("ValidationException: {}", message.into()),
    )
}

//END
