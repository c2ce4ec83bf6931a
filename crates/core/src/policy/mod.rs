//! The lifecycle policy: which tables exist, what they are called, and what each looks like
//! at each age. One document (TOML or JSON) serves the CLI and the Lambda functions.
//!
//! Parsing is two-step: serde reads a [`PolicyDocument`] whose every field is optional and
//! unknown keys are rejected; [`PolicyDocument::validate`] fills the blog's defaults and checks
//! every field, naming the field and what is allowed, before anything talks to AWS.

pub(crate) mod blueprint;
pub(crate) mod indexes;
pub(crate) mod limits;
pub(crate) mod naming;
pub(crate) mod period;
pub(crate) mod rates;
pub(crate) mod retention;
pub(crate) mod scaling;
pub(crate) mod settings;
pub(crate) mod stream;
pub mod strict_json;
pub(crate) mod tags;
pub(crate) mod warm;

mod document;
mod validate;

pub use document::{AutoscalingDocument, PhaseDocument, PolicyDocument, POLICY_ENV};
pub use validate::{FieldError, PolicyError};

// The policy's vocabulary, one name each (the submodules are the engine's own layout).
pub use blueprint::BlueprintDocument;
pub use limits::TABLE_QUOTA_ADVICE;
pub use naming::{Ownership, TableNaming};
pub use period::{Calendar, LabelError, PeriodKind, Slot};
pub use retention::RetentionDocument;
pub use scaling::{
    left_registered, policy_name, resource_id, scalable_keys, table_of, Autoscaling, DeregisterScaling,
    ObservedScalableTarget, ObservedScalingPolicy, RegisterScaling, ScalableDimension, ScalableKey,
    ScalingRemoval, ScalingTarget, TargetValue,
};
pub use settings::{
    AttributeKind, Billing, Capacity, Encryption, GlobalIndex, KeyAttribute, KeyAttributeDocument, KeySchema,
    KeySchemaDocument, LocalIndex, OnDemandLimits, Projection, StreamSetting, StreamView, TableClass,
};
pub use stream::{
    FunctionArn, KinesisDestination, KinesisStreamArn, LambdaConsumer, LambdaDocument, Precision,
    StartingPosition, StreamDocument, AWS_PARTITIONS,
};
pub use tags::{
    export_arn_from_tag, TAG_ARCHIVED, TAG_EXPORT, TAG_FAMILY, TAG_FINAL_EXPORT, TAG_KEEP_UNTIL,
    TAG_LAST_DEFERRAL, TAG_PERIOD_END, TAG_PERIOD_START, TAG_POLICY_HASH, TAG_SEALED,
};
pub use warm::WarmThroughput;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::policy::blueprint::Blueprint;
use crate::policy::indexes::{IndexDocument, LocalIndexDocument};
use crate::policy::rates::Rates;
use crate::policy::retention::Retention;
use crate::policy::stream::ChangeStream;
use crate::policy::warm::WarmDocument;

/// Upper bound for `premake`: each run may create `premake + 1` tables at once, and DynamoDB
/// allows at most 500 tables in CREATING at a time (fewer on new accounts).
pub(crate) const MAX_PREMAKE: u32 = 100;

/// Upper bound for `grace`: 100 years (humantime's years of 365.25 days), so that the end of
/// any table's grace is an instant chrono can represent.
pub(crate) const MAX_GRACE: Duration = Duration::from_secs(100 * 31_557_600);

/// A validated policy. Build one with [`Policy::from_toml`], [`Policy::from_json`],
/// [`Policy::load`] or [`PolicyDocument::validate`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Policy {
    /// The start of every table name, before the period label.
    pub prefix: String,
    /// How long each table's period is.
    pub period: PeriodKind,
    /// The time zone periods start and end in.
    pub timezone: Tz,
    /// How many future periods' tables to create ahead of time.
    pub premake: u32,
    /// Every table's partition key and optional sort key.
    pub key: KeySchema,
    /// Global secondary indexes every table is created with (and current and pre-built tables
    /// get when the policy adds one).
    pub indexes: Vec<GlobalIndex>,
    /// Local secondary indexes, created with each table (DynamoDB cannot add them later).
    pub local_indexes: Vec<LocalIndex>,
    /// The phases, by ascending `min_age`; the first has `min_age` 0.
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
    /// The family's one change stream (`[stream]`).
    #[serde(skip_serializing_if = "ChangeStream::is_empty")]
    pub stream: ChangeStream,
}

/// The settings a table should have once it is at least `min_age` periods old.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Phase {
    /// How many periods old a table is when it enters this phase.
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
    /// Warm throughput for the table and each of the policy's global indexes: set at
    /// CreateTable, raised on a table below it, never lowered; `None` leaves it to DynamoDB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmThroughput>,
}

impl Phase {
    fn to_document(&self) -> PhaseDocument {
        let mut doc = PhaseDocument {
            min_age: i64::from(self.min_age),
            table_class: self.table_class.map(|c| c.as_policy_str().to_string()),
            index_overrides: (!self.index_overrides.is_empty()).then(|| self.index_overrides.clone()),
            warm: self.warm.map(WarmDocument::from),
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

impl Default for Policy {
    fn default() -> Self {
        PolicyDocument::default()
            .validate()
            .expect("the default policy is valid")
    }
}

impl Policy {
    /// Reads and validates a policy written in TOML.
    pub fn from_toml(text: &str) -> Result<Policy, PolicyError> {
        PolicyDocument::from_toml(text)?.validate()
    }

    /// Reads and validates a policy written in JSON.
    pub fn from_json(text: &str) -> Result<Policy, PolicyError> {
        PolicyDocument::from_json(text)?.validate()
    }

    /// Reads a policy file: `.json` as JSON, anything else as TOML.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        PolicyDocument::load(path)?.validate()
    }

    /// The policy's period kind in its time zone.
    pub fn calendar(&self) -> Calendar {
        Calendar::new(self.period, self.timezone)
    }

    /// How the policy's tables are named, and how a name is read back.
    pub fn naming(&self) -> TableNaming {
        TableNaming::new(&self.prefix, self.calendar())
    }

    /// The phase for a table `age` periods old; current and future tables get phase 0.
    pub(crate) fn phase_index_for_age(&self, age: i64) -> usize {
        self.phases
            .iter()
            .rposition(|phase| i64::from(phase.min_age) <= age)
            .unwrap_or(0)
    }

    /// The phase for a table `age` periods old; current and future tables get phase 0.
    pub fn phase_for_age(&self, age: i64) -> &Phase {
        &self.phases[self.phase_index_for_age(age)]
    }

    /// Whether tables need point-in-time recovery: asked for, or needed by archive exports.
    pub fn wants_point_in_time_recovery(&self) -> bool {
        self.template.point_in_time_recovery || self.archive().is_some()
    }

    /// Where old tables are exported before deletion; `None` when they are not archived.
    pub fn archive(&self) -> Option<&crate::policy::retention::Archive> {
        self.retention.as_ref().and_then(|r| r.archive.as_ref())
    }

    /// Whether retention deletes tables (`delete_after` is set).
    pub fn deletes(&self) -> bool {
        self.retention.as_ref().is_some_and(|r| r.delete_after.is_some())
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
    /// `MAX_GRACE`, so only a policy built by hand gets there).
    pub fn grace_end(&self, slot: Slot) -> Option<DateTime<Utc>> {
        let end = self.calendar().end(slot);
        let grace = chrono::Duration::from_std(self.grace?).unwrap_or(chrono::Duration::MAX);
        Some(end.checked_add_signed(grace).unwrap_or(DateTime::<Utc>::MAX_UTC))
    }

    /// The phase a table of `slot` is in at `at`: phase 0 until its grace ends (see
    /// [`grace_end`](Self::grace_end)), then the phase for its age at that instant (the
    /// periods from its own to the one holding `at`).
    pub(crate) fn phase_at(&self, slot: Slot, at: DateTime<Utc>) -> usize {
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
    pub(crate) fn next_phase_change(&self, slot: Slot, now: DateTime<Utc>) -> Option<(usize, DateTime<Utc>)> {
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
            stream: self.stream.to_document(),
        }
    }
}

#[cfg(test)]
mod tests;
