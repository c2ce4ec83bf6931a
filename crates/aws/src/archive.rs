//! Archives in S3 through `aws-sdk-s3`: the store an export's proof and `restore`'s search read
//! ([`ddb_rollover::control::prove`], over [`ddb_rollover::table::ArchiveProof`]).
//!
//! An absence is told from a refusal by the status: 404 (NoSuchKey, NotFound, NoSuchBucket) is
//! "not there"; 403 is an error naming the grant that is missing. S3 answers 403, not 404, for a
//! missing key when the caller lacks `s3:ListBucket` on the bucket (S3 API Reference,
//! HeadObject and GetObject, "Permissions"), so the functions' role has it for the archive
//! prefix: without it every missing data file would read as a refusal.
//!
//! Every read sends `ExpectedBucketOwner`: S3 answers 403 when another account owns the
//! bucket, so a bucket name that passed to someone else proves nothing. GetObject and
//! HeadObject give `x-amz-expiration` when a lifecycle rule will delete the object: the proof
//! refuses it (`expiring` in crates/core/src/table/archive.rs).

use aws_config::SdkConfig;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::Client;

use crate::call_error::CallError;
use ddb_rollover::control::{access_denied, ArchiveStore, Bucket};
use ddb_rollover::table::{ObjectBody, ObjectHead};

/// The S3 client of `config`: path-style addressing on a custom endpoint (moto, LocalStack),
/// whose host names carry no bucket; virtual-hosted (the SDK's choice) on AWS.
pub fn s3_client(config: &SdkConfig) -> Client {
    let custom = config.endpoint_url().is_some()
        || std::env::var("AWS_ENDPOINT_URL_S3").is_ok_and(|url| !url.is_empty());
    let s3 = aws_sdk_s3::config::Builder::from(config)
        .force_path_style(custom)
        .build();
    Client::from_conf(s3)
}

/// S3 as an [`ArchiveStore`].
pub struct S3Store<'a>(pub &'a Client);

/// What an S3 call's failure means for the proof: `Ok` for an absence (404), else the error
/// in words; when S3 refused (403), the owner the read expected and the grant to add.
fn refusal<E>(
    error: &SdkError<E, HttpResponse>,
    operation: &'static str,
    bucket: Bucket<'_>,
    key: &str,
) -> Result<(), String>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let error = CallError::from_sdk(operation, error);
    if error.is_not_found() {
        return Ok(());
    }
    if !error.is_access_denied() {
        return Err(format!("{error} (s3://{bucket}/{key})"));
    }
    let grant = if operation == "ListObjectsV2" {
        format!("s3:ListBucket on arn:aws:s3:::{bucket} for the prefix {key:?} (condition s3:prefix)")
    } else {
        format!(
            "s3:GetObject on arn:aws:s3:::{bucket}/{key}, and s3:ListBucket on arn:aws:s3:::{bucket} \
             for its prefix: without it S3 answers 403, not 404, for a key that is not there"
        )
    };
    Err(format!("{error} ({})", access_denied(bucket, key, &grant)))
}

/// `"abc"` → `abc`: S3 quotes ETags in headers and listings.
fn unquoted(etag: &str) -> String {
    etag.trim_matches('"').to_owned()
}

impl ArchiveStore for S3Store<'_> {
    async fn get(&self, bucket: Bucket<'_>, key: &str) -> Result<Option<ObjectBody>, String> {
        let request = self
            .0
            .get_object()
            .bucket(bucket.name)
            .expected_bucket_owner(bucket.owner)
            .key(key);
        let output = match request.send().await {
            Ok(output) => output,
            Err(e) => return refusal(&e, "GetObject", bucket, key).map(|()| None),
        };
        let expiration = output.expiration().map(str::to_owned);
        let bytes = output
            .body
            .collect()
            .await
            .map_err(|e| format!("GetObject s3://{bucket}/{key}: reading the body failed: {e}"))?;
        Ok(Some(ObjectBody {
            bytes: bytes.into_bytes().to_vec(),
            expiration,
        }))
    }

    async fn list(&self, bucket: Bucket<'_>, prefix: &str) -> Result<Vec<String>, String> {
        // ListObjectsV2 gives at most 1,000 keys a page; the paginator follows the tokens.
        let mut pages = self
            .0
            .list_objects_v2()
            .bucket(bucket.name)
            .expected_bucket_owner(bucket.owner)
            .prefix(prefix)
            .into_paginator()
            .send();
        let mut keys = Vec::new();
        while let Some(page) = pages.next().await {
            match page {
                Ok(page) => keys.extend(page.contents().iter().filter_map(|o| o.key().map(str::to_owned))),
                // A missing bucket holds no archive.
                Err(e) => {
                    refusal(&e, "ListObjectsV2", bucket, prefix)?;
                    return Ok(keys);
                }
            }
        }
        Ok(keys)
    }

    async fn head(&self, bucket: Bucket<'_>, key: &str) -> Result<Option<ObjectHead>, String> {
        let request = self
            .0
            .head_object()
            .bucket(bucket.name)
            .expected_bucket_owner(bucket.owner)
            .key(key);
        let output = match request.send().await {
            Ok(output) => output,
            Err(e) => return refusal(&e, "HeadObject", bucket, key).map(|()| None),
        };
        Ok(Some(ObjectHead {
            etag: output.e_tag().map(unquoted).unwrap_or_default(),
            size: output
                .content_length()
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or_default(),
            storage_class: output.storage_class().map(|c| c.as_str().to_owned()),
            expiration: output.expiration().map(str::to_owned),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_lose_their_quotes() {
        assert_eq!(
            unquoted("\"9b2cf535f27731c974343645a3985328\""),
            "9b2cf535f27731c974343645a3985328"
        );
        assert_eq!(unquoted("abc-2"), "abc-2");
    }
}
