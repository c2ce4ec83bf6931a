//! Attacks: the real `ddb-rollover` binary against moto behind the testkit's fault-injecting
//! proxy. Every test starts its own moto and its own proxy; the cases inside a test are kept
//! apart by day (the day cycles) or by table prefix (one prefix per case). Results are read
//! back from moto directly (an SDK client on the server, not through the proxy), never taken
//! from our report alone; the report and the calls the proxy saw are checked as well.
//!
//! - `transient_drops_and_resets_are_absorbed`, `transient_500s_and_503s_are_absorbed`,
//!   `transient_throttling_of_*_is_absorbed` (the operations in four groups, side by side),
//!   `transient_latency_is_absorbed`: Drop, Reset, HTTP 500, HTTP 503,
//!   ThrottlingException and 200 ms of latency, each applied once to each operation a day
//!   cycle sends (ListTables, DescribeTable, ListTagsOfResource, CreateTable, TagResource,
//!   UpdateTable, DeleteTable; checked against a clean reference cycle's calls), armed again
//!   before each of create_new at 23:45 and resize_old at 00:15, over 16 simulated days of
//!   2018 (9 for the tests of one fault, 3 to 5 for a throttled group) with a template tag (removed by hand from the current table every day, so create_new
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

mod clocks;
mod limits;
mod persistent;
mod refusals;
mod transient;
mod vanish;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use chrono::{NaiveDate, Utc};
use common::{assert_no_debug_dump, error_of, expect_exit, run_cli};
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

/// The arguments of `command` at `at` on `prefix`'s tables under the policy file `policy`,
/// with a JSON report.
fn json_run_args<'a>(policy: &'a str, prefix: &'a str, at: &'a str, command: &'a str) -> [&'a str; 9] {
    [
        "--policy", policy, "--prefix", prefix, "--output", "json", "--at", at, command,
    ]
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

    /// resize-old through the proxy at 23 October 2018 00:15 on `prefix`'s tables, JSON report.
    fn resize_old_on_the_23rd(&self, policy: &str, prefix: &str) -> ProcessRun {
        self.cli(&json_run_args(
            policy,
            prefix,
            "2018-10-23T00:15:00Z",
            "resize-old",
        ))
    }

    /// Runs the binary against moto directly (setup that must not meet a fault).
    fn cli_direct(&self, args: &[&str]) -> ProcessRun {
        run_cli(self.server.endpoint(), self.server.env(), args)
    }

    /// create-new on 1 October 2018 under the policy file `policy`, against moto directly; it
    /// must succeed.
    fn create_on_the_1st(&self, policy: &str) {
        let made = self.cli_direct(&["--policy", policy, "--at", "2018-10-01T10:00:00Z", "create-new"]);
        assert_eq!(made.code, 0, "{}{}", made.stdout, made.stderr);
    }

    /// Tables named `{prefix}_...` on moto, with capacity and tags.
    async fn tables(&self, prefix: &str) -> BTreeMap<String, TableState> {
        let mut out = BTreeMap::new();
        for (name, table) in testkit::describe_all(&self.client).await {
            if !name.starts_with(&format!("{prefix}_")) {
                continue;
            }
            let capacity = testkit::capacity_of(&table);
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
        testkit::table_arn(&self.client, table).await
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

    /// Arms `fault` on every `operation` of `table` and forgets the calls so far: what the
    /// proxy records next is the faulted run's.
    fn fault_always(&self, operation: &str, table: &str, fault: Fault) {
        self.proxy
            .add(Rule::op(operation).on_table(table).always(), fault);
        self.proxy.reset_calls();
    }

    /// The operations of the calls on `table` since the last `reset_calls`, in order.
    fn calls_on(&self, table: &str) -> Vec<String> {
        self.proxy
            .calls()
            .into_iter()
            .filter(|c| c.table.as_deref() == Some(table))
            .map(|c| c.operation)
            .collect()
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

fn tables_in(report: &Value) -> Vec<String> {
    let mut names: Vec<String> = testkit::report_lines(report)
        .into_iter()
        .map(|(t, _, _)| t)
        .collect();
    names.dedup();
    names
}

/// What a table's error says when DynamoDB answered 5xx.
const RETRY_LATER: &str = "DynamoDB failed on its side: a later run retries";

/// What a table's error says when the connection failed.
const UNREACHABLE: &str = "DynamoDB could not be reached";

/// The error of `table`'s failed line in `report` is one readable line naming the operation,
/// the table and what to do.
fn assert_readable(report: &Value, operation: &str, table: &str, advice: &str) {
    let error = error_of(report, table);
    assert!(!error.contains('\n'), "not one line: {error}");
    assert!(
        error.starts_with(&format!("{operation} {table}: ")),
        "should start with \"{operation} {table}: \": {error}"
    );
    assert!(error.contains(advice), "should say {advice:?}: {error}");
    assert_no_debug_dump(&error);
}

/// Stderr holds no log line without DDB_ROLLOVER_LOG (issue 38: the failed table's log line
/// was there): the report's line carries the error ([`assert_readable`]), and stderr only
/// `warning:` and `error:` lines.
fn assert_quiet_stderr(stderr: &str) {
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with("warning: ") || l.starts_with("error: ")),
        "a log line on stderr:\n{stderr}"
    );
    assert_no_debug_dump(stderr);
}

/// The days of October 2018 of the tables made on the 20th, each at the capacity resize_old on
/// the 23rd leaves it at without retention.
const RESIZED: [(&str, (i64, i64)); 4] = [("20", COLD), ("21", COLD), ("22", WARM), ("23", HOT)];

/// The same with retention (`delete_after = 2`): the 20th and the 21st are deleted.
const RETAINED: [(&str, (i64, i64)); 2] = [("22", WARM), ("23", HOT)];

/// `prefix`'s tables as [`RESIZED`] leaves them, but for the one of day `odd`, which is at
/// `capacity`.
fn resized_except(prefix: &str, odd: &str, capacity: (i64, i64)) -> BTreeMap<String, (i64, i64)> {
    RESIZED
        .into_iter()
        .map(|(day, usual)| (table(prefix, day), if day == odd { capacity } else { usual }))
        .collect()
}

/// `prefix`'s tables of `days` at their capacities, without the one of day `gone` (`""`: none).
fn left_of(prefix: &str, days: &[(&str, (i64, i64))], gone: &str) -> BTreeMap<String, (i64, i64)> {
    days.iter()
        .filter(|(day, _)| *day != gone)
        .map(|(day, capacity)| (table(prefix, day), *capacity))
        .collect()
}

/// `{prefix}_{date}` for the days of October 2018.
fn table(prefix: &str, date: &str) -> String {
    format!("{prefix}_2018-10-{date}")
}

/// A fault that answers AWS's error `error_type` (HTTP 400) with `message`.
fn aws_error(error_type: &str, message: &str) -> Fault {
    Fault::Error {
        status: 400,
        error_type: error_type.into(),
        message: message.into(),
    }
}
