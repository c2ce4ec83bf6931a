//! The Kinesis destinations model's state: each table's destinations and their statuses, kept
//! by the rules DynamoDB applies to them (`aws_model::destinations`: one destination a table;
//! Disable and Update only of an ACTIVE one; where each transition ends). No I/O:
//! `kinesis_destinations` answers the operations with it, and the proxy's
//! [`super::state::State`] holds it.

use std::collections::HashMap;

use aws_model::destinations::{enable_failed, may_enable, needs_active, Status};
use serde_json::{json, Value};

use super::kinesis_records::Precision;
use super::kinesis_requests::Refusal;

/// One table's destination to one stream.
#[derive(Debug, Clone)]
pub(super) struct Destination {
    pub(super) stream_arn: String,
    pub(super) status: Status,
    pub(super) description: Option<String>,
    pub(super) precision: Precision,
    /// An Update's precision, taken when UPDATING ends.
    pub(super) updating_to: Precision,
    /// Describe answers given while ENABLING.
    pub(super) enabling_answers: usize,
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
            .find(|d| d.status.streams())
            .map(|d| (d.stream_arn.clone(), d.precision))
    }

    /// `table` was deleted: its destinations go with it.
    pub(super) fn table_deleted(&mut self, table: &str) {
        self.tables.remove(table);
    }

    pub(super) fn enable(
        &mut self,
        table: &str,
        stream_arn: &str,
        precision: Precision,
    ) -> Result<(), Refusal> {
        let destinations = self.tables.entry(table.to_owned()).or_default();
        may_enable(destinations.iter().map(|d| (d.stream_arn.as_str(), d.status)))
            .map_err(|why| Refusal::client("ValidationException", why))?;
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
    pub(super) fn active(
        &mut self,
        table: &str,
        stream_arn: &str,
        operation: &str,
        verb: &str,
    ) -> Result<&mut Destination, Refusal> {
        let destination = self
            .tables
            .get_mut(table)
            .into_iter()
            .flatten()
            .find(|d| d.stream_arn == stream_arn);
        needs_active(
            operation,
            &verb.to_ascii_lowercase(),
            stream_arn,
            destination.as_ref().map(|d| d.status),
        )
        .map_err(|why| Refusal::client("ValidationException", why))?;
        Ok(destination.expect("an ACTIVE destination"))
    }

    /// One Describe answer of `table` goes by: DISABLING and UPDATING end, ENABLING counts the
    /// answer. Returns the streams whose ENABLING ends now, to be settled by
    /// [`Destinations::settle`] once their stream is looked up.
    pub(super) fn describe_step(&mut self, table: &str) -> Vec<String> {
        let hold = self.enabling_answers;
        let mut ending = Vec::new();
        for destination in self.tables.get_mut(table).into_iter().flatten() {
            match destination.status {
                Status::Disabling => destination.status = destination.status.settled(true),
                Status::Updating => {
                    destination.status = destination.status.settled(true);
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
    /// for `failure` (how the stream's lookup failed).
    pub(super) fn settle(&mut self, table: &str, stream_arn: &str, failure: Option<String>) {
        let found = self
            .tables
            .get_mut(table)
            .into_iter()
            .flatten()
            .find(|d| d.stream_arn == stream_arn && d.status == Status::Enabling);
        if let Some(destination) = found {
            destination.status = destination.status.settled(failure.is_none());
            destination.description = failure.map(|lookup| enable_failed(stream_arn, Some(&lookup)));
        }
    }

    /// DescribeKinesisStreamingDestination's list for `table`.
    pub(super) fn listed(&self, table: &str) -> Value {
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
        assert_eq!(
            listed[0]["DestinationStatusDescription"],
            format!(
                "Kinesis data stream {STREAM} does not exist or DynamoDB cannot access it (no such stream)"
            )
        );
        d.enable("t", STREAM, Precision::Millisecond).unwrap();
        assert_eq!(status(&d, "t"), [(STREAM.to_owned(), "ENABLING".to_owned())]);
    }
}
