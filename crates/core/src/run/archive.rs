//! Proving an archive: checking an export's manifest and data files in S3 before retention
//! deletes the table and before `restore` imports it (the layout and the proof are
//! [`crate::table::archive`]'s). The S3 reads go through [`ArchiveStore`]: the SDK's adapter
//! (`ddb_rollover_aws::archive`, in crates/aws) or a fake's in-memory S3.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use futures::stream::{self, StreamExt};

use crate::run::control::{ControlPlaneError, ErrorKind};
use crate::table::archive::{
    data_prefix, expiring, parse_files, parse_summary, table_name_of, ArchiveProof, ExportLocation,
    ManifestFile, ManifestSummary, ObjectBody, ObjectHead, READABLE_STORAGE_CLASSES,
};
use crate::table::evidence::{ArchiveRecord, ArchivedFile};

/// How many HeadObject calls one proof keeps in flight: S3 serves thousands a second per
/// prefix, and an export of a large table lists thousands of data files.
pub(crate) const HEADS_IN_FLIGHT: usize = 16;

/// How many bad data files a reason names.
const SHOWN: usize = 3;

/// A bucket as the proof reads it: its name, and the account every read expects to own it.
/// S3 refuses a read whose `ExpectedBucketOwner` is not the bucket's owner (403), so a bucket
/// name that passed to another account answers nothing that could prove an archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket<'a> {
    /// The bucket's name.
    pub name: &'a str,
    /// The 12-digit account that must own it.
    pub owner: &'a str,
}

impl std::fmt::Display for Bucket<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// What S3's 403 on a read of `key` in `bucket` means, said alike by every store: the bucket
/// is not owned by the account the read expects, or the caller lacks `grant` (S3 answers both
/// with AccessDenied).
pub fn access_denied(bucket: Bucket<'_>, key: &str, grant: &str) -> String {
    format!(
        "s3://{bucket}/{key}: access denied: either the bucket is not owned by account {} (every read expects it, ExpectedBucketOwner: a bucket name another account holds proves nothing), or the role needs {grant}",
        bucket.owner
    )
}

/// The S3 reads a proof needs, on AWS's S3 or a fake's; each expects `bucket.owner` to own the
/// bucket.
pub trait ArchiveStore {
    /// The object's bytes and expiration; `Ok(None)` when there is no such key.
    fn get(
        &self,
        bucket: Bucket<'_>,
        key: &str,
    ) -> impl std::future::Future<Output = Result<Option<ObjectBody>, String>> + Send;
    /// The keys under `prefix` in the bucket (every page); none for a missing bucket.
    fn list(
        &self,
        bucket: Bucket<'_>,
        prefix: &str,
    ) -> impl std::future::Future<Output = Result<Vec<String>, String>> + Send;
    /// `Ok(None)` when there is no such key (404; a 403 is an error, not an absence).
    fn head(
        &self,
        bucket: Bucket<'_>,
        key: &str,
    ) -> impl std::future::Future<Output = Result<Option<ObjectHead>, String>> + Send;
}

/// Whether the summary is this table's export: its `tableArn` names the table, and its
/// `exportArn` is an export of that ARN (`{tableArn}/export/{id}`).
fn table_mismatch(summary: &ManifestSummary, table: &str) -> Option<String> {
    let Some(table_arn) = summary.table_arn.as_deref() else {
        return Some("the manifest names no table (tableArn)".into());
    };
    if table_name_of(table_arn) != Some(table) {
        return Some(format!("the manifest is of table {table_arn}, not of {table}"));
    }
    let of_table = summary
        .export_arn
        .strip_prefix(table_arn)
        .is_some_and(|rest| rest.starts_with("/export/"));
    (!of_table).then(|| {
        format!(
            "the manifest's export {} is not an export of its table {table_arn}",
            summary.export_arn
        )
    })
}

/// What is wrong with one listed data file, given what HeadObject said of it.
fn file_problem(bucket: &str, file: &ManifestFile, head: Option<&ObjectHead>) -> Option<String> {
    let key = &file.data_file_s3_key;
    let Some(head) = head else {
        return Some(format!("s3://{bucket}/{key} is missing"));
    };
    let Some(listed) = file.etag.as_deref().map(|e| e.trim_matches('"')) else {
        return Some(format!("the manifest gives no etag for s3://{bucket}/{key}"));
    };
    let etag = head.etag.trim_matches('"');
    if etag != listed {
        return Some(format!(
            "s3://{bucket}/{key} has ETag {etag}, the manifest says {listed} (changed since the export)"
        ));
    }
    // A single-part upload's ETag is the object's MD5 in hex; a multipart one's (`{hex}-{parts}`)
    // is not, and only the ETag can be compared.
    if let Some(md5) = md5_of_etag(etag) {
        let encoded = BASE64.encode(md5);
        if file.md5_checksum.as_deref() != Some(encoded.as_str()) {
            return Some(format!(
                "the manifest's md5Checksum of s3://{bucket}/{key} is {}, its ETag's MD5 is {encoded}",
                file.md5_checksum.as_deref().unwrap_or("absent")
            ));
        }
    }
    let class = head.storage_class.as_deref().unwrap_or("STANDARD");
    if !READABLE_STORAGE_CLASSES.contains(&class) {
        return Some(format!(
            "s3://{bucket}/{key} is in storage class {class}, which ImportTable cannot read without a restore first (readable: {})",
            READABLE_STORAGE_CLASSES.join(", ")
        ));
    }
    head.expiration.as_deref().map(|e| expiring(bucket, key, e))
}

/// The 16 bytes a single-part ETag (32 hex digits) spells; `None` for any other ETag.
fn md5_of_etag(etag: &str) -> Option<Vec<u8>> {
    if etag.len() != 32 || !etag.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..16)
        .map(|i| u8::from_str_radix(&etag[2 * i..2 * i + 2], 16).ok())
        .collect()
}

/// "{how many} {what}: " and the first [`SHOWN`] problems, then how many more; `None` when
/// there are none.
fn counted(problems: &[String], what: &str) -> Option<String> {
    if problems.is_empty() {
        return None;
    }
    let mut shown: Vec<String> = problems.iter().take(SHOWN).cloned().collect();
    if problems.len() > SHOWN {
        shown.push(format!("and {} more", problems.len() - SHOWN));
    }
    Some(format!("{} {what}: {}", problems.len(), shown.join("; ")))
}

/// An archive read S3 failed: anything but an absence (a refusal, a throttle, a network
/// error). It is no evidence either way, so no proof is made on it and the run fails on it,
/// naming the read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveReadFailed {
    /// The S3 call (`GetObject`, `ListObjectsV2`, `HeadObject`).
    pub operation: &'static str,
    /// What failed, with the grant to add when S3 refused.
    pub message: String,
}

impl ArchiveReadFailed {
    /// The failure as the control plane's error about `table`: what the run reports.
    pub fn on(self, table: &str) -> ControlPlaneError {
        ControlPlaneError {
            kind: ErrorKind::Other,
            operation: self.operation,
            table: table.to_string(),
            message: self.message,
        }
    }
}

/// Why a proof stops: what S3 holds does not prove the archive, or a read failed.
enum Stop {
    Unproven(String),
    Failed(ArchiveReadFailed),
}

impl Stop {
    fn failed(operation: &'static str, message: String) -> Stop {
        Stop::Failed(ArchiveReadFailed { operation, message })
    }

    /// Said as a reason: `restore` refuses on either, naming it.
    fn reason(self) -> String {
        match self {
            Stop::Unproven(reason) => reason,
            Stop::Failed(failed) => format!("{} failed: {}", failed.operation, failed.message),
        }
    }
}

/// The object at `key`, parsed; otherwise why it cannot be used (`what` names it when missing;
/// an object S3 will expire cannot hold an archive either).
async fn read_parsed<S: ArchiveStore + Sync, T>(
    store: &S,
    bucket: Bucket<'_>,
    key: &str,
    what: &str,
    parse: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<T, Stop> {
    match store.get(bucket, key).await {
        Ok(Some(ObjectBody {
            expiration: Some(expiration),
            ..
        })) => Err(Stop::Unproven(expiring(bucket.name, key, &expiration))),
        Ok(Some(object)) => parse(&object.bytes)
            .map_err(|e| Stop::Unproven(format!("s3://{bucket}/{key} is unreadable: {e}"))),
        Ok(None) => Err(Stop::Unproven(format!(
            "the {what} s3://{bucket}/{key} is missing"
        ))),
        Err(e) => Err(Stop::failed(
            "GetObject",
            format!("s3://{bucket}/{key} could not be read: {e}"),
        )),
    }
}

/// Checks an export's manifest and files in `store`. What S3 holds that does not add up is a
/// reason the archive is unproven (the table is kept); a read S3 failed is an error, which
/// keeps the table too and fails the run: no evidence was read.
pub async fn prove<S: ArchiveStore + Sync>(
    store: &S,
    location: &ExportLocation,
) -> Result<ArchiveProof, ArchiveReadFailed> {
    match proof(store, location).await {
        Ok(proof) => Ok(proof),
        Err(Stop::Unproven(reason)) => Ok(ArchiveProof::Unproven {
            export: location.export.clone(),
            reason,
        }),
        Err(Stop::Failed(failed)) => Err(failed),
    }
}

async fn proof<S: ArchiveStore + Sync>(store: &S, location: &ExportLocation) -> Result<ArchiveProof, Stop> {
    let unproven = |reason: String| Err(Stop::Unproven(reason));
    let bucket = Bucket {
        name: &location.bucket,
        owner: &location.bucket_owner,
    };
    let Some(manifest) = &location.manifest else {
        return unproven("DescribeExport names no manifest (ExportManifest)".into());
    };
    let summary = read_parsed(store, bucket, manifest, "manifest", parse_summary).await?;
    if summary.export_arn != location.export {
        return unproven(format!(
            "s3://{bucket}/{manifest} is the manifest of export {}, not of {}",
            summary.export_arn, location.export
        ));
    }
    if let Some(mismatch) = table_mismatch(&summary, &location.table) {
        return unproven(format!("s3://{bucket}/{manifest}: {mismatch}"));
    }
    if let Some(format) = summary.output_format.as_deref().filter(|f| *f != "DYNAMODB_JSON") {
        return unproven(format!(
            "the export's format is {format}; restore imports DYNAMODB_JSON"
        ));
    }
    let files_key = &summary.manifest_files_s3_key;
    let files = read_parsed(store, bucket, files_key, "file list", parse_files).await?;
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

    // What restore imports is everything under the export's own data/ folder: the listed files
    // must be there, and nothing else.
    let data = data_prefix(manifest);
    let outside: Vec<String> = files
        .iter()
        .filter(|f| !f.data_file_s3_key.starts_with(&data))
        .map(|f| format!("s3://{bucket}/{}", f.data_file_s3_key))
        .collect();
    let outside_data = format!(
        "of the {} data file(s) the manifest lists are outside the export's s3://{bucket}/{data} (what restore imports)",
        files.len()
    );
    if let Some(reason) = counted(&outside, &outside_data) {
        return unproven(reason);
    }
    let present = store.list(bucket, &data).await.map_err(|e| {
        Stop::failed(
            "ListObjectsV2",
            format!("s3://{bucket}/{data} could not be listed: {e}"),
        )
    })?;
    let unlisted: Vec<String> = present
        .iter()
        .filter(|key| !files.iter().any(|f| &f.data_file_s3_key == *key))
        .map(|key| format!("s3://{bucket}/{key}"))
        .collect();
    let not_listed = format!(
        "object(s) under s3://{bucket}/{data} are not in the manifest, and restore would import them too"
    );
    if let Some(reason) = counted(&unlisted, &not_listed) {
        return unproven(reason);
    }

    let keys: Vec<String> = files.iter().map(|f| f.data_file_s3_key.clone()).collect();
    let heads: Vec<Result<Option<ObjectHead>, String>> = stream::iter(keys)
        .map(|key: String| async move { store.head(bucket, &key).await })
        .buffered(HEADS_IN_FLIGHT)
        .collect()
        .await;
    let mut problems = Vec::new();
    let mut proven = Vec::with_capacity(files.len());
    for (file, head) in files.iter().zip(heads) {
        match head {
            Ok(head) => {
                problems.extend(file_problem(bucket.name, file, head.as_ref()));
                if let Some(head) = head {
                    proven.push(ArchivedFile {
                        key: file.data_file_s3_key.clone(),
                        etag: head.etag.trim_matches('"').to_string(),
                        size: head.size,
                        md5: file.md5_checksum.clone().unwrap_or_default(),
                        items: file.item_count,
                    });
                }
            }
            Err(e) => {
                return Err(Stop::failed(
                    "HeadObject",
                    format!("the data files could not be checked: {e}"),
                ))
            }
        }
    }
    let not_as_listed = format!(
        "of the {} data file(s) the manifest lists are not as it lists them",
        files.len()
    );
    if let Some(reason) = counted(&problems, &not_as_listed) {
        return unproven(reason);
    }
    Ok(ArchiveProof::Proven {
        export: location.export.clone(),
        bucket: location.bucket.clone(),
        manifest: manifest.clone(),
        table_arn: summary.table_arn.clone().unwrap_or_default(),
        items: summary.item_count,
        files: proven,
    })
}

/// The archive a deletion's receipt recorded, checked again in `store` exactly as recorded,
/// every read expecting `owner` to own the bucket: the manifest still names that export of that
/// table (the Region and account in its ARN included), and the export's `data/` holds exactly
/// the recorded files, each with the recorded ETag and size, readable and not due to expire.
/// Nothing written in S3 since (an edited summary, a rewritten file list, a forged data file,
/// another Region's export under the same prefix) changes what is restored: anything that
/// differs is named and the archive is not proven.
pub async fn recheck<S: ArchiveStore + Sync>(store: &S, record: &ArchiveRecord, owner: &str) -> ArchiveProof {
    let unproven = |reason: String| ArchiveProof::Unproven {
        export: record.export_arn.clone(),
        reason,
    };
    let bucket = Bucket {
        name: &record.bucket,
        owner,
    };
    let manifest = &record.manifest;
    let summary = match read_parsed(store, bucket, manifest, "manifest", parse_summary).await {
        Ok(summary) => summary,
        Err(stop) => return unproven(stop.reason()),
    };
    if summary.export_arn != record.export_arn
        || summary.table_arn.as_deref() != Some(record.table_arn.as_str())
    {
        return unproven(format!(
            "s3://{bucket}/{manifest} now names export {} of table {}, the receipt's is {} of {}",
            summary.export_arn,
            summary.table_arn.as_deref().unwrap_or("(none)"),
            record.export_arn,
            record.table_arn
        ));
    }
    let data = data_prefix(manifest);
    let present = match store.list(bucket, &data).await {
        Ok(keys) => keys,
        Err(e) => return unproven(format!("s3://{bucket}/{data} could not be listed: {e}")),
    };
    let unrecorded: Vec<String> = present
        .iter()
        .filter(|key| !record.files.iter().any(|f| &f.key == *key))
        .map(|key| format!("s3://{bucket}/{key}"))
        .collect();
    let not_recorded = format!(
        "object(s) under s3://{bucket}/{data} are not the receipt's, and restore would import them too"
    );
    if let Some(reason) = counted(&unrecorded, &not_recorded) {
        return unproven(reason);
    }
    let keys: Vec<String> = record.files.iter().map(|f| f.key.clone()).collect();
    let heads: Vec<Result<Option<ObjectHead>, String>> = stream::iter(keys)
        .map(|key: String| async move { store.head(bucket, &key).await })
        .buffered(HEADS_IN_FLIGHT)
        .collect()
        .await;
    let mut problems = Vec::new();
    for (file, head) in record.files.iter().zip(heads) {
        let key = &file.key;
        match head {
            Ok(None) => problems.push(format!("s3://{bucket}/{key} is missing")),
            Ok(Some(head)) => {
                let etag = head.etag.trim_matches('"');
                if etag != file.etag || head.size != file.size {
                    problems.push(format!(
                        "s3://{bucket}/{key} has ETag {etag} and {} bytes, the receipt recorded {} and {} bytes (changed since the deletion)",
                        head.size, file.etag, file.size
                    ));
                }
                let class = head.storage_class.as_deref().unwrap_or("STANDARD");
                if !READABLE_STORAGE_CLASSES.contains(&class) {
                    problems.push(format!(
                        "s3://{bucket}/{key} is in storage class {class}, which ImportTable cannot read without a restore first"
                    ));
                }
                problems.extend(head.expiration.as_deref().map(|e| expiring(bucket.name, key, e)));
            }
            Err(e) => return unproven(format!("the data files could not be checked: {e}")),
        }
    }
    let not_as_recorded = format!(
        "of the {} data file(s) the receipt recorded are not as it recorded them",
        record.files.len()
    );
    if let Some(reason) = counted(&problems, &not_as_recorded) {
        return unproven(reason);
    }
    ArchiveProof::Proven {
        export: record.export_arn.clone(),
        bucket: record.bucket.clone(),
        manifest: manifest.clone(),
        table_arn: record.table_arn.clone(),
        items: record.items,
        files: record.files.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Objects by key: bytes, ETag, storage class; the `x-amz-expiration` of some keys; the
    /// bucket's owner.
    struct Store(
        BTreeMap<String, (Vec<u8>, String, Option<String>)>,
        BTreeMap<String, String>,
        &'static str,
    );

    impl Store {
        fn new() -> Store {
            Store(BTreeMap::new(), BTreeMap::new(), OWNER)
        }

        /// S3's 403 for a read expecting another owner than the bucket's.
        fn owned_by(&self, bucket: Bucket<'_>, key: &str) -> Result<(), String> {
            if bucket.owner == self.2 {
                return Ok(());
            }
            Err(format!(
                "HTTP 403 AccessDenied ({})",
                access_denied(bucket, key, "s3:GetObject")
            ))
        }
    }

    impl ArchiveStore for Store {
        async fn get(&self, bucket: Bucket<'_>, key: &str) -> Result<Option<ObjectBody>, String> {
            self.owned_by(bucket, key)?;
            Ok(self.0.get(key).map(|(bytes, ..)| ObjectBody {
                bytes: bytes.clone(),
                expiration: self.1.get(key).cloned(),
            }))
        }
        async fn list(&self, bucket: Bucket<'_>, prefix: &str) -> Result<Vec<String>, String> {
            self.owned_by(bucket, prefix)?;
            Ok(self.0.keys().filter(|k| k.starts_with(prefix)).cloned().collect())
        }
        async fn head(&self, bucket: Bucket<'_>, key: &str) -> Result<Option<ObjectHead>, String> {
            self.owned_by(bucket, key)?;
            Ok(self.0.get(key).map(|(bytes, etag, class)| ObjectHead {
                etag: etag.clone(),
                size: bytes.len() as u64,
                storage_class: class.clone(),
                expiration: self.1.get(key).cloned(),
            }))
        }
    }

    impl Store {
        fn put(&mut self, key: &str, bytes: &[u8]) {
            self.0.insert(
                key.into(),
                (bytes.to_vec(), format!("{:032x}", bytes.len() + 7), None),
            );
        }
        fn set(&mut self, key: &str, f: impl FnOnce(&mut (Vec<u8>, String, Option<String>))) {
            f(self.0.get_mut(key).expect("the key is there"));
        }
    }

    const TABLE: &str = "t";
    const OWNER: &str = "111122223333";
    const TABLE_ARN: &str = "arn:aws:dynamodb:us-east-1:1:table/t";
    const EXPORT: &str = "arn:aws:dynamodb:us-east-1:1:table/t/export/01";
    const DIR: &str = "p/t/AWSDynamoDB/01";

    fn summary(export: &str, table_arn: &str, total: u64) -> Vec<u8> {
        serde_json::json!({
            "version": "2020-06-30", "exportArn": export, "tableArn": table_arn, "itemCount": total,
            "manifestFilesS3Key": format!("{DIR}/manifest-files.json"), "outputFormat": "DYNAMODB_JSON"
        })
        .to_string()
        .into_bytes()
    }

    /// The manifest line of a data file, as the export writes it for the object in `store`.
    fn line(store: &Store, key: &str, items: u64) -> String {
        let etag = &store.0[key].1;
        let md5 = md5_of_etag(etag).unwrap();
        format!(
            "{}\n",
            serde_json::json!({"itemCount": items, "md5Checksum": BASE64.encode(md5), "etag": etag, "dataFileS3Key": key})
        )
    }

    fn layout(items: &[u64]) -> Store {
        let total: u64 = items.iter().sum();
        let mut store = Store::new();
        store.put(
            &format!("{DIR}/manifest-summary.json"),
            &summary(EXPORT, TABLE_ARN, total),
        );
        let mut lines = String::new();
        for (n, count) in items.iter().enumerate() {
            let key = format!("{DIR}/data/{n}.json.gz");
            store.put(&key, &vec![b'd'; n + 1]);
            lines.push_str(&line(&store, &key, *count));
        }
        store.put(&format!("{DIR}/manifest-files.json"), lines.as_bytes());
        store
    }

    fn location(items: Option<u64>) -> ExportLocation {
        ExportLocation {
            export: EXPORT.into(),
            table: TABLE.into(),
            bucket: "b".into(),
            manifest: Some(format!("{DIR}/manifest-summary.json")),
            items,
            bucket_owner: OWNER.into(),
        }
    }

    /// Asserts that an unproven archive's reason says each of `parts`.
    fn assert_says(reason: &str, parts: &[&str]) {
        for part in parts {
            assert!(reason.contains(part), "{part:?} is not in: {reason}");
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
        let proof = prove(&layout(&[3, 0, 4]), &location(Some(7)))
            .await
            .expect("S3 answers");
        assert!(
            matches!(
                proof,
                ArchiveProof::Proven {
                    items: 7,
                    ref files,
                    ..
                } if files.len() == 3
            ),
            "{proof:?}"
        );
    }

    /// What a deletion's receipt recorded is what restore checks again: unchanged, proven; a
    /// data file forged with a file list rewritten to match (which the export's own proof takes),
    /// an object added, a summary rewritten to another Region's export, a bucket of another
    /// owner: not proven, named.
    #[tokio::test]
    async fn a_receipts_archive_is_proven_again_only_as_recorded() {
        let store = layout(&[2, 5]);
        let proof = prove(&store, &location(Some(7))).await.expect("S3 answers");
        let when = chrono::DateTime::parse_from_rfc3339("2018-10-05T10:00:00Z")
            .unwrap()
            .to_utc();
        let record = proof.record(when).expect("proven");
        assert_eq!((record.files.len(), record.items), (2, 7));
        assert!(recheck(&store, &record, OWNER).await.is_proven());

        // A forged data file, and the file list rewritten to match it.
        let mut forged = layout(&[2, 5]);
        let key = format!("{DIR}/data/1.json.gz");
        forged.put(&key, b"forged items");
        let lines = format!(
            "{}{}",
            line(&forged, &format!("{DIR}/data/0.json.gz"), 2),
            line(&forged, &key, 5)
        );
        forged.put(&format!("{DIR}/manifest-files.json"), lines.as_bytes());
        assert!(
            prove(&forged, &location(Some(7)))
                .await
                .expect("S3 answers")
                .is_proven(),
            "the export's own proof takes it"
        );
        let reason = unproven(recheck(&forged, &record, OWNER).await);
        assert_says(
            &reason,
            &[
                "data/1.json.gz has ETag",
                "the receipt recorded",
                "changed since the deletion",
            ],
        );

        // Another object under data/.
        let mut extra = layout(&[2, 5]);
        extra.put(&format!("{DIR}/data/extra.json.gz"), b"more");
        assert_says(
            &unproven(recheck(&extra, &record, OWNER).await),
            &["not the receipt's", "extra.json.gz"],
        );

        // Another Region's export of a table of the same name under the same prefix.
        let elsewhere = "arn:aws:dynamodb:eu-west-1:1:table/t";
        let mut region = layout(&[2, 5]);
        region.put(
            &format!("{DIR}/manifest-summary.json"),
            &summary(&format!("{elsewhere}/export/01"), elsewhere, 7),
        );
        assert_says(
            &unproven(recheck(&region, &record, OWNER).await),
            &["now names export", elsewhere],
        );

        // The bucket of another owner now.
        let mut taken = layout(&[2, 5]);
        taken.2 = "444455556666";
        assert!(!recheck(&taken, &record, OWNER).await.is_proven());
    }

    #[tokio::test]
    async fn a_missing_data_file_is_named() {
        let mut store = layout(&[3, 4]);
        store.0.remove(&format!("{DIR}/data/1.json.gz"));
        let reason = unproven(prove(&store, &location(Some(7))).await.expect("S3 answers"));
        assert_says(&reason, &["1 of the 2 data file(s)", "data/1.json.gz is missing"]);
    }

    #[tokio::test]
    async fn a_data_file_overwritten_after_the_export_is_named() {
        let mut store = layout(&[3, 4]);
        let key = format!("{DIR}/data/1.json.gz");
        store.put(&key, b"");
        let reason = unproven(prove(&store, &location(Some(7))).await.expect("S3 answers"));
        assert_says(&reason, &["data/1.json.gz has ETag", "changed since the export"]);
    }

    #[tokio::test]
    async fn an_md5_checksum_that_is_not_the_etags_md5_is_said() {
        let mut store = layout(&[3]);
        let key = format!("{DIR}/data/0.json.gz");
        let forged = line(&store, &key, 3).replace("\"md5Checksum\":\"", "\"md5Checksum\":\"A");
        store.put(&format!("{DIR}/manifest-files.json"), forged.as_bytes());
        let reason = unproven(prove(&store, &location(Some(3))).await.expect("S3 answers"));
        assert!(reason.contains("md5Checksum"), "{reason}");
        // A multipart ETag carries no MD5: only the ETag is compared.
        store.set(&key, |(_, etag, _)| *etag = "0123-2".into());
        let multipart =
            serde_json::json!({"itemCount": 3, "etag": "0123-2", "dataFileS3Key": key}).to_string();
        store.put(&format!("{DIR}/manifest-files.json"), multipart.as_bytes());
        assert!(prove(&store, &location(Some(3)))
            .await
            .expect("S3 answers")
            .is_proven());
    }

    #[tokio::test]
    async fn an_archived_storage_class_is_not_readable() {
        for (class, readable) in [
            ("GLACIER", false),
            ("DEEP_ARCHIVE", false),
            ("INTELLIGENT_TIERING", false),
            ("SOMETHING_NEW", false),
            ("STANDARD_IA", true),
            ("GLACIER_IR", true),
        ] {
            let mut store = layout(&[3, 4]);
            store.set(&format!("{DIR}/data/0.json.gz"), |(_, _, c)| {
                *c = Some(class.into())
            });
            let proof = prove(&store, &location(Some(7))).await.expect("S3 answers");
            assert_eq!(proof.is_proven(), readable, "{class}: {proof:?}");
            if !readable {
                assert!(unproven(proof).contains(&format!("storage class {class}")));
            }
        }
    }

    #[tokio::test]
    async fn a_file_list_pointing_outside_the_exports_data_is_not_proven() {
        let mut store = layout(&[3]);
        let elsewhere = "p/t/AWSDynamoDB/02/data/0.json.gz";
        store.put(elsewhere, b"ddd");
        let lines = line(&store, elsewhere, 3);
        store.put(&format!("{DIR}/manifest-files.json"), lines.as_bytes());
        store.0.remove(&format!("{DIR}/data/0.json.gz"));
        let reason = unproven(prove(&store, &location(Some(3))).await.expect("S3 answers"));
        assert_says(
            &reason,
            &["outside the export's s3://b/p/t/AWSDynamoDB/01/data/", elsewhere],
        );
    }

    #[tokio::test]
    async fn an_object_in_data_the_manifest_does_not_list_is_not_proven() {
        let mut store = layout(&[3]);
        store.put(&format!("{DIR}/data/extra.json.gz"), b"more");
        let reason = unproven(prove(&store, &location(Some(3))).await.expect("S3 answers"));
        assert_says(&reason, &["not in the manifest", "data/extra.json.gz"]);
    }

    #[tokio::test]
    async fn another_tables_export_is_not_proven() {
        let other = "arn:aws:dynamodb:us-east-1:1:table/u";
        let manifest = format!("{DIR}/manifest-summary.json");
        let mut store = layout(&[3]);
        store.put(&manifest, &summary(&format!("{other}/export/01"), other, 3));
        let of = |export: &str| ExportLocation {
            export: export.to_string(),
            ..location(None)
        };
        let reason = unproven(
            prove(&store, &of(&format!("{other}/export/01")))
                .await
                .expect("S3 answers"),
        );
        assert_says(
            &reason,
            &["is of table arn:aws:dynamodb:us-east-1:1:table/u, not of t"],
        );
        // The summary's table this one, its export another table's.
        store.put(&manifest, &summary(&format!("{other}/export/01"), TABLE_ARN, 3));
        let reason = unproven(
            prove(&store, &of(&format!("{other}/export/01")))
                .await
                .expect("S3 answers"),
        );
        assert!(reason.contains("is not an export of its table"), "{reason}");
        // No tableArn at all.
        let mut bare: serde_json::Value = serde_json::from_slice(&summary(EXPORT, TABLE_ARN, 3)).unwrap();
        bare.as_object_mut().unwrap().remove("tableArn");
        store.put(&manifest, bare.to_string().as_bytes());
        assert!(
            unproven(prove(&store, &location(None)).await.expect("S3 answers")).contains("names no table")
        );
    }

    /// Issue 37, finding 4: an object a lifecycle rule will delete (S3's `x-amz-expiration`
    /// on its GetObject or HeadObject) holds no archive, be it a manifest or a data file.
    #[tokio::test]
    async fn an_object_s3_will_expire_is_not_proven() {
        let header = "expiry-date=\"Fri, 02 Nov 2018 00:00:00 GMT\", rule-id=\"tidy%20up\"";
        for key in [
            format!("{DIR}/data/1.json.gz"),
            format!("{DIR}/manifest-summary.json"),
            format!("{DIR}/manifest-files.json"),
        ] {
            let mut store = layout(&[3, 4]);
            store.1.insert(key.clone(), header.into());
            let reason = unproven(prove(&store, &location(Some(7))).await.expect("S3 answers"));
            assert_says(
                &reason,
                &[
                    &format!("s3://b/{key} expires on Fri, 02 Nov 2018 00:00:00 GMT"),
                    "rule \"tidy up\"",
                ],
            );
        }
    }

    /// Issue 37, finding 9: every read expects the account the bucket must belong to; S3's 403
    /// for a bucket of another owner is a failed read naming that account, never a proof
    /// (issue 38: a failed read fails the run).
    #[tokio::test]
    async fn a_bucket_of_another_owner_proves_nothing() {
        let mut store = layout(&[3, 4]);
        store.2 = "444455556666";
        let failed = prove(&store, &location(Some(7))).await.unwrap_err();
        assert_eq!(failed.operation, "GetObject");
        assert_says(&failed.message, &["403", "not owned by account 111122223333"]);
    }

    #[tokio::test]
    async fn counts_that_disagree_are_said() {
        let reason = unproven(
            prove(&layout(&[3, 4]), &location(Some(8)))
                .await
                .expect("S3 answers"),
        );
        assert!(reason.contains("DescribeExport counts 8"), "{reason}");
        let mut store = layout(&[3, 4]);
        let first = line(&store, &format!("{DIR}/data/0.json.gz"), 3);
        store.put(&format!("{DIR}/manifest-files.json"), first.as_bytes());
        let reason = unproven(prove(&store, &location(None)).await.expect("S3 answers"));
        assert_says(&reason, &["list 3 item(s) but the manifest says 7"]);
    }

    #[tokio::test]
    async fn a_missing_or_foreign_manifest_is_said() {
        let reason_of = |mut loc: ExportLocation| async move {
            loc.manifest = loc.manifest.map(|m| m.replace("summary", "other"));
            unproven(prove(&layout(&[1]), &loc).await.expect("S3 answers"))
        };
        assert!(reason_of(location(None)).await.contains("is missing"));
        let mut loc = location(None);
        loc.manifest = None;
        assert!(unproven(prove(&layout(&[1]), &loc).await.expect("S3 answers")).contains("names no manifest"));
        let mut loc = location(None);
        loc.export = "arn:other".into();
        assert!(unproven(prove(&layout(&[1]), &loc).await.expect("S3 answers")).contains("not of arn:other"));
    }
}
