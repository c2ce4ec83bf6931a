//! The CreateTable requests the fake makes itself: a plain table for a test to seed, and the
//! family's ledger as its stack makes it.

use std::collections::BTreeMap;

use ddb_rollover::policy::{AttributeKind, Billing, KeyAttribute, KeySchema, OnDemandLimits};
use ddb_rollover::table::TableSpec;

use crate::objects::FAMILY_TAG;

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

/// The ledger's key: `family` + `record`, both strings.
pub(crate) fn ledger_key() -> KeySchema {
    let attribute = |name: &str| KeyAttribute {
        name: name.into(),
        kind: AttributeKind::S,
    };
    KeySchema {
        partition: attribute("family"),
        sort: Some(attribute("record")),
    }
}

/// The ledger table as the engine's CreateTable makes it (and the stack's template).
pub fn ledger_spec(ledger: &str, family: &str) -> TableSpec {
    TableSpec {
        deletion_protection: true,
        tags: [
            (FAMILY_TAG.to_string(), family.to_string()),
            ("ddb-rollover:ledger".to_string(), "true".to_string()),
        ]
        .into(),
        ..table_spec(ledger, ledger_key(), Billing::OnDemand(OnDemandLimits::default()))
    }
}
