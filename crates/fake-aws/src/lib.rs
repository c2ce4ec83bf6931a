//! An in-memory DynamoDB and Application Auto Scaling for property tests of the engine.
//!
//! [`FakeAws`] implements [`ddb_rollover::ControlPlane`] and models what AWS documents,
//! independently of the engine's planner (it never asks the engine's limits or decision helpers
//! what to do):
//!
//! - its own clock, moved by the harness ([`FakeAws::set_now`], [`FakeAws::advance`]) and by
//!   [`ControlPlane::sleep`], which returns at once; [`ControlPlane::now`] reads it (an
//!   `Instant` that moves with the fake time), so a run's waits (readiness, a DELETING table
//!   recreated) and its time budget are measured on it, never on the wall clock;
//! - table and index status: CREATING, UPDATING and DELETING end after [`Config`]'s delays of
//!   fake time; a table being deleted is listed and described as DELETING, then is gone;
//! - DynamoDB's errors, as the SDK adapter classifies them: CreateTable on an existing name
//!   (`AlreadyExists`), any update of a table that is not ACTIVE (`InUse`), an UpdateTable whose
//!   throughput will not change (`NoChange`), a missing table (`NotFound`; DescribeTable answers
//!   `Ok(None)`);
//! - warm throughput for each table and GSI ([`warm`]): CreateTable's or DynamoDB's starting
//!   values, raised by UpdateTable (UPDATING for [`Config::warm_delay`], then ACTIVE), a lower
//!   value refused with a ValidationException ([`LOWER_WARM`]);
//! - the decrease budget of each table and each GSI (4 decreases a UTC day at any time, then one
//!   more whenever there was none in the past hour, 27 at most), provisioned-to-on-demand
//!   switches (4 in any rolling 24 hours) and table class changes (2 in any trailing 30 days):
//!   `LimitExceeded` beyond;
//! - Application Auto Scaling: scalable targets by (resource id, dimension) with their policies
//!   and scheduled actions (PutScheduledAction needs a registered target);
//!   DeregisterScalableTarget deletes every policy and every scheduled action on the target,
//!   whoever made them ([`FakeAws::foreign_deregister_target`]); the engine's
//!   [`ControlPlane::deregister_scaling`] is modelled as the SDK adapter implements it
//!   (`autoscaling_sdk::deregister`): our policy is deleted from each target, and the target
//!   deregistered only when the change asks for it and no policy and no scheduled action is left
//!   on it once ours is deleted; deleting a
//!   table leaves its targets (DynamoDB Developer Guide: "When you manually remove a table or
//!   global table replica, you do not automatically remove any associated scalable targets,
//!   scaling policies, or CloudWatch alarms"); registering a target whose resource's capacity is
//!   outside the new bounds brings it within them, as the autoscaler does;
//! - the IAM role `template.yaml` gives the functions of one family (the prefix the fake is
//!   built for): tables are reachable only under `table/{prefix}_*`; CreateTable needs the
//!   family tag = prefix in its tags; changes (UpdateTable, UpdateTimeToLive,
//!   UpdateContinuousBackups, ExportTableToPointInTime, TagResource) are refused on a table whose
//!   family tag names another family; TagResource may not write another family's tag;
//!   DeleteTable needs the family tag = prefix. A refusal is `ErrorKind::Other` with an
//!   AccessDeniedException message. Application Auto Scaling checks that the caller may update
//!   the target's table before registering a target or putting a policy.
//!
//! Besides the control plane, the fake keeps ground truth for invariants: who made each table,
//! index, target and policy ([`Maker`]), whether the operator adopted a table, and a log of every
//! mutating call with the objects it touched ([`Call`], [`Effect`]). Foreign acts (people,
//! other tools, another family's runs) go through [`FakeAws::acting_as`] (another family's
//! role) or the `foreign_*` methods, which bypass IAM. The operator (`ddb-rollover adopt` with
//! an administrator's credentials) goes through [`FakeAws::operator`]: the same control plane
//! without the role's IAM; the harness records which tables an adoption really tagged
//! ([`FakeAws::mark_adopted`]).
//!
//! Simplifications, each on the safe side for the engine: no account-wide quotas (table count,
//! operations in flight), no throttling, no TTL change spacing, and the autoscaler's own capacity
//! changes happen only when a target is registered (there is no traffic).

mod s3;
mod warm;

pub use s3::{data_file, S3Object};
pub use warm::{Warm, LOWER_WARM};

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::scaling::{
    table_of, DeregisterScaling, ObservedScalableTarget, ObservedScalingPolicy, RegisterScaling,
    ScalableDimension, ScalableKey, TargetValue,
};
use ddb_rollover::policy::settings::{
    Billing, Capacity, Encryption, GlobalIndex, KeySchema, LocalIndex, OnDemandLimits, Projection,
    StreamSetting, TableClass,
};
use ddb_rollover::policy::warm::WarmThroughput;
use ddb_rollover::run::archive::{archives_under, prove};
use ddb_rollover::run::control::{ControlPlane, ControlPlaneError, ErrorKind};
use ddb_rollover::table::archive::{ArchiveProof, ExportLocation, ImportState};
use ddb_rollover::table::changes::{
    CapacityChange, ClassChange, ExportRequest, ImportRequest, IndexSpec, SettingChange, TableSetting,
    TableSpec, TagChange, TtlChange, WarmPart, WarmRaise,
};
use ddb_rollover::table::seal::{denies_to_everyone, ResourcePolicy, NO_POLICY};
use ddb_rollover::table::{
    ExportState, ExportStatus, ObservedEncryption, ObservedIndex, ObservedLocalIndex, ObservedTable,
    TableStatus, TtlState,
};

/// The tag key `template.yaml`'s IAM conditions check (`aws:ResourceTag/ddb-rollover:family`).
pub const FAMILY_TAG: &str = "ddb-rollover:family";
/// The fake account's table ARNs: `{TABLE_ARN_PREFIX}{name}`.
pub const TABLE_ARN_PREFIX: &str = "arn:aws:dynamodb:us-east-1:123456789012:table/";

/// Decreases allowed at any time in a UTC day, and at most in one.
pub const FREE_DECREASES: usize = 4;
pub const MAX_DECREASES: usize = 27;
/// Provisioned-to-on-demand switches allowed in any rolling 24 hours.
pub const ON_DEMAND_SWITCHES_PER_DAY: usize = 4;
/// Table class changes allowed in any trailing 30 days.
pub const CLASS_CHANGES_PER_30_DAYS: usize = 2;

/// Who made an object, or made a call.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Maker {
    /// Our runs, through the [`ControlPlane`] of the fake built with [`FakeAws::new`].
    Us,
    /// Anyone else: a person, another tool, another family's runs.
    Foreign(String),
}

impl Maker {
    pub fn is_us(&self) -> bool {
        *self == Maker::Us
    }
}

/// How long DynamoDB and its exports take, in fake time.
#[derive(Clone, Debug)]
pub struct Config {
    pub create_delay: Duration,
    pub update_delay: Duration,
    pub delete_delay: Duration,
    pub index_delay: Duration,
    pub export_delay: Duration,
    /// How long a warm throughput raise stays UPDATING (also after CreateTable asked for one,
    /// counted from the table's ACTIVE).
    pub warm_delay: Duration,
    /// How long after PutResourcePolicy the policy starts to apply to requests (AWS applies it
    /// eventually, with no documented bound).
    pub policy_delay: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            create_delay: Duration::seconds(20),
            update_delay: Duration::seconds(10),
            delete_delay: Duration::seconds(30),
            index_delay: Duration::seconds(60),
            export_delay: Duration::minutes(10),
            warm_delay: warm::default_delay(),
            policy_delay: Duration::minutes(1),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Creating,
    Updating,
    Active,
    Deleting,
    /// The table's KMS key is disabled or its grant revoked: reads and writes fail; after
    /// [`KEY_LOSS_UNTIL_ARCHIVING`] DynamoDB starts archiving the table.
    InaccessibleEncryptionCredentials,
    /// Being archived: no operations are allowed; ARCHIVED after [`Config::update_delay`].
    Archiving,
    /// Archived (ArchivalSummary): only a restore from its backup brings the data back.
    Archived,
}

impl Status {
    pub fn observed(self) -> TableStatus {
        match self {
            Status::Creating => TableStatus::Creating,
            Status::Updating => TableStatus::Updating,
            Status::Active => TableStatus::Active,
            Status::Deleting => TableStatus::Deleting,
            Status::InaccessibleEncryptionCredentials => {
                TableStatus::Other("INACCESSIBLE_ENCRYPTION_CREDENTIALS".into())
            }
            Status::Archiving => TableStatus::Other("ARCHIVING".into()),
            Status::Archived => TableStatus::Other("ARCHIVED".into()),
        }
    }
}

/// How long a table's KMS key may stay inaccessible before DynamoDB archives the table
/// (TableDescription.TableStatus: "more than seven days").
pub const KEY_LOSS_UNTIL_ARCHIVING: Duration = Duration::days(7);

/// The provisioned-throughput decreases of a table or an index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decreases {
    pub at: Vec<DateTime<Utc>>,
}

impl Decreases {
    fn on_day_of(&self, now: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        self.at
            .iter()
            .copied()
            .filter(|t| t.date_naive() == now.date_naive())
            .collect()
    }

    /// NumberOfDecreasesToday.
    pub fn today(&self, now: DateTime<Utc>) -> u32 {
        self.on_day_of(now).len() as u32
    }

    /// LastDecreaseDateTime.
    pub fn last(&self) -> Option<DateTime<Utc>> {
        self.at.iter().max().copied()
    }

    /// Whether DynamoDB takes one more decrease at `now`: 4 at any time in a UTC day, then one
    /// whenever there was none in the past hour, 27 at most.
    pub fn allowed(&self, now: DateTime<Utc>) -> bool {
        let today = self.on_day_of(now);
        if today.len() < FREE_DECREASES {
            return true;
        }
        today.len() < MAX_DECREASES && today.iter().all(|t| now - *t >= Duration::hours(1))
    }
}

/// A global secondary index.
#[derive(Clone, Debug, PartialEq)]
pub struct Gsi {
    pub name: String,
    pub key: KeySchema,
    pub projection: Projection,
    /// In the table's billing mode.
    pub billing: Billing,
    pub decreases: Decreases,
    pub status: Status,
    pub ready_at: Option<DateTime<Utc>>,
    pub maker: Maker,
    pub warm: Warm,
}

/// One table, with everything DynamoDB knows about it and who made it.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: String,
    pub arn: String,
    pub status: Status,
    /// When the current CREATING / UPDATING / DELETING ends.
    pub ready_at: Option<DateTime<Utc>>,
    pub key: KeySchema,
    pub gsis: Vec<Gsi>,
    pub lsis: Vec<LocalIndex>,
    pub billing: Billing,
    pub decreases: Decreases,
    /// Provisioned-to-on-demand switches.
    pub on_demand_switches: Vec<DateTime<Utc>>,
    pub class: TableClass,
    pub class_changes: Vec<DateTime<Utc>>,
    pub deletion_protection: bool,
    /// Who turned deletion protection on (at CreateTable or by UpdateTable), while it is on.
    pub protected_by: Option<Maker>,
    pub stream: StreamSetting,
    pub encryption: ObservedEncryption,
    pub tags: BTreeMap<String, String>,
    /// The TTL attribute when TTL is on.
    pub ttl: Option<String>,
    pub pitr: bool,
    pub maker: Maker,
    /// The operator adopted it (wrote our family tag on purpose).
    pub adopted: bool,
    pub created_at: DateTime<Utc>,
    /// Who deleted it (while DELETING, and once gone).
    pub deleted_by: Option<Maker>,
    pub warm: Warm,
    /// The items it holds (by key); application writes only add.
    pub items: BTreeSet<String>,
    /// Its resource-based policy, if any.
    pub resource_policy: Option<TablePolicy>,
}

/// A table's resource-based policy.
#[derive(Clone, Debug, PartialEq)]
pub struct TablePolicy {
    pub document: String,
    pub revision: String,
    /// When it starts to apply to requests.
    pub applies_at: DateTime<Utc>,
}

/// An item write DynamoDB accepted.
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    pub at: DateTime<Utc>,
    pub table: String,
    pub item: String,
}

impl Table {
    pub fn family(&self) -> Option<&str> {
        self.tags.get(FAMILY_TAG).map(String::as_str)
    }

    pub fn gsi(&self, name: &str) -> Option<&Gsi> {
        self.gsis.iter().find(|g| g.name == name)
    }

    /// What DescribeTable answers at `now`.
    pub fn observed(&self, now: DateTime<Utc>) -> ObservedTable {
        let partition = self.key.partition.clone();
        ObservedTable {
            name: self.name.clone(),
            status: self.status.observed(),
            key: Some(self.key.clone()),
            billing: self.billing,
            decreases_today: self.decreases.today(now),
            last_decrease: self.decreases.last(),
            last_switch_to_on_demand: self.on_demand_switches.iter().max().copied(),
            table_class: self.class,
            table_class_updated: self.class_changes.iter().max().copied(),
            arn: Some(self.arn.clone()),
            deletion_protection: self.deletion_protection,
            stream: self.stream,
            encryption: self.encryption.clone(),
            global_indexes: self
                .gsis
                .iter()
                .map(|g| ObservedIndex {
                    name: g.name.clone(),
                    status: g.status.observed(),
                    backfilling: g.status == Status::Creating,
                    billing: g.billing,
                    decreases_today: g.decreases.today(now),
                    last_decrease: g.decreases.last(),
                    key: Some(g.key.clone()),
                    projection: Some(g.projection.clone()),
                    warm: Some(g.warm.observed()),
                })
                .collect(),
            local_indexes: self
                .lsis
                .iter()
                .map(|l| ObservedLocalIndex {
                    name: l.name.clone(),
                    key: Some(KeySchema {
                        partition: partition.clone(),
                        sort: Some(l.sort.clone()),
                    }),
                    projection: Some(l.projection.clone()),
                })
                .collect(),
            warm: Some(self.warm.observed()),
            tags: None,
            ttl: None,
            point_in_time_recovery: None,
            export: None,
            archive_proof: None,
            resource_policy: None,
            final_export: None,
            scaling: None,
            tags_unsupported: false,
            scaling_unsupported: false,
            resource_policy_unsupported: false,
        }
    }
}

/// A scaling policy on a scalable target.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalingPolicy {
    pub name: String,
    /// `TargetTrackingScaling` or `StepScaling`.
    pub policy_type: String,
    pub metric: Option<String>,
    pub target_value: Option<f64>,
    pub maker: Maker,
}

/// A scheduled action on a scalable target (PutScheduledAction).
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledAction {
    pub name: String,
    pub maker: Maker,
}

/// A scalable target of Application Auto Scaling.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub key: ScalableKey,
    pub min: i64,
    pub max: i64,
    pub policies: Vec<ScalingPolicy>,
    pub scheduled_actions: Vec<ScheduledAction>,
    pub maker: Maker,
}

impl Target {
    pub fn observed(&self) -> ObservedScalableTarget {
        ObservedScalableTarget {
            key: self.key.clone(),
            min: self.min,
            max: self.max,
            policies: self
                .policies
                .iter()
                .map(|p| ObservedScalingPolicy {
                    name: p.name.clone(),
                    policy_type: p.policy_type.clone(),
                    metric: p.metric.clone(),
                    target_value: p.target_value.map(TargetValue),
                })
                .collect(),
            scheduled_actions: self.scheduled_actions.iter().map(|a| a.name.clone()).collect(),
        }
    }
}

/// One ImportTable: the table it creates and what it read (counted when it started).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub table: String,
    /// `ImportedItemCount` and `ErrorCount`, or why it FAILED.
    pub counts: Result<(u64, u64), String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    pub arn: String,
    pub table: String,
    pub status: ExportStatus,
    pub done_at: DateTime<Utc>,
    pub bucket: String,
    /// Where the export writes, as AWS lays it out: `{prefix}/AWSDynamoDB/{id}/` holds
    /// `manifest-summary.json`, `manifest-files.json` and `data/`, written when it completes.
    pub directory: String,
    /// Its data files and their item counts.
    pub files: Vec<(String, u64)>,
    /// The instant it holds the table as of, and the items the table held then.
    pub export_time: DateTime<Utc>,
    pub items: BTreeSet<String>,
}

impl Export {
    pub fn manifest_key(&self) -> String {
        format!("{}/manifest-summary.json", self.directory)
    }

    pub fn files_key(&self) -> String {
        format!("{}/manifest-files.json", self.directory)
    }

    fn items(&self) -> u64 {
        self.files.iter().map(|(_, n)| n).sum()
    }

    /// The objects a COMPLETED export leaves in S3: data files and both manifests.
    fn objects(&self) -> Vec<(String, S3Object)> {
        s3::export_objects(
            &self.arn,
            &arn_of(&self.table),
            &self.directory,
            &self.files,
            self.export_time,
        )
    }
}

/// What a mutating call did, object by object.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    CreatedTable {
        table: String,
    },
    TableCapacity {
        table: String,
        from: Billing,
        to: Billing,
    },
    IndexCapacity {
        table: String,
        index: String,
        from: Billing,
        to: Billing,
    },
    TableClass {
        table: String,
        from: TableClass,
        to: TableClass,
    },
    /// Deletion protection, stream or encryption.
    Setting {
        table: String,
        setting: String,
    },
    /// A raise of the warm throughput of the table (`index` None) or one of its indexes.
    Warm {
        table: String,
        index: Option<String>,
        from: WarmThroughput,
        to: WarmThroughput,
    },
    AddedIndex {
        table: String,
        index: String,
    },
    Ttl {
        table: String,
        attribute: String,
    },
    Pitr {
        table: String,
    },
    Tagged {
        table: String,
        tags: BTreeMap<String, String>,
        /// The table's tags before the call.
        before: BTreeMap<String, String>,
    },
    Untagged {
        table: String,
        keys: Vec<String>,
    },
    Exported {
        table: String,
        export: String,
    },
    /// DeleteTable: the table as it was when the call was made.
    DeletedTable {
        table: Box<Table>,
    },
    RegisteredTarget {
        key: ScalableKey,
        /// (min, max) before, when the target existed.
        before: Option<(i64, i64)>,
        after: (i64, i64),
    },
    PutPolicy {
        key: ScalableKey,
        name: String,
        created: bool,
    },
    DeletedPolicy {
        key: ScalableKey,
        policy: ScalingPolicy,
    },
    /// DeregisterScalableTarget, with the policies and scheduled actions it deleted along with
    /// the target.
    DeregisteredTarget {
        key: ScalableKey,
        maker: Maker,
        policies: Vec<ScalingPolicy>,
        scheduled_actions: Vec<ScheduledAction>,
    },
    PutScheduledAction {
        key: ScalableKey,
        name: String,
        created: bool,
    },
    DeletedScheduledAction {
        key: ScalableKey,
        action: ScheduledAction,
    },
    /// The autoscaler brought a resource's capacity within a target's new bounds.
    AutoscalerCapacity {
        table: String,
        index: Option<String>,
        from: Billing,
        to: Billing,
    },
}

impl Effect {
    /// The table the effect is on.
    pub fn table(&self) -> &str {
        match self {
            Effect::CreatedTable { table }
            | Effect::TableCapacity { table, .. }
            | Effect::IndexCapacity { table, .. }
            | Effect::TableClass { table, .. }
            | Effect::Setting { table, .. }
            | Effect::Warm { table, .. }
            | Effect::AddedIndex { table, .. }
            | Effect::Ttl { table, .. }
            | Effect::Pitr { table }
            | Effect::Tagged { table, .. }
            | Effect::Untagged { table, .. }
            | Effect::Exported { table, .. }
            | Effect::AutoscalerCapacity { table, .. } => table,
            Effect::DeletedTable { table } => &table.name,
            Effect::RegisteredTarget { key, .. }
            | Effect::PutPolicy { key, .. }
            | Effect::DeletedPolicy { key, .. }
            | Effect::DeregisteredTarget { key, .. }
            | Effect::PutScheduledAction { key, .. }
            | Effect::DeletedScheduledAction { key, .. } => table_of(&key.resource_id).unwrap_or_default(),
        }
    }
}

/// One mutating call, as the log keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub at: DateTime<Utc>,
    pub actor: Maker,
    /// The family whose role made the call (`None`: a foreign act outside IAM).
    pub role: Option<String>,
    pub operation: &'static str,
    pub table: String,
    pub error: Option<(ErrorKind, String)>,
    /// What it did; a call that failed part-way (several scaling targets) keeps the parts done.
    pub effects: Vec<Effect>,
}

impl Call {
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }
}

/// Everything the fake knows: the state of the account and the log of changes.
#[derive(Clone, Debug)]
pub struct World {
    pub now: DateTime<Utc>,
    pub config: Config,
    pub tables: BTreeMap<String, Table>,
    pub targets: BTreeMap<ScalableKey, Target>,
    pub exports: BTreeMap<String, Export>,
    /// S3's objects by (bucket, key): what completed exports wrote, and others' objects.
    pub s3: s3::Objects,
    /// ImportTable's imports by ARN (COMPLETED once their table is ACTIVE).
    pub imports: BTreeMap<String, Import>,
    pub log: Vec<Call>,
    /// Tables whose deletion completed, as they were when deleted.
    pub gone: Vec<Table>,
    /// Every item write DynamoDB accepted.
    pub writes: Vec<Write>,
    next_id: u64,
    /// The fake time [`ControlPlane::now`]'s `Instant` counts from, and that instant.
    epoch: (DateTime<Utc>, Instant),
}

impl World {
    /// A world read from elsewhere (another server's state with the caller's ground truth), for
    /// the same invariants: no exports, no log.
    pub fn from_state(
        now: DateTime<Utc>,
        tables: BTreeMap<String, Table>,
        targets: BTreeMap<ScalableKey, Target>,
    ) -> World {
        World {
            now,
            config: Config::default(),
            tables,
            targets,
            exports: BTreeMap::new(),
            s3: BTreeMap::new(),
            imports: BTreeMap::new(),
            log: Vec::new(),
            gone: Vec::new(),
            writes: Vec::new(),
            next_id: 1,
            epoch: (now, Instant::now()),
        }
    }

    /// Ends the transitions whose time has come.
    fn tick(&mut self) {
        let now = self.now;
        let archive_delay = self.config.update_delay;
        let mut gone = Vec::new();
        for (name, table) in &mut self.tables {
            for gsi in &mut table.gsis {
                if gsi.ready_at.is_some_and(|at| at <= now) {
                    gsi.ready_at = None;
                    gsi.status = Status::Active;
                }
                gsi.warm.tick(now);
            }
            table.warm.tick(now);
            if table.ready_at.is_some_and(|at| at <= now) {
                let at = table.ready_at.take().unwrap_or(now);
                match table.status {
                    Status::Deleting => gone.push(name.clone()),
                    Status::InaccessibleEncryptionCredentials => {
                        table.status = Status::Archiving;
                        table.ready_at = Some(at + archive_delay);
                    }
                    Status::Archiving => table.status = Status::Archived,
                    Status::Archived => {}
                    _ => table.status = Status::Active,
                }
            }
        }
        for name in gone {
            if let Some(table) = self.tables.remove(&name) {
                self.gone.push(table);
            }
        }
        for export in self.exports.values_mut() {
            if export.status == ExportStatus::InProgress && export.done_at <= now {
                export.status = ExportStatus::Completed;
                for (key, bytes) in export.objects() {
                    self.s3.insert((export.bucket.clone(), key), bytes);
                }
            }
        }
    }

    /// The targets on a table and its indexes.
    pub fn targets_on(&self, table: &str) -> Vec<&Target> {
        self.targets
            .values()
            .filter(|t| table_of(&t.key.resource_id) == Some(table))
            .collect()
    }
}

/// The fake control plane, acting with the IAM role of one family (or, for the operator,
/// without IAM). Clones share the account.
#[derive(Clone)]
pub struct FakeAws {
    world: Arc<Mutex<World>>,
    family: String,
    actor: Maker,
    /// The role's IAM applies (false: the operator's administrator credentials).
    iam: bool,
}

fn error(
    kind: ErrorKind,
    operation: &'static str,
    table: &str,
    message: impl Into<String>,
) -> ControlPlaneError {
    ControlPlaneError {
        kind,
        operation,
        table: table.to_string(),
        message: message.into(),
    }
}

fn not_found(operation: &'static str, table: &str) -> ControlPlaneError {
    error(
        ErrorKind::NotFound,
        operation,
        table,
        format!("ResourceNotFoundException: Requested resource not found: Table: {table} not found"),
    )
}

fn in_use(operation: &'static str, table: &str, status: Status) -> ControlPlaneError {
    error(
        ErrorKind::InUse,
        operation,
        table,
        format!(
            "ResourceInUseException: Attempt to change a resource which is still in use: Table is {}: {table}",
            status.observed().as_str()
        ),
    )
}

fn limit(operation: &'static str, table: &str, message: impl Into<String>) -> ControlPlaneError {
    error(
        ErrorKind::LimitExceeded,
        operation,
        table,
        format!("LimitExceededException: {}", message.into()),
    )
}

fn policy_not_found(operation: &'static str, table: &str, why: &str) -> ControlPlaneError {
    error(
        ErrorKind::Other,
        operation,
        table,
        format!(
            "PolicyNotFoundException: Resource-based policy not found for the provided ResourceArn: {why}"
        ),
    )
}

fn validation(operation: &'static str, table: &str, message: impl Into<String>) -> ControlPlaneError {
    error(
        ErrorKind::Other,
        operation,
        table,
        format!("ValidationException: {}", message.into()),
    )
}

fn arn_of(name: &str) -> String {
    format!("{TABLE_ARN_PREFIX}{name}")
}

fn name_of_arn(arn: &str) -> &str {
    arn.strip_prefix(TABLE_ARN_PREFIX)
        .map_or(arn, |rest| rest.split('/').next().unwrap_or(rest))
}

fn lowers(from: Billing, to: Billing) -> bool {
    match (from, to) {
        (Billing::Provisioned(a), Billing::Provisioned(b)) => b.read < a.read || b.write < a.write,
        _ => false,
    }
}

fn encryption_of(encryption: &Encryption) -> ObservedEncryption {
    match encryption {
        Encryption::AwsOwned => ObservedEncryption::AwsOwned,
        Encryption::AwsManaged => ObservedEncryption::Kms {
            key_arn: Some("arn:aws:kms:us-east-1:123456789012:key/aws-managed-dynamodb".into()),
        },
        Encryption::CustomerManaged { kms_key } => ObservedEncryption::Kms {
            key_arn: Some(kms_key.clone()),
        },
    }
}

/// One capacity UpdateTable, however it is asked for.
struct CapacityRequest<'a> {
    table_to: Option<Billing>,
    indexes: Vec<(&'a str, Billing)>,
}

impl FakeAws {
    /// An account at `now`, seen through the role of the family `family` (our runs).
    pub fn new(family: &str, now: DateTime<Utc>, config: Config) -> FakeAws {
        FakeAws {
            world: Arc::new(Mutex::new(World {
                now,
                config,
                tables: BTreeMap::new(),
                targets: BTreeMap::new(),
                exports: BTreeMap::new(),
                s3: BTreeMap::new(),
                imports: BTreeMap::new(),
                log: Vec::new(),
                gone: Vec::new(),
                writes: Vec::new(),
                next_id: 1,
                epoch: (now, Instant::now()),
            })),
            family: family.to_string(),
            actor: Maker::Us,
            iam: true,
        }
    }

    /// The same account through the role of another family, as a foreign actor named `who`.
    pub fn acting_as(&self, family: &str, who: &str) -> FakeAws {
        FakeAws {
            world: Arc::clone(&self.world),
            family: family.to_string(),
            actor: Maker::Foreign(who.to_string()),
            iam: true,
        }
    }

    /// The same account through the operator's own credentials (an administrator: no role,
    /// no IAM conditions), as the foreign actor `operator`: what `ddb-rollover adopt` runs with.
    pub fn operator(&self) -> FakeAws {
        FakeAws {
            world: Arc::clone(&self.world),
            family: self.family.clone(),
            actor: Maker::Foreign("operator".into()),
            iam: false,
        }
    }

    /// Ground truth: the operator adopted `table` (a real `adopt` wrote our family tag on it).
    pub fn mark_adopted(&self, table: &str) {
        if let Some(t) = self.lock().tables.get_mut(table) {
            t.adopted = true;
        }
    }

    pub fn family(&self) -> &str {
        &self.family
    }

    fn lock(&self) -> MutexGuard<'_, World> {
        let mut world = self.world.lock().unwrap_or_else(|e| e.into_inner());
        world.tick();
        world
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.lock().now
    }

    /// Moves the clock to `t` (never backwards).
    pub fn set_now(&self, t: DateTime<Utc>) {
        let mut world = self.lock();
        if t > world.now {
            world.now = t;
        }
        world.tick();
    }

    pub fn advance(&self, by: Duration) {
        let mut world = self.lock();
        world.now += by;
        world.tick();
    }

    /// A copy of everything, for assertions.
    pub fn snapshot(&self) -> World {
        self.lock().clone()
    }

    /// A copy of the account's state without the log (cheaper than [`Self::snapshot`]; read the
    /// log with [`Self::calls_since`]).
    pub fn state(&self) -> World {
        let world = self.lock();
        World {
            now: world.now,
            config: world.config.clone(),
            tables: world.tables.clone(),
            targets: world.targets.clone(),
            exports: world.exports.clone(),
            s3: world.s3.clone(),
            imports: world.imports.clone(),
            log: Vec::new(),
            gone: world.gone.clone(),
            writes: world.writes.clone(),
            next_id: world.next_id,
            epoch: world.epoch,
        }
    }

    pub fn with_world<T>(&self, f: impl FnOnce(&World) -> T) -> T {
        f(&self.lock())
    }

    pub fn log_len(&self) -> usize {
        self.lock().log.len()
    }

    /// The calls logged since the log had `from` entries.
    pub fn calls_since(&self, from: usize) -> Vec<Call> {
        self.lock().log[from..].to_vec()
    }

    /// Runs a mutating call and logs it.
    fn call<T>(
        &self,
        actor: &Maker,
        role: Option<&str>,
        operation: &'static str,
        table: &str,
        f: impl FnOnce(&mut World, &mut Vec<Effect>) -> Result<T, ControlPlaneError>,
    ) -> Result<T, ControlPlaneError> {
        let mut world = self.lock();
        let mut effects = Vec::new();
        let result = f(&mut world, &mut effects);
        let at = world.now;
        world.log.push(Call {
            at,
            actor: actor.clone(),
            role: role.map(str::to_string),
            operation,
            table: table.to_string(),
            error: result.as_ref().err().map(|e| (e.kind, e.message.clone())),
            effects,
        });
        result
    }

    // ---- IAM of the function's role ----

    fn denied(&self, operation: &'static str, action: &str, table: &str, why: &str) -> ControlPlaneError {
        error(
            ErrorKind::Other,
            operation,
            table,
            format!(
                "AccessDeniedException: User: arn:aws:sts::123456789012:assumed-role/ddb-rollover-{}/function is not \
                 authorized to perform: {action} on resource: {} because no identity-based policy allows the {action} \
                 action ({why})",
                self.family,
                arn_of(table)
            ),
        )
    }

    fn in_pattern(&self, table: &str) -> bool {
        table.starts_with(&format!("{}_", self.family))
    }

    /// ReadPrefixTables: reads on `table/{prefix}_*`.
    fn may_read(&self, operation: &'static str, action: &str, table: &str) -> Result<(), ControlPlaneError> {
        if !self.iam || self.in_pattern(table) {
            Ok(())
        } else {
            Err(self.denied(operation, action, table, "outside table/{prefix}_*"))
        }
    }

    /// ChangeFamilyTables: `aws:ResourceTag/ddb-rollover:family` equals the prefix if it exists.
    fn may_change(
        &self,
        world: &World,
        operation: &'static str,
        action: &str,
        table: &str,
    ) -> Result<(), ControlPlaneError> {
        self.may_read(operation, action, table)?;
        match world.tables.get(table).and_then(Table::family) {
            Some(family) if self.iam && family != self.family => Err(self.denied(
                operation,
                action,
                table,
                &format!("the table's {FAMILY_TAG} tag is {family:?}"),
            )),
            _ => Ok(()),
        }
    }

    // ---- DynamoDB ----

    fn table_mut<'w>(
        world: &'w mut World,
        operation: &'static str,
        table: &str,
    ) -> Result<&'w mut Table, ControlPlaneError> {
        world
            .tables
            .get_mut(table)
            .ok_or_else(|| not_found(operation, table))
    }

    fn create(
        world: &mut World,
        actor: &Maker,
        spec: &TableSpec,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "CreateTable";
        if world.tables.contains_key(&spec.name) {
            return Err(error(
                ErrorKind::AlreadyExists,
                OP,
                &spec.name,
                format!("ResourceInUseException: Table already exists: {}", spec.name),
            ));
        }
        if !spec.local_indexes.is_empty() && spec.key.sort.is_none() {
            return Err(validation(
                OP,
                &spec.name,
                "local secondary indexes need a table with a sort key",
            ));
        }
        for index in &spec.global_indexes {
            if std::mem::discriminant(&index.billing) != std::mem::discriminant(&spec.billing) {
                return Err(validation(
                    OP,
                    &spec.name,
                    format!("index {} must be in the table's billing mode", index.index.name),
                ));
            }
        }
        let now = world.now;
        let ready = now + world.config.create_delay;
        // CreateTable's warm throughput serves the table and every index (DynamoDB refuses it
        // below where each starts).
        let warm_ready = ready + world.config.warm_delay;
        let warm_at_creation = |billing: Billing| {
            Warm::at_creation(billing, spec.warm, warm_ready)
                .map_err(|message| warm::refused_at_creation(&spec.name, message))
        };
        let table_warm = warm_at_creation(spec.billing)?;
        let gsis = spec
            .global_indexes
            .iter()
            .map(|IndexSpec { index, billing }| {
                Ok(Gsi {
                    name: index.name.clone(),
                    key: index.key.clone(),
                    projection: index.projection.clone(),
                    billing: *billing,
                    decreases: Decreases::default(),
                    status: Status::Creating,
                    ready_at: Some(ready),
                    maker: actor.clone(),
                    warm: warm_at_creation(*billing)?,
                })
            })
            .collect::<Result<Vec<Gsi>, ControlPlaneError>>()?;
        world.tables.insert(
            spec.name.clone(),
            Table {
                name: spec.name.clone(),
                arn: arn_of(&spec.name),
                status: Status::Creating,
                ready_at: Some(ready),
                key: spec.key.clone(),
                gsis,
                lsis: spec.local_indexes.clone(),
                billing: spec.billing,
                decreases: Decreases::default(),
                on_demand_switches: Vec::new(),
                class: spec.table_class.unwrap_or_default(),
                class_changes: Vec::new(),
                deletion_protection: spec.deletion_protection,
                protected_by: spec.deletion_protection.then(|| actor.clone()),
                stream: spec.stream,
                encryption: spec.encryption.as_ref().map(encryption_of).unwrap_or_default(),
                tags: spec.tags.clone(),
                ttl: None,
                pitr: false,
                maker: actor.clone(),
                adopted: false,
                created_at: now,
                deleted_by: None,
                warm: table_warm,
                items: BTreeSet::new(),
                resource_policy: None,
            },
        );
        effects.push(Effect::CreatedTable {
            table: spec.name.clone(),
        });
        Ok(())
    }

    /// An UpdateTable of throughput and billing mode, with DynamoDB's checks.
    fn update_throughput(
        world: &mut World,
        name: &str,
        request: CapacityRequest<'_>,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        let now = world.now;
        let delay = world.config.update_delay;
        let table = Self::table_mut(world, OP, name)?;
        if table.status != Status::Active {
            return Err(in_use(OP, name, table.status));
        }
        if let Some(gsi) = table.gsis.iter().find(|g| g.status != Status::Active) {
            return Err(in_use(OP, name, gsi.status));
        }
        let before = table.billing;
        let after = request.table_to.unwrap_or(before);
        let switch_to_provisioned =
            matches!((before, after), (Billing::OnDemand(_), Billing::Provisioned(_)));
        let switch_to_on_demand = matches!((before, after), (Billing::Provisioned(_), Billing::OnDemand(_)));
        // Every index's throughput after the call.
        let mut index_after: Vec<(String, Billing)> = Vec::new();
        for (index, to) in &request.indexes {
            let Some(gsi) = table.gsi(index) else {
                return Err(validation(
                    OP,
                    name,
                    format!("One or more parameter values were invalid: index {index} does not exist"),
                ));
            };
            if std::mem::discriminant(to) != std::mem::discriminant(&after) {
                return Err(validation(
                    OP,
                    name,
                    format!("index {} must be in the table's billing mode", gsi.name),
                ));
            }
            index_after.push((gsi.name.clone(), *to));
        }
        for gsi in &table.gsis {
            if index_after.iter().any(|(n, _)| *n == gsi.name) {
                continue;
            }
            let to = match after {
                Billing::Provisioned(_) if switch_to_provisioned => {
                    return Err(validation(
                        OP,
                        name,
                        format!(
                            "One or more parameter values were invalid: ProvisionedThroughput must be specified for index: {}",
                            gsi.name
                        ),
                    ))
                }
                Billing::OnDemand(_) if switch_to_on_demand => Billing::OnDemand(OnDemandLimits::default()),
                _ => gsi.billing,
            };
            index_after.push((gsi.name.clone(), to));
        }
        let table_changes = after != before;
        let indexes_change = index_after
            .iter()
            .any(|(n, to)| table.gsi(n).is_some_and(|g| g.billing != *to));
        // The table's throughput was asked for but is what it is; or nothing changes at all.
        if !table_changes && (request.table_to.is_some() || !indexes_change) {
            return Err(error(
                ErrorKind::NoChange,
                OP,
                name,
                format!(
                    "ValidationException: The provisioned throughput for the table {name} will not change. The requested value equals the current value."
                ),
            ));
        }
        if lowers(before, after) && !table.decreases.allowed(now) {
            return Err(limit(
                OP,
                name,
                format!(
                    "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. \
                     After the first 4 decreases, each subsequent decrease in the same UTC day can be performed at most \
                     once every 3600 seconds. Number of decreases today: {}. Last decrease at {:?}.",
                    table.decreases.today(now),
                    table.decreases.last()
                ),
            ));
        }
        for (index, to) in &index_after {
            let gsi = table.gsi(index).expect("checked");
            if lowers(gsi.billing, *to) && !gsi.decreases.allowed(now) {
                return Err(limit(
                    OP,
                    name,
                    format!(
                        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day \
                         (index {index}: {} decreases today)",
                        gsi.decreases.today(now)
                    ),
                ));
            }
        }
        if switch_to_on_demand {
            let recent = table
                .on_demand_switches
                .iter()
                .filter(|t| now - **t < Duration::hours(24))
                .count();
            if recent >= ON_DEMAND_SWITCHES_PER_DAY {
                return Err(limit(
                    OP,
                    name,
                    format!("Subscriber limit exceeded: {recent} switches to PAY_PER_REQUEST in the last 24 hours"),
                ));
            }
        }
        // Carried out.
        if table_changes {
            if lowers(before, after) {
                table.decreases.at.push(now);
            }
            if switch_to_on_demand {
                table.on_demand_switches.push(now);
            }
            table.billing = after;
            table.warm.grow_to(after);
            effects.push(Effect::TableCapacity {
                table: name.to_string(),
                from: before,
                to: after,
            });
        }
        for (index, to) in index_after {
            let gsi = table.gsis.iter_mut().find(|g| g.name == index).expect("checked");
            if gsi.billing == to {
                continue;
            }
            if lowers(gsi.billing, to) {
                gsi.decreases.at.push(now);
            }
            effects.push(Effect::IndexCapacity {
                table: name.to_string(),
                index: index.clone(),
                from: gsi.billing,
                to,
            });
            gsi.billing = to;
            gsi.warm.grow_to(to);
        }
        table.status = Status::Updating;
        table.ready_at = Some(now + delay);
        Ok(())
    }

    fn delete(
        world: &mut World,
        actor: &Maker,
        name: &str,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteTable";
        let now = world.now;
        let delay = world.config.delete_delay;
        let table = Self::table_mut(world, OP, name)?;
        if table.status != Status::Active {
            return Err(in_use(OP, name, table.status));
        }
        if table.deletion_protection {
            return Err(validation(
                OP,
                name,
                format!("Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first: {name}"),
            ));
        }
        effects.push(Effect::DeletedTable {
            table: Box::new(table.clone()),
        });
        table.status = Status::Deleting;
        table.ready_at = Some(now + delay);
        table.deleted_by = Some(actor.clone());
        Ok(())
    }

    fn tag(
        world: &mut World,
        name: &str,
        tags: &BTreeMap<String, String>,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "TagResource";
        let table = Self::table_mut(world, OP, name)?;
        if matches!(table.status, Status::Creating | Status::Deleting) {
            return Err(in_use(OP, name, table.status));
        }
        effects.push(Effect::Tagged {
            table: name.to_string(),
            tags: tags.clone(),
            before: table.tags.clone(),
        });
        table.tags.extend(tags.clone());
        Ok(())
    }

    fn add_index(
        world: &mut World,
        actor: &Maker,
        name: &str,
        index: &GlobalIndex,
        billing: Billing,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        let now = world.now;
        let ready = now + world.config.index_delay;
        let table = Self::table_mut(world, OP, name)?;
        if table.status != Status::Active {
            return Err(in_use(OP, name, table.status));
        }
        if table.gsi(&index.name).is_some() {
            return Err(validation(
                OP,
                name,
                format!(
                    "Attempting to create an index which already exists: {}",
                    index.name
                ),
            ));
        }
        if std::mem::discriminant(&billing) != std::mem::discriminant(&table.billing) {
            return Err(validation(
                OP,
                name,
                format!("index {} must be in the table's billing mode", index.name),
            ));
        }
        table.gsis.push(Gsi {
            name: index.name.clone(),
            key: index.key.clone(),
            projection: index.projection.clone(),
            billing,
            decreases: Decreases::default(),
            status: Status::Creating,
            ready_at: Some(ready),
            maker: actor.clone(),
            warm: Warm {
                units: WarmThroughput::floor_for(billing),
                ready_at: None,
            },
        });
        table.status = Status::Updating;
        table.ready_at = Some(ready);
        effects.push(Effect::AddedIndex {
            table: name.to_string(),
            index: index.name.clone(),
        });
        Ok(())
    }

    /// The resource a scalable target scales must exist (a table being created does not, yet).
    fn check_resource(
        world: &World,
        operation: &'static str,
        key: &ScalableKey,
    ) -> Result<(), ControlPlaneError> {
        let table_name = table_of(&key.resource_id).unwrap_or_default();
        let missing = || {
            error(
                ErrorKind::InUse,
                operation,
                table_name,
                format!(
                    "ValidationException: DynamoDB resource {} does not exist",
                    key.resource_id
                ),
            )
        };
        let table = world.tables.get(table_name).ok_or_else(missing)?;
        if !matches!(table.status, Status::Active | Status::Updating) {
            return Err(missing());
        }
        if let Some((_, index)) = key.resource_id.split_once("/index/") {
            if table.gsi(index).is_none() {
                return Err(missing());
            }
        }
        Ok(())
    }

    fn register_target(
        world: &mut World,
        actor: &Maker,
        key: &ScalableKey,
        min: i64,
        max: i64,
        effects: &mut Vec<Effect>,
    ) {
        let before = world.targets.get(key).map(|t| (t.min, t.max));
        let target = world.targets.entry(key.clone()).or_insert_with(|| Target {
            key: key.clone(),
            min,
            max,
            policies: Vec::new(),
            scheduled_actions: Vec::new(),
            maker: actor.clone(),
        });
        target.min = min;
        target.max = max;
        effects.push(Effect::RegisteredTarget {
            key: key.clone(),
            before,
            after: (min, max),
        });
        Self::clamp(world, key, min, max, effects);
    }

    /// The autoscaler brings the resource's provisioned capacity within [min, max] (a decrease
    /// only within the resource's decrease budget).
    fn clamp(world: &mut World, key: &ScalableKey, min: i64, max: i64, effects: &mut Vec<Effect>) {
        let now = world.now;
        let Some(table_name) = table_of(&key.resource_id).map(str::to_string) else {
            return;
        };
        let index = key.resource_id.split_once("/index/").map(|(_, i)| i.to_string());
        let Some(table) = world.tables.get_mut(&table_name) else {
            return;
        };
        let (billing, decreases, warm) = match &index {
            None => (&mut table.billing, &mut table.decreases, &mut table.warm),
            Some(index) => match table.gsis.iter_mut().find(|g| g.name == *index) {
                Some(gsi) => (&mut gsi.billing, &mut gsi.decreases, &mut gsi.warm),
                None => return,
            },
        };
        let Billing::Provisioned(capacity) = *billing else {
            return;
        };
        let units = if key.dimension.is_read() {
            capacity.read
        } else {
            capacity.write
        };
        let wanted = units.clamp(min, max.max(min));
        if wanted == units || (wanted < units && !decreases.allowed(now)) {
            return;
        }
        if wanted < units {
            decreases.at.push(now);
        }
        let to = if key.dimension.is_read() {
            Capacity {
                read: wanted,
                ..capacity
            }
        } else {
            Capacity {
                write: wanted,
                ..capacity
            }
        };
        let from = *billing;
        *billing = Billing::Provisioned(to);
        warm.grow_to(*billing);
        effects.push(Effect::AutoscalerCapacity {
            table: table_name,
            index,
            from,
            to: Billing::Provisioned(to),
        });
    }

    fn put_policy(
        world: &mut World,
        actor: &Maker,
        key: &ScalableKey,
        policy: ScalingPolicy,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        let table = table_of(&key.resource_id).unwrap_or_default().to_string();
        let Some(target) = world.targets.get_mut(key) else {
            return Err(error(
                ErrorKind::NotFound,
                "PutScalingPolicy",
                &table,
                format!("ObjectNotFoundException: No scalable target registered for {key}"),
            ));
        };
        let created = match target.policies.iter_mut().find(|p| p.name == policy.name) {
            Some(existing) => {
                let maker = existing.maker.clone();
                *existing = ScalingPolicy {
                    maker,
                    ..policy.clone()
                };
                false
            }
            None => {
                target.policies.push(ScalingPolicy {
                    maker: actor.clone(),
                    ..policy.clone()
                });
                true
            }
        };
        effects.push(Effect::PutPolicy {
            key: key.clone(),
            name: policy.name,
            created,
        });
        Ok(())
    }

    // ---- the foreign acts: people, other tools, outside IAM ----

    fn foreign<T>(
        &self,
        who: &str,
        operation: &'static str,
        table: &str,
        f: impl FnOnce(&mut World, &Maker, &mut Vec<Effect>) -> Result<T, ControlPlaneError>,
    ) -> Result<T, ControlPlaneError> {
        let actor = Maker::Foreign(who.to_string());
        self.call(&actor, None, operation, table, |world, effects| {
            f(world, &actor, effects)
        })
    }

    /// A hand-made table: any name, key, indexes, tags and billing (CREATING, then ACTIVE).
    pub fn foreign_create_table(&self, who: &str, spec: &TableSpec) -> Result<(), ControlPlaneError> {
        self.foreign(who, "CreateTable", &spec.name, |world, actor, effects| {
            Self::create(world, actor, spec, effects)
        })
    }

    pub fn foreign_tag(
        &self,
        who: &str,
        table: &str,
        tags: BTreeMap<String, String>,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "TagResource", table, |world, _, effects| {
            Self::tag(world, table, &tags, effects)
        })
    }

    pub fn foreign_untag(&self, who: &str, table: &str, keys: &[String]) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UntagResource", table, |world, _, effects| {
            let t = Self::table_mut(world, "UntagResource", table)?;
            for key in keys {
                t.tags.remove(key);
            }
            effects.push(Effect::Untagged {
                table: table.to_string(),
                keys: keys.to_vec(),
            });
            Ok(())
        })
    }

    /// Someone sets the table's throughput (every index gets the same when switching to
    /// provisioned), within DynamoDB's rules.
    pub fn foreign_update_capacity(
        &self,
        who: &str,
        table: &str,
        to: Billing,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UpdateTable", table, |world, _, effects| {
            let indexes: Vec<String> = world
                .tables
                .get(table)
                .map(|t| t.gsis.iter().map(|g| g.name.clone()).collect())
                .unwrap_or_default();
            let request = CapacityRequest {
                table_to: Some(to),
                indexes: match to {
                    Billing::Provisioned(_) => indexes.iter().map(|i| (i.as_str(), to)).collect(),
                    Billing::OnDemand(_) => Vec::new(),
                },
            };
            Self::update_throughput(world, table, request, effects)
        })
    }

    /// Someone sets one global index's provisioned throughput, within DynamoDB's rules.
    pub fn foreign_update_index_capacity(
        &self,
        who: &str,
        table: &str,
        index: &str,
        to: Billing,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UpdateTable", table, |world, _, effects| {
            let request = CapacityRequest {
                table_to: None,
                indexes: vec![(index, to)],
            };
            Self::update_throughput(world, table, request, effects)
        })
    }

    /// Someone deletes a scaling policy (DeleteScalingPolicy): the target stays.
    pub fn foreign_delete_policy(
        &self,
        who: &str,
        key: &ScalableKey,
        name: &str,
    ) -> Result<(), ControlPlaneError> {
        let table = table_of(&key.resource_id).unwrap_or_default().to_string();
        self.foreign(who, "DeleteScalingPolicy", &table, |world, _, effects| {
            let not_found = || {
                error(
                    ErrorKind::NotFound,
                    "DeleteScalingPolicy",
                    &table,
                    format!("ObjectNotFoundException: No scaling policy found for service namespace: dynamodb, resource ID: {}, scalable dimension: {}: {name}", key.resource_id, key.dimension),
                )
            };
            let target = world.targets.get_mut(key).ok_or_else(not_found)?;
            let at = target.policies.iter().position(|p| p.name == name).ok_or_else(not_found)?;
            let policy = target.policies.remove(at);
            effects.push(Effect::DeletedPolicy {
                key: key.clone(),
                policy,
            });
            Ok(())
        })
    }

    /// Someone pre-warms one of the table's parts (`index` None: the table) to `to` (UpdateTable's
    /// WarmThroughput), within DynamoDB's rules.
    pub fn foreign_raise_warm(
        &self,
        who: &str,
        table: &str,
        index: Option<&str>,
        to: WarmThroughput,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UpdateTable", table, |world, _, effects| {
            let from = world
                .tables
                .get(table)
                .and_then(|t| match index {
                    None => Some(t.warm.units),
                    Some(index) => t.gsi(index).map(|g| g.warm.units),
                })
                .unwrap_or(to);
            let raise = WarmRaise {
                parts: vec![WarmPart {
                    index: index.map(str::to_string),
                    from,
                    to,
                }],
            };
            warm::raise(world, table, &raise, effects)
        })
    }

    /// The application writes new items to `table` (BatchWriteItem): accepted on an ACTIVE,
    /// UPDATING or even DELETING table, refused with AccessDeniedException when the table's
    /// resource-based policy (once it applies) denies item writes to everyone.
    pub fn write_items(&self, who: &str, table: &str, items: &[String]) -> Result<(), ControlPlaneError> {
        const OP: &str = "BatchWriteItem";
        self.foreign(who, OP, table, |world, _, _| {
            let now = world.now;
            let t = world
                .tables
                .get_mut(table)
                .filter(|t| t.status != Status::Creating)
                .ok_or_else(|| not_found(OP, table))?;
            let denied = t
                .resource_policy
                .as_ref()
                .filter(|p| p.applies_at <= now)
                .is_some_and(|p| denies_to_everyone(&p.document, "dynamodb:BatchWriteItem"));
            if denied {
                return Err(error(
                    ErrorKind::Other,
                    OP,
                    table,
                    format!(
                        "AccessDeniedException: User: arn:aws:sts::123456789012:assumed-role/app/{who} is not authorized to perform: dynamodb:BatchWriteItem on resource: {} with an explicit deny in a resource-based policy",
                        t.arn
                    ),
                ));
            }
            for item in items {
                t.items.insert(item.clone());
                world.writes.push(Write {
                    at: now,
                    table: table.to_string(),
                    item: item.clone(),
                });
            }
            Ok(())
        })
    }

    /// Someone disables the table's customer managed KMS key (or revokes DynamoDB's grant on
    /// it, KMS DisableKey / RevokeGrant): the table turns INACCESSIBLE_ENCRYPTION_CREDENTIALS,
    /// takes no reads or writes, and DynamoDB archives it after [`KEY_LOSS_UNTIL_ARCHIVING`]
    /// (ARCHIVING, then ARCHIVED). On AWS only a table encrypted with a customer managed key
    /// can lose it; the fake lets any table.
    pub fn foreign_disable_key(&self, who: &str, table: &str) -> Result<(), ControlPlaneError> {
        self.foreign(who, "DisableKey", table, |world, _, effects| {
            let now = world.now;
            let t = Self::table_mut(world, "DisableKey", table)?;
            if !matches!(t.status, Status::Active | Status::Updating) {
                return Err(validation(
                    "DisableKey",
                    table,
                    format!("the table is {}", t.status.observed().as_str()),
                ));
            }
            t.status = Status::InaccessibleEncryptionCredentials;
            t.ready_at = Some(now + KEY_LOSS_UNTIL_ARCHIVING);
            effects.push(Effect::Setting {
                table: table.to_string(),
                setting: "encryption: KMS key disabled".into(),
            });
            Ok(())
        })
    }

    /// Someone else's PutResourcePolicy (unconditional: it replaces whatever is there).
    pub fn foreign_put_resource_policy(
        &self,
        who: &str,
        table: &str,
        document: &str,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "PutResourcePolicy", table, |world, _, _| {
            Self::put_resource_policy_in(world, "PutResourcePolicy", table, document, None).map(drop)
        })
    }

    /// Someone else's DeleteResourcePolicy (unconditional).
    pub fn foreign_delete_resource_policy(&self, who: &str, table: &str) -> Result<(), ControlPlaneError> {
        self.foreign(who, "DeleteResourcePolicy", table, |world, _, _| {
            Self::delete_resource_policy_in(world, "DeleteResourcePolicy", table, None)
        })
    }

    fn put_resource_policy_in(
        world: &mut World,
        operation: &'static str,
        table: &str,
        document: &str,
        expected: Option<&str>,
    ) -> Result<String, ControlPlaneError> {
        let now = world.now;
        let delay = world.config.policy_delay;
        let id = world.next_id;
        world.next_id += 1;
        let t = Self::table_mut(world, operation, table)?;
        let current = t.resource_policy.as_ref().map(|p| p.revision.as_str());
        match (expected, current) {
            (Some(NO_POLICY), Some(current)) => {
                return Err(policy_not_found(
                    operation,
                    table,
                    &format!("a policy exists with revision id {current}"),
                ))
            }
            (Some(expected), Some(current)) if expected != current => {
                return Err(policy_not_found(
                    operation,
                    table,
                    &format!("the policy has revision id {current}, not {expected}"),
                ))
            }
            (Some(expected), None) if expected != NO_POLICY => {
                return Err(policy_not_found(operation, table, "the table has no policy"))
            }
            _ => {}
        }
        let revision = format!("{}{id:04}", now.timestamp_millis());
        t.resource_policy = Some(TablePolicy {
            document: document.to_string(),
            revision: revision.clone(),
            applies_at: now + delay,
        });
        Ok(revision)
    }

    fn delete_resource_policy_in(
        world: &mut World,
        operation: &'static str,
        table: &str,
        expected: Option<&str>,
    ) -> Result<(), ControlPlaneError> {
        let t = Self::table_mut(world, operation, table)?;
        match (expected, &t.resource_policy) {
            (Some(expected), Some(p)) if p.revision != expected => Err(policy_not_found(
                operation,
                table,
                &format!("the policy has revision id {}, not {expected}", p.revision),
            )),
            (Some(_), None) => Err(policy_not_found(operation, table, "the table has no policy")),
            _ => {
                t.resource_policy = None;
                Ok(())
            }
        }
    }

    pub fn foreign_delete_table(&self, who: &str, table: &str) -> Result<(), ControlPlaneError> {
        self.foreign(who, "DeleteTable", table, |world, actor, effects| {
            Self::delete(world, actor, table, effects)
        })
    }

    // ---- S3: another principal's acts on the archive bucket (logged by key) ----

    /// PutObject: `key` written, or overwritten, with `bytes` (STANDARD).
    pub fn foreign_put_object(&self, who: &str, bucket: &str, key: &str, bytes: &[u8]) {
        let _ = self.foreign(who, "PutObject", key, |world, _, _| {
            world.s3.insert(
                (bucket.to_string(), key.to_string()),
                S3Object::new(bytes.to_vec()),
            );
            Ok(())
        });
    }

    /// DeleteObject (a missing key is no error, as S3 answers).
    pub fn foreign_delete_object(&self, who: &str, bucket: &str, key: &str) {
        let _ = self.foreign(who, "DeleteObject", key, |world, _, _| {
            world.s3.remove(&(bucket.to_string(), key.to_string()));
            Ok(())
        });
    }

    /// CopyObject of `key` onto itself with `x-amz-storage-class: {class}` (what a lifecycle
    /// transition does too): the bytes and the ETag stay. `false` when there is no such key.
    pub fn foreign_set_storage_class(&self, who: &str, bucket: &str, key: &str, class: &str) -> bool {
        self.foreign(who, "CopyObject", key, |world, _, _| {
            let object = world
                .s3
                .get_mut(&(bucket.to_string(), key.to_string()))
                .ok_or_else(|| not_found("CopyObject", key))?;
            object.storage_class = (class != "STANDARD").then(|| class.to_string());
            Ok(())
        })
        .is_ok()
    }

    /// A whole, consistent export of another account's or family's `table` (`items` items in
    /// one data file) laid out under `prefix`, as its own ExportTableToPointInTime would; its
    /// id sorts after every export made so far. Returns its manifest's key.
    pub fn foreign_place_export(
        &self,
        who: &str,
        bucket: &str,
        prefix: &str,
        table: &str,
        items: u64,
    ) -> String {
        let (directory, now) = {
            let world = self.lock();
            let directory = format!(
                "{}/AWSDynamoDB/{:020}-ffffffff",
                prefix.trim_end_matches('/'),
                world.now.timestamp_millis() + 1
            );
            (directory, world.now)
        };
        let export = format!(
            "{}/export/{}",
            arn_of(table),
            directory.rsplit('/').next().unwrap_or_default()
        );
        let files = [(format!("{directory}/data/0000.json.gz"), items)];
        let objects = s3::export_objects(&export, &arn_of(table), &directory, &files, now);
        let manifest = format!("{directory}/manifest-summary.json");
        let _ = self.foreign(who, "PutObject", &manifest, |world, _, _| {
            for (key, object) in objects {
                world.s3.insert((bucket.to_string(), key), object);
            }
            Ok(())
        });
        manifest
    }

    /// An export's `manifest-files.json` rewritten (ETags and MD5s consistent) so its first data
    /// file is listed at a copy outside the export's `data/`, and that file removed from
    /// `data/`. `false` when there is no such export or it lists no file.
    pub fn foreign_repoint_file_list(&self, who: &str, bucket: &str, export: &Export) -> bool {
        let files_key = export.files_key();
        self.foreign(who, "PutObject", &files_key, |world, _, _| {
            let Some((first, _)) = export.files.first() else {
                return Err(not_found("PutObject", &files_key));
            };
            let at = |key: &str| (bucket.to_string(), key.to_string());
            let lines = world
                .s3
                .get(&at(&files_key))
                .ok_or_else(|| not_found("PutObject", &files_key))?;
            let moved = first.replace("/data/", "/elsewhere/");
            let rewritten = String::from_utf8_lossy(&lines.bytes).replace(first.as_str(), &moved);
            let object = world
                .s3
                .remove(&at(first))
                .ok_or_else(|| not_found("PutObject", first))?;
            world.s3.insert(at(&moved), object);
            world
                .s3
                .insert(at(&files_key), S3Object::new(rewritten.into_bytes()));
            Ok(())
        })
        .is_ok()
    }

    pub fn foreign_add_index(
        &self,
        who: &str,
        table: &str,
        index: &GlobalIndex,
        billing: Billing,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UpdateTable", table, |world, actor, effects| {
            Self::add_index(world, actor, table, index, billing, effects)
        })
    }

    /// Someone else's scalable target (created, or its bounds updated).
    pub fn foreign_register_target(
        &self,
        who: &str,
        key: &ScalableKey,
        min: i64,
        max: i64,
    ) -> Result<(), ControlPlaneError> {
        let table = table_of(&key.resource_id).unwrap_or_default().to_string();
        self.foreign(who, "RegisterScalableTarget", &table, |world, actor, effects| {
            Self::check_resource(world, "RegisterScalableTarget", key)?;
            Self::register_target(world, actor, key, min, max, effects);
            Ok(())
        })
    }

    /// Someone else's scaling policy on an existing target: `StepScaling` (no metric or target)
    /// or `TargetTrackingScaling` on the dimension's utilisation metric at 50%.
    pub fn foreign_put_policy(
        &self,
        who: &str,
        key: &ScalableKey,
        name: &str,
        policy_type: &str,
    ) -> Result<(), ControlPlaneError> {
        let table = table_of(&key.resource_id).unwrap_or_default().to_string();
        let tracking = policy_type == "TargetTrackingScaling";
        let policy = ScalingPolicy {
            name: name.to_string(),
            policy_type: policy_type.to_string(),
            metric: tracking.then(|| key.dimension.metric().to_string()),
            target_value: tracking.then_some(50.0),
            maker: Maker::Foreign(who.to_string()),
        };
        self.foreign(who, "PutScalingPolicy", &table, |world, actor, effects| {
            Self::put_policy(world, actor, key, policy, effects)
        })
    }

    /// Someone puts a scheduled action on a registered scalable target (PutScheduledAction;
    /// the same name again updates it): AWS refuses one on a target that is not registered.
    pub fn foreign_put_scheduled_action(
        &self,
        who: &str,
        key: &ScalableKey,
        name: &str,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "PutScheduledAction";
        let table = table_of(&key.resource_id).unwrap_or_default().to_string();
        self.foreign(who, OP, &table, |world, actor, effects| {
            let Some(target) = world.targets.get_mut(key) else {
                return Err(error(
                    ErrorKind::NotFound,
                    OP,
                    &table,
                    format!("ObjectNotFoundException: No scalable target registered for service namespace: dynamodb, resource ID: {}, scalable dimension: {}", key.resource_id, key.dimension),
                ));
            };
            let created = !target.scheduled_actions.iter().any(|a| a.name == name);
            if created {
                target.scheduled_actions.push(ScheduledAction {
                    name: name.to_string(),
                    maker: actor.clone(),
                });
            }
            effects.push(Effect::PutScheduledAction {
                key: key.clone(),
                name: name.to_string(),
                created,
            });
            Ok(())
        })
    }

    /// Someone deletes a scheduled action (DeleteScheduledAction): the target stays.
    pub fn foreign_delete_scheduled_action(
        &self,
        who: &str,
        key: &ScalableKey,
        name: &str,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteScheduledAction";
        let table = table_of(&key.resource_id).unwrap_or_default().to_string();
        self.foreign(who, OP, &table, |world, _, effects| {
            let not_found = || {
                error(
                    ErrorKind::NotFound,
                    OP,
                    &table,
                    format!("ObjectNotFoundException: No scheduled action found for service namespace: dynamodb, resource ID: {}, scalable dimension: {}: {name}", key.resource_id, key.dimension),
                )
            };
            let target = world.targets.get_mut(key).ok_or_else(not_found)?;
            let at = target
                .scheduled_actions
                .iter()
                .position(|a| a.name == name)
                .ok_or_else(not_found)?;
            let action = target.scheduled_actions.remove(at);
            effects.push(Effect::DeletedScheduledAction {
                key: key.clone(),
                action,
            });
            Ok(())
        })
    }

    /// Someone turns deletion protection on or off (UpdateTable DeletionProtectionEnabled),
    /// within DynamoDB's rules (an ACTIVE table; UPDATING meanwhile).
    pub fn foreign_deletion_protection(
        &self,
        who: &str,
        table: &str,
        on: bool,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        self.foreign(who, OP, table, |world, actor, effects| {
            let now = world.now;
            let delay = world.config.update_delay;
            let t = Self::table_mut(world, OP, table)?;
            if t.status != Status::Active {
                return Err(in_use(OP, table, t.status));
            }
            t.deletion_protection = on;
            t.protected_by = on.then(|| actor.clone());
            t.status = Status::Updating;
            t.ready_at = Some(now + delay);
            effects.push(Effect::Setting {
                table: table.to_string(),
                setting: TableSetting::DeletionProtection(on).to_string(),
            });
            Ok(())
        })
    }

    /// Someone deregisters a scalable target: Application Auto Scaling deletes every policy and
    /// scheduled action on it with it, whoever made them.
    pub fn foreign_deregister_target(&self, who: &str, key: &ScalableKey) -> Result<(), ControlPlaneError> {
        let table = table_of(&key.resource_id).unwrap_or_default().to_string();
        self.foreign(who, "DeregisterScalableTarget", &table, |world, _, effects| {
            Self::deregister_target(world, key, effects)
        })
    }

    /// DeregisterScalableTarget: the target goes, with every policy and scheduled action on it.
    fn deregister_target(
        world: &mut World,
        key: &ScalableKey,
        effects: &mut Vec<Effect>,
    ) -> Result<(), ControlPlaneError> {
        let Some(target) = world.targets.remove(key) else {
            return Err(error(
                ErrorKind::NotFound,
                "DeregisterScalableTarget",
                table_of(&key.resource_id).unwrap_or_default(),
                format!("ObjectNotFoundException: No scalable target found for service namespace: dynamodb, resource ID: {}, scalable dimension: {}", key.resource_id, key.dimension),
            ));
        };
        effects.push(Effect::DeregisteredTarget {
            key: key.clone(),
            maker: target.maker,
            policies: target.policies,
            scheduled_actions: target.scheduled_actions,
        });
        Ok(())
    }

    fn role(&self) -> Option<&str> {
        self.iam.then_some(self.family.as_str())
    }
}

impl ControlPlane for FakeAws {
    async fn list_table_names(&self, prefix: &str) -> Result<Vec<String>, ControlPlaneError> {
        Ok(self
            .lock()
            .tables
            .keys()
            .filter(|n| n.starts_with(prefix))
            .cloned()
            .collect())
    }

    async fn describe_table(&self, name: &str) -> Result<Option<ObservedTable>, ControlPlaneError> {
        self.may_read("DescribeTable", "dynamodb:DescribeTable", name)?;
        let world = self.lock();
        Ok(world.tables.get(name).map(|t| t.observed(world.now)))
    }

    async fn create_table(&self, spec: &TableSpec) -> Result<(), ControlPlaneError> {
        const OP: &str = "CreateTable";
        self.call(&self.actor, self.role(), OP, &spec.name, |world, effects| {
            self.may_read(OP, "dynamodb:CreateTable", &spec.name)?;
            if self.iam && spec.tags.get(FAMILY_TAG).map(String::as_str) != Some(self.family.as_str()) {
                return Err(self.denied(
                    OP,
                    "dynamodb:CreateTable",
                    &spec.name,
                    &format!("aws:RequestTag/{FAMILY_TAG} must be {:?}", self.family),
                ));
            }
            Self::create(world, &self.actor, spec, effects)
        })
    }

    async fn update_capacity(&self, change: &CapacityChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        self.call(&self.actor, self.role(), OP, &change.name, |world, effects| {
            self.may_change(world, OP, "dynamodb:UpdateTable", &change.name)?;
            // What the SDK adapter sends: the table's throughput only when it changes.
            let request = CapacityRequest {
                table_to: (change.from != change.to).then_some(change.to),
                indexes: change.indexes.iter().map(|i| (i.index.as_str(), i.to)).collect(),
            };
            Self::update_throughput(world, &change.name, request, effects)
        })
    }

    async fn update_table_class(&self, change: &ClassChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        self.call(&self.actor, self.role(), OP, &change.name, |world, effects| {
            self.may_change(world, OP, "dynamodb:UpdateTable", &change.name)?;
            let now = world.now;
            let delay = world.config.update_delay;
            let table = Self::table_mut(world, OP, &change.name)?;
            if table.status != Status::Active {
                return Err(in_use(OP, &change.name, table.status));
            }
            if table.class == change.to {
                return Err(validation(
                    OP,
                    &change.name,
                    format!("The table class is already {}", change.to),
                ));
            }
            let recent = table
                .class_changes
                .iter()
                .filter(|t| now - **t < Duration::days(30))
                .count();
            if recent >= CLASS_CHANGES_PER_30_DAYS {
                return Err(limit(
                    OP,
                    &change.name,
                    format!("{recent} table class updates in the trailing 30 days"),
                ));
            }
            effects.push(Effect::TableClass {
                table: change.name.clone(),
                from: table.class,
                to: change.to,
            });
            table.class = change.to;
            table.class_changes.push(now);
            table.status = Status::Updating;
            table.ready_at = Some(now + delay);
            Ok(())
        })
    }

    async fn list_tags(&self, arn: &str) -> Result<BTreeMap<String, String>, ControlPlaneError> {
        let name = name_of_arn(arn);
        self.may_read("ListTagsOfResource", "dynamodb:ListTagsOfResource", name)?;
        let world = self.lock();
        world
            .tables
            .get(name)
            .map(|t| t.tags.clone())
            .ok_or_else(|| not_found("ListTagsOfResource", name))
    }

    async fn describe_ttl(&self, name: &str) -> Result<TtlState, ControlPlaneError> {
        self.may_read("DescribeTimeToLive", "dynamodb:DescribeTimeToLive", name)?;
        let world = self.lock();
        let table = world
            .tables
            .get(name)
            .ok_or_else(|| not_found("DescribeTimeToLive", name))?;
        Ok(match &table.ttl {
            Some(attribute) => TtlState {
                status: "ENABLED".into(),
                attribute: Some(attribute.clone()),
            },
            None => TtlState {
                status: "DISABLED".into(),
                attribute: None,
            },
        })
    }

    async fn describe_point_in_time_recovery(&self, name: &str) -> Result<bool, ControlPlaneError> {
        self.may_read(
            "DescribeContinuousBackups",
            "dynamodb:DescribeContinuousBackups",
            name,
        )?;
        let world = self.lock();
        let table = world
            .tables
            .get(name)
            .ok_or_else(|| not_found("DescribeContinuousBackups", name))?;
        Ok(table.pitr)
    }

    async fn describe_export(&self, table: &str, arn: &str) -> Result<ExportState, ControlPlaneError> {
        let world = self.lock();
        let export = world.exports.get(arn).ok_or_else(|| {
            error(
                ErrorKind::Other,
                "DescribeExport",
                table,
                format!("ExportNotFoundException: Export not found: {arn}"),
            )
        })?;
        Ok(ExportState {
            arn: export.arn.clone(),
            status: export.status,
            export_time: Some(export.export_time),
            end_time: (export.status == ExportStatus::Completed).then_some(export.done_at),
            failure: None,
        })
    }

    async fn prove_archive(&self, table: &str, export: &str) -> Result<ArchiveProof, ControlPlaneError> {
        let (location, store) = {
            let world = self.lock();
            let found = world.exports.get(export).ok_or_else(|| {
                error(
                    ErrorKind::Other,
                    "DescribeExport",
                    table,
                    format!("ExportNotFoundException: Export not found: {export}"),
                )
            })?;
            if found.status != ExportStatus::Completed {
                return Ok(ArchiveProof::Unproven {
                    export: export.to_string(),
                    reason: format!("the export is {:?}", found.status),
                });
            }
            let location = ExportLocation {
                export: export.to_string(),
                table: table.to_string(),
                bucket: found.bucket.clone(),
                manifest: Some(found.manifest_key()),
                items: Some(found.items()),
            };
            (location, s3::FakeS3(world.s3.clone()))
        };
        Ok(prove(&store, &location).await)
    }

    async fn find_archives(
        &self,
        table: &str,
        bucket: &str,
        prefix: &str,
    ) -> Result<Vec<(ExportLocation, ArchiveProof)>, ControlPlaneError> {
        let store = s3::FakeS3(self.lock().s3.clone());
        Ok(archives_under(&store, table, bucket, prefix)
            .await
            .expect("the fake's S3 answers every read"))
    }

    /// The operator's ImportTable: the table is created as the request's spec says (CREATING,
    /// then ACTIVE), with no tags; the import COMPLETES with it, having read every object under
    /// the request's prefix (one item a line; a line that is no item is an error).
    async fn import_table(&self, request: &ImportRequest) -> Result<String, ControlPlaneError> {
        const OP: &str = "ImportTable";
        self.call(
            &self.actor,
            self.role(),
            OP,
            &request.spec.name,
            |world, effects| {
                Self::create(world, &self.actor, &request.spec, effects)?;
                let arn = format!("{}/import/{}", arn_of(&request.spec.name), request.client_token);
                let counts = s3::import_counts(&world.s3, &request.bucket, &request.data_prefix);
                world.imports.insert(
                    arn.clone(),
                    Import {
                        table: request.spec.name.clone(),
                        counts,
                    },
                );
                Ok(arn)
            },
        )
    }

    async fn describe_import(&self, table: &str, arn: &str) -> Result<ImportState, ControlPlaneError> {
        let world = self.lock();
        let import = world
            .imports
            .get(arn)
            .ok_or_else(|| not_found("DescribeImport", table))?;
        Ok(match (world.tables.get(&import.table), &import.counts) {
            (_, Err(message)) => ImportState::Failed {
                message: message.clone(),
            },
            (Some(t), Ok((items, errors))) if t.status == Status::Active => ImportState::Completed {
                items: Some(*items),
                errors: Some(*errors),
            },
            (Some(_), Ok(_)) => ImportState::InProgress,
            (None, Ok(_)) => ImportState::Failed {
                message: "the table is gone".into(),
            },
        })
    }

    async fn tag_table(&self, change: &TagChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "TagResource";
        self.call(&self.actor, self.role(), OP, &change.name, |world, effects| {
            let name = name_of_arn(&change.arn);
            self.may_change(world, OP, "dynamodb:TagResource", name)?;
            if let Some(family) = change
                .tags
                .get(FAMILY_TAG)
                .filter(|f| self.iam && **f != self.family)
            {
                return Err(self.denied(
                    OP,
                    "dynamodb:TagResource",
                    name,
                    &format!("aws:RequestTag/{FAMILY_TAG} is {family:?}"),
                ));
            }
            Self::tag(world, name, &change.tags, effects)
        })
    }

    async fn enable_ttl(&self, change: &TtlChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTimeToLive";
        self.call(&self.actor, self.role(), OP, &change.name, |world, effects| {
            self.may_change(world, OP, "dynamodb:UpdateTimeToLive", &change.name)?;
            let table = Self::table_mut(world, OP, &change.name)?;
            if matches!(table.status, Status::Creating | Status::Deleting) {
                return Err(in_use(OP, &change.name, table.status));
            }
            if table.ttl.is_some() {
                return Err(validation(OP, &change.name, "TimeToLive is already enabled"));
            }
            table.ttl = Some(change.attribute.clone());
            effects.push(Effect::Ttl {
                table: change.name.clone(),
                attribute: change.attribute.clone(),
            });
            Ok(())
        })
    }

    async fn enable_point_in_time_recovery(&self, name: &str) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateContinuousBackups";
        self.call(&self.actor, self.role(), OP, name, |world, effects| {
            self.may_change(world, OP, "dynamodb:UpdateContinuousBackups", name)?;
            let table = Self::table_mut(world, OP, name)?;
            if matches!(table.status, Status::Creating | Status::Deleting) {
                return Err(in_use(OP, name, table.status));
            }
            table.pitr = true;
            effects.push(Effect::Pitr {
                table: name.to_string(),
            });
            Ok(())
        })
    }

    async fn configure(&self, change: &SettingChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        self.call(&self.actor, self.role(), OP, &change.name, |world, effects| {
            self.may_change(world, OP, "dynamodb:UpdateTable", &change.name)?;
            if let TableSetting::Warm(raise) = &change.setting {
                return warm::raise(world, &change.name, raise, effects);
            }
            if let TableSetting::AddIndex(spec) = &change.setting {
                return Self::add_index(
                    world,
                    &self.actor,
                    &change.name,
                    &spec.index,
                    spec.billing,
                    effects,
                );
            }
            let now = world.now;
            let delay = world.config.update_delay;
            let table = Self::table_mut(world, OP, &change.name)?;
            if table.status != Status::Active {
                return Err(in_use(OP, &change.name, table.status));
            }
            match &change.setting {
                TableSetting::DeletionProtection(on) => {
                    table.deletion_protection = *on;
                    table.protected_by = on.then(|| self.actor.clone());
                }
                TableSetting::Stream(stream) => table.stream = *stream,
                TableSetting::Encryption(encryption) => table.encryption = encryption_of(encryption),
                TableSetting::AddIndex(_) | TableSetting::Warm(_) => unreachable!("handled above"),
            }
            table.status = Status::Updating;
            table.ready_at = Some(now + delay);
            effects.push(Effect::Setting {
                table: change.name.clone(),
                setting: change.setting.to_string(),
            });
            Ok(())
        })
    }

    async fn export_table(&self, request: &ExportRequest) -> Result<String, ControlPlaneError> {
        const OP: &str = "ExportTableToPointInTime";
        self.call(&self.actor, self.role(), OP, &request.name, |world, effects| {
            let name = name_of_arn(&request.table_arn).to_string();
            self.may_change(world, OP, "dynamodb:ExportTableToPointInTime", &name)?;
            let table = world.tables.get(&name).ok_or_else(|| {
                error(
                    ErrorKind::NotFound,
                    OP,
                    &name,
                    format!("TableNotFoundException: Table not found: {name}"),
                )
            })?;
            if !table.pitr {
                return Err(error(
                    ErrorKind::Other,
                    OP,
                    &name,
                    format!("PointInTimeRecoveryUnavailableException: Point in time recovery is not enabled for table '{name}'"),
                ));
            }
            let id = world.next_id;
            world.next_id += 1;
            let export_id = format!("{:020}-{id:08x}", world.now.timestamp_millis());
            let arn = format!("{}/export/{export_id}", arn_of(&name));
            let directory = format!("{}/AWSDynamoDB/{export_id}", request.prefix.trim_end_matches('/'));
            // The table as of now (ExportTime), in one data file per partition, as AWS writes them.
            let items = table.items.clone();
            let total = items.len() as u64;
            let files = (0..2u64)
                .map(|n| {
                    let count = if n == 0 { total / 2 } else { total - total / 2 };
                    (format!("{directory}/data/{n:04}.json.gz"), count)
                })
                .collect();
            world.exports.insert(
                arn.clone(),
                Export {
                    arn: arn.clone(),
                    table: name.clone(),
                    status: ExportStatus::InProgress,
                    done_at: world.now + world.config.export_delay,
                    bucket: request.bucket.clone(),
                    directory,
                    files,
                    export_time: world.now,
                    items,
                },
            );
            effects.push(Effect::Exported {
                table: name,
                export: arn.clone(),
            });
            Ok(arn)
        })
    }

    async fn get_resource_policy(
        &self,
        table: &str,
        _arn: &str,
    ) -> Result<ResourcePolicy, ControlPlaneError> {
        self.may_read("GetResourcePolicy", "dynamodb:GetResourcePolicy", table)?;
        let world = self.lock();
        let t = world
            .tables
            .get(table)
            .ok_or_else(|| not_found("GetResourcePolicy", table))?;
        Ok(t.resource_policy
            .as_ref()
            .map(|p| ResourcePolicy {
                document: Some(p.document.clone()),
                revision: Some(p.revision.clone()),
            })
            .unwrap_or_default())
    }

    async fn put_resource_policy(
        &self,
        table: &str,
        _arn: &str,
        document: &str,
        expected_revision: &str,
    ) -> Result<String, ControlPlaneError> {
        const OP: &str = "PutResourcePolicy";
        self.call(&self.actor, self.role(), OP, table, |world, _| {
            self.may_change(world, OP, "dynamodb:PutResourcePolicy", table)?;
            Self::put_resource_policy_in(world, OP, table, document, Some(expected_revision))
        })
    }

    async fn delete_resource_policy(
        &self,
        table: &str,
        _arn: &str,
        expected_revision: &str,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteResourcePolicy";
        self.call(&self.actor, self.role(), OP, table, |world, _| {
            self.may_change(world, OP, "dynamodb:DeleteResourcePolicy", table)?;
            Self::delete_resource_policy_in(world, OP, table, Some(expected_revision))
        })
    }

    async fn delete_table(&self, name: &str) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteTable";
        self.call(&self.actor, self.role(), OP, name, |world, effects| {
            self.may_read(OP, "dynamodb:DeleteTable", name)?;
            // DeleteFamilyTables: StringEquals, so an untagged table is refused too.
            let family = world.tables.get(name).and_then(Table::family);
            if self.iam && family != Some(self.family.as_str()) {
                return Err(self.denied(
                    OP,
                    "dynamodb:DeleteTable",
                    name,
                    &format!(
                        "aws:ResourceTag/{FAMILY_TAG} is {family:?}, the role needs {:?}",
                        self.family
                    ),
                ));
            }
            Self::delete(world, &self.actor, name, effects)
        })
    }

    fn now(&self) -> Instant {
        let world = self.lock();
        let (time, instant) = world.epoch;
        instant + (world.now - time).to_std().unwrap_or_default()
    }

    async fn sleep(&self, duration: std::time::Duration) {
        self.advance(Duration::from_std(duration).unwrap_or(Duration::zero()));
    }

    async fn describe_scaling(
        &self,
        tables: &[String],
    ) -> Result<Vec<ObservedScalableTarget>, ControlPlaneError> {
        let world = self.lock();
        Ok(world
            .targets
            .values()
            .filter(|t| table_of(&t.key.resource_id).is_some_and(|name| tables.iter().any(|n| n == name)))
            .map(Target::observed)
            .collect())
    }

    async fn register_scaling(&self, change: &RegisterScaling) -> Result<(), ControlPlaneError> {
        self.call(
            &self.actor,
            self.role(),
            "RegisterScalableTarget",
            &change.name,
            |world, effects| {
                for target in &change.targets {
                    const OP: &str = "RegisterScalableTarget";
                    let table = table_of(&target.key.resource_id).unwrap_or_default().to_string();
                    // Application Auto Scaling checks that the caller may update the table.
                    self.may_change(world, OP, "dynamodb:UpdateTable", &table)?;
                    Self::check_resource(world, OP, &target.key)?;
                    Self::register_target(world, &self.actor, &target.key, target.min, target.max, effects);
                    let policy = ScalingPolicy {
                        name: target.policy_name.clone(),
                        policy_type: "TargetTrackingScaling".into(),
                        metric: Some(target.key.dimension.metric().to_string()),
                        target_value: Some(f64::from(target.target)),
                        maker: self.actor.clone(),
                    };
                    Self::put_policy(world, &self.actor, &target.key, policy, effects)?;
                }
                Ok(())
            },
        )
    }

    /// As the SDK adapter does it (`autoscaling_sdk::deregister`): DeleteScalingPolicy of our
    /// policy (already gone counts as deleted), then, when the change asks for it,
    /// DescribeScalingPolicies, DescribeScheduledActions and DeregisterScalableTarget only if
    /// no policy and no scheduled action is left on the target (a missing target counts as
    /// deregistered).
    async fn deregister_scaling(&self, change: &DeregisterScaling) -> Result<(), ControlPlaneError> {
        self.call(
            &self.actor,
            self.role(),
            "DeregisterScalableTarget",
            &change.name,
            |world, effects| {
                for removal in &change.targets {
                    if let Some(target) = world.targets.get_mut(&removal.key) {
                        if let Some(at) = target.policies.iter().position(|p| p.name == removal.policy_name) {
                            let policy = target.policies.remove(at);
                            effects.push(Effect::DeletedPolicy {
                                key: removal.key.clone(),
                                policy,
                            });
                        }
                    }
                    let left = world
                        .targets
                        .get(&removal.key)
                        .map(|t| t.policies.len() + t.scheduled_actions.len());
                    if removal.deregister_target && left == Some(0) {
                        Self::deregister_target(world, &removal.key, effects)?;
                    }
                }
                Ok(())
            },
        )
    }
}

/// The scalable keys of a table's read and write, and of an index's.
pub fn key_for(table: &str, index: Option<&str>, dimension: ScalableDimension) -> ScalableKey {
    ScalableKey {
        resource_id: ddb_rollover::policy::scaling::resource_id(table, index),
        dimension,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use ddb_rollover::policy::scaling::{ScalingRemoval, ScalingTarget};
    use ddb_rollover::policy::settings::{AttributeKind, KeyAttribute};
    use ddb_rollover::table::changes::IndexCapacityChange;
    use futures::executor::block_on;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 3, 30, h, m, 0).unwrap()
    }

    fn key() -> KeySchema {
        KeySchema {
            partition: KeyAttribute {
                name: "pk".into(),
                kind: AttributeKind::N,
            },
            sort: None,
        }
    }

    fn spec(name: &str, family: Option<&str>) -> TableSpec {
        TableSpec {
            name: name.into(),
            key: key(),
            billing: Billing::Provisioned(Capacity {
                read: 100,
                write: 100,
            }),
            global_indexes: Vec::new(),
            local_indexes: Vec::new(),
            table_class: None,
            deletion_protection: false,
            stream: None,
            encryption: None,
            tags: family
                .map(|f| BTreeMap::from([(FAMILY_TAG.to_string(), f.to_string())]))
                .unwrap_or_default(),
            warm: None,
        }
    }

    fn capacity(name: &str, from: i64, to: i64) -> CapacityChange {
        CapacityChange {
            name: name.into(),
            from: Billing::Provisioned(Capacity {
                read: from,
                write: from,
            }),
            to: Billing::Provisioned(Capacity { read: to, write: to }),
            indexes: Vec::<IndexCapacityChange>::new(),
        }
    }

    fn kind<T>(result: Result<T, ControlPlaneError>) -> ErrorKind {
        result.err().expect("an error").kind
    }

    #[test]
    fn decrease_budget() {
        let mut d = Decreases::default();
        for m in 0..4 {
            assert!(d.allowed(at(0, m)));
            d.at.push(at(0, m));
        }
        assert!(!d.allowed(at(0, 30)));
        assert!(d.allowed(at(1, 3)));
        d.at.push(at(1, 3));
        assert!(!d.allowed(at(1, 30)));
        // A new UTC day.
        assert!(d.allowed(Utc.with_ymd_and_hms(2024, 3, 31, 0, 0, 0).unwrap()));
        assert_eq!(d.today(at(5, 0)), 5);
    }

    #[test]
    fn tables_go_through_their_statuses_on_the_fake_clock() {
        let fake = FakeAws::new("ts", at(0, 0), Config::default());
        // The role creates only tables that carry its family tag.
        assert_eq!(
            kind(block_on(fake.create_table(&spec("ts_a", None)))),
            ErrorKind::Other
        );
        block_on(fake.create_table(&spec("ts_a", Some("ts")))).unwrap();
        assert_eq!(
            kind(block_on(fake.create_table(&spec("ts_a", Some("ts"))))),
            ErrorKind::AlreadyExists
        );
        let status = || block_on(fake.describe_table("ts_a")).unwrap().map(|t| t.status);
        assert_eq!(status(), Some(TableStatus::Creating));
        assert_eq!(
            kind(block_on(fake.update_capacity(&capacity("ts_a", 100, 50)))),
            ErrorKind::InUse
        );
        block_on(fake.sleep(std::time::Duration::from_secs(20)));
        assert_eq!(fake.now(), at(0, 0) + Duration::seconds(20));
        assert_eq!(status(), Some(TableStatus::Active));
        // Unchanged throughput, then four decreases, then one an hour.
        assert_eq!(
            kind(block_on(fake.update_capacity(&capacity("ts_a", 50, 100)))),
            ErrorKind::NoChange
        );
        for units in [90, 80, 70, 60] {
            block_on(fake.update_capacity(&capacity("ts_a", units + 10, units))).unwrap();
            assert_eq!(status(), Some(TableStatus::Updating));
            fake.advance(Duration::minutes(1));
        }
        assert_eq!(
            block_on(fake.describe_table("ts_a"))
                .unwrap()
                .unwrap()
                .decreases_today,
            4
        );
        assert_eq!(
            kind(block_on(fake.update_capacity(&capacity("ts_a", 60, 50)))),
            ErrorKind::LimitExceeded
        );
        fake.advance(Duration::hours(1));
        block_on(fake.update_capacity(&capacity("ts_a", 60, 50))).unwrap();
        fake.advance(Duration::minutes(1));
        // Deleting: DELETING, listed, then gone.
        block_on(fake.delete_table("ts_a")).unwrap();
        assert_eq!(status(), Some(TableStatus::Deleting));
        assert_eq!(block_on(fake.list_table_names("ts_")).unwrap(), ["ts_a"]);
        fake.advance(Duration::minutes(1));
        assert_eq!(status(), None);
        assert_eq!(
            kind(block_on(fake.update_capacity(&capacity("ts_a", 50, 60)))),
            ErrorKind::NotFound
        );
        assert_eq!(fake.snapshot().gone.len(), 1);
    }

    #[test]
    fn the_role_changes_only_its_familys_tables_and_deletes_only_tagged_ones() {
        let fake = FakeAws::new("ts", at(0, 0), Config::default());
        fake.foreign_create_table("someone", &spec("ts_eu_a", Some("ts_eu")))
            .unwrap();
        fake.foreign_create_table("someone", &spec("ts_b", None)).unwrap();
        fake.foreign_create_table("someone", &spec("other_c", None))
            .unwrap();
        fake.advance(Duration::minutes(1));
        let denied = |result: Result<(), ControlPlaneError>| {
            let e = result.expect_err("denied");
            assert_eq!(e.kind, ErrorKind::Other);
            assert!(e.message.starts_with("AccessDeniedException"), "{}", e.message);
        };
        denied(block_on(fake.update_capacity(&capacity("ts_eu_a", 100, 50))));
        denied(block_on(fake.update_capacity(&capacity("other_c", 100, 50))));
        assert!(block_on(fake.describe_table("other_c")).is_err());
        let tag = |name: &str, family: &str| TagChange {
            name: name.into(),
            arn: arn_of(name),
            tags: BTreeMap::from([(FAMILY_TAG.to_string(), family.to_string())]),
        };
        denied(block_on(fake.tag_table(&tag("ts_b", "ts_eu"))));
        // An untagged table may be changed and deleted only once it carries the family tag.
        denied(block_on(fake.delete_table("ts_b")));
        block_on(fake.update_capacity(&capacity("ts_b", 100, 50))).unwrap();
        block_on(fake.tag_table(&tag("ts_b", "ts"))).unwrap();
        fake.advance(Duration::minutes(1));
        block_on(fake.delete_table("ts_b")).unwrap();
        let calls = fake.calls_since(0);
        assert!(calls.iter().filter(|c| c.actor == Maker::Us).any(|c| matches!(
            c.effects.as_slice(),
            [Effect::Tagged { before, .. }] if before.is_empty()
        )));
        // Another family's role: its own tables only.
        let sibling = fake.acting_as("ts_eu", "family ts_eu");
        block_on(sibling.update_capacity(&capacity("ts_eu_a", 100, 50))).unwrap();
        assert_eq!(
            fake.snapshot().tables["ts_eu_a"].maker,
            Maker::Foreign("someone".into())
        );
    }

    #[test]
    fn deregistering_a_target_deletes_every_policy_and_deleting_a_table_leaves_targets() {
        let fake = FakeAws::new("ts", at(0, 0), Config::default());
        block_on(fake.create_table(&spec("ts_a", Some("ts")))).unwrap();
        let key = key_for("ts_a", None, ScalableDimension::TableWrite);
        let register = RegisterScaling {
            name: "ts_a".into(),
            targets: vec![ScalingTarget {
                key: key.clone(),
                min: 5,
                max: 50,
                target: 70,
                policy_name: "ddb-rollover-ts-write".into(),
            }],
        };
        // Not while CREATING (Application Auto Scaling: the resource does not exist yet).
        assert_eq!(kind(block_on(fake.register_scaling(&register))), ErrorKind::InUse);
        fake.advance(Duration::minutes(1));
        block_on(fake.register_scaling(&register)).unwrap();
        // The autoscaler brought the write capacity within the bounds (a decrease).
        let table = &fake.snapshot().tables["ts_a"];
        assert_eq!(
            table.billing,
            Billing::Provisioned(Capacity { read: 100, write: 50 })
        );
        assert_eq!(table.decreases.today(fake.now()), 1);
        fake.foreign_put_policy("ops", &key, "ops-step", "StepScaling")
            .unwrap();
        let observed = block_on(fake.describe_scaling(&["ts_a".to_string()])).unwrap();
        assert_eq!(observed[0].policies.len(), 2);
        // The adapter's contract: our policy goes; the target stays while a policy is left.
        let ours = DeregisterScaling {
            name: "ts_a".into(),
            targets: vec![ScalingRemoval {
                key: key.clone(),
                policy_name: "ddb-rollover-ts-write".into(),
                deregister_target: true,
            }],
        };
        let logged = fake.log_len();
        block_on(fake.deregister_scaling(&ours)).unwrap();
        let effects = &fake.calls_since(logged)[0].effects;
        assert!(
            matches!(&effects[..], [Effect::DeletedPolicy { policy, .. }] if policy.name == "ddb-rollover-ts-write")
        );
        let observed = block_on(fake.describe_scaling(&["ts_a".to_string()])).unwrap();
        assert_eq!(observed[0].policies.len(), 1);
        // DeregisterScalableTarget itself deletes every policy on the target.
        let logged = fake.log_len();
        fake.foreign_deregister_target("ops", &key).unwrap();
        let effects = &fake.calls_since(logged)[0].effects;
        assert!(
            matches!(&effects[..], [Effect::DeregisteredTarget { policies, .. }]
            if policies.len() == 1 && policies[0].name == "ops-step")
        );
        // Ours alone: deleted, then deregistered; asked not to deregister, the target stays.
        block_on(fake.register_scaling(&register)).unwrap();
        let keep = DeregisterScaling {
            targets: vec![ScalingRemoval {
                deregister_target: false,
                ..ours.targets[0].clone()
            }],
            ..ours.clone()
        };
        block_on(fake.deregister_scaling(&keep)).unwrap();
        assert_eq!(fake.snapshot().targets[&key].policies.len(), 0);
        block_on(fake.register_scaling(&register)).unwrap();
        let logged = fake.log_len();
        block_on(fake.deregister_scaling(&ours)).unwrap();
        let effects = &fake.calls_since(logged)[0].effects;
        assert!(matches!(
            &effects[..],
            [Effect::DeletedPolicy { .. }, Effect::DeregisteredTarget { policies, .. }] if policies.is_empty()
        ));
        assert!(fake.snapshot().targets.is_empty());
        // A deleted table's targets stay.
        fake.foreign_register_target("ops", &key, 1, 10).unwrap();
        fake.advance(Duration::minutes(1));
        block_on(fake.delete_table("ts_a")).unwrap();
        fake.advance(Duration::minutes(5));
        assert!(fake.snapshot().tables.is_empty());
        assert_eq!(
            block_on(fake.describe_scaling(&["ts_a".to_string()]))
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn the_control_planes_clock_is_the_fake_time() {
        let fake = FakeAws::new("ts", at(0, 0), Config::default());
        let start = ControlPlane::now(&fake);
        block_on(fake.sleep(std::time::Duration::from_secs(90)));
        assert_eq!(
            ControlPlane::now(&fake) - start,
            std::time::Duration::from_secs(90)
        );
        fake.set_now(at(1, 0));
        assert_eq!(
            ControlPlane::now(&fake) - start,
            std::time::Duration::from_secs(3600)
        );
        // Every view of the account shares it.
        assert_eq!(
            ControlPlane::now(&fake.operator()) - start,
            std::time::Duration::from_secs(3600)
        );
    }

    #[test]
    fn the_operator_is_not_bound_by_the_role() {
        let fake = FakeAws::new("ts", at(0, 0), Config::default());
        fake.foreign_create_table("someone", &spec("ts_b", None)).unwrap();
        fake.advance(Duration::minutes(1));
        let tag = TagChange {
            name: "ts_b".into(),
            arn: arn_of("ts_b"),
            tags: BTreeMap::from([(FAMILY_TAG.to_string(), "ts".to_string())]),
        };
        block_on(fake.operator().tag_table(&tag)).unwrap();
        let call = fake.calls_since(0).pop().unwrap();
        assert_eq!(call.actor, Maker::Foreign("operator".into()));
        assert_eq!(call.role, None);
        assert!(!fake.snapshot().tables["ts_b"].adopted);
        fake.mark_adopted("ts_b");
        assert!(fake.snapshot().tables["ts_b"].adopted);
    }

    #[test]
    fn item_writes_are_refused_under_a_seal_and_exports_hold_the_table_as_of_their_time() {
        let fake = FakeAws::new("ts", at(0, 0), Config::default());
        block_on(fake.create_table(&spec("ts_a", Some("ts")))).unwrap();
        fake.advance(Duration::minutes(1));
        block_on(fake.enable_point_in_time_recovery("ts_a")).unwrap();
        let items = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        fake.write_items("app", "ts_a", &items(&["1", "2", "3"])).unwrap();
        let export = |fake: &FakeAws| {
            block_on(fake.export_table(&ExportRequest {
                name: "ts_a".into(),
                table_arn: arn_of("ts_a"),
                bucket: "b".into(),
                prefix: "p/ts_a/".into(),
                after_seal: false,
            }))
            .unwrap()
        };
        let first = export(&fake);
        fake.write_items("app", "ts_a", &items(&["4", "5"])).unwrap();
        assert_eq!(
            fake.snapshot().exports[&first].items.len(),
            3,
            "as of its ExportTime"
        );

        // The seal: a conditional put on no policy, then a deny that applies after the delay.
        let none = block_on(fake.get_resource_policy("ts_a", &arn_of("ts_a"))).unwrap();
        assert_eq!(none, ResourcePolicy::default());
        let document = none.with_seal(&arn_of("ts_a")).unwrap();
        let stale = block_on(fake.put_resource_policy("ts_a", &arn_of("ts_a"), &document, "123"));
        assert!(stale.unwrap_err().message.contains("PolicyNotFoundException"));
        let revision =
            block_on(fake.put_resource_policy("ts_a", &arn_of("ts_a"), &document, NO_POLICY)).unwrap();
        fake.write_items("app", "ts_a", &items(&["6"])).unwrap();
        fake.advance(Config::default().policy_delay);
        let refused = fake.write_items("app", "ts_a", &items(&["7"])).unwrap_err();
        assert!(refused.message.contains("AccessDeniedException"), "{refused}");
        let sealed = export(&fake);
        assert_eq!(fake.snapshot().exports[&sealed].items.len(), 6);

        // DeleteTable keeps what the table held, writes while DELETING included.
        block_on(fake.delete_table("ts_a")).unwrap();
        let world = fake.snapshot();
        let Some(Effect::DeletedTable { table }) = world.log.last().and_then(|c| c.effects.first()) else {
            panic!("{:?}", world.log.last());
        };
        assert_eq!(table.items.len(), 6);
        assert_eq!(world.writes.len(), 6);

        // Unsealing names the revision it read.
        let other = block_on(fake.delete_resource_policy("ts_a", &arn_of("ts_a"), "1"));
        assert!(other.unwrap_err().message.contains("PolicyNotFoundException"));
        block_on(fake.delete_resource_policy("ts_a", &arn_of("ts_a"), &revision)).unwrap();
    }
}
