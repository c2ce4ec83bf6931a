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
use crate::policy::warm::WarmDocument;
use crate::policy::{PolicyError, POLICY_ENV};

/// The policy document as written by the user: every field optional, unknown keys rejected.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyDocument {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub premake: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<KeySchemaDocument>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexes: Option<Vec<IndexDocument>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_indexes: Option<Vec<LocalIndexDocument>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Vec<PhaseDocument>>,
    /// How long a table keeps phase 0 after its period ends: `"90m"`, `"2h"` (humantime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<BlueprintDocument>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<RetentionDocument>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<RatesDocument>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseDocument {
    pub min_age: i64,
    /// `"provisioned"` (default) or `"on_demand"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing: Option<String>,
    /// Provisioned read / write capacity units; required for provisioned phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<i64>,
    /// On-demand maximum read / write request units per second; optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_read: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_write: Option<i64>,
    /// Global secondary indexes' capacity in a provisioned phase; default: `read` / `write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_read: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_write: Option<i64>,
    /// Per-index capacity in a provisioned phase, by index name, where one index needs more
    /// or less than `index_read` / `index_write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_overrides: Option<BTreeMap<String, Capacity>>,
    /// Global secondary indexes' on-demand maximums in an on-demand phase; optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_max_read: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_max_write: Option<i64>,
    /// `"standard"` or `"standard_ia"`; absent leaves the class as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_class: Option<String>,
    /// Provisioned phases only, instead of `read` / `write`: Application Auto Scaling bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<AutoscalingDocument>,
    /// Warm throughput of the table and its global indexes, `{ read, write }` units per second:
    /// set at CreateTable and raised, never lowered (see [`crate::policy::warm`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmDocument>,
}

/// `autoscaling = { min_read, max_read, min_write, max_write, target = 70 }`: the bounds are
/// required (checked by validation, so every missing one is named), `target` defaults to 70.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoscalingDocument {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_read: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_read: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_write: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_write: Option<i64>,
    /// Target utilisation in percent, 20 to 90.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<i64>,
}

impl PolicyDocument {
    pub fn from_toml(text: &str) -> Result<PolicyDocument, PolicyError> {
        toml::from_str(text).map_err(|e| PolicyError::Syntax {
            format: "TOML",
            message: e.to_string().trim().to_string(),
        })
    }

    pub fn from_json(text: &str) -> Result<PolicyDocument, PolicyError> {
        serde_json::from_str(text).map_err(|e| PolicyError::Syntax {
            format: "JSON",
            message: e.to_string(),
        })
    }

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
