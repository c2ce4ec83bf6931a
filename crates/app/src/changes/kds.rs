//! One record that DynamoDB puts into a Kinesis data stream ("Kinesis Data Streams for
//! DynamoDB"), from its bytes.
//!
//! The format, as AWS's DynamoDB developer guide ("Using Kinesis Data Streams to capture
//! changes to DynamoDB", `kds.html`) and records captured from AWS show it: a JSON object
//!
//! ```json
//! { "awsRegion": "eu-west-1", "eventID": "7df367f7-…", "eventName": "INSERT",
//!   "userIdentity": null, "recordFormat": "application/json", "tableName": "iot_2024-12-01",
//!   "dynamodb": { "ApproximateCreationDateTime": 1733011200123, "Keys": {…},
//!                 "NewImage": {…}, "OldImage": {…}, "SizeBytes": 68,
//!                 "ApproximateCreationDateTimePrecision": "MICROSECOND" },
//!   "eventSource": "aws:dynamodb" }
//! ```
//!
//! `eventName` is `INSERT`, `MODIFY` or `REMOVE`; `Keys`, `NewImage` and `OldImage` are
//! DynamoDB JSON (`{"S": "…"}`); `ApproximateCreationDateTime` is epoch milliseconds, or
//! microseconds when the destination's precision is `MICROSECOND` (the record then says so in
//! `ApproximateCreationDateTimePrecision`). The guide warns that records "might appear in a
//! different sequence than the item changes occurred" and "more than once": compare
//! `ApproximateCreationDateTime` and drop repeated `eventID`s (docs/consume.md).

use chrono::{DateTime, Datelike, Utc};
use serde::Deserialize;

use super::{attributes, Change, ChangeDecoder, ChangeError, ChangeKind};

/// The unit of `ApproximateCreationDateTime`, as the table's Kinesis destination is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Precision {
    /// Epoch milliseconds (AWS's default).
    #[default]
    Millisecond,
    /// Epoch microseconds.
    Microsecond,
}

/// The record, field by field as AWS writes it; fields the decoder does not need are left out.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(rename = "eventID")]
    event_id: String,
    event_name: ChangeKind,
    table_name: String,
    #[serde(default)]
    event_source: Option<String>,
    #[serde(default)]
    record_format: Option<String>,
    #[serde(default)]
    user_identity: Option<UserIdentity>,
    dynamodb: ItemChange,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserIdentity {
    #[serde(default)]
    principal_id: String,
}

#[derive(Deserialize)]
struct ItemChange {
    #[serde(rename = "ApproximateCreationDateTime")]
    approximate_creation: i64,
    #[serde(rename = "ApproximateCreationDateTimePrecision", default)]
    precision: Precision,
    #[serde(rename = "Keys")]
    keys: serde_dynamo::Item,
    #[serde(rename = "NewImage", default)]
    new_image: Option<serde_dynamo::Item>,
    #[serde(rename = "OldImage", default)]
    old_image: Option<serde_dynamo::Item>,
}

/// The principal of DynamoDB's own TTL deletions.
pub(crate) const TTL_PRINCIPAL: &str = "dynamodb.amazonaws.com";

impl ChangeDecoder {
    /// Decodes the bytes of one Kinesis record that DynamoDB wrote. Errors name the field
    /// (`dynamodb.Keys.pk`, `eventName`), or the table when it is not one of the family's.
    pub fn decode_kinesis_data(&self, data: &[u8]) -> Result<Change, ChangeError> {
        let json = &mut serde_json::Deserializer::from_slice(data);
        let record: Record = serde_path_to_error::deserialize(json)
            .map_err(|err| ChangeError::malformed(err.path().to_string(), err.into_inner().to_string()))?;
        expect_field("eventSource", record.event_source.as_deref(), "aws:dynamodb")?;
        expect_field(
            "recordFormat",
            record.record_format.as_deref(),
            "application/json",
        )?;
        let change = record.dynamodb;
        let approximate_creation = creation_time(change.approximate_creation, change.precision)?;
        let period = self.period_of(&record.table_name)?;
        Ok(Change {
            table: record.table_name,
            period,
            kind: record.event_name,
            keys: attributes(change.keys).unwrap_or_default(),
            new_image: change.new_image.and_then(attributes),
            old_image: change.old_image.and_then(attributes),
            approximate_creation,
            event_id: record.event_id,
            expired: record
                .user_identity
                .is_some_and(|who| who.principal_id == TTL_PRINCIPAL),
        })
    }
}

/// A field that, when present, must hold the one value AWS writes there.
fn expect_field(path: &str, found: Option<&str>, expected: &str) -> Result<(), ChangeError> {
    match found {
        Some(value) if value != expected => Err(ChangeError::malformed(
            path,
            format!("is {value:?}: a DynamoDB change record has {expected:?}"),
        )),
        _ => Ok(()),
    }
}

/// `ApproximateCreationDateTime` as an instant; a value past the year 9999 (microseconds read
/// as milliseconds) is refused rather than dated in the far future.
pub(crate) fn creation_time(value: i64, precision: Precision) -> Result<DateTime<Utc>, ChangeError> {
    const PATH: &str = "dynamodb.ApproximateCreationDateTime";
    let (time, unit, hint) = match precision {
        Precision::Millisecond => (
            DateTime::from_timestamp_millis(value),
            "milliseconds",
            " (microseconds, without \"ApproximateCreationDateTimePrecision\": \"MICROSECOND\"?)",
        ),
        Precision::Microsecond => (DateTime::from_timestamp_micros(value), "microseconds", ""),
    };
    match time {
        Some(time) if (1970..=9999).contains(&time.year()) => Ok(time),
        _ => Err(ChangeError::malformed(
            PATH,
            format!("{value} {unit} since the epoch is not a time between 1970 and 9999{hint}"),
        )),
    }
}
