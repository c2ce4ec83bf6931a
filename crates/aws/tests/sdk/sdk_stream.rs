//! The SDK adapter's Kinesis destinations against aws-smithy-mocks: what
//! EnableKinesisStreamingDestination sends (table, stream, precision) and how
//! DescribeKinesisStreamingDestination's answer maps back (status, description, precision, an
//! unknown status kept), and the errors a run tells apart.

use crate::common::mocks::{adapter, coded};
use aws_sdk_dynamodb::operation::describe_kinesis_streaming_destination::{
    DescribeKinesisStreamingDestinationError, DescribeKinesisStreamingDestinationOutput,
};
use aws_sdk_dynamodb::operation::enable_kinesis_streaming_destination::EnableKinesisStreamingDestinationOutput;
use aws_sdk_dynamodb::types::{
    ApproximateCreationDateTimePrecision, DestinationStatus as SdkStatus, KinesisDataStreamDestination,
};
use aws_sdk_dynamodb::Client;
use aws_smithy_mocks::{mock, RuleMode};
use ddb_rollover::control::{ErrorKind, Tables};
use ddb_rollover::policy::{KinesisDestination, KinesisStreamArn, Precision};
use ddb_rollover::table::{DestinationChange, DestinationStatus, ObservedDestination};
use ddb_rollover_aws::Server;

const STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/timeseries-changes";

#[tokio::test]
async fn enable_sends_the_table_the_stream_and_the_precision() {
    let enable = mock!(Client::enable_kinesis_streaming_destination)
        .match_requests(|r| {
            r.table_name() == Some("ts_2018-10-26")
                && r.stream_arn() == Some(STREAM)
                && r.enable_kinesis_streaming_configuration()
                    .and_then(|c| c.approximate_creation_date_time_precision())
                    == Some(&ApproximateCreationDateTimePrecision::Microsecond)
        })
        .then_output(|| {
            EnableKinesisStreamingDestinationOutput::builder()
                .destination_status(SdkStatus::Enabling)
                .build()
        });
    let dynamodb = adapter(RuleMode::Sequential, &[&enable]);
    let change = DestinationChange {
        name: "ts_2018-10-26".into(),
        destination: KinesisDestination {
            stream_arn: KinesisStreamArn::parse(STREAM).unwrap(),
            precision: Precision::Microsecond,
        },
    };
    let status = dynamodb.enable_kinesis_destination(&change).await.unwrap();
    assert_eq!(status, DestinationStatus::Enabling);
    assert_eq!(
        enable.num_calls(),
        1,
        "a request that did not match would fail the test"
    );
}

#[tokio::test]
async fn describe_maps_every_destination_back() {
    let describe = mock!(Client::describe_kinesis_streaming_destination)
        .match_requests(|r| r.table_name() == Some("ts_2018-10-26"))
        .then_output(|| {
            let destination = |arn: &str, status: SdkStatus| {
                KinesisDataStreamDestination::builder()
                    .stream_arn(arn)
                    .destination_status(status)
            };
            DescribeKinesisStreamingDestinationOutput::builder()
                .kinesis_data_stream_destinations(
                    destination(STREAM, SdkStatus::EnableFailed)
                        .destination_status_description("Kinesis stream not found")
                        .approximate_creation_date_time_precision(
                            ApproximateCreationDateTimePrecision::Millisecond,
                        )
                        .build(),
                )
                .kinesis_data_stream_destinations(
                    destination(
                        "arn:aws:kinesis:us-east-1:123456789012:stream/audit",
                        SdkStatus::Active,
                    )
                    .build(),
                )
                .kinesis_data_stream_destinations(destination(STREAM, SdkStatus::from("PAUSED")).build())
                .build()
        });
    let dynamodb = adapter(RuleMode::Sequential, &[&describe]);
    let found = dynamodb
        .describe_kinesis_destinations("ts_2018-10-26")
        .await
        .unwrap();
    assert_eq!(
        found,
        [
            ObservedDestination {
                stream_arn: STREAM.into(),
                status: DestinationStatus::EnableFailed,
                description: Some("Kinesis stream not found".into()),
                precision: Some(Precision::Millisecond),
            },
            ObservedDestination {
                stream_arn: "arn:aws:kinesis:us-east-1:123456789012:stream/audit".into(),
                status: DestinationStatus::Active,
                description: None,
                precision: None,
            },
            ObservedDestination {
                stream_arn: STREAM.into(),
                status: DestinationStatus::Other("PAUSED".into()),
                description: None,
                precision: None,
            },
        ]
    );
    assert!(
        !found[2].status.streams(),
        "an unknown status does not count as streaming"
    );
}

#[tokio::test]
async fn an_endpoint_without_destinations_and_a_missing_table_are_told_apart() {
    // Only a local server may say it lacks the API: from AWS, the same answer is a failure.
    for (server, code, kind) in [
        (Server::Local, "UnknownOperationException", ErrorKind::Unsupported),
        (Server::Aws, "UnknownOperationException", ErrorKind::Other),
        (Server::Aws, "ResourceNotFoundException", ErrorKind::NotFound),
        (Server::Local, "AccessDeniedException", ErrorKind::Other),
        (Server::Aws, "AccessDeniedException", ErrorKind::Other),
    ] {
        let refused = mock!(Client::describe_kinesis_streaming_destination)
            .then_error(move || DescribeKinesisStreamingDestinationError::generic(coded(code)));
        let dynamodb = adapter(RuleMode::Sequential, &[&refused]).on(server);
        let error = dynamodb.describe_kinesis_destinations("t").await.unwrap_err();
        assert_eq!(error.kind, kind, "{server:?} {code}: {error}");
        assert_eq!(error.operation, "DescribeKinesisStreamingDestination");
    }
}

/// moto's answer for an action it lacks (werkzeug's HTML "500 Internal Server Error" page):
/// unsupported on a local server, so plain moto's retention deletes again; from AWS (which never
/// answers HTML) a failure. Before: read as any failure, which kept every table for good.
#[tokio::test]
async fn motos_html_500_is_unsupported_only_on_a_local_server() {
    const PAGE: &str = "<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n\
        <h1>Internal Server Error</h1>\n<p>The server encountered an internal error and was unable \
        to complete your request.</p>\n";
    for (server, kind) in [
        (Server::Local, ErrorKind::Unsupported),
        (Server::Aws, ErrorKind::Other),
    ] {
        let html = mock!(Client::describe_kinesis_streaming_destination).then_http_response(|| {
            let mut response = aws_sdk_dynamodb::config::http::HttpResponse::new(
                500u16.try_into().expect("a status"),
                aws_smithy_types::body::SdkBody::from(PAGE),
            );
            response
                .headers_mut()
                .insert("content-type", "text/html; charset=utf-8");
            response
        });
        let dynamodb = adapter(RuleMode::MatchAny, &[&html]).on(server);
        let error = dynamodb.describe_kinesis_destinations("t").await.unwrap_err();
        assert_eq!(error.kind, kind, "{server:?}: {error}");
    }
}
