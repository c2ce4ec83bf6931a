//! The account the fake keeps: who made what ([`Maker`]), how long DynamoDB takes ([`Config`]),
//! table statuses, and the [`World`] itself, whose transitions end on the fake clock.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::scaling::{table_of, ScalableKey};
use ddb_rollover::table::{ExportStatus, TableStatus};

use crate::{destinations, mappings, s3, warm};
use crate::{Call, Destination, Export, Import, LedgerWrite, Mapping, Table, Target, Write};

/// The tag key `template.yaml`'s IAM conditions check (`aws:ResourceTag/ddb-rollover:family`).
pub const FAMILY_TAG: &str = "ddb-rollover:family";
/// The fake account's table ARNs: `{TABLE_ARN_PREFIX}{name}`.
pub const TABLE_ARN_PREFIX: &str = "arn:aws:dynamodb:us-east-1:123456789012:table/";

/// Who made an object, or made a call.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Maker {
    /// Our runs, through the control plane of the fake built with [`FakeAws::new`].
    Us,
    /// Anyone else: a person, another tool, another family's runs.
    Foreign(String),
}

impl Maker {
    pub fn is_us(&self) -> bool {
        *self == Maker::Us
    }

    /// The operator's own credentials (`FakeAws::operator`): a foreign actor whose calls go
    /// through the ports, as ours do.
    pub fn operator() -> Maker {
        Maker::Foreign("operator".into())
    }

    /// Whether injected acts happen around this actor's calls: ours and the operator's (the
    /// ports), not the foreign acts themselves.
    pub(crate) fn meets_injections(&self) -> bool {
        self.is_us() || *self == Maker::operator()
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
    /// How long a Kinesis destination stays ENABLING, DISABLING or UPDATING.
    pub destination_delay: Duration,
    /// How long a Lambda event source mapping stays Creating, Disabling or Deleting.
    pub mapping_delay: Duration,
}

impl Config {
    /// Every change ends at once (the next request sees it ACTIVE, gone or COMPLETED): for the
    /// tests of what a run does rather than how long AWS takes.
    pub fn default_instant() -> Config {
        Config {
            create_delay: Duration::zero(),
            update_delay: Duration::zero(),
            delete_delay: Duration::zero(),
            index_delay: Duration::zero(),
            export_delay: Duration::zero(),
            warm_delay: Duration::zero(),
            policy_delay: Duration::zero(),
            destination_delay: Duration::zero(),
            mapping_delay: Duration::zero(),
        }
    }
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
            destination_delay: destinations::default_delay(),
            mapping_delay: mappings::default_delay(),
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
    /// The buckets some act gave another owner or a lifecycle rule; any other bucket is the
    /// account's, without rules ([`World::bucket`]).
    pub buckets: BTreeMap<String, s3::Bucket>,
    /// ImportTable's imports by ARN (COMPLETED once their table is ACTIVE).
    pub imports: BTreeMap<String, Import>,
    pub log: Vec<Call>,
    /// Tables whose deletion completed, as they were when deleted.
    pub gone: Vec<Table>,
    /// Every item write DynamoDB accepted.
    pub writes: Vec<Write>,
    /// Every change of a ledger item that took effect, ours and others'.
    pub ledger_writes: Vec<LedgerWrite>,
    /// The account's Kinesis data streams, by ARN.
    pub kinesis_streams: BTreeSet<String>,
    /// Each table's Kinesis data stream destinations, by table name.
    pub destinations: BTreeMap<String, Vec<Destination>>,
    /// The account's Lambda functions, by ARN (the ones event source mappings may invoke).
    pub functions: BTreeSet<String>,
    /// The account's Lambda event source mappings, by UUID: Lambda's, not the tables' (deleting
    /// a table leaves them).
    pub mappings: BTreeMap<String, Mapping>,
    pub(crate) next_id: u64,
    /// The fake time `Clock::now`'s `Instant` counts from, and that instant.
    pub(crate) epoch: (DateTime<Utc>, Instant),
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
            buckets: BTreeMap::new(),
            imports: BTreeMap::new(),
            log: Vec::new(),
            gone: Vec::new(),
            writes: Vec::new(),
            ledger_writes: Vec::new(),
            kinesis_streams: BTreeSet::new(),
            destinations: BTreeMap::new(),
            functions: BTreeSet::new(),
            mappings: BTreeMap::new(),
            next_id: 1,
            epoch: (now, Instant::now()),
        }
    }

    /// Ends the transitions whose time has come.
    pub(crate) fn tick(&mut self) {
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
        for name in &gone {
            if let Some(table) = self.tables.remove(name) {
                self.gone.push(table);
            }
        }
        destinations::tick(self, &gone);
        mappings::tick(self);
        for export in self.exports.values_mut() {
            if export.status == ExportStatus::InProgress && export.done_at <= now {
                // S3BucketOwner: DynamoDB writes only to a bucket of the account named; without
                // it, to whoever owns the name now.
                let owner = self
                    .buckets
                    .get(&export.bucket)
                    .map_or(s3::ACCOUNT_ID, |b| b.owner.as_str());
                if let Some(expected) = export.bucket_owner.as_deref().filter(|o| *o != owner) {
                    export.status = ExportStatus::Failed;
                    export.failure = Some(format!(
                        "S3 access denied: the bucket {} is not owned by account {expected} (S3BucketOwner)",
                        export.bucket
                    ));
                    continue;
                }
                export.status = ExportStatus::Completed;
                for (key, bytes) in export.objects() {
                    self.s3.insert((export.bucket.clone(), key), bytes);
                }
            }
        }
    }

    /// The bucket `name`: its owner and lifecycle rules.
    pub fn bucket(&self, name: &str) -> s3::Bucket {
        self.buckets.get(name).cloned().unwrap_or_default()
    }

    /// The targets on a table and its indexes.
    pub fn targets_on(&self, table: &str) -> Vec<&Target> {
        self.targets
            .values()
            .filter(|t| table_of(&t.key.resource_id) == Some(table))
            .collect()
    }
}
