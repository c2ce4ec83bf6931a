//! The blueprint (the policy's `[template]` section): settings every table the policy owns
//! should carry besides capacity, set at CreateTable and kept true by later runs (time to live,
//! tags, point-in-time recovery, deletion protection, stream, encryption). Not to be confused
//! with the SAM `template.yaml`.
//!
//! Settings left out of the policy are left as they are on the tables: the blueprint only
//! enforces what it names.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::settings::{Encryption, StreamSetting, StreamView};
use crate::policy::tags::{tag_problem, MAX_TAGS, OWN_TAGS};

/// The validated blueprint.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Blueprint {
    /// Attribute holding each item's expiry in epoch seconds; `None` leaves TTL as it is.
    pub ttl_attribute: Option<String>,
    /// Turn point-in-time recovery on (never turned off by ddb-rollover).
    pub point_in_time_recovery: bool,
    /// `Some(true)`: set at CreateTable, turned on again when lost, and lifted by retention
    /// just before it deletes the table. `None` or `Some(false)`: never turned on or off; a
    /// protection someone else turned on is theirs, and keeps retention from deleting the table.
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
pub struct BlueprintDocument {
    /// Attribute holding each item's expiry in epoch seconds; absent leaves TTL as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_attribute: Option<String>,
    /// `true` turns point-in-time recovery on; it is never turned off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_in_time_recovery: Option<bool>,
    /// `true` sets deletion protection, which retention lifts just before it deletes a table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_protection: Option<bool>,
    /// `"keys_only"`, `"new_image"`, `"old_image"`, `"new_and_old_images"` or `"off"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// `"aws_owned"`, `"aws_managed"` or `"customer_managed"` (with `kms_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
    /// The customer managed KMS key (ARN, ID or alias), with `encryption = "customer_managed"` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kms_key: Option<String>,
    /// The user's tags for every table; keys may not start with `ddb-rollover:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

impl BlueprintDocument {
    /// The template, or every problem as (field within `template`, what to change).
    pub fn validate(&self) -> Result<Blueprint, Vec<(String, String)>> {
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
            Ok(Blueprint {
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

impl Blueprint {
    /// The document that validates to this template.
    pub fn to_document(&self) -> Option<BlueprintDocument> {
        if *self == Blueprint::default() {
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
        Some(BlueprintDocument {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(doc: BlueprintDocument) -> Vec<String> {
        doc.validate().unwrap_err().into_iter().map(|(f, _)| f).collect()
    }

    #[test]
    fn each_bad_field_is_named() {
        let doc = |f: fn(&mut BlueprintDocument)| {
            let mut doc = BlueprintDocument::default();
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
    fn round_trips_through_the_document() {
        let doc = BlueprintDocument {
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
        assert_eq!(Blueprint::default().to_document(), None);
    }
}
