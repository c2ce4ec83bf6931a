//! The scenarios of issue 18 and the promises checked after every run of ours, shared by the
//! property test over the in-memory account (`promises.rs`, [`fake_aws::FakeAws`]) and its
//! sampled replay on moto (`promises_moto.rs`): random policies ([`PolicySpec`]), steps
//! ([`Step`], [`Act`]), the ground truth of whose each object is ([`Ground`]), the five
//! invariants over one run's facts ([`RunFacts`]), and a [`Harness`] that plays a [`Case`] in
//! any [`Account`].

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, Duration, TimeZone, Utc};
use ddb_rollover::plan::deferral::DeferralCause;
use ddb_rollover::policy::period::Slot;
use ddb_rollover::policy::scaling::{ScalableDimension, ScalableKey};
use ddb_rollover::policy::settings::{
    AttributeKind, Billing, Capacity, GlobalIndex, KeyAttribute, KeySchema, LocalIndex, OnDemandLimits,
    Projection,
};
use ddb_rollover::policy::warm::WarmThroughput;
use ddb_rollover::run::adopt::AdoptReport;
use ddb_rollover::run::report::Outcome;
use ddb_rollover::run::status::StatusReport;
use ddb_rollover::table::changes::{IndexSpec, TableSpec};
use ddb_rollover::{ApplyOptions, Operation, Policy, RunReport};
use fake_aws::{Config, Effect, Maker, Status, Table, Target, World, FAMILY_TAG, LOWER_WARM};
use proptest::prelude::*;

pub const PREFIX: &str = "ts";
pub const SIBLING: &str = "ts_eu";
pub const SIBLING_ACTOR: &str = "family ts_eu";
pub const PERSON: &str = "someone";

// ------------------------------------------------------------------------------------------
// Random policies

#[derive(Clone, Debug)]
pub enum PhaseKind {
    Provisioned(i64, i64),
    OnDemand(Option<i64>),
    /// Two sets of bounds, so a table moving between autoscaling phases has its targets
    /// registered again.
    Autoscaling {
        wide: bool,
    },
}

#[derive(Clone, Debug)]
pub struct PhaseSpec {
    /// min_age minus the previous phase's (the first phase has min_age 0).
    pub gap: u32,
    pub kind: PhaseKind,
    pub class: Option<&'static str>,
    /// `warm = { read, write }` (units per second): at least any capacity the generator gives.
    pub warm: Option<(i64, i64)>,
}

#[derive(Clone, Debug)]
pub struct RetentionSpec {
    pub delete_after: Option<u32>,
    pub archive_after: Option<u32>,
    pub keep_newest: u32,
    pub max_deletes: u32,
}

#[derive(Clone, Debug)]
pub struct PolicySpec {
    pub period: &'static str,
    pub timezone: &'static str,
    pub premake: u32,
    pub gsi: bool,
    pub lsi: bool,
    pub grace: Option<&'static str>,
    pub ttl: bool,
    pub deletion_protection: bool,
    pub phases: Vec<PhaseSpec>,
    pub retention: Option<RetentionSpec>,
}

impl PolicySpec {
    pub fn toml(&self, prefix: &str) -> String {
        let mut t = format!(
            "prefix = \"{prefix}\"\nperiod = \"{}\"\ntimezone = \"{}\"\npremake = {}\n",
            self.period, self.timezone, self.premake
        );
        if let Some(grace) = self.grace {
            t.push_str(&format!("grace = \"{grace}\"\n"));
        }
        if self.gsi {
            t.push_str(
                "[[indexes]]\nname = \"by_device\"\npartition = { name = \"device\", type = \"S\" }\nprojection = \"keys_only\"\n",
            );
        }
        if self.lsi {
            t.push_str("[[local_indexes]]\nname = \"by_time\"\nsort = { name = \"ts\", type = \"N\" }\n");
        }
        let mut min_age = 0;
        for (i, phase) in self.phases.iter().enumerate() {
            if i > 0 {
                min_age += phase.gap;
            }
            t.push_str(&format!("[[phases]]\nmin_age = {min_age}\n"));
            match phase.kind {
                PhaseKind::Provisioned(read, write) => t.push_str(&format!("read = {read}\nwrite = {write}\n")),
                PhaseKind::OnDemand(max_read) => {
                    t.push_str("billing = \"on_demand\"\n");
                    if let Some(max) = max_read {
                        t.push_str(&format!("max_read = {max}\n"));
                    }
                }
                PhaseKind::Autoscaling { wide: false } => t.push_str(
                    "autoscaling = { min_read = 5, max_read = 50, min_write = 5, max_write = 100, target = 70 }\n",
                ),
                PhaseKind::Autoscaling { wide: true } => t.push_str(
                    "autoscaling = { min_read = 1, max_read = 400, min_write = 20, max_write = 200, target = 50 }\n",
                ),
            }
            if let Some(class) = phase.class {
                t.push_str(&format!("table_class = \"{class}\"\n"));
            }
            if let Some((read, write)) = phase.warm {
                t.push_str(&format!("warm = {{ read = {read}, write = {write} }}\n"));
            }
        }
        if self.ttl || self.deletion_protection {
            t.push_str("[template]\n");
            if self.ttl {
                t.push_str("ttl_attribute = \"expires_at\"\n");
            }
            if self.deletion_protection {
                t.push_str("deletion_protection = true\n");
            }
        }
        if let Some(r) = &self.retention {
            t.push_str(&format!(
                "[retention]\nkeep_newest = {}\nmax_deletes_per_run = {}\n",
                r.keep_newest, r.max_deletes
            ));
            if let Some(after) = r.delete_after {
                t.push_str(&format!("delete_after = {after}\n"));
            }
            if let Some(after) = r.archive_after {
                t.push_str(&format!("archive_after = {after}\nbucket = \"my-archive\"\n"));
            }
        }
        t
    }
}

pub fn phase_strategy() -> impl Strategy<Value = PhaseSpec> {
    let kind = prop_oneof![
        3 => prop_oneof![Just((300, 1000)), Just((100, 1)), Just((1, 1)), Just((50, 50)), Just((10, 5))]
            .prop_map(|(r, w)| PhaseKind::Provisioned(r, w)),
        1 => prop::option::of(Just(100i64)).prop_map(PhaseKind::OnDemand),
        1 => any::<bool>().prop_map(|wide| PhaseKind::Autoscaling { wide }),
    ];
    let class = prop_oneof![4 => Just(None), 1 => Just(Some("standard_ia")), 1 => Just(Some("standard"))];
    // At or above every capacity above and DynamoDB's on-demand starting values (12,000 / 4,000).
    let warm = prop_oneof![
        5 => Just(None),
        1 => Just(Some((12_000i64, 4_000i64))),
        1 => Just(Some((40_000, 20_000))),
        1 => Just(Some((30_000, 30_000))),
    ];
    (1u32..=3, kind, class, warm).prop_map(|(gap, kind, class, warm)| PhaseSpec {
        gap,
        kind,
        class,
        warm,
    })
}

pub fn retention_strategy() -> impl Strategy<Value = RetentionSpec> {
    (
        prop::option::weighted(0.9, 1u32..=4),
        prop::option::weighted(0.25, 1u32..=2),
        1u32..=3,
        1u32..=3,
    )
        .prop_map(
            |(delete_after, archive_after, keep_newest, max_deletes)| RetentionSpec {
                delete_after,
                archive_after,
                keep_newest,
                max_deletes,
            },
        )
}

pub fn policy_strategy(k: &Knobs) -> impl Strategy<Value = PolicySpec> {
    let k = k.clone();
    (
        prop_oneof![Just("hour"), Just("6h"), Just("day"), Just("day"), Just("week"), Just("month")],
        prop_oneof![Just("UTC"), Just("Europe/Berlin")],
        0u32..=3,
        (any::<bool>(), prop::bool::weighted(0.3)),
        prop_oneof![3 => Just(None), 1 => Just(Some("30m")), 1 => Just(Some("2h")), 1 => Just(Some("1day")), 1 => Just(Some("3days"))],
        (prop::bool::weighted(0.2), prop::bool::weighted(0.15)),
        prop::collection::vec(phase_strategy(), 1..=3),
        prop::option::weighted(0.6, retention_strategy()),
    )
        .prop_map(
            move |(period, timezone, premake, (gsi, lsi), grace, (ttl, deletion_protection), phases, retention)| {
                PolicySpec {
                    period,
                    timezone,
                    premake,
                    gsi: gsi || !k.on("policy_without_gsi"),
                    lsi,
                    grace: grace.filter(|_| k.on("grace")),
                    ttl: ttl && k.on("ttl"),
                    deletion_protection,
                    phases: phases
                        .into_iter()
                        .map(|p| PhaseSpec {
                            class: p.class.filter(|_| k.on("table_class")),
                            warm: p.warm.filter(|_| k.on("warm")),
                            ..p
                        })
                        .map(|p| match p.kind {
                            PhaseKind::Autoscaling { .. } if !k.on("autoscaling") => PhaseSpec {
                                kind: PhaseKind::Provisioned(50, 50),
                                ..p
                            },
                            PhaseKind::OnDemand(Some(_)) if !k.on("on_demand_max") => PhaseSpec {
                                kind: PhaseKind::OnDemand(None),
                                ..p
                            },
                            _ => p,
                        })
                        .collect(),
                    retention: retention.filter(|_| k.on("retention")).map(|r| RetentionSpec {
                        archive_after: r.archive_after.filter(|_| k.on("archive")),
                        ..r
                    }),
                }
            },
        )
}

// ------------------------------------------------------------------------------------------
// Steps

#[derive(Clone, Debug)]
pub enum NameKind {
    /// `ts_{label}` of the period `at` periods from the current one.
    Exact,
    /// `ts_{label}_old`: under the prefix, not a label.
    Suffixed,
    /// `ts_eu_{label}`, untagged: looks like the nested family's.
    Nested,
}

#[derive(Clone, Debug)]
pub enum GsiKind {
    None,
    /// The policy's index exactly (when the policy has one).
    Policy,
    /// The policy's index name on another key.
    SameNameOtherKey,
    Extra,
}

#[derive(Clone, Debug)]
pub enum TagKind {
    None,
    User,
    OtherFamily,
}

#[derive(Clone, Debug)]
pub enum Act {
    /// A hand-made table.
    HandMade {
        at: i32,
        name: NameKind,
        our_key: bool,
        gsi: GsiKind,
        lsi: bool,
        tags: TagKind,
        on_demand: bool,
    },
    /// Someone restores one of our past tables from a backup (or a version before the family
    /// tag made it): `{prefix}_{label}` `ago` periods back, the policy's key and indexes, no
    /// tags. Claimable by name; only `adopt` makes it provably ours.
    Restored { ago: u32, on_demand: bool },
    /// The nested family's own run (the real engine, with the same policy under `ts_eu`).
    Sibling(Operation),
    /// Another family's tag on one of our tables.
    TagOtherFamily { pick: usize },
    /// Our family tag removed from one of our tables.
    UntagFamily { pick: usize },
    /// Someone sets one of our tables' capacity.
    Capacity { pick: usize, to: Option<(i64, i64)> },
    /// Someone deletes one of our tables.
    Delete { pick: usize },
    /// Someone deletes our newest table (the furthest pre-built one).
    DeleteNewest,
    /// Someone registers a scalable target on one of our tables (or its index), with or without
    /// their own target-tracking policy.
    Target {
        pick: usize,
        index: bool,
        read: bool,
        policy: bool,
    },
    /// Someone attaches a step-scaling policy to one of OUR scalable targets.
    StepPolicy { pick: usize },
    /// Someone adds an index to one of our tables.
    AddIndex { pick: usize, like_policy: bool },
    /// Someone removes the scaling of one of OUR scalable targets: deregisters it (every policy
    /// goes with it) or deletes our policy from it (the target stays, no longer ours).
    DropScaling { pick: usize, deregister: bool },
    /// Someone lowers one of our tables' provisioned capacity (or one of its indexes') by one
    /// unit five times, waiting for ACTIVE in between: the day's decrease budget is spent.
    SpendDecreases { pick: usize, index: bool },
    /// The operator runs the real `adopt` on a table under our prefix that our runs did not
    /// make: one claimable by name (`{prefix}_{label}`, our key, no family tag) when
    /// `claimable` and there is one, else any.
    Adopt { pick: usize, claimable: bool },
    /// Someone pre-warms one of our tables (or its first index): above anything a policy asks
    /// (`high`; no run may then try to lower it), or to less than some phases ask (a run raises
    /// it further, once this raise is no longer UPDATING).
    PreWarm { pick: usize, index: bool, high: bool },
    /// The application writes `n` new items to one of our tables, whatever its age (refused
    /// while a resource-based policy denies item writes).
    WriteItems { pick: usize, n: usize },
    /// Someone else's resource-based policy on one of our tables: put over whatever is there
    /// (`pick % 4 == 0`, our seal gone with it), added beside the statements there (1), the
    /// policy deleted (2), or put over with an Allow under our seal's Sid (3).
    ResourcePolicy { pick: usize },
    /// Someone rewrites one of our tables' period tags to a period years back.
    TagPeriod { pick: usize },
    /// Someone disables one of our tables' KMS key (KMS DisableKey, or revokes DynamoDB's
    /// grant): INACCESSIBLE_ENCRYPTION_CREDENTIALS, archived by DynamoDB seven days later. A
    /// current or pre-built table so lost takes no writes: create_new must fail.
    DisableKey { pick: usize },
    /// Someone puts a scheduled action on a scalable target of one of our tables (or its first
    /// index), registering the target first when none is there (PutScheduledAction needs one),
    /// or, with `delete`, deletes the scheduled actions on it.
    ScheduledAction {
        pick: usize,
        index: bool,
        read: bool,
        delete: bool,
    },
    /// Someone turns deletion protection on for one of our tables.
    DeletionProtection { pick: usize },
    /// Someone acts on one of the completed exports of our tables in the archive bucket: its
    /// first data file overwritten, deleted or moved to GLACIER (CopyObject), another table's
    /// export placed under its prefix, or its file list pointed outside its `data/`.
    Archive { pick: usize, act: ArchiveAct },
}

/// What [`Act::Archive`] does to an export in S3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveAct {
    Overwrite,
    Delete,
    Glacier,
    ForeignExport,
    RepointFileList,
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
pub enum Step {
    /// The clock to 15 minutes before the `periods`-th boundary ahead (create_new's schedule).
    Before {
        periods: u32,
    },
    /// The clock to 15 minutes after the `periods`-th boundary ahead (resize_old's schedule),
    /// plus the policy's grace when `past_grace`.
    After {
        periods: u32,
        past_grace: bool,
    },
    /// A few seconds: transitions in flight.
    Wait {
        seconds: i64,
    },
    CreateNew,
    ResizeOld,
    /// `cycles` times: Before 1, CreateNew, After 1 past the grace, ResizeOld.
    Schedule {
        cycles: u32,
    },
    Foreign(Act),
}

/// Which kinds of steps and policies the generator may use; `PROMISES_WITHOUT` (a comma-separated
/// list) takes names out:
/// - steps: `foreign` (every foreign act), or one act: `hand_made`, `restored`, `sibling`,
///   `tag_other_family`, `untag_family`, `capacity`, `delete`, `delete_newest`, `target`,
///   `step_policy`, `add_index` (the policy's index name on another key), `add_extra_index`,
///   `drop_scaling`, `spend_decreases`, `adopt`, `pre_warm`, `disable_key`, `scheduled_action`,
///   `deletion_protection`, `write_items`, `resource_policy`;
/// - hand-made tables: `hand_made_extra_gsi` (indexes the policy does not name),
///   `hand_made_on_demand`;
/// - policies: `grace`, `ttl`, `autoscaling` (such phases become fixed ones), `retention`,
///   `archive`, `policy_without_gsi` (every policy then has the index `by_device`),
///   `table_class` (phases keep the table's class), `on_demand_max` (on-demand phases without
///   maximums), `warm` (phases without warm throughput).
#[derive(Clone, Debug)]
pub struct Knobs {
    pub without: BTreeSet<String>,
}

impl Knobs {
    pub fn from_env() -> Knobs {
        Knobs {
            without: std::env::var("PROMISES_WITHOUT")
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        }
    }

    pub fn on(&self, name: &str) -> bool {
        !self.without.contains(name)
    }
}

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
        (
            1,
            "tag_other_family",
            pick().prop_map(|pick| Act::TagOtherFamily { pick }).boxed(),
        ),
        (
            1,
            "untag_family",
            pick().prop_map(|pick| Act::UntagFamily { pick }).boxed(),
        ),
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
        (1, "delete", pick().prop_map(|pick| Act::Delete { pick }).boxed()),
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
        (
            2,
            "step_policy",
            pick().prop_map(|pick| Act::StepPolicy { pick }).boxed(),
        ),
        (
            1,
            "add_index",
            pick()
                .prop_map(|pick| Act::AddIndex {
                    pick,
                    like_policy: true,
                })
                .boxed(),
        ),
        (
            1,
            "add_extra_index",
            pick()
                .prop_map(|pick| Act::AddIndex {
                    pick,
                    like_policy: false,
                })
                .boxed(),
        ),
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
        (
            1,
            "resource_policy",
            pick().prop_map(|pick| Act::ResourcePolicy { pick }).boxed(),
        ),
        (
            1,
            "tag_period",
            pick().prop_map(|pick| Act::TagPeriod { pick }).boxed(),
        ),
        (
            1,
            "disable_key",
            pick().prop_map(|pick| Act::DisableKey { pick }).boxed(),
        ),
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
        (
            2,
            "deletion_protection",
            pick().prop_map(|pick| Act::DeletionProtection { pick }).boxed(),
        ),
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
    prop::strategy::Union::new_weighted(options)
}

#[derive(Clone)]
pub struct Case {
    pub spec: PolicySpec,
    pub toml: String,
    pub start: DateTime<Utc>,
    /// How long DynamoDB takes: the defaults, or slower than a create_new run waits (120 s).
    pub slow: Slowness,
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
    pub fn config(self) -> Config {
        let default = Config::default();
        Config {
            create_delay: if self.create {
                Duration::minutes(3)
            } else {
                default.create_delay
            },
            delete_delay: if self.delete {
                Duration::minutes(5)
            } else {
                default.delete_delay
            },
            update_delay: if self.update {
                Duration::minutes(2)
            } else {
                default.update_delay
            },
            index_delay: if self.update {
                Duration::minutes(10)
            } else {
                default.index_delay
            },
            warm_delay: if self.warm {
                Duration::minutes(30)
            } else {
                default.warm_delay
            },
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

// ------------------------------------------------------------------------------------------
// Ground truth: whose is what, from the fake's records (never the engine's opinion)

pub struct Ground<'a> {
    pub policy: &'a Policy,
    pub world: &'a World,
}

pub fn our_policy_name(dimension: ScalableDimension) -> String {
    let short = if dimension.is_read() { "read" } else { "write" };
    format!("ddb-rollover-{PREFIX}-{short}")
}

pub fn is_our_policy_name(name: &str) -> bool {
    name == format!("ddb-rollover-{PREFIX}-read") || name == format!("ddb-rollover-{PREFIX}-write")
}

pub fn target_is_ours(target: &Target) -> bool {
    let ours = our_policy_name(target.key.dimension);
    target.policies.iter().any(|p| p.name == ours)
}

pub fn label_slot(policy: &Policy, name: &str) -> Option<Slot> {
    let label = name.strip_prefix(&format!("{PREFIX}_"))?;
    policy.calendar().parse(label).ok()
}

pub fn same_lsis(table: &Table, policy: &Policy) -> bool {
    let sorted = |indexes: &[LocalIndex]| {
        let mut indexes = indexes.to_vec();
        indexes.sort_by(|a, b| a.name.cmp(&b.name));
        indexes
    };
    sorted(&table.lsis) == sorted(&policy.local_indexes)
}

/// The dimensions (read: `true`, write: `false`) whose throughput differs between `from` and
/// `to`; a billing mode switch, or a change of on-demand maximums, is both.
pub fn dimensions_changed(from: Billing, to: Billing) -> Vec<bool> {
    match (from, to) {
        (Billing::Provisioned(a), Billing::Provisioned(b)) => {
            [(true, a.read != b.read), (false, a.write != b.write)]
                .into_iter()
                .filter(|(_, changed)| *changed)
                .map(|(read, _)| read)
                .collect()
        }
        _ if from == to => Vec::new(),
        _ => vec![true, false],
    }
}

pub fn dimension_name(read: bool) -> &'static str {
    if read {
        "read"
    } else {
        "write"
    }
}

impl Ground<'_> {
    pub fn provably_ours(&self, table: &Table) -> bool {
        table.maker == Maker::Us || table.adopted
    }

    pub fn claimable_by_name(&self, table: &Table) -> bool {
        !self.provably_ours(table)
            && label_slot(self.policy, &table.name).is_some()
            && table.key == self.policy.key
            && !table.tags.contains_key(FAMILY_TAG)
    }

    /// Why the table is foreign, if it is.
    pub fn foreign_table(&self, table: &Table) -> Option<String> {
        if self.provably_ours(table) || self.claimable_by_name(table) {
            return None;
        }
        Some(match (table.family(), &table.maker) {
            (Some(family), maker) if family != PREFIX => {
                format!("another family's ({FAMILY_TAG} = {family:?}, made by {maker:?})")
            }
            (_, maker) if label_slot(self.policy, &table.name).is_none() => {
                format!("not named {PREFIX}_{{label}} (made by {maker:?})")
            }
            (_, maker) if table.key != self.policy.key => {
                format!("a look-alike on key {} (made by {maker:?})", table.key)
            }
            (_, maker) => format!("made by {maker:?}, not adopted"),
        })
    }

    /// Why a GSI is foreign: its name, key or projection is not the policy's index's.
    pub fn foreign_gsi(&self, table: &str, index: &str) -> Option<String> {
        let gsi = self.world.tables.get(table)?.gsi(index)?;
        match self.policy.indexes.iter().find(|i| i.name == gsi.name) {
            None => Some(format!("index {index} is not in the policy")),
            Some(want) if want.key != gsi.key || want.projection != gsi.projection => Some(format!(
                "index {index} is on key {} / {}, the policy's is on {} / {}",
                gsi.key, gsi.projection, want.key, want.projection
            )),
            Some(_) => None,
        }
    }

    /// Why the targets of a resource (`table/T` or `table/T/index/I`) are not all ours alone.
    pub fn foreign_scaling_on(&self, resource_id: &str) -> Option<String> {
        let mut why = Vec::new();
        for target in self
            .world
            .targets
            .values()
            .filter(|t| t.key.resource_id == resource_id)
        {
            if !target_is_ours(target) {
                why.push(format!(
                    "foreign target {} (made by {:?})",
                    target.key, target.maker
                ));
            }
            for p in target.policies.iter().filter(|p| !is_our_policy_name(&p.name)) {
                why.push(format!(
                    "foreign {} policy {:?} on {} (made by {:?})",
                    p.policy_type, p.name, target.key, p.maker
                ));
            }
            why.extend(scheduled_on(target));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }

    /// Why the scalable target holding one dimension (read or write) of a resource (`table/T` or
    /// `table/T/index/I`) is not ours alone: a target without our policy, or with someone
    /// else's policy on it. A change to that dimension's throughput would change theirs.
    pub fn claim_on(&self, resource_id: &str, read: bool) -> Option<String> {
        let target = self
            .world
            .targets
            .values()
            .find(|t| t.key.resource_id == resource_id && t.key.dimension.is_read() == read)?;
        let mut why = Vec::new();
        if !target_is_ours(target) {
            why.push(format!(
                "foreign target {} (made by {:?})",
                target.key, target.maker
            ));
        }
        for p in target.policies.iter().filter(|p| !is_our_policy_name(&p.name)) {
            why.push(format!(
                "foreign {} policy {:?} on {} (made by {:?})",
                p.policy_type, p.name, target.key, p.maker
            ));
        }
        why.extend(scheduled_on(target));
        (!why.is_empty()).then(|| why.join(", "))
    }

    /// Who else turned the table's deletion protection on, when the policy does not ask for it.
    pub fn foreign_protection(&self, table: &Table) -> Option<String> {
        let maker = table.protected_by.as_ref().filter(|m| !m.is_us())?;
        (table.deletion_protection && self.policy.template.deletion_protection != Some(true))
            .then(|| format!("deletion protection turned on by {maker:?}, which the policy does not ask for"))
    }

    /// What foreign claims the table: another family's tag, foreign targets or policies on it or
    /// its GSIs.
    pub fn foreign_claims(&self, table: &Table) -> Option<String> {
        let mut why = Vec::new();
        if let Some(family) = table.family().filter(|f| *f != PREFIX) {
            why.push(format!("{FAMILY_TAG} = {family:?}"));
        }
        for target in self.world.targets_on(&table.name) {
            if let Some(w) = self.foreign_scaling_on(&target.key.resource_id) {
                if !why.contains(&w) {
                    why.push(w);
                }
            }
        }
        why.extend(self.foreign_protection(table));
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// Anything foreign on a table: a foreign claim or a foreign GSI.
    pub fn foreign_on(&self, table: &Table) -> Option<String> {
        let mut why: Vec<String> = self.foreign_claims(table).into_iter().collect();
        why.extend(
            table
                .gsis
                .iter()
                .filter_map(|g| self.foreign_gsi(&table.name, &g.name)),
        );
        (!why.is_empty()).then(|| why.join("; "))
    }
}

/// The scheduled actions on a target: none is ours (we never create one).
fn scheduled_on(target: &Target) -> Vec<String> {
    target
        .scheduled_actions
        .iter()
        .map(|a| {
            format!(
                "scheduled action {:?} on {} (made by {:?})",
                a.name, target.key, a.maker
            )
        })
        .collect()
}

// ------------------------------------------------------------------------------------------
// One run's facts, and the invariants

/// One promise's check: its violations, each a sentence naming the step, the table and the facts.
pub type Invariant = fn(&RunFacts<'_>) -> Vec<String>;

pub struct RunFacts<'a> {
    pub step: String,
    pub policy: &'a Policy,
    pub operation: Operation,
    pub now: DateTime<Utc>,
    pub before: &'a World,
    pub after: &'a World,
    /// Our calls during the run.
    pub calls: &'a [fake_aws::Call],
    pub report: &'a RunReport,
    pub status: &'a ddb_rollover::run::status::StatusReport,
}

impl RunFacts<'_> {
    pub fn ground(&self) -> Ground<'_> {
        Ground {
            policy: self.policy,
            world: self.before,
        }
    }

    pub fn effects(&self) -> impl Iterator<Item = (&fake_aws::Call, &Effect)> {
        self.calls
            .iter()
            .flat_map(|c| c.effects.iter().map(move |e| (c, e)))
    }

    pub fn lines_of(&self, table: &str) -> String {
        self.report
            .tables
            .iter()
            .filter(|l| l.item.table == table)
            .map(|l| {
                format!(
                    "[{} {}{}: {}]",
                    l.item.decision.action(),
                    l.outcome.as_str(),
                    l.error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default(),
                    l.item.reason
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Promise 1: nothing foreign was changed or deleted by our runs.
pub fn nothing_foreign_changed(f: &RunFacts<'_>) -> Vec<String> {
    let g = f.ground();
    let mut out = Vec::new();
    let mut say = |what: String| out.push(format!("{}: {what}", f.step));
    for (call, effect) in f.effects() {
        let name = effect.table();
        let before = f.before.tables.get(name);
        let foreign = before.and_then(|t| g.foreign_table(t));
        let op = call.operation;
        match effect {
            Effect::CreatedTable { .. } => {}
            Effect::DeletedTable { .. } => {
                if let Some(t) = before.filter(|t| g.claimable_by_name(t)) {
                    say(format!(
                        "{op} deleted {name}, a table claimable by name but not provably ours (made by {:?}, key {}, tags {:?})",
                        t.maker, t.key, t.tags
                    ));
                } else if let Some(why) = &foreign {
                    say(format!("{op} deleted {name}, which is foreign: {why}"));
                }
            }
            Effect::TableCapacity { from, to, .. }
            | Effect::AutoscalerCapacity {
                index: None,
                from,
                to,
                ..
            } => {
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} changed the capacity of {name} ({from} -> {to}), which is foreign: {why}"
                    ));
                }
                for read in dimensions_changed(*from, *to) {
                    if let Some(why) = g.claim_on(&format!("table/{name}"), read) {
                        say(format!(
                            "{op} changed the {} capacity of {name} ({from} -> {to}) under {why}",
                            dimension_name(read)
                        ));
                    }
                }
            }
            Effect::IndexCapacity { index, from, to, .. }
            | Effect::AutoscalerCapacity {
                index: Some(index),
                from,
                to,
                ..
            } => {
                if let Some(why) = &foreign {
                    say(format!("{op} changed index {index} of {name} ({from} -> {to}), and the table is foreign: {why}"));
                }
                if let Some(why) = g.foreign_gsi(name, index) {
                    say(format!(
                        "{op} changed the throughput of a foreign GSI of {name} ({from} -> {to}): {why}"
                    ));
                }
                for read in dimensions_changed(*from, *to) {
                    if let Some(why) = g.claim_on(&format!("table/{name}/index/{index}"), read) {
                        say(format!(
                            "{op} changed the {} capacity of index {index} of {name} ({from} -> {to}) under {why}",
                            dimension_name(read)
                        ));
                    }
                }
            }
            Effect::Tagged {
                tags, before: had, ..
            } => {
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} tagged {name} with {tags:?}, which is foreign: {why}"
                    ));
                }
                if let Some(family) = tags.get(FAMILY_TAG) {
                    if had.get(FAMILY_TAG) != Some(family) {
                        let whose = before.map_or("?".into(), |t| {
                            format!("made by {:?}, adopted {}, key {}", t.maker, t.adopted, t.key)
                        });
                        say(format!(
                            "{op} wrote {FAMILY_TAG} = {family:?} onto the existing table {name} ({whose}; its tags were {had:?}): only CreateTable may write it"
                        ));
                    }
                }
            }
            Effect::Warm { index, from, to, .. } => {
                let part = index
                    .as_ref()
                    .map_or("the table".to_string(), |i| format!("index {i}"));
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} raised the warm throughput of {part} of {name} ({from} -> {to}), and the table is foreign: {why}"
                    ));
                }
                if let Some(why) = index.as_ref().and_then(|i| g.foreign_gsi(name, i)) {
                    say(format!(
                        "{op} raised the warm throughput of a foreign GSI of {name} ({from} -> {to}): {why}"
                    ));
                }
            }
            Effect::Setting { setting, .. }
                if setting == "deletion protection off"
                    && before.and_then(|t| g.foreign_protection(t)).is_some() =>
            {
                let why = before.and_then(|t| g.foreign_protection(t)).unwrap_or_default();
                say(format!(
                    "{op} turned off the deletion protection of {name}: {why}"
                ));
            }
            Effect::TableClass { .. }
            | Effect::Setting { .. }
            | Effect::AddedIndex { .. }
            | Effect::Ttl { .. }
            | Effect::Pitr { .. }
            | Effect::Untagged { .. }
            | Effect::Exported { .. } => {
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} changed {name} ({effect:?}), which is foreign: {why}"
                    ));
                }
            }
            Effect::RegisteredTarget {
                key,
                before: bounds,
                after,
            } => {
                if let Some(target) = f.before.targets.get(key) {
                    if let Some(why) = g.claim_on(&key.resource_id, key.dimension.is_read()) {
                        say(format!(
                            "{op} registered over the scalable target {key} (made by {:?}, bounds {bounds:?} -> {after:?}), which is not ours alone: {why}",
                            target.maker
                        ));
                    }
                }
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} registered a scalable target {key} on {name}, which is foreign: {why}"
                    ));
                }
                if let Some((_, index)) = key.resource_id.split_once("/index/") {
                    if let Some(why) = g.foreign_gsi(name, index) {
                        say(format!(
                            "{op} registered a scalable target {key} on a foreign GSI: {why}"
                        ));
                    }
                }
            }
            Effect::PutScheduledAction {
                key, name: action, ..
            } => {
                say(format!(
                    "{op} put the scheduled action {action:?} on {key}: we never make one"
                ));
            }
            Effect::DeletedScheduledAction { key, action } => {
                say(format!(
                    "{op} deleted the scheduled action {:?} on {key} (made by {:?})",
                    action.name, action.maker
                ));
            }
            Effect::PutPolicy {
                key, name: policy, ..
            } => {
                if !is_our_policy_name(policy) {
                    say(format!(
                        "{op} put the policy {policy:?} on {key}, which is not ours"
                    ));
                }
            }
            Effect::DeletedPolicy { key, policy } => {
                if !is_our_policy_name(&policy.name) {
                    say(format!(
                        "{op} deleted the foreign {} policy {:?} on {key} (made by {:?})",
                        policy.policy_type, policy.name, policy.maker
                    ));
                }
            }
            Effect::DeregisteredTarget {
                key,
                maker,
                policies,
                scheduled_actions,
            } => {
                for a in scheduled_actions {
                    say(format!(
                        "{op} deregistered the scalable target {key}, which carried the scheduled action {:?} (made by {:?}): DeregisterScalableTarget deleted it",
                        a.name, a.maker
                    ));
                }
                for p in policies.iter().filter(|p| !is_our_policy_name(&p.name)) {
                    say(format!(
                        "{op} deregistered the scalable target {key}, which carried the foreign {} policy {:?} (made by {:?}): DeregisterScalableTarget deleted it",
                        p.policy_type, p.name, p.maker
                    ));
                }
                if let Some(target) = f.before.targets.get(key).filter(|t| !target_is_ours(t)) {
                    say(format!(
                        "{op} deregistered the foreign scalable target {key} (made by {:?} / {maker:?})",
                        target.maker
                    ));
                }
            }
        }
    }
    // DynamoDB refuses a lower warm throughput: no run of ours may ask for one.
    for call in f.calls {
        if let Some((_, message)) = call.error.as_ref().filter(|(_, m)| m.contains(LOWER_WARM)) {
            say(format!(
                "{} {} asked to lower a warm throughput: {message}",
                call.operation, call.table
            ));
        }
    }
    // The plan itself: leaving an autoscaling phase never asks to deregister a target that
    // carries someone else's policy (the adapter would refuse it, the decision must not ask it).
    for line in &f.report.tables {
        let ddb_rollover::Decision::DeregisterScaling(change) = &line.item.decision else {
            continue;
        };
        for removal in change.targets.iter().filter(|r| r.deregister_target) {
            let Some(target) = f.before.targets.get(&removal.key) else {
                continue;
            };
            let theirs: Vec<&str> = target
                .policies
                .iter()
                .filter(|p| !is_our_policy_name(&p.name))
                .map(|p| p.name.as_str())
                .collect();
            if !theirs.is_empty() || !target_is_ours(target) {
                out.push(format!(
                    "{}: {} planned to deregister the scalable target {} (made by {:?}), which carries the policies {theirs:?} that are not ours",
                    f.step, line.item.table, removal.key, target.maker
                ));
            }
        }
    }
    out
}

/// Promise 2: no table was deleted unless it was provably ours, had the policy's key and local
/// indexes, nothing foreign claimed it, it was old enough and its write grace had ended.
pub fn no_data_loss(f: &RunFacts<'_>) -> Vec<String> {
    let g = f.ground();
    let calendar = f.policy.calendar();
    let mut out = Vec::new();
    for (call, effect) in f.effects() {
        let Effect::DeletedTable { table } = effect else {
            continue;
        };
        let name = &table.name;
        count(format!(
            "promise 2: deleted a table {}",
            if table.adopted {
                "adopted"
            } else if table.maker.is_us() {
                "we made"
            } else {
                "NOT OURS"
            }
        ));
        // The table as the run found it (the snapshot in the effect is the same table at the call).
        let t = f.before.tables.get(name).unwrap_or(table);
        let mut why = Vec::new();
        if !g.provably_ours(t) {
            why.push(format!(
                "it was not provably ours (made by {:?}, not adopted)",
                t.maker
            ));
        }
        if t.family() != Some(PREFIX) {
            why.push(format!(
                "it did not carry our family tag (its {FAMILY_TAG} was {:?})",
                t.family()
            ));
        }
        if t.key != f.policy.key {
            why.push(format!("its key {} is not the policy's {}", t.key, f.policy.key));
        }
        if !same_lsis(t, f.policy) {
            why.push(format!(
                "its local indexes {:?} are not the policy's {:?}",
                t.lsis.iter().map(|l| &l.name).collect::<Vec<_>>(),
                f.policy.local_indexes.iter().map(|l| &l.name).collect::<Vec<_>>()
            ));
        }
        if let Some(claim) = g.foreign_claims(t) {
            why.push(format!("something foreign claimed it: {claim}"));
        }
        // Lifted just before the delete: the protection as the run found it.
        if let Some(protection) = f.before.tables.get(name).and_then(|b| g.foreign_protection(b)) {
            if !why.iter().any(|w| w.contains(&protection)) {
                why.push(format!("its {protection}"));
            }
        }
        for sid in foreign_statements(t) {
            why.push(format!(
                "its resource-based policy held someone else's statement {sid}, destroyed with it"
            ));
        }
        for gsi in &t.gsis {
            let theirs = match f.policy.indexes.iter().find(|i| i.name == gsi.name) {
                None => true,
                Some(want) => want.key != gsi.key || want.projection != gsi.projection,
            };
            if theirs {
                why.push(format!(
                    "it carried the foreign GSI {} (made by {:?}), destroyed with it",
                    gsi.name, gsi.maker
                ));
            }
        }
        match label_slot(f.policy, name) {
            None => why.push("its name is not a period label of the policy".into()),
            Some(slot) => {
                let age = calendar.periods_between(slot, calendar.floor(f.now));
                match f.policy.retention.as_ref().and_then(|r| r.delete_after) {
                    None => why.push("the policy deletes nothing (no retention.delete_after)".into()),
                    Some(after) if age < i64::from(after) => {
                        why.push(format!("its age {age} is below delete_after {after}"))
                    }
                    _ => {}
                }
                let grace = f
                    .policy
                    .grace
                    .map(|g| Duration::from_std(g).expect("a small grace"))
                    .unwrap_or_else(Duration::zero);
                let end = calendar.end(slot) + grace;
                if call.at < end {
                    why.push(format!(
                        "the clock ({}) was before its period end + grace ({})",
                        call.at.to_rfc3339(),
                        end.to_rfc3339()
                    ));
                }
            }
        }
        if !why.is_empty() {
            out.push(format!(
                "{}: DeleteTable {name}: data lost, because {}",
                f.step,
                why.join("; ")
            ));
        }
    }
    out
}

/// Promise 6, with archiving on: every table our runs deleted holds, when deleted, exactly the
/// items of the export its deletion relied on (the final export after the seal, else the
/// archive export: the tags it carried), and every item write DynamoDB accepted is in a table
/// that was not deleted by us, or in such an export.
pub fn archives_hold_every_write(policy: &Policy, world: &World) -> Vec<String> {
    use ddb_rollover::policy::tags::{export_arn_from_tag, TAG_EXPORT, TAG_FINAL_EXPORT};
    if policy.archive().is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    // Every incarnation of a table: gone, deleting, live.
    let all: Vec<&Table> = world.gone.iter().chain(world.tables.values()).collect();
    let deleted_by_us = |t: &Table| t.deleted_by.as_ref().is_some_and(Maker::is_us);
    let relied = |t: &Table| {
        let tags = &t.tags;
        let value = tags.get(TAG_FINAL_EXPORT).or_else(|| tags.get(TAG_EXPORT))?;
        world.exports.get(&export_arn_from_tag(&t.arn, value))
    };
    for t in all.iter().filter(|t| deleted_by_us(t)) {
        count("promise 6: a table we deleted");
        match relied(t) {
            None => out.push(format!("{} was deleted with no export recorded on it", t.name)),
            Some(export) if export.items != t.items => {
                let lost: Vec<&String> = t.items.difference(&export.items).collect();
                out.push(format!(
                    "{} was deleted holding {} item(s) but the export it relied on ({}, as of {}) holds {}: lost {lost:?}",
                    t.name,
                    t.items.len(),
                    export.arn,
                    export.export_time.to_rfc3339(),
                    export.items.len()
                ));
            }
            Some(_) => count("promise 6: deleted with an archive of every item"),
        }
    }
    for write in &world.writes {
        let holders: Vec<&&Table> = all
            .iter()
            .filter(|t| t.name == write.table && t.items.contains(&write.item))
            .collect();
        let kept = holders
            .iter()
            .any(|t| !deleted_by_us(t) || relied(t).is_some_and(|e| e.items.contains(&write.item)));
        if !kept {
            out.push(format!(
                "the write of {} to {} at {} was accepted, but neither a table nor the archive of a table we deleted holds it",
                write.item,
                write.table,
                write.at.to_rfc3339()
            ));
        }
    }
    out
}

/// The names of the current and pre-built tables at `now`.
pub fn target_names(policy: &Policy, now: DateTime<Utc>) -> Vec<String> {
    let calendar = policy.calendar();
    calendar
        .periods_from(calendar.floor(now))
        .take(policy.premake as usize + 1)
        .map(|slot| format!("{PREFIX}_{}", calendar.label(slot)))
        .collect()
}

/// Promise 3: a create_new run whose end state has the current or a pre-built table missing,
/// DELETING, or in a status that takes no writes (its KMS key lost, archived) reports failure, and says the next table is not ready; and one that says the next
/// table is ready, when phase 0 asks for warm throughput, ended with the warm throughput of each
/// such table and of the policy's indexes on it ACTIVE.
pub fn create_new_is_loud(f: &RunFacts<'_>) -> Vec<String> {
    if f.operation != Operation::CreateNew {
        return Vec::new();
    }
    let mut out = Vec::new();
    let said_ready = f.report.next_table_ready.as_ref().is_some_and(|r| r.ready);
    if said_ready && f.policy.hot_phase().warm.is_some() {
        let g = Ground {
            policy: f.policy,
            world: f.after,
        };
        for name in target_names(f.policy, f.now) {
            let Some(table) = f.after.tables.get(&name) else {
                continue;
            };
            let mut updating: Vec<String> = Vec::new();
            if table.warm.is_updating() {
                updating.push("the table".into());
            }
            for gsi in table
                .gsis
                .iter()
                .filter(|gsi| gsi.warm.is_updating() && g.foreign_gsi(&name, &gsi.name).is_none())
            {
                updating.push(format!("index {}", gsi.name));
            }
            count("promise 3: ready with warm throughput checked");
            if !updating.is_empty() {
                out.push(format!(
                    "{}: create_new said the next table is ready, but the warm throughput of {} of {name} is still UPDATING; its lines: {}",
                    f.step,
                    updating.join(", "),
                    f.lines_of(&name)
                ));
            }
        }
    }
    for name in target_names(f.policy, f.now) {
        let state = match f.after.tables.get(&name) {
            None => "missing",
            Some(t) if t.status == Status::Deleting => "DELETING",
            Some(t) if t.status == Status::InaccessibleEncryptionCredentials => {
                "INACCESSIBLE_ENCRYPTION_CREDENTIALS"
            }
            Some(t) if t.status == Status::Archiving => "ARCHIVING",
            Some(t) if t.status == Status::Archived => "ARCHIVED",
            Some(_) => continue,
        };
        count(format!("promise 3: create_new ended with a table {state}"));
        let ready = f.report.next_table_ready.as_ref().map(|r| r.ready);
        if f.report.succeeded() || ready != Some(false) {
            out.push(format!(
                "{}: create_new ended with {name} {state}, yet the report {} and next_table_ready.ready is {ready:?}; its lines: {}",
                f.step,
                if f.report.succeeded() { "succeeded" } else { "failed" },
                f.lines_of(&name)
            ));
        }
    }
    out
}

/// What the fake says about a documented deferral cause on `table` after the run: `Ok` when
/// it confirms the cause, `Err` with the facts when it does not.
pub fn confirm_deferral(f: &RunFacts<'_>, table: &Table, cause: DeferralCause) -> Result<(), String> {
    let now = f.now;
    let budget_spent = || {
        let mut spent: Vec<String> = Vec::new();
        if !table.decreases.allowed(now) {
            spent.push(format!("table ({} today)", table.decreases.today(now)));
        }
        for gsi in table.gsis.iter().filter(|g| !g.decreases.allowed(now)) {
            spent.push(format!("index {} ({} today)", gsi.name, gsi.decreases.today(now)));
        }
        spent
    };
    match cause {
        DeferralCause::DecreaseBudget => {
            let spent = budget_spent();
            if spent.is_empty() {
                Err(format!(
                    "deferred for decrease_budget, but the fake's budgets allow a decrease (table: {} today, last {:?})",
                    table.decreases.today(now),
                    table.decreases.last()
                ))
            } else {
                Ok(())
            }
        }
        DeferralCause::LimitExceeded => {
            let switches = table
                .on_demand_switches
                .iter()
                .filter(|t| now - **t < Duration::hours(24))
                .count();
            if budget_spent().is_empty() && switches < fake_aws::ON_DEMAND_SWITCHES_PER_DAY {
                Err("deferred for limit_exceeded, but no budget of the fake is spent".into())
            } else {
                Ok(())
            }
        }
        DeferralCause::OnDemandSwitchSpacing => {
            if table
                .on_demand_switches
                .iter()
                .any(|t| now - *t < Duration::hours(6))
            {
                Ok(())
            } else {
                Err(format!(
                    "deferred for on_demand_switch_spacing, but its switches were at {:?}",
                    table.on_demand_switches
                ))
            }
        }
        DeferralCause::ClassChangeSpacing => {
            if table.class_changes.iter().any(|t| now - *t < Duration::days(15)) {
                Ok(())
            } else {
                Err(format!(
                    "deferred for class_change_spacing, but its class changes were at {:?}",
                    table.class_changes
                ))
            }
        }
        DeferralCause::TableBusy => {
            if table.status != Status::Active {
                Ok(())
            } else {
                Err("deferred for table_busy, but it is ACTIVE".into())
            }
        }
        DeferralCause::IndexBusy => {
            if table.gsis.iter().any(|g| g.status != Status::Active) {
                Ok(())
            } else {
                Err("deferred for index_busy, but every index is ACTIVE".into())
            }
        }
        DeferralCause::WarmUpdating => {
            if table.warm.is_updating() || table.gsis.iter().any(|g| g.warm.is_updating()) {
                Ok(())
            } else {
                Err("deferred for warm_updating, but no warm throughput of it is UPDATING".into())
            }
        }
        DeferralCause::ScalingStillAttached => {
            let ours = f
                .after
                .targets_on(&table.name)
                .into_iter()
                .any(|t| t.policies.iter().any(|p| is_our_policy_name(&p.name)));
            if ours {
                Ok(())
            } else {
                Err("deferred for scaling_still_attached, but no policy of ours is on it".into())
            }
        }
        other => Err(format!("deferred for {other}, which does not hold back a phase")),
    }
}

/// The parts of `table` (the table, its GSIs) with less warm throughput than `phase` asks for.
pub fn warm_differences(f: &RunFacts<'_>, table: &Table, phase: usize) -> Vec<String> {
    let Some(want) = f.policy.phases[phase].warm else {
        return Vec::new();
    };
    let mut below = Vec::new();
    if !table.warm.units.covers(want) {
        below.push(format!(
            "its warm throughput is {}, the phase's {want}",
            table.warm.units
        ));
    }
    for gsi in table.gsis.iter().filter(|g| !g.warm.units.covers(want)) {
        below.push(format!(
            "index {}'s warm throughput is {}, the phase's {want}",
            gsi.name, gsi.warm.units
        ));
    }
    below
}

/// How the table differs from `phase` in the fake, as (capacity problems, class problems).
pub fn phase_differences(f: &RunFacts<'_>, table: &Table, phase: usize) -> (Vec<String>, Vec<String>) {
    let want = &f.policy.phases[phase];
    let mut capacity = Vec::new();
    match want.autoscaling {
        Some(a) => {
            if !matches!(table.billing, Billing::Provisioned(_)) {
                capacity.push(format!(
                    "it is {}, an autoscaling phase needs provisioned",
                    table.billing
                ));
            }
            let mut resources = vec![(format!("table/{}", table.name), false)];
            resources.extend(
                table
                    .gsis
                    .iter()
                    .map(|g| (format!("table/{}/index/{}", table.name, g.name), true)),
            );
            for (resource_id, index) in resources {
                let dims = if index {
                    [ScalableDimension::IndexRead, ScalableDimension::IndexWrite]
                } else {
                    [ScalableDimension::TableRead, ScalableDimension::TableWrite]
                };
                for dimension in dims {
                    let key = ScalableKey {
                        resource_id: resource_id.clone(),
                        dimension,
                    };
                    let bounds = if dimension.is_read() {
                        (a.min_read, a.max_read)
                    } else {
                        (a.min_write, a.max_write)
                    };
                    match f.after.targets.get(&key) {
                        None => capacity.push(format!("no scalable target {key}")),
                        Some(t) => {
                            if (t.min, t.max) != bounds {
                                capacity.push(format!(
                                    "target {key} has bounds {:?}, the phase {bounds:?}",
                                    (t.min, t.max)
                                ));
                            }
                            let ours = t.policies.iter().any(|p| {
                                p.name == our_policy_name(dimension)
                                    && p.policy_type == "TargetTrackingScaling"
                                    && p.metric.as_deref() == Some(dimension.metric())
                                    && p.target_value == Some(f64::from(a.target))
                            });
                            if !ours {
                                capacity.push(format!(
                                    "target {key} lacks our target-tracking policy at {}%",
                                    a.target
                                ));
                            }
                        }
                    }
                }
            }
        }
        None => {
            if table.billing != want.billing {
                capacity.push(format!("it is {}, the phase {}", table.billing, want.billing));
            }
            for gsi in &table.gsis {
                let index_want = want.billing_of_index(&gsi.name);
                if gsi.billing != index_want {
                    capacity.push(format!(
                        "index {} is {}, the phase {index_want}",
                        gsi.name, gsi.billing
                    ));
                }
            }
            for t in f.after.targets_on(&table.name) {
                if t.policies.iter().any(|p| is_our_policy_name(&p.name)) {
                    capacity.push(format!("our scaling policy is still on {}", t.key));
                }
            }
        }
    }
    let mut class = Vec::new();
    if let Some(c) = want.table_class.filter(|c| *c != table.class) {
        class.push(format!("its class is {}, the phase {c}", table.class));
    }
    (capacity, class)
}

/// The phase the fake's clock calls for: phase 0 inside the write grace, else by age.
pub fn phase_for(policy: &Policy, slot: Slot, now: DateTime<Utc>) -> (i64, usize) {
    let calendar = policy.calendar();
    let age = calendar.periods_between(slot, calendar.floor(now));
    if let Some(grace) = policy.grace {
        if now < calendar.end(slot) + Duration::from_std(grace).expect("a small grace") {
            return (age, 0);
        }
    }
    let phase = policy
        .phases
        .iter()
        .rposition(|p| i64::from(p.min_age) <= age)
        .unwrap_or(0);
    (age, phase)
}

/// Promise 4: after a resize_old run, every table that is provably ours (made by our
/// CreateTable or adopted), was ACTIVE, has the policy's key, and whose parts are all the
/// policy's (no foreign GSI, no foreign or shared scalable target, no other family's tag) and
/// is at least one period old has the phase its age (and grace) calls for, unless its line is
/// deferred for a documented cause the fake confirms.
pub fn resize_old_converges(f: &RunFacts<'_>) -> Vec<String> {
    if f.operation != Operation::ResizeOld {
        return Vec::new();
    }
    let g = f.ground();
    let mut out = Vec::new();
    for before in f.before.tables.values() {
        if !g.provably_ours(before)
            || before.key != f.policy.key
            || before.status != Status::Active
            || g.foreign_on(before).is_some()
        {
            continue;
        }
        let Some(slot) = label_slot(f.policy, &before.name) else {
            continue;
        };
        let (age, phase) = phase_for(f.policy, slot, f.now);
        if age < 1 {
            continue;
        }
        let Some(after) = f
            .after
            .tables
            .get(&before.name)
            .filter(|t| t.status != Status::Deleting)
        else {
            continue;
        };
        count("promise 4: tables checked");
        let (capacity, class) = phase_differences(f, after, phase);
        let warm = warm_differences(f, after, phase);
        if capacity.is_empty() && class.is_empty() && warm.is_empty() {
            continue;
        }
        count("promise 4: tables not in their phase");
        let deferrals: Vec<DeferralCause> = f
            .report
            .tables
            .iter()
            .filter(|l| l.item.table == before.name && l.outcome == Outcome::Deferred)
            .filter_map(|l| l.deferral)
            .collect();
        let confirmed: Vec<Result<(), String>> =
            deferrals.iter().map(|c| confirm_deferral(f, after, *c)).collect();
        let excused = confirmed.iter().any(Result::is_ok);
        for (cause, confirmed) in deferrals.iter().zip(&confirmed) {
            if confirmed.is_ok() {
                let actions: Vec<&str> = f
                    .report
                    .tables
                    .iter()
                    .filter(|l| l.item.table == before.name && l.deferral == Some(*cause))
                    .map(|l| l.item.decision.action())
                    .collect();
                count(format!("promise 4: excused by {cause} on {actions:?}"));
            }
        }
        let updated = f.effects().any(|(_, e)| {
            e.table() == before.name
                && matches!(
                    e,
                    Effect::TableCapacity { .. }
                        | Effect::IndexCapacity { .. }
                        | Effect::Setting { .. }
                        | Effect::AddedIndex { .. }
                )
        });
        // A warm throughput raise is an UpdateTable of its own: it waits for any other.
        let updated_at_all = updated
            || f.effects()
                .any(|(_, e)| e.table() == before.name && matches!(e, Effect::TableClass { .. }));
        let mut problems = Vec::new();
        if !capacity.is_empty() && !excused {
            problems.extend(capacity);
        }
        if !class.is_empty() && !excused && !updated {
            problems.extend(class);
        }
        if !warm.is_empty() && !excused && !updated_at_all {
            problems.extend(warm);
        }
        if problems.is_empty() {
            continue;
        }
        let unconfirmed: Vec<String> = confirmed.into_iter().filter_map(Result::err).collect();
        out.push(format!(
            "{}: {} (age {age}) should be in phase {phase} but {}{}; its lines: {}",
            f.step,
            before.name,
            problems.join(", "),
            if unconfirmed.is_empty() {
                String::new()
            } else {
                format!(" (and {})", unconfirmed.join("; "))
            },
            f.lines_of(&before.name)
        ));
    }
    out
}

/// Promise 5: for every table, the changes `status` predicted for the operation (its next run's
/// decision and that operation's other changes) are the changes the run planned, on the same
/// verdict; a change the role refused was warned of.
pub fn status_predicts_run(f: &RunFacts<'_>) -> Vec<String> {
    let mut predicted: BTreeMap<&str, Vec<&'static str>> = BTreeMap::new();
    let mut reasons: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for line in &f.status.tables {
        let main = match f.operation {
            Operation::CreateNew => &line.create_new,
            Operation::ResizeOld => &line.resize_old,
        };
        let entry = predicted.entry(line.table.as_str()).or_default();
        let why = reasons.entry(line.table.as_str()).or_default();
        if let Some(next) = main {
            why.push(format!("{}: {}", next.decision.action(), next.reason));
            if next.decision.is_change() {
                entry.push(next.decision.action());
            }
        }
        for other in line.other_changes.iter().filter(|o| o.operation == f.operation) {
            why.push(format!("{}: {}", other.decision.action(), other.reason));
            if other.decision.is_change() {
                entry.push(other.decision.action());
            }
        }
    }
    let mut done: BTreeMap<&str, Vec<&'static str>> = BTreeMap::new();
    for line in &f.report.tables {
        let entry = done.entry(line.item.table.as_str()).or_default();
        if line.item.decision.is_change() {
            entry.push(line.item.decision.action());
        }
    }
    let names: BTreeSet<&str> = predicted.keys().chain(done.keys()).copied().collect();
    let mut out = Vec::new();
    // A change the role refused (a name of our shape that another family's tag claims, which
    // the run decided on without reading its tags): status, reading everything, warned of it.
    for line in f.report.tables.iter().filter(|l| {
        l.outcome == Outcome::Failed
            && l.error
                .as_deref()
                .is_some_and(|e| e.contains("AccessDeniedException"))
    }) {
        let table = line.item.table.as_str();
        if !f.status.warnings.iter().any(|w| w.contains(table)) {
            out.push(format!(
                "{}: {table}: the run's {} was refused by the role ({}), and status did not warn of it; its warnings: {:?}",
                f.step,
                line.item.decision.action(),
                line.error.as_deref().unwrap_or_default(),
                f.status.warnings
            ));
        }
    }
    for line in &f.report.tables {
        let Some(status_line) = f.status.tables.iter().find(|l| l.table == line.item.table) else {
            continue;
        };
        let main = match f.operation {
            Operation::CreateNew => &status_line.create_new,
            Operation::ResizeOld => &status_line.resize_old,
        };
        let predicted = main.as_ref().and_then(|n| n.verdict.as_ref());
        if predicted != line.item.verdict.as_ref() {
            out.push(format!(
                "{}: {}: status's {} verdict was {:?}, the run's line ({}) decided on {:?}",
                f.step,
                line.item.table,
                f.operation,
                predicted,
                line.item.decision.action(),
                line.item.verdict
            ));
        }
    }
    for name in names {
        let mut want = predicted.get(name).cloned().unwrap_or_default();
        let mut have = done.get(name).cloned().unwrap_or_default();
        want.sort_unstable();
        have.sort_unstable();
        if want != have {
            out.push(format!(
                "{}: {name}: status predicted the changes {want:?} for {}, the run planned {have:?}; status said {:?}; the run's lines: {}",
                f.step,
                f.operation,
                reasons.get(name).cloned().unwrap_or_default(),
                f.lines_of(name)
            ));
        }
    }
    out
}

// ------------------------------------------------------------------------------------------
// What the cases exercised (`PROMISES_STATS=1` prints it after the run)

static STATS: std::sync::Mutex<BTreeMap<String, u64>> = std::sync::Mutex::new(BTreeMap::new());

pub fn count(what: impl Into<String>) {
    *STATS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(what.into())
        .or_default() += 1;
}

/// Counts what one of our runs did: each effect by kind, each line by action and outcome.
pub fn count_run(f: &RunFacts<'_>) {
    count(format!("run {}", f.operation));
    for (_, effect) in f.effects() {
        let kind = format!("{effect:?}");
        let kind = kind.split([' ', '{', '(']).next().unwrap_or_default().to_string();
        count(format!("effect {kind}"));
    }
    for line in &f.report.tables {
        let mut key = format!(
            "line {} {} {}",
            f.operation,
            line.item.decision.action(),
            line.outcome.as_str()
        );
        if let Some(cause) = line.deferral {
            key.push_str(&format!(" ({cause})"));
        }
        if let Some(error) = line.error.as_deref().filter(|_| line.outcome == Outcome::Failed) {
            let short: String = error.chars().take(90).collect();
            key.push_str(&format!(": {short}"));
        }
        count(key);
        // What the verdict rested on: its owner, each foreign part, each missing evidence of a
        // table past delete_after.
        if let Some(verdict) = &line.item.verdict {
            count(format!("verdict {}", verdict.label()));
            for part in &verdict.foreign {
                let kind = match part {
                    ddb_rollover::plan::verdict::ForeignPart::Index { .. } => "index",
                    ddb_rollover::plan::verdict::ForeignPart::Target { .. } => "target",
                    ddb_rollover::plan::verdict::ForeignPart::SharedTarget { .. } => "shared target",
                    ddb_rollover::plan::verdict::ForeignPart::DeletionProtection => "deletion protection",
                    ddb_rollover::plan::verdict::ForeignPart::ResourcePolicy { .. } => "resource policy",
                };
                count(format!("verdict foreign part: {kind}"));
            }
            if line.item.reason.contains("no positive evidence") {
                for missing in &verdict.not_deletable {
                    count(format!("retention kept: {missing:?}"));
                }
            }
        }
    }
}

/// The statements of `table`'s resource-based policy that are not a seal (a Deny of item
/// writes to everyone under the seal's Sid): someone else's, by Sid.
fn foreign_statements(table: &Table) -> Vec<String> {
    let Some(document) = table
        .resource_policy
        .as_ref()
        .and_then(|p| serde_json::from_str::<serde_json::Value>(&p.document).ok())
    else {
        return Vec::new();
    };
    let statements = match &document["Statement"] {
        serde_json::Value::Array(list) => list.clone(),
        one @ serde_json::Value::Object(_) => vec![one.clone()],
        _ => Vec::new(),
    };
    statements
        .iter()
        .filter(|s| {
            !(s["Sid"] == ddb_rollover::table::seal::SEAL_SID
                && s["Effect"] == "Deny"
                && s["Principal"] == "*")
        })
        .map(|s| s["Sid"].as_str().unwrap_or("(no Sid)").to_string())
        .collect()
}

/// What the cases exercised so far, by kind.
pub fn stats() -> BTreeMap<String, u64> {
    STATS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

pub fn print_stats() {
    if std::env::var_os("PROMISES_STATS").is_none() {
        return;
    }
    for (what, n) in STATS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        eprintln!("{n:>9}  {what}");
    }
}

// ------------------------------------------------------------------------------------------
// The harness

pub fn checks() -> BTreeSet<u8> {
    match std::env::var("PROMISES_CHECK") {
        Ok(list) if !list.trim().is_empty() => {
            list.split(',').filter_map(|s| s.trim().parse().ok()).collect()
        }
        _ => (1..=6).collect(),
    }
}

/// What one of our runs did, from the account's ground truth.
pub struct Ran {
    /// The account just before and just after the run.
    pub before: World,
    pub after: World,
    /// Our mutating calls during the run, each with what it did.
    pub calls: Vec<fake_aws::Call>,
    pub report: RunReport,
    /// `status` from a full observation just before the run.
    pub status: StatusReport,
}

/// An AWS account the scenarios play in: [`fake_aws::FakeAws`] (`promises.rs`), or moto behind
/// the testkit proxy's AWS behaviours (`promises_moto.rs`). Foreign acts may be refused (by
/// DynamoDB's rules): the harness ignores their errors, as life does.
pub trait Account {
    /// The scenario's clock.
    fn now(&self) -> DateTime<Utc>;
    /// Moves the clock to `t` (never backwards).
    fn set_now(&self, t: DateTime<Utc>);
    fn advance(&self, by: Duration);
    /// The account's state with its ground truth: who made each table, target and policy,
    /// which tables the operator adopted.
    fn world(&self) -> World;
    /// One of our runs at the clock's time, through our family's role, with `status` from a
    /// full observation just before it.
    fn our_run(&self, policy: &Policy, operation: Operation) -> Result<Ran, String>;
    /// The nested family's own run, through its role.
    fn sibling_run(&self, sibling: &Policy, operation: Operation);
    /// The operator's real `adopt` of `table` with its own credentials (no role): its report,
    /// and the tables it really wrote our family tag on, which the ground truth now counts
    /// as adopted.
    fn adopt(&self, policy: &Policy, table: &str) -> (Result<AdoptReport, String>, Vec<String>);
    fn create_table(&self, who: &str, spec: &TableSpec) -> Result<(), String>;
    fn tag(&self, who: &str, table: &str, tags: BTreeMap<String, String>) -> Result<(), String>;
    fn untag(&self, who: &str, table: &str, keys: &[String]) -> Result<(), String>;
    /// The table's throughput (every index's too when `to` is provisioned).
    fn update_capacity(&self, who: &str, table: &str, to: Billing) -> Result<(), String>;
    fn update_index_capacity(&self, who: &str, table: &str, index: &str, to: Billing) -> Result<(), String>;
    fn delete_table(&self, who: &str, table: &str) -> Result<(), String>;
    fn add_index(&self, who: &str, table: &str, index: &GlobalIndex, billing: Billing) -> Result<(), String>;
    fn register_target(&self, who: &str, key: &ScalableKey, min: i64, max: i64) -> Result<(), String>;
    /// `StepScaling`, or `TargetTrackingScaling` on the dimension's utilisation at 50%.
    fn put_policy(&self, who: &str, key: &ScalableKey, name: &str, policy_type: &str) -> Result<(), String>;
    /// DeregisterScalableTarget: every policy on the target goes with it.
    fn deregister_target(&self, who: &str, key: &ScalableKey) -> Result<(), String>;
    fn delete_policy(&self, who: &str, key: &ScalableKey, name: &str) -> Result<(), String>;
    /// Pre-warms the table (`index` None) or one of its indexes to `to` (UpdateTable).
    fn raise_warm(
        &self,
        who: &str,
        table: &str,
        index: Option<&str>,
        to: WarmThroughput,
    ) -> Result<(), String>;
    /// The application's item writes (BatchWriteItem); an account that does not model items
    /// refuses them.
    fn write_items(&self, who: &str, table: &str, items: &[String]) -> Result<(), String> {
        let _ = (who, table, items);
        Err("this account does not model items".into())
    }
    /// Someone else's unconditional PutResourcePolicy.
    fn put_resource_policy(&self, who: &str, table: &str, document: &str) -> Result<(), String> {
        let _ = (who, table, document);
        Err("this account does not model resource-based policies".into())
    }
    /// Someone else's unconditional DeleteResourcePolicy.
    fn delete_resource_policy(&self, who: &str, table: &str) -> Result<(), String> {
        let _ = (who, table);
        Err("this account does not model resource-based policies".into())
    }
    /// Disables the table's KMS key: INACCESSIBLE_ENCRYPTION_CREDENTIALS, then archived.
    fn disable_key(&self, who: &str, table: &str) -> Result<(), String>;
    /// PutScheduledAction on a registered target.
    fn put_scheduled_action(&self, who: &str, key: &ScalableKey, name: &str) -> Result<(), String>;
    fn delete_scheduled_action(&self, who: &str, key: &ScalableKey, name: &str) -> Result<(), String>;
    /// UpdateTable DeletionProtectionEnabled.
    fn set_deletion_protection(&self, who: &str, table: &str, on: bool) -> Result<(), String>;
    /// An S3 act on `export` (one of [`World::exports`]) in its bucket. Unmodelled by default.
    fn archive_act(&self, who: &str, export: &fake_aws::Export, act: ArchiveAct) -> Result<(), String> {
        let _ = (who, export, act);
        Err("S3 acts are not modelled in this account".into())
    }
}

/// Plays one case in an account, checking the promises after each of our runs.
pub struct Harness<'a, A: Account> {
    pub case: &'a Case,
    pub policy: Policy,
    pub sibling: Policy,
    pub account: A,
    pub checks: BTreeSet<u8>,
    pub knobs: Knobs,
}

pub fn options() -> ApplyOptions {
    ApplyOptions {
        readiness_wait: std::time::Duration::from_secs(120),
        ..ApplyOptions::default()
    }
}

pub fn other_key() -> KeySchema {
    KeySchema {
        partition: KeyAttribute {
            name: "id".into(),
            kind: AttributeKind::S,
        },
        sort: None,
    }
}

pub fn on_demand() -> Billing {
    Billing::OnDemand(OnDemandLimits::default())
}

pub fn provisioned(read: i64, write: i64) -> Billing {
    Billing::Provisioned(Capacity { read, write })
}

impl<A: Account> Harness<'_, A> {
    fn calendar_boundary(&self, periods: u32) -> DateTime<Utc> {
        let calendar = self.policy.calendar();
        calendar.start_after(calendar.floor(self.account.now()), periods)
    }

    fn grace(&self) -> Duration {
        self.policy
            .grace
            .map(|g| Duration::from_std(g).expect("a small grace"))
            .unwrap_or_else(Duration::zero)
    }

    fn before_boundary(&self, periods: u32) {
        let mut at = self.calendar_boundary(periods) - Duration::minutes(15);
        if at <= self.account.now() {
            at = self.calendar_boundary(periods + 1) - Duration::minutes(15);
        }
        self.account.set_now(at);
    }

    fn after_boundary(&self, periods: u32, past_grace: bool) {
        let grace = if past_grace {
            self.grace()
        } else {
            Duration::zero()
        };
        self.account
            .set_now(self.calendar_boundary(periods) + Duration::minutes(15) + grace);
    }

    /// Our tables (made by our runs), sorted by name.
    fn ours(&self) -> Vec<String> {
        self.account
            .world()
            .tables
            .values()
            .filter(|t| t.maker == Maker::Us)
            .map(|t| t.name.clone())
            .collect()
    }

    fn pick(list: &[String], pick: usize) -> Option<&String> {
        (!list.is_empty()).then(|| &list[pick % list.len()])
    }

    fn hand_made(&self, act: &Act) -> TableSpec {
        let Act::HandMade {
            at,
            name,
            our_key,
            gsi,
            lsi,
            tags,
            on_demand: od,
        } = act
        else {
            unreachable!()
        };
        let calendar = self.policy.calendar();
        let current = calendar.floor(self.account.now());
        let mut slot = current;
        for _ in 0..at.unsigned_abs() {
            slot = if *at < 0 {
                calendar.previous(slot)
            } else {
                calendar.next(slot)
            };
        }
        let label = calendar.label(slot);
        let name = match name {
            NameKind::Exact => format!("{PREFIX}_{label}"),
            NameKind::Suffixed => format!("{PREFIX}_{label}_old"),
            NameKind::Nested => format!("{SIBLING}_{label}"),
        };
        let key = if *our_key {
            self.policy.key.clone()
        } else {
            other_key()
        };
        let billing = if *od && self.knobs.on("hand_made_on_demand") {
            on_demand()
        } else {
            provisioned(5, 5)
        };
        let policy_index = self.policy.indexes.first();
        let index = match (gsi, policy_index) {
            (GsiKind::Policy, Some(i)) => Some(i.clone()),
            (GsiKind::SameNameOtherKey, Some(i)) => Some(GlobalIndex {
                name: i.name.clone(),
                key: other_key(),
                projection: Projection::All,
            }),
            (GsiKind::Extra, _) | (GsiKind::Policy | GsiKind::SameNameOtherKey, None)
                if !matches!(gsi, GsiKind::None) && self.knobs.on("hand_made_extra_gsi") =>
            {
                Some(GlobalIndex {
                    name: "ops_index".into(),
                    key: other_key(),
                    projection: Projection::KeysOnly,
                })
            }
            _ => None,
        };
        let local = match (lsi, &key.sort) {
            (true, Some(_)) => self.policy.local_indexes.first().cloned().or_else(|| {
                Some(LocalIndex {
                    name: "ops_local".into(),
                    sort: KeyAttribute {
                        name: "other".into(),
                        kind: AttributeKind::S,
                    },
                    projection: Projection::All,
                })
            }),
            _ => None,
        };
        let tags = match tags {
            TagKind::None => BTreeMap::new(),
            TagKind::User => BTreeMap::from([("team".to_string(), "ops".to_string())]),
            TagKind::OtherFamily => BTreeMap::from([(FAMILY_TAG.to_string(), SIBLING.to_string())]),
        };
        TableSpec {
            name,
            key,
            billing,
            global_indexes: index
                .into_iter()
                .map(|index| IndexSpec { index, billing })
                .collect(),
            local_indexes: local.into_iter().collect(),
            table_class: None,
            deletion_protection: false,
            stream: None,
            encryption: None,
            tags,
            warm: None,
        }
    }

    /// A foreign act; refusals by DynamoDB are part of life and ignored.
    fn act(&self, act: &Act) {
        let account = &self.account;
        let ours = self.ours();
        match act {
            Act::HandMade { .. } => {
                let _ = account.create_table(PERSON, &self.hand_made(act));
            }
            Act::Restored { ago, on_demand: od } => {
                let calendar = self.policy.calendar();
                let mut slot = calendar.floor(account.now());
                for _ in 0..*ago {
                    slot = calendar.previous(slot);
                }
                let billing = if *od && self.knobs.on("hand_made_on_demand") {
                    on_demand()
                } else {
                    provisioned(7, 7)
                };
                let spec = TableSpec {
                    name: format!("{PREFIX}_{}", calendar.label(slot)),
                    key: self.policy.key.clone(),
                    billing,
                    global_indexes: self
                        .policy
                        .indexes
                        .iter()
                        .map(|index| IndexSpec {
                            index: index.clone(),
                            billing,
                        })
                        .collect(),
                    local_indexes: self.policy.local_indexes.clone(),
                    table_class: None,
                    deletion_protection: false,
                    stream: None,
                    encryption: None,
                    tags: BTreeMap::new(),
                    warm: None,
                };
                let _ = account.create_table(PERSON, &spec);
            }
            Act::Sibling(operation) => {
                account.sibling_run(&self.sibling, *operation);
            }
            Act::TagOtherFamily { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let tags = BTreeMap::from([(FAMILY_TAG.to_string(), SIBLING.to_string())]);
                    let _ = account.tag(PERSON, name, tags);
                }
            }
            Act::UntagFamily { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let _ = account.untag(PERSON, name, &[FAMILY_TAG.to_string()]);
                }
            }
            Act::Capacity { pick, to } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let to = to.map_or_else(on_demand, |(r, w)| provisioned(r, w));
                    let _ = account.update_capacity(PERSON, name, to);
                }
            }
            Act::Delete { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let _ = account.delete_table(PERSON, name);
                }
            }
            Act::DeleteNewest => {
                if let Some(name) = ours.last() {
                    let _ = account.delete_table(PERSON, name);
                }
            }
            Act::Target {
                pick,
                index,
                read,
                policy,
            } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let gsi = if *index {
                    account
                        .world()
                        .tables
                        .get(name)
                        .and_then(|t| t.gsis.first().map(|g| g.name.clone()))
                } else {
                    None
                };
                let dimension = match (gsi.is_some(), read) {
                    (false, true) => ScalableDimension::TableRead,
                    (false, false) => ScalableDimension::TableWrite,
                    (true, true) => ScalableDimension::IndexRead,
                    (true, false) => ScalableDimension::IndexWrite,
                };
                let key = fake_aws::key_for(name, gsi.as_deref(), dimension);
                if account.register_target(PERSON, &key, 1, 10).is_ok() && *policy {
                    let _ = account.put_policy(PERSON, &key, "ops-target-tracking", "TargetTrackingScaling");
                }
            }
            Act::StepPolicy { pick } => {
                let keys = our_target_keys(&account.world());
                if !keys.is_empty() {
                    let key = &keys[pick % keys.len()];
                    let _ = account.put_policy(PERSON, key, "ops-step-scaling", "StepScaling");
                }
            }
            Act::AddIndex { pick, like_policy } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let index = match (like_policy, self.policy.indexes.first()) {
                    (true, Some(i)) => GlobalIndex {
                        name: i.name.clone(),
                        key: other_key(),
                        projection: Projection::All,
                    },
                    (true, None) => return,
                    (false, _) => GlobalIndex {
                        name: "ops_index".into(),
                        key: other_key(),
                        projection: Projection::KeysOnly,
                    },
                };
                let billing = match account.world().tables.get(name).map(|t| t.billing) {
                    Some(Billing::OnDemand(_)) => on_demand(),
                    _ => provisioned(5, 5),
                };
                let _ = account.add_index(PERSON, name, &index, billing);
            }
            Act::DropScaling { pick, deregister } => {
                let keys = our_target_keys(&account.world());
                if keys.is_empty() {
                    return;
                }
                let key = &keys[pick % keys.len()];
                if *deregister {
                    let _ = account.deregister_target(PERSON, key);
                } else {
                    let _ = account.delete_policy(PERSON, key, &our_policy_name(key.dimension));
                }
            }
            Act::SpendDecreases { pick, index } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                // One increase (free), then decreases one unit at a time: the capacity stays
                // above what it was, so a phase change that lowers it meets a spent budget.
                for step in 0..=fake_aws::FREE_DECREASES + 1 {
                    let world = account.world();
                    let lowered = (|| {
                        let table = world.tables.get(name)?;
                        let gsi = table.gsis.first().filter(|_| *index);
                        let billing = gsi.map_or(table.billing, |g| g.billing);
                        let Billing::Provisioned(c) = billing else {
                            return None;
                        };
                        let read = if step == 0 { c.read + 100 } else { c.read - 1 };
                        Some((gsi.map(|g| g.name.clone()), provisioned(read, c.write)))
                    })();
                    let Some((gsi, to)) = lowered else {
                        return;
                    };
                    let done = match gsi {
                        Some(gsi) => account.update_index_capacity(PERSON, name, &gsi, to),
                        None => account.update_capacity(PERSON, name, to),
                    };
                    if done.is_err() {
                        return;
                    }
                    account.advance(Duration::seconds(15));
                }
            }
            Act::DisableKey { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let _ = account.disable_key(PERSON, name);
                }
            }
            Act::Archive { pick, act } => {
                let world = account.world();
                let done: Vec<&fake_aws::Export> = world
                    .exports
                    .values()
                    .filter(|e| e.status == ddb_rollover::table::ExportStatus::Completed)
                    .collect();
                if done.is_empty() {
                    return;
                }
                let _ = account.archive_act(PERSON, done[*pick % done.len()], *act);
            }
            Act::PreWarm { pick, index, high } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let gsi = if *index {
                    account
                        .world()
                        .tables
                        .get(name)
                        .and_then(|t| t.gsis.first().map(|g| g.name.clone()))
                } else {
                    None
                };
                let _ = account.raise_warm(PERSON, name, gsi.as_deref(), pre_warmed(*high));
            }
            Act::WriteItems { pick, n } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let stamp = account.now().timestamp_millis();
                let items: Vec<String> = (0..*n).map(|i| format!("{name}#{stamp}#{i}")).collect();
                match account.write_items(PERSON, name, &items) {
                    Ok(()) => count("item writes accepted"),
                    Err(e) if e.contains("AccessDeniedException") => count("item writes refused by a seal"),
                    Err(_) => count("item writes refused"),
                }
            }
            Act::ResourcePolicy { pick } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let theirs = serde_json::json!({
                    "Sid": "TheirReaders",
                    "Effect": "Allow",
                    "Principal": {"AWS": "arn:aws:iam::123456789012:role/readers"},
                    "Action": "dynamodb:GetItem",
                    "Resource": fake_aws::TABLE_ARN_PREFIX.to_string() + name,
                });
                let _ = match pick % 4 {
                    0 => account.put_resource_policy(
                        PERSON,
                        name,
                        &serde_json::json!({"Version": "2012-10-17", "Statement": [theirs]}).to_string(),
                    ),
                    1 => {
                        let current = account
                            .world()
                            .tables
                            .get(name)
                            .and_then(|t| t.resource_policy.as_ref())
                            .and_then(|p| serde_json::from_str::<serde_json::Value>(&p.document).ok());
                        let mut document = current
                            .unwrap_or_else(|| serde_json::json!({"Version": "2012-10-17", "Statement": []}));
                        if let Some(list) = document["Statement"].as_array_mut() {
                            list.push(theirs);
                        }
                        account.put_resource_policy(PERSON, name, &document.to_string())
                    }
                    2 => account.delete_resource_policy(PERSON, name),
                    _ => {
                        let impostor = serde_json::json!({
                            "Sid": ddb_rollover::table::seal::SEAL_SID,
                            "Effect": "Allow",
                            "Principal": "*",
                            "Action": "dynamodb:PutItem",
                            "Resource": fake_aws::TABLE_ARN_PREFIX.to_string() + name,
                        });
                        account.put_resource_policy(
                            PERSON,
                            name,
                            &serde_json::json!({"Version": "2012-10-17", "Statement": [impostor]})
                                .to_string(),
                        )
                    }
                };
            }
            Act::TagPeriod { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let tags = BTreeMap::from([
                        (
                            "ddb-rollover:period-start".to_string(),
                            "2001-01-01T00:00:00+00:00".to_string(),
                        ),
                        (
                            "ddb-rollover:period-end".to_string(),
                            "2001-01-02T00:00:00+00:00".to_string(),
                        ),
                    ]);
                    let _ = account.tag(PERSON, name, tags);
                }
            }
            Act::ScheduledAction {
                pick,
                index,
                read,
                delete,
            } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let gsi = if *index {
                    account
                        .world()
                        .tables
                        .get(name)
                        .and_then(|t| t.gsis.first().map(|g| g.name.clone()))
                } else {
                    None
                };
                let dimension = match (gsi.is_some(), read) {
                    (false, true) => ScalableDimension::TableRead,
                    (false, false) => ScalableDimension::TableWrite,
                    (true, true) => ScalableDimension::IndexRead,
                    (true, false) => ScalableDimension::IndexWrite,
                };
                let key = fake_aws::key_for(name, gsi.as_deref(), dimension);
                let world = account.world();
                if *delete {
                    for action in world
                        .targets
                        .get(&key)
                        .into_iter()
                        .flat_map(|t| &t.scheduled_actions)
                    {
                        let _ = account.delete_scheduled_action(PERSON, &key, &action.name);
                    }
                    return;
                }
                let registered =
                    world.targets.contains_key(&key) || account.register_target(PERSON, &key, 1, 10).is_ok();
                if registered {
                    let _ = account.put_scheduled_action(PERSON, &key, "ops-nightly");
                }
            }
            Act::DeletionProtection { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let _ = account.set_deletion_protection(PERSON, name, true);
                }
            }
            Act::Adopt { pick, claimable } => {
                // The operator names a table under our prefix that our runs did not make; the
                // real `adopt`, with the operator's own credentials, decides whether to tag it.
                let world = account.world();
                let candidates: Vec<String> = {
                    let w = &world;
                    let g = Ground {
                        policy: &self.policy,
                        world: w,
                    };
                    let any: Vec<String> = w
                        .tables
                        .values()
                        .filter(|t| t.name.starts_with(&format!("{PREFIX}_")) && !g.provably_ours(t))
                        .map(|t| t.name.clone())
                        .collect();
                    let by_name: Vec<String> = w
                        .tables
                        .values()
                        .filter(|t| g.claimable_by_name(t))
                        .map(|t| t.name.clone())
                        .collect();
                    if *claimable && !by_name.is_empty() {
                        by_name
                    } else {
                        any
                    }
                };
                let Some(name) = Self::pick(&candidates, *pick) else {
                    return;
                };
                let (report, tagged) = account.adopt(&self.policy, name);
                if let Ok(report) = &report {
                    for line in &report.tables {
                        match &line.adoption {
                            ddb_rollover::run::adopt::Adoption::Refused { reasons } => {
                                for reason in reasons {
                                    let short: String = reason.chars().take(60).collect();
                                    count(format!("adopt refused: {short}"));
                                }
                            }
                            _ => count(format!("adopt {}", line.outcome)),
                        }
                    }
                }
                if let Ok(report) = report {
                    let done: Vec<&str> = report
                        .tables
                        .iter()
                        .filter(|l| l.outcome == "done")
                        .map(|l| l.table.as_str())
                        .collect();
                    assert_eq!(
                        done, tagged,
                        "adopt reported {done:?} done but tagged {tagged:?}: {report:?}"
                    );
                }
            }
        }
    }

    /// One of our runs, with the promises checked around it.
    fn our_run(&self, index: usize, operation: Operation) -> Result<(), String> {
        let now = self.account.now();
        let step = format!("step {index} ({operation} at {})", now.to_rfc3339());
        let ran = self
            .account
            .our_run(&self.policy, operation)
            .map_err(|e| format!("{step}: {e}"))?;
        let facts = RunFacts {
            step,
            policy: &self.policy,
            operation,
            now,
            before: &ran.before,
            after: &ran.after,
            calls: &ran.calls,
            report: &ran.report,
            status: &ran.status,
        };
        let invariants: [(u8, &str, Invariant); 5] = [
            (1, "nothing foreign changed", nothing_foreign_changed),
            (2, "no data loss", no_data_loss),
            (3, "create_new is loud", create_new_is_loud),
            (4, "resize_old converges", resize_old_converges),
            (5, "status predicts the run", status_predicts_run),
        ];
        count_run(&facts);
        for (number, name, check) in invariants {
            if !self.checks.contains(&number) {
                continue;
            }
            let violations = check(&facts);
            if !violations.is_empty() {
                return Err(format!(
                    "promise {number} ({name}) broken:\n  {}\n--- policy ---\n{}",
                    violations.join("\n  "),
                    self.case.toml
                ));
            }
        }
        Ok(())
    }

    /// Every step of the case in turn; the first broken promise ends it.
    pub fn run_case(&self) -> Result<(), String> {
        for (index, step) in self.case.steps.iter().enumerate() {
            match step {
                Step::Before { periods } => self.before_boundary(*periods),
                Step::After { periods, past_grace } => self.after_boundary(*periods, *past_grace),
                Step::Wait { seconds } => self.account.advance(Duration::seconds(*seconds)),
                Step::CreateNew => self.our_run(index, Operation::CreateNew)?,
                Step::ResizeOld => self.our_run(index, Operation::ResizeOld)?,
                Step::Schedule { cycles } => {
                    for _ in 0..*cycles {
                        self.before_boundary(1);
                        self.our_run(index, Operation::CreateNew)?;
                        self.after_boundary(1, true);
                        self.our_run(index, Operation::ResizeOld)?;
                    }
                }
                Step::Foreign(act) => self.act(act),
            }
            if self.checks.contains(&6) {
                let violations = archives_hold_every_write(&self.policy, &self.account.world());
                if !violations.is_empty() {
                    return Err(format!(
                        "promise 6 (archives hold every accepted write) broken after step {index}:\n  {}\n--- policy ---\n{}",
                        violations.join("\n  "),
                        self.case.toml
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Our scalable targets (one of our policies on them), by key.
pub fn our_target_keys(world: &World) -> Vec<ScalableKey> {
    world
        .targets
        .values()
        .filter(|t| t.policies.iter().any(|p| is_our_policy_name(&p.name)))
        .map(|t| t.key.clone())
        .collect()
}
