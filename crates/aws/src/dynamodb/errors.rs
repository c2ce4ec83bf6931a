//! SDK errors to [`ControlPlaneError`]s: which are retryable, which mean a missing API
//! (servers without it), and the advice a user sees.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::update_table::UpdateTableError;

use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::policy::TABLE_QUOTA_ADVICE;

/// What a server answers for an operation it does not implement: HTTP 400 with `__type`
/// `com.amazonaws.dynamodb.v20120810#UnknownOperationException` (DynamoDB Local 3.3.1, message
/// "Tagging is not currently supported in DynamoDB Local." for ListTagsOfResource, TagResource
/// and UntagResource, "An unknown operation was requested." for DescribeContinuousBackups,
/// UpdateContinuousBackups, ExportTableToPointInTime, DescribeExport) or
/// `com.amazon.coral.service#UnknownOperationException` with an empty message (dynalite). The
/// SDK reads the code after the `#`.
pub(super) const UNKNOWN_OPERATION: &str = "UnknownOperationException";

/// moto's answer for an action it does not implement (5.x, Flask's page for the
/// `NotImplementedError` it raises): HTTP 500, `text/html`, werkzeug's "500 Internal Server
/// Error" page, which names neither the action nor the error. AWS never answers a DynamoDB call
/// with HTML; and only a local server's answer may mean "not here" ([`crate::Server`]).
fn moto_lacks_the_action<R: std::fmt::Debug + 'static>(response: &R) -> bool {
    let response: &dyn std::any::Any = response;
    let Some(response) = response.downcast_ref::<aws_sdk_dynamodb::config::http::HttpResponse>() else {
        return false;
    };
    let html = response
        .headers()
        .get("content-type")
        .is_some_and(|t| t.starts_with("text/html"));
    response.status().as_u16() == 500
        && html
        && response.body().bytes().is_some_and(|body| {
            let text = String::from_utf8_lossy(body);
            text.contains("<title>500 Internal Server Error</title>")
        })
}

/// The start of DynamoDB's ValidationException message for an UpdateTable whose throughput is
/// already what it asks for (another run got there first).
pub(super) const UNCHANGED_THROUGHPUT: &str = "will not change";

/// UpdateTable's one error that means something besides its code: the ValidationException
/// for throughput that is already what it asks for (another run got there first).
pub(super) fn update_error<R: std::fmt::Debug + 'static>(
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
pub(super) fn classify<E, R>(
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
        None if error.raw_response().is_some_and(moto_lacks_the_action) => ErrorKind::Unsupported,
        Some("LimitExceededException") => ErrorKind::LimitExceeded,
        Some("ResourceNotFoundException") => ErrorKind::NotFound,
        Some("ResourceInUseException") => ErrorKind::InUse,
        Some(UNKNOWN_OPERATION) => ErrorKind::Unsupported,
        _ => ErrorKind::Other,
    });
    let message = match error.as_service_error() {
        Some(_) if kind == ErrorKind::Unsupported && error.code().is_none() => {
            format!("this endpoint does not implement {operation} (moto answers HTTP 500 with an HTML page)")
        }
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
    ControlPlaneError::new(kind, operation, table, message)
}

/// An error and its sources as one line (`dispatch failure: io error: Connection refused`),
/// without the Rust debug dump the SDK's own context printer appends.
pub(super) fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
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
pub(super) fn advice_for_code(code: &str, operation: &str) -> Option<String> {
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
