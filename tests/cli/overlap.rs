//! Overlapping runs: two `ddb-rollover` processes started at the same instant against the same
//! server, as when a schedule is redelivered or someone tests from the console during a
//! scheduled run. Two runs must never exit 1 because of each other.
//!
//! What this attacks: every race between two runs that list the same tables and then act on
//! them: both creating the same table (CreateTable's ResourceInUseException for the loser),
//! both updating the same table (the loser observes it UPDATING, or is told its throughput
//! "will not change"), both deleting the same aged table (the loser's DeleteTable or tag call
//! finds it gone), and a `create-new` and a `resize-old` at the same `--at`.
//!
//! What it proves, over a week of simulated days from 2018-10-01 (in the past: no clock guard)
//! on moto and on dynalite, with and without retention (`delete_after = 3`, `keep_newest = 1`,
//! `max_deletes_per_run = 5`, no archiving): each day a pair of `create-new` at 23:45, then at
//! 00:15 the next day a pair of `resize-old`, or on every third day a mixed pair (a
//! `create-new` with a `resize-old`) instead; 14 pairs per test. A week crosses every phase
//! (hot, warm, cold, deleted with retention: five tables deleted) and two mixed pairs; more
//! days would repeat the same races. Every process exits 0, and
//! after every pair the state read back with DescribeTable (never from our reports) is exactly
//! the one the schedule calls for: the set of tables (with retention, only those younger than
//! 3 days at the last resize-old), and each table's provisioned capacity for its age (300/1000
//! up to age 0, 100/1 at age 1, 1/1 from age 2).
//!
//! dynalite runs twice: with 50 ms CREATING/UPDATING, so a run sees the other run's change in
//! progress; and with updates that end at once, so the loser of an update race is told "will
//! not change". Neither local server refuses an UpdateTable on an UPDATING table (dynalite
//! accepts it, moto never reports UPDATING), so the executor's "UpdateTable
//! ResourceInUseException -> deferred" path cannot be raced here; the `deferred` lines seen
//! are the planner's, for a table the other run had just put in UPDATING.
//!
//! The outcome totals from the JSON reports are printed (`--nocapture`) as evidence that the
//! runs really overlapped (`gone`, `unchanged`, `deferred` where one run lost a race, and how
//! often both runs of a pair decided the same change), but races are timing-dependent, so
//! they are not asserted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::TableStatus;
use aws_sdk_dynamodb::Client;
use chrono::NaiveDate;
use serde_json::Value;
use testkit::{LocalDynamo, ProcessRun, Server};

const HOT: (i64, i64) = (300, 1000);
const WARM: (i64, i64) = (100, 1);
const COLD: (i64, i64) = (1, 1);

/// Every phase, with retention five deletions, and two mixed pairs (days 2 and 5).
const DAYS: i64 = 7;
const DELETE_AFTER: i64 = 3;
const KEEP_NEWEST: usize = 1;

/// The policy, written to a temp file: the defaults, plus retention without archiving
/// (nothing dynalite lacks: no TTL, PITR or exports).
fn policy_toml(retention: bool) -> String {
    let mut toml = String::from("prefix = \"timeseries\"\nperiod = \"day\"\npremake = 1\n");
    if retention {
        toml.push_str(&format!(
            "\n[retention]\ndelete_after = {DELETE_AFTER}\nkeep_newest = {KEEP_NEWEST}\n\
             max_deletes_per_run = 5\n"
        ));
    }
    toml
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    CreateNew,
    ResizeOld,
}

impl Op {
    fn command(self) -> &'static str {
        match self {
            Op::CreateNew => "create-new",
            Op::ResizeOld => "resize-old",
        }
    }
}

/// What the JSON reports said, summed over every run, and what the overlaps needed.
#[derive(Default)]
struct Tally {
    pairs: usize,
    runs: usize,
    nonzero_exits: usize,
    /// Every report line by outcome.
    outcomes: BTreeMap<String, usize>,
    /// Lines whose decision was a change that did not end `done`: a run that lost a race
    /// (`update -> unchanged`, `update -> deferred`, `delete -> gone`, ...).
    lost_races: BTreeMap<String, usize>,
    /// Lines the planner deferred because the table was busy (the other run's change).
    planner_deferred: usize,
    /// Tables for which both runs of a pair decided the same change: both observed the
    /// table before either changed it, so the runs really overlapped.
    same_change_decided: BTreeMap<String, usize>,
    /// Extra non-overlapping resize-old runs needed (dynalite only) to finish a resize
    /// that was deferred because the other run had the table UPDATING.
    extra_resize_runs: usize,
}

struct Sim {
    server: LocalDynamo,
    client: Client,
    policy: PathBuf,
    retention: bool,
    start: NaiveDate,
    /// The last period any create-new run has made sure of (current + premake).
    created_through: Option<NaiveDate>,
    /// The current period of the last resize-old run.
    resized_at: Option<NaiveDate>,
    tally: Tally,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.policy);
    }
}

fn day(start: NaiveDate, offset: i64) -> NaiveDate {
    start + chrono::Duration::days(offset)
}

fn table(date: NaiveDate) -> String {
    format!("timeseries_{date}")
}

impl Sim {
    async fn start(server: Server, retention: bool) -> Sim {
        let server = LocalDynamo::start(server);
        let client = server.client().await;
        // Unique per test process, server and variant: tests run in parallel.
        let policy = std::env::temp_dir().join(format!(
            "ddb-rollover-overlap-{}-{}-{}-{}.toml",
            std::process::id(),
            server.name(),
            server.pid(),
            if retention { "retention" } else { "plain" }
        ));
        std::fs::write(&policy, policy_toml(retention))
            .unwrap_or_else(|e| panic!("write {}: {e}", policy.display()));
        Sim {
            server,
            client,
            policy,
            retention,
            start: NaiveDate::from_ymd_opt(2018, 10, 1).unwrap(),
            created_through: None,
            resized_at: None,
            tally: Tally::default(),
        }
    }

    fn label(&self) -> String {
        let server = match self.server.server() {
            Server::Moto => "moto".to_string(),
            Server::Dynalite { create_ms, update_ms } => format!("dynalite {create_ms}/{update_ms} ms"),
            Server::DynamoDbLocal => "ddblocal".to_string(),
        };
        format!(
            "{server} {}",
            if self.retention {
                "with retention"
            } else {
                "without retention"
            }
        )
    }

    fn command(&self, op: Op, at: &str) -> Command {
        let mut command = Command::new(crate::support::binaries::cli());
        command
            .args(["--endpoint-url", self.server.endpoint(), "--region", "us-east-1"])
            .args(["--output", "json", "--at", at, "--policy"])
            .arg(&self.policy)
            .arg(op.command())
            .envs(self.server.env())
            .env_remove("ROLLOVER_POLICY")
            .env_remove("DDB_ROLLOVER_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Starts both processes back to back, then waits for both (each on its own thread,
    /// so neither can block on a full pipe while the other is waited for).
    fn pair(&mut self, ops: [Op; 2], at: &str) -> Vec<Value> {
        let children: Vec<_> = ops
            .iter()
            .map(|&op| {
                let mut command = self.command(op, at);
                let child = command
                    .spawn()
                    .unwrap_or_else(|e| panic!("spawn {command:?}: {e}"));
                (op, child)
            })
            .collect();
        let waiting: Vec<_> = children
            .into_iter()
            .map(|(op, child)| std::thread::spawn(move || (op, child.wait_with_output())))
            .collect();
        let runs: Vec<(Op, ProcessRun)> = waiting
            .into_iter()
            .map(|handle| {
                let (op, output) = handle.join().expect("waiting thread");
                let output = output.unwrap_or_else(|e| panic!("wait for {}: {e}", op.command()));
                let run = ProcessRun {
                    code: output.status.code().unwrap_or(-1),
                    stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
                };
                (op, run)
            })
            .collect();
        self.tally.pairs += 1;
        self.tally.runs += runs.len();
        self.tally.nonzero_exits += runs.iter().filter(|(_, run)| run.code != 0).count();
        let label = self.label();
        // Both outputs in the message: the other run is half the story of a race.
        let both: String = runs
            .iter()
            .map(|(op, run)| {
                format!(
                    "--- {} exit {}\nstdout:\n{}\nstderr:\n{}",
                    op.command(),
                    run.code,
                    run.stdout,
                    run.stderr
                )
            })
            .collect();
        for (op, run) in &runs {
            assert_eq!(
                run.code,
                0,
                "{label}: {} at {at} (overlapping {:?}) exited {}:\n{both}",
                op.command(),
                ops,
                run.code
            );
        }
        let reports: Vec<Value> = runs.iter().map(|(_, run)| run.json()).collect();
        self.count(&reports);
        reports
    }

    /// One run on its own, for the resize a race deferred.
    fn single(&mut self, op: Op, at: &str) -> Value {
        let run = ProcessRun::of(&mut self.command(op, at));
        self.tally.runs += 1;
        if run.code != 0 {
            self.tally.nonzero_exits += 1;
        }
        assert_eq!(
            run.code,
            0,
            "{}: {} at {at} exited {}:\n{}\n{}",
            self.label(),
            op.command(),
            run.code,
            run.stdout,
            run.stderr
        );
        let report = run.json();
        self.count(std::slice::from_ref(&report));
        report
    }

    fn count(&mut self, reports: &[Value]) {
        let mut decided: Vec<BTreeSet<(String, String)>> = Vec::new();
        for report in reports {
            let mut changes = BTreeSet::new();
            for line in lines(report) {
                let outcome = line["outcome"].as_str().unwrap_or("?").to_string();
                let action = line["decision"]["action"].as_str().unwrap_or("?").to_string();
                let table = line["table"].as_str().unwrap_or("?").to_string();
                *self.tally.outcomes.entry(outcome.clone()).or_default() += 1;
                let change = !matches!(
                    action.as_str(),
                    "unchanged" | "deferred" | "skipped" | "foreign" | "blocked"
                );
                if change {
                    changes.insert((table, action.clone()));
                    if outcome != "done" {
                        *self
                            .tally
                            .lost_races
                            .entry(format!("{action} -> {outcome}"))
                            .or_default() += 1;
                    }
                } else if action == "deferred" {
                    self.tally.planner_deferred += 1;
                }
            }
            decided.push(changes);
        }
        if let [a, b] = decided.as_slice() {
            for (_, action) in a.intersection(b) {
                *self.tally.same_change_decided.entry(action.clone()).or_default() += 1;
            }
        }
    }

    /// Every table's (RCU, WCU) as DescribeTable reports it, once none is CREATING, UPDATING
    /// or DELETING (dynalite keeps them so for 50 ms after a change) and none vanishes
    /// between ListTables and DescribeTable (dynalite removes a deleted table just after
    /// answering DeleteTable).
    async fn settled_state(&self) -> BTreeMap<String, (i64, i64)> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.try_state().await {
                Ok(state) => return state,
                Err(busy) => assert!(
                    Instant::now() < deadline,
                    "{}: tables never settled: {busy}",
                    self.label()
                ),
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    async fn try_state(&self) -> Result<BTreeMap<String, (i64, i64)>, String> {
        let mut state = BTreeMap::new();
        for name in testkit::table_names(&self.client).await {
            let out = match self.client.describe_table().table_name(&name).send().await {
                Ok(out) => out,
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|e| e.is_resource_not_found_exception()) =>
                {
                    return Err(format!("{name} vanished after the listing"));
                }
                Err(e) => panic!("DescribeTable {name}: {e:?}"),
            };
            let table = out.table().expect("DescribeTable has a table");
            if table.table_status() != Some(&TableStatus::Active) {
                return Err(format!("{name} is {:?}", table.table_status()));
            }
            state.insert(name, testkit::capacity_of(table));
        }
        Ok(state)
    }

    /// The exact state the runs so far must have left, from the schedule alone.
    fn expected(&self) -> BTreeMap<String, (i64, i64)> {
        let Some(through) = self.created_through else {
            return BTreeMap::new();
        };
        let mut days: Vec<NaiveDate> = (0..)
            .map(|d| day(self.start, d))
            .take_while(|d| *d <= through)
            .collect();
        let age = |d: NaiveDate| self.resized_at.map(|current| (current - d).num_days());
        if self.retention {
            // Deleted once a resize-old run saw it DELETE_AFTER periods old, unless it was
            // among the KEEP_NEWEST newest tables then.
            let newest: Vec<NaiveDate> = days.iter().rev().take(KEEP_NEWEST).copied().collect();
            days.retain(|d| newest.contains(d) || age(*d).is_none_or(|a| a < DELETE_AFTER));
        }
        days.into_iter()
            .map(|d| {
                let capacity = match age(d) {
                    None | Some(..=0) => HOT,
                    Some(1) => WARM,
                    Some(_) => COLD,
                };
                (table(d), capacity)
            })
            .collect()
    }

    /// Compares the settled state with the model. On dynalite, a resize the loser of a race
    /// deferred (the other run had the table UPDATING, or the winner's change was a
    /// different one) is done by the next run: then one extra, non-overlapping resize-old at
    /// the same instant is allowed, counted, and must leave the exact state.
    async fn check(&mut self, after: &str, resize_at: Option<&str>, reports: &[Value]) {
        let expected = self.expected();
        let actual = self.settled_state().await;
        if actual == expected {
            return;
        }
        let deferred = reports.iter().flat_map(lines).any(|l| l["outcome"] == "deferred");
        let dynalite = matches!(self.server.server(), Server::Dynalite { .. });
        if let (true, true, Some(at)) = (dynalite, deferred, resize_at) {
            self.tally.extra_resize_runs += 1;
            let extra = self.single(Op::ResizeOld, at);
            let again = self.settled_state().await;
            assert_eq!(
                again,
                expected,
                "{}: after {after} and one extra resize-old at {at}\nfirst: {actual:?}\n\
                 extra run: {extra:#}\npair: {reports:#?}",
                self.label()
            );
            return;
        }
        assert_eq!(
            actual,
            expected,
            "{}: after {after}\nreports: {reports:#?}",
            self.label()
        );
    }

    async fn run_days(&mut self) {
        for d in 0..DAYS {
            let today = day(self.start, d);
            let tomorrow = day(self.start, d + 1);
            let create_at = format!("{today}T23:45:00Z");
            let resize_at = format!("{tomorrow}T00:15:00Z");

            let reports = self.pair([Op::CreateNew, Op::CreateNew], &create_at);
            self.created_through = self.created_through.max(Some(tomorrow));
            self.check(&format!("create-new x2 at {create_at}"), None, &reports)
                .await;

            if d % 3 == 2 {
                // Mixed: a late create-new during the scheduled resize-old. It makes the day
                // after tomorrow while the other run ages, resizes and deletes.
                let reports = self.pair([Op::CreateNew, Op::ResizeOld], &resize_at);
                self.created_through = self.created_through.max(Some(day(self.start, d + 2)));
                self.resized_at = Some(tomorrow);
                self.check(
                    &format!("create-new + resize-old at {resize_at}"),
                    Some(&resize_at),
                    &reports,
                )
                .await;
            } else {
                let reports = self.pair([Op::ResizeOld, Op::ResizeOld], &resize_at);
                self.resized_at = Some(tomorrow);
                self.check(
                    &format!("resize-old x2 at {resize_at}"),
                    Some(&resize_at),
                    &reports,
                )
                .await;
            }
        }
    }

    fn print_totals(&self, elapsed: Duration) {
        let t = &self.tally;
        eprintln!(
            "overlap {}: {} pairs, {} runs, {} non-zero exits, {} extra resize-old runs, {:.1} s\n  \
             outcomes: {:?}\n  lost races (change decided, not done): {:?}\n  \
             deferred by the planner (table busy): {}\n  same change decided by both runs of a pair: {:?}",
            self.label(),
            t.pairs,
            t.runs,
            t.nonzero_exits,
            t.extra_resize_runs,
            elapsed.as_secs_f64(),
            t.outcomes,
            t.lost_races,
            t.planner_deferred,
            t.same_change_decided,
        );
    }
}

fn lines(report: &Value) -> impl Iterator<Item = &Value> {
    report["tables"].as_array().into_iter().flatten()
}

async fn a_week_of_overlapping_pairs(server: Server, retention: bool) {
    let started = Instant::now();
    let mut sim = Sim::start(server, retention).await;
    sim.run_days().await;

    // The last resize-old ran at 2018-10-08T00:15; the last create-new made 2018-10-08.
    let last = day(sim.start, DAYS);
    let end = sim.settled_state().await;
    let first_kept = if retention { DAYS - 2 } else { 0 };
    let expected: BTreeMap<String, (i64, i64)> = (first_kept..=DAYS)
        .map(|d| {
            let capacity = match (last - day(sim.start, d)).num_days() {
                0 => HOT,
                1 => WARM,
                _ => COLD,
            };
            (table(day(sim.start, d)), capacity)
        })
        .collect();
    assert_eq!(end, expected, "{}: end state", sim.label());
    assert_eq!(sim.tally.nonzero_exits, 0);
    assert_eq!(sim.tally.pairs, 2 * DAYS as usize, "pairs");
    sim.print_totals(started.elapsed());
}

/// Tables stay CREATING and UPDATING for 50 ms: a run can see the other run's change in
/// progress (and defer). dynalite accepts a second UpdateTable on an UPDATING table (and
/// still reports the old throughput until the update ends), so both runs' updates succeed.
fn dynalite() -> Server {
    Server::Dynalite {
        create_ms: 50,
        update_ms: 50,
    }
}

/// Updates that end at once: a run that saw the old capacity and sends its UpdateTable after
/// the other run's is refused with "The provisioned throughput for the table will not change"
/// (the `unchanged` race, which 50 ms updates and moto, which accepts it, never produce).
fn dynalite_instant_updates() -> Server {
    Server::Dynalite {
        create_ms: 50,
        update_ms: 0,
    }
}

#[tokio::test]
async fn overlapping_pairs_for_a_week_on_moto() {
    a_week_of_overlapping_pairs(Server::Moto, false).await;
}

#[tokio::test]
async fn overlapping_pairs_for_a_week_with_retention_on_moto() {
    a_week_of_overlapping_pairs(Server::Moto, true).await;
}

#[tokio::test]
async fn overlapping_pairs_for_a_week_on_dynalite() {
    a_week_of_overlapping_pairs(dynalite(), false).await;
}

#[tokio::test]
async fn overlapping_pairs_for_a_week_with_retention_on_dynalite() {
    a_week_of_overlapping_pairs(dynalite(), true).await;
}

#[tokio::test]
async fn overlapping_pairs_for_a_week_on_dynalite_with_instant_updates() {
    a_week_of_overlapping_pairs(dynalite_instant_updates(), false).await;
}

#[tokio::test]
async fn overlapping_pairs_for_a_week_with_retention_on_dynalite_with_instant_updates() {
    a_week_of_overlapping_pairs(dynalite_instant_updates(), true).await;
}
