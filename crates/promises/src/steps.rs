//! The steps of a case: the foreign acts ([`Act`]), the runs of ours ([`Step`]), how slow
//! AWS is ([`Slowness`]), and the [`Case`] that strings them together.

use std::fmt;

use chrono::{DateTime, Duration, TimeZone, Utc};
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::{Operation, Policy};
use fake_aws::Config;
use proptest::prelude::*;

use crate::knobs::Knobs;
use crate::names::PREFIX;
use crate::policies::{policy_strategy, PolicySpec};

#[derive(Clone, Debug)]
/// How a hand-made table is named.
pub enum NameKind {
    /// `ts_{label}` of the period `at` periods from the current one.
    Exact,
    /// `ts_{label}_old`: under the prefix, not a label.
    Suffixed,
    /// `ts_eu_{label}`, untagged: looks like the nested family's.
    Nested,
}

#[derive(Clone, Debug)]
/// Which global index a hand-made table has.
pub enum GsiKind {
    /// None.
    None,
    /// The policy's index exactly (when the policy has one).
    Policy,
    /// The policy's index name on another key.
    SameNameOtherKey,
    /// An index the policy does not name.
    Extra,
}

#[derive(Clone, Debug)]
/// Which tags a hand-made table has.
pub enum TagKind {
    /// None.
    None,
    /// A tag of the user's own.
    User,
    /// Another family's tag.
    OtherFamily,
}

#[derive(Clone, Debug)]
/// A foreign act: what people, other tools, other families and the operator do between our runs.
pub enum Act {
    /// A hand-made table.
    HandMade {
        /// Which period, relative to the current one.
        at: i32,
        /// How the table is named.
        name: NameKind,
        /// Whether it has the policy's key.
        our_key: bool,
        /// Its global index.
        gsi: GsiKind,
        /// Whether it has the policy's local index.
        lsi: bool,
        /// Its tags.
        tags: TagKind,
        /// Whether it is on demand (else provisioned).
        on_demand: bool,
    },
    /// Someone restores one of our past tables from a backup (or a version before the family
    /// tag made it): `{prefix}_{label}` `ago` periods back, the policy's key and indexes, no
    /// tags. Claimable by name; only `adopt` makes it provably ours.
    Restored {
        /// How many periods back.
        ago: u32,
        /// Whether it is on demand (else provisioned).
        on_demand: bool,
    },
    /// The nested family's own run (the real engine, with the same policy under `ts_eu`).
    Sibling(Operation),
    /// Another family's tag on one of our tables.
    TagOtherFamily {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Our family tag removed from one of our tables.
    UntagFamily {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone sets one of our tables' capacity.
    Capacity {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// The (read, write) capacity set (`None`: on demand).
        to: Option<(i64, i64)>,
    },
    /// Someone deletes one of our tables.
    Delete {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone deletes our newest table (the furthest pre-built one).
    DeleteNewest,
    /// Someone registers a scalable target on one of our tables (or its index), with or without
    /// their own target-tracking policy.
    Target {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether it acts on the table's first index rather than the table.
        index: bool,
        /// Whether on the read dimension (else the write one).
        read: bool,
        /// Whether they also put a target-tracking policy of their own.
        policy: bool,
    },
    /// Someone attaches a step-scaling policy to one of OUR scalable targets.
    StepPolicy {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone adds an index to one of our tables.
    AddIndex {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether the index is named like the policy's (on another key).
        like_policy: bool,
    },
    /// Someone removes the scaling of one of OUR scalable targets: deregisters it (every policy
    /// goes with it) or deletes our policy from it (the target stays, no longer ours).
    DropScaling {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether the target is deregistered (else our policy deleted).
        deregister: bool,
    },
    /// Someone lowers one of our tables' provisioned capacity (or one of its indexes') by one
    /// unit five times, waiting for ACTIVE in between: the day's decrease budget is spent.
    SpendDecreases {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether it acts on the table's first index rather than the table.
        index: bool,
    },
    /// The operator runs the real `adopt` on a table under our prefix that our runs did not
    /// make: one claimable by name (`{prefix}_{label}`, our key, no family tag) when
    /// `claimable` and there is one, else any.
    Adopt {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether a table claimable by name is preferred.
        claimable: bool,
    },
    /// Someone pre-warms one of our tables (or its first index): above anything a policy asks
    /// (`high`; no run may then try to lower it), or to less than some phases ask (a run raises
    /// it further, once this raise is no longer UPDATING).
    PreWarm {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether it acts on the table's first index rather than the table.
        index: bool,
        /// Whether above anything a policy asks.
        high: bool,
    },
    /// The application writes `n` new items to one of our tables, whatever its age (refused
    /// while a resource-based policy denies item writes).
    WriteItems {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// How many items.
        n: usize,
    },
    /// Someone else's resource-based policy on one of our tables: put over whatever is there
    /// (`pick % 4 == 0`, our seal gone with it), added beside the statements there (1), the
    /// policy deleted (2), or put over with an Allow under our seal's Sid (3).
    ResourcePolicy {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone rewrites one of our tables' period tags to a period years back.
    TagPeriod {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone disables one of our tables' KMS key (KMS DisableKey, or revokes DynamoDB's
    /// grant): INACCESSIBLE_ENCRYPTION_CREDENTIALS, archived by DynamoDB seven days later. A
    /// current or pre-built table so lost takes no writes: create_new must fail.
    DisableKey {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone puts a scheduled action on a scalable target of one of our tables (or its first
    /// index), registering the target first when none is there (PutScheduledAction needs one),
    /// or, with `delete`, deletes the scheduled actions on it.
    ScheduledAction {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether it acts on the table's first index rather than the table.
        index: bool,
        /// Whether on the read dimension (else the write one).
        read: bool,
        /// Whether the scheduled actions are deleted (else one put).
        delete: bool,
    },
    /// Someone turns deletion protection on for one of our tables.
    DeletionProtection {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone enables a Kinesis destination into their own stream on one of our tables: a
    /// stream they made ([`FOREIGN_STREAM`]), or one nobody made ([`MISSING_STREAM`], which
    /// ends ENABLE_FAILED). Refused while the table holds a destination.
    ForeignDestination {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether into a stream they made (else one nobody made).
        stream_exists: bool,
    },
    /// Someone disables one of our tables' destination into the family's stream (when the
    /// policy names one).
    DisableDestination {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone updates the precision of one of our tables' destination into the family's
    /// stream to the other precision (UpdateKinesisStreamingDestination).
    DestinationPrecision {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone deletes the family's Kinesis data stream (when the policy names one): its
    /// destinations keep their status, and their records are lost.
    DeleteFamilyStream,
    /// Someone maps their own function ([`FOREIGN_CONSUMER`]), or with `our_function` the
    /// family's consumer (when the policy names one; Lambda refuses while ours is there), to one
    /// of our tables' latest stream: a foreign mapping either way (the function's name is not
    /// proof), never deleted by a run, and it keeps the table.
    ForeignMapping {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether the function mapped is the family's consumer.
        our_function: bool,
    },
    /// Someone deletes our mapping (of the policy's consumer) on one of our tables' stream.
    DeleteMapping {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone disables our mapping on one of our tables' stream (pausing the consumer).
    DisableMapping {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
    /// Someone deletes the family's consumer function (when the policy names one).
    DeleteConsumer,
    /// Someone acts on one of the completed exports of our tables in the archive bucket: its
    /// first data file overwritten, deleted or moved to GLACIER (CopyObject), another table's
    /// export placed under its prefix, its file list pointed outside its `data/`, a lifecycle
    /// Expiration rule put on the archive prefix, or the bucket's name taken by another account.
    Archive {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// What is done to it.
        act: ArchiveAct,
    },
    /// Someone with rights on the family's ledger deletes one of its records (DeleteItem).
    LedgerDelete {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Which kind of record.
        record: RecordKind,
    },
    /// Someone with rights on the family's ledger rewrites one of its records (PutItem over it,
    /// keeping its version, so no conditional write of a run notices).
    LedgerEdit {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// How it is rewritten.
        edit: RecordEdit,
    },
    /// Someone lifts the ledger table's deletion protection (UpdateTable; DynamoDB refuses
    /// DeleteTable while it is on), waits for it, and deletes the table; with `recreate`, makes
    /// an empty table of its name again once it is gone.
    DeleteLedger {
        /// Whether an empty table of its name is made again.
        recreate: bool,
    },
    /// A run of ours crashed holding its operation's lease (`lease#{operation}`): until a time
    /// ahead of the clock, or one already lapsed.
    CrashedLease {
        /// The operation whose lease it held.
        operation: Operation,
        /// Whether the lease has already lapsed.
        lapsed: bool,
    },
    /// A run of ours crashed between its intent and its outcome ([`IntentLeft`]).
    CrashedIntent {
        /// Which period, relative to the current one.
        at: i32,
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// What the crash left.
        left: IntentLeft,
    },
    /// Someone deletes one of our tables and, once it is gone, makes one of its name with the
    /// policy's key (and our family tag when `family_tag`).
    Recreate {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether the new table carries our family tag.
        family_tag: bool,
    },
    /// Someone registers a scalable target on a dimension of one of our tables (or its first
    /// index) where none is, with a target-tracking policy named exactly like ours.
    NamedLikeOurs {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
        /// Whether it acts on the table's first index rather than the table.
        index: bool,
        /// Whether on the read dimension (else the write one).
        read: bool,
    },
    /// The operator runs the real `ddb-rollover init` (not a dry run).
    Init,
    /// The operator runs the real `ddb-rollover restore` of a period our retention deleted.
    Restore {
        /// Which of our tables (an index, modulo their count).
        pick: usize,
    },
}

impl Act {
    /// Whether the act is one of the ledger's (`ledger_acts`), which may break promise 9.
    pub fn is_ledger_act(&self) -> bool {
        matches!(
            self,
            Act::LedgerDelete { .. }
                | Act::LedgerEdit { .. }
                | Act::DeleteLedger { .. }
                | Act::CrashedLease { .. }
                | Act::CrashedIntent { .. }
                | Act::Recreate { .. }
                | Act::NamedLikeOurs { .. }
                | Act::Init
                | Act::Restore { .. }
        )
    }
}

/// Which ledger record [`Act::LedgerDelete`] deletes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// `table#NAME`: one of the tables' records.
    Table,
    /// `receipt#NAME#MILLIS`: one of the deletions' receipts.
    Receipt,
    /// `meta`: the ledger is no longer started.
    Meta,
    /// `lease#OPERATION`: a lease someone holds.
    Lease,
}

/// How [`Act::LedgerEdit`] rewrites a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordEdit {
    /// A table's record given the identity of the table now holding its name when that is
    /// another (one made again under the name), else of a table that never was.
    Identity,
    /// A table's recorded period moved years earlier.
    Earlier,
    /// Any record's body replaced by text that is no record.
    Unreadable,
}

/// What a crashed run left besides its intent for a period's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntentLeft {
    /// Nothing: it crashed before CreateTable (the intent names a period with no table).
    Nothing,
    /// Its table: it crashed after CreateTable (one of our tables' records is its intent again).
    OurTable,
    /// Nothing, and someone then made a table of that name with the policy's key (and our
    /// family tag when `true`).
    TheirTable(bool),
}

/// What [`Act::Archive`] does to an export in S3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveAct {
    /// PutObject over the first data file.
    Overwrite,
    /// DeleteObject of the first data file.
    Delete,
    /// The first data file copied onto itself into GLACIER.
    Glacier,
    /// Another table's export placed under its prefix.
    ForeignExport,
    /// Its file list pointed outside its `data/`.
    RepointFileList,
    /// PutBucketLifecycleConfiguration: an Enabled rule expiring everything under the archive
    /// prefix (the folder holding the export's table folder) after 30 days.
    ExpireRule,
    /// The bucket's owner deletes it and another account makes one of the same name, copying
    /// every object back as it was.
    NewOwner,
}

/// What [`Act::PreWarm`] raises a table or index to: above every phase's warm throughput, or
/// above DynamoDB's on-demand defaults but below some phases'.
pub fn pre_warmed(high: bool) -> WarmThroughput {
    if high {
        WarmThroughput {
            read: 50_000,
            write: 35_000,
        }
    } else {
        WarmThroughput {
            read: 20_000,
            write: 8_000,
        }
    }
}

#[derive(Clone, Debug)]
/// One step of a case: the clock moves, our runs, foreign acts.
pub enum Step {
    /// The clock to 15 minutes before the `periods`-th boundary ahead (create_new's schedule).
    Before {
        /// How many boundaries ahead.
        periods: u32,
    },
    /// The clock to 15 minutes after the `periods`-th boundary ahead (resize_old's schedule),
    /// plus the policy's grace when `past_grace`.
    After {
        /// How many boundaries ahead.
        periods: u32,
        /// Whether the policy's grace is added.
        past_grace: bool,
    },
    /// A few seconds: transitions in flight.
    Wait {
        /// How many seconds.
        seconds: i64,
    },
    /// create_new at the clock.
    CreateNew,
    /// resize_old at the clock.
    ResizeOld,
    /// `cycles` times: Before 1, CreateNew, After 1 past the grace, ResizeOld.
    Schedule {
        /// How many cycles.
        cycles: u32,
    },
    /// A foreign act.
    Foreign(Act),
    /// create_new for an instant `behind` periods before the clock, checked against the clock
    /// as the wall: a late run (a retry, a replayed dead letter) or a past instant (`--at`).
    CreateNewAt {
        /// How many periods before the clock.
        behind: u32,
    },
    /// The operator changes the policy's time zone: our runs use it from then on.
    Zone {
        /// The new time zone.
        timezone: &'static str,
    },
}

/// A random foreign act, within the knobs.
pub fn act_strategy(k: &Knobs) -> impl Strategy<Value = Act> {
    let hand_made = (
        -4i32..=2,
        prop_oneof![3 => Just(NameKind::Exact), 1 => Just(NameKind::Suffixed), 1 => Just(NameKind::Nested)],
        prop::bool::weighted(0.7),
        prop_oneof![
            3 => Just(GsiKind::None),
            1 => Just(GsiKind::Policy),
            1 => Just(GsiKind::SameNameOtherKey),
            1 => Just(GsiKind::Extra)
        ],
        any::<bool>(),
        prop_oneof![2 => Just(TagKind::None), 1 => Just(TagKind::User), 1 => Just(TagKind::OtherFamily)],
        any::<bool>(),
    )
        .prop_map(|(at, name, our_key, gsi, lsi, tags, on_demand)| Act::HandMade {
            at,
            name,
            our_key,
            gsi,
            lsi,
            tags,
            on_demand,
        });
    let pick = || 0usize..8;
    // An act on one of the tables, named by its index and nothing else.
    let picked =
        |weight: u32, name: &'static str, act: fn(usize) -> Act| (weight, name, pick().prop_map(act).boxed());
    let options: Vec<(u32, &str, BoxedStrategy<Act>)> = vec![
        (4, "hand_made", hand_made.boxed()),
        (
            2,
            "restored",
            (1u32..=6, any::<bool>())
                .prop_map(|(ago, on_demand)| Act::Restored { ago, on_demand })
                .boxed(),
        ),
        (
            2,
            "sibling",
            prop_oneof![Just(Operation::CreateNew), Just(Operation::ResizeOld)]
                .prop_map(Act::Sibling)
                .boxed(),
        ),
        picked(1, "tag_other_family", |pick| Act::TagOtherFamily { pick }),
        picked(1, "untag_family", |pick| Act::UntagFamily { pick }),
        (
            1,
            "capacity",
            (
                pick(),
                prop::option::of(prop_oneof![Just((1i64, 1i64)), Just((500, 500)), Just((100, 1))]),
            )
                .prop_map(|(pick, to)| Act::Capacity { pick, to })
                .boxed(),
        ),
        picked(1, "delete", |pick| Act::Delete { pick }),
        (2, "delete_newest", Just(Act::DeleteNewest).boxed()),
        (
            2,
            "target",
            (pick(), any::<bool>(), any::<bool>(), any::<bool>())
                .prop_map(|(pick, index, read, policy)| Act::Target {
                    pick,
                    index,
                    read,
                    policy,
                })
                .boxed(),
        ),
        picked(2, "step_policy", |pick| Act::StepPolicy { pick }),
        picked(1, "add_index", |pick| Act::AddIndex {
            pick,
            like_policy: true,
        }),
        picked(1, "add_extra_index", |pick| Act::AddIndex {
            pick,
            like_policy: false,
        }),
        (
            2,
            "adopt",
            (pick(), prop::bool::weighted(0.7))
                .prop_map(|(pick, claimable)| Act::Adopt { pick, claimable })
                .boxed(),
        ),
        (
            1,
            "drop_scaling",
            (pick(), any::<bool>())
                .prop_map(|(pick, deregister)| Act::DropScaling { pick, deregister })
                .boxed(),
        ),
        (
            1,
            "spend_decreases",
            (pick(), any::<bool>())
                .prop_map(|(pick, index)| Act::SpendDecreases { pick, index })
                .boxed(),
        ),
        (
            1,
            "pre_warm",
            (pick(), any::<bool>(), any::<bool>())
                .prop_map(|(pick, index, high)| Act::PreWarm { pick, index, high })
                .boxed(),
        ),
        (
            3,
            "write_items",
            (pick(), 1usize..4)
                .prop_map(|(pick, n)| Act::WriteItems { pick, n })
                .boxed(),
        ),
        picked(1, "resource_policy", |pick| Act::ResourcePolicy { pick }),
        picked(1, "tag_period", |pick| Act::TagPeriod { pick }),
        picked(1, "disable_key", |pick| Act::DisableKey { pick }),
        (
            2,
            "scheduled_action",
            (pick(), any::<bool>(), any::<bool>(), prop::bool::weighted(0.2))
                .prop_map(|(pick, index, read, delete)| Act::ScheduledAction {
                    pick,
                    index,
                    read,
                    delete,
                })
                .boxed(),
        ),
        picked(2, "deletion_protection", |pick| Act::DeletionProtection { pick }),
        (
            1,
            "foreign_destination",
            (pick(), prop::bool::weighted(0.7))
                .prop_map(|(pick, stream_exists)| Act::ForeignDestination { pick, stream_exists })
                .boxed(),
        ),
        picked(1, "disable_destination", |pick| Act::DisableDestination { pick }),
        picked(1, "destination_precision", |pick| Act::DestinationPrecision {
            pick,
        }),
        (1, "delete_stream", Just(Act::DeleteFamilyStream).boxed()),
        (
            2,
            "foreign_mapping",
            (pick(), prop::bool::weighted(0.4))
                .prop_map(|(pick, our_function)| Act::ForeignMapping { pick, our_function })
                .boxed(),
        ),
        picked(1, "delete_mapping", |pick| Act::DeleteMapping { pick }),
        picked(1, "disable_mapping", |pick| Act::DisableMapping { pick }),
        (1, "delete_consumer", Just(Act::DeleteConsumer).boxed()),
        (
            2,
            "ledger_delete",
            (
                pick(),
                prop_oneof![
                    3 => Just(RecordKind::Table),
                    3 => Just(RecordKind::Receipt),
                    1 => Just(RecordKind::Meta),
                    1 => Just(RecordKind::Lease),
                ],
            )
                .prop_map(|(pick, record)| Act::LedgerDelete { pick, record })
                .boxed(),
        ),
        (
            2,
            "ledger_edit",
            (
                pick(),
                prop_oneof![
                    Just(RecordEdit::Identity),
                    Just(RecordEdit::Earlier),
                    Just(RecordEdit::Unreadable),
                ],
            )
                .prop_map(|(pick, edit)| Act::LedgerEdit { pick, edit })
                .boxed(),
        ),
        (
            1,
            "delete_ledger",
            prop::bool::weighted(0.3)
                .prop_map(|recreate| Act::DeleteLedger { recreate })
                .boxed(),
        ),
        (
            2,
            "crashed_lease",
            (
                prop_oneof![Just(Operation::CreateNew), Just(Operation::ResizeOld)],
                any::<bool>(),
            )
                .prop_map(|(operation, lapsed)| Act::CrashedLease { operation, lapsed })
                .boxed(),
        ),
        (
            2,
            "crashed_intent",
            (
                -2i32..=2,
                pick(),
                prop_oneof![
                    Just(IntentLeft::Nothing),
                    Just(IntentLeft::OurTable),
                    Just(IntentLeft::TheirTable(false)),
                    Just(IntentLeft::TheirTable(true)),
                ],
            )
                .prop_map(|(at, pick, left)| Act::CrashedIntent { at, pick, left })
                .boxed(),
        ),
        (
            2,
            "recreate",
            (pick(), any::<bool>())
                .prop_map(|(pick, family_tag)| Act::Recreate { pick, family_tag })
                .boxed(),
        ),
        (
            1,
            "named_like_ours",
            (pick(), any::<bool>(), any::<bool>())
                .prop_map(|(pick, index, read)| Act::NamedLikeOurs { pick, index, read })
                .boxed(),
        ),
        (1, "init", Just(Act::Init).boxed()),
        picked(2, "restore", |pick| Act::Restore { pick }),
        (
            2,
            "archive",
            (
                pick(),
                prop_oneof![
                    Just(ArchiveAct::Overwrite),
                    Just(ArchiveAct::Delete),
                    Just(ArchiveAct::Glacier),
                    Just(ArchiveAct::ForeignExport),
                    Just(ArchiveAct::RepointFileList),
                    Just(ArchiveAct::ExpireRule),
                    Just(ArchiveAct::NewOwner),
                ],
            )
                .prop_map(|(pick, act)| Act::Archive { pick, act })
                .boxed(),
        ),
    ];
    let options: Vec<(u32, BoxedStrategy<Act>)> = options
        .into_iter()
        .filter(|(_, name, _)| k.on(name))
        .map(|(weight, _, strategy)| (weight, strategy))
        .collect();
    assert!(
        !options.is_empty(),
        "PROMISES_WITHOUT left no foreign act: add \"foreign\" to it instead"
    );
    prop::strategy::Union::new_weighted(options)
}

/// A random step, within the knobs.
pub fn step_strategy(k: &Knobs) -> impl Strategy<Value = Step> {
    let mut options: Vec<(u32, BoxedStrategy<Step>)> = vec![
        (
            18,
            (1u32..=3).prop_map(|cycles| Step::Schedule { cycles }).boxed(),
        ),
        (8, (1u32..=2).prop_map(|periods| Step::Before { periods }).boxed()),
        (
            8,
            (1u32..=2, any::<bool>())
                .prop_map(|(periods, past_grace)| Step::After { periods, past_grace })
                .boxed(),
        ),
        (4, (1i64..=90).prop_map(|seconds| Step::Wait { seconds }).boxed()),
        (10, Just(Step::CreateNew).boxed()),
        (10, Just(Step::ResizeOld).boxed()),
    ];
    if k.on("foreign") {
        options.push((22, act_strategy(k).prop_map(Step::Foreign).boxed()));
    }
    if k.on("create_new_at") {
        options.push((
            3,
            (1u32..=6).prop_map(|behind| Step::CreateNewAt { behind }).boxed(),
        ));
    }
    if k.on("zone") {
        options.push((
            1,
            prop_oneof![
                Just("UTC"),
                Just("Europe/Berlin"),
                Just("Pacific/Kiritimati"),
                Just("America/Los_Angeles"),
            ]
            .prop_map(|timezone| Step::Zone { timezone })
            .boxed(),
        ));
    }
    prop::strategy::Union::new_weighted(options)
}

#[derive(Clone)]
/// One case of the property test: a policy, a start, how slow AWS is, and the steps.
pub struct Case {
    /// The policy.
    pub spec: PolicySpec,
    /// The policy as TOML.
    pub toml: String,
    /// The clock when the case starts.
    pub start: DateTime<Utc>,
    /// How long DynamoDB takes: the defaults, or slower than a create_new run waits (120 s).
    pub slow: Slowness,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// Which of DynamoDB's transitions take longer than a run waits for them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slowness {
    /// CreateTable: 3 minutes instead of 20 s (a new table is not ready when create_new ends).
    pub create: bool,
    /// DeleteTable: 5 minutes instead of 30 s (create_new cannot recreate a DELETING table in
    /// its wait, and must fail).
    pub delete: bool,
    /// UpdateTable: 2 minutes instead of 10 s; an index: 10 minutes instead of 1.
    pub update: bool,
    /// A warm throughput raise: 30 minutes instead of 90 s (still UPDATING at the next run 15
    /// minutes later, and after create_new's wait for it).
    pub warm: bool,
}

impl Slowness {
    /// The fake's delays for this slowness.
    pub fn config(self) -> Config {
        let default = Config::default();
        // `minutes` where the step is slowed down, else the default delay.
        let slowed = |on: bool, minutes: i64, otherwise: Duration| {
            if on {
                Duration::minutes(minutes)
            } else {
                otherwise
            }
        };
        Config {
            create_delay: slowed(self.create, 3, default.create_delay),
            delete_delay: slowed(self.delete, 5, default.delete_delay),
            update_delay: slowed(self.update, 2, default.update_delay),
            index_delay: slowed(self.update, 10, default.index_delay),
            warm_delay: slowed(self.warm, 30, default.warm_delay),
            ..default
        }
    }
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "\n--- policy ---\n{}--- start {} ({:?}) ---",
            self.toml,
            self.start.to_rfc3339(),
            self.slow
        )?;
        for (i, step) in self.steps.iter().enumerate() {
            writeln!(f, "{i:>3}: {step:?}")?;
        }
        Ok(())
    }
}

/// A random case, within the knobs.
pub fn case_strategy(knobs: Knobs) -> impl Strategy<Value = Case> {
    let starts = prop_oneof![
        // Before Europe/Berlin's spring-forward night, before its fall-back night, a month's end.
        Just(Utc.with_ymd_and_hms(2024, 3, 29, 12, 0, 0).unwrap()),
        Just(Utc.with_ymd_and_hms(2024, 10, 25, 12, 0, 0).unwrap()),
        Just(Utc.with_ymd_and_hms(2024, 1, 30, 12, 0, 0).unwrap()),
    ];
    (
        policy_strategy(&knobs),
        starts,
        0i64..72 * 60,
        (
            prop::bool::weighted(0.15),
            prop::bool::weighted(0.15),
            prop::bool::weighted(0.15),
            prop::bool::weighted(0.15),
        )
            .prop_map(|(create, delete, update, warm)| Slowness {
                create,
                delete,
                update,
                warm,
            }),
        prop::collection::vec(step_strategy(&knobs), 1..=16),
    )
        .prop_filter_map(
            "the policy must validate",
            |(spec, start, minutes, slow, steps)| {
                let toml = spec.toml(PREFIX);
                Policy::from_toml(&toml).ok()?;
                Some(Case {
                    spec,
                    toml,
                    start: start + Duration::minutes(minutes),
                    slow,
                    steps,
                })
            },
        )
}
