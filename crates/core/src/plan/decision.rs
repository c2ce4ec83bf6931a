//! What a plan is made of: the operation, one decision per table and the reason for it.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ledger::TableRecord;
use crate::plan::deferral::DeferralCause;
use crate::plan::verdict::Verdict;
use crate::policy::period::Slot;
use crate::policy::scaling::{DeregisterScaling, RegisterScaling};
use crate::policy::settings::Billing;
use crate::table::changes::{
    CapacityChange, ClassChange, DeleteRequest, ExportRequest, SealRequest, SettingChange, TableSpec,
    TagChange, TtlChange, UnsealRequest,
};
use crate::table::stream::{DestinationChange, MappingChange, MappingRemoval, MappingUpdate};

/// The two scheduled jobs of the blog's DailyResize.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Before a boundary: make sure the current and the next `premake` tables exist.
    CreateNew,
    /// After a boundary: move every aged table to the phase its age calls for.
    ResizeOld,
}

impl Operation {
    /// The operation's name, `create_new` or `resize_old`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::CreateNew => "create_new",
            Operation::ResizeOld => "resize_old",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Operation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "create_new" | "create-new" => Ok(Operation::CreateNew),
            "resize_old" | "resize-old" => Ok(Operation::ResizeOld),
            other => Err(format!(
                "unknown operation {other:?}: use \"create_new\" or \"resize_old\""
            )),
        }
    }
}

/// What the run does with one table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// CreateTable: the period's table does not exist yet.
    Create(TableSpec),
    /// The period's table is being deleted (DELETING): wait until it is gone, within the run's
    /// time, then create it again. Failing that, the run fails: the period has no table.
    Recreate(TableSpec),
    /// UpdateTable of the billing mode or throughput, the table's and its indexes'.
    Update(CapacityChange),
    /// UpdateTable of the table class.
    UpdateClass(ClassChange),
    /// Template upkeep.
    Tag(TagChange),
    /// Turn TTL on with the template's attribute.
    EnableTtl(TtlChange),
    /// Turn point-in-time recovery on.
    EnablePointInTimeRecovery {
        /// The table's name.
        name: String,
    },
    /// UpdateTable of one setting besides capacity and class.
    Configure(SettingChange),
    /// Retention.
    Export(ExportRequest),
    /// Before deleting an archived table: deny item writes in its resource-based policy, so the
    /// final export holds every write DynamoDB accepted.
    Seal(SealRequest),
    /// A sealed table no longer due for deletion: remove our statement, and only ours.
    Unseal(UnsealRequest),
    /// DeleteTable: the table is past `delete_after` (and archived, when archiving is on).
    Delete(DeleteRequest),
    /// Stream the table's changes into the family's Kinesis data stream.
    EnableKinesisDestination(DestinationChange),
    /// Map the family's consumer function to the table's DynamoDB stream.
    CreateEventSourceMapping(MappingChange),
    /// Put the policy's batch size and filters back on our mapping after someone changed them.
    UpdateEventSourceMapping(MappingUpdate),
    /// Once its table is deleted: remove our mapping from the table's stream.
    DeleteEventSourceMapping(MappingRemoval),
    /// Autoscaling phases: register scalable targets with our target-tracking policy.
    RegisterScaling(RegisterScaling),
    /// Leaving an autoscaling phase: remove our policies and scalable targets.
    DeregisterScaling(DeregisterScaling),
    /// Write the table's record in the family's ledger: the outcome of an intent a crashed run
    /// left, now that DynamoDB shows the table it made.
    Record(TableRecord),
    /// Already as the policy wants it.
    Unchanged,
    /// Needs a change that DynamoDB would refuse now; a later run does it.
    Deferred {
        /// The earliest time DynamoDB would take the change, when known.
        retry_after: Option<DateTime<Utc>>,
        /// Why DynamoDB would refuse the change now.
        cause: DeferralCause,
    },
    /// Not this operation's concern.
    Skipped,
    /// Has the prefix but is not provably ours: never touched.
    Foreign,
    /// A change the run must make but cannot without an operator (the next period's table
    /// name is held by a table that is not ours): reported as failed.
    Blocked,
}

impl Decision {
    /// Whether the run would call AWS for this decision (not unchanged, deferred, skipped, foreign or blocked).
    pub fn is_change(&self) -> bool {
        !matches!(
            self,
            Decision::Unchanged
                | Decision::Deferred { .. }
                | Decision::Skipped
                | Decision::Foreign
                | Decision::Blocked
        )
    }

    /// Whether this is an UpdateTable: DynamoDB takes one at a time per table, so a plan holds
    /// at most one per table and defers the rest.
    pub(crate) fn updates_table(&self) -> bool {
        matches!(
            self,
            Decision::Update(_) | Decision::UpdateClass(_) | Decision::Configure(_)
        )
    }

    /// The action's name as reports print it.
    pub fn action(&self) -> &'static str {
        match self {
            Decision::Create(_) => "create",
            Decision::Recreate(_) => "recreate",
            Decision::Update(_) => "update",
            Decision::UpdateClass(_) => "update_class",
            Decision::Tag(_) => "tag",
            Decision::EnableTtl(_) => "enable_ttl",
            Decision::EnablePointInTimeRecovery { .. } => "enable_point_in_time_recovery",
            Decision::Configure(_) => "configure",
            Decision::Export(request) if request.after_seal => "final_export",
            Decision::Export(_) => "export",
            Decision::Seal(_) => "seal",
            Decision::Unseal(_) => "unseal",
            Decision::Delete(_) => "delete",
            Decision::EnableKinesisDestination(_) => "enable_kinesis_destination",
            Decision::CreateEventSourceMapping(_) => "create_event_source_mapping",
            Decision::UpdateEventSourceMapping(_) => "update_event_source_mapping",
            Decision::DeleteEventSourceMapping(_) => "delete_event_source_mapping",
            Decision::RegisterScaling(_) => "register_scaling",
            Decision::DeregisterScaling(_) => "deregister_scaling",
            Decision::Record(_) => "record",
            Decision::Unchanged => "unchanged",
            Decision::Deferred { .. } => "deferred",
            Decision::Skipped => "skipped",
            Decision::Foreign => "foreign",
            Decision::Blocked => "blocked",
        }
    }
}

/// What a plan's line and a `status` line say of the table itself, before what a run does with
/// it: its name, its period and age, and what DynamoDB showed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TableFacts {
    /// The table's name.
    pub table: String,
    /// The period label, for tables we own.
    pub period: Option<String>,
    /// The period itself (from the table's period tags, else its name): `status` dates the
    /// table's next phase, archive and deletion from it.
    #[serde(skip)]
    pub slot: Option<Slot>,
    /// Periods since the table's period: 0 is current, negative is a pre-built future table.
    pub age: Option<i64>,
    /// Index into the policy's phases that the table's age calls for.
    pub phase: Option<usize>,
    /// TableStatus as observed; `None` when the table does not exist.
    pub status: Option<String>,
    /// Throughput as observed; `None` when the table does not exist.
    pub billing: Option<Billing>,
}

impl TableFacts {
    /// A table known by its name alone: no period, nothing observed.
    pub(crate) fn named(table: &str) -> TableFacts {
        TableFacts {
            table: table.to_string(),
            ..TableFacts::default()
        }
    }
}

/// One table's decision and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanItem {
    /// The table, where it stands.
    #[serde(flatten)]
    pub facts: TableFacts,
    /// The table's ARN, for the executor's own tags; not part of reports.
    #[serde(skip)]
    pub arn: Option<String>,
    /// The one ownership verdict on the table the decision rests on; `None` for a table that
    /// does not exist or was only listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// What the run does with the table.
    pub decision: Decision,
    /// Why, in words for the operator.
    pub reason: String,
}

impl PlanItem {
    /// An item for a table known by its name alone: no period, nothing observed, no verdict.
    pub(crate) fn unobserved(table: &str, decision: Decision, reason: String) -> PlanItem {
        PlanItem {
            facts: TableFacts::named(table),
            arn: None,
            verdict: None,
            decision,
            reason,
        }
    }
}

/// Every table's decision for one run of one operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The operation planned.
    pub operation: Operation,
    /// The run's time: periods, ages and deadlines are counted from it.
    pub at: DateTime<Utc>,
    /// The policy's table-name prefix.
    pub prefix: String,
    /// The label of the period `at` falls in.
    pub current_period: String,
    /// Sorted by table name, which for owned tables is time order.
    pub items: Vec<PlanItem>,
    /// Things an operator should know that are not a table's decision (neighbours under our
    /// name prefix).
    pub warnings: Vec<String>,
}
