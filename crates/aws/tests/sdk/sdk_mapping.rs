//! The SDK adapter's Lambda event source mappings against aws-smithy-mocks: what
//! CreateEventSourceMapping sends (stream, function, batch size, starting position, filters,
//! enabled), ListEventSourceMappings followed across its pages for one stream (with each
//! mapping's batch size and filters), what UpdateEventSourceMapping and DeleteEventSourceMapping
//! send, and the errors a run tells apart. Without a Lambda client the
//! adapter answers Unsupported.

use aws_sdk_lambda::error::ErrorMetadata;
use aws_sdk_lambda::operation::create_event_source_mapping::{
    CreateEventSourceMappingError, CreateEventSourceMappingOutput,
};
use aws_sdk_lambda::operation::delete_event_source_mapping::DeleteEventSourceMappingOutput;
use aws_sdk_lambda::operation::list_event_source_mappings::ListEventSourceMappingsOutput;
use aws_sdk_lambda::operation::update_event_source_mapping::UpdateEventSourceMappingOutput;
use aws_sdk_lambda::types::error::ResourceConflictException;
use aws_sdk_lambda::types::{EventSourceMappingConfiguration, EventSourcePosition};
use aws_sdk_lambda::Client;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use ddb_rollover::control::{ErrorKind, Mappings};
use ddb_rollover::policy::{FunctionArn, LambdaConsumer, StartingPosition};
use ddb_rollover::table::{MappingChange, MappingRemoval, MappingState, MappingUpdate};
use ddb_rollover_aws::dynamodb::DynamoDb;

use crate::common::mocks;

const FUNCTION: &str = "arn:aws:lambda:us-east-1:123456789012:function:ingest-consumer";
const STREAM: &str =
    "arn:aws:dynamodb:us-east-1:123456789012:table/ts_2018-10-26/stream/2018-10-25T23:45:00.000";

/// The adapter with a Lambda client answering from `rules` (DynamoDB answers nothing).
fn adapter(rules: &[&Rule]) -> DynamoDb {
    let lambda = mock_client!(aws_sdk_lambda, RuleMode::Sequential, rules.iter().copied());
    mocks::adapter(RuleMode::Sequential, &[]).with_lambda(lambda)
}

fn change(filters: Vec<String>) -> MappingChange {
    MappingChange {
        name: "ts_2018-10-26".into(),
        consumer: LambdaConsumer {
            function: FunctionArn::parse(FUNCTION).unwrap(),
            batch_size: 250,
            starting_position: StartingPosition::TrimHorizon,
            filters,
        },
    }
}

#[tokio::test]
async fn create_sends_the_stream_the_function_and_the_settings() {
    let pattern = r#"{"eventName": ["INSERT"]}"#;
    let create = mock!(Client::create_event_source_mapping)
        .match_requests(move |r| {
            r.event_source_arn() == Some(STREAM)
                && r.function_name() == Some(FUNCTION)
                && r.batch_size() == Some(250)
                && r.enabled() == Some(true)
                && r.starting_position() == Some(&EventSourcePosition::TrimHorizon)
                && r.filter_criteria()
                    .map(|c| c.filters().iter().filter_map(|f| f.pattern()).collect::<Vec<_>>())
                    == Some(vec![pattern])
        })
        .then_output(|| {
            CreateEventSourceMappingOutput::builder()
                .uuid("u-1")
                .function_arn(FUNCTION)
                .event_source_arn(STREAM)
                .state("Creating")
                .build()
        });
    let lambda = adapter(&[&create]);
    let mapping = lambda
        .create_event_source_mapping(&change(vec![pattern.into()]), STREAM)
        .await
        .unwrap();
    assert_eq!(
        create.num_calls(),
        1,
        "a request that did not match would fail the test"
    );
    assert_eq!(
        (mapping.uuid.as_str(), &mapping.state),
        ("u-1", &MappingState::Creating)
    );
    assert!(mapping.is_to(&change(vec![]).consumer));
}

const CONFLICT: &str = "The event source arn and function provided mapping already exists.";

#[tokio::test]
async fn an_existing_mapping_of_the_function_is_already_exists() {
    let conflict = mock!(Client::create_event_source_mapping).then_error(|| {
        CreateEventSourceMappingError::ResourceConflictException(
            ResourceConflictException::builder()
                .r#type("User")
                .message(CONFLICT)
                // As it comes off the wire: the code is the answer's.
                .meta(
                    ErrorMetadata::builder()
                        .code("ResourceConflictException")
                        .message(CONFLICT)
                        .build(),
                )
                .build(),
        )
    });
    let error = adapter(&[&conflict])
        .create_event_source_mapping(&change(vec![]), STREAM)
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::AlreadyExists, "{error}");
}

#[tokio::test]
async fn list_follows_every_page_of_the_stream() {
    let page = |uuids: &[&str], next: Option<&str>| {
        let mut output = ListEventSourceMappingsOutput::builder().set_next_marker(next.map(str::to_string));
        for uuid in uuids {
            output = output.event_source_mappings(
                EventSourceMappingConfiguration::builder()
                    .uuid(*uuid)
                    .function_arn(if *uuid == "theirs" {
                        "arn:aws:lambda:us-east-1:123456789012:function:audit"
                    } else {
                        FUNCTION
                    })
                    .event_source_arn(STREAM)
                    .state(if *uuid == "odd" { "Paused" } else { "Enabled" })
                    .state_transition_reason("User action")
                    .batch_size(7)
                    .set_filter_criteria((*uuid == "ours").then(|| {
                        aws_sdk_lambda::types::FilterCriteria::builder()
                            .filters(aws_sdk_lambda::types::Filter::builder().pattern("{}").build())
                            .build()
                    }))
                    .build(),
            );
        }
        output.build()
    };
    let first = mock!(Client::list_event_source_mappings)
        .match_requests(|r| r.event_source_arn() == Some(STREAM) && r.marker().is_none())
        .then_output(move || page(&["ours", "theirs"], Some("m2")));
    let second = mock!(Client::list_event_source_mappings)
        .match_requests(|r| r.event_source_arn() == Some(STREAM) && r.marker() == Some("m2"))
        .then_output(move || page(&["odd"], None));
    let mappings = adapter(&[&first, &second])
        .list_event_source_mappings("ts_2018-10-26", STREAM)
        .await
        .unwrap();
    let seen: Vec<(&str, &str, &str)> = mappings
        .iter()
        .map(|m| {
            (
                m.uuid.as_str(),
                m.function_arn.rsplit(':').next().unwrap(),
                m.state.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("ours", "ingest-consumer", "Enabled"),
            ("theirs", "audit", "Enabled"),
            ("odd", "ingest-consumer", "Paused")
        ]
    );
    assert_eq!(mappings[2].state, MappingState::Other("Paused".into()));
    assert_eq!(mappings[0].reason.as_deref(), Some("User action"));
    assert_eq!(
        (mappings[0].batch_size, mappings[0].filters.as_slice()),
        (Some(7), ["{}".to_string()].as_slice())
    );
    assert!(mappings[1].filters.is_empty(), "no FilterCriteria: no filters");
}

#[tokio::test]
async fn delete_sends_our_mappings_uuid() {
    let delete = mock!(Client::delete_event_source_mapping)
        .match_requests(|r| r.uuid() == Some("u-1"))
        .then_output(|| {
            DeleteEventSourceMappingOutput::builder()
                .uuid("u-1")
                .state("Deleting")
                .build()
        });
    let removal = MappingRemoval {
        name: "ts_2018-10-20".into(),
        uuid: "u-1".into(),
        function_arn: FUNCTION.into(),
    };
    adapter(&[&delete])
        .delete_event_source_mapping(&removal)
        .await
        .unwrap();
    assert_eq!(delete.num_calls(), 1);
}

/// The policy's batch size and filters by the UUID, and nothing else: no FunctionName (never
/// re-pointed), no Enabled (never enabled or disabled). No filters is an empty FilterCriteria,
/// which removes the mapping's.
#[tokio::test]
async fn update_sends_the_uuid_the_batch_size_and_the_filters_only() {
    let pattern = r#"{"eventName": ["INSERT"]}"#;
    fn patterns(
        r: &aws_sdk_lambda::operation::update_event_source_mapping::UpdateEventSourceMappingInput,
    ) -> Option<Vec<&str>> {
        r.filter_criteria()
            .map(|c| c.filters().iter().filter_map(|f| f.pattern()).collect())
    }
    let with = mock!(Client::update_event_source_mapping)
        .match_requests(move |r| {
            r.uuid() == Some("u-1")
                && r.batch_size() == Some(250)
                && patterns(r) == Some(vec![pattern])
                && r.function_name().is_none()
                && r.enabled().is_none()
        })
        .then_output(|| UpdateEventSourceMappingOutput::builder().uuid("u-1").build());
    let without = mock!(Client::update_event_source_mapping)
        .match_requests(move |r| r.uuid() == Some("u-1") && patterns(r) == Some(vec![]))
        .then_output(|| UpdateEventSourceMappingOutput::builder().uuid("u-1").build());
    let update = |filters: Vec<String>| MappingUpdate {
        name: "ts_2018-10-26".into(),
        uuid: "u-1".into(),
        function_arn: FUNCTION.into(),
        batch_size: 250,
        filters,
    };
    let lambda = adapter(&[&with, &without]);
    lambda
        .update_event_source_mapping(&update(vec![pattern.into()]))
        .await
        .unwrap();
    lambda
        .update_event_source_mapping(&update(Vec::new()))
        .await
        .unwrap();
    assert_eq!((with.num_calls(), without.num_calls()), (1, 1));
}

#[tokio::test]
async fn without_a_lambda_client_every_call_is_unsupported() {
    let dynamodb = mocks::adapter(RuleMode::Sequential, &[]);
    let error = dynamodb
        .list_event_source_mappings("t", STREAM)
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Unsupported);
}
