//! The state a hand-written test starts from: tables and scalable targets that exist before the
//! run, made by us and settled (ACTIVE, no transition pending), set outside any API and logged
//! nowhere, and the plain [`TableSpec`] they are made from.

use ddb_rollover::ledger::StoredRecord;
use ddb_rollover::ledger::{bounds_of, keys, Feeds, Meta, Origin, TableRecord, TableState};
use ddb_rollover::policy::table_of;
use ddb_rollover::policy::Ownership;
use ddb_rollover::table::TableSpec;
use ddb_rollover::Policy;

use crate::account::FakeAws;
use crate::maker::Maker;
use crate::objects::Status;
use crate::objects::{Table, Target};

impl FakeAws {
    /// A table made by us before the test starts, as `spec` says, already ACTIVE.
    pub fn seed_table(&self, spec: &TableSpec) {
        let mut world = self.lock();
        Self::create(&mut world, &Maker::Us, spec, &mut Vec::new()).expect("a table the fake can create");
        let table = world.tables.get_mut(&spec.name).expect("just created");
        table.status = Status::Active;
        table.ready_at = None;
        table.warm.ready_at = None;
        for gsi in &mut table.gsis {
            gsi.status = Status::Active;
            gsi.ready_at = None;
            gsi.warm.ready_at = None;
        }
    }

    /// Changes a table outside any API (the ground a test starts from); `None` when there is
    /// no such table.
    pub fn alter_table<T>(&self, name: &str, f: impl FnOnce(&mut Table) -> T) -> Option<T> {
        self.lock().tables.get_mut(name).map(f)
    }

    /// The family's ledger as if this family's runs had made every table `Maker::Us` made so
    /// far under `policy` (each recorded with the identity the fake gave it and the period its
    /// name says; a name that is not one of the policy's periods is left out), and started:
    /// the ground a hand-written test of a run starts from.
    pub fn seed_ledger(&self, policy: &Policy) {
        let naming = policy.naming();
        let ledger = naming.ledger_name();
        let mut world = self.lock();
        let now = world.now;
        let mut records: Vec<(String, String)> = vec![(
            keys::META.to_string(),
            serde_json::to_string(&Meta::FirstRun { at: now }).expect("serializes"),
        )];
        for table in world
            .tables
            .values()
            .filter(|t| t.maker.is_us() && t.name != ledger)
        {
            // Our policies on its targets (and its indexes'), as the runs that put them recorded.
            let scaling_policies: Vec<String> = world
                .targets
                .values()
                .filter(|t| table_of(&t.key.resource_id) == Some(table.name.as_str()))
                .flat_map(|t| {
                    t.policies
                        .iter()
                        .filter(|p| p.maker.is_us())
                        .map(|p| p.arn.clone())
                })
                .collect();
            let Ownership::Owned(slot) = naming.classify(&table.name) else {
                continue;
            };
            let Some(identity) = table.observed(now).identity() else {
                continue;
            };
            let record = TableRecord {
                name: table.name.clone(),
                state: TableState::Made { identity },
                origin: Origin::Created,
                period: bounds_of(naming.calendar(), slot),
                key: table.key.clone(),
                policy_hash: policy.hash(),
                scaling_policies,
                seal: None,
                lowered: None,
                feeds: Some(Feeds {
                    destinations: world
                        .destinations
                        .get(&table.name)
                        .into_iter()
                        .flatten()
                        .filter(|d| d.maker.is_us())
                        .map(|d| d.stream_arn.clone())
                        .collect(),
                    mappings: world
                        .mappings
                        .values()
                        .filter(|m| m.maker.is_us() && m.table() == table.name)
                        .map(|m| m.uuid.clone())
                        .collect(),
                    mapping_intended: None,
                }),
            };
            records.push((
                keys::table(&table.name),
                serde_json::to_string(&record).expect("serializes"),
            ));
        }
        let family = policy.prefix.clone();
        let table = world.tables.get_mut(&ledger).expect("the fake's ledger");
        for (key, body) in records {
            table.records.insert(
                (family.clone(), key.clone()),
                StoredRecord {
                    key,
                    version: 1,
                    body,
                    expires: None,
                },
            );
        }
    }

    /// A scalable target (with its policies) that exists before the test starts.
    pub fn seed_target(&self, target: Target) {
        self.lock().targets.insert(target.key.clone(), target);
    }
}
