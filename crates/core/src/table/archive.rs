//! An archive's proof: what S3 holds for a table's export, checked before retention deletes the
//! table. "COMPLETED" says the export ran; only the manifest DynamoDB wrote beside the data,
//! every data file it lists, and item counts that agree say the data can come back.
//!
//! The layout is AWS's (developer guide, "DynamoDB table export output format"):
//! `{prefix}AWSDynamoDB/{ExportId}/manifest-summary.json` (one JSON object: the export's ARN,
//! `itemCount`, `manifestFilesS3Key`, `outputFormat`) and `manifest-files.json` (one JSON object
//! per line: `itemCount`, `dataFileS3Key`, ...) beside `data/`. Keys in them are whole keys.
//! The reading is pure here; the S3 calls are the adapters' ([`crate::aws::archive`], and the
//! fakes' in-memory S3).

use serde::{Deserialize, Serialize};

/// What a check of an export's files found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "proof", rename_all = "snake_case")]
pub enum ArchiveProof {
    /// The manifest and every data file it lists are in S3, and the item counts agree.
    Proven {
        export: String,
        bucket: String,
        /// The key of `manifest-summary.json`.
        manifest: String,
        items: u64,
        files: usize,
    },
    /// Something is missing or does not add up: the table is kept, and the reason says what.
    Unproven { export: String, reason: String },
}

impl ArchiveProof {
    pub fn is_proven(&self) -> bool {
        matches!(self, ArchiveProof::Proven { .. })
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
            } => format!("archive proven: s3://{bucket}/{manifest} lists {files} data file(s), all present, {items} item(s)"),
            ArchiveProof::Unproven { reason, .. } => format!("archive not proven: {reason}"),
        }
    }
}

/// The fields of `manifest-summary.json` the proof reads.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestSummary {
    pub export_arn: String,
    pub item_count: u64,
    pub manifest_files_s3_key: String,
    #[serde(default)]
    pub output_format: Option<String>,
}

/// One line of `manifest-files.json`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestFile {
    pub item_count: u64,
    pub data_file_s3_key: String,
}

/// What DescribeExport says of a COMPLETED export, where its proof starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportLocation {
    pub export: String,
    pub bucket: String,
    /// `ExportManifest`: the key of `manifest-summary.json`; `None` when DescribeExport names none.
    pub manifest: Option<String>,
    /// `ItemCount`, when DescribeExport gives it.
    pub items: Option<u64>,
}

/// The export's `data/` folder beside its manifest (`{dir}/manifest-summary.json`).
pub fn data_prefix(manifest: &str) -> String {
    let directory = manifest
        .strip_suffix("/manifest-summary.json")
        .unwrap_or(manifest);
    format!("{directory}/data/")
}

/// An ImportTable's progress, as DescribeImport reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ImportState {
    InProgress,
    Completed {
        items: Option<u64>,
    },
    /// FAILED, CANCELLED or CANCELLING, with the reason given.
    Failed {
        message: String,
    },
}

/// The manifest files an export lists: its summary, then the lines of `manifest-files.json`.
pub fn parse_summary(bytes: &[u8]) -> Result<ManifestSummary, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("not a manifest summary: {e}"))
}

pub fn parse_files(bytes: &[u8]) -> Result<Vec<ManifestFile>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(n, line)| serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1)))
        .collect()
}

/// What S3's HeadObject says of one object: what the proof compares with the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectHead {
    /// The ETag without its quotes.
    pub etag: String,
    pub size: u64,
    /// `x-amz-storage-class`; `None` means STANDARD (S3 omits the header for it).
    pub storage_class: Option<String>,
}

/// The S3 reads a proof needs, on AWS's S3 or a fake's.
pub trait ArchiveStore {
    /// The object's bytes; `Ok(None)` when there is no such key.
    fn get(
        &self,
        bucket: &str,
        key: &str,
    ) -> impl std::future::Future<Output = Result<Option<Vec<u8>>, String>> + Send;
    /// The keys under `prefix` in the bucket (every page); none for a missing bucket.
    fn list(
        &self,
        bucket: &str,
        prefix: &str,
    ) -> impl std::future::Future<Output = Result<Vec<String>, String>> + Send;
    /// `Ok(None)` when there is no such key (404; a 403 is an error, not an absence).
    fn head(
        &self,
        bucket: &str,
        key: &str,
    ) -> impl std::future::Future<Output = Result<Option<ObjectHead>, String>> + Send;
}

/// How many HeadObject calls one proof keeps in flight: S3 serves thousands a second per
/// prefix, and an export of a large table lists thousands of data files.
const HEADS_IN_FLIGHT: usize = 16;

/// The keys of `keys` that are not in the bucket.
async fn missing<S: ArchiveStore>(store: &S, bucket: &str, keys: &[String]) -> Result<Vec<String>, String> {
    use futures::stream::{self, StreamExt, TryStreamExt};
    // Owned keys: a future borrowing the slice's items is not Send for every lifetime.
    let heads: Vec<(String, bool)> = stream::iter(keys.to_vec())
        .map(|key: String| async move {
            let there = store.head(bucket, &key).await?.is_some();
            Ok::<_, String>((key, there))
        })
        .buffered(HEADS_IN_FLIGHT)
        .try_collect()
        .await?;
    Ok(heads
        .into_iter()
        .filter(|(_, there)| !there)
        .map(|(key, _)| key)
        .collect())
}

/// Checks an export's manifest and files in `store`. S3 failures are reasons, not errors: the
/// table is only kept a run longer.
pub async fn prove<S: ArchiveStore>(store: &S, location: &ExportLocation) -> ArchiveProof {
    let unproven = |reason: String| ArchiveProof::Unproven {
        export: location.export.clone(),
        reason,
    };
    let bucket = &location.bucket;
    let Some(manifest) = &location.manifest else {
        return unproven("DescribeExport names no manifest (ExportManifest)".into());
    };
    let summary = match store.get(bucket, manifest).await {
        Ok(Some(bytes)) => match parse_summary(&bytes) {
            Ok(summary) => summary,
            Err(e) => return unproven(format!("s3://{bucket}/{manifest} is unreadable: {e}")),
        },
        Ok(None) => return unproven(format!("the manifest s3://{bucket}/{manifest} is missing")),
        Err(e) => return unproven(format!("s3://{bucket}/{manifest} could not be read: {e}")),
    };
    if summary.export_arn != location.export {
        return unproven(format!(
            "s3://{bucket}/{manifest} is the manifest of export {}, not of {}",
            summary.export_arn, location.export
        ));
    }
    if let Some(format) = summary.output_format.as_deref().filter(|f| *f != "DYNAMODB_JSON") {
        return unproven(format!(
            "the export's format is {format}; restore imports DYNAMODB_JSON"
        ));
    }
    let files_key = &summary.manifest_files_s3_key;
    let files = match store.get(bucket, files_key).await {
        Ok(Some(bytes)) => match parse_files(&bytes) {
            Ok(files) => files,
            Err(e) => return unproven(format!("s3://{bucket}/{files_key} is unreadable: {e}")),
        },
        Ok(None) => return unproven(format!("the file list s3://{bucket}/{files_key} is missing")),
        Err(e) => return unproven(format!("s3://{bucket}/{files_key} could not be read: {e}")),
    };
    let listed: u64 = files.iter().map(|f| f.item_count).sum();
    if listed != summary.item_count {
        return unproven(format!(
            "the data files list {listed} item(s) but the manifest says {}",
            summary.item_count
        ));
    }
    if let Some(described) = location.items.filter(|n| *n != summary.item_count) {
        return unproven(format!(
            "DescribeExport counts {described} item(s) but the manifest says {}",
            summary.item_count
        ));
    }
    let keys: Vec<String> = files.iter().map(|f| f.data_file_s3_key.clone()).collect();
    match missing(store, bucket, &keys).await {
        Ok(missing) if missing.is_empty() => ArchiveProof::Proven {
            export: location.export.clone(),
            bucket: bucket.clone(),
            manifest: manifest.clone(),
            items: summary.item_count,
            files: files.len(),
        },
        Ok(missing) => {
            const SHOWN: usize = 3;
            let mut named: Vec<String> = missing
                .iter()
                .take(SHOWN)
                .map(|k| format!("s3://{bucket}/{k}"))
                .collect();
            if missing.len() > SHOWN {
                named.push(format!("and {} more", missing.len() - SHOWN));
            }
            unproven(format!(
                "{} of the {} data file(s) the manifest lists are missing: {}",
                missing.len(),
                keys.len(),
                named.join(", ")
            ))
        }
        Err(e) => unproven(format!("the data files could not be checked: {e}")),
    }
}

/// Every export under `prefix` in `bucket` (each `manifest-summary.json` listed), oldest first
/// as their keys sort (AWS's export ids start with the export's time), each with what the store
/// proves of it. Its own summary names the export: once the table is gone there is no
/// DescribeExport to ask, so DescribeExport's count is not compared.
pub async fn archives_under<S: ArchiveStore>(
    store: &S,
    bucket: &str,
    prefix: &str,
) -> Result<Vec<(ExportLocation, ArchiveProof)>, String> {
    let mut manifests: Vec<String> = store
        .list(bucket, prefix)
        .await?
        .into_iter()
        .filter(|key| key.ends_with("/manifest-summary.json"))
        .collect();
    manifests.sort();
    let mut found = Vec::new();
    for manifest in manifests {
        let Some(bytes) = store.get(bucket, &manifest).await? else {
            continue;
        };
        let location = ExportLocation {
            export: parse_summary(&bytes).map(|s| s.export_arn).unwrap_or_default(),
            bucket: bucket.to_string(),
            manifest: Some(manifest),
            items: None,
        };
        let proof = prove(store, &location).await;
        found.push((location, proof));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    struct Store(BTreeMap<String, Vec<u8>>);

    impl ArchiveStore for Store {
        async fn get(&self, _bucket: &str, key: &str) -> Result<Option<Vec<u8>>, String> {
            Ok(self.0.get(key).cloned())
        }
        async fn list(&self, _bucket: &str, prefix: &str) -> Result<Vec<String>, String> {
            Ok(self.0.keys().filter(|k| k.starts_with(prefix)).cloned().collect())
        }
        async fn head(&self, _bucket: &str, key: &str) -> Result<Option<ObjectHead>, String> {
            Ok(self.0.get(key).map(|bytes| ObjectHead {
                etag: String::new(),
                size: bytes.len() as u64,
                storage_class: None,
            }))
        }
    }

    const EXPORT: &str = "arn:aws:dynamodb:us-east-1:1:table/t/export/01";

    fn layout(items: &[u64]) -> Store {
        let dir = "p/t/AWSDynamoDB/01";
        let total: u64 = items.iter().sum();
        let mut objects = BTreeMap::new();
        objects.insert(
            format!("{dir}/manifest-summary.json"),
            serde_json::json!({
                "version": "2020-06-30", "exportArn": EXPORT, "itemCount": total,
                "manifestFilesS3Key": format!("{dir}/manifest-files.json"), "outputFormat": "DYNAMODB_JSON"
            })
            .to_string()
            .into_bytes(),
        );
        let mut lines = String::new();
        for (n, count) in items.iter().enumerate() {
            let key = format!("{dir}/data/{n}.json.gz");
            lines.push_str(&format!("{{\"itemCount\":{count},\"md5Checksum\":\"x\",\"etag\":\"y\",\"dataFileS3Key\":\"{key}\"}}\n"));
            objects.insert(key, b"data".to_vec());
        }
        objects.insert(format!("{dir}/manifest-files.json"), lines.into_bytes());
        Store(objects)
    }

    fn location(items: Option<u64>) -> ExportLocation {
        ExportLocation {
            export: EXPORT.into(),
            bucket: "b".into(),
            manifest: Some("p/t/AWSDynamoDB/01/manifest-summary.json".into()),
            items,
        }
    }

    fn unproven(proof: ArchiveProof) -> String {
        match proof {
            ArchiveProof::Unproven { reason, .. } => reason,
            proven => panic!("expected unproven, got {proven:?}"),
        }
    }

    #[tokio::test]
    async fn a_complete_export_is_proven() {
        let proof = prove(&layout(&[3, 0, 4]), &location(Some(7))).await;
        assert!(
            matches!(
                proof,
                ArchiveProof::Proven {
                    items: 7,
                    files: 3,
                    ..
                }
            ),
            "{proof:?}"
        );
    }

    #[tokio::test]
    async fn archives_under_a_prefix_are_found_with_their_proofs() {
        let found = archives_under(&layout(&[2, 5]), "b", "p/t/").await.unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0.export, EXPORT);
        assert!(
            matches!(found[0].1, ArchiveProof::Proven { items: 7, .. }),
            "{found:?}"
        );
        assert!(archives_under(&layout(&[1]), "b", "other/")
            .await
            .unwrap()
            .is_empty());
    }

    #[tokio::test]
    async fn a_missing_data_file_is_named() {
        let mut store = layout(&[3, 4]);
        store.0.remove("p/t/AWSDynamoDB/01/data/1.json.gz");
        let reason = unproven(prove(&store, &location(Some(7))).await);
        assert!(
            reason.contains("1 of the 2 data file(s)") && reason.contains("data/1.json.gz"),
            "{reason}"
        );
    }

    #[tokio::test]
    async fn counts_that_disagree_are_said() {
        let reason = unproven(prove(&layout(&[3, 4]), &location(Some(8))).await);
        assert!(reason.contains("DescribeExport counts 8"), "{reason}");
        let mut store = layout(&[3, 4]);
        store.0.insert(
            "p/t/AWSDynamoDB/01/manifest-files.json".into(),
            b"{\"itemCount\":3,\"dataFileS3Key\":\"p/t/AWSDynamoDB/01/data/0.json.gz\"}\n".to_vec(),
        );
        let reason = unproven(prove(&store, &location(None)).await);
        assert!(
            reason.contains("list 3 item(s) but the manifest says 7"),
            "{reason}"
        );
    }

    #[tokio::test]
    async fn a_missing_or_foreign_manifest_is_said() {
        let reason_of = |mut loc: ExportLocation| async move {
            loc.manifest = loc.manifest.map(|m| m.replace("summary", "other"));
            unproven(prove(&layout(&[1]), &loc).await)
        };
        assert!(reason_of(location(None)).await.contains("is missing"));
        let mut loc = location(None);
        loc.manifest = None;
        assert!(unproven(prove(&layout(&[1]), &loc).await).contains("names no manifest"));
        let mut loc = location(None);
        loc.export = "arn:other".into();
        assert!(unproven(prove(&layout(&[1]), &loc).await).contains("not of arn:other"));
    }
}
