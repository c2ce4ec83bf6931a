//! The ground truth of every mutating call: what it did, object by object ([`Effect`]), and who
//! made it ([`Call`]); the invariants of the property tests read it. Besides it, every request
//! made through the ports, read or change, with the clock's waits and the requests in flight
//! ([`Request`]): what the executor's tests assert on.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use ddb_rollover::control::ErrorKind;
use ddb_rollover::policy::Precision;
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::{table_of, ScalableKey};
use ddb_rollover::policy::{Billing, TableClass};

use crate::maker::Maker;
use crate::objects::{ScalingPolicy, ScheduledAction, Table};

/// What a mutating call did, object by object.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// CreateTable.
    CreatedTable {
        /// The table it changed.
        table: String,
    },
    /// UpdateTable of the table's throughput.
    TableCapacity {
        /// The table it changed.
        table: String,
        /// What it was before.
        from: Billing,
        /// What it became.
        to: Billing,
    },
    /// UpdateTable of an index's throughput.
    IndexCapacity {
        /// The table it changed.
        table: String,
        /// The index it changed.
        index: String,
        /// What it was before.
        from: Billing,
        /// What it became.
        to: Billing,
    },
    /// UpdateTable of the table class.
    TableClass {
        /// The table it changed.
        table: String,
        /// What it was before.
        from: TableClass,
        /// What it became.
        to: TableClass,
    },
    /// Deletion protection, stream or encryption.
    Setting {
        /// The table it changed.
        table: String,
        /// Which setting, and to what.
        setting: String,
    },
    /// A raise of the warm throughput of the table (`index` None) or one of its indexes.
    Warm {
        /// The table it changed.
        table: String,
        /// The index whose warm throughput rose (`None`: the table's).
        index: Option<String>,
        /// What it was before.
        from: WarmThroughput,
        /// What it became.
        to: WarmThroughput,
    },
    /// UpdateTable adding a global secondary index.
    AddedIndex {
        /// The table it changed.
        table: String,
        /// The index it changed.
        index: String,
    },
    /// UpdateTimeToLive turning TTL on.
    Ttl {
        /// The table it changed.
        table: String,
        /// The TTL attribute.
        attribute: String,
    },
    /// UpdateContinuousBackups turning point-in-time recovery on.
    Pitr {
        /// The table it changed.
        table: String,
    },
    /// TagResource.
    Tagged {
        /// The table it changed.
        table: String,
        /// The tags written.
        tags: BTreeMap<String, String>,
        /// The table's tags before the call.
        before: BTreeMap<String, String>,
    },
    /// UntagResource.
    Untagged {
        /// The table it changed.
        table: String,
        /// The tag keys removed.
        keys: Vec<String>,
    },
    /// ExportTableToPointInTime.
    Exported {
        /// The table it changed.
        table: String,
        /// The export's ARN.
        export: String,
    },
    /// DeleteTable: the table as it was when the call was made.
    DeletedTable {
        /// The table as it was when deleted.
        table: Box<Table>,
    },
    /// RegisterScalableTarget (a new target, or new bounds).
    RegisteredTarget {
        /// The scalable target.
        key: ScalableKey,
        /// (min, max) before, when the target existed.
        before: Option<(i64, i64)>,
        /// (min, max) after the call.
        after: (i64, i64),
    },
    /// PutScalingPolicy.
    PutPolicy {
        /// The scalable target.
        key: ScalableKey,
        /// Its name.
        name: String,
        /// Whether the call created it (else it replaced one of that name).
        created: bool,
    },
    /// DeleteScalingPolicy.
    DeletedPolicy {
        /// The scalable target.
        key: ScalableKey,
        /// The policy as it was.
        policy: ScalingPolicy,
    },
    /// DeregisterScalableTarget, with the policies and scheduled actions it deleted along with
    /// the target.
    DeregisteredTarget {
        /// The scalable target.
        key: ScalableKey,
        /// Who made it.
        maker: Maker,
        /// The policies deleted with it.
        policies: Vec<ScalingPolicy>,
        /// The scheduled actions deleted with it.
        scheduled_actions: Vec<ScheduledAction>,
    },
    /// PutScheduledAction.
    PutScheduledAction {
        /// The scalable target.
        key: ScalableKey,
        /// Its name.
        name: String,
        /// Whether the call created it (else it replaced one of that name).
        created: bool,
    },
    /// DeleteScheduledAction.
    DeletedScheduledAction {
        /// The scalable target.
        key: ScalableKey,
        /// The scheduled action as it was.
        action: ScheduledAction,
    },
    /// EnableKinesisStreamingDestination: a destination into `stream_arn` started ENABLING.
    EnabledDestination {
        /// The table it changed.
        table: String,
        /// The Kinesis data stream (or, for a mapping, the DynamoDB stream) it names.
        stream_arn: String,
        /// The precision asked.
        precision: Precision,
    },
    /// DisableKinesisStreamingDestination: the destination into `stream_arn` started DISABLING.
    DisabledDestination {
        /// The table it changed.
        table: String,
        /// The Kinesis data stream (or, for a mapping, the DynamoDB stream) it names.
        stream_arn: String,
    },
    /// UpdateKinesisStreamingDestination of a destination's precision.
    DestinationPrecision {
        /// The table it changed.
        table: String,
        /// The Kinesis data stream (or, for a mapping, the DynamoDB stream) it names.
        stream_arn: String,
        /// What it was before.
        from: Precision,
        /// What it became.
        to: Precision,
    },
    /// Kinesis DeleteStream, with the tables whose destinations were streaming into it (their
    /// records are lost from then on). On no table: [`Effect::table`] is empty.
    DeletedKinesisStream {
        /// The Kinesis data stream (or, for a mapping, the DynamoDB stream) it names.
        stream_arn: String,
        /// The tables whose destinations stream into it: their records are lost from now on.
        losing: Vec<String>,
    },
    /// CreateEventSourceMapping: a mapping of `function_arn` on `stream_arn` (the stream of
    /// `table`) started Creating.
    CreatedMapping {
        /// The table it changed.
        table: String,
        /// The mapping's UUID.
        uuid: String,
        /// The function it invokes.
        function_arn: String,
        /// The Kinesis data stream (or, for a mapping, the DynamoDB stream) it names.
        stream_arn: String,
    },
    /// DeleteEventSourceMapping: the mapping (made by `maker`) started Deleting.
    DeletedMapping {
        /// The table it changed.
        table: String,
        /// The mapping's UUID.
        uuid: String,
        /// The function it invokes.
        function_arn: String,
        /// The Kinesis data stream (or, for a mapping, the DynamoDB stream) it names.
        stream_arn: String,
        /// Who made it.
        maker: Maker,
    },
    /// UpdateEventSourceMapping `Enabled = false`: the mapping started Disabling.
    DisabledMapping {
        /// The table it changed.
        table: String,
        /// The mapping's UUID.
        uuid: String,
        /// The function it invokes.
        function_arn: String,
    },
    /// UpdateEventSourceMapping of a mapping's batch size and filters, or of its function (now
    /// `function_arn`); `maker` made the mapping.
    UpdatedMapping {
        /// The table it changed.
        table: String,
        /// The mapping's UUID.
        uuid: String,
        /// The function it invokes.
        function_arn: String,
        /// Who made it.
        maker: Maker,
    },
    /// Lambda DeleteFunction, with the mappings that invoked it (they stay). On no table:
    /// [`Effect::table`] is empty.
    DeletedFunction {
        /// The function it invokes.
        function_arn: String,
        /// The mappings of the function, whose LastProcessingResult now says it is gone.
        mappings: Vec<String>,
    },
    /// The autoscaler brought a resource's capacity within a target's new bounds.
    AutoscalerCapacity {
        /// The table it changed.
        table: String,
        /// The index whose capacity changed (`None`: the table's).
        index: Option<String>,
        /// What it was before.
        from: Billing,
        /// What it became.
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
    /// When it was made, in fake time.
    pub at: DateTime<Utc>,
    /// Who made it.
    pub actor: Maker,
    /// The family whose role made the call (`None`: a foreign act outside IAM).
    pub role: Option<String>,
    /// The API operation.
    pub operation: &'static str,
    /// The table (or other resource) it named.
    pub table: String,
    /// Its refusal (kind, message), if refused.
    pub error: Option<(ErrorKind, String)>,
    /// What it did; a call that failed part-way (several scaling targets) keeps the parts done.
    pub effects: Vec<Effect>,
}

impl Call {
    /// Whether it was answered without an error.
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }
}

/// One request made through the engine's ports (a read or a change), as it was sent, whether it
/// then succeeded or not: what a test of the executor asserts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The port's operation.
    pub operation: &'static str,
    /// The table (or other resource) it named.
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
/// requests in order, the waits of [`Clock::sleep`](ddb_rollover::control::Clock::sleep), and how many
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
