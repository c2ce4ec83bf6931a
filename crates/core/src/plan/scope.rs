//! Which tables a run looks at, and what it reads of each: decided here, by the planner, so a
//! run over thousands of tables stays at the floor of calls (AWS limits the tag APIs to a few
//! calls a second per account) and reads everything its decisions need.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{plan_run, Seen};
use crate::ledger::Book;
use crate::plan::context::premake_slots;
use crate::plan::decision::{Decision, Operation};
use crate::plan::deferral::DeferralCause;
use crate::plan::upkeep::turns_stream_off;
use crate::policy::naming::Ownership;
use crate::policy::Policy;
use crate::table::ObservedTable;

/// How much a run reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// What one run of the operation at this instant needs, and no more (the floor of calls):
    /// create_new describes only the current and pre-built tables; resize_old describes the
    /// names that are period labels and never describes a foreign name. Tags, TTL,
    /// point-in-time recovery and exports are read only for the tables whose decision needs
    /// them this run (`reads_needed`).
    Run(Operation, DateTime<Utc>),
    /// Everything about every table under the prefix at this instant: `status` and `plan`, an
    /// operator's view (another family's tables are named as such only here, from their tags).
    Full(DateTime<Utc>),
}

/// The names to describe, and the ones only listed (never described: foreign names, and for
/// create_new every table but its own).
pub(crate) fn names_to_describe(
    policy: &Policy,
    scope: Scope,
    names: Vec<String>,
) -> (Vec<String>, Vec<String>) {
    let naming = policy.naming();
    match scope {
        Scope::Full(_) => (names, Vec::new()),
        Scope::Run(Operation::CreateNew, now) => {
            let targets = target_names(policy, now);
            names.into_iter().partition(|name| targets.contains(name))
        }
        // A name that is a label of some period may be ours (by name, or by our tags when made
        // under another period setting); any other name never is.
        Scope::Run(Operation::ResizeOld, _) => names.into_iter().partition(|name| {
            matches!(naming.classify(name), Ownership::Owned(_)) || naming.is_label_of_any_period(name)
        }),
    }
}

/// The extra reads each described table needs in `scope`.
pub(crate) fn reads_for(
    policy: &Policy,
    scope: Scope,
    described: &[ObservedTable],
    book: &Book,
) -> BTreeMap<String, Reads> {
    match scope {
        Scope::Full(_) => described
            .iter()
            .map(|t| {
                let reads = Reads::everything(policy);
                let mappings = reads.mappings || turns_stream_off(policy, t);
                (t.name.clone(), Reads { mappings, ..reads })
            })
            .collect(),
        Scope::Run(operation, now) => reads_needed(policy, now, described, book, operation),
    }
}

/// The reads besides DescribeTable a table's decision needs in one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reads {
    /// The table's tags (ListTagsOfResource).
    pub tags: bool,
    /// The table's TTL (DescribeTimeToLive).
    pub ttl: bool,
    /// Whether point-in-time recovery is on (DescribeContinuousBackups).
    pub point_in_time_recovery: bool,
    /// The scalable targets (and their policies) on the table and its indexes. Read with one
    /// set of calls for every described table of the run when any table needs them.
    pub scaling: bool,
    /// The archive's proof in S3 (an archived table of ours due for deletion).
    pub archive_proof: bool,
    /// The resource-based policy (a table of ours due for deletion: someone else's
    /// statements keep it, and the seal goes in it when archiving).
    pub resource_policy: bool,
    /// The Kinesis data stream destinations (create_new's tables when the policy names a
    /// stream; a table due for deletion, whose foreign destination keeps it).
    pub destinations: bool,
    /// The Lambda event source mappings on the table's stream (create_new's tables when the
    /// policy names a consumer function; a table due for deletion, whose foreign mapping
    /// keeps it).
    pub mappings: bool,
}

impl Reads {
    /// Everything the policy uses: the operator's full view (`status`, `plan`).
    pub(crate) fn everything(policy: &Policy) -> Reads {
        Reads {
            tags: true,
            ttl: policy.template.ttl_attribute.is_some(),
            point_in_time_recovery: policy.wants_point_in_time_recovery(),
            scaling: true,
            archive_proof: policy.archive().is_some()
                && policy
                    .retention
                    .as_ref()
                    .is_some_and(|r| r.delete_after.is_some()),
            resource_policy: policy.deletes(),
            destinations: policy.stream.kinesis.is_some() || policy.deletes(),
            mappings: policy.stream.lambda.is_some() || policy.deletes(),
        }
    }

    /// What `adopt` reads of each table it is asked to vouch for: everything the policy uses,
    /// and the change feeds on it whatever the policy says of streams (someone else's Kinesis
    /// destination or event source mapping stays theirs after adoption, and keeps the table
    /// from retention: adopt names it, as it names every other foreign part).
    pub(crate) fn adoption(policy: &Policy) -> Reads {
        Reads {
            destinations: true,
            mappings: true,
            ..Reads::everything(policy)
        }
    }

    /// The template settings that have their own read (template tags, TTL, point-in-time
    /// recovery), checked on a table that this run looks after anyway.
    fn upkeep(policy: &Policy) -> Reads {
        Reads {
            tags: !policy.template.tags.is_empty(),
            scaling: false,
            archive_proof: false,
            resource_policy: false,
            destinations: false,
            mappings: false,
            ..Reads::everything(policy)
        }
    }

    /// The current and pre-built tables: upkeep, and their tags always, so their verdict
    /// rests on the family tag (a table of another family holding the name fails the run).
    fn target(policy: &Policy) -> Reads {
        Reads {
            tags: true,
            ..Reads::upkeep(policy)
        }
    }

    fn or(self, other: Reads) -> Reads {
        Reads {
            tags: self.tags || other.tags,
            ttl: self.ttl || other.ttl,
            point_in_time_recovery: self.point_in_time_recovery || other.point_in_time_recovery,
            scaling: self.scaling || other.scaling,
            archive_proof: self.archive_proof || other.archive_proof,
            resource_policy: self.resource_policy || other.resource_policy,
            destinations: self.destinations || other.destinations,
            mappings: self.mappings || other.mappings,
        }
    }
}

/// The names of the current and pre-built periods' tables at `now`: create_new's tables.
pub(crate) fn target_names(policy: &Policy, now: DateTime<Utc>) -> Vec<String> {
    let naming = policy.naming();
    premake_slots(policy, naming.calendar().floor(now))
        .into_iter()
        .map(|slot| naming.table_name(slot))
        .collect()
}

/// Which described tables need which extra reads for `operation` at `now`, decided from what
/// DescribeTable told (a first plan without them), so a steady-state run stays at the floor
/// of calls. Reads are needed by:
/// - the current and pre-built tables (create_new's, and resize_old's too), whoever a first
///   plan says they are: their tags, so the verdict on the tables writers use rests on the
///   family tag; and template upkeep (TTL, point-in-time recovery);
/// - a table resize_old changes this run: the same upkeep, once per phase change;
/// - a capacity change (a first plan defers it for want of them): the scalable targets, whose
///   owners decide which throughput is ours to change;
/// - a table past `archive_after`: its tags (the export and archived tags) and point-in-time
///   recovery; past `delete_after`: its tags, scalable targets, resource-based policy and
///   Kinesis destinations and event source mappings (the evidence a deletion needs: our family
///   tag, nothing foreign on it);
/// - create_new's tables, when the policy names a stream: their Kinesis destinations; when it
///   names a consumer function: the mappings on their streams;
/// - a name from another period setting: its tags (only our family and period tags make it
///   ours);
/// - a table the ledger holds only an intent for (a run crashed after its CreateTable):
///   everything, as the table of ours it is once its family tag resolves the intent;
/// - a table the ledger records our seal on: its tags and resource-based policy (a seal is
///   lifted when the table stops being due for deletion, `[retention]` removed included);
/// - a table whose stream the template turns off (off, or a view change): the event source
///   mappings on its stream, since someone else's keeps it on.
///
/// Our own tags on tables made before they existed are restored when a table's tags are read
/// anyway: they are a convenience, not worth a rate-limited call per table per run.
pub(crate) fn reads_needed(
    policy: &Policy,
    now: DateTime<Utc>,
    described: &[ObservedTable],
    book: &Book,
    operation: Operation,
) -> BTreeMap<String, Reads> {
    let naming = policy.naming();
    let upkeep = Reads::upkeep(policy);
    // create_new keeps its tables streaming into the family's stream.
    let target = Reads {
        destinations: operation == Operation::CreateNew && policy.stream.kinesis.is_some(),
        mappings: operation == Operation::CreateNew && policy.stream.lambda.is_some(),
        ..Reads::target(policy)
    };
    let seen = Seen {
        tables: described,
        listed_only: &[],
        vacant_targets: &[],
        book,
    };
    let first = plan_run(policy, now, &seen, operation);
    let mut reads: BTreeMap<String, Reads> = BTreeMap::new();
    let mut need = |table: &str, wanted: Reads| {
        let entry = reads.entry(table.to_string()).or_default();
        *entry = entry.or(wanted);
    };
    let only = |read: fn(&mut Reads)| {
        let mut reads = Reads::default();
        read(&mut reads);
        reads
    };
    let retention = policy.retention.as_ref();
    for item in &first.items {
        let exists = item.facts.status.is_some();
        // A capacity change waiting for the scalable targets: the final plan makes it.
        let awaits_scaling = matches!(
            item.decision,
            Decision::Deferred {
                cause: DeferralCause::ScalingNotRead,
                ..
            }
        );
        if awaits_scaling {
            need(&item.facts.table, only(|r| r.scaling = true));
        }
        match (operation, item.facts.age) {
            (_, Some(age)) if age <= 0 && exists => need(&item.facts.table, target),
            (Operation::ResizeOld, Some(age)) => {
                if item.decision.updates_table() || awaits_scaling {
                    need(&item.facts.table, upkeep);
                }
                if policy.archive().is_some_and(|a| age >= i64::from(a.after)) {
                    need(
                        &item.facts.table,
                        only(|r| {
                            r.tags = true;
                            r.point_in_time_recovery = true;
                        }),
                    );
                }
                if retention
                    .and_then(|r| r.delete_after)
                    .is_some_and(|after| age >= i64::from(after))
                {
                    need(
                        &item.facts.table,
                        only(|r| {
                            r.tags = true;
                            r.scaling = true;
                            r.archive_proof = true;
                            r.resource_policy = true;
                            r.destinations = true;
                            r.mappings = true;
                        }),
                    );
                }
            }
            _ => {}
        }
    }
    // Every table holding a target name, whatever a first plan made of it without its tags
    // (a table keyed otherwise is a look-alike until its family tag is read).
    for name in target_names(policy, now) {
        if described.iter().any(|t| t.name == name) {
            need(&name, target);
        }
    }
    for table in described {
        if matches!(naming.classify(&table.name), Ownership::Foreign) {
            need(&table.name, only(|r| r.tags = true));
        }
        // A stream the template turns off may feed someone else's consumer, which vetoes it.
        // (Upkeep reaches every described table of ours: only during the template's change.)
        if turns_stream_off(policy, table) {
            need(&table.name, only(|r| r.mappings = true));
        }
        // An intent a crashed run left resolves only to a table carrying our family tag; once
        // resolved, the table is ours this run, so it is read as a table of ours is (rare: a
        // crash between CreateTable and its record).
        let intended = book
            .table(&table.name)
            .is_some_and(|entry| entry.record.identity().is_none());
        if intended {
            need(&table.name, Reads::everything(policy));
        }
        // A table the ledger says we sealed: its resource-based policy, so the seal is lifted
        // once it is no longer due for deletion, retention called off included.
        if book
            .table(&table.name)
            .is_some_and(|entry| entry.record.seal.is_some())
        {
            need(
                &table.name,
                only(|r| {
                    r.tags = true;
                    r.resource_policy = true;
                }),
            );
        }
    }
    reads
}
