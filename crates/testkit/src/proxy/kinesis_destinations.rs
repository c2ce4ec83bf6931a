//! DynamoDB's Kinesis Data Streams destinations, which no local server has: moto 5 answers
//! EnableKinesisStreamingDestination and the other three with an HTML 500 (its DynamoDB has no
//! such operations), dynalite and DynamoDB Local with UnknownOperationException. What
//! [`super::Proxy::kinesis_destinations`] answers instead, as the DynamoDB API Reference
//! (EnableKinesisStreamingDestination, DescribeKinesisStreamingDestination,
//! DisableKinesisStreamingDestination, UpdateKinesisStreamingDestination) and the Developer
//! Guide ("Using Kinesis Data Streams to capture changes to DynamoDB", `kds.html`) describe:
//!
//! - Enable answers ENABLING; the destination leaves ENABLING on a later Describe (after
//!   [`super::Proxy::destinations_enabling_answers`] answers; by default on the first), ACTIVE
//!   when the stream exists (moto's Kinesis DescribeStreamSummary, through the upstream), else
//!   ENABLE_FAILED with a `DestinationStatusDescription` naming the stream and Kinesis's answer.
//! - A table holds one destination at a time: Enable is refused while any of the table's
//!   destinations is ENABLING, ACTIVE, UPDATING or DISABLING, to the same stream or another,
//!   with a ValidationException carrying the message AWS gives (`aws_model::destinations`
//!   quotes it). The API Reference lists both ResourceInUseException and
//!   ValidationException-shaped errors without saying which this is; the quoted message reads
//!   as a validation message, which is what the proxy relies on.
//! - Disable answers DISABLING, Update answers UPDATING; each becomes DISABLED or ACTIVE (with
//!   the new precision) on the next Describe. Both need an ACTIVE destination to that stream,
//!   else a ValidationException worded like Enable's (AWS's own wording is not documented).
//!
//! Which operation the state allows and where each transition ends are
//! `aws_model::destinations`' rules, as in fake-aws; the proxy ends a transition after a
//! number of Describe answers where fake-aws waits for its fake time.
//! - Every operation names a table that must exist (ResourceNotFoundException, read from the
//!   upstream with DescribeTable); a DeleteTable through the proxy drops the table's
//!   destinations.
//! - A destination's stream deleted later is not reported: the docs say nothing of it, so the
//!   destination stays ACTIVE and its records are dropped (`kinesis_delivery`).
//!
//! The requests are checked in `kinesis_requests`, the state kept in `kinesis_state`; the item writes' records are
//! `kinesis_delivery`'s, their format `kinesis_records`'.

use std::sync::Mutex;

use hyper::header::HeaderMap;
use hyper::Response;
use serde_json::{json, Value};

use super::kinesis_delivery::{kinesis_headers, KINESIS};
use super::kinesis_records::Precision;
use super::kinesis_requests::{existing_table, json_reply, Refusal, Request};
use aws_model::destinations::Status;

use super::kinesis_state::Destinations;
use super::state::{lock, State};
use super::upstream::Upstream;
use super::wire::Body;

/// The four operations the model answers.
pub(super) const OPERATIONS: [&str; 4] = [
    "EnableKinesisStreamingDestination",
    "DescribeKinesisStreamingDestination",
    "DisableKinesisStreamingDestination",
    "UpdateKinesisStreamingDestination",
];

/// The model's answer to one of [`OPERATIONS`] (the caller checks the model is on).
pub(super) async fn answer(
    upstream: &Upstream,
    state: &Mutex<State>,
    headers: &HeaderMap,
    operation: &str,
    body: &[u8],
) -> Response<Body> {
    let request: Value = serde_json::from_slice(body).unwrap_or_default();
    let request = match Request::read(operation, &request) {
        Ok(request) => request,
        Err(refusal) => return refusal.reply(),
    };
    let table = match existing_table(upstream, headers, &request.table).await {
        Ok(table) => table,
        Err(refusal) => return refusal.reply(),
    };
    let with_model = |f: &mut dyn FnMut(&mut Destinations) -> Result<(), Refusal>| {
        let mut state = lock(state);
        let destinations = state
            .kinesis_destinations
            .get_or_insert_with(Destinations::default);
        f(destinations)
    };
    let stream = request.stream_arn.clone().unwrap_or_default();
    let precision = request.precision.unwrap_or(Precision::Millisecond);
    let outcome = match operation {
        "EnableKinesisStreamingDestination" => with_model(&mut |d| d.enable(&table, &stream, precision)).map(|()| {
            json!({"TableName": table, "StreamArn": stream, "DestinationStatus": "ENABLING",
                   "EnableKinesisStreamingConfiguration": {"ApproximateCreationDateTimePrecision": precision.as_str()}})
        }),
        "DisableKinesisStreamingDestination" => with_model(&mut |d| {
            d.active(&table, &stream, operation, "DISABLE")?.status = Status::Disabling;
            Ok(())
        })
        .map(|()| json!({"TableName": table, "StreamArn": stream, "DestinationStatus": "DISABLING"})),
        "UpdateKinesisStreamingDestination" => with_model(&mut |d| {
            let destination = d.active(&table, &stream, operation, "UPDATE")?;
            destination.status = Status::Updating;
            destination.updating_to = request.precision.unwrap_or(destination.precision);
            Ok(())
        })
        .map(|()| {
            let mut answer = json!({"TableName": table, "StreamArn": stream, "DestinationStatus": "UPDATING"});
            if let Some(precision) = request.precision {
                answer["UpdateKinesisStreamingConfiguration"] =
                    json!({"ApproximateCreationDateTimePrecision": precision.as_str()});
            }
            answer
        }),
        _ => describe(upstream, state, headers, &table).await,
    };
    match outcome {
        Ok(answer) => json_reply(&answer),
        Err(refusal) => refusal.reply(),
    }
}

/// DescribeKinesisStreamingDestination: one answer goes by, destinations whose ENABLING ends
/// are settled by looking their stream up, then the list.
async fn describe(
    upstream: &Upstream,
    state: &Mutex<State>,
    headers: &HeaderMap,
    table: &str,
) -> Result<Value, Refusal> {
    let ending = {
        let mut state = lock(state);
        let destinations = state
            .kinesis_destinations
            .get_or_insert_with(Destinations::default);
        destinations.describe_step(table)
    };
    for stream in ending {
        let lookup = json!({ "StreamARN": stream });
        let failure = match upstream
            .call_as(
                &kinesis_headers(headers),
                &format!("{KINESIS}.DescribeStreamSummary"),
                &lookup,
            )
            .await
        {
            Some((status, _)) if status.is_success() => None,
            Some((status, answer)) if status.is_client_error() => {
                Some(format!("DescribeStreamSummary: {answer}"))
            }
            other => {
                let why = other.map_or_else(|| "no answer".to_owned(), |(status, _)| status.to_string());
                let message = format!(
                    "testkit proxy: looking up Kinesis stream {stream} on {}: {why}",
                    upstream.endpoint()
                );
                return Err(Refusal::internal(message));
            }
        };
        if let Some(destinations) = lock(state).kinesis_destinations.as_mut() {
            destinations.settle(table, &stream, failure);
        }
    }
    let listed = lock(state)
        .kinesis_destinations
        .as_ref()
        .map_or_else(|| Value::from(Vec::<Value>::new()), |d| d.listed(table));
    Ok(json!({ "TableName": table, "KinesisDataStreamDestinations": listed }))
}
