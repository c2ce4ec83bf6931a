//! The lifecycle policy: which tables exist, what they are called, and what each looks like
//! at each age. One document (TOML or JSON) serves the CLI and the Lambda functions.
//!
//! Parsing is two-step: serde reads a [`PolicyDocument`] whose every field is optional and
//! unknown keys are rejected; [`PolicyDocument::validate`] fills the blog's defaults and checks
//! every field, naming the field and what is allowed, before anything talks to AWS.

pub mod blueprint;
pub mod indexes;
pub mod limits;
pub mod naming;
pub mod period;
pub mod rates;
pub mod retention;
pub mod scaling;
pub mod settings;
pub mod tags;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use crate::policy::blueprint::{Blueprint, BlueprintDocument};
use crate::policy::indexes::{validate_indexes, IndexDocument, LocalIndexDocument};
use crate::policy::naming::TableNaming;
use crate::policy::period::{Calendar, PeriodKind, Slot};
use crate::policy::rates::{Rates, RatesDocument};
use crate::policy::retention::{Retention, RetentionDocument};
use crate::policy::scaling::{Autoscaling, ScalableDimension};
use crate::policy::settings::{
    AttributeKind, Billing, Capacity, GlobalIndex, KeyAttribute, KeySchema, KeySchemaDocument, LocalIndex,
    OnDemandLimits, TableClass,
};

/// Upper bound for `premake`: each run may create `premake + 1` tables at once, and DynamoDB
/// allows at most 500 tables in CREATING at a time (fewer on new accounts).
pub const MAX_PREMAKE: u32 = 100;

/// Upper bound for `grace`: 100 years (humantime's years of 365.25 days), so that the end of
/// any table's grace is an instant chrono can represent.
pub const MAX_GRACE: Duration = Duration::from_secs(100 * 31_557_600);

/// The environment variable that carries the policy as JSON (Lambda functions, and the CLI
/// when no `--policy` is given).
pub const POLICY_ENV: &str = "ROLLOVER_POLICY";

/// A validated policy. Build one with [`Policy::from_toml`], [`Policy::from_json`],
/// [`Policy::load`] or [`PolicyDocument::validate`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Policy {
    pub prefix: String,
    pub period: PeriodKind,
    pub timezone: Tz,
    pub premake: u32,
    pub key: KeySchema,
    /// Global secondary indexes every table is created with (and current and pre-built tables
    /// get when the policy adds one).
    pub indexes: Vec<GlobalIndex>,
    /// Local secondary indexes, created with each table (DynamoDB cannot add them later).
    pub local_indexes: Vec<LocalIndex>,
    pub phases: Vec<Phase>,
    /// How long after its period ends a table keeps phase 0 (late writes from devices that
    /// buffer); `None`: it moves on at the first resize_old run after the period.
    pub grace: Option<Duration>,
    /// Settings besides capacity that every table carries.
    pub template: Blueprint,
    /// Archive and delete old tables; `None` keeps every table.
    pub retention: Option<Retention>,
    /// Calls per second to the APIs AWS rate-limits per account.
    pub rates: Rates,
}

/// The settings a table should have once it is at least `min_age` periods old.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Phase {
    pub min_age: u32,
    /// Provisioned capacity, or on-demand with optional maximum throughput.
    pub billing: Billing,
    /// Every global secondary index's throughput, in the table's billing mode.
    pub index_billing: Billing,
    /// Provisioned capacity of the indexes that differ from `index_billing`, by index name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub index_overrides: BTreeMap<String, Capacity>,
    /// `None` leaves the table class as it is.
    pub table_class: Option<TableClass>,
    /// Application Auto Scaling keeps the capacity between these bounds (`billing` is then
    /// provisioned at the minimums, what CreateTable starts a table with).
    pub autoscaling: Option<Autoscaling>,
}

impl Phase {
    fn to_document(&self) -> PhaseDocument {
        let mut doc = PhaseDocument {
            min_age: i64::from(self.min_age),
            table_class: self.table_class.map(|c| c.as_policy_str().to_string()),
            index_overrides: (!self.index_overrides.is_empty()).then(|| self.index_overrides.clone()),
            ..PhaseDocument::default()
        };
        if let Some(a) = self.autoscaling {
            doc.autoscaling = Some(AutoscalingDocument {
                min_read: Some(a.min_read),
                max_read: Some(a.max_read),
                min_write: Some(a.min_write),
                max_write: Some(a.max_write),
                target: Some(i64::from(a.target)),
            });
            return doc;
        }
        match (self.billing, self.index_billing) {
            (Billing::Provisioned(c), Billing::Provisioned(index)) => {
                doc.read = Some(c.read);
                doc.write = Some(c.write);
                // Only when it differs: the default is the table's.
                doc.index_read = (index.read != c.read).then_some(index.read);
                doc.index_write = (index.write != c.write).then_some(index.write);
            }
            (limits, index) => {
                doc.billing = Some("on_demand".into());
                if let Billing::OnDemand(limits) = limits {
                    doc.max_read = limits.max_read;
                    doc.max_write = limits.max_write;
                }
                if let Billing::OnDemand(index) = index {
                    doc.index_max_read = index.max_read;
                    doc.index_max_write = index.max_write;
                }
            }
        }
        doc
    }

    /// The throughput the phase gives the global secondary index `index`.
    pub fn billing_of_index(&self, index: &str) -> Billing {
        match (self.index_billing, self.index_overrides.get(index)) {
            (Billing::Provisioned(_), Some(capacity)) => Billing::Provisioned(*capacity),
            (billing, _) => billing,
        }
    }
}

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

/// One invalid field: its path in the document and what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read policy file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("policy is not valid {format}: {message}")]
    Syntax { format: &'static str, message: String },
    #[error("invalid policy:\n  {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  "))]
    Invalid(Vec<FieldError>),
}

impl PolicyError {
    /// The invalid fields, if this is a validation error.
    pub fn fields(&self) -> &[FieldError] {
        match self {
            PolicyError::Invalid(fields) => fields,
            _ => &[],
        }
    }
}

impl Default for Policy {
    fn default() -> Self {
        PolicyDocument::default()
            .validate()
            .expect("the default policy is valid")
    }
}

impl Policy {
    pub fn from_toml(text: &str) -> Result<Policy, PolicyError> {
        PolicyDocument::from_toml(text)?.validate()
    }

    pub fn from_json(text: &str) -> Result<Policy, PolicyError> {
        PolicyDocument::from_json(text)?.validate()
    }

    /// Reads a policy file: `.json` as JSON, anything else as TOML.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        PolicyDocument::load(path)?.validate()
    }

    pub fn calendar(&self) -> Calendar {
        Calendar::new(self.period, self.timezone)
    }

    pub fn naming(&self) -> TableNaming {
        TableNaming::new(&self.prefix, self.calendar())
    }

    /// The phase for a table `age` periods old; current and future tables get phase 0.
    pub fn phase_index_for_age(&self, age: i64) -> usize {
        self.phases
            .iter()
            .rposition(|phase| i64::from(phase.min_age) <= age)
            .unwrap_or(0)
    }

    pub fn phase_for_age(&self, age: i64) -> &Phase {
        &self.phases[self.phase_index_for_age(age)]
    }

    /// Whether tables need point-in-time recovery: asked for, or needed by archive exports.
    pub fn wants_point_in_time_recovery(&self) -> bool {
        self.template.point_in_time_recovery || self.archive().is_some()
    }

    pub fn archive(&self) -> Option<&crate::policy::retention::Archive> {
        self.retention.as_ref().and_then(|r| r.archive.as_ref())
    }

    /// A short, stable hash of the policy (first 16 hex digits of the SHA-256 of its canonical
    /// JSON document), tagged on every table it creates.
    pub fn hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let json = serde_json::to_vec(&self.to_document()).expect("a policy document serializes");
        Sha256::digest(json)
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// When a table of `slot` leaves phase 0: its period's end plus the grace; `None` without
    /// a grace. A grace too long to add ends at the latest instant chrono can represent, never
    /// at none: a table stays hot rather than lose its grace (validation keeps `grace` within
    /// [`MAX_GRACE`], so only a policy built by hand gets there).
    pub fn grace_end(&self, slot: Slot) -> Option<DateTime<Utc>> {
        let end = self.calendar().end(slot);
        let grace = chrono::Duration::from_std(self.grace?).unwrap_or(chrono::Duration::MAX);
        Some(end.checked_add_signed(grace).unwrap_or(DateTime::<Utc>::MAX_UTC))
    }

    /// The phase a table of `slot` is in at `at`: phase 0 until its grace ends (see
    /// [`grace_end`](Self::grace_end)), then the phase for its age at that instant (the
    /// periods from its own to the one holding `at`).
    pub fn phase_at(&self, slot: Slot, at: DateTime<Utc>) -> usize {
        if self.grace_end(slot).is_some_and(|end| at < end) {
            return 0;
        }
        let calendar = self.calendar();
        self.phase_index_for_age(calendar.periods_between(slot, calendar.floor(at)))
    }

    /// The first change of [`phase_at`](Self::phase_at) after `now`: the phase and the instant
    /// it starts from; `None` when the table stays in its phase for good. The phase only
    /// changes when the grace ends or the table's age reaches a phase's `min_age`, and never
    /// goes back, so those instants are the candidates, earliest first.
    pub fn next_phase_change(&self, slot: Slot, now: DateTime<Utc>) -> Option<(usize, DateTime<Utc>)> {
        let current = self.phase_at(slot, now);
        if current + 1 >= self.phases.len() {
            return None;
        }
        let calendar = self.calendar();
        let grace_end = self.grace_end(slot).filter(|end| *end > now);
        if grace_end == Some(DateTime::<Utc>::MAX_UTC) {
            // A grace too long to represent never ends.
            return None;
        }
        let mut candidates: Vec<DateTime<Utc>> = grace_end.into_iter().collect();
        // Phases after the current one, youngest first; the first start past both `now` and the
        // grace is the last candidate needed (each later phase starts later).
        for phase in &self.phases[current + 1..] {
            let Some(start) = calendar.periods_from(slot).nth(phase.min_age as usize) else {
                break;
            };
            let start = start.start();
            if start > now {
                candidates.push(start);
                if grace_end.is_none_or(|end| start > end) {
                    break;
                }
            }
        }
        candidates.sort();
        candidates
            .into_iter()
            .map(|at| (self.phase_at(slot, at), at))
            .find(|(phase, _)| *phase != current)
    }

    /// The phase new tables are created with.
    pub fn hot_phase(&self) -> &Phase {
        &self.phases[0]
    }

    /// Whether any phase has autoscaling: only then does a run read or write Application Auto
    /// Scaling (and only then does the function's role allow it).
    pub fn uses_autoscaling(&self) -> bool {
        self.phases.iter().any(|phase| phase.autoscaling.is_some())
    }

    /// The document that validates to this policy, for printing and for `ROLLOVER_POLICY`.
    pub fn to_document(&self) -> PolicyDocument {
        PolicyDocument {
            prefix: Some(self.prefix.clone()),
            period: Some(self.period.to_string()),
            timezone: Some(self.timezone.name().to_string()),
            premake: Some(i64::from(self.premake)),
            key: Some(KeySchemaDocument::from(&self.key)),
            // Absent when unused, so a policy without them keeps its hash.
            indexes: (!self.indexes.is_empty())
                .then(|| self.indexes.iter().map(IndexDocument::from).collect()),
            local_indexes: (!self.local_indexes.is_empty())
                .then(|| self.local_indexes.iter().map(LocalIndexDocument::from).collect()),
            grace: self.grace.map(|d| humantime::format_duration(d).to_string()),
            phases: Some(self.phases.iter().map(Phase::to_document).collect()),
            template: self.template.to_document(),
            retention: self.retention.as_ref().map(Retention::to_document),
            rates: self.rates.to_document(),
        }
    }
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

    /// Fills the blog's defaults and checks every field; all problems are reported at once.
    pub fn validate(&self) -> Result<Policy, PolicyError> {
        let mut errors = Vec::new();
        let mut fail = |field: &str, message: String| {
            errors.push(FieldError {
                field: field.to_string(),
                message,
            })
        };

        let period = match self.period.as_deref().unwrap_or("day").parse::<PeriodKind>() {
            Ok(period) => Some(period),
            Err(message) => {
                fail("period", message.to_string());
                None
            }
        };

        let timezone_name = self.timezone.as_deref().unwrap_or("UTC");
        let timezone = match timezone_name.parse::<Tz>() {
            Ok(tz) => Some(tz),
            Err(_) => {
                fail(
                    "timezone",
                    format!(
                        "unknown time zone {timezone_name:?}: use an IANA name such as \"UTC\", \"Europe/Berlin\" or \"America/New_York\""
                    ),
                );
                None
            }
        };

        let prefix = self.prefix.clone().unwrap_or_else(|| "timeseries".into());
        // With an invalid period, check the prefix against the shortest label, so its other
        // problems are still reported in the same answer.
        if let Err(message) = TableNaming::check_prefix(&prefix, period.unwrap_or(PeriodKind::Year)) {
            fail("prefix", message);
        }

        let premake = self.premake.unwrap_or(1);
        if !(0..=i64::from(MAX_PREMAKE)).contains(&premake) {
            fail(
                "premake",
                format!(
                    "{premake} is out of range: use 0 to {MAX_PREMAKE} periods to pre-build ahead of the current one"
                ),
            );
        }

        let key_document = self
            .key
            .clone()
            .unwrap_or_else(|| KeySchemaDocument::from(&default_key()));
        for (field, attribute) in [
            ("key.partition", Some(&key_document.partition)),
            ("key.sort", key_document.sort.as_ref()),
        ] {
            if let Some(attribute) = attribute {
                let len = attribute.name.len();
                if !(1..=255).contains(&len) {
                    fail(
                        &format!("{field}.name"),
                        format!("{:?} must be 1 to 255 bytes long", attribute.name),
                    );
                }
                if let Err(message) = attribute.attribute_kind() {
                    fail(&format!("{field}.type"), message);
                }
            }
        }
        if key_document
            .sort
            .as_ref()
            .is_some_and(|sort| sort.name == key_document.partition.name)
        {
            fail(
                "key.sort.name",
                format!(
                    "{:?} is also the partition key: use a different attribute name",
                    key_document.partition.name
                ),
            );
        }
        // `None` when a type is not valid (named above).
        let key = key_document.partition.attribute().and_then(|partition| {
            let sort = match &key_document.sort {
                None => None,
                Some(sort) => Some(sort.attribute()?),
            };
            Some(KeySchema { partition, sort })
        });

        let indexes = validate_indexes(
            &key_document,
            self.indexes.as_deref().unwrap_or_default(),
            self.local_indexes.as_deref().unwrap_or_default(),
        );
        let index_names: Vec<&str> = match &indexes {
            Ok((globals, _)) => globals.iter().map(|i| i.name.as_str()).collect(),
            Err(problems) => {
                for (name, message) in problems {
                    fail(name, message.clone());
                }
                self.indexes.iter().flatten().map(|i| i.name.as_str()).collect()
            }
        };

        let grace = match self.grace.as_deref().map(humantime::parse_duration) {
            None => None,
            Some(Ok(grace)) if grace > MAX_GRACE => {
                fail(
                    "grace",
                    format!(
                        "{:?} is longer than the 100 years allowed: use at most \"100y\" (how long a table keeps phase 0 after its period ends)",
                        self.grace.as_deref().unwrap_or_default()
                    ),
                );
                None
            }
            Some(Ok(grace)) => Some(grace),
            Some(Err(e)) => {
                fail(
                    "grace",
                    format!("{e}: use a duration such as \"90m\" or \"2h\" (how long a table keeps phase 0 after its period ends)"),
                );
                None
            }
        };

        let phases = self.phases.clone().unwrap_or_else(default_phases);
        if phases.is_empty() {
            fail(
                "phases",
                "must list at least one phase, starting with min_age = 0".into(),
            );
        }
        let mut previous_age: Option<i64> = None;
        let mut parsed_phases = Vec::new();
        for (i, phase) in phases.iter().enumerate() {
            let field = format!("phases[{i}]");
            match previous_age {
                None if phase.min_age != 0 => fail(
                    &format!("{field}.min_age"),
                    format!(
                        "the first phase must have min_age = 0 (the current and pre-built tables), not {}",
                        phase.min_age
                    ),
                ),
                Some(previous) if phase.min_age <= previous => fail(
                    &format!("{field}.min_age"),
                    format!(
                        "{} must be greater than the previous phase's min_age ({previous}): phases are listed youngest first",
                        phase.min_age
                    ),
                ),
                _ if phase.min_age > i64::from(u32::MAX) => fail(
                    &format!("{field}.min_age"),
                    format!("{} is too large", phase.min_age),
                ),
                _ => {}
            }
            previous_age = Some(phase.min_age);
            let settings = phase_settings(phase, &field, &index_names);
            if let Err(problems) = &settings {
                for (name, message) in problems {
                    fail(&format!("{field}.{name}"), message.clone());
                }
            }
            parsed_phases.push(settings.ok());
        }

        let template = match self.template.clone().unwrap_or_default().validate() {
            Ok(template) => Some(template),
            Err(problems) => {
                for (name, message) in problems {
                    fail(&format!("template.{name}"), message);
                }
                None
            }
        };
        let retention = match self.retention.as_ref().map(RetentionDocument::validate) {
            None => None,
            Some(Ok(retention)) => Some(retention),
            Some(Err(problems)) => {
                for (name, message) in problems {
                    fail(&format!("retention.{name}"), message);
                }
                None
            }
        };
        let rates = match self.rates.clone().unwrap_or_default().validate() {
            Ok(rates) => rates,
            Err(problems) => {
                for (name, message) in problems {
                    fail(&format!("rates.{name}"), message);
                }
                Rates::default()
            }
        };
        if let (Some(grace), Some(period), Some(timezone), Some(retention)) =
            (grace.filter(|g| !g.is_zero()), period, timezone, &retention)
        {
            let text = self.grace.as_deref().unwrap_or_default();
            let calendar = Calendar::new(period, timezone);
            if let Some(message) = grace_against_retention(text, grace, calendar, retention) {
                fail("grace", message);
            }
        }
        let archiving = self.retention.as_ref().is_some_and(|r| r.archive_after.is_some());
        let pitr_off = self
            .template
            .as_ref()
            .is_some_and(|t| t.point_in_time_recovery == Some(false));
        if archiving && pitr_off {
            fail(
                "template.point_in_time_recovery",
                "retention.archive_after exports with ExportTableToPointInTime, which needs point-in-time recovery: remove this or set it to true".into(),
            );
        }

        // Our scaling policies' names carry the prefix; Application Auto Scaling caps their length.
        let longest_policy_name = scaling::policy_name(&prefix, ScalableDimension::TableWrite).len();
        if phases.iter().any(|p| p.autoscaling.is_some()) && longest_policy_name > scaling::MAX_POLICY_NAME {
            fail(
                "prefix",
                format!(
                    "too long for autoscaling phases: the scaling policies are named ddb-rollover-{{prefix}}-write, at most {} characters; shorten the prefix by {}",
                    scaling::MAX_POLICY_NAME,
                    longest_policy_name - scaling::MAX_POLICY_NAME
                ),
            );
        }

        if !errors.is_empty() {
            return Err(PolicyError::Invalid(errors));
        }
        let (indexes, local_indexes) = indexes.expect("checked above");
        Ok(Policy {
            indexes,
            local_indexes,
            grace: grace.filter(|g| !g.is_zero()),
            template: template.expect("checked above"),
            retention,
            rates,
            prefix,
            period: period.expect("checked above"),
            timezone: timezone.expect("checked above"),
            premake: premake as u32,
            key: key.expect("checked above"),
            phases: phases
                .iter()
                .zip(parsed_phases)
                .map(|(p, settings)| Phase {
                    min_age: p.min_age as u32,
                    ..settings.expect("checked above")
                })
                .collect(),
        })
    }
}

/// The blog's key: numeric partition and sort keys `pk` / `sk`.
fn default_key() -> KeySchema {
    KeySchema {
        partition: KeyAttribute {
            name: "pk".into(),
            kind: AttributeKind::N,
        },
        sort: Some(KeyAttribute {
            name: "sk".into(),
            kind: AttributeKind::N,
        }),
    }
}

/// Why a table would still be in its write grace when retention archives or deletes it, if it
/// would. A table of period `s` is archived or deleted when its age reaches N, at the start of
/// period `s + N`; its grace runs from the end of `s`, the start of `s + 1`. So the grace may
/// last as long as the shortest N - 1 periods of the policy's calendar, and no longer.
fn grace_against_retention(
    text: &str,
    grace: Duration,
    calendar: Calendar,
    retention: &Retention,
) -> Option<String> {
    let grace = chrono::Duration::from_std(grace).unwrap_or(chrono::Duration::MAX);
    // (field, N, the longest grace that ends by age N) for each limit the grace passes.
    let broken: Vec<(&str, u32, chrono::Duration)> = [
        (
            "retention.archive_after",
            retention.archive.as_ref().map(|a| a.after),
        ),
        ("retention.delete_after", retention.delete_after),
    ]
    .into_iter()
    .filter_map(|(field, periods)| {
        let periods = periods?;
        Some((field, periods, calendar.shortest_span(periods.saturating_sub(1))))
    })
    .filter(|(_, _, allowed)| grace > *allowed)
    .collect();
    let (tightest_field, tightest, bound) = broken.iter().copied().min_by_key(|(_, periods, _)| *periods)?;
    let plural = |n: u32| if n == 1 { "" } else { "s" };
    let fields: Vec<String> = broken
        .iter()
        .map(|(field, n, _)| format!("{field} ({n} period{})", plural(*n)))
        .collect();
    let fields = fields.join(" and ");
    if bound <= chrono::Duration::zero() {
        return Some(format!(
            "{text:?} must end before {fields}, but with {tightest_field} = 1 a table is archived or deleted as soon as its period ends: no grace is possible; remove the grace or raise {tightest_field}"
        ));
    }
    let bound_text = humantime::format_duration(bound.to_std().unwrap_or_default());
    let periods = tightest - 1;
    Some(format!(
        "{text:?} must end before {fields}: at most {bound_text} with period = \"{}\" in {}, the shortest {periods} period{} there (a grace starts when a table's period ends; retention acts when its age reaches {tightest}); shorten the grace or raise {}",
        calendar.kind(),
        calendar.tz().name(),
        plural(periods),
        broken.iter().map(|(field, _, _)| *field).collect::<Vec<_>>().join(" and "),
    ))
}

/// The blog's capacities: today 300/1000, yesterday 100/1, older 1/1.
fn default_phases() -> Vec<PhaseDocument> {
    [(0, 300, 1000), (1, 100, 1), (2, 1, 1)]
        .into_iter()
        .map(|(min_age, read, write)| PhaseDocument {
            min_age,
            read: Some(read),
            write: Some(write),
            ..PhaseDocument::default()
        })
        .collect()
}

/// Problems with one phase: (field within the phase, what to change).
type PhaseProblems = Vec<(String, String)>;

/// A phase's settings (its `min_age` left at 0), or every problem with it. `indexes`: the
/// policy's global secondary index names, which `index_overrides` may name.
fn phase_settings(phase: &PhaseDocument, field: &str, indexes: &[&str]) -> Result<Phase, PhaseProblems> {
    let mut problems: PhaseProblems = Vec::new();
    let table_class = match phase.table_class.as_deref().map(TableClass::from_policy_str) {
        None => None,
        Some(Ok(class)) => Some(class),
        Some(Err(message)) => {
            problems.push(("table_class".into(), message));
            None
        }
    };
    let positive = |problems: &mut PhaseProblems, name: &str, value: Option<i64>| {
        if let Some(units) = value.filter(|units| *units < 1) {
            problems.push((
                name.to_string(),
                format!("{units} is below DynamoDB's minimum: use 1 or more"),
            ));
        }
    };
    let only_with = |problems: &mut PhaseProblems, fields: &[(&str, bool)], what: &str| {
        for (name, set) in fields {
            if *set {
                problems.push((name.to_string(), what.to_string()));
            }
        }
    };
    let index_fields_set = phase.index_read.is_some()
        || phase.index_write.is_some()
        || phase.index_overrides.is_some()
        || phase.index_max_read.is_some()
        || phase.index_max_write.is_some();
    if indexes.is_empty() && index_fields_set {
        problems.push((
            "index_read".into(),
            "index capacity without [[indexes]]: remove the index_* fields, or add the global secondary indexes".into(),
        ));
    }
    let mut autoscaling = None;
    let (billing, index_billing) = match phase.billing.as_deref().unwrap_or("provisioned") {
        "provisioned" if phase.autoscaling.is_some() => {
            only_with(
                &mut problems,
                &[
                    ("read", phase.read.is_some()),
                    ("write", phase.write.is_some()),
                    ("max_read", phase.max_read.is_some()),
                    ("max_write", phase.max_write.is_some()),
                    ("index_read", phase.index_read.is_some()),
                    ("index_write", phase.index_write.is_some()),
                    ("index_overrides", phase.index_overrides.is_some()),
                    ("index_max_read", phase.index_max_read.is_some()),
                    ("index_max_write", phase.index_max_write.is_some()),
                ],
                &format!(
                    "not used with {field}.autoscaling (the autoscaler sets the capacity of the table and its indexes between its bounds): remove it"
                ),
            );
            autoscaling = autoscaling_bounds(phase.autoscaling.as_ref().expect("matched"), &mut problems);
            let a = autoscaling.unwrap_or(Autoscaling {
                min_read: 1,
                max_read: 1,
                min_write: 1,
                max_write: 1,
                target: scaling::DEFAULT_TARGET,
            });
            // CreateTable starts a table and its indexes at the minimums; the autoscaler raises
            // them from there.
            let minimums = Billing::Provisioned(Capacity {
                read: a.min_read,
                write: a.min_write,
            });
            (minimums, minimums)
        }
        "provisioned" => {
            only_with(
                &mut problems,
                &[
                    ("max_read", phase.max_read.is_some()),
                    ("max_write", phase.max_write.is_some()),
                    ("index_max_read", phase.index_max_read.is_some()),
                    ("index_max_write", phase.index_max_write.is_some()),
                ],
                &format!("only for on-demand phases: remove it, or set {field}.billing = \"on_demand\""),
            );
            for (name, value) in [("read", phase.read), ("write", phase.write)] {
                if value.is_none() {
                    problems.push((
                        name.into(),
                        format!("required for a provisioned phase (capacity units, 1 or more), or set {field}.billing = \"on_demand\""),
                    ));
                }
                positive(&mut problems, name, value);
            }
            positive(&mut problems, "index_read", phase.index_read);
            positive(&mut problems, "index_write", phase.index_write);
            for (index, capacity) in phase.index_overrides.iter().flatten() {
                if !indexes.is_empty() && !indexes.contains(&index.as_str()) {
                    problems.push((
                        format!("index_overrides.{index}"),
                        format!(
                            "no index {index:?} in [[indexes]]: use one of {}",
                            indexes.join(", ")
                        ),
                    ));
                }
                positive(
                    &mut problems,
                    &format!("index_overrides.{index}.read"),
                    Some(capacity.read),
                );
                positive(
                    &mut problems,
                    &format!("index_overrides.{index}.write"),
                    Some(capacity.write),
                );
            }
            let table = Capacity {
                read: phase.read.unwrap_or(1),
                write: phase.write.unwrap_or(1),
            };
            (
                Billing::Provisioned(table),
                Billing::Provisioned(Capacity {
                    read: phase.index_read.unwrap_or(table.read),
                    write: phase.index_write.unwrap_or(table.write),
                }),
            )
        }
        "on_demand" => {
            let unused = "not used by an on-demand phase: remove it (max_read / max_write and index_max_read / index_max_write cap on-demand throughput)";
            only_with(
                &mut problems,
                &[
                    ("read", phase.read.is_some()),
                    ("write", phase.write.is_some()),
                    ("index_read", phase.index_read.is_some()),
                    ("index_write", phase.index_write.is_some()),
                    ("index_overrides", phase.index_overrides.is_some()),
                    ("autoscaling", phase.autoscaling.is_some()),
                ],
                unused,
            );
            for (name, value) in [
                ("max_read", phase.max_read),
                ("max_write", phase.max_write),
                ("index_max_read", phase.index_max_read),
                ("index_max_write", phase.index_max_write),
            ] {
                positive(&mut problems, name, value);
            }
            (
                Billing::OnDemand(OnDemandLimits {
                    max_read: phase.max_read,
                    max_write: phase.max_write,
                }),
                Billing::OnDemand(OnDemandLimits {
                    max_read: phase.index_max_read,
                    max_write: phase.index_max_write,
                }),
            )
        }
        other => {
            problems.push((
                "billing".into(),
                format!("unknown billing {other:?}: use \"provisioned\" or \"on_demand\""),
            ));
            let any = Billing::OnDemand(OnDemandLimits::default());
            (any, any)
        }
    };
    if problems.is_empty() {
        Ok(Phase {
            min_age: 0,
            billing,
            index_billing,
            index_overrides: phase.index_overrides.clone().unwrap_or_default(),
            table_class,
            autoscaling,
        })
    } else {
        Err(problems)
    }
}

/// A phase's autoscaling bounds, or `None` after naming every problem with them.
fn autoscaling_bounds(doc: &AutoscalingDocument, problems: &mut PhaseProblems) -> Option<Autoscaling> {
    let before = problems.len();
    // `None` after naming the problem: a missing or invalid bound is not compared.
    let mut required = |name: &'static str, value: Option<i64>| match value {
        None => {
            problems.push((
                name.to_string(),
                "required for autoscaling (capacity units, 1 or more)".to_string(),
            ));
            None
        }
        Some(units) if units < 1 => {
            problems.push((
                name.to_string(),
                format!("{units} is below DynamoDB's minimum: use 1 or more"),
            ));
            None
        }
        Some(units) => Some(units),
    };
    let min_read = required("autoscaling.min_read", doc.min_read);
    let max_read = required("autoscaling.max_read", doc.max_read);
    let min_write = required("autoscaling.min_write", doc.min_write);
    let max_write = required("autoscaling.max_write", doc.max_write);
    for (name, min_name, min, max) in [
        ("autoscaling.max_read", "min_read", min_read, max_read),
        ("autoscaling.max_write", "min_write", min_write, max_write),
    ] {
        let (Some(min), Some(max)) = (min, max) else {
            continue;
        };
        if max < min {
            problems.push((
                name.to_string(),
                format!("{max} is below {min_name} ({min}): use at least {min}"),
            ));
        }
    }
    let target = doc.target.unwrap_or(i64::from(scaling::DEFAULT_TARGET));
    if !scaling::TARGET_RANGE.contains(&target) {
        problems.push((
            "autoscaling.target".into(),
            format!(
                "{target} is out of range: use a target utilisation of {} to {} percent",
                scaling::TARGET_RANGE.start(),
                scaling::TARGET_RANGE.end()
            ),
        ));
    }
    if problems.len() > before {
        return None;
    }
    Some(Autoscaling {
        min_read: min_read?,
        max_read: max_read?,
        min_write: min_write?,
        max_write: max_write?,
        target: target as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_document_gives_the_blogs_defaults() {
        let policy = Policy::from_toml("").unwrap();
        assert_eq!(policy.prefix, "timeseries");
        assert_eq!(policy.period, PeriodKind::Day);
        assert_eq!(policy.timezone, Tz::UTC);
        assert_eq!(policy.premake, 1);
        assert_eq!(policy.key, default_key());
        let caps: Vec<_> = policy
            .phases
            .iter()
            .map(|p| (p.min_age, p.billing, p.table_class))
            .collect();
        let provisioned = |read, write| Billing::Provisioned(Capacity { read, write });
        assert_eq!(
            caps,
            vec![
                (0, provisioned(300, 1000), None),
                (1, provisioned(100, 1), None),
                (2, provisioned(1, 1), None)
            ]
        );
    }

    #[test]
    fn toml_and_json_agree() {
        let toml = r#"
            prefix = "metrics"
            period = "hour"
            timezone = "Europe/Berlin"
            premake = 3
            [key]
            partition = { name = "device", type = "S" }
            [[phases]]
            min_age = 0
            read = 10
            write = 50
            [[phases]]
            min_age = 24
            read = 1
            write = 1
        "#;
        let json = r#"{"prefix":"metrics","period":"hour","timezone":"Europe/Berlin","premake":3,
            "key":{"partition":{"name":"device","type":"S"}},
            "phases":[{"min_age":0,"read":10,"write":50},{"min_age":24,"read":1,"write":1}]}"#;
        let a = Policy::from_toml(toml).unwrap();
        let b = Policy::from_json(json).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.period, PeriodKind::Hours(1));
        assert_eq!(a.key.sort, None);
        assert_eq!(
            Policy::from_json(&serde_json::to_string(&a.to_document()).unwrap()).unwrap(),
            a
        );
    }

    #[test]
    fn unknown_keys_are_rejected_with_their_name() {
        let err = Policy::from_toml("prefx = \"x\"").unwrap_err();
        assert!(err.to_string().contains("prefx"), "{err}");
        let err = Policy::from_json(r#"{"phases":[{"min_age":0,"read":1,"write":1,"rcu":5}]}"#).unwrap_err();
        assert!(err.to_string().contains("rcu"), "{err}");
    }

    fn invalid_fields(toml: &str) -> Vec<String> {
        match Policy::from_toml(toml) {
            Err(PolicyError::Invalid(fields)) => fields.into_iter().map(|f| f.field).collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn every_bad_field_is_named() {
        assert_eq!(invalid_fields("period = \"fortnight\""), ["period"]);
        assert_eq!(invalid_fields("timezone = \"Mars/Olympus\""), ["timezone"]);
        assert_eq!(invalid_fields("prefix = \"bad name!\""), ["prefix"]);
        assert_eq!(invalid_fields("prefix = \"\""), ["prefix"]);
        assert_eq!(
            invalid_fields(&format!("prefix = \"{}\"", "p".repeat(250))),
            ["prefix"]
        );
        // A bad period does not hide a bad prefix, nor the reverse.
        assert_eq!(
            invalid_fields("prefix = \"a b\"\nperiod = \"x\"\ntimezone = \"Nowhere\"\npremake = -1"),
            ["period", "timezone", "prefix", "premake"]
        );
        assert_eq!(invalid_fields("premake = -1"), ["premake"]);
        assert_eq!(invalid_fields("premake = 101"), ["premake"]);
        assert_eq!(
            invalid_fields("[key]\npartition = { name = \"\", type = \"S\" }"),
            ["key.partition.name"]
        );
        assert_eq!(
            invalid_fields(
                "[key]\npartition = { name = \"a\", type = \"S\" }\nsort = { name = \"a\", type = \"N\" }"
            ),
            ["key.sort.name"]
        );
        assert_eq!(invalid_fields("phases = []"), ["phases"]);
        assert_eq!(
            invalid_fields("[[phases]]\nmin_age = 1\nread = 1\nwrite = 1"),
            ["phases[0].min_age"]
        );
        assert_eq!(
            invalid_fields(
                "[[phases]]\nmin_age = 0\nread = 0\nwrite = 1\n[[phases]]\nmin_age = 0\nread = 1\nwrite = -5"
            ),
            ["phases[0].read", "phases[1].min_age", "phases[1].write"]
        );
    }

    #[test]
    fn phase_billing_and_class_rules() {
        let phase = |body: &str| format!("[[phases]]\nmin_age = 0\n{body}");
        assert_eq!(
            invalid_fields(&phase("billing = \"on_demand\"\nread = 5")),
            ["phases[0].read"]
        );
        assert_eq!(invalid_fields(&phase("read = 5")), ["phases[0].write"]);
        assert_eq!(
            invalid_fields(&phase("read = 5\nwrite = 5\nmax_read = 9")),
            ["phases[0].max_read"]
        );
        assert_eq!(
            invalid_fields(&phase("billing = \"spot\"")),
            ["phases[0].billing"]
        );
        assert_eq!(
            invalid_fields(&phase("billing = \"on_demand\"\nmax_write = 0")),
            ["phases[0].max_write"]
        );
        assert_eq!(
            invalid_fields(&phase("billing = \"on_demand\"\ntable_class = \"glacier\"")),
            ["phases[0].table_class"]
        );
        let policy =
            Policy::from_toml(&phase("billing = \"on_demand\"\ntable_class = \"standard_ia\"")).unwrap();
        assert_eq!(
            policy.phases[0].billing,
            Billing::OnDemand(OnDemandLimits::default())
        );
        assert_eq!(policy.phases[0].table_class, Some(TableClass::StandardIa));
        let round_trip = Policy::from_json(&serde_json::to_string(&policy.to_document()).unwrap()).unwrap();
        assert_eq!(round_trip, policy);
    }

    #[test]
    fn autoscaling_phases() {
        let phase = |body: &str| {
            format!("[[phases]]\nmin_age = 0\n{body}\n[[phases]]\nmin_age = 1\nread = 1\nwrite = 1")
        };
        let policy = Policy::from_toml(&phase(
            "autoscaling = { min_read = 5, max_read = 500, min_write = 10, max_write = 1000 }",
        ))
        .unwrap();
        let hot = &policy.phases[0];
        assert_eq!(
            hot.autoscaling,
            Some(Autoscaling {
                min_read: 5,
                max_read: 500,
                min_write: 10,
                max_write: 1000,
                target: 70
            })
        );
        // CreateTable starts at the minimums.
        assert_eq!(hot.billing, Billing::Provisioned(Capacity { read: 5, write: 10 }));
        assert!(policy.uses_autoscaling());
        assert!(!Policy::default().uses_autoscaling());
        assert_eq!(policy.phases[1].autoscaling, None);
        let round_trip = Policy::from_json(&serde_json::to_string(&policy.to_document()).unwrap()).unwrap();
        assert_eq!(round_trip, policy);
        let json = Policy::from_json(
            r#"{"phases":[{"min_age":0,"autoscaling":{"min_read":5,"max_read":500,"min_write":10,"max_write":1000,"target":70}},
                {"min_age":1,"read":1,"write":1}]}"#,
        )
        .unwrap();
        assert_eq!(json, policy);

        // Every bad field named, at once.
        assert_eq!(
            invalid_fields(&phase(
                "read = 5\nwrite = 5\nautoscaling = { min_read = 0, max_read = 500, max_write = 3, min_write = 4, target = 95 }"
            )),
            [
                "phases[0].read",
                "phases[0].write",
                "phases[0].autoscaling.min_read",
                "phases[0].autoscaling.max_write",
                "phases[0].autoscaling.target",
            ]
        );
        assert_eq!(
            invalid_fields(&phase("autoscaling = { min_read = 5 }")),
            [
                "phases[0].autoscaling.max_read",
                "phases[0].autoscaling.min_write",
                "phases[0].autoscaling.max_write",
            ]
        );
        assert_eq!(
            invalid_fields(&phase(
                "billing = \"on_demand\"\nautoscaling = { min_read = 1, max_read = 1, min_write = 1, max_write = 1 }"
            )),
            ["phases[0].autoscaling"]
        );
        assert_eq!(
            invalid_fields(&phase(
                "autoscaling = { min_read = 1, max_read = 1, min_write = 1, max_write = 1, target = 19 }"
            )),
            ["phases[0].autoscaling.target"]
        );
        let err = Policy::from_toml(&phase(
            "autoscaling = { min_read = 1, max_read = 1, min_write = 1, max_write = 1, scale_in = false }",
        ))
        .unwrap_err();
        assert!(err.to_string().contains("scale_in"), "{err}");
        let err = Policy::from_toml(&phase(
            "autoscaling = { min_read = 9, max_read = 5, min_write = 1, max_write = 1, target = 91 }",
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("below min_read (9)") && err.contains("20 to 90"),
            "{err}"
        );
        // The prefix must leave room for our scaling policies' names.
        let long = format!(
            "prefix = \"{}\"\n{}",
            "p".repeat(240),
            phase("autoscaling = { min_read = 1, max_read = 1, min_write = 1, max_write = 1 }")
        );
        assert_eq!(invalid_fields(&long), ["prefix"]);
    }

    #[test]
    fn messages_say_what_is_allowed() {
        let err = Policy::from_toml("premake = 500").unwrap_err().to_string();
        assert!(err.contains("premake") && err.contains("0 to 100"), "{err}");
        let err = Policy::from_toml("period = \"5h\"").unwrap_err().to_string();
        assert!(err.contains("period") && err.contains("day"), "{err}");
        let err = Policy::from_toml("key = { partition = { name = \"a\", type = \"X\" } }")
            .unwrap_err()
            .to_string();
        assert!(err.contains("X"), "{err}");
    }

    #[test]
    fn indexes_and_grace_round_trip_and_every_bad_field_is_named() {
        let good = r#"
            grace = "90m"
            [key]
            partition = { name = "pk", type = "S" }
            sort = { name = "sk", type = "S" }
            [[indexes]]
            name = "by_device"
            partition = { name = "device", type = "S" }
            sort = { name = "sk", type = "S" }
            projection = "keys_only"
            [[indexes]]
            name = "by_site"
            partition = { name = "site", type = "S" }
            projection = { include = ["temp"] }
            [[local_indexes]]
            name = "by_time"
            sort = { name = "ts", type = "N" }
            [[phases]]
            min_age = 0
            read = 50
            write = 500
            index_read = 20
            index_overrides = { by_site = { read = 3, write = 4 } }
            [[phases]]
            min_age = 1
            billing = "on_demand"
            index_max_read = 9
        "#;
        let policy = Policy::from_toml(good).unwrap();
        assert_eq!(policy.grace, Some(Duration::from_secs(90 * 60)));
        assert_eq!(policy.indexes.len(), 2);
        assert_eq!(
            policy.local_indexes[0].projection,
            crate::policy::settings::Projection::All
        );
        let hot = policy.hot_phase();
        let provisioned = |read, write| Billing::Provisioned(Capacity { read, write });
        assert_eq!(hot.billing_of_index("by_device"), provisioned(20, 500));
        assert_eq!(hot.billing_of_index("by_site"), provisioned(3, 4));
        assert_eq!(
            policy.phases[1].billing_of_index("by_device"),
            Billing::OnDemand(OnDemandLimits {
                max_read: Some(9),
                max_write: None
            })
        );
        let round_trip = Policy::from_json(&serde_json::to_string(&policy.to_document()).unwrap()).unwrap();
        assert_eq!(round_trip, policy);
        // Without indexes or grace the document, and so the hash, is what it was before them.
        let plain = serde_json::to_value(Policy::default().to_document()).unwrap();
        for absent in ["indexes", "local_indexes", "grace"] {
            assert!(plain.get(absent).is_none(), "{absent}");
        }
        assert!(plain["phases"][0].get("index_read").is_none());

        let bad = r#"
            grace = "soon"
            [key]
            partition = { name = "pk", type = "S" }
            [[indexes]]
            name = "x"
            partition = { name = "pk", type = "N" }
            projection = "some"
            [[indexes]]
            name = "by_site"
            partition = { name = "site", type = "S" }
            sort = { name = "site", type = "S" }
            projection = { include = ["pk"] }
            [[local_indexes]]
            name = "by_site"
            sort = { name = "ts", type = "N" }
            [[phases]]
            min_age = 0
            read = 1
            write = 1
            index_max_read = 5
            index_overrides = { nope = { read = 1, write = 0 } }
        "#;
        assert_eq!(
            invalid_fields(bad),
            [
                "local_indexes",
                "indexes[0].partition.type",
                "indexes[0].name",
                "indexes[0].projection",
                "indexes[1].sort.name",
                "indexes[1].projection",
                "local_indexes[0].name",
                "grace",
                "phases[0].index_max_read",
                "phases[0].index_overrides.nope",
                "phases[0].index_overrides.nope.write",
            ]
        );
        assert_eq!(
            invalid_fields("[[phases]]\nmin_age = 0\nread = 1\nwrite = 1\nindex_read = 2"),
            ["phases[0].index_read"]
        );
    }

    #[test]
    fn phase_lookup_by_age() {
        let policy = Policy::default();
        assert_eq!(policy.phase_index_for_age(-3), 0);
        assert_eq!(policy.phase_index_for_age(0), 0);
        assert_eq!(policy.phase_index_for_age(1), 1);
        assert_eq!(policy.phase_index_for_age(2), 2);
        assert_eq!(policy.phase_index_for_age(400), 2);
    }

    fn at(rfc3339: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(rfc3339).unwrap().to_utc()
    }

    #[test]
    fn phase_at_keeps_phase_0_through_the_grace_then_follows_the_age() {
        // Daily tables, phases at ages 0, 1 and 2, a grace of 3 periods.
        let policy = Policy::from_toml("grace = \"3d\"").unwrap();
        let slot = policy.calendar().floor(at("2018-10-25T12:00:00Z"));
        for (instant, phase) in [
            ("2018-10-24T12:00:00Z", 0),
            ("2018-10-25T12:00:00Z", 0),
            ("2018-10-26T00:00:00Z", 0),
            ("2018-10-28T23:59:59Z", 0),
            // The grace ends at age 4: straight to the last phase.
            ("2018-10-29T00:00:00Z", 2),
            ("2019-01-01T00:00:00Z", 2),
        ] {
            assert_eq!(policy.phase_at(slot, at(instant)), phase, "{instant}");
        }
        let without = Policy::default();
        assert_eq!(without.phase_at(slot, at("2018-10-25T23:59:59Z")), 0);
        assert_eq!(without.phase_at(slot, at("2018-10-26T00:00:00Z")), 1);
        assert_eq!(without.phase_at(slot, at("2018-10-27T00:00:00Z")), 2);
    }

    #[test]
    fn the_next_phase_change_is_the_first_instant_the_phase_differs() {
        let policy = Policy::from_toml("grace = \"3d\"").unwrap();
        let slot = policy.calendar().floor(at("2018-10-25T12:00:00Z"));
        let next = |now| policy.next_phase_change(slot, at(now));
        // Phase 1's start (age 1) falls inside the grace: the change is the grace's end, to 2.
        for now in [
            "2018-10-24T00:00:00Z",
            "2018-10-25T12:00:00Z",
            "2018-10-27T12:00:00Z",
        ] {
            assert_eq!(next(now), Some((2, at("2018-10-29T00:00:00Z"))), "{now}");
        }
        assert_eq!(next("2018-10-29T00:00:00Z"), None, "in the last phase");

        // Phases at 0, 1 and 5: the grace ends in phase 1, phase 2 follows at age 5.
        let policy = Policy::from_toml(
            "grace = \"3d\"\n[[phases]]\nmin_age = 0\nread = 9\nwrite = 9\n[[phases]]\nmin_age = 1\nread = 5\nwrite = 5\n[[phases]]\nmin_age = 5\nread = 1\nwrite = 1",
        )
        .unwrap();
        let next = |now| policy.next_phase_change(slot, at(now));
        assert_eq!(
            next("2018-10-26T06:00:00Z"),
            Some((1, at("2018-10-29T00:00:00Z")))
        );
        assert_eq!(
            next("2018-10-29T00:00:00Z"),
            Some((2, at("2018-10-30T00:00:00Z")))
        );
        assert_eq!(next("2018-10-30T00:00:00Z"), None);

        // A grace shorter than a period delays only phase 1.
        let policy = Policy::from_toml("grace = \"2h\"").unwrap();
        let next = |now| policy.next_phase_change(slot, at(now));
        assert_eq!(
            next("2018-10-25T23:45:00Z"),
            Some((1, at("2018-10-26T02:00:00Z")))
        );
        assert_eq!(
            next("2018-10-26T02:15:00Z"),
            Some((2, at("2018-10-27T00:00:00Z")))
        );
        // Without a grace, phase by phase; a future table starts with phase 1 at its age 1.
        let policy = Policy::default();
        assert_eq!(
            policy.next_phase_change(slot, at("2018-10-20T00:00:00Z")),
            Some((1, at("2018-10-26T00:00:00Z")))
        );
        // One phase only: nothing ever changes.
        let single = Policy::from_toml("[[phases]]\nmin_age = 0\nread = 1\nwrite = 1").unwrap();
        assert_eq!(single.next_phase_change(slot, at("2018-10-20T00:00:00Z")), None);
        // A hand-built grace too long to add never ends: phase 0 for good.
        let forever = Policy {
            grace: Some(Duration::MAX),
            ..Policy::default()
        };
        assert_eq!(forever.phase_at(slot, at("9000-01-01T00:00:00Z")), 0);
        assert_eq!(forever.next_phase_change(slot, at("2018-10-26T00:00:00Z")), None);
    }

    #[test]
    fn longest_table_name_fits() {
        let longest_ok = 255 - 1 - crate::policy::naming::max_label_len(PeriodKind::Day);
        let doc = PolicyDocument {
            prefix: Some("p".repeat(longest_ok)),
            ..Default::default()
        };
        assert!(doc.validate().is_ok());
        let doc = PolicyDocument {
            prefix: Some("p".repeat(longest_ok + 1)),
            ..Default::default()
        };
        assert!(doc.validate().is_err());
        assert_eq!(crate::policy::naming::MAX_TABLE_NAME, 255);
    }
}
