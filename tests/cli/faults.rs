//! Attacks: the real `ddb-rollover` binary against moto behind the testkit's fault-injecting
//! proxy. Every test starts its own moto and its own proxy; the cases inside a test are kept
//! apart by day (the day cycles) or by table prefix (one prefix per case). Results are read
//! back from moto directly (an SDK client on the server, not through the proxy), never taken
//! from our report alone; the report and the calls the proxy saw are checked as well.
//!
//! - `transient_drops_and_resets_are_absorbed`, `transient_500s_and_503s_are_absorbed`,
//!   `transient_throttling_is_absorbed`, `transient_latency_is_absorbed`: Drop, Reset, HTTP 500, HTTP 503,
//!   ThrottlingException and 200 ms of latency, each applied once to each operation a day
//!   cycle sends (ListTables, DescribeTable, ListTagsOfResource, CreateTable, TagResource,
//!   UpdateTable, DeleteTable; checked against a clean reference cycle's calls), armed again
//!   before each of create_new at 23:45 and resize_old at 00:15, over 16 simulated days of
//!   2018 (9 for the tests of one fault) with a template tag (removed by hand from the current table every day, so create_new
//!   puts it back) and retention (`delete_after = 2`). Proves: the SDK's retries absorb one
//!   transient fault anywhere; every run exits 0; its report is the clean cycle's (same
//!   actions and outcomes, nothing deferred or failed); a fault costs exactly one more attempt
//!   of its operation and no other call; moto ends exactly where a clean run leaves it (table
//!   set, capacities, every tag).
//! - `persistent_faults_fail_loudly_and_a_clean_run_repairs`: 503 on every UpdateTable of one
//!   table in resize_old; every CreateTable of the next period's table dropped in create_new;
//!   500 on every DescribeTable of one table in resize_old, and of the next period's table in
//!   create_new; every ListTables dropped. Proves: after exactly the SDK's 3 attempts the table
//!   (or, for ListTables, the run) fails with exit 1 while the other tables are still done;
//!   the error is one readable line "<Operation> <table>: <message>. <what to do>" with no
//!   Rust debug dump (JSON report and stderr); a table that could not be read gets no call and
//!   is never taken for missing; a later run without faults converges to the exact state.
//! - `vanished_tables_without_retention`, `vanished_tables_with_retention`: an old table
//!   deleted (as by another run) right before our DescribeTable, ListTagsOfResource,
//!   UpdateTable, TagResource or DeleteTable of it in resize_old. Proves: exit 0; the table is
//!   absent from the report when it vanished during observation and "gone" when it vanished
//!   before its action; the other tables are exactly right; the table is gone from moto.
//!   moto answers TagResource on a deleted table with 200, so the TagResource case also runs
//!   with AWS's answer (ResourceNotFoundException) injected, which must give "gone".
//! - `vanished_tables_in_create_new`: the pre-built table deleted before create_new's
//!   DescribeTable of it is made again in the same run, exactly as it was (exit 0); the current
//!   table vanishing before its TagResource fails the run (create_new's own tables must exist
//!   when it ends) with a readable error that says the next run creates it again.
//! - `refusals_are_unchanged_deferred_gone_or_failed`: UpdateTable answered "The provisioned
//!   throughput for the table will not change" is unchanged (sent once, not retried); another
//!   ValidationException fails the table (exit 1); LimitExceededException (after the SDK's 3
//!   attempts) and ResourceInUseException (after 1) defer it (exit 0) and record the refusal
//!   in the `ddb-rollover:last-deferral` tag on moto; DeleteTable answered
//!   ResourceInUseException defers an ACTIVE table and is "gone" for a table that has vanished
//!   when we look again. A clean run afterwards does what was held back.
//! - `clocks_that_could_hurt_are_refused_before_any_call`: `resize-old --at` five years ahead,
//!   and `--at` 0999-06-01, 9999-12-31T12:00 (the next day's label would be year 10000) and
//!   10000-01-01 for both commands, also with `--dry-run` or `--allow-future-clock`, exit 2
//!   naming `--at` with zero calls at the proxy; `resize-old --dry-run` five years ahead plans
//!   without a change, and `--allow-future-clock` five years ahead really runs (it dials
//!   today's tables down on moto).
//! - `aws_rate_limits_on_tag_calls`: ListTagsOfResource limited to 10/s and TagResource to 5/s
//!   as AWS does, 31 owned tables whose template tag changed, one resize-old run. The run paces
//!   its tag calls (`[rates]`), so it exits 0 with no throttled call and every table retagged
//!   and dialled down (read back); it prints what it measured (exit code, seconds, calls and
//!   throttled calls per operation, the report's summary). Before pacing, 7 of 10 runs failed.

use super::common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use chrono::{NaiveDate, Utc};
use common::{run_cli, DEBUG_DUMP};
use serde_json::Value;
use testkit::{Fault, LocalDynamo, ProcessRun, Proxy, Rule, Server};

const HOT: (i64, i64) = (300, 1000);
const WARM: (i64, i64) = (100, 1);
const COLD: (i64, i64) = (1, 1);

const FAMILY: &str = "ddb-rollover:family";
const PERIOD_START: &str = "ddb-rollover:period-start";
const PERIOD_END: &str = "ddb-rollover:period-end";
const POLICY_HASH: &str = "ddb-rollover:policy-hash";
const LAST_DEFERRAL: &str = "ddb-rollover:last-deferral";

/// One moto, one proxy in front of it, and a client on moto itself for reading back.
struct Rig {
    server: LocalDynamo,
    proxy: Proxy,
    client: Client,
}

impl Rig {
    async fn start() -> Rig {
        let server = LocalDynamo::start(Server::Moto);
        let proxy = Proxy::start(server.endpoint());
        let client = server.client().await;
        Rig {
            server,
            proxy,
            client,
        }
    }

    /// Runs the binary through the proxy.
    fn cli(&self, args: &[&str]) -> ProcessRun {
        run_cli(&self.proxy.endpoint(), self.proxy.env(), args)
    }

    /// Runs the binary against moto directly (setup that must not meet a fault).
    fn cli_direct(&self, args: &[&str]) -> ProcessRun {
        run_cli(self.server.endpoint(), self.server.env(), args)
    }

    /// Tables named `{prefix}_...` on moto, with capacity and tags.
    async fn tables(&self, prefix: &str) -> BTreeMap<String, TableState> {
        let mut out = BTreeMap::new();
        for (name, table) in testkit::describe_all(&self.client).await {
            if !name.starts_with(&format!("{prefix}_")) {
                continue;
            }
            let throughput = table.provisioned_throughput().expect("provisioned throughput");
            let capacity = (
                throughput.read_capacity_units().unwrap_or(0),
                throughput.write_capacity_units().unwrap_or(0),
            );
            let tags = testkit::tags_of(&self.client, table.table_arn().expect("an ARN")).await;
            out.insert(name, TableState { capacity, tags });
        }
        out
    }

    /// Table name to (RCU, WCU), read back from moto.
    async fn capacities(&self, prefix: &str) -> BTreeMap<String, (i64, i64)> {
        self.tables(prefix)
            .await
            .into_iter()
            .map(|(name, state)| (name, state.capacity))
            .collect()
    }

    async fn arn(&self, table: &str) -> String {
        self.client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .unwrap_or_else(|e| panic!("DescribeTable {table}: {e:?}"))
            .table()
            .and_then(|t| t.table_arn())
            .expect("an ARN")
            .to_owned()
    }

    /// Removes tag `key` from `table` on moto, as a person might.
    async fn untag(&self, table: &str, key: &str) {
        let arn = self.arn(table).await;
        self.client
            .untag_resource()
            .resource_arn(arn)
            .tag_keys(key)
            .send()
            .await
            .unwrap_or_else(|e| panic!("UntagResource {table}: {e:?}"));
    }

    /// Faults the proxy applied to `operation` since the last `reset_calls`.
    fn faulted(&self, operation: &str) -> usize {
        self.proxy
            .calls()
            .iter()
            .filter(|c| c.operation == operation && c.fault.is_some())
            .count()
    }

    fn counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for call in self.proxy.calls() {
            *counts.entry(call.operation).or_insert(0) += 1;
        }
        counts
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct TableState {
    capacity: (i64, i64),
    tags: BTreeMap<String, String>,
}

/// A policy file of its own under the temp dir, removed when dropped; derefs to its path.
struct PolicyFile(String);

impl std::ops::Deref for PolicyFile {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for PolicyFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes `toml` to a new policy file.
fn policy_file(name: &str, toml: &str) -> PolicyFile {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let path: PathBuf = std::env::temp_dir().join(format!(
        "ddb-rollover-faults-{}-{n}-{name}.toml",
        std::process::id()
    ));
    std::fs::write(&path, toml).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    PolicyFile(path.to_str().expect("a UTF-8 temp path").to_owned())
}

fn day(start: NaiveDate, offset: i64) -> NaiveDate {
    start + chrono::Duration::days(offset)
}

/// The outcome of `table`'s `action` line.
fn outcome(report: &Value, table: &str, action: &str) -> String {
    let found: Vec<String> = testkit::report_lines(report)
        .into_iter()
        .filter(|(t, a, _)| t == table && a == action)
        .map(|(_, _, o)| o)
        .collect();
    assert_eq!(found.len(), 1, "{table} {action} in {report:#}");
    found[0].clone()
}

/// The `error` of `table`'s failed line.
fn error_of(report: &Value, table: &str) -> String {
    report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["table"] == table && l["outcome"] == "failed")
        .unwrap_or_else(|| panic!("no failed line for {table} in {report:#}"))["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{table}'s failed line has no error"))
        .to_owned()
}

fn tables_in(report: &Value) -> Vec<String> {
    let mut names: Vec<String> = testkit::report_lines(report)
        .into_iter()
        .map(|(t, _, _)| t)
        .collect();
    names.dedup();
    names
}

/// A run's exit code must be `code`; returns its JSON report.
fn expect_exit(run: &ProcessRun, code: i32, what: &str) -> Value {
    assert_eq!(
        run.code, code,
        "{what}: exit {} (want {code})\nstdout:\n{}\nstderr:\n{}",
        run.code, run.stdout, run.stderr
    );
    run.json()
}

/// The error text is one readable line naming the operation, the table and what to do.
fn assert_readable(error: &str, operation: &str, table: &str, advice: &str) {
    assert!(!error.contains('\n'), "not one line: {error}");
    assert!(
        error.starts_with(&format!("{operation} {table}: ")),
        "should start with \"{operation} {table}: \": {error}"
    );
    assert!(error.contains(advice), "should say {advice:?}: {error}");
    assert_no_debug_dump(error);
}

/// Stderr carries the same error on one line (the log line of the failed table).
fn assert_stderr_names(stderr: &str, operation: &str, table: &str, advice: &str) {
    let named = format!("{operation} {table}: ");
    assert!(
        stderr
            .lines()
            .any(|line| line.contains(&named) && line.contains(advice)),
        "stderr should name {named:?} and say {advice:?} on one line:\n{stderr}"
    );
    assert_no_debug_dump(stderr);
}

fn assert_no_debug_dump(text: &str) {
    for dump in DEBUG_DUMP {
        assert!(!text.contains(dump), "Rust debug dump {dump:?} in: {text}");
    }
}

// ------------------------------------------------------------------ transient faults

const CYCLE_POLICY: &str = r#"
[template]
tags = { team = "iot" }

[retention]
delete_after = 2
keep_newest = 2
"#;

/// The operations a day cycle sends (checked against the clean reference cycle).
const CYCLE_OPERATIONS: [&str; 7] = [
    "ListTables",
    "DescribeTable",
    "ListTagsOfResource",
    "CreateTable",
    "TagResource",
    "UpdateTable",
    "DeleteTable",
];

/// A report line with the table replaced by its age: cycles on different days compare.
fn by_age(report: &Value) -> Vec<(i64, String, String)> {
    let mut out: Vec<(i64, String, String)> = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["age"].as_i64().unwrap_or_else(|| panic!("no age: {l:#}")),
                l["decision"]["action"].as_str().unwrap().to_owned(),
                l["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// What a clean cycle sends and reports, for comparing faulty cycles with.
struct Reference {
    /// Calls per operation, for create_new and resize_old.
    counts: [BTreeMap<String, usize>; 2],
    /// Report lines by age, for create_new and resize_old.
    reports: [Vec<(i64, String, String)>; 2],
    policy_hash: String,
}

struct Cycles {
    rig: Rig,
    policy: PolicyFile,
    start: NaiveDate,
    next: i64,
    reference: Option<Reference>,
}

impl Cycles {
    async fn start() -> Cycles {
        let mut cycles = Cycles {
            rig: Rig::start().await,
            policy: policy_file("cycle", CYCLE_POLICY),
            start: NaiveDate::from_ymd_opt(2018, 3, 1).unwrap(),
            next: 0,
            reference: None,
        };
        // Day 0 creates the first two tables; day 1 is the first full cycle, the reference.
        cycles.cycle(None).await;
        cycles.cycle(None).await;
        cycles
    }

    /// The state a clean run leaves after the cycle of day `d`: `d` warm, `d + 1` hot (the
    /// current period at 00:15), everything older deleted; every table fully tagged.
    fn expected(&self, d: NaiveDate, hash: &str) -> BTreeMap<String, TableState> {
        [(d, WARM), (day(d, 1), HOT)]
            .into_iter()
            .map(|(date, capacity)| {
                let tags = BTreeMap::from([
                    ("team".to_owned(), "iot".to_owned()),
                    (FAMILY.to_owned(), "timeseries".to_owned()),
                    (PERIOD_START.to_owned(), format!("{date}T00:00:00+00:00")),
                    (PERIOD_END.to_owned(), format!("{}T00:00:00+00:00", day(date, 1))),
                    (POLICY_HASH.to_owned(), hash.to_owned()),
                ]);
                (format!("timeseries_{date}"), TableState { capacity, tags })
            })
            .collect()
    }

    /// One day: someone strips the template tag from the current table; create_new at 23:45
    /// (which puts it back and pre-builds tomorrow's table), resize_old at 00:15 the next day
    /// (yesterday's table warm, the day before's deleted). `fault`, when given, is armed once
    /// for `operation` before each of the two runs.
    async fn cycle(&mut self, fault: Option<(&str, Fault)>) {
        let d = day(self.start, self.next);
        self.next += 1;
        let current = format!("timeseries_{d}");
        if self.next > 1 {
            self.rig.untag(&current, "team").await;
        }
        let label = match &fault {
            Some((op, f)) => format!("{} on {op}", f.label()),
            None => "no fault".to_owned(),
        };
        let runs = [
            ("create-new", format!("{d}T23:45:00Z")),
            ("resize-old", format!("{}T00:15:00Z", day(d, 1))),
        ];
        let mut counts: Vec<BTreeMap<String, usize>> = Vec::new();
        let mut reports = Vec::new();
        let mut applied = Vec::new();
        for (command, at) in &runs {
            self.rig.proxy.reset_calls();
            if let Some((op, f)) = &fault {
                self.rig.proxy.clear();
                self.rig.proxy.add(Rule::op(op), f.clone());
            }
            let started = Instant::now();
            let run = self
                .rig
                .cli(&["--policy", &self.policy, "--output", "json", "--at", at, command]);
            let report = expect_exit(&run, 0, &format!("{command} at {at} with {label}"));
            assert_no_debug_dump(&run.stderr);
            assert_eq!(report["summary"]["failed"], 0, "{label}: {report:#}");
            assert_eq!(report["summary"]["deferred"], 0, "{label}: {report:#}");
            // A guard against a hang, not a speed goal. After a ThrottlingException the SDK's
            // adaptive retry mode slows the client's whole send rate down for a while, so a
            // throttled run takes longer (about 20 s here).
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{command} with {label} took {:?}",
                started.elapsed()
            );
            applied.push(fault.as_ref().map_or(0, |(op, _)| self.rig.faulted(op)));
            counts.push(self.rig.counts());
            reports.push(by_age(&report));
        }
        self.rig.proxy.clear();

        let hash = match &self.reference {
            Some(reference) => reference.policy_hash.clone(),
            None => self
                .rig
                .tables("timeseries")
                .await
                .get(&current)
                .and_then(|t| t.tags.get(POLICY_HASH).cloned())
                .expect("the current table carries the policy hash"),
        };
        let state = self.rig.tables("timeseries").await;
        assert_eq!(state, self.expected(d, &hash), "state after day {d} with {label}");

        match (&self.reference, self.next) {
            // Day 0 creates the current table too: not a regular cycle.
            (_, 1) => {}
            (None, _) => {
                let counts: [BTreeMap<String, usize>; 2] = [counts[0].clone(), counts[1].clone()];
                for op in CYCLE_OPERATIONS {
                    assert!(
                        counts.iter().any(|c| c.contains_key(op)),
                        "a clean cycle should send {op}: {counts:?}"
                    );
                }
                self.reference = Some(Reference {
                    counts,
                    reports: [reports[0].clone(), reports[1].clone()],
                    policy_hash: hash,
                });
            }
            (Some(reference), _) => {
                let (op, f) = fault.as_ref().expect("faulty cycles have a fault");
                for run in 0..2 {
                    let sends = reference.counts[run].contains_key(*op);
                    assert_eq!(
                        applied[run],
                        usize::from(sends),
                        "{label}: run {} should meet the fault exactly when it sends {op}",
                        runs[run].0
                    );
                    // A fault that is not forwarded costs one more attempt of its operation.
                    let mut want = reference.counts[run].clone();
                    if sends && !matches!(f, Fault::Latency(_)) {
                        *want.get_mut(*op).unwrap() += 1;
                    }
                    assert_eq!(counts[run], want, "{label}: calls of {}", runs[run].0);
                    assert_eq!(
                        reports[run], reference.reports[run],
                        "{label}: {} reported otherwise than a clean run",
                        runs[run].0
                    );
                }
            }
        }
    }

    async fn attack(&mut self, faults: &[Fault]) {
        for fault in faults {
            for op in CYCLE_OPERATIONS {
                self.cycle(Some((op, fault.clone()))).await;
            }
        }
    }
}

#[tokio::test]
async fn transient_drops_and_resets_are_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack(&[Fault::Drop, Fault::Reset]).await;
}

#[tokio::test]
async fn transient_500s_and_503s_are_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack(&[Fault::Status(500), Fault::Status(503)]).await;
}

// Throttling and latency attack separate stacks, so the two run side by side: each waits on
// the SDK's real backoff or the proxy's delay, not on the CPU.
#[tokio::test]
async fn transient_throttling_is_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack(&[Fault::Throttle]).await;
}

#[tokio::test]
async fn transient_latency_is_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack(&[Fault::Latency(Duration::from_millis(200))]).await;
}

// ------------------------------------------------------------------ persistent faults

/// `{prefix}_{date}` for the days of October 2018.
fn table(prefix: &str, date: &str) -> String {
    format!("{prefix}_2018-10-{date}")
}

#[tokio::test]
async fn persistent_faults_fail_loudly_and_a_clean_run_repairs() {
    let rig = Rig::start().await;
    let premake3 = policy_file("premake3", "premake = 3\n");
    let run = |prefix: &str, at: &str, command: &str| {
        rig.cli(&[
            "--policy", &premake3, "--prefix", prefix, "--output", "json", "--at", at, command,
        ])
    };

    // 1. resize_old: every UpdateTable of one table answered 503.
    let p = "upd";
    expect_exit(&run(p, "2018-10-20T23:45:00Z", "create-new"), 0, "setup");
    let victim = table(p, "21");
    rig.proxy.add(
        Rule::op("UpdateTable").on_table(&victim).always(),
        Fault::Status(503),
    );
    rig.proxy.reset_calls();
    let failed = run(p, "2018-10-23T00:15:00Z", "resize-old");
    let report = expect_exit(&failed, 1, "resize-old with UpdateTable 503 on one table");
    assert_eq!(outcome(&report, &victim, "update"), "failed", "{report:#}");
    assert_eq!(outcome(&report, &table(p, "20"), "update"), "done");
    assert_eq!(outcome(&report, &table(p, "22"), "update"), "done");
    assert_eq!(report["summary"]["failed"], 1, "{report:#}");
    assert_eq!(report["summary"]["failed_tables"], 1, "{report:#}");
    assert_readable(
        &error_of(&report, &victim),
        "UpdateTable",
        &victim,
        "DynamoDB failed on its side: a later run retries",
    );
    assert_stderr_names(
        &failed.stderr,
        "UpdateTable",
        &victim,
        "DynamoDB failed on its side: a later run retries",
    );
    assert_eq!(rig.faulted("UpdateTable"), 3, "the SDK's 3 attempts, no more");
    let want = |victim_capacity| {
        BTreeMap::from([
            (table(p, "20"), COLD),
            (table(p, "21"), victim_capacity),
            (table(p, "22"), WARM),
            (table(p, "23"), HOT),
        ])
    };
    assert_eq!(
        rig.capacities(p).await,
        want(HOT),
        "only the victim is left behind"
    );
    rig.proxy.clear();
    let repaired = expect_exit(&run(p, "2018-10-23T00:15:00Z", "resize-old"), 0, "repair");
    assert_eq!(outcome(&repaired, &victim, "update"), "done", "{repaired:#}");
    assert_eq!(outcome(&repaired, &table(p, "20"), "unchanged"), "unchanged");
    assert_eq!(rig.capacities(p).await, want(COLD), "repaired");

    // 2. create_new: every CreateTable of the next period's table dropped.
    let p = "cre";
    let default_policy = |at: &str| rig.cli(&["--prefix", p, "--output", "json", "--at", at, "create-new"]);
    let next = table(p, "21");
    rig.proxy
        .add(Rule::op("CreateTable").on_table(&next).always(), Fault::Drop);
    rig.proxy.reset_calls();
    let failed = default_policy("2018-10-20T23:45:00Z");
    let report = expect_exit(&failed, 1, "create-new with the next table's CreateTable dropped");
    assert_eq!(outcome(&report, &table(p, "20"), "create"), "done", "{report:#}");
    assert_eq!(outcome(&report, &next, "create"), "failed", "{report:#}");
    assert_readable(
        &error_of(&report, &next),
        "CreateTable",
        &next,
        "DynamoDB could not be reached",
    );
    assert_stderr_names(
        &failed.stderr,
        "CreateTable",
        &next,
        "DynamoDB could not be reached",
    );
    assert_eq!(rig.faulted("CreateTable"), 3, "the SDK's 3 attempts, no more");
    assert_eq!(
        rig.capacities(p).await,
        BTreeMap::from([(table(p, "20"), HOT)]),
        "the next period lacks its table"
    );
    rig.proxy.clear();
    let repaired = expect_exit(&default_policy("2018-10-20T23:45:00Z"), 0, "repair");
    assert_eq!(outcome(&repaired, &next, "create"), "done", "{repaired:#}");
    assert_eq!(
        rig.capacities(p).await,
        BTreeMap::from([(table(p, "20"), HOT), (next.clone(), HOT)])
    );

    // 3. resize_old: every DescribeTable of one table answered 500: nothing is decided for
    // it, the others go on.
    let p = "des";
    expect_exit(&run(p, "2018-10-20T23:45:00Z", "create-new"), 0, "setup");
    let victim = table(p, "20");
    rig.proxy.add(
        Rule::op("DescribeTable").on_table(&victim).always(),
        Fault::Status(500),
    );
    rig.proxy.reset_calls();
    let failed = run(p, "2018-10-23T00:15:00Z", "resize-old");
    let report = expect_exit(&failed, 1, "resize-old with DescribeTable 500 on one table");
    assert_eq!(
        testkit::report_lines(&report)
            .into_iter()
            .filter(|(t, _, _)| *t == victim)
            .map(|(_, _, o)| o)
            .collect::<Vec<_>>(),
        ["failed"],
        "{report:#}"
    );
    assert_readable(
        &error_of(&report, &victim),
        "DescribeTable",
        &victim,
        "DynamoDB failed on its side: a later run retries",
    );
    assert_eq!(outcome(&report, &table(p, "21"), "update"), "done");
    assert_eq!(outcome(&report, &table(p, "22"), "update"), "done");
    assert_eq!(rig.faulted("DescribeTable"), 3);
    assert_eq!(
        rig.proxy
            .calls()
            .iter()
            .filter(|c| c.table.as_deref() == Some(victim.as_str()))
            .count(),
        3,
        "no call but the three DescribeTable attempts for an unreadable table"
    );
    let want = |victim_capacity| {
        BTreeMap::from([
            (table(p, "20"), victim_capacity),
            (table(p, "21"), COLD),
            (table(p, "22"), WARM),
            (table(p, "23"), HOT),
        ])
    };
    assert_eq!(rig.capacities(p).await, want(HOT));
    rig.proxy.clear();
    expect_exit(&run(p, "2018-10-23T00:15:00Z", "resize-old"), 0, "repair");
    assert_eq!(rig.capacities(p).await, want(COLD), "repaired");

    // 4. create_new: every DescribeTable of the next period's (existing) table answered
    // 500: it fails, and is not taken for missing (no CreateTable is sent for it).
    let p = "unr";
    expect_exit(&run(p, "2018-10-20T23:45:00Z", "create-new"), 0, "setup");
    let next = table(p, "22");
    rig.proxy.add(
        Rule::op("DescribeTable").on_table(&next).always(),
        Fault::Status(500),
    );
    rig.proxy.reset_calls();
    let failed = rig.cli(&[
        "--prefix",
        p,
        "--output",
        "json",
        "--at",
        "2018-10-21T23:45:00Z",
        "create-new",
    ]);
    let report = expect_exit(&failed, 1, "create-new with the next table unreadable");
    assert_readable(
        &error_of(&report, &next),
        "DescribeTable",
        &next,
        "DynamoDB failed on its side: a later run retries",
    );
    assert_eq!(rig.proxy.count("CreateTable"), 0, "{:?}", rig.proxy.calls());
    rig.proxy.clear();
    assert_eq!(rig.capacities(p).await.len(), 4);

    // 5. Every ListTables dropped: the run fails as a whole, with one readable error line
    // and no change.
    let p = "lst";
    rig.proxy.add(Rule::op("ListTables").always(), Fault::Drop);
    rig.proxy.reset_calls();
    let failed = run(p, "2018-10-20T23:45:00Z", "create-new");
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    let error_lines: Vec<&str> = failed
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(error_lines.len(), 1, "{}", failed.stderr);
    assert!(
        error_lines[0].starts_with(&format!("error: ListTables {p}_: "))
            && error_lines[0].contains("DynamoDB could not be reached"),
        "{}",
        error_lines[0]
    );
    assert_no_debug_dump(&failed.stderr);
    assert_eq!(rig.faulted("ListTables"), 3);
    assert_eq!(rig.proxy.calls().len(), 3, "nothing but ListTables");
    rig.proxy.clear();
    expect_exit(&run(p, "2018-10-20T23:45:00Z", "create-new"), 0, "repair");
    assert_eq!(rig.capacities(p).await.len(), 4);
}

// ------------------------------------------------------------------ tables that vanish

const VANISH_TEMPLATE: &str = "premake = 3\n[template]\ntags = { team = \"iot\" }\n";

/// One vanish case on its own prefix: four tables (20 to 23 October) from create_new, then
/// resize_old at 23 October 00:15 with `rule` armed; returns the report.
async fn vanish_case(
    rig: &Rig,
    policy: &str,
    prefix: &str,
    rule: Rule,
    fault: Fault,
    before: impl std::future::Future<Output = ()>,
) -> Value {
    let setup = rig.cli_direct(&[
        "--policy",
        policy,
        "--prefix",
        prefix,
        "--output",
        "json",
        "--at",
        "2018-10-20T23:45:00Z",
        "create-new",
    ]);
    expect_exit(&setup, 0, "setup");
    before.await;
    rig.proxy.clear();
    rig.proxy.add(rule, fault.clone());
    rig.proxy.reset_calls();
    let run = rig.cli(&[
        "--policy",
        policy,
        "--prefix",
        prefix,
        "--output",
        "json",
        "--at",
        "2018-10-23T00:15:00Z",
        "resize-old",
    ]);
    let report = expect_exit(&run, 0, &format!("resize-old with {} ({prefix})", fault.label()));
    assert_no_debug_dump(&run.stderr);
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
    assert_eq!(
        rig.proxy.calls().iter().filter(|c| c.fault.is_some()).count(),
        1,
        "{prefix}: the fault should have hit once: {:?}",
        rig.proxy.calls()
    );
    rig.proxy.clear();
    report
}

#[tokio::test]
async fn vanished_tables_without_retention() {
    let rig = Rig::start().await;
    let policy = policy_file("vanish", VANISH_TEMPLATE);
    // Without retention resize_old makes 20 and 21 cold and 22 warm.
    let without = |prefix: &str, victim: &str| -> BTreeMap<String, (i64, i64)> {
        [("20", COLD), ("21", COLD), ("22", WARM), ("23", HOT)]
            .into_iter()
            .filter(|(d, _)| *d != victim)
            .map(|(d, c)| (table(prefix, d), c))
            .collect()
    };

    // Before its DescribeTable, and before its ListTagsOfResource: dropped from the
    // observation, as if never listed.
    for (prefix, op) in [("vd", "DescribeTable"), ("vl", "ListTagsOfResource")] {
        let victim = table(prefix, "21");
        let rule = Rule::op(op).on_table(&victim);
        let report = vanish_case(&rig, &policy, prefix, rule, Fault::VanishBefore, async {}).await;
        assert!(!tables_in(&report).contains(&victim), "{op}: {report:#}");
        assert_eq!(report["summary"]["gone"], 0, "{report:#}");
        assert_eq!(outcome(&report, &table(prefix, "20"), "update"), "done");
        assert_eq!(outcome(&report, &table(prefix, "22"), "update"), "done");
        assert_eq!(rig.capacities(prefix).await, without(prefix, "21"), "{op}");
    }

    // Before its UpdateTable: gone.
    let prefix = "vu";
    let victim = table(prefix, "21");
    let rule = Rule::op("UpdateTable").on_table(&victim);
    let report = vanish_case(&rig, &policy, prefix, rule, Fault::VanishBefore, async {}).await;
    assert_eq!(outcome(&report, &victim, "update"), "gone", "{report:#}");
    assert_eq!(report["summary"]["gone"], 1, "{report:#}");
    assert_eq!(outcome(&report, &table(prefix, "20"), "update"), "done");
    assert_eq!(rig.capacities(prefix).await, without(prefix, "21"));

    // Before its TagResource (the template tag was removed by hand, so resize_old puts it
    // back after the update). moto answers TagResource on a deleted table with 200, so AWS's
    // answer, ResourceNotFoundException, is injected instead: the outcome must be gone.
    let prefix = "vt";
    let victim = table(prefix, "21");
    let rule = Rule::op("TagResource").on_table(&victim);
    let not_found = Fault::Error {
        status: 400,
        error_type: "ResourceNotFoundException".into(),
        message: format!("Requested resource not found: Table: {victim} not found"),
    };
    let report = vanish_case(&rig, &policy, prefix, rule, not_found, rig.untag(&victim, "team")).await;
    assert_eq!(outcome(&report, &victim, "update"), "done", "{report:#}");
    assert_eq!(outcome(&report, &victim, "tag"), "gone", "{report:#}");
    // Nothing was deleted here (the answer was injected): every table as a clean run leaves it.
    assert_eq!(rig.capacities(prefix).await, without(prefix, ""));

    // The real vanish before TagResource, on moto: the run must not fail, the table is gone
    // from moto and the other tables are right.
    let prefix = "vr";
    let victim = table(prefix, "21");
    let rule = Rule::op("TagResource").on_table(&victim);
    let report = vanish_case(
        &rig,
        &policy,
        prefix,
        rule,
        Fault::VanishBefore,
        rig.untag(&victim, "team"),
    )
    .await;
    assert_eq!(outcome(&report, &victim, "update"), "done", "{report:#}");
    // moto's 200 makes it "done"; AWS's ResourceNotFoundException makes it "gone" (above).
    let tag = outcome(&report, &victim, "tag");
    assert!(tag == "done" || tag == "gone", "{report:#}");
    assert_eq!(rig.capacities(prefix).await, without(prefix, "21"));
}

#[tokio::test]
async fn vanished_tables_in_create_new() {
    let rig = Rig::start().await;
    let policy = policy_file("vanish-create", "[template]\ntags = { team = \"iot\" }\n");
    let create = |prefix: &str, at: &str| {
        rig.cli(&[
            "--policy",
            &policy,
            "--prefix",
            prefix,
            "--output",
            "json",
            "--at",
            at,
            "create-new",
        ])
    };

    // The pre-built table deleted before create_new's DescribeTable of it: the run sees it
    // missing and makes it again.
    let p = "cd";
    expect_exit(&create(p, "2018-10-20T23:45:00Z"), 0, "setup");
    let next = table(p, "21");
    let before = rig.tables(p).await[&next].clone();
    rig.proxy
        .add(Rule::op("DescribeTable").on_table(&next), Fault::VanishBefore);
    rig.proxy.reset_calls();
    let report = expect_exit(&create(p, "2018-10-20T23:50:00Z"), 0, "next table vanished");
    assert_eq!(rig.faulted("DescribeTable"), 1);
    assert_eq!(outcome(&report, &next, "create"), "done", "{report:#}");
    rig.proxy.clear();
    let after = rig.tables(p).await;
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(after[&next], before, "made again exactly as it was");

    // The current table deleted before create_new's TagResource of it (AWS's answer,
    // injected: moto answers 200): create_new's own table must exist when it ends, so this
    // is a failure that says what happens next, not "gone".
    let p = "ct";
    expect_exit(&create(p, "2018-10-20T23:45:00Z"), 0, "setup");
    let current = table(p, "20");
    rig.untag(&current, "team").await;
    rig.proxy.add(
        Rule::op("TagResource").on_table(&current),
        aws_error(
            "ResourceNotFoundException",
            &format!("Requested resource not found: Table: {current} not found"),
        ),
    );
    let run = create(p, "2018-10-20T23:50:00Z");
    let report = expect_exit(&run, 1, "current table vanished before its tag");
    assert_eq!(outcome(&report, &current, "tag"), "failed", "{report:#}");
    assert_readable(
        &error_of(&report, &current),
        "TagResource",
        &current,
        "the next create_new run creates it again",
    );
    assert_no_debug_dump(&run.stderr);
    rig.proxy.clear();
}

#[tokio::test]
async fn vanished_tables_with_retention() {
    let rig = Rig::start().await;
    let policy = policy_file(
        "vanish-retention",
        &format!("{VANISH_TEMPLATE}[retention]\ndelete_after = 2\nkeep_newest = 1\n"),
    );
    // With retention resize_old deletes 20 and 21 and makes 22 warm.
    let after = |prefix: &str, gone: &str| -> BTreeMap<String, (i64, i64)> {
        [("22", WARM), ("23", HOT)]
            .into_iter()
            .filter(|(d, _)| *d != gone)
            .map(|(d, c)| (table(prefix, d), c))
            .collect()
    };

    for (prefix, op) in [("rd", "DescribeTable"), ("rl", "ListTagsOfResource")] {
        let victim = table(prefix, "21");
        let rule = Rule::op(op).on_table(&victim);
        let report = vanish_case(&rig, &policy, prefix, rule, Fault::VanishBefore, async {}).await;
        assert!(!tables_in(&report).contains(&victim), "{op}: {report:#}");
        assert_eq!(
            outcome(&report, &table(prefix, "20"), "delete"),
            "done",
            "{report:#}"
        );
        assert_eq!(outcome(&report, &table(prefix, "22"), "update"), "done");
        assert_eq!(rig.capacities(prefix).await, after(prefix, ""), "{op}");
    }

    // Before its DeleteTable: gone.
    let prefix = "rx";
    let victim = table(prefix, "21");
    let rule = Rule::op("DeleteTable").on_table(&victim);
    let report = vanish_case(&rig, &policy, prefix, rule, Fault::VanishBefore, async {}).await;
    assert_eq!(outcome(&report, &victim, "delete"), "gone", "{report:#}");
    assert_eq!(outcome(&report, &table(prefix, "20"), "delete"), "done");
    assert_eq!(report["summary"]["gone"], 1, "{report:#}");
    assert_eq!(rig.capacities(prefix).await, after(prefix, ""));

    // The table being made warm, before its UpdateTable: gone; the deletions still happen.
    let prefix = "ru";
    let victim = table(prefix, "22");
    let rule = Rule::op("UpdateTable").on_table(&victim);
    let report = vanish_case(&rig, &policy, prefix, rule, Fault::VanishBefore, async {}).await;
    assert_eq!(outcome(&report, &victim, "update"), "gone", "{report:#}");
    assert_eq!(outcome(&report, &table(prefix, "20"), "delete"), "done");
    assert_eq!(outcome(&report, &table(prefix, "21"), "delete"), "done");
    assert_eq!(rig.capacities(prefix).await, after(prefix, "22"));
}

// ------------------------------------------------------------------ refusals

/// What DynamoDB answers an UpdateTable whose throughput equals the table's.
const UNCHANGED_THROUGHPUT: &str = "The provisioned throughput for the table will not change. \
    The requested value equals the current value. Current ReadCapacityUnits provisioned for the \
    table: 300. Requested ReadCapacityUnits: 1. Current WriteCapacityUnits provisioned for the \
    table: 1000. Requested WriteCapacityUnits: 1. Refer to the Amazon DynamoDB Developer Guide \
    for current limits and how to request higher limits.";

fn aws_error(error_type: &str, message: &str) -> Fault {
    Fault::Error {
        status: 400,
        error_type: error_type.into(),
        message: message.into(),
    }
}

#[tokio::test]
async fn refusals_are_unchanged_deferred_gone_or_failed() {
    let rig = Rig::start().await;
    let plain = policy_file("refusals", "premake = 3\n");
    let retention = policy_file(
        "refusals-retention",
        "premake = 3\n[retention]\ndelete_after = 2\nkeep_newest = 1\n",
    );
    let setup = |policy: &str, prefix: &str| {
        let run = rig.cli_direct(&[
            "--policy",
            policy,
            "--prefix",
            prefix,
            "--at",
            "2018-10-20T23:45:00Z",
            "create-new",
        ]);
        assert_eq!(run.code, 0, "setup {prefix}: {}{}", run.stdout, run.stderr);
    };
    let resize = |policy: &str, prefix: &str| {
        rig.cli(&[
            "--policy",
            policy,
            "--prefix",
            prefix,
            "--output",
            "json",
            "--at",
            "2018-10-23T00:15:00Z",
            "resize-old",
        ])
    };
    let cleanly = |prefix: &str, victim: (i64, i64)| {
        BTreeMap::from([
            (table(prefix, "20"), COLD),
            (table(prefix, "21"), victim),
            (table(prefix, "22"), WARM),
            (table(prefix, "23"), HOT),
        ])
    };

    // "Will not change": another run made the change first. Unchanged, sent once (a
    // ValidationException is not retried), exit 0.
    let p = "un";
    let victim = table(p, "21");
    setup(&plain, p);
    rig.proxy.add(
        Rule::op("UpdateTable").on_table(&victim),
        aws_error("ValidationException", UNCHANGED_THROUGHPUT),
    );
    rig.proxy.reset_calls();
    let report = expect_exit(&resize(&plain, p), 0, "unchanged throughput");
    assert_eq!(outcome(&report, &victim, "update"), "unchanged", "{report:#}");
    assert_eq!(outcome(&report, &table(p, "20"), "update"), "done");
    assert_eq!(rig.faulted("UpdateTable"), 1);
    assert_eq!(
        rig.proxy
            .calls()
            .iter()
            .filter(|c| c.operation == "UpdateTable" && c.table.as_deref() == Some(victim.as_str()))
            .count(),
        1,
        "not retried"
    );
    // The answer was injected, so moto still has the old capacity; the next run fixes it.
    assert_eq!(rig.capacities(p).await, cleanly(p, HOT));
    rig.proxy.clear();
    let again = expect_exit(&resize(&plain, p), 0, "after unchanged");
    assert_eq!(outcome(&again, &victim, "update"), "done", "{again:#}");
    assert_eq!(rig.capacities(p).await, cleanly(p, COLD));

    // Any other ValidationException is a failure of that table, not "unchanged".
    let p = "va";
    let victim = table(p, "21");
    setup(&plain, p);
    rig.proxy.add(
        Rule::op("UpdateTable").on_table(&victim),
        aws_error(
            "ValidationException",
            "One or more parameter values were invalid: ReadCapacityUnits must be at least 1",
        ),
    );
    let run = resize(&plain, p);
    let report = expect_exit(&run, 1, "another ValidationException");
    assert_eq!(outcome(&report, &victim, "update"), "failed", "{report:#}");
    let error = error_of(&report, &victim);
    assert_readable(&error, "UpdateTable", &victim, "ValidationException");
    assert_no_debug_dump(&run.stderr);
    assert_eq!(rig.capacities(p).await, cleanly(p, HOT));
    rig.proxy.clear();

    // Busy or over a limit: deferred (exit 0), the refusal recorded on the table, done by the
    // next run.
    // The SDK counts LimitExceededException as throttling and tries it 3 times; a busy table
    // is not retried.
    for (p, error_type, attempts) in [
        ("le", "LimitExceededException", 3),
        ("iu", "ResourceInUseException", 1),
    ] {
        let victim = table(p, "21");
        setup(&plain, p);
        let message = format!("injected {error_type} for {victim}");
        rig.proxy.add(
            Rule::op("UpdateTable").on_table(&victim).always(),
            aws_error(error_type, &message),
        );
        rig.proxy.reset_calls();
        let report = expect_exit(&resize(&plain, p), 0, error_type);
        assert_eq!(outcome(&report, &victim, "update"), "deferred", "{report:#}");
        assert_eq!(report["summary"]["deferred"], 1, "{report:#}");
        assert_eq!(rig.faulted("UpdateTable"), attempts, "{error_type}");
        assert_eq!(rig.capacities(p).await, cleanly(p, HOT), "{error_type}");
        let tags = testkit::tags_of(&rig.client, &rig.arn(&victim).await).await;
        let recorded = tags
            .get(LAST_DEFERRAL)
            .unwrap_or_else(|| panic!("{error_type}: no {LAST_DEFERRAL} tag on {victim}: {tags:?}"));
        assert!(
            recorded.starts_with("2018-10-23T00:15:00") && recorded.contains("update"),
            "{error_type}: {recorded}"
        );
        rig.proxy.clear();
        let again = expect_exit(&resize(&plain, p), 0, "after the deferral");
        assert_eq!(outcome(&again, &victim, "update"), "done", "{again:#}");
        assert_eq!(rig.capacities(p).await, cleanly(p, COLD), "{error_type}");
    }

    // Retention: DeleteTable refused as busy while the table is ACTIVE: deferred; the next
    // run deletes it.
    let p = "db";
    let victim = table(p, "21");
    setup(&retention, p);
    rig.proxy.add(
        Rule::op("DeleteTable").on_table(&victim),
        aws_error(
            "ResourceInUseException",
            "Attempt to change a resource which is still in use",
        ),
    );
    let report = expect_exit(&resize(&retention, p), 0, "DeleteTable busy");
    assert_eq!(outcome(&report, &victim, "delete"), "deferred", "{report:#}");
    assert_eq!(outcome(&report, &table(p, "20"), "delete"), "done");
    let with_victim = BTreeMap::from([
        (victim.clone(), HOT),
        (table(p, "22"), WARM),
        (table(p, "23"), HOT),
    ]);
    assert_eq!(rig.capacities(p).await, with_victim);
    rig.proxy.clear();
    let again = expect_exit(&resize(&retention, p), 0, "after the busy delete");
    assert_eq!(outcome(&again, &victim, "delete"), "done", "{again:#}");
    let deleted = BTreeMap::from([(table(p, "22"), WARM), (table(p, "23"), HOT)]);
    assert_eq!(rig.capacities(p).await, deleted);

    // DeleteTable refused as busy because another run is deleting it: by the time we look
    // again it is gone, so the outcome is gone, not deferred or failed.
    let p = "dg";
    let victim = table(p, "21");
    setup(&retention, p);
    rig.proxy.add(
        Rule::op("DeleteTable").on_table(&victim),
        aws_error(
            "ResourceInUseException",
            "Attempt to change a resource which is still in use",
        ),
    );
    // The first DescribeTable is the observation's; the second is the executor's look.
    rig.proxy.add(
        Rule::op("DescribeTable").on_table(&victim).skip(1),
        Fault::VanishBefore,
    );
    let report = expect_exit(&resize(&retention, p), 0, "DeleteTable busy, then gone");
    assert_eq!(outcome(&report, &victim, "delete"), "gone", "{report:#}");
    assert_eq!(report["summary"]["gone"], 1, "{report:#}");
    let deleted = BTreeMap::from([(table(p, "22"), WARM), (table(p, "23"), HOT)]);
    assert_eq!(rig.capacities(p).await, deleted);
    rig.proxy.clear();
}

// ------------------------------------------------------------------ clocks

#[tokio::test]
async fn clocks_that_could_hurt_are_refused_before_any_call() {
    let rig = Rig::start().await;
    let now = Utc::now();
    let ahead = (now + chrono::Duration::days(5 * 365)).to_rfc3339();
    let refused = |args: &[&str]| {
        rig.proxy.reset_calls();
        let run = rig.cli(args);
        assert_eq!(run.code, 2, "{args:?}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("--at"),
            "{args:?} should name --at: {}",
            run.stderr
        );
        assert_no_debug_dump(&run.stderr);
        assert_eq!(rig.proxy.calls(), Vec::new(), "{args:?} made AWS calls");
    };
    refused(&["--at", &ahead, "resize-old"]);
    refused(&["--output", "json", "--at", &ahead, "resize-old"]);
    for at in [
        "0999-06-01T00:00:00Z",
        "9999-12-31T12:00:00Z",
        "10000-01-01T00:00:00Z",
    ] {
        for command in ["create-new", "resize-old"] {
            refused(&["--at", at, command]);
            refused(&["--dry-run", "--at", at, command]);
            refused(&["--allow-future-clock", "--at", at, command]);
        }
    }

    // Today's tables exist (create_new may look ahead, so it is not refused either).
    rig.proxy.reset_calls();
    let created = rig.cli(&["--output", "json", "create-new"]);
    let report = expect_exit(&created, 0, "create-new now");
    assert_eq!(report["summary"]["done"], 2, "{report:#}");
    let current = format!("timeseries_{}", report["current_period"].as_str().unwrap());
    assert_eq!(rig.capacities("timeseries").await.get(&current), Some(&HOT));

    // A dry run may look five years ahead: it plans, changes nothing.
    rig.proxy.reset_calls();
    let dry = rig.cli(&["--output", "json", "--dry-run", "--at", &ahead, "resize-old"]);
    let report = expect_exit(&dry, 0, "dry run five years ahead");
    assert!(rig.proxy.count("ListTables") > 0, "the dry run ran");
    assert_eq!(outcome(&report, &current, "update"), "planned", "{report:#}");
    for op in ["UpdateTable", "DeleteTable", "CreateTable", "TagResource"] {
        assert_eq!(rig.proxy.count(op), 0, "a dry run sent {op}");
    }
    assert_eq!(rig.capacities("timeseries").await.get(&current), Some(&HOT));

    // So may an explicit simulation, which really runs (no retention in the default policy).
    rig.proxy.reset_calls();
    let simulated = rig.cli(&[
        "--output",
        "json",
        "--allow-future-clock",
        "--at",
        &ahead,
        "resize-old",
    ]);
    let report = expect_exit(&simulated, 0, "--allow-future-clock five years ahead");
    assert!(!rig.proxy.calls().is_empty());
    assert_eq!(outcome(&report, &current, "update"), "done", "{report:#}");
    assert_eq!(rig.proxy.count("UpdateTable"), 2, "both tables dialled down");
    assert_eq!(rig.capacities("timeseries").await.get(&current), Some(&COLD));
}

// ------------------------------------------------------------------ AWS's rate limits

#[tokio::test]
async fn aws_rate_limits_on_tag_calls() {
    let rig = Rig::start().await;
    // 31 tables (1 to 31 October), made with one template tag; the policy then changes it, so
    // resize_old reads every table's tags and writes every table's tags.
    let made = policy_file("rates-a", "premake = 30\n[template]\ntags = { team = \"a\" }\n");
    let changed = policy_file("rates-b", "premake = 30\n[template]\ntags = { team = \"b\" }\n");
    let setup = rig.cli_direct(&["--policy", &made, "--at", "2018-10-01T10:00:00Z", "create-new"]);
    assert_eq!(setup.code, 0, "{}{}", setup.stdout, setup.stderr);
    assert_eq!(rig.tables("timeseries").await.len(), 31);

    rig.proxy.rate_limit("ListTagsOfResource", 10);
    rig.proxy.rate_limit("TagResource", 5);
    rig.proxy.reset_calls();
    let started = Instant::now();
    let run = rig.cli(&[
        "--policy",
        &changed,
        "--output",
        "json",
        "--at",
        "2018-11-01T00:15:00Z",
        "resize-old",
    ]);
    let seconds = started.elapsed().as_secs_f64();
    let mut throttled = BTreeMap::new();
    for call in rig.proxy.calls() {
        if call.fault.as_deref() == Some("throttle") {
            *throttled.entry(call.operation).or_insert(0) += 1;
        }
    }
    let report = run.json();
    let measured = format!(
        "exit {}, {seconds:.1} s, calls {:?}, throttled {throttled:?}, summary {}",
        run.code,
        rig.counts(),
        report["summary"]
    );
    eprintln!("rate limits, 31 tables: {measured}");
    rig.proxy.clear();
    let tables = rig.tables("timeseries").await;
    let retagged = tables
        .values()
        .filter(|t| t.tags.get("team").map(String::as_str) == Some("b"))
        .count();
    let dialled = tables.values().filter(|t| t.capacity != HOT).count();
    eprintln!("read back: {retagged} of 31 tables retagged, {dialled} of 31 dialled down");

    assert_eq!(
        run.code, 0,
        "a run over 31 tables must stay inside AWS's tag-call rates: {measured}\n{}",
        run.stderr
    );
    assert!(
        throttled.is_empty(),
        "paced calls are never throttled: {measured}"
    );
    assert_eq!(retagged, 31, "every table carries the new tag");
    assert_eq!(dialled, 31, "every table dialled down");
}

// ------------------------------------------------------------------ the time budget

/// A run with a time budget starts no change after it: the first eight UpdateTable calls take
/// 12 s at the proxy (eight run at once), the budget is 10 s, so the last two tables' changes are
/// deferred with the reason, the run exits 0 with its report, and the next run makes them. A
/// create_new that has no time to create the next period's table fails instead. The budget runs
/// from the start of the process, observation included: with 3 s, a busy machine (tests run in
/// parallel) spent it all before the first UpdateTable and deferred all ten.
#[tokio::test]
async fn a_time_budget_defers_what_does_not_fit_and_the_next_run_finishes() {
    let rig = Rig::start().await;
    let made = rig.cli_direct(&[
        "--at",
        "2018-10-01T10:00:00Z",
        "--policy",
        &policy_file("budget", "premake = 9\n"),
        "create-new",
    ]);
    assert_eq!(made.code, 0, "{}{}", made.stdout, made.stderr);
    assert_eq!(rig.tables("timeseries").await.len(), 10);

    rig.proxy.add(
        Rule::op("UpdateTable").times(8),
        Fault::Latency(Duration::from_secs(12)),
    );
    let started = Instant::now();
    let run = rig.cli(&[
        "--output",
        "json",
        "--time-budget",
        "10s",
        "--at",
        "2018-10-25T00:15:00Z",
        "resize-old",
    ]);
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.json();
    assert_eq!(report["summary"]["done"], 8, "{report:#}");
    assert_eq!(report["summary"]["deferred"], 2, "{report:#}");
    let deferred: Vec<&Value> = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["outcome"] == "deferred")
        .collect();
    assert!(
        deferred
            .iter()
            .all(|l| l["error"].as_str().unwrap().contains("time budget")),
        "{deferred:#?}"
    );
    assert_eq!(
        rig.proxy.count("UpdateTable"),
        8,
        "no call is started after the budget"
    );
    eprintln!("time budget 10 s: the run took {seconds:.1} s");
    let dialled =
        |tables: &BTreeMap<String, TableState>| tables.values().filter(|t| t.capacity == COLD).count();
    assert_eq!(dialled(&rig.tables("timeseries").await), 8);

    rig.proxy.clear();
    let rest = rig.cli(&["--at", "2018-10-25T00:15:00Z", "resize-old"]);
    assert_eq!(rest.code, 0, "{}{}", rest.stdout, rest.stderr);
    assert_eq!(dialled(&rig.tables("timeseries").await), 10);

    let create = rig.cli(&[
        "--output",
        "json",
        "--time-budget",
        "0s",
        "--at",
        "2018-10-25T23:45:00Z",
        "create-new",
    ]);
    assert_eq!(create.code, 1, "{}{}", create.stdout, create.stderr);
    assert_eq!(rig.proxy.count("CreateTable"), 0);
    assert!(
        create.stdout.contains("time budget ended first"),
        "{}",
        create.stdout
    );
}

// ------------------------------------------------------------------ the floor of calls

/// A steady-state run makes the floor of calls, counted at the proxy: resize-old one
/// ListTables page plus one DescribeTable per owned table (foreign names, a sibling family's
/// included, are never described or tag-read), create-new one ListTables page plus a
/// DescribeTable for its current and pre-built tables.
#[tokio::test]
async fn steady_state_runs_stay_at_the_floor_of_calls() {
    let rig = Rig::start().await;
    let made = rig.cli_direct(&[
        "--at",
        "2018-10-01T10:00:00Z",
        "--policy",
        &policy_file("floor", "premake = 29\n"),
        "create-new",
    ]);
    assert_eq!(made.code, 0, "{}{}", made.stdout, made.stderr);
    for foreign in [
        "timeseries_backup",
        "timeseries_eu_2018-10-18",
        "timeseries_eu_2018-10-19",
    ] {
        testkit::create_plain_table(&rig.client, foreign).await;
    }
    let owned = 30;
    // Catch up: every table to its phase.
    let catch_up = rig.cli(&["--at", "2018-11-01T00:15:00Z", "resize-old"]);
    assert_eq!(catch_up.code, 0, "{}{}", catch_up.stdout, catch_up.stderr);

    rig.proxy.reset_calls();
    let steady = rig.cli(&["--output", "json", "--at", "2018-11-02T00:15:00Z", "resize-old"]);
    assert_eq!(steady.code, 0, "{}{}", steady.stdout, steady.stderr);
    let changes = steady.json()["summary"]["done"].as_u64().unwrap() as usize;
    assert_eq!(changes, 0, "nothing left to change after the catch-up");
    assert_eq!(
        rig.counts(),
        BTreeMap::from([
            ("ListTables".to_string(), 1),
            ("DescribeTable".to_string(), owned)
        ]),
        "resize-old: ceil(tables / 100) ListTables + one DescribeTable per owned table + changes"
    );
    let foreign = steady.json()["summary"]["foreign"].as_u64().unwrap();
    assert_eq!(foreign, 3, "foreign names are still reported, by name");

    let created = rig.cli(&["--at", "2018-11-02T23:45:00Z", "create-new"]);
    assert_eq!(created.code, 0, "{}{}", created.stdout, created.stderr);
    rig.proxy.reset_calls();
    let again = rig.cli(&["--at", "2018-11-02T23:50:00Z", "create-new"]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(
        rig.counts(),
        BTreeMap::from([
            ("ListTables".to_string(), 1),
            ("DescribeTable".to_string(), 2),
            ("ListTagsOfResource".to_string(), 2)
        ]),
        "create-new: the ListTables pages + DescribeTable and the tags (whose they are) of the current and pre-built tables"
    );
}
