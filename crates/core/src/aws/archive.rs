//! Archives in S3 through the signed calls: the store an export's proof and `restore`'s search
//! read ([`crate::table::archive`]).

use crate::aws::signed::{SignedClient, SignedError};
use crate::table::archive::{ArchiveStore, ObjectHead};

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

    async fn head(&self, bucket: &str, key: &str) -> Result<Option<ObjectHead>, String> {
        self.0.s3_head(bucket, key).await.map_err(said)
    }
}
