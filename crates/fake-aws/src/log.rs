//! The ground truth of every mutating call: what it did, object by object ([`Effect`]), and who
//! made it ([`Call`]); the invariants of the property tests read it. Besides it, every request
//! made through the ports, read or change, with the clock's waits and the requests in flight
//! ([`Request`]): what the executor's tests assert on.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use ddb_rollover::policy::scaling::{table_of, ScalableKey};
use ddb_rollover::policy::settings::{Billing, TableClass};
use ddb_rollover::policy::stream::Precision;
use ddb_rollover::policy::warm::WarmThroughput;
use ddb_rollover::run::control::ErrorKind;

use crate::maker::Maker;
use crate::objects::{ScalingPolicy, ScheduledAction, Table};

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
    /// EnableKinesisStreamingDestination: a destination into `stream_arn` started ENABLING.
    EnabledDestination {
        table: String,
        stream_arn: String,
        precision: Precision,
    },
    /// DisableKinesisStreamingDestination: the destination into `stream_arn` started DISABLING.
    DisabledDestination {
        table: String,
        stream_arn: String,
    },
    /// UpdateKinesisStreamingDestination of a destination's precision.
    DestinationPrecision {
        table: String,
        stream_arn: String,
        from: Precision,
        to: Precision,
    },
    /// Kinesis DeleteStream, with the tables whose destinations were streaming into it (their
    /// records are lost from then on). On no table: [`Effect::table`] is empty.
    DeletedKinesisStream {
        stream_arn: String,
        losing: Vec<String>,
    },
    /// CreateEventSourceMapping: a mapping of `function_arn` on `stream_arn` (the stream of
    /// `table`) started Creating.
    CreatedMapping {
        table: String,
        uuid: String,
        function_arn: String,
        stream_arn: String,
    },
    /// DeleteEventSourceMapping: the mapping (made by `maker`) started Deleting.
    DeletedMapping {
        table: String,
        uuid: String,
        function_arn: String,
        stream_arn: String,
        maker: Maker,
    },
    /// UpdateEventSourceMapping `Enabled = false`: the mapping started Disabling.
    DisabledMapping {
        table: String,
        uuid: String,
        function_arn: String,
    },
    /// UpdateEventSourceMapping of a mapping's batch size and filters, or of its function (now
    /// `function_arn`); `maker` made the mapping.
    UpdatedMapping {
        table: String,
        uuid: String,
        function_arn: String,
        maker: Maker,
    },
    /// Lambda DeleteFunction, with the mappings that invoked it (they stay). On no table:
    /// [`Effect::table`] is empty.
    DeletedFunction {
        function_arn: String,
        mappings: Vec<String>,
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
            | Effect::EnabledDestination { table, .. }
            | Effect::DisabledDestination { table, .. }
            | Effect::DestinationPrecision { table, .. }
            | Effect::CreatedMapping { table, .. }
            | Effect::DeletedMapping { table, .. }
            | Effect::DisabledMapping { table, .. }
            | Effect::UpdatedMapping { table, .. }
            | Effect::AutoscalerCapacity { table, .. } => table,
            Effect::DeletedKinesisStream { .. } | Effect::DeletedFunction { .. } => "",
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

/// One request made through the engine's ports (a read or a change), as it was sent, whether it
/// then succeeded or not: what a test of the executor asserts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub operation: &'static str,
    pub table: String,
}

impl Request {
    /// Describe*, List* and Get* calls read; every other call asks for a change.
    pub fn is_read(&self) -> bool {
        ["Describe", "List", "Get", "Query"]
            .iter()
            .any(|verb| self.operation.starts_with(verb))
    }
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.operation, self.table)
    }
}

/// What the handles on one account observe of the requests made through the ports: the
/// requests in order, the waits of [`Clock::sleep`](ddb_rollover::Clock::sleep), and how many
/// requests were in flight at once.
#[derive(Debug, Default)]
pub(crate) struct Traffic {
    pub(crate) requests: Vec<Request>,
    pub(crate) waits: Vec<std::time::Duration>,
    pub(crate) in_flight: usize,
    pub(crate) max_in_flight: usize,
    /// How many times a request lets the others in flight run before it is answered (0: at
    /// once, as the property tests want it).
    pub(crate) yields: usize,
}
