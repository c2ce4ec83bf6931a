//! The fake's S3, as far as exports, proofs and imports use it: objects with S3's ETag (a
//! single-part upload's: the hex MD5 of the bytes), size and storage class; exports laid out
//! as AWS documents them (`aws_model::exports`, the one writer of the manifests); and
//! ImportTable's reading of every object
//! under a prefix, one item per line, a line that is not an item counted as an error.

use std::collections::BTreeMap;

use aws_model::exports::{self, DataFile};
use ddb_rollover::control::{access_denied, ArchiveStore, Bucket as Expected};
use ddb_rollover::table::{ObjectBody, ObjectHead, READABLE_STORAGE_CLASSES};
use md5::{Digest, Md5};

/// One object: its bytes and `x-amz-storage-class` (`None`: STANDARD).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Object {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// `x-amz-storage-class` (`None`: STANDARD).
    pub storage_class: Option<String>,
}

impl S3Object {
    /// A STANDARD object, as PutObject leaves it.
    pub fn new(bytes: Vec<u8>) -> S3Object {
        S3Object {
            bytes,
            storage_class: None,
        }
    }

    fn md5(&self) -> Vec<u8> {
        Md5::digest(&self.bytes).to_vec()
    }

    /// S3's ETag of a single-part upload: the MD5 of the bytes, in hex.
    pub fn etag(&self) -> String {
        self.md5().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The MD5 as an export's manifest writes it (`md5Checksum`): base64.
    pub fn md5_checksum(&self) -> String {
        aws_smithy_types::base64::encode(self.md5())
    }

    fn head(&self, expiration: Option<String>) -> ObjectHead {
        ObjectHead {
            etag: self.etag(),
            size: self.bytes.len() as u64,
            storage_class: self.storage_class.clone(),
            expiration,
        }
    }
}

/// S3's objects by (bucket, key).
pub(crate) type Objects = BTreeMap<(String, String), S3Object>;

/// The account the fake's tables are in, and the owner of every bucket no act gave to another.
pub const ACCOUNT_ID: &str = "123456789012";

/// A bucket's owner and lifecycle: what S3 answers a read that expects another owner (403) and
/// a read of an object a rule will expire (`x-amz-expiration`). A bucket the world does not
/// list is the account's, without rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// The account that owns the bucket (S3 bucket names are global: when the owner deletes a
    /// bucket, another account may make one of the same name).
    pub owner: String,
    /// The Enabled Expiration rules of its lifecycle configuration.
    pub expirations: Vec<ExpirationRule>,
}

impl Default for Bucket {
    fn default() -> Bucket {
        Bucket {
            owner: ACCOUNT_ID.to_owned(),
            expirations: Vec::new(),
        }
    }
}

/// An Enabled lifecycle rule that expires the objects under `prefix` `days` days after their
/// creation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpirationRule {
    /// The rule's ID.
    pub id: String,
    /// The prefix it applies to.
    pub prefix: String,
    /// After how many days objects expire.
    pub days: u32,
}

impl Bucket {
    /// `x-amz-expiration` of `key` read at `now`, when a rule covers it: the earliest rule's
    /// expiry-date (the fake keeps no object times, so days count from `now`, rounded up to the
    /// next midnight UTC as S3 rounds them) and its id, URL-encoded, as S3 writes the header.
    pub fn expiration(&self, key: &str, now: chrono::DateTime<chrono::Utc>) -> Option<String> {
        let (at, rule) = self
            .expirations
            .iter()
            .filter(|rule| key.starts_with(&rule.prefix))
            .map(|rule| {
                let day = (now + chrono::Days::new(u64::from(rule.days))).date_naive() + chrono::Days::new(1);
                (day.and_time(chrono::NaiveTime::MIN).and_utc(), rule)
            })
            .min_by_key(|(at, _)| *at)?;
        Some(format!(
            "expiry-date=\"{}\", rule-id=\"{}\"",
            at.format("%a, %d %b %Y %H:%M:%S GMT"),
            url_encode(&rule.id)
        ))
    }
}

/// RFC 3986 percent-encoding of everything but the unreserved characters (S3's rule-id).
fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A data file holding `items` items, one DynamoDB JSON line each, as an export writes them.
pub fn data_file(items: u64) -> Vec<u8> {
    (0..items)
        .map(|n| format!("{{\"Item\":{{\"n\":{{\"N\":\"{n}\"}}}}}}\n"))
        .collect::<String>()
        .into_bytes()
}

/// Every object a COMPLETED export of `table_arn` writes in `directory`: its data files (key,
/// items), `manifest-files.json` and `manifest-summary.json` (last).
pub(crate) fn export_objects(
    export_arn: &str,
    table_arn: &str,
    directory: &str,
    files: &[(String, u64)],
    export_time: chrono::DateTime<chrono::Utc>,
) -> Vec<(String, S3Object)> {
    let mut objects: Vec<(String, S3Object)> = files
        .iter()
        .map(|(key, items)| (key.clone(), S3Object::new(data_file(*items))))
        .collect();
    let etags: Vec<String> = objects.iter().map(|(_, object)| object.etag()).collect();
    let listed: Vec<DataFile<'_>> = files
        .iter()
        .zip(&etags)
        .map(|((key, items), etag)| DataFile {
            key,
            etag,
            items: *items,
        })
        .collect();
    let manifests = exports::manifests(export_arn, table_arn, None, directory, &listed, export_time);
    objects.extend(manifests.map(|(key, bytes)| (key, S3Object::new(bytes))));
    objects
}

/// What ImportTable makes of the objects under `prefix`: (items imported, errors), or why it
/// fails (an object it cannot read).
pub(crate) fn import_counts(objects: &Objects, bucket: &str, prefix: &str) -> Result<(u64, u64), String> {
    let mut counts = (0, 0);
    for ((b, key), object) in objects {
        if b != bucket || !key.starts_with(prefix) {
            continue;
        }
        let class = object.storage_class.as_deref().unwrap_or("STANDARD");
        if !READABLE_STORAGE_CLASSES.contains(&class) {
            return Err(format!(
                "InvalidObjectState: s3://{bucket}/{key} is in storage class {class}"
            ));
        }
        for line in String::from_utf8_lossy(&object.bytes).lines() {
            if line.trim().is_empty() {
                continue;
            }
            if line.starts_with("{\"Item\":") {
                counts.0 += 1;
            } else {
                counts.1 += 1;
            }
        }
    }
    Ok(counts)
}

/// A snapshot of the fake's S3, as a proof reads it: the objects, the buckets' owners and
/// rules, and the time of the reads.
pub struct FakeS3 {
    pub objects: Objects,
    pub buckets: BTreeMap<String, Bucket>,
    pub now: chrono::DateTime<chrono::Utc>,
}

impl FakeS3 {
    fn bucket(&self, name: &str) -> Bucket {
        self.buckets.get(name).cloned().unwrap_or_default()
    }

    /// S3's 403 for a read expecting another owner than the bucket's, worded as the SDK
    /// adapter words it.
    fn owned(&self, operation: &str, bucket: Expected<'_>, key: &str) -> Result<Bucket, String> {
        let state = self.bucket(bucket.name);
        if state.owner == bucket.owner {
            return Ok(state);
        }
        Err(format!(
            "{operation}: HTTP 403 AccessDenied: Access Denied ({})",
            access_denied(bucket, key, "s3:GetObject and s3:ListBucket")
        ))
    }
}

impl ArchiveStore for FakeS3 {
    async fn get(&self, bucket: Expected<'_>, key: &str) -> Result<Option<ObjectBody>, String> {
        let state = self.owned("GetObject", bucket, key)?;
        Ok(self
            .objects
            .get(&(bucket.name.to_string(), key.to_string()))
            .map(|o| ObjectBody {
                bytes: o.bytes.clone(),
                expiration: state.expiration(key, self.now),
            }))
    }

    async fn list(&self, bucket: Expected<'_>, prefix: &str) -> Result<Vec<String>, String> {
        self.owned("ListObjectsV2", bucket, prefix)?;
        Ok(self
            .objects
            .keys()
            .filter(|(b, key)| b == bucket.name && key.starts_with(prefix))
            .map(|(_, key)| key.clone())
            .collect())
    }

    async fn head(&self, bucket: Expected<'_>, key: &str) -> Result<Option<ObjectHead>, String> {
        let state = self.owned("HeadObject", bucket, key)?;
        Ok(self
            .objects
            .get(&(bucket.name.to_string(), key.to_string()))
            .map(|o| o.head(state.expiration(key, self.now))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_are_the_md5_of_the_bytes() {
        let object = S3Object::new(b"{\"itemCount\": 3}".to_vec());
        assert_eq!(object.etag(), "f770f4b4c529946efd50dfd4def49115");
        assert_eq!(
            S3Object::new(Vec::new()).md5_checksum(),
            "1B2M2Y8AsgTpgAmY7PhCfg=="
        );
    }

    #[test]
    fn an_import_counts_items_and_errors_under_its_prefix() {
        let mut objects = Objects::new();
        let put = |objects: &mut Objects, key: &str, bytes: Vec<u8>| {
            objects.insert(("b".into(), key.into()), S3Object::new(bytes));
        };
        put(&mut objects, "e/data/0", data_file(3));
        put(&mut objects, "e/data/1", b"garbage\n".to_vec());
        put(&mut objects, "f/data/0", data_file(5));
        assert_eq!(import_counts(&objects, "b", "e/data/"), Ok((3, 1)));
        objects
            .get_mut(&("b".into(), "e/data/0".into()))
            .unwrap()
            .storage_class = Some("GLACIER".into());
        assert!(import_counts(&objects, "b", "e/data/")
            .unwrap_err()
            .contains("GLACIER"));
    }
}
