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
//!   with a ValidationException carrying the message AWS gives (quoted in
//!   aws-cloudformation/cloudformation-coverage-roadmap#707: "Table is not in a valid state to
//!   enable Kinesis Streaming Destination: EnableKinesisStreamingDestination must be DISABLED
//!   or ENABLE_FAILED to perform ENABLE operation."). The API Reference lists both
//!   ResourceInUseException and ValidationException-shaped errors without saying which this
//!   is; the quoted message reads as a validation message, which is what the proxy relies on.
//! - Disable answers DISABLING, Update answers UPDATING; each becomes DISABLED or ACTIVE (with
//!   the new precision) on the next Describe. Both need an ACTIVE destination to that stream,
//!   else a ValidationException worded like Enable's (AWS's own wording is not documented).
//! - Every operation names a table that must exist (ResourceNotFoundException, read from the
//!   upstream with DescribeTable); a DeleteTable through the proxy drops the table's
//!   destinations.
//! - A destination's stream deleted later is not reported: the docs say nothing of it, so the
//!   destination stays ACTIVE and its records are dropped (`kinesis_delivery`).
//!
//! The requests are checked in `kinesis_requests`; the item writes' records are
//! `kinesis_delivery`'s, their format `kinesis_records`'.

use std::collections::HashMap;
use std::sync::Mutex;

use hyper::header::HeaderMap;
use hyper::Response;
use serde_json::{json, Value};

use super::kinesis_delivery::{kinesis_headers, KINESIS};
use super::kinesis_requests::{existing_table, json_reply, Refusal, Request};
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

/// A destination's `DestinationStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    Enabling,
    Active,
    Disabling,
    Disabled,
    EnableFailed,
    Updating,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Enabling => "ENABLING",
            Status::Active => "ACTIVE",
            Status::Disabling => "DISABLING",
            Status::Disabled => "DISABLED",
            Status::EnableFailed => "ENABLE_FAILED",
            Status::Updating => "UPDATING",
        }
    }
}

/// `ApproximateCreationDateTimePrecision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Precision {
    Millisecond,
    Microsecond,
}

impl Precision {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Precision::Millisecond => "MILLISECOND",
            Precision::Microsecond => "MICROSECOND",
        }
    }

    pub(super) fn parse(text: &str) -> Option<Precision> {
        match text {
            "MILLISECOND" => Some(Precision::Millisecond),
            "MICROSECOND" => Some(Precision::Microsecond),
            _ => None,
        }
    }
}

/// One table's destination to one stream.
#[derive(Debug, Clone)]
struct Destination {
    stream_arn: String,
    status: Status,
    description: Option<String>,
    precision: Precision,
    /// An Update's precision, taken when UPDATING ends.
    updating_to: Precision,
    /// Describe answers given while ENABLING.
    enabling_answers: usize,
}

/// Every table's destinations, by table name, and how long ENABLING lasts.
#[derive(Debug, Default)]
pub(super) struct Destinations {
    /// Describe answers a new destination stays ENABLING for.
    pub(super) enabling_answers: usize,
    tables: HashMap<String, Vec<Destination>>,
}

impl Destinations {
    /// The stream and precision `table`'s records go to now: its ACTIVE (or UPDATING)
    /// destination's.
    pub(super) fn delivering(&self, table: &str) -> Option<(String, Precision)> {
        self.tables
            .get(table)?
            .iter()
            .find(|d| matches!(d.status, Status::Active | Status::Updating))
            .map(|d| (d.stream_arn.clone(), d.precision))
    }

    /// `table` was deleted: its destinations go with it.
    pub(super) fn table_deleted(&mut self, table: &str) {
        self.tables.remove(table);
    }

    fn enable(&mut self, table: &str, stream_arn: &str, precision: Precision) -> Result<(), Refusal> {
        let destinations = self.tables.entry(table.to_owned()).or_default();
        if destinations
            .iter()
            .any(|d| !matches!(d.status, Status::Disabled | Status::EnableFailed))
        {
            return Err(invalid_state(
                "enable",
                "EnableKinesisStreamingDestination",
                "DISABLED or ENABLE_FAILED",
                "ENABLE",
            ));
        }
        destinations.retain(|d| d.stream_arn != stream_arn);
        destinations.push(Destination {
            stream_arn: stream_arn.to_owned(),
            status: Status::Enabling,
            description: None,
            precision,
            updating_to: precision,
            enabling_answers: 0,
        });
        Ok(())
    }

    /// `table`'s ACTIVE destination to `stream_arn`, for Disable and Update.
    fn active(
        &mut self,
        table: &str,
        stream_arn: &str,
        operation: &str,
        verb: &str,
    ) -> Result<&mut Destination, Refusal> {
        self.tables
            .get_mut(table)
            .into_iter()
            .flatten()
            .find(|d| d.stream_arn == stream_arn && d.status == Status::Active)
            .ok_or_else(|| invalid_state(&verb.to_ascii_lowercase(), operation, "ACTIVE", verb))
    }

    /// One Describe answer of `table` goes by: DISABLING and UPDATING end, ENABLING counts the
    /// answer. Returns the streams whose ENABLING ends now, to be settled by
    /// [`Destinations::settle`] once their stream is looked up.
    fn describe_step(&mut self, table: &str) -> Vec<String> {
        let hold = self.enabling_answers;
        let mut ending = Vec::new();
        for destination in self.tables.get_mut(table).into_iter().flatten() {
            match destination.status {
                Status::Disabling => destination.status = Status::Disabled,
                Status::Updating => {
                    destination.status = Status::Active;
                    destination.precision = destination.updating_to;
                }
                Status::Enabling if destination.enabling_answers < hold => destination.enabling_answers += 1,
                Status::Enabling => ending.push(destination.stream_arn.clone()),
                _ => {}
            }
        }
        ending
    }

    /// The end of ENABLING of `table`'s destination to `stream_arn`: ACTIVE, or ENABLE_FAILED
    /// for `failure`.
    fn settle(&mut self, table: &str, stream_arn: &str, failure: Option<String>) {
        let found = self
            .tables
            .get_mut(table)
            .into_iter()
            .flatten()
            .find(|d| d.stream_arn == stream_arn && d.status == Status::Enabling);
        if let Some(destination) = found {
            destination.status = if failure.is_some() {
                Status::EnableFailed
            } else {
                Status::Active
            };
            destination.description = failure;
        }
    }

    /// DescribeKinesisStreamingDestination's list for `table`.
    fn listed(&self, table: &str) -> Value {
        let list: Vec<Value> = self
            .tables
            .get(table)
            .into_iter()
            .flatten()
            .map(|d| {
                let mut entry = json!({
                    "StreamArn": d.stream_arn,
                    "DestinationStatus": d.status.as_str(),
                    "ApproximateCreationDateTimePrecision": d.precision.as_str(),
                });
                if let Some(description) = &d.description {
                    entry["DestinationStatusDescription"] = Value::from(description.clone());
                }
                entry
            })
            .collect();
        Value::from(list)
    }
}

/// AWS's refusal of an operation the destination's state does not allow.
fn invalid_state(verb: &str, operation: &str, allowed: &str, action: &str) -> Refusal {
    let message = format!(
        "Table is not in a valid state to {verb} Kinesis Streaming Destination: {operation} must be {allowed} to perform {action} operation."
    );
    Refusal::client("ValidationException", message)
}

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
            .call_as(&kinesis_headers(headers), &format!("{KINESIS}.DescribeStreamSummary"), &lookup)
            .await
        {
            Some((status, _)) if status.is_success() => None,
            Some((status, answer)) if status.is_client_error() => Some(format!(
                "Kinesis Data Stream {stream} does not exist or cannot be described (DescribeStreamSummary: {answer})"
            )),
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

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/family";
    const OTHER: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/other";

    fn status(d: &Destinations, table: &str) -> Vec<(String, String)> {
        d.listed(table)
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["StreamArn"].as_str().unwrap().to_owned(),
                    e["DestinationStatus"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn enabling_is_held_then_settled_and_one_destination_at_a_time() {
        let mut d = Destinations {
            enabling_answers: 2,
            ..Destinations::default()
        };
        d.enable("t", STREAM, Precision::Microsecond).unwrap();
        assert!(d.enable("t", OTHER, Precision::Millisecond).is_err());
        assert!(d.enable("t", STREAM, Precision::Millisecond).is_err());
        assert!(d.describe_step("t").is_empty());
        assert!(d.describe_step("t").is_empty());
        assert_eq!(d.delivering("t"), None);
        assert_eq!(d.describe_step("t"), [STREAM]);
        d.settle("t", STREAM, None);
        assert_eq!(
            d.delivering("t"),
            Some((STREAM.to_owned(), Precision::Microsecond))
        );
        // Disabled, another stream may be enabled; the disabled one stays listed.
        d.active("t", STREAM, "DisableKinesisStreamingDestination", "DISABLE")
            .unwrap()
            .status = Status::Disabling;
        assert_eq!(d.delivering("t"), None);
        d.describe_step("t");
        d.enable("t", OTHER, Precision::Millisecond).unwrap();
        assert_eq!(
            status(&d, "t"),
            [
                (STREAM.to_owned(), "DISABLED".to_owned()),
                (OTHER.to_owned(), "ENABLING".to_owned())
            ]
        );
        d.table_deleted("t");
        assert!(status(&d, "t").is_empty());
    }

    #[test]
    fn a_failed_enable_says_why_and_may_be_retried() {
        let mut d = Destinations::default();
        d.enable("t", STREAM, Precision::Millisecond).unwrap();
        assert_eq!(d.describe_step("t"), [STREAM]);
        d.settle("t", STREAM, Some("no such stream".into()));
        let listed = d.listed("t");
        assert_eq!(listed[0]["DestinationStatus"], "ENABLE_FAILED");
        assert_eq!(listed[0]["DestinationStatusDescription"], "no such stream");
        d.enable("t", STREAM, Precision::Millisecond).unwrap();
        assert_eq!(status(&d, "t"), [(STREAM.to_owned(), "ENABLING".to_owned())]);
    }
}
