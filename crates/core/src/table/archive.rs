//! An archive's proof: what S3 holds for a table's export, checked before retention deletes the
//! table and before `restore` imports it. "COMPLETED" says the export ran; only the manifest
//! DynamoDB wrote beside the data, naming this table, and every data file it lists, as it lists
//! it and readable, say the data can come back: the proof checks what ImportTable will read.
//!
//! The layout is AWS's (developer guide, "DynamoDB table export output format"):
//! `{prefix}AWSDynamoDB/{ExportId}/manifest-summary.json` (one JSON object: the export's and
//! the table's ARNs, `itemCount`, `manifestFilesS3Key`, `outputFormat`) and
//! `manifest-files.json` (one JSON object per line: `itemCount`, `md5Checksum` (base64),
//! `etag` (S3's, hex), `dataFileS3Key`) beside `data/`. Keys in them are whole keys.
//! `restore` imports everything under that `data/` (ImportTable's `S3KeyPrefix`), so the
//! proof holds the folder to exactly the files the manifest lists. This module is the data: the
//! proof, the manifests as DynamoDB writes them, and where an export is; checking one against S3
//! is [`crate::run::archive`]'s.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::table::evidence::{ArchiveRecord, ArchivedFile};

/// What a check of an export's files found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "proof", rename_all = "snake_case")]
pub enum ArchiveProof {
    /// The manifest names this table, every data file it lists is in S3 under the export's
    /// `data/` as it says (ETag, MD5) and readable, nothing else is there, and the counts agree.
    Proven {
        /// The export's ARN.
        export: String,
        /// The S3 bucket the export is in.
        bucket: String,
        /// The key of `manifest-summary.json`.
        manifest: String,
        /// The exported table's ARN, as the manifest names it.
        table_arn: String,
        /// How many items the manifest counts.
        items: u64,
        /// Every data file, as proven: what a deletion's receipt records and `restore` checks
        /// again.
        files: Vec<ArchivedFile>,
    },
    /// Something is missing or does not add up: the table is kept, and the reason says what.
    Unproven {
        /// The export's ARN.
        export: String,
        /// What is missing or does not add up.
        reason: String,
    },
}

impl ArchiveProof {
    /// Whether the archive is proven, so the table may be deleted.
    pub fn is_proven(&self) -> bool {
        matches!(self, ArchiveProof::Proven { .. })
    }

    /// What a deletion's receipt records of a proven archive, with the ExportTime DescribeExport
    /// gave; `None` when not proven.
    pub fn record(&self, export_time: DateTime<Utc>) -> Option<ArchiveRecord> {
        match self {
            ArchiveProof::Proven {
                export,
                bucket,
                manifest,
                table_arn,
                items,
                files,
            } => Some(ArchiveRecord {
                export_arn: export.clone(),
                export_time,
                table_arn: table_arn.clone(),
                bucket: bucket.clone(),
                manifest: manifest.clone(),
                items: *items,
                files: files.clone(),
            }),
            ArchiveProof::Unproven { .. } => None,
        }
    }

    /// What a report line says of it.
    pub fn describe(&self) -> String {
        match self {
            ArchiveProof::Proven {
                bucket,
                manifest,
                items,
                files,
                ..
            } => format!("archive proven: s3://{bucket}/{manifest} lists {} data file(s), all present as it lists them (ETag, MD5, a readable storage class, none due to expire, in a bucket of the expected owner), {items} item(s)", files.len()),
            ArchiveProof::Unproven { reason, .. } => format!("archive not proven: {reason}"),
        }
    }
}

/// The fields of `manifest-summary.json` the proof reads.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ManifestSummary {
    pub export_arn: String,
    /// The exported table's ARN; AWS always writes it.
    #[serde(default)]
    pub table_arn: Option<String>,
    pub item_count: u64,
    pub manifest_files_s3_key: String,
    #[serde(default)]
    pub output_format: Option<String>,
    /// The instant the export holds the table as of; AWS always writes it.
    #[serde(default)]
    pub export_time: Option<DateTime<Utc>>,
}

/// One line of `manifest-files.json`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ManifestFile {
    pub item_count: u64,
    pub data_file_s3_key: String,
    /// S3's ETag of the data file as the export wrote it (hex, no quotes).
    #[serde(default)]
    pub etag: Option<String>,
    /// The data file's MD5, base64-encoded.
    #[serde(default)]
    pub md5_checksum: Option<String>,
}

/// What DescribeExport says of a COMPLETED export, where its proof starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportLocation {
    /// The export's ARN.
    pub export: String,
    /// The name of the table the export must be of (its summary's `tableArn` and the table in
    /// its `exportArn`).
    pub table: String,
    /// The S3 bucket the export wrote to.
    pub bucket: String,
    /// `ExportManifest`: the key of `manifest-summary.json`; `None` when DescribeExport names none.
    pub manifest: Option<String>,
    /// `ItemCount`, when DescribeExport gives it.
    pub items: Option<u64>,
    /// The account every read expects to own `bucket` (`ExpectedBucketOwner`).
    pub bucket_owner: String,
}

/// What S3's HeadObject says of one object: what the proof compares with the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectHead {
    /// The ETag without its quotes.
    pub etag: String,
    /// The object's size in bytes.
    pub size: u64,
    /// `x-amz-storage-class`; `None` means STANDARD (S3 omits the header for it).
    pub storage_class: Option<String>,
    /// `x-amz-expiration`: a lifecycle rule will delete the object (`expiring`).
    pub expiration: Option<String>,
}

/// What S3's GetObject gives of an object: its bytes and `x-amz-expiration`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectBody {
    /// The object's bytes.
    pub bytes: Vec<u8>,
    /// `x-amz-expiration`: a lifecycle rule will delete the object (`expiring`).
    pub expiration: Option<String>,
}

/// Why an object S3 answered with `x-amz-expiration` (`expiry-date="...", rule-id="..."`,
/// the rule's id URL-encoded) cannot hold an archive: an Enabled lifecycle Expiration rule will
/// delete it, and the table would outlive its archive. Names the object, the date and the rule.
pub(crate) fn expiring(bucket: &str, key: &str, expiration: &str) -> String {
    let field = |name: &str| {
        let start = expiration.find(&format!("{name}=\""))? + name.len() + 2;
        let end = expiration[start..].find('"')?;
        Some(&expiration[start..start + end])
    };
    match (field("expiry-date"), field("rule-id")) {
        (Some(date), Some(rule)) => format!(
            "s3://{bucket}/{key} expires on {date} under the bucket's lifecycle rule {:?} (x-amz-expiration): the archive would not outlive the table",
            percent_decoded(rule)
        ),
        _ => format!(
            "s3://{bucket}/{key} is to expire (x-amz-expiration: {expiration}): the archive would not outlive the table"
        ),
    }
}

/// `%XX` sequences decoded, as S3 encodes a rule id in `x-amz-expiration`.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The storage classes whose objects GetObject (and so ImportTable) reads at once. GLACIER and
/// DEEP_ARCHIVE need a RestoreObject first; an INTELLIGENT_TIERING object may sit in an archive
/// tier, which only HeadObject's `x-amz-archive-status` tells, and the proof does not read it;
/// a class not listed here is unknown, so not proven readable.
pub const READABLE_STORAGE_CLASSES: [&str; 6] = [
    "STANDARD",
    "REDUCED_REDUNDANCY",
    "STANDARD_IA",
    "ONEZONE_IA",
    "GLACIER_IR",
    "EXPRESS_ONEZONE",
];

/// The export's `data/` folder beside its manifest (`{dir}/manifest-summary.json`).
pub(crate) fn data_prefix(manifest: &str) -> String {
    let directory = manifest
        .strip_suffix("/manifest-summary.json")
        .unwrap_or(manifest);
    format!("{directory}/data/")
}

/// The table's name in a DynamoDB table ARN (`arn:{partition}:dynamodb:{region}:{account}:table/{name}`).
pub(crate) fn table_name_of(table_arn: &str) -> Option<&str> {
    let (_, name) = table_arn.split_once(":table/")?;
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

/// An ImportTable's progress, as DescribeImport reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ImportState {
    /// IN_PROGRESS: still importing.
    InProgress,
    /// COMPLETED: `ImportedItemCount` and `ErrorCount` (items ImportTable could not write;
    /// AWS completes an import with them and logs them to CloudWatch).
    Completed {
        /// ImportedItemCount.
        items: Option<u64>,
        /// ErrorCount.
        errors: Option<u64>,
    },
    /// FAILED, CANCELLED or CANCELLING, with the reason given.
    Failed {
        /// Why, as DescribeImport says.
        message: String,
    },
}

/// The manifest files an export lists: its summary, then the lines of `manifest-files.json`.
pub(crate) fn parse_summary(bytes: &[u8]) -> Result<ManifestSummary, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("not a manifest summary: {e}"))
}

pub(crate) fn parse_files(bytes: &[u8]) -> Result<Vec<ManifestFile>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(n, line)| serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiration_names_the_object_the_date_and_the_rule() {
        let header = "expiry-date=\"Fri, 23 Dec 2012 00:00:00 GMT\", rule-id=\"tidy%20exports%2F1\"";
        assert_eq!(
            expiring("b", "p/k", header),
            "s3://b/p/k expires on Fri, 23 Dec 2012 00:00:00 GMT under the bucket's lifecycle rule \"tidy exports/1\" (x-amz-expiration): the archive would not outlive the table"
        );
        // Any other shape is still an expiration, said as S3 gave it.
        assert!(expiring("b", "k", "soon").contains("is to expire (x-amz-expiration: soon)"));
    }
}
