//! The one ownership verdict: for each listed table, whose the table is, which of its parts are
//! not the policy's (global indexes, scalable targets, the scaling policies and scheduled
//! actions on them, a deletion protection the policy did not ask for), and whether retention
//! has positive evidence to delete it. A run computes it once per table
//! (`Judge::verdict`); every action of the planner asks it and nothing else, and the reports
//! and `status` print it.
//!
//! Evidence is identity, not marks. A table is ours while the family's ledger
//! ([`crate::ledger`]) holds its record and DynamoDB still shows the identity recorded when it
//! was made (ARN and creation time, TableId on AWS): a table made again under our name, by
//! anyone, is not; nor is a table named like ours that nobody recorded (`adopt` records one an
//! operator vouches for). A name prefix alone never makes a table ours, nor does a tag.
//!
//! - Identity wins over marks: another family's tag on a table the ledger records never
//!   disowns it (the runs would read it only now and then, and then disagree), but retention
//!   deletes only with our family tag too. On a table nobody recorded, its marks say whose it
//!   may be (another family's, restore's short import) in the verdict's reason.
//! - Its age comes from the period the ledger recorded (a name that says later keeps it
//!   younger): a policy whose period or time zone changed never re-ages a table by its name.
//! - A global index is the policy's only when its name, key schema and projection are; a
//!   scalable target is ours only when every policy on it is ours and no scheduled action is on
//!   it (we never create one); deletion protection is ours only when the policy's template asks
//!   for it. Anything else on a table is foreign, removes exactly the actions that would touch
//!   it, and keeps retention from deleting the table (deleting it would destroy the part, or
//!   override whoever protected it).
//! - Retention deletes a table only with its ledger identity and never on less evidence than
//!   before the ledger: our family tag too, where the endpoint keeps tags.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::ledger::{slot_of, Book, Origin, PeriodBounds, TableState, INTENT_SKEW};
use crate::policy::naming::{Ownership, TableNaming};
use crate::policy::period::Slot;
use crate::policy::scaling::{policy_name, resource_id, ObservedScalableTarget, ScalableKey};
use crate::policy::settings::{Billing, Capacity, KeySchema, LocalIndex, Projection};
use crate::policy::tags::{TAG_FAMILY, TAG_SHORT_IMPORT};
use crate::policy::Policy;
use crate::table::stream::{DestinationStatus, MappingState, ObservedDestination, ObservedMapping};
use crate::table::{ObservedTable, ObservedWarm};
use feeds::OurFeeds;

mod feeds;

/// Everything a run may do with one table, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Whose the table is, and on what evidence.
    #[serde(flatten)]
    pub owner: Owner,
    /// The table's parts that are not the policy's: no action touches them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub foreign: Vec<ForeignPart>,
    /// Our own scalable targets on the table (every policy on them is ours, and no scheduled
    /// action is on them).
    #[serde(skip)]
    pub our_targets: Vec<ScalableKey>,
    /// Why retention may not delete the table; empty: positive evidence that it may.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_deletable: Vec<NoEvidence>,
    /// What the verdict could read: tags and scalable targets.
    #[serde(skip)]
    pub seen: Seen,
    /// Where the family's Kinesis destination on the table stands; `None` when the policy
    /// names no stream.
    #[serde(skip)]
    pub stream: Option<StreamState>,
    /// Where the family's event source mapping on the table's stream stands; `None` when the
    /// policy names no consumer function.
    #[serde(skip)]
    pub consumer: Option<ConsumerState>,
}

/// Where the family's consumer mapping on a table stands (a mapping of the policy's function on
/// the table's latest stream: the positive evidence it is ours; any other is a [`ForeignPart`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConsumerState {
    /// The mappings were not read this run.
    NotRead,
    /// The endpoint has no Lambda (dynalite, DynamoDB Local): none can be on the table's
    /// stream, and none can be made.
    Unsupported,
    /// No mapping of the policy's function is on the table's stream (or the table has none).
    Absent,
    /// The family's mapping, in this state.
    Ours {
        /// Its identifier.
        uuid: String,
        /// Its state.
        state: MappingState,
        /// Why it is in that state, or its last batch's result, when Lambda says.
        reason: Option<String>,
    },
    /// No mapping of ours invokes the policy's function, but ours (by its recorded UUID) now
    /// invokes another: someone re-pointed it. The run never re-points it back (that is
    /// someone's choice to undo, not drift of a setting) and never maps the consumer beside it
    /// (two mappings of ours would both be ours to keep); the table is not ready until someone
    /// points it back or deletes it.
    Repointed {
        /// Its identifier.
        uuid: String,
        /// The function it invokes now.
        function_arn: String,
        /// Its state.
        state: MappingState,
    },
}

/// Where the family's Kinesis destination on a table stands (the destination to the stream the
/// policy names: the positive evidence it is ours; any other is a [`ForeignPart`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamState {
    /// The destinations were not read this run.
    NotRead,
    /// The endpoint has no Kinesis destinations (dynalite, DynamoDB Local): none can be on
    /// the table, and none can be enabled.
    Unsupported,
    /// No destination to the family's stream holds the table (none, or DISABLED).
    Absent,
    /// The family's destination, in this status (ENABLING, ACTIVE, UPDATING, DISABLING,
    /// ENABLE_FAILED), with DynamoDB's description of it.
    Ours {
        /// The destination's status.
        status: DestinationStatus,
        /// Why, when DynamoDB says (ENABLE_FAILED's reason).
        description: Option<String>,
    },
}

/// Whose the table is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "owner", rename_all = "snake_case")]
pub enum Owner {
    /// The policy manages the table, which holds `slot`.
    Ours {
        /// The period the table holds.
        #[serde(skip)]
        slot: Slot,
        /// The period's bounds, as the family's ledger recorded them.
        #[serde(skip)]
        period: PeriodBounds,
        /// The evidence that it is ours.
        by: OwnedBy,
    },
    /// Starts with our name prefix but is not provably ours: reported, never touched.
    NotOurs {
        /// Why it is not provably ours.
        why: NotOurs,
    },
}

/// The evidence that a table is ours: always its record in the family's ledger, with the
/// identity DynamoDB still shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnedBy {
    /// This family's CreateTable.
    Created,
    /// An operator's `adopt`.
    Adopted,
    /// Made before the ledger; recorded by `init` on its family tag, key and period.
    Enrolled,
    /// `restore` imported it from a deletion's receipt.
    Restored,
    /// A run's intent whose outcome was not recorded (a crash), matched by the table's creation
    /// time and key: this run records it.
    Intent,
}

/// Why a table under our name prefix is not provably ours.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NotOurs {
    /// Another ddb-rollover family's table: its family tag names another prefix.
    OtherFamily {
        /// The prefix its family tag names.
        family: String,
    },
    /// The rest of the name is not a label of our period, and no tag of ours claims it.
    UnknownName,
    /// The name is ours but the key schema is not, and no family tag claims it: a hand-made
    /// look-alike.
    LookAlike {
        /// The key schema the table has.
        have: KeySchema,
    },
    /// Named like the policy's tables, but the ledger has no record of it: nobody proved it
    /// this family's (`ddb-rollover adopt` is the operator's way to vouch for it).
    NotRecorded,
    /// The ledger records a table of this name with another identity: this one was made again
    /// under the name (by anyone), after ours.
    MadeAgain {
        /// When the table the ledger records was created.
        recorded: DateTime<Utc>,
        /// When this one was, when DescribeTable said.
        created: Option<DateTime<Utc>>,
    },
    /// `restore` imported it short of its archive: an operator looks into it before anything
    /// treats it as the period's table.
    ShortImport {
        /// What the imported table falls short of.
        why: String,
    },
}

/// A part of a table that is not the policy's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "part", rename_all = "snake_case")]
pub enum ForeignPart {
    /// A global secondary index whose name, key schema or projection is not the policy's.
    Index {
        /// The index's name.
        name: String,
        /// What differs from the policy's index.
        why: String,
    },
    /// A scalable target without this policy's scaling policy.
    Target {
        /// The resource and dimension the target is registered for.
        key: ScalableKey,
        /// The names of the scaling policies on it, none of them ours.
        policies: Vec<String>,
        /// The names of the scheduled actions on it.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        scheduled_actions: Vec<String>,
    },
    /// One of our scalable targets that also carries policies that are not ours, or scheduled
    /// actions: ours is removed when the phase ends, the target never deregistered (that would
    /// delete theirs).
    SharedTarget {
        /// The resource and dimension the target is registered for.
        key: ScalableKey,
        /// The names of the scaling policies on it that are not ours.
        policies: Vec<String>,
        /// The names of the scheduled actions on it.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        scheduled_actions: Vec<String>,
    },
    /// Deletion protection is on and the policy's template does not ask for it: someone turned
    /// it on to keep the table. Never turned off.
    DeletionProtection,
    /// Statements in the table's resource-based policy that are not our seal (by Sid, or
    /// position): someone else's. Never changed; DeleteTable would destroy them.
    ResourcePolicy {
        /// The foreign statements, by Sid (or position).
        statements: Vec<String>,
    },
    /// A Kinesis data stream destination to a stream the policy does not name, enabling or
    /// streaming: someone else's change feed. Never disabled; DeleteTable would end it.
    KinesisDestination {
        /// The stream it feeds.
        stream_arn: String,
        /// Its status (ENABLING, ACTIVE, UPDATING, DISABLING).
        status: String,
    },
    /// A Lambda event source mapping on the table's stream to a function the policy does not
    /// name: someone else's consumer. Never deleted; DeleteTable would end its stream.
    EventSourceMapping {
        /// The mapping's identifier.
        uuid: String,
        /// The function it invokes.
        function_arn: String,
        /// Its state.
        state: String,
    },
}

/// A missing piece of the positive evidence retention needs to delete a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "missing", rename_all = "snake_case")]
pub enum NoEvidence {
    /// Not ours at all.
    NotOurs,
    /// Its tags were not read by this run.
    TagsNotRead,
    /// Its record in the ledger is an intent this run resolves: a later run deletes it.
    NotRecordedYet,
    /// Our family tag is not on it (someone removed it): less evidence than the ledger had
    /// when the table was made.
    NoFamilyTag,
    /// Its key schema is not the policy's (or DescribeTable did not give it).
    KeyDiffers {
        /// The key schema the table has; `None` when DescribeTable did not give it.
        have: Option<KeySchema>,
    },
    /// Its local secondary indexes are not the policy's.
    LocalIndexesDiffer,
    /// Global secondary indexes that are not the policy's are on it: deleting the table would
    /// destroy them.
    ForeignIndexes,
    /// Scalable targets this policy did not create, policies that are not ours, or scheduled
    /// actions are on it.
    ForeignScaling,
    /// Deletion protection that the policy did not ask for is on.
    ForeignDeletionProtection,
    /// Someone else's statements are in its resource-based policy.
    ForeignResourcePolicy,
    /// The scalable targets on it could not be read this run.
    ScalingNotRead,
    /// Its resource-based policy was not read this run.
    ResourcePolicyNotRead,
    /// Someone else's Kinesis destination feeds a stream from it (deleting the table would end
    /// their change feed).
    ForeignKinesisDestination,
    /// Its Kinesis destinations were not read this run.
    DestinationsNotRead,
    /// Someone else's Lambda event source mapping reads its stream (deleting the table would
    /// end their consumer's feed).
    ForeignEventSourceMapping,
    /// The event source mappings on its stream were not read this run.
    MappingsNotRead,
    /// Our mapping on its stream now invokes another function than the policy's (someone
    /// re-pointed it): deleting the table would end that function's feed.
    RepointedEventSourceMapping,
    /// The family's ledger cannot be rested on (missing, never started, or holding records
    /// this version cannot read): a record someone deleted or edited there may be the one that
    /// would keep this table, so nothing is deleted until it is put right.
    LedgerNotSound,
}

/// What the verdict rests on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// Whether the table's tags were read.
    pub tags: Reading,
    /// Whether the scalable targets on the table and its GSIs were read.
    pub scaling: Reading,
    /// Whether the table's resource-based policy was read.
    pub resource_policy: Reading,
    /// Whether the table's Kinesis destinations were read.
    pub destinations: Reading,
    /// Whether the event source mappings on the table's stream were read.
    pub mappings: Reading,
}

/// Whether one of the optional reads was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reading {
    /// The run did not ask.
    #[default]
    NotRead,
    /// The endpoint does not implement the API (DynamoDB Local's tags, Application Auto
    /// Scaling on DynamoDB Local and dynalite): nothing of that kind can exist there.
    Unsupported,
    /// Read, and the answer is in the observation.
    Read,
}

/// Which capacity dimensions of a table or index are ours to change: each unless a scalable
/// target that is not ours alone holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OursToChange {
    /// The read capacity.
    pub(crate) read: bool,
    /// The write capacity.
    pub(crate) write: bool,
}

impl OursToChange {
    /// Both dimensions.
    pub(crate) fn all(self) -> bool {
        self.read && self.write
    }

    /// Neither.
    pub(crate) fn none(self) -> bool {
        !self.read && !self.write
    }

    /// `want` where it is ours, `have` elsewhere: a provisioned capacity takes each dimension
    /// from whichever owns it; anything else (on-demand, whose throughput no target holds) is
    /// `want` only when both are ours.
    pub(crate) fn apply(self, have: Billing, want: Billing) -> Billing {
        match (have, want) {
            _ if self.all() => want,
            (Billing::Provisioned(have), Billing::Provisioned(want)) if !self.none() => {
                Billing::Provisioned(Capacity {
                    read: if self.read { want.read } else { have.read },
                    write: if self.write { want.write } else { have.write },
                })
            }
            _ => have,
        }
    }
}

/// Whose a scalable target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetOwner {
    /// No target is registered for the key (or targets were not read: see [`Verdict::seen`]).
    Absent,
    /// Every policy on it is ours.
    Ours,
    /// Ours and someone else's policies.
    Shared,
    /// No policy of ours.
    Foreign,
}

impl Verdict {
    pub(crate) fn is_ours(&self) -> bool {
        matches!(self.owner, Owner::Ours { .. })
    }

    /// The period the table holds, when it is ours.
    pub fn slot(&self) -> Option<Slot> {
        match self.owner {
            Owner::Ours { slot, .. } => Some(slot),
            Owner::NotOurs { .. } => None,
        }
    }

    /// Whether the global secondary index `name` is the policy's (its name, key schema and
    /// projection are).
    pub fn index_is_ours(&self, name: &str) -> bool {
        !self
            .foreign
            .iter()
            .any(|part| matches!(part, ForeignPart::Index { name: n, .. } if n == name))
    }

    /// Whose the scalable target `key` is.
    pub fn target(&self, key: &ScalableKey) -> TargetOwner {
        if self.our_targets.contains(key) {
            return TargetOwner::Ours;
        }
        self.foreign
            .iter()
            .find_map(|part| match part {
                ForeignPart::Target { key: k, .. } if k == key => Some(TargetOwner::Foreign),
                ForeignPart::SharedTarget { key: k, .. } if k == key => Some(TargetOwner::Shared),
                _ => None,
            })
            .unwrap_or(TargetOwner::Absent)
    }

    /// The targets and shared targets on one resource (`table/NAME` or its index's) and one
    /// dimension (read when `read`, else write), which hold that capacity: a change to it would
    /// fight them. A target holds its own dimension only: one on the write capacity leaves the
    /// read capacity ours.
    pub(crate) fn claims_on(&self, resource: &str, read: bool) -> Vec<&ForeignPart> {
        self.foreign
            .iter()
            .filter(|part| match part {
                ForeignPart::Target { key, .. } | ForeignPart::SharedTarget { key, .. } => {
                    key.resource_id == resource && key.dimension.is_read() == read
                }
                ForeignPart::Index { .. }
                | ForeignPart::DeletionProtection
                | ForeignPart::ResourcePolicy { .. }
                | ForeignPart::KinesisDestination { .. }
                | ForeignPart::EventSourceMapping { .. } => false,
            })
            .collect()
    }

    /// Which capacity dimensions of the table itself are ours to change.
    pub(crate) fn table_capacity(&self, table: &str) -> OursToChange {
        let resource = resource_id(table, None);
        OursToChange {
            read: self.claims_on(&resource, true).is_empty(),
            write: self.claims_on(&resource, false).is_empty(),
        }
    }

    /// Which capacity dimensions of the index `name` are ours to change (none of a foreign
    /// index).
    pub(crate) fn index_capacity(&self, table: &str, name: &str) -> OursToChange {
        let resource = resource_id(table, Some(name));
        let ours = self.index_is_ours(name);
        OursToChange {
            read: ours && self.claims_on(&resource, true).is_empty(),
            write: ours && self.claims_on(&resource, false).is_empty(),
        }
    }

    /// Whether the whole throughput of the table itself is ours to change.
    #[cfg(test)]
    pub(crate) fn table_capacity_is_ours(&self, table: &str) -> bool {
        self.table_capacity(table).all()
    }

    /// Whether the whole throughput of the index `name` is ours to change.
    #[cfg(test)]
    pub(crate) fn index_capacity_is_ours(&self, table: &str, name: &str) -> bool {
        self.index_capacity(table, name).all()
    }

    /// The warm throughput DescribeTable reports for the parts of `table` that are ours: the
    /// table's (`None`), then each of the policy's indexes' (by name). A part that reports none
    /// is left out. Warm throughput holds no capacity, so scalable targets do not claim it.
    pub(crate) fn warm_parts<'t>(
        &self,
        table: &'t ObservedTable,
    ) -> Vec<(Option<&'t str>, &'t ObservedWarm)> {
        let indexes = table
            .global_indexes
            .iter()
            .filter(|index| self.index_is_ours(&index.name))
            .filter_map(|index| Some((Some(index.name.as_str()), index.warm.as_ref()?)));
        table
            .warm
            .as_ref()
            .map(|warm| (None, warm))
            .into_iter()
            .chain(indexes)
            .collect()
    }

    /// Whether a change that touches every part of the table (a billing mode switch) is ours to
    /// make: no foreign index or scalable target is on it (a deletion protection someone set
    /// holds no throughput).
    pub(crate) fn whole_table_is_ours(&self) -> bool {
        self.is_ours()
            && self.foreign.iter().all(|part| {
                matches!(
                    part,
                    ForeignPart::DeletionProtection
                        | ForeignPart::ResourcePolicy { .. }
                        | ForeignPart::KinesisDestination { .. }
                        | ForeignPart::EventSourceMapping { .. }
                )
            })
    }

    /// Whether deletion protection is someone else's setting (on, and the policy does not ask
    /// for it): never turned off, by upkeep or before a deletion.
    #[cfg(test)]
    pub(crate) fn protection_is_foreign(&self) -> bool {
        self.foreign.contains(&ForeignPart::DeletionProtection)
    }

    /// Whether the scalable targets were known when the verdict was made (read, or impossible on
    /// this endpoint).
    pub(crate) fn scaling_known(&self) -> bool {
        self.seen.scaling != Reading::NotRead
    }

    /// The short form reports print: `ours (family tag)`, `not ours (family "ts_eu")`, with the
    /// number of foreign parts.
    pub fn label(&self) -> String {
        let owner = match &self.owner {
            Owner::Ours { by, .. } => format!("ours ({by})"),
            Owner::NotOurs { why } => format!("not ours ({})", why.short()),
        };
        match self.foreign.len() {
            0 => owner,
            n => format!("{owner}, {n} foreign part(s)"),
        }
    }
}

impl fmt::Display for OwnedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OwnedBy::Created => "ledger: created",
            OwnedBy::Adopted => "ledger: adopted",
            OwnedBy::Enrolled => "ledger: enrolled",
            OwnedBy::Restored => "ledger: restored",
            OwnedBy::Intent => "ledger: intent, recorded now",
        })
    }
}

impl NotOurs {
    fn short(&self) -> String {
        match self {
            NotOurs::OtherFamily { family } => format!("family {family:?}"),
            NotOurs::UnknownName => "name".into(),
            NotOurs::LookAlike { .. } => "key".into(),
            NotOurs::NotRecorded => "not in the ledger".into(),
            NotOurs::MadeAgain { .. } => "made again".into(),
            NotOurs::ShortImport { .. } => "short import".into(),
        }
    }
}

impl fmt::Display for NotOurs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotOurs::OtherFamily { family } => {
                write!(f, "its {TAG_FAMILY} tag names another family, {family:?}")
            }
            NotOurs::UnknownName => {
                f.write_str("its name is not a label of the policy's period and no tag of ours claims it")
            }
            NotOurs::LookAlike { have } => write!(
                f,
                "its key is {have}, not the policy's, and no family tag claims it"
            ),
            NotOurs::NotRecorded => f.write_str(
                "the family's ledger has no record of it: nobody proved it this family's (ddb-rollover adopt records a table an operator vouches for)",
            ),
            NotOurs::MadeAgain { recorded, created } => write!(
                f,
                "the ledger records the table of this name created at {}; this one was created at {}: made again under the name, not ours",
                recorded.to_rfc3339(),
                created.map_or_else(|| "an unknown time".to_string(), |c| c.to_rfc3339())
            ),
            NotOurs::ShortImport { why } => write!(
                f,
                "restore imported it short of its archive ({why}): look into it, delete it and restore again"
            ),
        }
    }
}

/// Whose one scalable target is: `None` when it is ours alone (our policy for its dimension
/// and nothing else: no other policy, no scheduled action); else the foreign part it is, shared
/// (ours and someone else's) or foreign (no policy of ours). Our policy is the one the family's
/// ledger recorded by its ARN (`recorded`) under our name: a policy given our name by anyone
/// else is theirs. Asked of the targets on a table and of those left on a name whose table is
/// gone (deleting a table deregisters nothing).
pub(crate) fn judge_target(
    prefix: &str,
    target: &ObservedScalableTarget,
    recorded: &[String],
) -> Option<ForeignPart> {
    let ours = policy_name(prefix, target.key.dimension);
    let (mine, theirs): (Vec<_>, Vec<_>) = target
        .policies
        .iter()
        .partition(|p| p.name == ours && p.arn.as_ref().is_some_and(|arn| recorded.contains(arn)));
    let policies: Vec<String> = theirs.into_iter().map(|p| p.name.clone()).collect();
    let scheduled_actions = target.scheduled_actions.clone();
    let key = target.key.clone();
    match (
        mine.is_empty(),
        policies.is_empty() && scheduled_actions.is_empty(),
    ) {
        (false, true) => None,
        (false, false) => Some(ForeignPart::SharedTarget {
            key,
            policies,
            scheduled_actions,
        }),
        (true, _) => Some(ForeignPart::Target {
            key,
            policies,
            scheduled_actions,
        }),
    }
}

impl fmt::Display for ForeignPart {
    /// "index by_site (key differs)", "scalable target table/t read (policies: theirs)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ForeignPart::Index { name, why } => write!(f, "index {name} ({why})"),
            ForeignPart::Target {
                key,
                policies,
                scheduled_actions,
            } => {
                let theirs = attached(policies, scheduled_actions);
                if theirs.is_empty() {
                    write!(f, "scalable target {key} (no policy of ours)")
                } else {
                    write!(f, "scalable target {key} ({theirs})")
                }
            }
            ForeignPart::SharedTarget {
                key,
                policies,
                scheduled_actions,
            } => write!(
                f,
                "scalable target {key} (ours, and also {})",
                attached(policies, scheduled_actions)
            ),
            ForeignPart::DeletionProtection => {
                f.write_str("deletion protection (on, and the policy's template does not ask for it)")
            }
            ForeignPart::ResourcePolicy { statements } => write!(
                f,
                "resource-based policy statements that are not our seal ({})",
                statements.join(", ")
            ),
            ForeignPart::KinesisDestination { stream_arn, status } => write!(
                f,
                "Kinesis data stream destination to {stream_arn} ({status}; not the policy's stream)"
            ),
            ForeignPart::EventSourceMapping {
                uuid,
                function_arn,
                state,
            } => write!(
                f,
                "Lambda event source mapping {uuid} to {function_arn} on its stream ({state}; not the policy's consumer)"
            ),
        }
    }
}

/// "policies: a, b; scheduled actions: c", leaving out an empty list.
fn attached(policies: &[String], scheduled_actions: &[String]) -> String {
    let mut parts = Vec::new();
    if !policies.is_empty() {
        parts.push(format!("policies: {}", policies.join(", ")));
    }
    if !scheduled_actions.is_empty() {
        parts.push(format!("scheduled actions: {}", scheduled_actions.join(", ")));
    }
    parts.join("; ")
}

impl fmt::Display for NoEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoEvidence::NotOurs => f.write_str("it is not this policy's"),
            NoEvidence::TagsNotRead => f.write_str("its tags were not read"),
            NoEvidence::NotRecordedYet => {
                f.write_str("its record is an intent this run completes: a later run may delete it")
            }
            NoEvidence::NoFamilyTag => write!(
                f,
                "its {TAG_FAMILY} tag is gone: the ledger records it, but a deletion never rests on less evidence than the table was made with (ddb-rollover adopt tags it again)"
            ),
            NoEvidence::KeyDiffers { have: Some(have) } => write!(f, "its key is {have}, not the policy's"),
            NoEvidence::KeyDiffers { have: None } => f.write_str("its key schema is unknown"),
            NoEvidence::LocalIndexesDiffer => f.write_str("its local secondary indexes are not the policy's"),
            NoEvidence::ForeignIndexes => f.write_str(
                "global secondary indexes that are not this policy's are on it (deleting the table would destroy them)",
            ),
            NoEvidence::ForeignScaling => f.write_str(
                "scalable targets, scaling policies or scheduled actions that are not this policy's are on it",
            ),
            NoEvidence::ForeignDeletionProtection => f.write_str(
                "deletion protection is on and the policy's template does not ask for it: someone protected it",
            ),
            NoEvidence::ScalingNotRead => f.write_str("its scalable targets could not be read this run"),
            NoEvidence::ForeignResourcePolicy => f.write_str(
                "someone else's statements are in its resource-based policy (deleting the table would destroy them)",
            ),
            NoEvidence::ResourcePolicyNotRead => f.write_str("its resource-based policy was not read this run"),
            NoEvidence::ForeignKinesisDestination => f.write_str(
                "someone else's Kinesis data stream destination feeds from it (deleting the table would end their change feed)",
            ),
            NoEvidence::DestinationsNotRead => f.write_str("its Kinesis data stream destinations were not read this run"),
            NoEvidence::ForeignEventSourceMapping => f.write_str(
                "someone else's Lambda event source mapping reads its stream (deleting the table would end their consumer's feed)",
            ),
            NoEvidence::MappingsNotRead => f.write_str("the event source mappings on its stream were not read this run"),
            NoEvidence::RepointedEventSourceMapping => f.write_str(
                "our event source mapping on its stream now invokes another function than the policy's consumer (someone re-pointed it; deleting the table would end that function's feed)",
            ),
            NoEvidence::LedgerNotSound => f.write_str(
                "the family's ledger cannot be rested on (missing, never started, or holding records this version cannot read): nothing is deleted until it is put right",
            ),
        }
    }
}

/// Computes verdicts for one policy, on what its ledger records.
pub(crate) struct Judge<'a> {
    policy: &'a Policy,
    naming: TableNaming,
    book: &'a Book,
}

impl<'a> Judge<'a> {
    pub(crate) fn new(policy: &'a Policy, book: &'a Book) -> Judge<'a> {
        Judge {
            policy,
            naming: policy.naming(),
            book,
        }
    }

    /// The verdict on `table`; `None` when its name does not start with `{prefix}_` (not ours
    /// to mention).
    pub(crate) fn verdict(&self, table: &ObservedTable) -> Option<Verdict> {
        let by_name = self.naming.classify(&table.name);
        if by_name == Ownership::Unrelated {
            return None;
        }
        let seen = Seen {
            tags: reading(table.tags.is_some(), table.tags_unsupported),
            scaling: reading(table.scaling.is_some(), table.scaling_unsupported),
            resource_policy: reading(table.resource_policy.is_some(), table.resource_policy_unsupported),
            destinations: reading(table.destinations.is_some(), table.destinations_unsupported),
            mappings: reading(table.mappings.is_some(), table.mappings_unsupported),
        };
        let owner = self.owner(table, by_name);
        let (foreign, our_targets) = self.parts(table);
        let not_deletable = self.deletion(table, &owner, &foreign, seen);
        Some(Verdict {
            owner,
            foreign,
            our_targets,
            not_deletable,
            seen,
            stream: self.stream_state(table, seen.destinations),
            consumer: self.consumer_state(table, seen.mappings),
        })
    }

    fn owner(&self, table: &ObservedTable, by_name: Ownership) -> Owner {
        let not_ours = |why| Owner::NotOurs { why };
        let name_slot = match by_name {
            Ownership::Owned(slot) => Some(slot),
            _ => None,
        };
        let Some(entry) = self.book.table(&table.name) else {
            // Nobody recorded it: not ours, and its marks say whose it may be instead.
            let disowned = table
                .tags
                .as_ref()
                .and_then(|tags| disowned_by_tags(self.naming.prefix(), tags));
            return not_ours(match (disowned, &table.key, name_slot) {
                (Some(why), _, _) => why,
                (None, Some(have), Some(_)) if *have != self.policy.key => {
                    NotOurs::LookAlike { have: have.clone() }
                }
                (None, _, Some(_)) => NotOurs::NotRecorded,
                (None, _, None) => NotOurs::UnknownName,
            });
        };
        let record = &entry.record;
        let observed = table.identity();
        let by = match (&record.state, &observed) {
            (TableState::Made { identity }, Some(observed)) if identity.is(observed) => match record.origin {
                Origin::Created => OwnedBy::Created,
                Origin::Adopted { .. } => OwnedBy::Adopted,
                Origin::Enrolled { .. } => OwnedBy::Enrolled,
                Origin::Restored { .. } => OwnedBy::Restored,
            },
            (TableState::Made { identity }, _) => {
                return not_ours(NotOurs::MadeAgain {
                    recorded: identity.created,
                    created: observed.map(|o| o.created),
                })
            }
            // Our run wrote the intent just before its CreateTable and did not live to record
            // the outcome: the table of this name and key created since, carrying our family
            // tag (our CreateTable always writes it), is the one it made; one someone else made
            // in between without the tag is theirs. Only a run's CreateTable: a restore's intent
            // is resolved by a restore, which checks the import's counts first.
            (TableState::Intended { at }, Some(observed))
                if record.origin == Origin::Created
                    && observed.created >= *at - INTENT_SKEW
                    && table.key.as_ref() == Some(&record.key)
                    && self.made_with_family_tag(table) =>
            {
                OwnedBy::Intent
            }
            (TableState::Intended { .. }, _) => return not_ours(NotOurs::NotRecorded),
        };
        // Aged by the period recorded when it was made; a name that says later keeps it
        // younger (an edited record never makes a table older than its name says).
        let Some(slot) = slot_of(self.naming.calendar(), &record.period).max(name_slot) else {
            return not_ours(NotOurs::UnknownName);
        };
        Owner::Ours {
            slot,
            period: record.period,
            by,
        }
    }

    /// Whether the table carries our family tag, as our CreateTable writes it: its tags read and
    /// holding it, or an endpoint without tags (DynamoDB Local: its name, key and creation time
    /// are all there is). Tags not read: not yet (a run reads them for a table with an intent).
    fn made_with_family_tag(&self, table: &ObservedTable) -> bool {
        match &table.tags {
            Some(tags) => tags.get(TAG_FAMILY) == Some(&self.policy.prefix),
            None => table.tags_unsupported,
        }
    }

    /// The foreign parts of the table, and our own scalable targets on it.
    fn parts(&self, table: &ObservedTable) -> (Vec<ForeignPart>, Vec<ScalableKey>) {
        let mut foreign = Vec::new();
        for index in &table.global_indexes {
            let why = match self.policy.indexes.iter().find(|want| want.name == index.name) {
                None => Some("not in the policy".to_string()),
                Some(want) => match (&index.key, &index.projection) {
                    (Some(key), _) if *key != want.key => {
                        Some(format!("its key is {key}, the policy's is {}", want.key))
                    }
                    (None, _) => Some("DescribeTable did not give its key".into()),
                    (_, Some(projection)) if !same_projection(projection, &want.projection) => Some(format!(
                        "it projects {projection}, the policy's projects {}",
                        want.projection
                    )),
                    (_, None) => Some("DescribeTable did not give its projection".into()),
                    _ => None,
                },
            };
            if let Some(why) = why {
                foreign.push(ForeignPart::Index {
                    name: index.name.clone(),
                    why,
                });
            }
        }
        let mut ours = Vec::new();
        let recorded = self
            .book
            .table(&table.name)
            .map(|entry| entry.record.scaling_policies.as_slice())
            .unwrap_or_default();
        for target in table.scaling.iter().flatten() {
            match judge_target(&self.policy.prefix, target, recorded) {
                None => ours.push(target.key.clone()),
                Some(part) => foreign.push(part),
            }
        }
        if table.deletion_protection && self.policy.template.deletion_protection != Some(true) {
            foreign.push(ForeignPart::DeletionProtection);
        }
        if let Some(policy) = &table.resource_policy {
            let statements = policy.foreign_statements();
            if !statements.is_empty() {
                foreign.push(ForeignPart::ResourcePolicy { statements });
            }
        }
        let feeds = self.feeds(table);
        for destination in table.destinations.iter().flatten() {
            if destination.status.holds() && !feeds.destination(destination) {
                foreign.push(ForeignPart::KinesisDestination {
                    stream_arn: destination.stream_arn.clone(),
                    status: destination.status.as_str().to_string(),
                });
            }
        }
        for mapping in table.mappings.iter().flatten() {
            if mapping.state.stays() && !feeds.mapping(mapping) {
                foreign.push(ForeignPart::EventSourceMapping {
                    uuid: mapping.uuid.clone(),
                    function_arn: mapping.function_arn.clone(),
                    state: mapping.state.as_str().to_string(),
                });
            }
        }
        (foreign, ours)
    }

    /// What the ledger records of `table`'s feeds, with the policy that judges them.
    fn feeds(&self, table: &ObservedTable) -> OurFeeds<'_> {
        OurFeeds {
            policy: self.policy,
            recorded: self
                .book
                .table(&table.name)
                .and_then(|entry| entry.record.feeds.as_ref()),
        }
    }

    /// The family's destination on `table`, when the policy names a stream: the one to that
    /// stream that holds the table, else the latest one listed (ENABLE_FAILED or DISABLED).
    fn stream_state(&self, table: &ObservedTable, read: Reading) -> Option<StreamState> {
        let wanted = self.policy.stream.kinesis.as_ref()?;
        let destinations = match read {
            Reading::NotRead => return Some(StreamState::NotRead),
            Reading::Unsupported => return Some(StreamState::Unsupported),
            Reading::Read => table.destinations.as_deref().unwrap_or_default(),
        };
        let ours: Vec<&ObservedDestination> = destinations.iter().filter(|d| d.is_to(wanted)).collect();
        let chosen = ours.iter().find(|d| d.status.holds()).or(ours.last());
        Some(match chosen {
            Some(d) if d.status != DestinationStatus::Disabled => StreamState::Ours {
                status: d.status.clone(),
                description: d.description.clone(),
            },
            _ => StreamState::Absent,
        })
    }

    /// The family's mapping on `table`'s latest stream, when the policy names a consumer
    /// function: the one of that function that is not being deleted (on a stream that is off
    /// too: it reads nothing, but it is ours to remove).
    fn consumer_state(&self, table: &ObservedTable, read: Reading) -> Option<ConsumerState> {
        let consumer = self.policy.stream.lambda.as_ref()?;
        let mappings = match read {
            Reading::NotRead => return Some(ConsumerState::NotRead),
            Reading::Unsupported => return Some(ConsumerState::Unsupported),
            Reading::Read => table.mappings.as_deref().unwrap_or_default(),
        };
        let feeds = self.feeds(table);
        let ours = |m: &&ObservedMapping| m.state.stays() && feeds.mapping(m);
        let to_consumer = mappings.iter().filter(ours).find(|m| m.is_to(consumer));
        let repointed = mappings.iter().find(ours);
        Some(match (to_consumer, repointed) {
            (Some(m), _) => ConsumerState::Ours {
                uuid: m.uuid.clone(),
                state: m.state.clone(),
                reason: m.reason.clone().or_else(|| m.last_result.clone()),
            },
            (None, Some(m)) => ConsumerState::Repointed {
                uuid: m.uuid.clone(),
                function_arn: m.function_arn.clone(),
                state: m.state.clone(),
            },
            (None, None) => ConsumerState::Absent,
        })
    }

    /// Every piece of positive evidence retention needs and the table lacks.
    fn deletion(
        &self,
        table: &ObservedTable,
        owner: &Owner,
        foreign: &[ForeignPart],
        seen: Seen,
    ) -> Vec<NoEvidence> {
        let Owner::Ours { by, .. } = owner else {
            return vec![NoEvidence::NotOurs];
        };
        let mut missing = Vec::new();
        // The ledger's identity, and never less than before it: our family tag too, where the
        // endpoint keeps tags (DynamoDB Local has none; there the ledger alone proves it).
        let family_tagged = table
            .tags
            .as_ref()
            .is_some_and(|tags| tags.get(TAG_FAMILY).is_some_and(|f| *f == self.policy.prefix));
        match seen.tags {
            Reading::NotRead => missing.push(NoEvidence::TagsNotRead),
            Reading::Read if !family_tagged => missing.push(NoEvidence::NoFamilyTag),
            Reading::Read | Reading::Unsupported => {}
        }
        // Never on less evidence than before: a ledger someone deleted, emptied or edited past
        // reading may have lost the very record (a receipt, a table's) that keeps this table.
        if !self.book.is_sound() {
            missing.push(NoEvidence::LedgerNotSound);
        }
        if *by == OwnedBy::Intent {
            // Recorded this run; deleted, if due, by a later one that reads the record back.
            missing.push(NoEvidence::NotRecordedYet);
        }
        if table.key.as_ref() != Some(&self.policy.key) {
            missing.push(NoEvidence::KeyDiffers {
                have: table.key.clone(),
            });
        }
        if !same_local_indexes(table, &self.policy.local_indexes) {
            missing.push(NoEvidence::LocalIndexesDiffer);
        }
        let any = |f: fn(&ForeignPart) -> bool| foreign.iter().any(f);
        if any(|part| matches!(part, ForeignPart::Index { .. })) {
            missing.push(NoEvidence::ForeignIndexes);
        }
        if any(|part| {
            matches!(
                part,
                ForeignPart::Target { .. } | ForeignPart::SharedTarget { .. }
            )
        }) {
            missing.push(NoEvidence::ForeignScaling);
        }
        if any(|part| matches!(part, ForeignPart::DeletionProtection)) {
            missing.push(NoEvidence::ForeignDeletionProtection);
        }
        if any(|part| matches!(part, ForeignPart::ResourcePolicy { .. })) {
            missing.push(NoEvidence::ForeignResourcePolicy);
        }
        if seen.scaling == Reading::NotRead {
            missing.push(NoEvidence::ScalingNotRead);
        }
        if seen.resource_policy == Reading::NotRead {
            missing.push(NoEvidence::ResourcePolicyNotRead);
        }
        if any(|part| matches!(part, ForeignPart::KinesisDestination { .. })) {
            missing.push(NoEvidence::ForeignKinesisDestination);
        }
        if seen.destinations == Reading::NotRead {
            missing.push(NoEvidence::DestinationsNotRead);
        }
        if any(|part| matches!(part, ForeignPart::EventSourceMapping { .. })) {
            missing.push(NoEvidence::ForeignEventSourceMapping);
        }
        if seen.mappings == Reading::NotRead {
            missing.push(NoEvidence::MappingsNotRead);
        }
        let feeds = self.feeds(table);
        let repointed = |m: &ObservedMapping| {
            m.state.stays()
                && feeds.mapping(m)
                && !self.policy.stream.lambda.as_ref().is_some_and(|c| m.is_to(c))
        };
        if table.mappings.iter().flatten().any(repointed) {
            missing.push(NoEvidence::RepointedEventSourceMapping);
        }
        missing
    }
}

/// What a table's tags say of whose it is when the ledger does not record it: restore's
/// short-import marker, or a family tag naming another family.
pub(crate) fn disowned_by_tags(prefix: &str, tags: &BTreeMap<String, String>) -> Option<NotOurs> {
    if let Some(why) = tags.get(TAG_SHORT_IMPORT) {
        return Some(NotOurs::ShortImport { why: why.clone() });
    }
    tags.get(TAG_FAMILY)
        .filter(|family| *family != prefix)
        .map(|family| NotOurs::OtherFamily {
            family: family.clone(),
        })
}

fn reading(read: bool, unsupported: bool) -> Reading {
    match (read, unsupported) {
        (true, _) => Reading::Read,
        (false, true) => Reading::Unsupported,
        (false, false) => Reading::NotRead,
    }
}

/// Projections compare as sets of attributes: DynamoDB does not promise their order.
fn same_projection(have: &Projection, want: &Projection) -> bool {
    match (have, want) {
        (Projection::Include(have), Projection::Include(want)) => {
            have.iter().collect::<BTreeSet<_>>() == want.iter().collect::<BTreeSet<_>>()
        }
        _ => have == want,
    }
}

/// Whether the table's local secondary indexes are exactly the policy's (name, key, projection).
pub(crate) fn same_local_indexes(table: &ObservedTable, want: &[LocalIndex]) -> bool {
    table.local_indexes.len() == want.len()
        && want.iter().all(|want| {
            table.local_indexes.iter().any(|have| {
                have.name == want.name
                    && have.key.as_ref().and_then(|k| k.sort.as_ref()) == Some(&want.sort)
                    && have
                        .projection
                        .as_ref()
                        .is_some_and(|p| same_projection(p, &want.projection))
            })
        })
}

#[cfg(test)]
mod tests;
