//! A run's writes to the family's ledger: an intent before each CreateTable and its outcome
//! after, our scaling policies' ARNs, our seal's revision, the deletion's receipt just before
//! DeleteTable, and the lease that keeps overlapping runs of one operation from colliding.
//! Every write is conditional on the version this run read (or wrote last), so a record
//! someone changed since is never overwritten unseen: the write fails as a conflict.

use std::collections::BTreeMap;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::ledger::{keys, Book, Entry, Feeds, Lease, LedgerState, Meta, TableRecord};
use crate::policy::period::Slot;
use crate::policy::Policy;
use crate::run::control::{ControlPlane, ControlPlaneError, ErrorKind, Expect, StoredRecord};
use crate::table::seal::SealRecord;

/// How long a run's lease lasts when the run has no deadline of its own (the CLI): a crashed
/// run's lease lapses by then.
pub(crate) const LEASE_WITHOUT_DEADLINE: Duration = Duration::minutes(15);

/// How long a run waits at most for another run of its operation to give the lease back
/// before it defers every change to it: an overlapping delivery of one schedule (a redelivered
/// event beside a console test) finishes in seconds.
pub(crate) const LEASE_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// How often a waiting run reads the lease again (one Query of the ledger).
const LEASE_POLL: std::time::Duration = std::time::Duration::from_secs(2);

/// The time passed on the control plane's clock since `started`.
pub(crate) fn since<C: ControlPlane>(control: &C, started: std::time::Instant) -> Duration {
    Duration::from_std(control.now().saturating_duration_since(started)).unwrap_or_default()
}

/// Waits on the control plane's clock while another run holds `operation`'s lease, until
/// `wait_until`: `true` when it was given back or lapsed (the caller reads everything again
/// and takes it), `false` when it is still held.
pub(crate) async fn wait_for_release<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    operation: &str,
    wall: DateTime<Utc>,
    started: std::time::Instant,
    wait_until: std::time::Instant,
) -> Result<bool, ControlPlaneError> {
    let ledger = policy.naming().ledger_name();
    let key = keys::lease(operation);
    while control.now() + LEASE_POLL <= wait_until {
        control.sleep(LEASE_POLL).await;
        let book = Book::read(control.read_ledger(&ledger, &policy.prefix).await?);
        let now = wall + since(control, started);
        if book.leases.get(&key).is_none_or(|held| held.record.until <= now) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Writes one run's records, each conditional on the version last seen.
pub(crate) struct Recorder<'a, C> {
    control: &'a C,
    policy: &'a Policy,
    ledger: String,
    /// Whether the ledger table exists: without one, nothing can be recorded (the run's report
    /// fails on that already) and a table's intent is not waited for.
    exists: bool,
    /// The run's clock (its wall clock; the instant of a simulation), which stamps intents.
    clock: DateTime<Utc>,
    /// The version of each record as this run last read or wrote it.
    versions: Mutex<BTreeMap<String, u64>>,
    /// The tables' records as this run last read or wrote them (`None`: removed): what its
    /// later writes start from, and what it reads after its changes (readiness).
    records: Mutex<BTreeMap<String, Option<TableRecord>>>,
}

impl<'a, C: ControlPlane> Recorder<'a, C> {
    /// A recorder for `policy`'s ledger, starting from the versions in `book`; `clock` stamps
    /// the intents.
    pub(crate) fn new(
        control: &'a C,
        policy: &'a Policy,
        book: &Book,
        clock: DateTime<Utc>,
    ) -> Recorder<'a, C> {
        let mut versions: BTreeMap<String, u64> = BTreeMap::new();
        versions.extend(book.tables.values().map(|e| (e.key.clone(), e.version)));
        versions.extend(book.leases.values().map(|e| (e.key.clone(), e.version)));
        versions.extend(
            book.receipts
                .values()
                .flatten()
                .map(|e| (e.key.clone(), e.version)),
        );
        if let Some(version) = book.meta_version {
            versions.insert(keys::META.to_string(), version);
        }
        Recorder {
            control,
            policy,
            ledger: policy.naming().ledger_name(),
            exists: book.state != LedgerState::Missing,
            clock,
            versions: Mutex::new(versions),
            records: Mutex::new(
                book.tables
                    .iter()
                    .map(|(name, entry)| (name.clone(), Some(entry.record.clone())))
                    .collect(),
            ),
        }
    }

    /// Whether there is a ledger table to record in.
    pub(crate) fn can_record(&self) -> bool {
        self.exists
    }

    /// The run's clock, which stamps intents.
    pub(crate) fn clock(&self) -> DateTime<Utc> {
        self.clock
    }

    /// The intent of a table this run is about to create for `slot`. Our scaling policies and
    /// mappings on the name stay recorded: deleting a table deregisters none of its targets and
    /// leaves its mappings, and a table made again under the name finds ours there.
    pub(crate) fn intent(&self, name: &str, slot: Slot, at: DateTime<Utc>) -> TableRecord {
        let fresh = crate::ledger::intent(self.policy, name, slot, at);
        let before = self
            .records
            .lock()
            .expect("not poisoned")
            .get(name)
            .cloned()
            .flatten();
        match before {
            Some(before) => TableRecord {
                scaling_policies: before.scaling_policies,
                feeds: Some(Feeds {
                    mappings: before.feeds.map(|f| f.mappings).unwrap_or_default(),
                    ..Feeds::default()
                }),
                ..fresh
            },
            None => fresh,
        }
    }

    /// `before` with the tables' records as this run left them.
    pub(crate) fn book_after(&self, before: &Book) -> Book {
        let mut book = before.clone();
        for (name, record) in self.records.lock().expect("not poisoned").iter() {
            match record {
                Some(record) => {
                    let key = keys::table(name);
                    let version = self.version(&key).unwrap_or(1);
                    book.tables.insert(
                        name.clone(),
                        Entry {
                            key,
                            version,
                            record: record.clone(),
                        },
                    );
                }
                None => {
                    book.tables.remove(name);
                }
            }
        }
        book
    }

    fn version(&self, key: &str) -> Option<u64> {
        self.versions.lock().expect("not poisoned").get(key).copied()
    }

    fn wrote(&self, key: &str, version: u64) {
        self.versions
            .lock()
            .expect("not poisoned")
            .insert(key.to_string(), version);
    }

    fn forgot(&self, key: &str) {
        self.versions.lock().expect("not poisoned").remove(key);
    }

    /// Writes `record` at `key`, expecting the version last seen (or no item).
    async fn put<T: Serialize>(
        &self,
        key: &str,
        record: &T,
        expires: Option<i64>,
    ) -> Result<(), ControlPlaneError> {
        let seen = self.version(key);
        let expect = seen.map_or(Expect::Absent, Expect::Version);
        self.put_expecting(key, record, expires, expect, seen.unwrap_or(0) + 1)
            .await
    }

    async fn put_expecting<T: Serialize>(
        &self,
        key: &str,
        record: &T,
        expires: Option<i64>,
        expect: Expect,
        version: u64,
    ) -> Result<(), ControlPlaneError> {
        let body = serde_json::to_string(record).expect("records serialize");
        let stored = StoredRecord {
            key: key.to_string(),
            version,
            body,
            expires,
        };
        self.control
            .put_record(&self.ledger, &self.policy.prefix, &stored, expect)
            .await
            .map_err(|e| conflict_advice(e, key))?;
        self.wrote(key, version);
        Ok(())
    }

    /// Writes a table's record (an intent, an outcome, a change to what it holds). Without a
    /// ledger table, nothing: the run's report fails on that already.
    pub(crate) async fn table(&self, record: &TableRecord) -> Result<(), ControlPlaneError> {
        if !self.exists {
            return Ok(());
        }
        self.put(&keys::table(&record.name), record, None).await?;
        self.records
            .lock()
            .expect("not poisoned")
            .insert(record.name.clone(), Some(record.clone()));
        Ok(())
    }

    /// Adds the scaling policies this run put on `name`'s targets to its record, by ARN.
    pub(crate) async fn scaling_policies(
        &self,
        name: &str,
        arns: &[String],
    ) -> Result<(), ControlPlaneError> {
        let current = self
            .records
            .lock()
            .expect("not poisoned")
            .get(name)
            .cloned()
            .flatten();
        if current.is_none() {
            return Err(ControlPlaneError::failed(
                "PutItem",
                name,
                "the table has no record in the family's ledger to add its scaling policies to",
            ));
        }
        self.update_table(name, |record| {
            let before = record.scaling_policies.len();
            for arn in arns {
                if !record.scaling_policies.contains(arn) {
                    record.scaling_policies.push(arn.clone());
                }
            }
            record.scaling_policies.len() != before
        })
        .await
    }

    /// Sets (or, with `None`, clears) our seal on `name`'s record: a later run reads the
    /// resource-based policy of a table the ledger says is sealed, whatever its policy says
    /// now, so a seal is lifted when the table stops being due for deletion (retention called
    /// off included). A table with no record keeps the seal in its tag alone, as before.
    pub(crate) async fn seal(&self, name: &str, seal: Option<SealRecord>) -> Result<(), ControlPlaneError> {
        self.update_table(name, |record| {
            let changed = record.seal != seal;
            record.seal = seal.clone();
            changed
        })
        .await
    }

    /// Records, before its CreateEventSourceMapping, that this run is about to map the
    /// consumer to `name`'s stream: a crash before [`Recorder::mapped`] leaves the mapping
    /// resolvable by a later run, never someone else's in the ledger's eyes.
    pub(crate) async fn mapping_intended(&self, name: &str) -> Result<(), ControlPlaneError> {
        let at = self.clock;
        self.update_feeds(name, |feeds| {
            feeds.mapping_intended = Some(at);
            true
        })
        .await
    }

    /// Records our mapping on `name`'s stream by the UUID Lambda gave it, ending the intent.
    pub(crate) async fn mapped(&self, name: &str, uuid: &str) -> Result<(), ControlPlaneError> {
        self.update_feeds(name, |feeds| {
            let intended = feeds.mapping_intended.take().is_some();
            add_once(&mut feeds.mappings, uuid) || intended
        })
        .await
    }

    /// Records that `name`'s changes stream into `stream_arn` by our enable, once.
    pub(crate) async fn enabled(&self, name: &str, stream_arn: &str) -> Result<(), ControlPlaneError> {
        self.update_feeds(name, |feeds| add_once(&mut feeds.destinations, stream_arn))
            .await
    }

    /// `change` applied to the feeds `name`'s record holds. A record from before feeds were
    /// recorded is left as it is: its feeds are judged by the policy, as that version did.
    async fn update_feeds(
        &self,
        name: &str,
        change: impl Fn(&mut Feeds) -> bool,
    ) -> Result<(), ControlPlaneError> {
        self.update_table(name, |record| record.feeds.as_mut().is_some_and(&change))
            .await
    }

    /// Records that resize_old dialled `name` down to `phase` (past phase 0), once per phase: a
    /// later create_new for an earlier instant never raises it again.
    pub(crate) async fn lowered(&self, name: &str, phase: usize) -> Result<(), ControlPlaneError> {
        self.update_table(name, |record| {
            let changed = record.lowered < Some(phase);
            if changed {
                record.lowered = Some(phase);
            }
            changed
        })
        .await
    }

    /// `change` applied to `name`'s record as this run knows it, written on its version (none
    /// when it changes nothing, or the table has no record). When another writer moved the
    /// record on since (an overlapping run), it is read again and `change` applied to what is
    /// there now, once, as long as it still records the same table: a read-modify-write that
    /// loses nobody's change.
    async fn update_table(
        &self,
        name: &str,
        change: impl Fn(&mut TableRecord) -> bool,
    ) -> Result<(), ControlPlaneError> {
        let current = self
            .records
            .lock()
            .expect("not poisoned")
            .get(name)
            .cloned()
            .flatten();
        let Some(mut record) = current else {
            return Ok(());
        };
        if !change(&mut record) {
            return Ok(());
        }
        let conflict = match self.table(&record).await {
            Err(e) if e.kind == ErrorKind::Conflict => e,
            done => return done,
        };
        let book = Book::read(
            self.control
                .read_ledger(&self.ledger, &self.policy.prefix)
                .await?,
        );
        let Some(entry) = book.table(name) else {
            return Err(conflict);
        };
        let same = match (entry.record.identity(), record.identity()) {
            (Some(now), Some(known)) => now.is(known),
            _ => false,
        };
        if !same {
            return Err(conflict);
        }
        let mut fresh = entry.record.clone();
        self.wrote(&keys::table(name), entry.version);
        self.records
            .lock()
            .expect("not poisoned")
            .insert(name.to_string(), Some(fresh.clone()));
        if !change(&mut fresh) {
            return Ok(());
        }
        self.table(&fresh).await
    }

    /// Removes a table's record, as last seen (an intent whose CreateTable found the name taken).
    pub(crate) async fn forget_table(&self, name: &str) -> Result<(), ControlPlaneError> {
        let key = keys::table(name);
        let Some(version) = self.version(&key) else {
            return Ok(());
        };
        self.control
            .delete_record(&self.ledger, &self.policy.prefix, &key, Expect::Version(version))
            .await
            .map_err(|e| conflict_advice(e, &key))?;
        self.forgot(&key);
        self.records
            .lock()
            .expect("not poisoned")
            .insert(name.to_string(), None);
        Ok(())
    }

    /// Writes any other record at `key` (a receipt). Without a ledger table, an error: a
    /// receipt is what a deletion rests on.
    pub(crate) async fn record<T: Serialize>(&self, key: &str, record: &T) -> Result<(), ControlPlaneError> {
        self.put(key, record, None).await
    }

    /// Writes the ledger's `meta` record: the ledger is started.
    pub(crate) async fn start(&self, meta: &Meta) -> Result<(), ControlPlaneError> {
        self.put(keys::META, meta, None).await
    }

    /// Takes `operation`'s lease until `until`, if no other run holds it; `Ok(Some(lease))`: the
    /// lease another run holds (this run defers).
    pub(crate) async fn lease(
        &self,
        operation: &str,
        holder: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        book: &Book,
    ) -> Result<Option<Lease>, ControlPlaneError> {
        // No ledger table, no lease to take: the run's report fails on the missing ledger
        // already (a failed line naming `init`), instead of on this write.
        if !self.exists {
            return Ok(None);
        }
        let key = keys::lease(operation);
        let held = book.leases.get(&key);
        if let Some(held) = held.filter(|held| held.record.until > now) {
            return Ok(Some(held.record.clone()));
        }
        let lease = Lease {
            holder: holder.to_string(),
            until,
        };
        let version = held.map_or(0, |h| h.version) + 1;
        match self
            .put_expecting(
                &key,
                &lease,
                Some(until.timestamp()),
                Expect::Lapsed(now.timestamp()),
                version,
            )
            .await
        {
            Ok(()) => Ok(None),
            // Another run took it between this run's read and its write.
            Err(e) if e.kind == ErrorKind::Conflict => Ok(Some(Lease {
                holder: "another run (it took the lease after this run read the ledger)".into(),
                until,
            })),
            Err(e) => Err(e),
        }
    }

    /// Gives `operation`'s lease back (best effort: it lapses by itself otherwise).
    pub(crate) async fn release(&self, operation: &str) {
        let key = keys::lease(operation);
        if let Some(version) = self.version(&key) {
            let released = self
                .control
                .delete_record(&self.ledger, &self.policy.prefix, &key, Expect::Version(version))
                .await;
            if let Err(error) = released {
                tracing::info!(%error, "the lease was not given back; it lapses by itself");
            }
        }
    }
}

/// A conflict's message says what it means.
fn conflict_advice(error: ControlPlaneError, key: &str) -> ControlPlaneError {
    if error.kind != ErrorKind::Conflict {
        return error;
    }
    error.reworded(|message| {
        format!(
            "{message}: the ledger's record {key} changed since this run read it (another run, or someone editing the ledger); nothing was overwritten, a later run reads it again"
        )
    })
}

/// Starts the family's ledger when the family has no table yet (nothing made before it to
/// record): the ledger table is created where it is missing, and its `meta` record written.
/// A family with tables and no started ledger is left as it is: the run's report fails, naming
/// `ddb-rollover init` (`crate::ledger::Book::problem`).
pub(crate) async fn start_if_new<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    observation: &mut crate::run::observe::Observation,
    clock: DateTime<Utc>,
) -> Result<Started, ControlPlaneError> {
    let book = &observation.book;
    if matches!(book.state, LedgerState::Started(_)) || family_exists(policy, observation) {
        return Ok(Started::Before);
    }
    let ledger = policy.naming().ledger_name();
    if book.state == LedgerState::Missing {
        match control.create_ledger(&ledger, &policy.prefix).await {
            Ok(()) => {}
            Err(e) if e.kind == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    let meta = Meta::FirstRun { at: clock };
    let recorder = Recorder::new(control, policy, &Book::default(), clock);
    match recorder.start(&meta).await {
        Ok(()) => {}
        // Another run started it first, and may have made tables since this run looked.
        Err(e) if e.kind == ErrorKind::Conflict => return Ok(Started::ByAnother),
        Err(e) => return Err(e),
    }
    observation.book = Book::read(control.read_ledger(&ledger, &policy.prefix).await?);
    Ok(Started::ByThisRun)
}

/// Who started a new family's ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Started {
    /// It was started before this run looked (or the family is not new): nothing to do.
    Before,
    /// This run started it.
    ByThisRun,
    /// Another run started it meanwhile: what this run saw may be out of date.
    ByAnother,
}

/// Whether any table named as one of the family's periods (under any period setting) exists.
fn family_exists(policy: &Policy, observation: &crate::run::observe::Observation) -> bool {
    let naming = policy.naming();
    observation
        .tables
        .iter()
        .map(|t| t.name.as_str())
        .chain(observation.listed_only.iter().map(String::as_str))
        .any(|name| {
            matches!(naming.classify(name), crate::policy::naming::Ownership::Owned(_))
                || naming.is_label_of_any_period(name)
        })
}

/// Adds `value` to `list` unless it is there; whether it was added.
fn add_once(list: &mut Vec<String>, value: &str) -> bool {
    let new = !list.iter().any(|v| v == value);
    if new {
        list.push(value.to_string());
    }
    new
}
