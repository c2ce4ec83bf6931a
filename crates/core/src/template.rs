//! The table template: settings every table the policy owns should carry besides capacity,
//! set at CreateTable and kept true by later runs (time to live, tags, point-in-time recovery,
//! deletion protection, stream, encryption).
//!
//! Settings left out of the policy are left as they are on the tables: the template only
//! enforces what it names.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Tag keys ddb-rollover writes; users may not set tags in this namespace.
pub const TAG_NAMESPACE: &str = "ddb-rollover:";
/// Start and end of the table's period, RFC 3339: later decisions read the period from here
/// rather than re-parsing the name under a policy that may have changed.
pub const TAG_PERIOD_START: &str = "ddb-rollover:period-start";
pub const TAG_PERIOD_END: &str = "ddb-rollover:period-end";
/// The family the table belongs to: the prefix of the policy that made it. A table is never
/// another family's just because its name starts with our prefix (`ts_eu_...` under `ts`).
pub const TAG_FAMILY: &str = "ddb-rollover:family";
/// Hash of the policy that created the table.
pub const TAG_POLICY_HASH: &str = "ddb-rollover:policy-hash";
/// The archive export of the table (its ARN, or the part after the table's ARN).
pub const TAG_EXPORT: &str = "ddb-rollover:export";
/// When the archive export completed (RFC 3339): the table may be deleted.
pub const TAG_ARCHIVED: &str = "ddb-rollover:archived";
/// The last time DynamoDB refused a change at run time, and why.
pub const TAG_LAST_DEFERRAL: &str = "ddb-rollover:last-deferral";

/// DynamoDB's tag limits: 50 tags per resource, keys up to 128 and values up to 256 characters.
pub const MAX_TAGS: usize = 50;
pub const MAX_TAG_KEY_LEN: usize = 128;
pub const MAX_TAG_VALUE_LEN: usize = 256;
/// Tags ddb-rollover may write on one table (family, period start, end, policy hash, export,
/// archived, last deferral), which the user's tags must leave room for.
pub const OWN_TAGS: usize = 7;

/// What DynamoDB Streams records for each item change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamView {
    KeysOnly,
    NewImage,
    OldImage,
    NewAndOldImages,
}

impl StreamView {
    pub const ALL: [StreamView; 4] = [
        StreamView::KeysOnly,
        StreamView::NewImage,
        StreamView::OldImage,
        StreamView::NewAndOldImages,
    ];

    pub fn as_policy_str(self) -> &'static str {
        match self {
            StreamView::KeysOnly => "keys_only",
            StreamView::NewImage => "new_image",
            StreamView::OldImage => "old_image",
            StreamView::NewAndOldImages => "new_and_old_images",
        }
    }

    /// DynamoDB's spelling, `NEW_AND_OLD_IMAGES`.
    pub fn as_wire_str(self) -> &'static str {
        match self {
            StreamView::KeysOnly => "KEYS_ONLY",
            StreamView::NewImage => "NEW_IMAGE",
            StreamView::OldImage => "OLD_IMAGE",
            StreamView::NewAndOldImages => "NEW_AND_OLD_IMAGES",
        }
    }

    pub fn from_wire(value: &str) -> Option<StreamView> {
        StreamView::ALL.into_iter().find(|v| v.as_wire_str() == value)
    }
}

/// The stream a table should have: `None` means no stream.
pub type StreamSetting = Option<StreamView>;

/// Server-side encryption at rest. DynamoDB always encrypts; this picks whose key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "key", rename_all = "snake_case")]
pub enum Encryption {
    /// DynamoDB's own key, free (the default).
    AwsOwned,
    /// The account's AWS managed key `alias/aws/dynamodb` (KMS charges apply).
    AwsManaged,
    /// A customer managed KMS key: its ARN, ID or alias.
    CustomerManaged { kms_key: String },
}

impl fmt::Display for Encryption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Encryption::AwsOwned => f.write_str("aws_owned"),
            Encryption::AwsManaged => f.write_str("aws_managed"),
            Encryption::CustomerManaged { kms_key } => write!(f, "customer_managed ({kms_key})"),
        }
    }
}

/// The export tag's value: the part of the export ARN after the table's ARN when it has that
/// form (so it fits the 256-character tag limit with long table names), else the whole ARN.
pub fn export_tag_value(table_arn: &str, export_arn: &str) -> String {
    export_arn
        .strip_prefix(table_arn)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(export_arn)
        .to_string()
}

/// The export ARN an export tag names.
pub fn export_arn_from_tag(table_arn: &str, value: &str) -> String {
    if value.starts_with("arn:") {
        value.to_string()
    } else {
        format!("{table_arn}/{value}")
    }
}

/// The validated template.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TableTemplate {
    /// Attribute holding each item's expiry in epoch seconds; `None` leaves TTL as it is.
    pub ttl_attribute: Option<String>,
    /// Turn point-in-time recovery on (never turned off by ddb-rollover).
    pub point_in_time_recovery: bool,
    /// `None` leaves deletion protection as it is.
    pub deletion_protection: Option<bool>,
    /// `None` leaves the stream as it is; `Some(None)` means no stream.
    pub stream: Option<StreamSetting>,
    /// `None` leaves encryption as it is (DynamoDB's default at creation: AWS owned key).
    pub encryption: Option<Encryption>,
    /// The user's tags, added to every table and kept true.
    pub tags: BTreeMap<String, String>,
}

/// The `[template]` section as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateDocument {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_attribute: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_in_time_recovery: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_protection: Option<bool>,
    /// `"keys_only"`, `"new_image"`, `"old_image"`, `"new_and_old_images"` or `"off"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// `"aws_owned"`, `"aws_managed"` or `"customer_managed"` (with `kms_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kms_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

impl TemplateDocument {
    /// The template, or every problem as (field within `template`, what to change).
    pub fn validate(&self) -> Result<TableTemplate, Vec<(String, String)>> {
        let mut problems = Vec::new();
        if let Some(name) = &self.ttl_attribute {
            if !(1..=255).contains(&name.len()) {
                problems.push((
                    "ttl_attribute".into(),
                    format!("{name:?} must be 1 to 255 bytes long"),
                ));
            }
        }
        let stream = match self.stream.as_deref() {
            None => None,
            Some("off") => Some(None),
            Some(other) => match StreamView::ALL.into_iter().find(|v| v.as_policy_str() == other) {
                Some(view) => Some(Some(view)),
                None => {
                    problems.push((
                        "stream".into(),
                        format!(
                            "unknown stream {other:?}: use \"keys_only\", \"new_image\", \"old_image\", \"new_and_old_images\" or \"off\""
                        ),
                    ));
                    None
                }
            },
        };
        let encryption = match (self.encryption.as_deref(), &self.kms_key) {
            (None, None) => None,
            (Some("aws_owned"), None) => Some(Encryption::AwsOwned),
            (Some("aws_managed"), None) => Some(Encryption::AwsManaged),
            (Some("customer_managed"), Some(key)) if !key.is_empty() => {
                Some(Encryption::CustomerManaged { kms_key: key.clone() })
            }
            (Some("customer_managed"), _) => {
                problems.push((
                    "kms_key".into(),
                    "required with encryption = \"customer_managed\": the KMS key's ARN, ID or alias".into(),
                ));
                None
            }
            (Some("aws_owned" | "aws_managed") | None, Some(_)) => {
                problems.push((
                    "kms_key".into(),
                    "only with encryption = \"customer_managed\": remove it or set that".into(),
                ));
                None
            }
            (Some(other), _) => {
                problems.push((
                    "encryption".into(),
                    format!(
                        "unknown encryption {other:?}: use \"aws_owned\", \"aws_managed\" or \"customer_managed\""
                    ),
                ));
                None
            }
        };
        let tags = self.tags.clone().unwrap_or_default();
        if tags.len() > MAX_TAGS - OWN_TAGS {
            problems.push((
                "tags".into(),
                format!(
                    "{} tags: DynamoDB allows {MAX_TAGS} per table and ddb-rollover uses up to {OWN_TAGS}, so use at most {}",
                    tags.len(),
                    MAX_TAGS - OWN_TAGS
                ),
            ));
        }
        for (key, value) in &tags {
            if let Some(message) = tag_problem(key, value) {
                problems.push((format!("tags.{key}"), message));
            }
        }
        if problems.is_empty() {
            Ok(TableTemplate {
                ttl_attribute: self.ttl_attribute.clone(),
                point_in_time_recovery: self.point_in_time_recovery.unwrap_or(false),
                deletion_protection: self.deletion_protection,
                stream,
                encryption,
                tags,
            })
        } else {
            Err(problems)
        }
    }
}

impl TableTemplate {
    /// The document that validates to this template.
    pub fn to_document(&self) -> Option<TemplateDocument> {
        if *self == TableTemplate::default() {
            return None;
        }
        let (encryption, kms_key) = match &self.encryption {
            None => (None, None),
            Some(Encryption::AwsOwned) => (Some("aws_owned".to_string()), None),
            Some(Encryption::AwsManaged) => (Some("aws_managed".to_string()), None),
            Some(Encryption::CustomerManaged { kms_key }) => {
                (Some("customer_managed".to_string()), Some(kms_key.clone()))
            }
        };
        Some(TemplateDocument {
            ttl_attribute: self.ttl_attribute.clone(),
            point_in_time_recovery: self.point_in_time_recovery.then_some(true),
            deletion_protection: self.deletion_protection,
            stream: self
                .stream
                .map(|s| s.map_or("off", StreamView::as_policy_str).to_string()),
            encryption,
            kms_key,
            tags: (!self.tags.is_empty()).then(|| self.tags.clone()),
        })
    }
}

/// Why DynamoDB would refuse this user tag, if it would.
fn tag_problem(key: &str, value: &str) -> Option<String> {
    let allowed = |s: &str| {
        s.chars()
            .all(|c| c.is_alphanumeric() || c.is_whitespace() || "_.:/=+-@".contains(c))
    };
    if key.starts_with(TAG_NAMESPACE) {
        Some(format!(
            "keys starting with {TAG_NAMESPACE:?} are ddb-rollover's own: rename it"
        ))
    } else if key.to_ascii_lowercase().starts_with("aws:") {
        Some("keys starting with \"aws:\" are reserved by AWS: rename it".into())
    } else if !(1..=MAX_TAG_KEY_LEN).contains(&key.chars().count()) {
        Some(format!("keys must be 1 to {MAX_TAG_KEY_LEN} characters long"))
    } else if value.chars().count() > MAX_TAG_VALUE_LEN {
        Some(format!(
            "values may be at most {MAX_TAG_VALUE_LEN} characters long"
        ))
    } else if !allowed(key) || !allowed(value) {
        Some("use letters, digits, spaces and _ . : / = + - @ only".into())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(doc: TemplateDocument) -> Vec<String> {
        doc.validate().unwrap_err().into_iter().map(|(f, _)| f).collect()
    }

    #[test]
    fn each_bad_field_is_named() {
        let doc = |f: fn(&mut TemplateDocument)| {
            let mut doc = TemplateDocument::default();
            f(&mut doc);
            doc
        };
        assert_eq!(problems(doc(|d| d.stream = Some("all".into()))), ["stream"]);
        assert_eq!(
            problems(doc(|d| d.ttl_attribute = Some(String::new()))),
            ["ttl_attribute"]
        );
        assert_eq!(
            problems(doc(|d| d.encryption = Some("rot13".into()))),
            ["encryption"]
        );
        assert_eq!(
            problems(doc(|d| d.encryption = Some("customer_managed".into()))),
            ["kms_key"]
        );
        assert_eq!(problems(doc(|d| d.kms_key = Some("k".into()))), ["kms_key"]);
        assert_eq!(
            problems(doc(
                |d| d.tags = Some([("ddb-rollover:x".into(), "1".into())].into())
            )),
            ["tags.ddb-rollover:x"]
        );
        assert_eq!(
            problems(doc(|d| d.tags = Some([("team".into(), "a|b".into())].into()))),
            ["tags.team"]
        );
        assert_eq!(
            problems(doc(
                |d| d.tags = Some((0..45).map(|i| (format!("k{i}"), "v".into())).collect())
            )),
            ["tags"]
        );
    }

    #[test]
    fn export_tags_fit_and_expand() {
        let table = "arn:aws:dynamodb:us-east-1:123456789012:table/t_2018-10-25";
        let export = format!("{table}/export/01540000000000-abcdef12");
        let value = export_tag_value(table, &export);
        assert_eq!(value, "export/01540000000000-abcdef12");
        assert_eq!(export_arn_from_tag(table, &value), export);
        let odd = "arn:aws:dynamodb:us-east-1:123456789012:table/elsewhere/export/1";
        assert_eq!(export_tag_value(table, odd), odd);
        assert_eq!(export_arn_from_tag(table, odd), odd);
    }

    #[test]
    fn round_trips_through_the_document() {
        let doc = TemplateDocument {
            ttl_attribute: Some("expires_at".into()),
            point_in_time_recovery: Some(true),
            deletion_protection: Some(false),
            stream: Some("off".into()),
            encryption: Some("customer_managed".into()),
            kms_key: Some("alias/archive".into()),
            tags: Some([("team".into(), "iot".into())].into()),
        };
        let template = doc.validate().unwrap();
        assert_eq!(template.stream, Some(None));
        assert_eq!(template.to_document().unwrap().validate().unwrap(), template);
        assert_eq!(TableTemplate::default().to_document(), None);
    }
}
