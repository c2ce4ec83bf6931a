//! The ground truth of every mutating call: what it did, object by object ([`Effect`]), and who
//! made it ([`Call`]); the invariants of the property tests read it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use ddb_rollover::policy::scaling::{table_of, ScalableKey};
use ddb_rollover::policy::settings::{Billing, TableClass};
use ddb_rollover::policy::warm::WarmThroughput;
use ddb_rollover::run::control::ErrorKind;

use crate::{Maker, ScalingPolicy, ScheduledAction, Table};

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
