//! The account the fake keeps ([`World`]): its objects, how long DynamoDB takes ([`Config`]),
//! and the transitions that end on the fake clock.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::{table_of, ScalableKey};
use ddb_rollover::table::ExportStatus;

use crate::destinations::{self, Destination};
use crate::log::Call;
use crate::mappings::{self, Mapping};
use crate::objects::{Export, Import, LedgerWrite, Status, Table, Target, Write};
use crate::{s3, warm};

/// How long DynamoDB and its exports take, in fake time.
#[derive(Clone, Debug)]
pub struct Config {
    /// How long a table stays CREATING.
    pub create_delay: Duration,
    /// How long an UpdateTable keeps the table UPDATING.
    pub update_delay: Duration,
    /// How long a table stays DELETING.
    pub delete_delay: Duration,
    /// How long a new index stays CREATING.
    pub index_delay: Duration,
    /// How long an export stays IN_PROGRESS.
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

/// Everything the fake knows: the state of the account and the log of changes.
#[derive(Clone, Debug)]
pub struct World {
    /// The fake time now.
    pub now: DateTime<Utc>,
    /// How long DynamoDB takes.
    pub config: Config,
    /// The tables, by name.
    pub tables: BTreeMap<String, Table>,
    /// The scalable targets, by key.
    pub targets: BTreeMap<ScalableKey, Target>,
    /// The exports, by ARN.
    pub exports: BTreeMap<String, Export>,
    /// S3's objects by (bucket, key): what completed exports wrote, and others' objects.
    pub s3: s3::Objects,
    /// The buckets some act gave another owner or a lifecycle rule; any other bucket is the
    /// account's, without rules ([`World::bucket`]).
    pub buckets: BTreeMap<String, s3::Bucket>,
    /// ImportTable's imports by ARN (COMPLETED once their table is ACTIVE).
    pub imports: BTreeMap<String, Import>,
    /// Every mutating call, in order.
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
        // Destinations go with their table; the others' transitions end on the clock.
        for name in &gone {
            self.destinations.remove(name);
        }
        let streams = &self.kinesis_streams;
        for destination in self.destinations.values_mut().flatten() {
            let exists = streams.contains(&destination.stream_arn);
            destination.tick(now, exists);
        }
        // A mapping whose deletion ended is gone.
        self.mappings.retain(|_, mapping| mapping.tick(now));
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

    /// The account's S3 as it is now, as a proof reads it.
    pub fn s3_snapshot(&self) -> s3::FakeS3 {
        s3::FakeS3 {
            objects: self.s3.clone(),
            buckets: self.buckets.clone(),
            now: self.now,
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
