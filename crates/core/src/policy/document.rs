//! The policy document as written: every field optional, unknown keys rejected, read from
//! TOML, JSON or the `ROLLOVER_POLICY` environment variable.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::policy::blueprint::BlueprintDocument;
use crate::policy::indexes::{IndexDocument, LocalIndexDocument};
use crate::policy::rates::RatesDocument;
use crate::policy::retention::RetentionDocument;
use crate::policy::settings::{Capacity, KeySchemaDocument};
use crate::policy::stream::StreamDocument;
use crate::policy::strict_json::{self, Refusal};
use crate::policy::validate::{FieldError, PolicyError};
use crate::policy::warm::WarmDocument;

/// The environment variable that carries the policy as JSON (Lambda functions, and the CLI
/// when no `--policy` is given).
pub const POLICY_ENV: &str = "ROLLOVER_POLICY";
use serde_path_to_error::Segment;

/// The policy document as written by the user: every field optional, unknown keys rejected.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyDocument {
    /// The start of every table name, before the period label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// How long each table's period is: `"day"`, `"month"`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    /// The IANA time zone periods start and end in (`"Europe/Berlin"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// How many future periods' tables to create ahead of time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub premake: Option<i64>,
    /// The tables' partition key and optional sort key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<KeySchemaDocument>,
    /// Global secondary indexes every table has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexes: Option<Vec<IndexDocument>>,
    /// Local secondary indexes, created with each table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_indexes: Option<Vec<LocalIndexDocument>>,
    /// The settings a table moves through as it ages, by `min_age`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Vec<PhaseDocument>>,
    /// How long a table keeps phase 0 after its period ends: `"90m"`, `"2h"` (humantime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace: Option<String>,
    /// Settings besides capacity that every table carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<BlueprintDocument>,
    /// Archiving and deletion of old tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<RetentionDocument>,
    /// Calls per second to the APIs AWS rate-limits per account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<RatesDocument>,
    /// One change stream for the family: the Kinesis data stream every table streams into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamDocument>,
}

/// One phase as written by the user; [`crate::policy::Phase`] says what each setting means.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseDocument {
    /// How many periods old a table is when it enters this phase.
    pub min_age: i64,
    /// `"provisioned"` (default) or `"on_demand"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing: Option<String>,
    /// Provisioned read / write capacity units; required for provisioned phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<i64>,
    /// Provisioned write capacity units (see `read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<i64>,
    /// On-demand maximum read / write request units per second; optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_read: Option<i64>,
    /// On-demand maximum write request units per second (see `max_read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_write: Option<i64>,
    /// Global secondary indexes' capacity in a provisioned phase; default: `read` / `write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_read: Option<i64>,
    /// Global secondary indexes' write capacity units (see `index_read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_write: Option<i64>,
    /// Per-index capacity in a provisioned phase, by index name, where one index needs more
    /// or less than `index_read` / `index_write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_overrides: Option<BTreeMap<String, Capacity>>,
    /// Global secondary indexes' on-demand maximums in an on-demand phase; optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_max_read: Option<i64>,
    /// Global secondary indexes' on-demand maximum write request units (see `index_max_read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_max_write: Option<i64>,
    /// `"standard"` or `"standard_ia"`; absent leaves the class as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_class: Option<String>,
    /// Provisioned phases only, instead of `read` / `write`: Application Auto Scaling bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<AutoscalingDocument>,
    /// Warm throughput of the table and its global indexes, `{ read, write }` units per second:
    /// set at CreateTable and raised, never lowered (see [`crate::policy::WarmThroughput`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmDocument>,
}

/// `autoscaling = { min_read, max_read, min_write, max_write, target = 70 }`: the bounds are
/// required (checked by validation, so every missing one is named), `target` defaults to 70.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoscalingDocument {
    /// Fewest read capacity units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_read: Option<i64>,
    /// Most read capacity units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_read: Option<i64>,
    /// Fewest write capacity units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_write: Option<i64>,
    /// Most write capacity units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_write: Option<i64>,
    /// Target utilisation in percent, 20 to 90.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<i64>,
}

impl PolicyDocument {
    /// Reads a policy document written in TOML.
    pub fn from_toml(text: &str) -> Result<PolicyDocument, PolicyError> {
        let value: toml::Value = toml::from_str(text).map_err(|e| PolicyError::Syntax {
            format: "TOML",
            message: e.to_string().trim().to_string(),
        })?;
        let value = serde_json::to_value(value).map_err(|e| PolicyError::Syntax {
            format: "TOML",
            message: e.to_string(),
        })?;
        Self::from_value(value).map(|(document, _)| document)
    }

    /// Reads a policy document written in JSON, strictly ([`strict_json`]): a key given twice
    /// is refused with its path (`premake`, `phases[0].read`), never decided by whichever came
    /// last; so is nesting far deeper than a policy's.
    pub fn from_json(text: &str) -> Result<PolicyDocument, PolicyError> {
        let value = strict_json::parse(text, "(the document)").map_err(|refusal| match refusal {
            Refusal {
                not_json: true,
                message,
                ..
            } => PolicyError::Syntax {
                format: "JSON",
                message: message.trim_start_matches("not JSON: ").to_string(),
            },
            Refusal { path, message, .. } => PolicyError::Invalid(vec![FieldError { field: path, message }]),
        })?;
        Self::from_value(value).map(|(document, _)| document)
    }

    /// The document in `value`, or every field of the wrong type, unknown or missing, each
    /// with its path (`phases[1].read`): serde stops at the first, so each bad field is named,
    /// taken out, and the rest read again. A document whose only problems are such fields
    /// comes back `Err` only after [`PolicyDocument::validate`] also checked the rest, so one
    /// answer names every problem ([`PolicyError::Invalid`]).
    fn from_value(mut value: serde_json::Value) -> Result<(PolicyDocument, Vec<FieldError>), PolicyError> {
        let mut found: Vec<FieldError> = Vec::new();
        // Each round takes one value out; a document has far fewer fields than this.
        for _ in 0..256 {
            let error = match serde_path_to_error::deserialize::<_, PolicyDocument>(&value) {
                Ok(document) if found.is_empty() => return Ok((document, found)),
                Ok(document) => {
                    // Range and consistency problems of what was read, besides the type errors
                    // (a field taken out is not reported again as missing).
                    let mut all = found;
                    if let Err(PolicyError::Invalid(more)) = document.validate() {
                        for problem in more {
                            if !all.iter().any(|f| same_or_within(&problem.field, &f.field)) {
                                all.push(problem);
                            }
                        }
                    }
                    return Err(PolicyError::Invalid(all));
                }
                Err(error) => error,
            };
            let segments: Vec<Segment> = error.path().iter().cloned().collect();
            let message = error.into_inner().to_string();
            let (path, message, removal) = match quoted_after(&message, "unknown field `") {
                Some(key) => {
                    let mut at = segments.clone();
                    if !matches!(at.last(), Some(Segment::Map { key: last }) if *last == key) {
                        at.push(Segment::Map { key });
                    }
                    (at.clone(), format!("{message}: remove it"), Some(at))
                }
                None => match quoted_after(&message, "missing field `") {
                    Some(key) => {
                        let mut at = segments.clone();
                        at.push(Segment::Map { key });
                        (at, "required".to_string(), Some(segments.clone()))
                    }
                    None => (segments.clone(), message, Some(segments.clone())),
                },
            };
            let field = path_text(&path);
            if found.iter().any(|f| f.field == field) {
                break;
            }
            found.push(FieldError { field, message });
            // Only a key can be taken out without moving what follows; a list entry that is
            // wrong as a whole ends the search.
            match removal {
                Some(at) if matches!(at.last(), Some(Segment::Map { .. })) => {
                    if !remove(&mut value, &at) {
                        break;
                    }
                }
                _ => break,
            }
        }
        Err(PolicyError::Invalid(found))
    }

    /// Reads a policy file: `.json` as JSON, anything else as TOML.
    pub fn load(path: &Path) -> Result<PolicyDocument, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.display().to_string(),
            source,
        })?;
        if path.extension().is_some_and(|ext| ext == "json") {
            Self::from_json(&text)
        } else {
            Self::from_toml(&text)
        }
    }

    /// The document in the `ROLLOVER_POLICY` environment variable (JSON); `None` when it is
    /// unset or blank, which means the defaults.
    pub fn from_env() -> Result<Option<PolicyDocument>, PolicyError> {
        match std::env::var(POLICY_ENV) {
            Ok(json) if !json.trim().is_empty() => Self::from_json(&json).map(Some),
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(PolicyError::Syntax {
                format: "JSON",
                message: format!("{POLICY_ENV} is not valid Unicode"),
            }),
        }
    }
}

/// The text between `start` and the next backquote of `message`, where serde names a field.
fn quoted_after(message: &str, start: &str) -> Option<String> {
    let rest = &message[message.find(start)? + start.len()..];
    Some(rest[..rest.find('`')?].to_string())
}

/// `phases[1].read`, as validation names fields.
fn path_text(path: &[Segment]) -> String {
    let mut text = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => text.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(key);
            }
            Segment::Unknown => text.push_str(".?"),
        }
    }
    if text.is_empty() {
        text.push_str("(the document)");
    }
    text
}

/// Whether `field` is `outer` or a field inside it.
fn same_or_within(field: &str, outer: &str) -> bool {
    field == outer
        || field
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// Takes the value at `path` out of `value`; false when there is none.
fn remove(value: &mut serde_json::Value, path: &[Segment]) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut at = value;
    for segment in parents {
        let next = match (segment, at) {
            (Segment::Map { key }, serde_json::Value::Object(map)) => map.get_mut(key),
            (Segment::Seq { index }, serde_json::Value::Array(list)) => list.get_mut(*index),
            _ => None,
        };
        match next {
            Some(next) => at = next,
            None => return false,
        }
    }
    match (last, at) {
        (Segment::Map { key }, serde_json::Value::Object(map)) => map.remove(key).is_some(),
        _ => false,
    }
}
