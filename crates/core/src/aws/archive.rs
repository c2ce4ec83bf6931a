//! Archives in S3 through the signed calls: the store an export's proof reads
//! ([`crate::table::archive::prove`]), and the exports `restore` finds under the archive prefix.

use futures::stream::{self, StreamExt};

use crate::aws::signed::{SignedClient, SignedError};
use crate::table::archive::{parse_summary, prove, ArchiveProof, ArchiveStore, ExportLocation};

/// How many HeadObject calls one proof keeps in flight: S3 serves thousands a second per
/// prefix, and an export of a large table lists thousands of data files.
const HEADS_IN_FLIGHT: usize = 16;

/// S3 as an [`ArchiveStore`].
pub struct S3Store<'a>(pub &'a SignedClient);

fn said(error: SignedError) -> String {
    if error.is_access_denied() {
        format!("{error} (the role needs s3:GetObject on the archive prefix)")
    } else {
        error.to_string()
    }
}

impl ArchiveStore for S3Store<'_> {
    async fn get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, String> {
        self.0.s3_get(bucket, key).await.map_err(said)
    }

    async fn missing(&self, bucket: &str, keys: &[String]) -> Result<Vec<String>, String> {
        let client = self.0;
        let found: Vec<Result<(String, bool), SignedError>> = stream::iter(keys.to_vec())
            .map(|key: String| async move {
                let there = client.s3_exists(bucket, &key).await?;
                Ok((key, there))
            })
            .buffered(HEADS_IN_FLIGHT)
            .collect()
            .await;
        let mut missing = Vec::new();
        for result in found {
            let (key, there) = result.map_err(said)?;
            if !there {
                missing.push(key);
            }
        }
        Ok(missing)
    }
}

/// Every export under `prefix` in `bucket` (each `manifest-summary.json` S3 lists), oldest
/// first as their keys sort (AWS's export ids start with the export's time), each with what S3
/// proves of it. Its own summary says which export it is; there is no DescribeExport to ask
/// once the table is gone.
pub async fn archives_under(
    signed: &SignedClient,
    bucket: &str,
    prefix: &str,
) -> Result<Vec<(ExportLocation, ArchiveProof)>, SignedError> {
    let store = S3Store(signed);
    let mut manifests: Vec<String> = signed
        .s3_list(bucket, prefix)
        .await?
        .into_iter()
        .filter(|key| key.ends_with("/manifest-summary.json"))
        .collect();
    manifests.sort();
    let mut found = Vec::new();
    for manifest in manifests {
        let export = match signed.s3_get(bucket, &manifest).await? {
            Some(bytes) => parse_summary(&bytes).map(|s| s.export_arn).unwrap_or_default(),
            None => continue,
        };
        let location = ExportLocation {
            export,
            bucket: bucket.to_string(),
            manifest: Some(manifest),
            items: None,
        };
        let proof = prove(&store, &location).await;
        found.push((location, proof));
    }
    Ok(found)
}
