//! The promises as invariants, over random policies and random interleavings of runs and
//! foreign acts: nothing not ours is touched, no data is lost, whatever happens between runs.
//!
//! Each case builds a policy from a random TOML document, an in-memory AWS account
//! ([`fake_aws::FakeAws`]: DynamoDB, Application Auto Scaling and the function's IAM role as AWS
//! document them, on its own clock, sometimes with transitions slower than a run waits) and a
//! list of steps: clock moves (15 minutes before or after a period boundary, like the 23:45 /
//! 00:15 schedules of daily tables, or a few seconds), the real engine's create_new and
//! resize_old runs, and foreign acts (hand-made and restored tables, another family with a
//! nested prefix, tags, capacity changes and a spent decrease budget, deletions, indexes,
//! scalable targets and policies someone else made or removed, and the operator's real
//! `adopt`). After every run the promises below are checked against the fake's ground truth
//! (who made what, what the operator's `adopt` really tagged, and what each call changed), not
//! against the engine's opinion (`crates/promises/src/`):
//!
//! 1. `nothing_foreign_changed`: our runs change only tables that are provably ours (made by
//!    our CreateTable, or adopted) or claimable by name (`{prefix}_{label}`, the policy's key,
//!    no family tag), and never delete a claimable one; never a foreign GSI's throughput, never
//!    a dimension (read or write) that a foreign or shared scalable target holds, never
//!    register over such a target, never touch a foreign policy, never deregister (or plan to)
//!    a target carrying one, never write the family tag onto an existing table, never raise the
//!    warm throughput of a foreign table or GSI, and never ask to lower a warm throughput (the
//!    fake refuses it, as DynamoDB does), enable a Kinesis destination only to the policy's stream
//!    and only on a table of ours, and never disable or update a destination or delete a stream.
//!    A change the role refuses is no change.
//! 2. `no_data_loss`: a deleted table was provably ours and carried our family tag, had the
//!    policy's key and local indexes, no foreign or shared target and no other family's tag,
//!    was old enough, its period end + grace had passed, it fed no one else's Kinesis stream,
//!    and (archiving on) the archive it relied on was in a bucket of the account the policy
//!    expects, none of its objects under a lifecycle Expiration rule.
//! 3. `create_new_is_loud`: a create_new run that leaves the current or a pre-built table
//!    missing or DELETING reports failure and a next table that is not ready; one that says the
//!    next table is ready left no target's warm throughput UPDATING (when phase 0 asks for it),
//!    and every target streaming into the policy's Kinesis stream (when it names one).
//! 4. `resize_old_converges`: after every resize_old run, every ACTIVE table that is provably
//!    ours, has the policy's key and nothing foreign on it has the phase its age (and grace)
//!    calls for, its warm throughput included, unless its line is deferred for a documented
//!    cause that the fake confirms (a warm throughput raise also waits for another UpdateTable
//!    of the run).
//! 5. `status_predicts_run`: `status`, computed from a full observation just before a run,
//!    predicted exactly the changes the run then planned for each table, on the same verdict,
//!    and warned of every change the role then refused.
//!
//! Run: `cargo test -p ddb-rollover --test engine promises::` (2,000 cases from the recorded
//! seed, after the committed regressions and [`known_cases`]: the same cases every run, so CI
//! is no lottery). Fresh random cases are the long run's: `scripts/long-run.sh` (a random seed,
//! `promises_long`'s 50,000 cases; `PROPTEST_RNG_SEED` and `PROPTEST_CASES` choose).
//!
//! Exploring: `PROMISES_CHECK=1,2` checks only those invariants; `PROMISES_WITHOUT=sibling,...`
//! leaves kinds of steps out of the generated cases (see `scenarios::Knobs`), to find the next
//! distinct failure once one is known; `PROMISES_STATS=1` prints what the cases exercised (each
//! effect, each line's action and outcome, the promises' excuses).
//!
//! The scenarios, the ground truth and the invariants live in the `promises` crate
//! (`crates/promises/src/`), shared with the sampled replay on moto
//! (`tests/engine/promises_moto/`).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use ddb_rollover::init;
use ddb_rollover::ledger::StoredRecord;
use ddb_rollover::ledger::TableRecord;
use ddb_rollover::policy::ScalableKey;
use ddb_rollover::policy::Slot;
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::{Billing, GlobalIndex};
use ddb_rollover::status;
use ddb_rollover::table::TableSpec;
use ddb_rollover::{adopt, AdoptReport};
use ddb_rollover::{check_clock, observe, run, CheckedInstant, ClockAllowance, Operation, Policy, Scope};
use ddb_rollover::{restore, Restoration, RestoreOptions};
use fake_aws::{Effect, FakeAws, Maker, World, FAMILY_TAG};
use futures::executor::block_on;
use promises as scenarios;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError};
use scenarios::{
    case_strategy, checks, ledger_name, options, print_stats, Account, Act, ArchiveAct, Case, GsiKind,
    Harness, Knobs, NameKind, PhaseKind, PhaseSpec, PolicySpec, Ran, RetentionSpec, Slowness, Step,
    StreamSpec, TagKind, PREFIX, SIBLING, SIBLING_ACTOR,
};

/// The in-memory account: [`FakeAws`] seen through our family's role, with the nested family's
/// role, the operator's credentials and people's foreign acts on the side.
struct FakeAccount {
    fake: FakeAws,
}

fn text<T>(result: Result<T, ddb_rollover::control::ControlPlaneError>) -> Result<T, String> {
    result.map_err(|e| e.to_string())
}

impl FakeAccount {
    /// One of our runs for `at`, checked against the account's clock as the wall (a late run,
    /// a past instant): what `--at` gives a run outside a simulation.
    fn run_checked(&self, policy: &Policy, operation: Operation, at: DateTime<Utc>) -> Result<Ran, String> {
        let wall = self.fake.now();
        let checked = check_clock(policy, &[operation], at, wall, ClockAllowance::default())
            .map_err(|e| format!("the clock check refused {at}: {e}"))?;
        self.run_from(policy, operation, &checked)
    }

    /// One of our runs for the checked instant, with `status` from a full observation just
    /// before it, at the same instant and wall clock.
    fn run_from(&self, policy: &Policy, operation: Operation, at: &CheckedInstant) -> Result<Ran, String> {
        let observation = block_on(observe(&self.fake, policy, Scope::Full(at.at()), 8))
            .map_err(|e| format!("the full observation failed: {e}"))?;
        let status = status(policy, at.at(), &observation);
        let before = self.fake.state();
        let logged = self.fake.log_len();
        let report = block_on(run(&self.fake, policy, operation, at, options()))
            .map_err(|e| format!("the run failed to start: {e}"))?;
        let after = self.fake.state();
        let calls = self
            .fake
            .calls_since(logged)
            .into_iter()
            .filter(|c| c.actor == Maker::Us)
            .collect();
        Ok(Ran {
            before,
            after,
            calls,
            report,
            status,
        })
    }
}

impl Account for FakeAccount {
    fn now(&self) -> DateTime<Utc> {
        self.fake.now()
    }

    fn set_now(&self, t: DateTime<Utc>) {
        self.fake.set_now(t);
    }

    fn advance(&self, by: Duration) {
        self.fake.advance(by);
    }

    fn world(&self) -> World {
        self.fake.state()
    }

    fn our_run(&self, policy: &Policy, operation: Operation) -> Result<Ran, String> {
        let now = self.fake.now();
        let at = ddb_rollover::simulation(policy, &[operation], now).unwrap();
        self.run_from(policy, operation, &at)
    }

    fn our_run_at(
        &self,
        policy: &Policy,
        operation: Operation,
        at: DateTime<Utc>,
    ) -> Option<Result<Ran, String>> {
        Some(self.run_checked(policy, operation, at))
    }

    fn put_record(&self, actor: &Maker, record: &StoredRecord) -> Result<(), String> {
        text(self.fake.put_record_as(actor, &ledger_name(), PREFIX, record))
    }

    fn delete_record(&self, actor: &Maker, key: &str) -> Result<(), String> {
        text(self.fake.delete_record_as(actor, &ledger_name(), PREFIX, key))
    }

    fn init(&self, policy: &Policy) -> Result<Vec<String>, String> {
        let operator = self.fake.operator();
        let logged = self.fake.state().ledger_writes.len();
        let at = ddb_rollover::simulation(policy, &[Operation::CreateNew], self.fake.now()).unwrap();
        let report = text(block_on(init(&operator, policy, &at, false)))?;
        // Ground truth from what it wrote: a table it recorded that our runs did not make is
        // the operator's now (init records on our family tag, key and period).
        let world = self.fake.state();
        let mut enrolled = Vec::new();
        for write in &world.ledger_writes[logged..] {
            let Some(name) = write.key.strip_prefix("table#") else {
                continue;
            };
            if write.record.is_some() && world.tables.get(name).is_some_and(|t| !t.maker.is_us()) {
                self.fake.mark_adopted(name);
                enrolled.push(name.to_string());
            }
        }
        if !report.succeeded() {
            return Err(format!("init failed: {report:?}"));
        }
        Ok(enrolled)
    }

    fn restore(&self, policy: &Policy, slot: Slot) -> Result<String, String> {
        let operator = self.fake.operator();
        let logged = self.fake.state().ledger_writes.len();
        let at = ddb_rollover::simulation(policy, &[Operation::CreateNew], self.fake.now()).unwrap();
        let options = RestoreOptions {
            keep: Duration::days(2),
            dry_run: false,
            wait: std::time::Duration::from_secs(3600),
        };
        let report = text(block_on(restore(&operator, policy, &at, &[slot], options)))?;
        // Ground truth from what it wrote: the table it recorded as restored is the operator's.
        let world = self.fake.state();
        for write in &world.ledger_writes[logged..] {
            if let Some(name) = write.key.strip_prefix("table#") {
                let restored = write
                    .record
                    .as_ref()
                    .and_then(|r| serde_json::from_str::<TableRecord>(&r.body).ok())
                    .is_some_and(|r| r.identity().is_some());
                if restored && world.tables.get(name).is_some_and(|t| !t.maker.is_us()) {
                    self.fake.mark_adopted(name);
                }
            }
        }
        let Some(line) = report.tables.first() else {
            return Ok("no line".into());
        };
        let why = match &line.action.restoration {
            Restoration::Refused { reasons } => reasons.first().cloned().unwrap_or_default(),
            Restoration::Import { .. } => line.error.clone().unwrap_or_default(),
        };
        Ok(format!("{} {why}", line.outcome.as_str()))
    }

    fn sibling_run(&self, sibling: &Policy, operation: Operation) {
        let role = self.fake.acting_as(SIBLING, SIBLING_ACTOR);
        let _ = block_on(run(
            &role,
            sibling,
            operation,
            &ddb_rollover::simulation(sibling, &[operation], self.fake.now()).unwrap(),
            options(),
        ));
    }

    fn adopt(&self, policy: &Policy, table: &str) -> (Result<AdoptReport, String>, Vec<String>) {
        let operator = self.fake.operator();
        let logged = self.fake.log_len();
        let written = self.fake.state().ledger_writes.len();
        let names = [table.to_string()];
        let report = text(block_on(adopt(
            &operator,
            policy,
            &ddb_rollover::simulation(policy, &[ddb_rollover::Operation::CreateNew], self.fake.now())
                .unwrap(),
            &names,
            false,
        )));
        // Ground truth from what the call did, not from its report.
        let tagged: Vec<String> = self
            .fake
            .calls_since(logged)
            .iter()
            .filter(|c| c.succeeded())
            .flat_map(|c| c.effects.iter())
            .filter_map(|e| match e {
                Effect::Tagged { table, tags, .. }
                    if tags.get(FAMILY_TAG).map(String::as_str) == Some(PREFIX) =>
                {
                    Some(table.clone())
                }
                _ => None,
            })
            .collect();
        for table in &tagged {
            self.fake.mark_adopted(table);
        }
        // The ledger's record is the adoption (the tags follow it, for people and IAM): a
        // table it recorded is the operator's, though its tagging failed after.
        let world = self.fake.state();
        for write in &world.ledger_writes[written..] {
            let recorded = write
                .record
                .as_ref()
                .and_then(|r| serde_json::from_str::<TableRecord>(&r.body).ok())
                .is_some_and(|r| r.identity().is_some());
            if let Some(name) = write.key.strip_prefix("table#").filter(|_| recorded) {
                self.fake.mark_adopted(name);
            }
        }
        (report, tagged)
    }

    fn create_table(&self, who: &str, spec: &TableSpec) -> Result<(), String> {
        text(self.fake.foreign_create_table(who, spec))
    }

    fn tag(&self, who: &str, table: &str, tags: BTreeMap<String, String>) -> Result<(), String> {
        text(self.fake.foreign_tag(who, table, tags))
    }

    fn untag(&self, who: &str, table: &str, keys: &[String]) -> Result<(), String> {
        text(self.fake.foreign_untag(who, table, keys))
    }

    fn update_capacity(&self, who: &str, table: &str, to: Billing) -> Result<(), String> {
        text(self.fake.foreign_update_capacity(who, table, to))
    }

    fn update_index_capacity(&self, who: &str, table: &str, index: &str, to: Billing) -> Result<(), String> {
        text(self.fake.foreign_update_index_capacity(who, table, index, to))
    }

    fn delete_table(&self, who: &str, table: &str) -> Result<(), String> {
        text(self.fake.foreign_delete_table(who, table))
    }

    fn disable_key(&self, who: &str, table: &str) -> Result<(), String> {
        text(self.fake.foreign_disable_key(who, table))
    }

    fn add_index(&self, who: &str, table: &str, index: &GlobalIndex, billing: Billing) -> Result<(), String> {
        text(self.fake.foreign_add_index(who, table, index, billing))
    }

    fn register_target(&self, who: &str, key: &ScalableKey, min: i64, max: i64) -> Result<(), String> {
        text(self.fake.foreign_register_target(who, key, min, max))
    }

    fn put_policy(&self, who: &str, key: &ScalableKey, name: &str, policy_type: &str) -> Result<(), String> {
        text(self.fake.foreign_put_policy(who, key, name, policy_type))
    }

    fn deregister_target(&self, who: &str, key: &ScalableKey) -> Result<(), String> {
        text(self.fake.foreign_deregister_target(who, key))
    }

    fn delete_policy(&self, who: &str, key: &ScalableKey, name: &str) -> Result<(), String> {
        text(self.fake.foreign_delete_policy(who, key, name))
    }

    fn raise_warm(
        &self,
        who: &str,
        table: &str,
        index: Option<&str>,
        to: WarmThroughput,
    ) -> Result<(), String> {
        text(self.fake.foreign_raise_warm(who, table, index, to))
    }

    fn write_items(&self, who: &str, table: &str, items: &[String]) -> Result<(), String> {
        text(self.fake.write_items(who, table, items))
    }

    fn put_resource_policy(&self, who: &str, table: &str, document: &str) -> Result<(), String> {
        text(self.fake.foreign_put_resource_policy(who, table, document))
    }

    fn delete_resource_policy(&self, who: &str, table: &str) -> Result<(), String> {
        text(self.fake.foreign_delete_resource_policy(who, table))
    }

    fn put_scheduled_action(&self, who: &str, key: &ScalableKey, name: &str) -> Result<(), String> {
        self.fake
            .foreign_put_scheduled_action(who, key, name)
            .map_err(|e| e.to_string())
    }

    fn delete_scheduled_action(&self, who: &str, key: &ScalableKey, name: &str) -> Result<(), String> {
        self.fake
            .foreign_delete_scheduled_action(who, key, name)
            .map_err(|e| e.to_string())
    }

    fn set_deletion_protection(&self, who: &str, table: &str, on: bool) -> Result<(), String> {
        self.fake
            .foreign_deletion_protection(who, table, on)
            .map_err(|e| e.to_string())
    }

    fn kinesis_act(&self, who: &str, act: &fake_aws::KinesisAct) -> Result<(), String> {
        text(self.fake.kinesis_act(who, act))
    }

    fn mapping_act(&self, who: &str, act: &fake_aws::MappingAct) -> Result<(), String> {
        text(self.fake.mapping_act(who, act))
    }

    fn archive_act(&self, who: &str, export: &fake_aws::Export, act: ArchiveAct) -> Result<(), String> {
        let bucket = &export.bucket;
        let Some((first, _)) = export.files.first() else {
            return Err("the export lists no file".into());
        };
        match act {
            ArchiveAct::Overwrite => self
                .fake
                .foreign_put_object(who, bucket, first, b"{\"Item\":{}}\n"),
            ArchiveAct::Delete => self.fake.foreign_delete_object(who, bucket, first),
            ArchiveAct::Glacier => {
                if !self.fake.foreign_set_storage_class(who, bucket, first, "GLACIER") {
                    return Err("no such object".into());
                }
            }
            ArchiveAct::ForeignExport => {
                let prefix = export.directory.split("AWSDynamoDB/").next().unwrap_or_default();
                self.fake
                    .foreign_place_export(who, bucket, prefix, "someone_elses", 3);
            }
            ArchiveAct::RepointFileList => {
                if !self.fake.foreign_repoint_file_list(who, bucket, export) {
                    return Err("no such file list".into());
                }
            }
            ArchiveAct::ExpireRule => {
                // The archive prefix: the folder that holds the export's table folder.
                let prefix = export
                    .directory
                    .find(export.table.as_str())
                    .map_or("", |at| &export.directory[..at]);
                self.fake
                    .foreign_put_lifecycle_expiration(who, bucket, "expire archives", prefix, 30);
            }
            ArchiveAct::NewOwner => self.fake.foreign_bucket_owner(who, bucket, "210987654321"),
        }
        Ok(())
    }
}

fn check_case(case: &Case) -> Result<(), TestCaseError> {
    let policy = Policy::from_toml(&case.toml).expect("filtered on validity");
    let sibling = Policy::from_toml(&case.spec.toml(SIBLING)).expect("the same policy under another prefix");
    let harness = Harness::new(
        case,
        policy,
        sibling,
        FakeAccount {
            fake: FakeAws::new(PREFIX, case.start, case.slow.config()),
        },
        checks(),
        Knobs::from_env(),
    );
    harness.run_case().map_err(TestCaseError::fail)
}

/// Runs `cases` cases (unless `PROPTEST_CASES` says otherwise), then prints the stats when asked.
fn run_cases(default_cases: u32) {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        source_file: Some(file!()),
        max_shrink_iters: 4096,
        ..crate::common::recorded(default_cases)
    });
    let result = runner.run(&case_strategy(Knobs::from_env()), |case| check_case(&case));
    print_stats();
    if let Err(e) = result {
        panic!("{e}\n{runner}");
    }
}

/// Cases written out: shrunk from past failures of this test, kept as they were decided.
fn known_cases() -> Vec<(&'static str, Case)> {
    let phase = |gap, kind| PhaseSpec {
        gap,
        kind,
        class: None,
        warm: None,
    };
    let policy = |period, phases, retention| PolicySpec {
        period,
        timezone: "UTC",
        premake: 0,
        gsi: false,
        lsi: false,
        grace: None,
        ttl: false,
        deletion_protection: false,
        phases,
        retention,
        stream: None,
        consumer: false,
        table_stream: false,
    };
    let case = |spec: PolicySpec, steps| Case {
        toml: spec.toml(PREFIX),
        spec,
        start: Utc.with_ymd_and_hms(2024, 3, 29, 12, 0, 0).unwrap(),
        slow: Slowness::default(),
        steps,
    };
    vec![
        (
            // Someone deletes our scaling policy but keeps the target, then deletes the table:
            // the target stays registered (deleting a table deregisters nothing), with no
            // policy of ours on it. create_new makes the table again and must not register
            // over that target, which is no longer provably ours (proptest seed cc 1ffb777e...).
            "a target left on a deleted table's name is not registered over",
            Case {
                start: Utc.with_ymd_and_hms(2024, 3, 29, 14, 0, 0).unwrap(),
                ..case(
                    PolicySpec {
                        stream: Some(StreamSpec { precision: None }),
                        ..policy(
                            "hour",
                            vec![phase(0, PhaseKind::Autoscaling { wide: false })],
                            None,
                        )
                    },
                    vec![
                        Step::CreateNew,
                        Step::Foreign(Act::DropScaling {
                            pick: 0,
                            deregister: false,
                        }),
                        Step::Foreign(Act::Delete { pick: 0 }),
                        Step::Schedule { cycles: 1 },
                    ],
                )
            },
        ),
        (
            // Someone's target (no policy) holds a table's write dimension; the table enters an
            // autoscaling phase and our read target is registered next to it, which brings the
            // read capacity within our bounds. The write dimension, theirs, is never changed:
            // a target holds one dimension of one resource (promise 1 asks per dimension).
            "our read target next to someone's write target",
            case(
                policy(
                    "hour",
                    vec![
                        phase(0, PhaseKind::Provisioned(300, 1000)),
                        phase(2, PhaseKind::Provisioned(300, 1000)),
                        phase(2, PhaseKind::Autoscaling { wide: false }),
                    ],
                    None,
                ),
                vec![
                    Step::Schedule { cycles: 1 },
                    Step::Foreign(Act::Target {
                        pick: 0,
                        index: false,
                        read: false,
                        policy: false,
                    }),
                    Step::Schedule { cycles: 3 },
                ],
            ),
        ),
        (
            // The operator names a hand-made look-alike (our name, another key) for adoption:
            // the real `adopt` refuses it, it never gets our family tag, and retention never
            // deletes it (the harness once wrote the tag itself, which adopt never does).
            "adopting a look-alike is refused",
            case(
                policy(
                    "day",
                    vec![phase(0, PhaseKind::Provisioned(10, 10))],
                    Some(RetentionSpec {
                        delete_after: Some(1),
                        archive_after: None,
                        keep_newest: 1,
                        max_deletes: 5,
                    }),
                ),
                vec![
                    Step::Foreign(Act::HandMade {
                        at: -2,
                        name: NameKind::Exact,
                        our_key: false,
                        gsi: GsiKind::None,
                        lsi: false,
                        tags: TagKind::None,
                        on_demand: false,
                    }),
                    Step::Wait { seconds: 60 },
                    Step::Foreign(Act::Adopt {
                        pick: 0,
                        claimable: false,
                    }),
                    Step::Schedule { cycles: 3 },
                ],
            ),
        ),
        (
            // Issue 37, finding 4: once an export is in S3, someone puts a lifecycle rule
            // expiring the archive prefix: no table is deleted on an archive S3 will expire.
            "no deletion on an archive under an expiration rule",
            case(
                archiving(),
                vec![
                    Step::Schedule { cycles: 3 },
                    // The export in flight completes first.
                    Step::Wait { seconds: 3600 },
                    Step::Foreign(Act::Archive {
                        pick: 0,
                        act: ArchiveAct::ExpireRule,
                    }),
                    Step::Schedule { cycles: 6 },
                ],
            ),
        ),
        (
            // Issue 37, finding 9: once an export is in S3, the bucket's name passes to another
            // account (the objects copied back as they were): no table is deleted on its
            // answers, and no export writes into it.
            "no deletion on an archive in a bucket of another owner",
            case(
                archiving(),
                vec![
                    Step::Schedule { cycles: 3 },
                    // The export in flight completes first.
                    Step::Wait { seconds: 3600 },
                    Step::Foreign(Act::Archive {
                        pick: 0,
                        act: ArchiveAct::NewOwner,
                    }),
                    Step::Schedule { cycles: 6 },
                ],
            ),
        ),
    ]
}

/// A daily policy that archives at age 1 and deletes at age 2, keeping only the newest table:
/// a table is exported, sealed, exported again and deleted within a few days.
fn archiving() -> PolicySpec {
    PolicySpec {
        period: "day",
        timezone: "UTC",
        premake: 0,
        gsi: false,
        lsi: false,
        grace: None,
        ttl: false,
        deletion_protection: false,
        phases: vec![PhaseSpec {
            gap: 0,
            kind: PhaseKind::Provisioned(10, 10),
            class: None,
            warm: None,
        }],
        retention: Some(RetentionSpec {
            delete_after: Some(2),
            archive_after: Some(1),
            keep_newest: 1,
            max_deletes: 5,
        }),
        stream: None,
        consumer: false,
        table_stream: false,
    }
}

#[test]
fn known_cases_keep_the_promises() {
    for (name, case) in known_cases() {
        Policy::from_toml(&case.toml).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Err(e) = check_case(&case) {
            panic!("{name}: {e}\n{case:?}");
        }
    }
    print_stats();
}

/// The promises over 2,000 random cases (`PROPTEST_CASES` for more).
#[test]
fn promises() {
    run_cases(2000);
}

/// The long run: 50,000 cases (`PROPTEST_CASES` overrides). Build with `--release`.
#[test]
#[ignore]
fn promises_long() {
    run_cases(50_000);
}
