//! The sample: the documented cases the replay plays, and `PROMISES_MOTO_SEEDS` more drawn
//! from the property test's generator.

use super::*;

pub(super) fn phase(gap: u32, kind: PhaseKind) -> PhaseSpec {
    PhaseSpec {
        gap,
        kind,
        class: None,
        warm: None,
    }
}

pub(super) fn daily(premake: u32, phases: Vec<PhaseSpec>) -> PolicySpec {
    PolicySpec {
        period: "day",
        timezone: "UTC",
        premake,
        gsi: true,
        lsi: false,
        grace: None,
        ttl: false,
        deletion_protection: false,
        phases,
        retention: None,
        stream: None,
        consumer: false,
        table_stream: false,
    }
}

/// One replayed case: its name, the case, and what it must exercise (each a piece of the
/// `PROMISES_STATS` keys its runs must produce: a line's action, outcome and error, an
/// effect, an adoption), so a change to the engine or the harness cannot quietly take the
/// sample's point away.
pub(super) struct Sampled {
    pub(super) name: String,
    pub(super) case: Case,
    pub(super) exercises: Vec<&'static str>,
}

/// Retention that deletes (never archives) a table `days` periods old, keeping the newest
/// `keep_newest` and deleting at most `max_deletes` a run.
fn deleting_after(days: u32, keep_newest: u32, max_deletes: u32) -> Option<RetentionSpec> {
    Some(RetentionSpec {
        delete_after: Some(days),
        archive_after: None,
        keep_newest,
        max_deletes,
    })
}

pub(super) fn case(name: &str, spec: PolicySpec, steps: Vec<Step>, exercises: &[&'static str]) -> Sampled {
    let toml = spec.toml(PREFIX);
    Policy::from_toml(&toml).unwrap_or_else(|e| panic!("{name}: {e}\n{toml}"));
    Sampled {
        name: name.to_string(),
        case: Case {
            spec,
            toml,
            start: Utc.with_ymd_and_hms(2024, 3, 29, 12, 0, 0).unwrap(),
            slow: Slowness::default(),
            steps,
        },
        exercises: exercises.to_vec(),
    }
}

pub(super) fn foreign(act: Act) -> Step {
    Step::Foreign(act)
}

pub(super) fn schedule(cycles: u32) -> Step {
    Step::Schedule { cycles }
}

pub(super) fn hand_made(at: i32, name: NameKind, our_key: bool, gsi: GsiKind, tags: TagKind) -> Step {
    foreign(Act::HandMade {
        at,
        name,
        our_key,
        gsi,
        lsi: false,
        tags,
        on_demand: false,
    })
}

/// The replayed cases, each documented by what it covers.
pub(super) fn sample() -> Vec<Sampled> {
    vec![
        // Foreign scaling: someone's target with a target-tracking policy on a dimension of a
        // table of ours that left autoscaling, their step policy on one of our targets (a shared
        // target), their bounds on our index's target, our policy deleted from one target and
        // another of ours deregistered by them; the tables go from autoscaling to a fixed phase,
        // to autoscaling with other bounds, and to a fixed phase again. Our policy alone leaves
        // a shared target (never deregistered: through the proxy, as on AWS, that would delete
        // theirs), and a dimension a foreign target holds keeps its throughput.
        case(
            "foreign scalable targets and policies",
            daily(
                1,
                vec![
                    phase(0, PhaseKind::Autoscaling { wide: false }),
                    phase(1, PhaseKind::Provisioned(50, 50)),
                    phase(1, PhaseKind::Autoscaling { wide: true }),
                    phase(1, PhaseKind::Provisioned(1, 1)),
                ],
            ),
            vec![
                schedule(1),
                foreign(Act::Target {
                    pick: 0,
                    index: false,
                    read: true,
                    policy: true,
                }),
                foreign(Act::StepPolicy { pick: 1 }),
                foreign(Act::Target {
                    pick: 1,
                    index: true,
                    read: false,
                    policy: false,
                }),
                schedule(1),
                foreign(Act::DropScaling {
                    pick: 0,
                    deregister: false,
                }),
                foreign(Act::DropScaling {
                    pick: 2,
                    deregister: true,
                }),
                schedule(3),
            ],
            &[
                "line resize_old deregister_scaling done",
                "line resize_old register_scaling done",
                "line create_new register_scaling done",
                "effect DeletedPolicy",
                "effect DeregisteredTarget",
                "verdict foreign part: shared target",
                "verdict foreign part: target",
            ],
        ),
        // Hand-made tables and another family: a table named like yesterday's of ours, with our
        // key, tagged for `ts_eu` (not in the ledger `init` starts: never touched); a look-alike
        // (another key) holding tomorrow's name (create_new fails loudly, the table is never
        // touched); a suffixed name; the nested family's own runs and an untagged `ts_eu_...`
        // table with an index of its own; another family's tag put on one of our tables (its
        // next phase change left the same way) and our family tag removed from another (retention keeps
        // it: no positive evidence).
        case(
            "hand-made tables and another family's tags",
            PolicySpec {
                retention: deleting_after(3, 1, 3),
                ..daily(
                    1,
                    vec![
                        phase(0, PhaseKind::Provisioned(100, 100)),
                        phase(1, PhaseKind::Provisioned(10, 5)),
                        phase(1, PhaseKind::OnDemand(None)),
                    ],
                )
            },
            vec![
                hand_made(-1, NameKind::Exact, true, GsiKind::Policy, TagKind::OtherFamily),
                hand_made(-1, NameKind::Suffixed, true, GsiKind::None, TagKind::None),
                hand_made(1, NameKind::Exact, false, GsiKind::None, TagKind::User),
                foreign(Act::Sibling(Operation::CreateNew)),
                hand_made(0, NameKind::Nested, true, GsiKind::Extra, TagKind::None),
                foreign(Act::Init),
                schedule(2),
                foreign(Act::Sibling(Operation::ResizeOld)),
                foreign(Act::TagOtherFamily { pick: 1 }),
                foreign(Act::UntagFamily { pick: 0 }),
                schedule(2),
                foreign(Act::Sibling(Operation::CreateNew)),
                schedule(2),
            ],
            &[
                "line create_new blocked failed",
                "verdict not ours (not in the ledger)",
                "verdict not ours (key)",
                "retention kept: NoFamilyTag",
                "effect DeletedTable",
            ],
        ),
        // Write grace, retention and adoption: two tables restored by hand (our name, key and
        // indexes, no tags) are not in the ledger, so never touched until the operator's real
        // `adopt` records and tags them; the operator's `adopt` of a look-alike is refused; inside the grace
        // a past table stays in phase 0 and is not deleted, after it retention deletes (lifting
        // deletion protection first) what carries our family tag and is old enough.
        case(
            "grace, retention and adoption",
            PolicySpec {
                grace: Some("2h"),
                lsi: true,
                deletion_protection: true,
                retention: deleting_after(2, 1, 3),
                ..daily(
                    0,
                    vec![
                        phase(0, PhaseKind::Provisioned(100, 100)),
                        phase(1, PhaseKind::Provisioned(5, 5)),
                    ],
                )
            },
            vec![
                schedule(1),
                foreign(Act::Restored {
                    ago: 3,
                    on_demand: false,
                }),
                foreign(Act::Restored {
                    ago: 4,
                    on_demand: true,
                }),
                hand_made(-5, NameKind::Exact, false, GsiKind::None, TagKind::None),
                Step::Before { periods: 1 },
                Step::CreateNew,
                Step::After {
                    periods: 1,
                    past_grace: false,
                },
                Step::ResizeOld,
                foreign(Act::Adopt {
                    pick: 0,
                    claimable: true,
                }),
                foreign(Act::Adopt {
                    pick: 0,
                    claimable: false,
                }),
                Step::After {
                    periods: 0,
                    past_grace: true,
                },
                Step::ResizeOld,
                foreign(Act::Adopt {
                    pick: 0,
                    claimable: true,
                }),
                schedule(3),
            ],
            &[
                "adopt done",
                "adopt refused: its key is id (S)",
                "promise 2: deleted a table adopted",
                "promise 2: deleted a table we made",
                "verdict ours (ledger: adopted)",
                "verdict ours (ledger: created)",
                "verdict not ours (not in the ledger)",
            ],
        ),
        // Deleted, lowered and re-indexed tables: someone deletes the furthest pre-built table
        // and then the current one between runs (create_new makes them again), lowers a
        // pre-built table (create_new raises it) and switches another to on-demand (create_new
        // leaves it; resize_old switches it back, whole-table switches only while nothing on it
        // is foreign), adds an index of their own to one table (never resized, no billing
        // switch on that table) and tries one named like the policy's on another key.
        case(
            "deleted, lowered and re-indexed tables",
            PolicySpec {
                ttl: true,
                retention: deleting_after(3, 2, 1),
                ..daily(
                    2,
                    vec![
                        phase(0, PhaseKind::Provisioned(50, 50)),
                        phase(1, PhaseKind::Provisioned(10, 5)),
                        phase(2, PhaseKind::Provisioned(1, 1)),
                    ],
                )
            },
            vec![
                schedule(1),
                foreign(Act::DeleteNewest),
                Step::CreateNew,
                foreign(Act::Delete { pick: 1 }),
                foreign(Act::Capacity {
                    pick: 2,
                    to: Some((1, 1)),
                }),
                foreign(Act::Capacity { pick: 3, to: None }),
                Step::CreateNew,
                foreign(Act::AddIndex {
                    pick: 0,
                    like_policy: false,
                }),
                foreign(Act::AddIndex {
                    pick: 2,
                    like_policy: true,
                }),
                schedule(3),
                foreign(Act::DeleteNewest),
                schedule(2),
            ],
            &[
                "line create_new create done",
                "line create_new update done",
                "line resize_old update done",
                "verdict foreign part: index",
                "promise 2: deleted a table we made",
                "effect Ttl",
            ],
        ),
        // Warm throughput: an on-demand hot phase with warm throughput pre-builds its tables
        // with it (the table and the policy's index); a provisioned phase without any keeps
        // it (never lowered); a later on-demand phase asking more raises it on the table and the
        // policy's index, never on an index someone added; someone pre-warms a table above
        // everything (no run lowers it) and tries to lower an index's (the proxy refuses it, as
        // AWS does: moto would take it).
        case(
            "warm throughput pre-built, kept and raised",
            daily(
                1,
                vec![
                    PhaseSpec {
                        warm: Some((40_000, 20_000)),
                        ..phase(0, PhaseKind::OnDemand(None))
                    },
                    phase(1, PhaseKind::Provisioned(10, 5)),
                    PhaseSpec {
                        warm: Some((30_000, 30_000)),
                        ..phase(1, PhaseKind::OnDemand(None))
                    },
                ],
            ),
            vec![
                schedule(1),
                foreign(Act::PreWarm {
                    pick: 0,
                    index: false,
                    high: true,
                }),
                foreign(Act::PreWarm {
                    pick: 1,
                    index: true,
                    high: false,
                }),
                foreign(Act::AddIndex {
                    pick: 1,
                    like_policy: false,
                }),
                schedule(4),
            ],
            &[
                "line create_new create done",
                "line resize_old update done",
                "line resize_old configure done",
                "effect Warm",
                "verdict foreign part: index",
            ],
        ),
    ]
}

/// `n` cases from the generator of `promises.rs`, with fixed seeds, leaving out what moto
/// does not keep (table classes, on-demand maximums) and archiving.
pub(super) fn seeded(n: u64) -> Vec<Sampled> {
    let knobs = Knobs {
        without: ["table_class", "on_demand_max", "archive"]
            .into_iter()
            .map(String::from)
            .collect(),
    };
    (0..n)
        .map(|seed| {
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&seed.to_le_bytes());
            let mut runner = TestRunner::new_with_rng(
                ProptestConfig::default(),
                TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
            );
            let case = case_strategy(knobs.clone())
                .new_tree(&mut runner)
                .expect("a case")
                .current();
            Sampled {
                name: format!("seed {seed}"),
                case,
                exercises: Vec::new(),
            }
        })
        .collect()
}
