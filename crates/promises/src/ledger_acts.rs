//! The ledger's foreign acts: its records deleted or rewritten by someone with rights on it,
//! the ledger table deleted, what a crashed run of ours leaves (a lease, an intent), a table
//! made again under our name, a policy named like ours, and the operator's `init` and `restore`.

use std::collections::BTreeMap;

use chrono::{Duration, TimeZone, Utc};
use ddb_rollover::ledger::StoredRecord;
use ddb_rollover::ledger::{keys, Lease, PeriodBounds, TableIdentity, TableRecord, TableState};
use ddb_rollover::table::TableSpec;
use fake_aws::{Maker, FAMILY_TAG};

use crate::account::Account;
use crate::ground::our_policy_name;
use crate::ground::{identity_of, ledger_name};
use crate::harness::{provisioned, Harness};
use crate::ledger_promises::restore_brings_back_the_receipts_archive;
use crate::names::{PERSON, PREFIX};
use crate::steps::{Act, IntentLeft, RecordEdit, RecordKind};
use crate::tally::count;

/// What someone writes over a record to make it unreadable.
pub const UNREADABLE: &str = "{\"edited\": by hand";

impl<A: Account> Harness<'_, A> {
    /// The ledger's items in our family's partition, by key (none without a ledger table).
    fn records(&self) -> BTreeMap<String, StoredRecord> {
        let world = self.account.world();
        world
            .tables
            .get(&ledger_name())
            .map(|t| {
                t.records
                    .iter()
                    .filter(|((family, _), _)| family == PREFIX)
                    .map(|((_, key), record)| (key.clone(), record.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn keys_like(&self, prefix: &str) -> Vec<String> {
        self.records()
            .into_keys()
            .filter(|k| k.starts_with(prefix))
            .collect()
    }

    /// The name of the period `at` periods from the current one (under the runs' policy).
    fn period_name(&self, at: i32) -> (String, PeriodBounds) {
        let policy = self.runs_policy();
        let calendar = policy.calendar();
        let mut slot = calendar.floor(self.account.now());
        for _ in 0..at.unsigned_abs() {
            slot = if at < 0 {
                calendar.previous(slot)
            } else {
                calendar.next(slot)
            };
        }
        let bounds = ddb_rollover::ledger::bounds_of(&calendar, slot);
        (format!("{PREFIX}_{}", calendar.label(slot)), bounds)
    }

    /// A ledger act; refusals (no ledger table, nothing to act on) are part of life and ignored.
    /// `Err`: promise 9 broken by the operator's `restore`.
    pub(super) fn ledger_act(&self, act: &Act) -> Result<(), String> {
        let account = &self.account;
        let someone = Maker::Foreign(PERSON.into());
        match act {
            Act::LedgerDelete { pick, record } => {
                let keys = match record {
                    RecordKind::Table => self.keys_like("table#"),
                    RecordKind::Receipt => self.keys_like("receipt#"),
                    RecordKind::Meta => self.keys_like(keys::META),
                    RecordKind::Lease => self.keys_like("lease#"),
                };
                if let Some(key) = Self::pick(&keys, *pick) {
                    if account.delete_record(&someone, key).is_ok() {
                        count(format!("ledger: someone deleted a {record:?} record"));
                    }
                }
                return Ok(());
            }
            Act::LedgerEdit { pick, edit } => self.edit_record(*pick, *edit),
            Act::DeleteLedger { recreate } => {
                let ledger = ledger_name();
                // DynamoDB refuses DeleteTable while deletion protection is on: lifted first.
                if account.set_deletion_protection(PERSON, &ledger, false).is_err() {
                    return Ok(());
                }
                account.advance(account.world().config.update_delay + Duration::seconds(1));
                if account.delete_table(PERSON, &ledger).is_err() {
                    return Ok(());
                }
                count("ledger: someone deleted the ledger table");
                if *recreate {
                    account.advance(account.world().config.delete_delay + Duration::seconds(1));
                    let spec = fake_aws::ledger_spec(&ledger, PREFIX);
                    if account.create_table(PERSON, &spec).is_ok() {
                        count("ledger: someone made the ledger table again, empty");
                    }
                }
            }
            Act::CrashedLease { operation, lapsed } => {
                let now = account.now();
                let until = if *lapsed {
                    now - Duration::minutes(1)
                } else {
                    now + Duration::minutes(10)
                };
                let key = keys::lease(&operation.to_string());
                let version = self.records().get(&key).map_or(1, |r| r.version + 1);
                let lease = Lease {
                    holder: format!("{operation} at {} (crashed)", now.to_rfc3339()),
                    until,
                };
                let record = StoredRecord {
                    key,
                    version,
                    body: serde_json::to_string(&lease).expect("serializes"),
                    expires: Some(until.timestamp()),
                };
                if account.put_record(&Maker::Us, &record).is_ok() {
                    count(format!("ledger: a crashed run's lease left (lapsed {lapsed})"));
                }
            }
            Act::CrashedIntent { at, pick, left } => self.crashed_intent(*at, *pick, *left),
            Act::Recreate { pick, family_tag } => {
                let ours = self.ours();
                let Some(name) = Self::pick(&ours, *pick).cloned() else {
                    return Ok(());
                };
                if account.delete_table(PERSON, &name).is_err() {
                    return Ok(());
                }
                account.advance(account.world().config.delete_delay + Duration::seconds(1));
                if account
                    .create_table(PERSON, &self.theirs(&name, *family_tag))
                    .is_ok()
                {
                    count(format!("someone made {name} again (family tag {family_tag})"));
                }
            }
            Act::NamedLikeOurs { pick, index, read } => {
                let ours = self.ours();
                let Some(name) = Self::pick(&ours, *pick) else {
                    return Ok(());
                };
                let world = account.world();
                let gsi = index
                    .then(|| world.tables.get(name)?.gsis.first().map(|g| g.name.clone()))
                    .flatten();
                use ddb_rollover::policy::ScalableDimension as D;
                let dimension = match (gsi.is_some(), *read) {
                    (false, true) => D::TableRead,
                    (false, false) => D::TableWrite,
                    (true, true) => D::IndexRead,
                    (true, false) => D::IndexWrite,
                };
                let key = fake_aws::key_for(name, gsi.as_deref(), dimension);
                // Where no target is: theirs alone, with a policy of exactly our policy's name.
                if world.targets.contains_key(&key) || account.register_target(PERSON, &key, 1, 10).is_err() {
                    return Ok(());
                }
                let ours = our_policy_name(dimension);
                if account
                    .put_policy(PERSON, &key, &ours, "TargetTrackingScaling")
                    .is_ok()
                {
                    count("someone's target with a policy named like ours");
                }
            }
            Act::Init => self.init(),
            Act::Restore { pick } => return self.restore(*pick),
            _ => unreachable!("{act:?} is not a ledger act"),
        }
        Ok(())
    }

    /// A table someone makes under `name`: the policy's key and indexes, and our family tag when
    /// `family_tag` (a look-alike in every mark a name and a tag can carry).
    pub(super) fn theirs(&self, name: &str, family_tag: bool) -> TableSpec {
        let mut spec = fake_aws::table_spec(name, self.policy.key.clone(), provisioned(5, 5));
        spec.local_indexes = self.policy.local_indexes.clone();
        if family_tag {
            spec.tags = BTreeMap::from([(FAMILY_TAG.to_string(), PREFIX.to_string())]);
        }
        spec
    }

    fn edit_record(&self, pick: usize, edit: RecordEdit) {
        let account = &self.account;
        let records = self.records();
        let keys: Vec<String> = match edit {
            RecordEdit::Unreadable => records.keys().cloned().collect(),
            RecordEdit::Identity | RecordEdit::Earlier => records
                .keys()
                .filter(|k| k.starts_with("table#"))
                .cloned()
                .collect(),
        };
        let Some(key) = Self::pick(&keys, pick) else {
            return;
        };
        let stored = &records[key];
        let body = match edit {
            RecordEdit::Unreadable => UNREADABLE.to_string(),
            RecordEdit::Identity | RecordEdit::Earlier => {
                let Ok(mut record) = serde_json::from_str::<TableRecord>(&stored.body) else {
                    return;
                };
                if edit == RecordEdit::Earlier {
                    let start = Utc.with_ymd_and_hms(2001, 1, 1, 0, 0, 0).unwrap();
                    record.period = PeriodBounds {
                        start,
                        end: start + Duration::days(1),
                    };
                } else {
                    let world = account.world();
                    let live = world.tables.get(&record.name).map(identity_of);
                    let recorded = record.identity().cloned();
                    let identity = match (live, recorded) {
                        (Some(live), recorded) if !recorded.as_ref().is_some_and(|r| r.is(&live)) => {
                            count("ledger: someone pointed a record at the table now holding its name");
                            live
                        }
                        (_, Some(recorded)) => {
                            count("ledger: someone pointed a record at a table that never was");
                            TableIdentity {
                                created: recorded.created + Duration::hours(1),
                                ..recorded
                            }
                        }
                        (_, None) => return,
                    };
                    record.state = TableState::Made { identity };
                }
                serde_json::to_string(&record).expect("serializes")
            }
        };
        let record = StoredRecord {
            body,
            ..stored.clone()
        };
        if account
            .put_record(&Maker::Foreign(PERSON.into()), &record)
            .is_ok()
        {
            count(format!("ledger: someone edited a record ({edit:?})"));
        }
    }

    fn crashed_intent(&self, at: i32, pick: usize, left: IntentLeft) {
        let account = &self.account;
        let policy = self.runs_policy();
        let write = |record: &TableRecord, version: u64| {
            let stored = StoredRecord {
                key: keys::table(&record.name),
                version,
                body: serde_json::to_string(record).expect("serializes"),
                expires: None,
            };
            account.put_record(&Maker::Us, &stored).is_ok()
        };
        match left {
            IntentLeft::OurTable => {
                // The crash came between CreateTable and the outcome: the record is the intent
                // written just before the table's creation.
                let ours = self.ours();
                let Some(name) = Self::pick(&ours, pick) else {
                    return;
                };
                let records = self.records();
                let Some(stored) = records.get(&keys::table(name)) else {
                    return;
                };
                let Ok(mut record) = serde_json::from_str::<TableRecord>(&stored.body) else {
                    return;
                };
                let Some(created) = account.world().tables.get(name).map(|t| t.created_at) else {
                    return;
                };
                if !matches!(record.origin, ddb_rollover::ledger::Origin::Created) {
                    return;
                }
                record.state = TableState::Intended {
                    at: created - Duration::seconds(1),
                };
                if write(&record, stored.version + 1) {
                    count("ledger: a crashed run's intent, its table made");
                }
            }
            IntentLeft::Nothing | IntentLeft::TheirTable(_) => {
                let (name, _) = self.period_name(at);
                if account.world().tables.contains_key(&name)
                    || self.records().contains_key(&keys::table(&name))
                {
                    return;
                }
                let Some(slot) = policy.calendar().parse(&name[PREFIX.len() + 1..]).ok() else {
                    return;
                };
                let record = ddb_rollover::ledger::intent(&policy, &name, slot, account.now());
                if !write(&record, 1) {
                    return;
                }
                count("ledger: a crashed run's intent, no table");
                if let IntentLeft::TheirTable(family_tag) = left {
                    account.advance(Duration::seconds(30));
                    if account
                        .create_table(PERSON, &self.theirs(&name, family_tag))
                        .is_ok()
                    {
                        count(format!(
                            "ledger: someone made the intent's table (family tag {family_tag})"
                        ));
                    }
                }
            }
        }
    }

    /// The operator's real `init`: the ground truth counts each table it recorded that our runs
    /// did not make as the operator's (like `adopt`: `init` records on the family tag, and the
    /// operator ran it).
    fn init(&self) {
        let policy = self.runs_policy();
        match self.account.init(&policy) {
            Ok(enrolled) => {
                count(format!("init done ({} not made by us)", enrolled.len()));
            }
            Err(e) => count(format!("init failed: {}", e.chars().take(60).collect::<String>())),
        }
    }

    /// The operator's real `restore` of a period whose table our retention deleted; `Err` when
    /// promise 9 breaks.
    fn restore(&self, pick: usize) -> Result<(), String> {
        let policy = self.runs_policy();
        let before = self.account.world();
        let mut periods: Vec<String> = before
            .gone
            .iter()
            .filter(|t| t.deleted_by.as_ref().is_some_and(Maker::is_us))
            .map(|t| t.name.clone())
            .filter(|name| !before.tables.contains_key(name))
            .collect();
        periods.sort();
        periods.dedup();
        let Some(name) = Self::pick(&periods, pick) else {
            return Ok(());
        };
        let Ok(slot) = policy.calendar().parse(&name[PREFIX.len() + 1..]) else {
            return Ok(());
        };
        let outcome = self.account.restore(&policy, slot);
        match &outcome {
            Ok(done) => count(format!("restore: {}", done.chars().take(90).collect::<String>())),
            Err(e) => count(format!(
                "restore failed: {}",
                e.chars().take(60).collect::<String>()
            )),
        }
        if !self.checks.contains(&9) {
            return Ok(());
        }
        let violations = restore_brings_back_the_receipts_archive(&before, &self.account.world(), name);
        if violations.is_empty() {
            return Ok(());
        }
        Err(format!(
            "promise 9 (restore brings back the receipt's archive) broken: restore of {name} ({outcome:?}):\n  {}\n--- policy ---\n{}",
            violations.join("\n  "),
            self.case.toml
        ))
    }
}
