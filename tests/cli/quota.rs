//! The account's table quota reached: the real `ddb-rollover` binary against moto behind the
//! testkit proxy, which answers CreateTable past its `table_quota` with AWS's
//! LimitExceededException ("Subscriber limit exceeded: There is a limit of N tables per
//! subscriber"). Results are read back from moto directly, never taken from the report alone.
//!
//! - `create_new_fails_loudly_when_the_quota_is_reached`: the account holds exactly its quota
//!   (3 tables: yesterday's create-new made the current and next tables, plus another
//!   application's). create-new at 23:45 for the next period's table exits 1; its JSON report
//!   shows that table `failed` with one readable line naming the table, the quota ("2,500
//!   tables per Region") and what to do (`retention.delete_after`); the table output and
//!   stderr say the same on one line each; the SDK tried CreateTable 3 times and nothing else
//!   was changed on moto. A family with neither its current nor its next table fails both.
//!   With a higher quota the same run exits 0 and creates the next table. Each refused run
//!   sits through the SDK's retries (LimitExceededException counts as throttling: 3 attempts
//!   with the adaptive mode's back-off), about half a minute.

use super::common;

use std::collections::BTreeMap;
use std::time::Instant;

use aws_sdk_dynamodb::types::Tag;
use aws_sdk_dynamodb::Client;
use common::{assert_no_debug_dump, error_of, expect_exit, run_cli};
use testkit::{LocalDynamo, Proxy, Server};

/// What the quota's refusal must say, from the core's advice.
const QUOTA: &str = "2,500 tables per Region";
const DELETE_AFTER: &str = "retention.delete_after";
/// AWS's own message, as the proxy sends it.
const AWS_MESSAGE: &str = "Subscriber limit exceeded: There is a limit of 4 tables per subscriber";

/// Every table on moto: status, key, capacity and tags, as DescribeTable and
/// ListTagsOfResource report them.
async fn snapshot(client: &Client) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, table) in testkit::describe_all(client).await {
        let arn = table.table_arn().expect("an ARN").to_owned();
        let tags: BTreeMap<String, String> = client
            .list_tags_of_resource()
            .resource_arn(&arn)
            .send()
            .await
            .unwrap_or_else(|e| panic!("ListTagsOfResource {name}: {e:?}"))
            .tags()
            .iter()
            .map(|t: &Tag| (t.key().to_owned(), t.value().to_owned()))
            .collect();
        let throughput = table.provisioned_throughput().map(|t| {
            (
                t.read_capacity_units().unwrap_or(0),
                t.write_capacity_units().unwrap_or(0),
            )
        });
        out.insert(
            name,
            format!(
                "{:?} key {:?} capacity {throughput:?} billing {:?} tags {tags:?}",
                table.table_status(),
                table.key_schema(),
                table.billing_mode_summary().and_then(|b| b.billing_mode()),
            ),
        );
    }
    out
}

/// The quota's refusal of `table`: one line naming the call, the table, AWS's message, the
/// quota and what to do.
fn assert_quota_error(error: &str, table: &str) {
    assert!(!error.contains('\n'), "not one line: {error}");
    assert!(
        error.starts_with(&format!("CreateTable {table}: ")),
        "should start with \"CreateTable {table}: \": {error}"
    );
    for needed in [AWS_MESSAGE, QUOTA, DELETE_AFTER] {
        assert!(error.contains(needed), "should say {needed:?}: {error}");
    }
    assert_no_debug_dump(error);
}

/// `text` has one line naming `table` and the quota.
fn assert_one_line_names(text: &str, table: &str, what: &str) {
    let found: Vec<&str> = text
        .lines()
        .filter(|line| line.contains(table) && line.contains(QUOTA))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{what} should name {table} and the quota on one line:\n{text}"
    );
    assert!(found[0].contains(DELETE_AFTER), "{what}: {}", found[0]);
    assert_no_debug_dump(text);
}

/// The report says the failure; stderr holds no log line without DDB_ROLLOVER_LOG (issue 38),
/// only `warning:` and `error:` lines.
fn assert_quiet_stderr(stderr: &str) {
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with("warning: ") || l.starts_with("error: ")),
        "{stderr}"
    );
    assert_no_debug_dump(stderr);
}

#[tokio::test]
async fn create_new_fails_loudly_when_the_quota_is_reached() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let proxy = Proxy::start(server.endpoint());
    let direct = |args: &[&str]| run_cli(server.endpoint(), server.env(), args);
    let through_proxy = |args: &[&str]| run_cli(&proxy.endpoint(), proxy.env(), args);

    // Yesterday's run made today's and tomorrow's tables (and the family's ledger); another
    // application has one: the account holds 4 tables, and 4 is its quota.
    let made = direct(&["--output", "json", "--at", "2018-10-24T23:45:00Z", "create-new"]);
    expect_exit(&made, 0, "setup: create-new on 2018-10-24");
    testkit::create_plain_table(&client, "orders").await;
    let before = snapshot(&client).await;
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        ["orders", "timeseries_2018-10-24", "timeseries_2018-10-25"]
    );
    proxy.table_quota(4);

    // 1. The next period's table cannot be created: exit 1, the table failed, loudly.
    let next = "timeseries_2018-10-26";
    let started = Instant::now();
    let run = through_proxy(&["--output", "json", "--at", "2018-10-25T23:45:00Z", "create-new"]);
    let seconds = started.elapsed().as_secs_f64();
    let report = expect_exit(&run, 1, "create-new with the quota reached");
    let created: Vec<(String, String, String)> = testkit::report_lines(&report)
        .into_iter()
        .filter(|(_, action, _)| action == "create")
        .collect();
    assert_eq!(
        created,
        [(next.to_owned(), "create".to_owned(), "failed".to_owned())],
        "{report:#}"
    );
    assert!(
        testkit::report_lines(&report)
            .iter()
            .all(|(table, _, outcome)| table == next || outcome != "failed"),
        "only the missing table failed: {report:#}"
    );
    assert_eq!(report["summary"]["failed"], 1, "{report:#}");
    assert_quota_error(&error_of(&report, next), next);
    assert_quiet_stderr(&run.stderr);
    // The SDK counts LimitExceededException as throttling: 3 attempts, each refused; no other
    // change was sent.
    let creates: Vec<(Option<String>, Option<String>)> = proxy
        .calls()
        .into_iter()
        .filter(|c| c.operation == "CreateTable")
        .map(|c| (c.table, c.fault))
        .collect();
    assert_eq!(
        creates,
        vec![(Some(next.to_owned()), Some("quota".to_owned())); 3]
    );
    for write in ["UpdateTable", "TagResource", "UntagResource", "DeleteTable"] {
        assert_eq!(proxy.count(write), 0, "{write}: {:?}", proxy.calls());
    }
    assert_eq!(snapshot(&client).await, before, "nothing changed on moto");
    eprintln!("create-new with the quota reached: exit 1 in {seconds:.1} s");

    // 2. The same in the table output (stdout and stderr each say it on one line); and a
    // family with neither its current nor its next table: both fail, each on its own line.
    // The two runs go at once: each sits through the SDK's retries.
    proxy.reset_calls();
    let (table, run) = std::thread::scope(|s| {
        let table = s.spawn(|| through_proxy(&["--at", "2018-10-25T23:45:00Z", "create-new"]));
        let family = s.spawn(|| {
            through_proxy(&[
                "--prefix",
                "metrics",
                "--output",
                "json",
                "--at",
                "2018-10-25T23:45:00Z",
                "create-new",
            ])
        });
        (
            table.join().expect("table run"),
            family.join().expect("family run"),
        )
    });
    assert_eq!(
        table.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        table.stdout, table.stderr
    );
    assert_one_line_names(&table.stdout, next, "the table output");
    assert_quiet_stderr(&table.stderr);

    // A new family's first run makes its ledger first: refused, the run makes nothing (no
    // table it could not record), exit 1 naming the ledger and the quota on one line.
    assert_eq!(run.code, 1, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    assert_one_line_names(&run.stderr, "metrics_ledger", "stderr");
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    for call in proxy.calls() {
        if call.operation == "CreateTable" {
            assert_eq!(call.fault.as_deref(), Some("quota"), "{call:?}");
            *refused.entry(call.table.unwrap_or_default()).or_insert(0) += 1;
        }
    }
    assert_eq!(
        refused,
        BTreeMap::from([("metrics_ledger".to_owned(), 3), (next.to_owned(), 3),]),
        "the SDK's 3 attempts each"
    );
    assert_eq!(snapshot(&client).await, before, "nothing changed on moto");

    // 3. A higher quota (as Service Quotas would grant): the same run makes the tables.
    proxy.table_quota(10);
    let run = through_proxy(&["--output", "json", "--at", "2018-10-25T23:45:00Z", "create-new"]);
    let report = expect_exit(&run, 0, "create-new under a higher quota");
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
    let after = snapshot(&client).await;
    assert!(after.contains_key(next), "{after:#?}");
    assert_eq!(after.len(), 4, "{after:#?}");
    assert_eq!(
        testkit::ledgers(&client).await.len(),
        1,
        "the family's ledger is kept"
    );
}
