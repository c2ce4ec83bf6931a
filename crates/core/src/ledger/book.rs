//! The family's ledger as one run read it (one Query of its partition): every record, typed,
//! with the version each conditional write must find.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::ledger::parameter::ParameterRecord;
use crate::ledger::record::{keys, Lease, Meta, TableRecord};
use crate::table::evidence::{Receipt, TableIdentity};

/// One item of the ledger as stored: its key, its version and its record as JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRecord {
    /// The sort key (`meta`, `table#NAME`, `receipt#NAME#MILLIS`, `lease#OPERATION`,
    /// `parameter#NAME`).
    pub key: String,
    /// 1 when first written, one more at each write.
    pub version: u64,
    /// The record, as `crate::ledger::record`'s types serialize.
    pub body: String,
    /// When a lease lapses (epoch seconds); `None` for every other record.
    pub expires: Option<i64>,
}

/// One record with the version it was read at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<T> {
    /// The record's key (its sort key).
    pub key: String,
    /// The version read; the next write of it expects this one.
    pub version: u64,
    /// The record.
    pub record: T,
}

/// Whether the family has a ledger to rest on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LedgerState {
    /// No ledger table.
    Missing,
    /// The table exists, but no run or operator started it (no `meta` record): the tables made
    /// before it are not recorded yet (`ddb-rollover init`).
    NotStarted,
    /// Started.
    Started(Meta),
}

/// The family's ledger, read once a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Book {
    /// Whether there is a ledger to rest on.
    pub state: LedgerState,
    /// The version of the `meta` record, when there is one.
    pub meta_version: Option<u64>,
    /// The tables' records, by table name.
    pub tables: BTreeMap<String, Entry<TableRecord>>,
    /// The deletions' receipts, by table name, oldest first.
    pub receipts: BTreeMap<String, Vec<Entry<Receipt>>>,
    /// The operations' leases, by record key.
    pub leases: BTreeMap<String, Entry<Lease>>,
    /// The parameters the family publishes, by parameter name.
    pub parameters: BTreeMap<String, Entry<ParameterRecord>>,
    /// Records that are not this version's (a body that does not parse, a key it does not
    /// know): named in the report, never acted on as if absent.
    pub unreadable: Vec<String>,
    /// The wall clock when it was read, where the reader knows it: a crashed run's intent is
    /// aged on it, since a simulated instant (`--at`) says nothing of how long ago the intent
    /// (stamped on the wall clock) was written.
    pub read_at: Option<DateTime<Utc>>,
}

impl Default for Book {
    /// A ledger that was started and holds nothing: a new family's.
    fn default() -> Book {
        Book {
            state: LedgerState::Started(Meta::FirstRun {
                at: DateTime::<Utc>::UNIX_EPOCH,
            }),
            meta_version: None,
            tables: BTreeMap::new(),
            receipts: BTreeMap::new(),
            leases: BTreeMap::new(),
            parameters: BTreeMap::new(),
            unreadable: Vec::new(),
            read_at: None,
        }
    }
}

impl Book {
    /// The ledger table does not exist.
    pub fn missing() -> Book {
        Book {
            state: LedgerState::Missing,
            ..Book::default()
        }
    }

    /// The book of the records a Query returned; `None` (no ledger table) is a missing one.
    pub fn read(records: Option<Vec<StoredRecord>>) -> Book {
        let Some(records) = records else {
            return Book::missing();
        };
        let mut book = Book {
            state: LedgerState::NotStarted,
            ..Book::default()
        };
        for stored in records {
            let key = stored.key.clone();
            if !book.take(stored) {
                book.unreadable.push(key);
            }
        }
        book
    }

    /// Files one stored record; `false` when its key or body is not one this version knows.
    fn take(&mut self, stored: StoredRecord) -> bool {
        let StoredRecord {
            key, version, body, ..
        } = stored;
        if key == keys::META {
            let Ok(meta) = serde_json::from_str::<Meta>(&body) else {
                return false;
            };
            self.state = LedgerState::Started(meta);
            self.meta_version = Some(version);
            true
        } else if let Some(name) = key.strip_prefix("table#") {
            match serde_json::from_str::<TableRecord>(&body) {
                Ok(record) if record.name == name => {
                    self.tables
                        .insert(name.to_string(), Entry { key, version, record });
                    true
                }
                _ => false,
            }
        } else if let Some(name) = keys::receipt_table(&key) {
            match serde_json::from_str::<Receipt>(&body) {
                Ok(record) if record.name == name => {
                    let name = name.to_string();
                    self.receipts
                        .entry(name)
                        .or_default()
                        .push(Entry { key, version, record });
                    true
                }
                _ => false,
            }
        } else if key.starts_with("lease#") {
            let Ok(record) = serde_json::from_str::<Lease>(&body) else {
                return false;
            };
            self.leases.insert(key.clone(), Entry { key, version, record });
            true
        } else if let Some(name) = key.strip_prefix("parameter#") {
            match serde_json::from_str::<ParameterRecord>(&body) {
                Ok(record) if record.name == name => {
                    let name = name.to_string();
                    self.parameters.insert(name, Entry { key, version, record });
                    true
                }
                _ => false,
            }
        } else {
            false
        }
    }

    /// Whether the ledger can be rested on: it exists, was started, and every record in it
    /// is one this version reads.
    pub fn is_sound(&self) -> bool {
        matches!(self.state, LedgerState::Started(_)) && self.unreadable.is_empty()
    }

    /// The record of the table named `name`.
    pub fn table(&self, name: &str) -> Option<&Entry<TableRecord>> {
        self.tables.get(name)
    }

    /// The identity recorded for `name`, once made.
    pub fn identity(&self, name: &str) -> Option<&TableIdentity> {
        self.table(name).and_then(|e| e.record.identity())
    }

    /// The receipts of `name`'s deletions, oldest first.
    pub fn receipts_of(&self, name: &str) -> &[Entry<Receipt>] {
        self.receipts.get(name).map(Vec::as_slice).unwrap_or_default()
    }

    /// Why the ledger cannot be rested on, as a run's report says it; `None` when it can.
    pub fn problem(&self, ledger: &str) -> Option<String> {
        match &self.state {
            LedgerState::Missing => Some(format!(
                "the family's ledger table {ledger} does not exist while tables of this family do: nothing is deleted and no table made before is changed until an operator runs `ddb-rollover init` (docs/operations.md, \"The ledger\")"
            )),
            LedgerState::NotStarted => Some(format!(
                "the family's ledger {ledger} was never started (no meta record) while tables of this family exist: nothing is deleted and no table made before is changed until an operator runs `ddb-rollover init`, which records the tables carrying this family's tag"
            )),
            LedgerState::Started(_) if !self.unreadable.is_empty() => Some(format!(
                "the ledger {ledger} holds records this version cannot read ({}): someone edited them, or a newer version wrote them; nothing is deleted until they are put right",
                self.unreadable.join(", ")
            )),
            LedgerState::Started(_) => None,
        }
    }
}
