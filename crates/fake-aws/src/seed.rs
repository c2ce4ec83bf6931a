//! The state a hand-written test starts from: tables and scalable targets that exist before the
//! run, made by us and settled (ACTIVE, no transition pending), set outside any API and logged
//! nowhere, and the plain [`TableSpec`] they are made from.

use std::collections::BTreeMap;

use ddb_rollover::policy::settings::{Billing, KeySchema};
use ddb_rollover::table::changes::TableSpec;

use crate::{FakeAws, Maker, Status, Table, Target};

/// A table with `key` and `billing` and nothing else: no index, no tag, DynamoDB's defaults.
pub fn table_spec(name: &str, key: KeySchema, billing: Billing) -> TableSpec {
    TableSpec {
        name: name.into(),
        key,
        billing,
        global_indexes: Vec::new(),
        local_indexes: Vec::new(),
        table_class: None,
        deletion_protection: false,
        stream: None,
        encryption: None,
        tags: BTreeMap::new(),
        warm: None,
    }
}

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

    /// A scalable target (with its policies) that exists before the test starts.
    pub fn seed_target(&self, target: Target) {
        self.lock().targets.insert(target.key.clone(), target);
    }
}
