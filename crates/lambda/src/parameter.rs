//! The tables parameter's write (`/ddb-rollover/{prefix}/tables`), only where it is ours: no
//! parameter under the name, or the version our last write recorded in the family's ledger
//! ([`ddb_rollover::ledger::parameter_owner`]). Anything else (a SecureString someone keeps
//! there, a version someone wrote after ours) is a foreign part, reported, never overwritten.
//!
//! One write: read the ledger and the parameter; record the intent (the version we are about to
//! replace); PutParameter (without overwrite when there was none, so one made meanwhile is
//! kept); record the version it returned and that version's date; a write that fails withdraws
//! the intent. A crash in between leaves the intent, which makes the next version, written
//! within the write's window, ours. Systems Manager has no conditional overwrite: a write by
//! someone else between our read and ours is replaced, and the version we record is ours.

use chrono::{DateTime, Utc};
use serde_json::Value;

use ddb_rollover::policy::Policy;

/// The keys of the document [`crate::publish::tables_document`] writes, in its order.
pub const DOCUMENT_KEYS: [&str; 7] = [
    "prefix",
    "period",
    "timezone",
    "updated_at",
    "ready",
    "tables",
    "omitted",
];

/// What a previous write of ours left, for a parameter the ledger has no record of (a stack that
/// published before the ledger recorded parameters): a `String` parameter whose value is our
/// document ([`DOCUMENT_KEYS`], nothing else) for this policy's prefix. `Err` says why it is
/// not. That is a mark anyone could copy; it decides only until our next write is recorded.
// Only the write calls it (the `ssm` feature); the tests read it in every build.
#[cfg_attr(not(feature = "ssm"), allow(dead_code))]
pub(crate) fn our_previous_write(policy: &Policy, kind: &str, value: &str) -> Result<(), String> {
    if kind != "String" {
        return Err(format!("it is a {kind} parameter; ours are String"));
    }
    let Ok(Value::Object(document)) = serde_json::from_str::<Value>(value) else {
        return Err("its value is not a JSON object (ours is the tables document)".into());
    };
    let mut keys: Vec<&str> = document.keys().map(String::as_str).collect();
    let mut ours = DOCUMENT_KEYS.to_vec();
    keys.sort_unstable();
    ours.sort_unstable();
    if keys != ours {
        return Err(format!(
            "its value has the keys {keys:?}, not the tables document's {DOCUMENT_KEYS:?}"
        ));
    }
    if document["prefix"] != policy.prefix.as_str() {
        return Err(format!(
            "its value is the tables document of prefix {}, not {:?}",
            document["prefix"], policy.prefix
        ));
    }
    Ok(())
}

#[cfg(feature = "ssm")]
pub(crate) use write::put_tables;

#[cfg(feature = "ssm")]
mod write {
    use super::*;

    use ddb_rollover::control::{ErrorKind, Expect, Ledger};
    use ddb_rollover::ledger::{keys, parameter_owner, Book, Entry, LedgerState, ParameterOwner};
    use ddb_rollover::ledger::{ParameterRecord, StoredRecord};
    use ddb_rollover_aws::parameters::{create_parameter, get_parameter, put_parameter};
    use ddb_rollover_aws::sdk::AwsClients;

    use crate::explain::explain;

    /// The `updated_at` of our document in `value`, if it has one.
    fn updated_at(value: &str) -> Option<DateTime<Utc>> {
        let document: Value = serde_json::from_str(value).ok()?;
        let at = DateTime::parse_from_rfc3339(document.get("updated_at")?.as_str()?).ok()?;
        Some(at.with_timezone(&Utc))
    }

    /// How often a run records its write again when another run's record moved meanwhile.
    const RECORD_ATTEMPTS: usize = 3;

    /// Writes `value` to the parameter `name` where it is ours; `Some` names why not.
    pub(crate) async fn put_tables<L: Ledger>(
        clients: &AwsClients,
        ledger: &L,
        policy: &Policy,
        name: &str,
        value: &str,
        wall: DateTime<Utc>,
    ) -> Option<String> {
        Writer {
            clients,
            ledger,
            policy,
            name,
        }
        .write(value, wall)
        .await
        .err()
    }

    struct Writer<'a, L> {
        clients: &'a AwsClients,
        ledger: &'a L,
        policy: &'a Policy,
        name: &'a str,
    }

    impl<L: Ledger> Writer<'_, L> {
        async fn write(&self, value: &str, wall: DateTime<Utc>) -> Result<(), String> {
            let ledger_name = self.policy.naming().ledger_name();
            let book = self.book().await?;
            if !matches!(book.state, LedgerState::Started(_)) {
                return Err(format!(
                    "the parameter {} is not written: the family's ledger {ledger_name} is not started, so \
                     the write could not be recorded (`ddb-rollover init`, docs/operations.md \"The ledger\")",
                    self.name
                ));
            }
            let stored = get_parameter(&self.clients.ssm, self.name)
                .await
                .map_err(|e| format!("{} {}", explain(&e), self.name))?;
            let entry = book.parameters.get(self.name);
            let owner = parameter_owner(entry.map(|e| &e.record), stored.as_ref().map(|p| &p.seen), || {
                stored.as_ref().map_or(Ok(()), |p| {
                    our_previous_write(self.policy, &p.seen.kind, &p.value)
                })
            });
            match owner {
                ParameterOwner::Foreign(why) => {
                    return Err(format!(
                        "the parameter {} is not ours ({why}): not overwritten. It is a foreign part at the name \
                         the stack publishes the tables under: remove or rename it, or set PublishTables=false",
                        self.name
                    ))
                }
                // A run that wrote later (another host's clock, a console test meanwhile) stands.
                ParameterOwner::Us => {
                    if let Some(later) = stored
                        .as_ref()
                        .and_then(|p| updated_at(&p.value))
                        .filter(|later| *later > wall)
                    {
                        tracing::info!(parameter = self.name, %later, "published later by another run: left as it is");
                        return Ok(());
                    }
                }
                ParameterOwner::Nobody => {}
            }
            // What stands now, recorded again with the intent (and again alone if the write
            // fails): the version and date that stay ours when nothing is written.
            let standing = ParameterRecord {
                name: self.name.to_owned(),
                version: stored.as_ref().map(|p| p.seen.version),
                modified: stored.as_ref().and_then(|p| p.seen.last_modified),
                intended_at: None,
            };
            let intent = ParameterRecord {
                intended_at: Some(wall),
                ..standing.clone()
            };
            let Some(intent_version) = self.record(entry, &intent).await? else {
                tracing::info!(
                    parameter = self.name,
                    "another run is publishing it meanwhile: left to that run"
                );
                return Ok(());
            };
            let written = match standing.version {
                None => create_parameter(&self.clients.ssm, self.name, value).await,
                Some(_) => put_parameter(&self.clients.ssm, self.name, value).await,
            };
            let written = match written {
                Ok(written) => written,
                Err(e) => {
                    // Nothing was written: the intent goes, so no later version is taken for
                    // this write's (one made meanwhile, ParameterAlreadyExists, stays theirs).
                    self.withdraw(intent_version, &standing).await;
                    return Err(format!("{} {}", explain(&e), self.name));
                }
            };
            // The date Systems Manager gave our version, by its selector: what tells it from a
            // parameter made again under the name at the same version.
            let modified = get_parameter(&self.clients.ssm, &format!("{}:{written}", self.name))
                .await
                .ok()
                .flatten()
                .and_then(|p| p.seen.last_modified);
            self.record_written(intent_version, written, modified).await
        }

        /// Puts `standing` back over our intent (recorded as `intent_version`) after a write
        /// that failed; when that fails too, the intent stays, and only a version made within
        /// the write's window is taken for ours ([`ddb_rollover::ledger::PARAMETER_WRITE_WINDOW`]).
        async fn withdraw(&self, intent_version: u64, standing: &ParameterRecord) {
            let entry = Entry {
                key: keys::parameter(self.name),
                version: intent_version,
                record: standing.clone(),
            };
            if let Err(error) = self.record(Some(&entry), standing).await {
                tracing::warn!(parameter = self.name, %error, "the failed write's intent stays in the ledger");
            }
        }

        async fn book(&self) -> Result<Book, String> {
            let ledger_name = self.policy.naming().ledger_name();
            self.ledger
                .read_ledger(&ledger_name, &self.policy.prefix)
                .await
                .map(Book::read)
                .map_err(|e| {
                    format!(
                        "reading the ledger {ledger_name} before writing the parameter {}: {e}",
                        self.name
                    )
                })
        }

        /// Writes `record` over `entry` (or where there was none); `Ok(None)` when another run
        /// changed it meanwhile. Returns the version written.
        async fn record(
            &self,
            entry: Option<&Entry<ParameterRecord>>,
            record: &ParameterRecord,
        ) -> Result<Option<u64>, String> {
            let version = entry.map_or(1, |e| e.version + 1);
            let stored = StoredRecord {
                key: keys::parameter(self.name),
                version,
                body: serde_json::to_string(record).map_err(|e| e.to_string())?,
                expires: None,
            };
            let expect = entry.map_or(Expect::Absent, |e| Expect::Version(e.version));
            let ledger_name = self.policy.naming().ledger_name();
            match self
                .ledger
                .put_record(&ledger_name, &self.policy.prefix, &stored, expect)
                .await
            {
                Ok(()) => Ok(Some(version)),
                Err(e) if e.kind == ErrorKind::Conflict => Ok(None),
                Err(e) => Err(format!(
                    "recording the parameter {} in the ledger {ledger_name}: {e}",
                    self.name
                )),
            }
        }

        /// Records `written`, the version our PutParameter made, over our intent. When another
        /// run's record moved meanwhile, the version is recorded again over that one while the
        /// parameter still stands at it; once someone wrote after us, that writer records it.
        async fn record_written(
            &self,
            intent_version: u64,
            written: i64,
            modified: Option<DateTime<Utc>>,
        ) -> Result<(), String> {
            let done = ParameterRecord {
                name: self.name.to_owned(),
                version: Some(written),
                modified,
                intended_at: None,
            };
            let mut entry = Entry {
                key: keys::parameter(self.name),
                version: intent_version,
                record: done.clone(),
            };
            for _ in 0..RECORD_ATTEMPTS {
                if self.record(Some(&entry), &done).await?.is_some() {
                    return Ok(());
                }
                let book = self.book().await?;
                let stands = get_parameter(&self.clients.ssm, self.name)
                    .await
                    .map_err(|e| format!("{} {}", explain(&e), self.name))?
                    .is_some_and(|p| {
                        p.seen.version == written && (modified.is_none() || p.seen.last_modified == modified)
                    });
                match book.parameters.get(self.name) {
                    Some(now) if stands && now.record.version != Some(written) => entry = now.clone(),
                    _ => return Ok(()),
                }
            }
            Err(format!(
                "the parameter {} was written (version {written}) but other runs kept changing its record \
                 in the ledger: the next run records it",
                self.name
            ))
        }
    }
}

#[cfg(not(feature = "ssm"))]
pub(crate) async fn put_tables<L>(
    _: &ddb_rollover_aws::sdk::AwsClients,
    _: &L,
    _: &Policy,
    name: &str,
    _: &str,
    _: DateTime<Utc>,
) -> Option<String> {
    Some(format!(
        "PutParameter {name}: this function is built without Systems Manager (ddb-rollover-lambda's `ssm` feature)"
    ))
}
