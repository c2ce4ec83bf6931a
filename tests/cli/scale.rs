//! An account as AWS would serve it, at the smallest scale that shows the wire: owned tables
//! plus foreign ones on moto, enough for two ListTables pages, behind the proxy with AWS's
//! per-account tag-API rates (ListTagsOfResource 10/s, TagResource and UntagResource 5/s), the
//! account's table quota and 20 ms added to every call. The tables were made by an earlier
//! version, with our family tag; `init` records them first. A catch-up `resize-old` (every
//! table still hot; each table's tags read just before its change, at 10 a second) and then a
//! steady-state one end with every table in its phase and nothing failed, each run's time
//! printed, and the steady-state run makes exactly the floor of calls: with no change due and
//! no current table to read the tags of, ceil(tables / 100) ListTables + one DescribeTable per
//! owned table, plus the ledger's Query pages (twice: before the lease and under it) and the
//! lease's PutItem and DeleteItem (docs/benchmark.md gives the floor with changes).
//!
//! The same catch-up and floor at the default table quota (2,500 tables, which may need two
//! runs' time budgets, each run inside the functions' 300 s timeout) run on the in-memory
//! account in virtual time: crates/core/tests/engine/scale.rs.

use std::collections::BTreeMap;
use std::time::Instant;

use aws_sdk_dynamodb::types::ScalarAttributeType;
use aws_sdk_dynamodb::Client;
use chrono::{Duration, NaiveDate};
use futures::stream::{self, StreamExt};
use testkit::{LocalDynamo, ProcessRun, Proxy, Server};

/// Two ListTables pages with the foreign tables.
const OWNED: usize = 120;
const FOREIGN: [&str; 3] = [
    "timeseries_backup",
    "timeseries_eu_2018-10-18",
    "timeseries_audit",
];

/// A table as an earlier version's create_new made it with the default policy: keys pk / sk
/// (N), 300 / 1000, our family tag; `init` records it in the family's ledger.
async fn create_owned(client: &Client, name: String) {
    testkit::create_keyed(client, &name, &["pk", "sk"], ScalarAttributeType::N)
        .provisioned_throughput(testkit::throughput(300, 1000))
        .tags(
            aws_sdk_dynamodb::types::Tag::builder()
                .key("ddb-rollover:family")
                .value("timeseries")
                .build()
                .expect("key and value"),
        )
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateTable {name}: {e:?}"));
}

fn cli(proxy: &Proxy, args: &[&str]) -> ProcessRun {
    ProcessRun::of(
        std::process::Command::new(crate::support::binaries::cli())
            .args(["--endpoint-url", &proxy.endpoint(), "--region", "us-east-1"])
            .args(["--output", "json", "--time-budget", "280s"])
            .args(args)
            .envs(proxy.env())
            .env_remove("ROLLOVER_POLICY"),
    )
}

#[tokio::test]
async fn a_hundred_and_twenty_tables_at_awss_rates_catch_up_then_stay_at_the_floor_of_two_pages() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let first = NaiveDate::from_ymd_opt(2012, 1, 1).unwrap();
    let names: Vec<String> = (0..OWNED)
        .map(|i| format!("timeseries_{}", first + Duration::days(i as i64)))
        .collect();
    let last = first + Duration::days(OWNED as i64 - 1);
    stream::iter(names.clone())
        .for_each_concurrent(16, |name| {
            let client = client.clone();
            async move { create_owned(&client, name).await }
        })
        .await;
    for name in FOREIGN {
        testkit::create_plain_table(&client, name).await;
    }

    // Made before the ledger: the operator's `init` records them (directly on moto).
    let init = ProcessRun::of(
        std::process::Command::new(crate::support::binaries::cli())
            .args(["--endpoint-url", server.endpoint(), "--region", "us-east-1"])
            .args(["--at", &format!("{last}T12:00:00Z"), "init", "--yes"])
            .envs(server.env())
            .env_remove("ROLLOVER_POLICY"),
    );
    assert_eq!(init.code, 0, "{}{}", init.stdout, init.stderr);

    let proxy = Proxy::start(server.endpoint());
    proxy.aws_rates();
    // The family's ledger is a table too.
    proxy.table_quota(OWNED + FOREIGN.len() + 1);
    proxy.latency_per_call(std::time::Duration::from_millis(20));
    let all_tables = OWNED + FOREIGN.len();
    let pages = all_tables.div_ceil(100);
    assert_eq!(pages, 2, "the listing pages");

    // Catch-up: the day after the last table, every table still hot. The tags of each table
    // are read just before its change (none were read to plan it), at AWS's 10 a second; at
    // the default quota that may need more than one run's time budget: each run makes
    // progress, defers only for want of time, and fails nothing, until nothing is left.
    let at = format!("{}T00:15:00Z", last + Duration::days(1));
    let started = Instant::now();
    let mut done = 0;
    let mut catch_up_runs = 0;
    let catch_up_calls = loop {
        catch_up_runs += 1;
        let catch_up = cli(&proxy, &["--at", &at, "resize-old"]);
        assert_eq!(catch_up.code, 0, "{}", catch_up.stderr);
        let report = catch_up.json();
        let summary = &report["summary"];
        assert_eq!(summary["failed"], 0, "{summary}");
        let made = summary["done"].as_u64().unwrap() as usize;
        assert!(made > 0, "catch-up run {catch_up_runs} made no change: {summary}");
        done += made;
        let deferrals: Vec<&serde_json::Value> = report["tables"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|line| line["outcome"] == "deferred")
            .map(|line| &line["deferral"])
            .collect();
        assert!(
            deferrals.iter().all(|cause| *cause == "time_budget"),
            "{deferrals:?}"
        );
        if deferrals.is_empty() {
            break proxy.counts();
        }
        assert!(
            catch_up_runs < 3,
            "still deferring after {catch_up_runs} runs: {summary}"
        );
    };
    let catch_up_seconds = started.elapsed().as_secs_f64();
    assert_eq!(done, OWNED);

    // Read back: the newest table is warm, all others cold.
    let capacities: BTreeMap<String, (i64, i64)> = testkit::describe_all(&client)
        .await
        .into_iter()
        .filter(|(name, _)| names.contains(name))
        .map(|(name, t)| {
            let p = t.provisioned_throughput().unwrap();
            (
                name,
                (
                    p.read_capacity_units().unwrap(),
                    p.write_capacity_units().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(capacities.len(), OWNED);
    for (name, capacity) in &capacities {
        let expected = if *name == names[OWNED - 1] {
            (100, 1)
        } else {
            (1, 1)
        };
        assert_eq!(*capacity, expected, "{name}");
    }

    // Steady state, an hour later: nothing to change, the floor of calls.
    proxy.reset_calls();
    let at = format!("{}T01:15:00Z", last + Duration::days(1));
    let started = Instant::now();
    let steady = cli(&proxy, &["--at", &at, "resize-old"]);
    let steady_seconds = started.elapsed().as_secs_f64();
    assert_eq!(steady.code, 0, "{}", steady.stderr);
    let report = steady.json();
    assert_eq!(report["summary"]["done"], 0, "{}", report["summary"]);
    // The ledger's records take a Query page or a few (1 MB each, a few at 2,500 tables), read
    // twice (before the lease and under it).
    let mut counts = proxy.counts();
    let ledger_pages = counts.remove("Query").unwrap_or_default();
    assert!(
        (2..=6).contains(&ledger_pages) && ledger_pages % 2 == 0,
        "{ledger_pages} Query pages"
    );
    let floor = BTreeMap::from([
        ("ListTables".to_string(), pages),
        ("DescribeTable".to_string(), OWNED),
        ("PutItem".to_string(), 1),
        ("DeleteItem".to_string(), 1),
    ]);
    assert_eq!(counts, floor, "the floor, the lease's PutItem and DeleteItem");
    eprintln!(
        "{OWNED} owned + {} foreign tables, AWS's rates, 20 ms a call: catch-up resize-old {catch_up_seconds:.1} s \
         in {catch_up_runs} run(s) ({catch_up_calls:?}), steady state {steady_seconds:.1} s ({:?}, floor {})",
        FOREIGN.len(),
        proxy.counts(),
        pages + OWNED
    );
}
