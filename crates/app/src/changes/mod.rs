//! The family's change records, typed: one [`Change`] per item change, with the period its
//! table holds, whichever way the change arrived. Every table of a family streams into one
//! Kinesis data stream (the policy's `[stream]`), so a consumer attached once sees every
//! period's changes interleaved and routes them by the record's period, never by arrival.
//!
//! - [`kds`]: one record that DynamoDB puts into a Kinesis data stream (its bytes);
//! - [`lambda`]: Lambda's Kinesis event (each record's data is a [`kds`] record) and Lambda's
//!   DynamoDB Streams event.
//!
//! A record of a table that is not one of the family's (another prefix, or a name under the
//! prefix that is not a period label) is an error naming the table, never given a period.

pub mod kds;
pub mod lambda;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};
use ddb_rollover::policy::{Ownership, TableNaming};
use ddb_rollover::route::PeriodTable;
use ddb_rollover::Policy;
use serde::Deserialize;

pub use kds::Precision;

/// One item's attributes, as the SDK's client takes and returns them.
pub type Attributes = HashMap<String, AttributeValue>;

/// What happened to the item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChangeKind {
    /// A new item was written.
    Insert,
    /// An existing item was overwritten or updated.
    Modify,
    /// The item was deleted (by a call, or by DynamoDB's TTL process: [`Change::expired`]).
    Remove,
}

/// One item change in one of the family's tables.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The table the item is in, `{prefix}_{label}`.
    pub table: String,
    /// The period that table holds (its label, start and end), from the policy's naming.
    pub period: PeriodTable,
    /// Insert, modify or remove.
    pub kind: ChangeKind,
    /// The item's primary key attributes.
    pub keys: Attributes,
    /// The item after the change; `None` for a remove (and on a DynamoDB stream whose view
    /// type leaves it out).
    pub new_image: Option<Attributes>,
    /// The item before the change; `None` for an insert (and on a DynamoDB stream whose view
    /// type leaves it out).
    pub old_image: Option<Attributes>,
    /// When DynamoDB made the change (approximately): compare it, not arrival order.
    pub approximate_creation: DateTime<Utc>,
    /// The record's id: the same change delivered twice carries the same id.
    pub event_id: String,
    /// A remove done by DynamoDB's TTL process (`userIdentity` principal
    /// `dynamodb.amazonaws.com`), not by a caller.
    pub expired: bool,
}

/// Why a record is not a change of the family's tables.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChangeError {
    /// The record is not of the documented shape; `path` names the field (`dynamodb.Keys`,
    /// `Records[2].eventSourceARN`, ...).
    #[error("change record field `{path}`: {message}")]
    Malformed {
        /// Where in the record (or event) the fault is.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The table's name does not start with `{prefix}_`: another family's or nobody's.
    #[error("table {table:?} is not one of the family's tables: its name does not start with \"{prefix}_\"")]
    OtherTable {
        /// The record's table.
        table: String,
        /// The family's prefix.
        prefix: String,
    },
    /// The name starts with `{prefix}_` but the rest is not one of the policy's period labels.
    #[error("table {table:?} is not one of the family's tables: {label:?} after \"{prefix}_\" is not a period label of the policy")]
    NotAPeriod {
        /// The record's table.
        table: String,
        /// The family's prefix.
        prefix: String,
        /// What follows the prefix.
        label: String,
    },
}

impl ChangeError {
    pub(crate) fn malformed(path: impl Into<String>, message: impl Into<String>) -> ChangeError {
        ChangeError::Malformed {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The same error, its field path under `parent` (`Records[3].kinesis.data`).
    pub(crate) fn under(self, parent: &str) -> ChangeError {
        match self {
            ChangeError::Malformed { path, message } => ChangeError::Malformed {
                path: if path == "." {
                    parent.to_string()
                } else {
                    format!("{parent}.{path}")
                },
                message,
            },
            other => other,
        }
    }
}

/// Decodes change records for one family: its prefix and period calendar decide which tables
/// are its own and which period each holds.
///
/// ```
/// use ddb_rollover::Policy;
/// use ddb_rollover_app::{ChangeDecoder, ChangeError, ChangeKind};
///
/// let decoder = ChangeDecoder::new(&Policy::from_toml("prefix = \"iot\"\nperiod = \"6h\"")?);
/// let record = br#"{"eventID": "e1", "eventName": "INSERT", "tableName": "iot_2024-12-01T06",
///     "dynamodb": {"ApproximateCreationDateTime": 1733032800000, "Keys": {"pk": {"S": "a"}}}}"#;
/// let change = decoder.decode_kinesis_data(record)?;
/// assert_eq!((change.kind, change.period.label.as_str()), (ChangeKind::Insert, "2024-12-01T06"));
///
/// let other = br#"{"eventID": "e2", "eventName": "INSERT", "tableName": "weather_2024-12-01T06",
///     "dynamodb": {"ApproximateCreationDateTime": 1733032800000, "Keys": {"pk": {"S": "a"}}}}"#;
/// assert!(matches!(decoder.decode_kinesis_data(other), Err(ChangeError::OtherTable { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ChangeDecoder {
    naming: TableNaming,
}

impl ChangeDecoder {
    /// A decoder for the family `policy` names.
    pub fn new(policy: &Policy) -> ChangeDecoder {
        ChangeDecoder {
            naming: policy.naming(),
        }
    }

    /// The period `table` holds, or why it is not one of the family's tables.
    pub fn period_of(&self, table: &str) -> Result<PeriodTable, ChangeError> {
        let prefix = self.naming.prefix();
        match self.naming.classify(table) {
            Ownership::Owned(slot) => {
                let calendar = self.naming.calendar();
                Ok(PeriodTable {
                    name: self.naming.table_name(slot),
                    label: calendar.label(slot),
                    start: slot.start(),
                    end: calendar.end(slot),
                    slot,
                })
            }
            Ownership::Foreign => Err(ChangeError::NotAPeriod {
                table: table.to_string(),
                prefix: prefix.to_string(),
                label: table[prefix.len() + 1..].to_string(),
            }),
            Ownership::Unrelated => Err(ChangeError::OtherTable {
                table: table.to_string(),
                prefix: prefix.to_string(),
            }),
        }
    }
}

/// An image as the SDK's attributes; an empty one (an item always has its key) as `None`.
pub(crate) fn attributes(item: serde_dynamo::Item) -> Option<Attributes> {
    let attributes = Attributes::from(item);
    (!attributes.is_empty()).then_some(attributes)
}
