//! Archives in S3 through the signed calls: the store an export's proof and `restore`'s search
//! read ([`crate::table::archive`]).

use futures::stream::{self, StreamExt};

use crate::aws::signed::{SignedClient, SignedError};
use crate::table::archive::ArchiveStore;

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

    async fn list(&self, bucket: &str, prefix: &str) -> Result<Vec<String>, String> {
        self.0.s3_list(bucket, prefix).await.map_err(said)
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
