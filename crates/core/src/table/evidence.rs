//! What AWS gave a table when it was made, and what its deletion relies on: the evidence the
//! family's ledger (`crate::ledger`) records, defined with the table because a deletion's
//! request carries it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::policy::settings::KeySchema;

/// The identity AWS gave a table at CreateTable (or ImportTable): a table made again under the
/// same name has the same ARN but not the same creation time (nor, on AWS, the same TableId).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableIdentity {
    /// The table's ARN (it names the Region and the account).
    pub arn: String,
    /// CreationDateTime, to the millisecond.
    pub created: DateTime<Utc>,
    /// TableId, a UUID; `None` where the server gives none (moto, DynamoDB Local).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_id: Option<String>,
}

impl TableIdentity {
    /// The identity DescribeTable or CreateTable reported, with the creation time cut to the
    /// millisecond (what every server gives, and what is compared).
    pub fn new(arn: &str, created: DateTime<Utc>, table_id: Option<&str>) -> TableIdentity {
        TableIdentity {
            arn: arn.to_string(),
            created: to_millisecond(created),
            table_id: table_id.map(str::to_string),
        }
    }

    /// Whether `other` is the same table: the same ARN and creation time, and the same TableId
    /// where both have one.
    pub fn is(&self, other: &TableIdentity) -> bool {
        self.arn == other.arn
            && self.created == other.created
            && match (&self.table_id, &other.table_id) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// `t` without its sub-millisecond part.
pub fn to_millisecond(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(t.timestamp_millis()).unwrap_or(t)
}

/// The instants a table's period starts and ends (UTC): ages come from here, never from the
/// name read again under a policy whose period or time zone may have changed since.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodBounds {
    /// The period's first instant.
    pub start: DateTime<Utc>,
    /// The next period's first instant.
    pub end: DateTime<Utc>,
}

/// One data file of an export as the archive's proof found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchivedFile {
    /// The object's key.
    pub key: String,
    /// Its ETag, as S3 gave it.
    pub etag: String,
    /// Its size in bytes.
    pub size: u64,
    /// The manifest's MD5 of it (base64).
    pub md5: String,
    /// Items in it, as the manifest counts them.
    pub items: u64,
}

/// An export of a table that the archive's proof checked, as it checked it: what `restore` reads
/// back and checks again, never what S3 says today.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveRecord {
    /// The export's ARN (DescribeExport's).
    pub export_arn: String,
    /// The instant the export holds the table as of (DescribeExport's ExportTime).
    pub export_time: DateTime<Utc>,
    /// The exported table's ARN (it names the Region and the account).
    pub table_arn: String,
    /// The bucket.
    pub bucket: String,
    /// The key of `manifest-summary.json`.
    pub manifest: String,
    /// Items, as the manifest counts them.
    pub items: u64,
    /// Every data file, as proven.
    pub files: Vec<ArchivedFile>,
}

/// What retention's deletion relied on: written just before DeleteTable, so only `restore`
/// (naming it) ever brings the period back, from exactly that archive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The table's name.
    pub name: String,
    /// The table deleted.
    pub identity: TableIdentity,
    /// The period it held.
    pub period: PeriodBounds,
    /// Its key.
    pub key: KeySchema,
    /// When the deletion was decided (the run's instant).
    pub at: DateTime<Utc>,
    /// The proven archive it relied on; `None` when retention deletes without archiving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<ArchiveRecord>,
}
