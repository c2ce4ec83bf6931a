//! Lambda's events, record by record: a Kinesis event whose records' data are the records
//! DynamoDB writes to the family's Kinesis stream ([`super::kds`]), and a DynamoDB Streams
//! event from one table's stream (the table named by the record's `eventSourceARN`).
//!
//! Each function returns one result per record, in the event's order, so a handler can report
//! the records it could not decode (by their Kinesis sequence number or DynamoDB
//! `SequenceNumber`) as batch item failures and take the rest.

use aws_lambda_events::event::dynamodb::{self, EventRecord};
use aws_lambda_events::event::kinesis::KinesisEvent;
use chrono::{DateTime, Utc};

use super::kds::TTL_PRINCIPAL;
use super::{attributes, Change, ChangeDecoder, ChangeError, ChangeKind};

impl ChangeDecoder {
    /// Decodes each record of a Lambda Kinesis event. Errors' paths start at the event
    /// (`Records[1].kinesis.data.dynamodb.Keys`).
    pub fn decode_kinesis_event(&self, event: &KinesisEvent) -> Vec<Result<Change, ChangeError>> {
        event
            .records
            .iter()
            .enumerate()
            .map(|(index, record)| {
                self.decode_kinesis_data(&record.kinesis.data.0)
                    .map_err(|err| err.under(&format!("Records[{index}].kinesis.data")))
            })
            .collect()
    }

    /// Decodes each record of a Lambda DynamoDB Streams event. Errors' paths start at the event
    /// (`Records[0].eventSourceARN`).
    pub fn decode_dynamodb_event(&self, event: &dynamodb::Event) -> Vec<Result<Change, ChangeError>> {
        event
            .records
            .iter()
            .enumerate()
            .map(|(index, record)| {
                self.decode_stream_record(record)
                    .map_err(|err| err.under(&format!("Records[{index}]")))
            })
            .collect()
    }

    fn decode_stream_record(&self, record: &EventRecord) -> Result<Change, ChangeError> {
        let kind = match record.event_name.as_str() {
            "INSERT" => ChangeKind::Insert,
            "MODIFY" => ChangeKind::Modify,
            "REMOVE" => ChangeKind::Remove,
            other => {
                return Err(ChangeError::malformed(
                    "eventName",
                    format!("is {other:?}: expected INSERT, MODIFY or REMOVE"),
                ))
            }
        };
        let arn = record.event_source_arn.as_deref().ok_or_else(|| {
            ChangeError::malformed("eventSourceARN", "is missing: it names the record's table")
        })?;
        let table = table_of_stream_arn(arn)?;
        let period = self.period_of(table)?;
        let change = &record.change;
        // aws_lambda_events reads a missing time as the epoch: no change of a period table is that old.
        if change.approximate_creation_date_time == DateTime::<Utc>::UNIX_EPOCH {
            return Err(ChangeError::malformed(
                "dynamodb.ApproximateCreationDateTime",
                "is missing: every change carries the time DynamoDB made it",
            ));
        }
        Ok(Change {
            table: table.to_string(),
            period,
            kind,
            keys: attributes(change.keys.clone()).ok_or_else(|| {
                ChangeError::malformed(
                    "dynamodb.Keys",
                    "is missing or empty: every change names its item's key",
                )
            })?,
            new_image: attributes(change.new_image.clone()),
            old_image: attributes(change.old_image.clone()),
            approximate_creation: change.approximate_creation_date_time,
            event_id: record.event_id.clone(),
            expired: record
                .user_identity
                .as_ref()
                .is_some_and(|who| who.principal_id == TTL_PRINCIPAL),
        })
    }
}

/// The table of a DynamoDB stream ARN, `arn:{partition}:dynamodb:{region}:{account}:table/{NAME}/stream/{label}`.
pub fn table_of_stream_arn(arn: &str) -> Result<&str, ChangeError> {
    let resource = arn
        .strip_prefix("arn:")
        .and_then(|rest| rest.splitn(5, ':').nth(4).map(|resource| (rest, resource)))
        .filter(|(rest, _)| rest.split(':').nth(1) == Some("dynamodb"))
        .map(|(_, resource)| resource);
    let table = resource
        .and_then(|resource| resource.strip_prefix("table/"))
        .and_then(|rest| rest.split_once("/stream/"))
        .map(|(table, _)| table)
        .filter(|table| !table.is_empty());
    table.ok_or_else(|| {
        ChangeError::malformed(
            "eventSourceARN",
            format!("is {arn:?}: expected a DynamoDB stream ARN, arn:aws:dynamodb:REGION:ACCOUNT:table/NAME/stream/LABEL"),
        )
    })
}
