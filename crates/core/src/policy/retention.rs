//! Retention, opt-in: archive old tables to S3 with ExportTableToPointInTime, and delete them
//! once they are old enough (and, when archiving, only after their export COMPLETED).

use serde::{Deserialize, Serialize};

use crate::policy::limits::MAX_AGE_PERIODS;

/// Upper bound for `max_deletes_per_run`: DeleteTable is a control-plane operation and
/// DynamoDB allows at most 500 of those in flight per account.
pub(crate) const MAX_DELETES_PER_RUN: u32 = 100;

/// The validated `[retention]` section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Retention {
    /// Export tables to S3 before deleting them; `None`: no exports.
    pub archive: Option<Archive>,
    /// Periods after which a table is deleted; `None` keeps tables forever.
    pub delete_after: Option<u32>,
    /// The most tables one run deletes.
    pub max_deletes_per_run: u32,
    /// The newest N tables (by period, current and pre-built included) are never deleted.
    pub keep_newest: u32,
}

/// Where and when tables are exported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Archive {
    /// Periods after which a table is exported.
    pub after: u32,
    /// The S3 bucket exports go to.
    pub bucket: String,
    /// Key prefix; each table's export goes under `{prefix}{table}/`.
    pub prefix: String,
    /// The account that must own `bucket`; `None`: the tables' own account.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bucket_owner: Option<String>,
}

impl Archive {
    /// The S3 key prefix for one table's export.
    pub fn prefix_for(&self, table: &str) -> String {
        format!("{}{table}/", self.prefix)
    }

    /// The account that must own the bucket, for the table `table_arn`: `bucket_owner`, else
    /// the account in the table's ARN (`arn:aws:dynamodb:REGION:ACCOUNT:table/NAME`, from
    /// DescribeTable, so no STS call). Exports send it as `S3BucketOwner` and every S3 read of
    /// the proof as `ExpectedBucketOwner`: a bucket name that passed to another account then
    /// receives nothing and proves nothing. `None` when neither gives an account.
    pub fn expected_bucket_owner(&self, table_arn: &str) -> Option<String> {
        self.bucket_owner
            .clone()
            .or_else(|| account_of(table_arn).map(str::to_owned))
    }
}

/// The 12-digit account of an ARN (`arn:PARTITION:SERVICE:REGION:ACCOUNT:...`).
pub(crate) fn account_of(arn: &str) -> Option<&str> {
    let mut parts = arn.splitn(6, ':');
    let (Some("arn"), Some(_), Some(_), Some(_), Some(account), Some(_)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    is_account_id(account).then_some(account)
}

/// Whether `text` is an AWS account id: 12 digits.
fn is_account_id(text: &str) -> bool {
    text.len() == 12 && text.bytes().all(|b| b.is_ascii_digit())
}

/// The `[retention]` section as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetentionDocument {
    /// Periods after which a table is exported; absent: no exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_after: Option<i64>,
    /// The S3 bucket exports go to; required with `archive_after`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<String>,
    /// S3 key prefix for the exports; default `ddb-rollover/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Periods after which a table is deleted; absent keeps tables forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_after: Option<i64>,
    /// The most tables one run deletes; default 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_deletes_per_run: Option<i64>,
    /// How many of the newest tables are never deleted; default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_newest: Option<i64>,
    /// No longer an option: the family's ledger proves a table ours on every endpoint,
    /// DynamoDB Local (no tagging API) included. Named so a policy that still sets it is
    /// refused with that said, not as an unknown key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_without_tagging_api: Option<bool>,
    /// The 12-digit account that must own `bucket`; default: the account the tables are in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket_owner: Option<String>,
}

const DEFAULT_PREFIX: &str = "ddb-rollover/";
const DEFAULT_MAX_DELETES: u32 = 5;
const DEFAULT_KEEP_NEWEST: u32 = 3;

impl RetentionDocument {
    /// The retention rules, or every problem as (field within `retention`, what to change).
    pub fn validate(&self) -> Result<Retention, Vec<(String, String)>> {
        let mut problems: Vec<(String, String)> = Vec::new();
        let mut periods = |field: &str, value: Option<i64>, min: i64, max: i64| -> Option<u32> {
            let value = value?;
            if (min..=max).contains(&value) {
                Some(value as u32)
            } else {
                problems.push((
                    field.into(),
                    format!("{value} is out of range: use {min} to {max}"),
                ));
                None
            }
        };
        let archive_after = periods("archive_after", self.archive_after, 1, MAX_AGE_PERIODS);
        let delete_after = periods("delete_after", self.delete_after, 1, MAX_AGE_PERIODS);
        let max_deletes = periods(
            "max_deletes_per_run",
            self.max_deletes_per_run,
            1,
            i64::from(MAX_DELETES_PER_RUN),
        )
        .unwrap_or(DEFAULT_MAX_DELETES);
        let keep_newest =
            periods("keep_newest", self.keep_newest, 1, MAX_AGE_PERIODS).unwrap_or(DEFAULT_KEEP_NEWEST);

        if self.archive_after.is_none() && self.delete_after.is_none() {
            problems.push((
                "archive_after".into(),
                "set archive_after, delete_after or both (or remove [retention])".into(),
            ));
        }
        let bucket = self.bucket.clone().filter(|b| !b.is_empty());
        match (&bucket, self.archive_after) {
            (None, Some(_)) => problems.push((
                "bucket".into(),
                "required with archive_after: the S3 bucket exports are written to".into(),
            )),
            (Some(_), None) => problems.push((
                "archive_after".into(),
                "required with bucket: the age in periods at which tables are exported".into(),
            )),
            (Some(name), Some(_)) if !valid_bucket_name(name) => problems.push((
                "bucket".into(),
                format!(
                    "{name:?} is not an S3 bucket name: 3 to 63 lowercase letters, digits, dots and hyphens"
                ),
            )),
            _ => {}
        }
        if self.prefix.is_some() && self.archive_after.is_none() {
            problems.push(("prefix".into(), "only with archive_after and bucket".into()));
        }
        if let Some(message) = self.prefix.as_deref().and_then(prefix_problem) {
            problems.push(("prefix".into(), message));
        }
        match self.bucket_owner.as_deref() {
            Some(_) if self.archive_after.is_none() => problems.push((
                "bucket_owner".into(),
                "only with archive_after and bucket: the account that must own the archive bucket".into(),
            )),
            Some(owner) if !is_account_id(owner) => problems.push((
                "bucket_owner".into(),
                format!(
                    "{:?} is not an AWS account id: 12 digits, such as \"123456789012\" (leave it out for the tables' own account)",
                    owner.chars().take(40).collect::<String>()
                ),
            )),
            _ => {}
        }
        if self.delete_without_tagging_api.is_some() {
            problems.push((
                "delete_without_tagging_api".into(),
                "no longer an option: the family's ledger proves a table ours on every endpoint (DynamoDB Local included); remove it".into(),
            ));
        }
        if let (Some(archive), Some(delete)) = (self.archive_after, self.delete_after) {
            if delete <= archive {
                problems.push((
                    "delete_after".into(),
                    format!(
                        "{delete} must be greater than archive_after ({archive}): a table is deleted only after its export completed"
                    ),
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Retention {
            archive: archive_after.zip(bucket).map(|(after, bucket)| Archive {
                after,
                bucket,
                prefix: self.prefix.clone().unwrap_or_else(|| DEFAULT_PREFIX.into()),
                bucket_owner: self.bucket_owner.clone(),
            }),
            delete_after,
            max_deletes_per_run: max_deletes,
            keep_newest,
        })
    }
}

impl Retention {
    /// The document that validates to these rules.
    pub fn to_document(&self) -> RetentionDocument {
        RetentionDocument {
            archive_after: self.archive.as_ref().map(|a| i64::from(a.after)),
            bucket: self.archive.as_ref().map(|a| a.bucket.clone()),
            prefix: self.archive.as_ref().map(|a| a.prefix.clone()),
            delete_after: self.delete_after.map(i64::from),
            max_deletes_per_run: Some(i64::from(self.max_deletes_per_run)),
            keep_newest: Some(i64::from(self.keep_newest)),
            delete_without_tagging_api: None,
            bucket_owner: self.archive.as_ref().and_then(|a| a.bucket_owner.clone()),
        }
    }
}

/// The longest `retention.prefix`, in bytes. A table's export lands under
/// `{prefix}{table}/AWSDynamoDB/{export id}/` (data files under `data/`, the manifests beside
/// it); S3 keys are at most 1,024 bytes. A table name is at most 255 bytes, and what DynamoDB
/// adds after it stays under 150, so 512 leaves every key of every export inside S3's limit.
pub(crate) const MAX_ARCHIVE_PREFIX: usize = 512;

/// What is wrong with a `retention.prefix`, if anything. A family's exports go under
/// `{prefix}{table}/`; the prefix must be empty (the bucket's root) or end with `/`, so that
/// folder is `{table}/` inside the prefix's own folder and no two tables' (nor two families')
/// folders can coincide or nest (`exports/t` + `s_2018-10-25` would otherwise be
/// `exports/t` + `s_...` = `exports/ts_2018-10-25/`, another family's folder). No leading `/`,
/// no empty, `.` or `..` segment, no control characters, at most [`MAX_ARCHIVE_PREFIX`] bytes.
fn prefix_problem(prefix: &str) -> Option<String> {
    let mut wrong: Vec<String> = Vec::new();
    if !prefix.is_empty() && !prefix.ends_with('/') {
        wrong.push(format!(
            "end it with \"/\" ({prefix:?} + a table name would run into the name)"
        ));
    }
    if prefix.starts_with('/') {
        wrong.push("remove the leading \"/\"".into());
    }
    let inner = prefix.strip_suffix('/').unwrap_or(prefix);
    if !inner.is_empty() && inner.split('/').any(|segment| matches!(segment, "" | "." | "..")) {
        wrong.push("remove empty, \".\" and \"..\" segments".into());
    }
    if prefix.chars().any(char::is_control) {
        wrong.push("remove control characters".into());
    }
    if prefix.len() > MAX_ARCHIVE_PREFIX {
        wrong.push(format!(
            "shorten it to at most {MAX_ARCHIVE_PREFIX} bytes (it has {}; export keys must stay under S3's 1,024)",
            prefix.len()
        ));
    }
    (!wrong.is_empty()).then(|| {
        format!(
            "{:?} is not a folder for exports: {}; for example \"ddb-rollover/\" (each table's exports go under {{prefix}}{{table}}/)",
            prefix.chars().take(80).collect::<String>(),
            wrong.join("; ")
        )
    })
}

/// S3's bucket naming rules, the part that can be checked offline.
fn valid_bucket_name(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(doc: RetentionDocument) -> Vec<String> {
        doc.validate().unwrap_err().into_iter().map(|(f, _)| f).collect()
    }

    fn archive(after: i64, delete: Option<i64>) -> RetentionDocument {
        RetentionDocument {
            archive_after: Some(after),
            bucket: Some("my-archive".into()),
            delete_after: delete,
            ..Default::default()
        }
    }

    #[test]
    fn defaults_and_round_trip() {
        let retention = archive(30, Some(90)).validate().unwrap();
        let archive_part = retention.archive.clone().unwrap();
        assert_eq!(
            (archive_part.after, archive_part.prefix.as_str()),
            (30, "ddb-rollover/")
        );
        assert_eq!(archive_part.prefix_for("t_1"), "ddb-rollover/t_1/");
        assert_eq!(
            (
                retention.delete_after,
                retention.max_deletes_per_run,
                retention.keep_newest
            ),
            (Some(90), 5, 3)
        );
        assert_eq!(retention.to_document().validate().unwrap(), retention);
    }

    #[test]
    fn each_bad_field_is_named() {
        assert_eq!(fields(RetentionDocument::default()), ["archive_after"]);
        assert_eq!(fields(archive(30, Some(30))), ["delete_after"]);
        assert_eq!(fields(archive(0, None)), ["archive_after"]);
        let mut doc = archive(30, None);
        doc.bucket = None;
        assert_eq!(fields(doc), ["bucket"]);
        let mut doc = archive(30, None);
        doc.bucket = Some("My_Bucket".into());
        assert_eq!(fields(doc), ["bucket"]);
        let doc = RetentionDocument {
            delete_after: Some(10),
            max_deletes_per_run: Some(0),
            keep_newest: Some(0),
            prefix: Some("p/".into()),
            ..Default::default()
        };
        assert_eq!(fields(doc), ["max_deletes_per_run", "keep_newest", "prefix"]);
    }

    #[test]
    fn delete_without_tagging_api_is_refused_with_why() {
        for value in [Some(true), Some(false)] {
            let doc = RetentionDocument {
                delete_after: Some(7),
                delete_without_tagging_api: value,
                ..Default::default()
            };
            assert_eq!(fields(doc), ["delete_without_tagging_api"]);
        }
    }

    #[test]
    fn a_bucket_owner_is_an_account_id_with_archiving() {
        let mut doc = archive(30, None);
        doc.bucket_owner = Some("210987654321".into());
        let retention = doc.validate().unwrap();
        let archive_part = retention.archive.clone().unwrap();
        assert_eq!(archive_part.bucket_owner.as_deref(), Some("210987654321"));
        assert_eq!(retention.to_document().validate().unwrap(), retention);
        // Named, it wins over the table's account; unset, the table's account.
        let arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/t_1";
        assert_eq!(
            archive_part.expected_bucket_owner(arn).as_deref(),
            Some("210987654321")
        );
        let own = archive(30, None).validate().unwrap().archive.unwrap();
        assert_eq!(own.expected_bucket_owner(arn).as_deref(), Some("123456789012"));
        assert_eq!(
            own.expected_bucket_owner("arn:aws:dynamodb:eu-west-1::table/t_1"),
            None
        );
        assert_eq!(own.expected_bucket_owner("t_1"), None);
        for bad in ["12345678901", "1234567890123", "12345678901a", ""] {
            let mut doc = archive(30, None);
            doc.bucket_owner = Some(bad.into());
            assert_eq!(fields(doc), ["bucket_owner"], "{bad:?}");
        }
        let doc = RetentionDocument {
            delete_after: Some(7),
            bucket_owner: Some("210987654321".into()),
            ..Default::default()
        };
        assert_eq!(fields(doc), ["bucket_owner"]);
    }

    #[test]
    fn delete_without_archive_is_allowed() {
        let retention = RetentionDocument {
            delete_after: Some(7),
            ..Default::default()
        }
        .validate()
        .unwrap();
        assert_eq!((retention.archive, retention.delete_after), (None, Some(7)));
    }
}
