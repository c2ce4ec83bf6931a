//! Lambda's event source mappings on the SDK: ListEventSourceMappings of one stream,
//! CreateEventSourceMapping of the family's consumer, UpdateEventSourceMapping and
//! DeleteEventSourceMapping of ours; and what each error means for a run.

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_lambda::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_lambda::types::{EventSourceMappingConfiguration, EventSourcePosition, Filter, FilterCriteria};
use aws_sdk_lambda::Client;

use crate::utc;
use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::table::{MappingChange, MappingRemoval, MappingState, MappingUpdate, ObservedMapping};

/// Every mapping on `stream_arn`, whatever its function, across all pages.
pub(crate) async fn list(
    client: &Client,
    table: &str,
    stream_arn: &str,
) -> Result<Vec<ObservedMapping>, ControlPlaneError> {
    let mut mappings = Vec::new();
    let mut pages = client
        .list_event_source_mappings()
        .event_source_arn(stream_arn)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| classify("ListEventSourceMappings", table, &e))?;
        mappings.extend(page.event_source_mappings().iter().map(observed_mapping));
    }
    Ok(mappings)
}

/// Maps the consumer on `stream_arn`, enabled, with the policy's settings.
pub(crate) async fn create(
    client: &Client,
    change: &MappingChange,
    stream_arn: &str,
) -> Result<ObservedMapping, ControlPlaneError> {
    let consumer = &change.consumer;
    let filters = (!consumer.filters.is_empty()).then(|| filter_criteria(&consumer.filters));
    let answer = client
        .create_event_source_mapping()
        .event_source_arn(stream_arn)
        .function_name(consumer.function.as_str())
        .enabled(true)
        .batch_size(i32::try_from(consumer.batch_size).unwrap_or(i32::MAX))
        .starting_position(EventSourcePosition::from(consumer.starting_position.as_wire()))
        .set_filter_criteria(filters)
        .send()
        .await
        .map_err(|e| classify("CreateEventSourceMapping", &change.name, &e))?;
    Ok(ObservedMapping {
        uuid: answer.uuid().unwrap_or_default().to_string(),
        function_arn: answer
            .function_arn()
            .unwrap_or(consumer.function.as_str())
            .to_string(),
        event_source_arn: answer.event_source_arn().unwrap_or(stream_arn).to_string(),
        state: MappingState::from_wire(answer.state().unwrap_or("Creating")),
        reason: answer.state_transition_reason().map(str::to_string),
        last_result: answer.last_processing_result().map(str::to_string),
        last_modified: answer.last_modified().and_then(utc),
        batch_size: answer.batch_size().and_then(|size| u32::try_from(size).ok()),
        filters: patterns(answer.filter_criteria()),
    })
}

/// The policy's patterns as Lambda takes them; none is an empty `FilterCriteria`, which is how
/// UpdateEventSourceMapping removes a mapping's filters.
fn filter_criteria(patterns: &[String]) -> FilterCriteria {
    FilterCriteria::builder()
        .set_filters((!patterns.is_empty()).then(|| {
            patterns
                .iter()
                .map(|pattern| Filter::builder().pattern(pattern).build())
                .collect()
        }))
        .build()
}

/// The patterns of a mapping's filters, as Lambda reports them.
fn patterns(criteria: Option<&FilterCriteria>) -> Vec<String> {
    criteria
        .map(|c| {
            c.filters()
                .iter()
                .filter_map(|f| f.pattern().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Puts the policy's batch size and filters back on one of ours, by its UUID. Sends neither
/// FunctionName nor Enabled: the run never re-points a mapping nor enables or disables one.
pub(crate) async fn update(client: &Client, update: &MappingUpdate) -> Result<(), ControlPlaneError> {
    client
        .update_event_source_mapping()
        .uuid(&update.uuid)
        .batch_size(i32::try_from(update.batch_size).unwrap_or(i32::MAX))
        .filter_criteria(filter_criteria(&update.filters))
        .send()
        .await
        .map_err(|e| classify("UpdateEventSourceMapping", &update.name, &e))?;
    Ok(())
}

/// Deletes one of ours by its UUID.
pub(crate) async fn delete(client: &Client, removal: &MappingRemoval) -> Result<(), ControlPlaneError> {
    client
        .delete_event_source_mapping()
        .uuid(&removal.uuid)
        .send()
        .await
        .map_err(|e| classify("DeleteEventSourceMapping", &removal.name, &e))?;
    Ok(())
}

fn observed_mapping(mapping: &EventSourceMappingConfiguration) -> ObservedMapping {
    ObservedMapping {
        uuid: mapping.uuid().unwrap_or_default().to_string(),
        function_arn: mapping.function_arn().unwrap_or_default().to_string(),
        event_source_arn: mapping.event_source_arn().unwrap_or_default().to_string(),
        state: MappingState::from_wire(mapping.state().unwrap_or("Unknown")),
        reason: mapping
            .state_transition_reason()
            .filter(|r| !r.is_empty())
            .map(str::to_string),
        last_result: mapping
            .last_processing_result()
            .filter(|r| !r.is_empty())
            .map(str::to_string),
        last_modified: mapping.last_modified().and_then(utc),
        batch_size: mapping.batch_size().and_then(|size| u32::try_from(size).ok()),
        filters: patterns(mapping.filter_criteria()),
    }
}

/// Whether the answer came from an endpoint that has no Lambda API, and nothing else (never a
/// refusal or a failure of Lambda's own). What the local DynamoDB servers answer a Lambda call
/// (`GET /2015-03-31/event-source-mappings/`), probed by hand:
/// - dynalite 4.0.0: to a GET, HTTP 200 with the text `healthy: dynamodb.REGION.amazonaws.com`,
///   its health check, which the SDK cannot read as Lambda's answer; to a POST,
///   `UnknownOperationException` (a code Lambda has not); to a DELETE, HTTP 404 with the body
///   `<UnknownOperationException/>`, which is not JSON;
/// - DynamoDB Local 3.3: HTTP 500 with DynamoDB's own error shape, `__type`
///   `com.amazonaws.dynamodb.v20120810#InternalFailure`: Lambda's errors never carry
///   DynamoDB's namespace.
fn endpoint_lacks_the_api<E: ProvideErrorMetadata>(error: &SdkError<E, HttpResponse>) -> bool {
    error.code() == Some("UnknownOperationException")
        || error.raw_response().is_some_and(|response| {
            let body = response.body().bytes().unwrap_or_default();
            let status = response.status().as_u16();
            (status == 200 && body.starts_with(b"healthy: dynamodb."))
                || (status == 404 && body.trim_ascii() == b"<UnknownOperationException/>")
                || body
                    .windows(DYNAMODB_NAMESPACE.len())
                    .any(|w| w == DYNAMODB_NAMESPACE)
        })
}

const DYNAMODB_NAMESPACE: &[u8] = b"com.amazonaws.dynamodb.v20120810#";

/// What an SDK error means for a run: a mapping that exists already (ResourceConflict on
/// create) is done, one gone (ResourceNotFound) gone, one in transition busy, throttling a limit.
fn classify<E>(operation: &'static str, table: &str, error: &SdkError<E, HttpResponse>) -> ControlPlaneError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let kind = match error.code() {
        _ if endpoint_lacks_the_api(error) => ErrorKind::Unsupported,
        Some("ResourceConflictException") => ErrorKind::AlreadyExists,
        // The mapping is gone (update, delete); on create, the function or the stream is missing: a
        // failure to say as it is, never "the table vanished".
        Some("ResourceNotFoundException") if operation != "CreateEventSourceMapping" => ErrorKind::NotFound,
        Some("ResourceInUseException") => ErrorKind::InUse,
        Some("TooManyRequestsException") => ErrorKind::LimitExceeded,
        _ => ErrorKind::Other,
    };
    let message = match (error.code(), error.message()) {
        _ if kind == ErrorKind::Unsupported => {
            "this endpoint does not implement Lambda (DynamoDB Local and dynalite do not; moto and AWS do)"
                .to_string()
        }
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (Some(code), None) => code.to_string(),
        (None, _) => format!(
            "{}. Lambda could not be reached or answered oddly; a later run retries",
            aws_sdk_lambda::error::DisplayErrorContext(error)
                .to_string()
                .replace('\n', " ")
        ),
    };
    let advice = match error.code() {
        Some("AccessDeniedException") => Some(format!(
            "the caller may not call lambda:{operation} for the policy's consumer function: deploy the template with ConsumerFunctionArn set to it"
        )),
        _ => None,
    };
    let message = match advice {
        Some(advice) => format!("{message}. {advice}"),
        None => message,
    };
    ControlPlaneError::new(kind, operation, table, message)
}

#[cfg(test)]
mod tests {
    use aws_sdk_lambda::error::ErrorMetadata;
    use aws_sdk_lambda::operation::list_event_source_mappings::ListEventSourceMappingsError;
    use aws_smithy_types::body::SdkBody;

    use super::*;

    fn answer(
        status: u16,
        body: &str,
        error: ListEventSourceMappingsError,
    ) -> SdkError<ListEventSourceMappingsError, HttpResponse> {
        let response = HttpResponse::new(status.try_into().expect("a valid status"), SdkBody::from(body));
        SdkError::service_error(error, response)
    }

    fn coded(status: u16, code: &str) -> SdkError<ListEventSourceMappingsError, HttpResponse> {
        let meta = ErrorMetadata::builder().code(code).message("no").build();
        answer(
            status,
            r#"{"Type":"User","message":"no"}"#,
            ListEventSourceMappingsError::generic(meta),
        )
    }

    fn kind(error: &SdkError<ListEventSourceMappingsError, HttpResponse>) -> ErrorKind {
        classify("ListEventSourceMappings", "t", error).kind
    }

    #[test]
    fn the_local_servers_answers_mean_unsupported() {
        let dynalite = answer(
            200,
            "healthy: dynamodb.us-east-1.amazonaws.com ",
            ListEventSourceMappingsError::unhandled("expected start of object"),
        );
        assert_eq!(kind(&dynalite), ErrorKind::Unsupported);
        let deleted = answer(
            404,
            "<UnknownOperationException/>\n",
            ListEventSourceMappingsError::unhandled("unexpected token '<'"),
        );
        assert_eq!(kind(&deleted), ErrorKind::Unsupported);
        assert_eq!(
            kind(&coded(400, "UnknownOperationException")),
            ErrorKind::Unsupported
        );
        let meta = ErrorMetadata::builder().code("InternalFailure").build();
        let ddblocal = answer(
            500,
            r#"{"__type":"com.amazonaws.dynamodb.v20120810#InternalFailure","Message":"The request processing has failed because of an unknown error, exception or failure."}"#,
            ListEventSourceMappingsError::generic(meta),
        );
        assert_eq!(kind(&ddblocal), ErrorKind::Unsupported);
    }

    #[test]
    fn lambdas_own_answers_are_told_apart() {
        for (code, want) in [
            ("ResourceConflictException", ErrorKind::AlreadyExists),
            ("ResourceNotFoundException", ErrorKind::NotFound),
            ("ResourceInUseException", ErrorKind::InUse),
            ("TooManyRequestsException", ErrorKind::LimitExceeded),
            ("AccessDeniedException", ErrorKind::Other),
            ("ServiceException", ErrorKind::Other),
            ("InvalidParameterValueException", ErrorKind::Other),
        ] {
            assert_eq!(kind(&coded(400, code)), want, "{code}");
        }
        // On create, a missing function (or stream) is a failure, never "the table vanished".
        let missing = classify(
            "CreateEventSourceMapping",
            "t",
            &coded(404, "ResourceNotFoundException"),
        );
        assert_eq!(missing.kind, ErrorKind::Other);
        let refused = classify(
            "CreateEventSourceMapping",
            "t",
            &coded(403, "AccessDeniedException"),
        );
        assert!(
            refused.message.contains("ConsumerFunctionArn"),
            "{}",
            refused.message
        );
    }
}
