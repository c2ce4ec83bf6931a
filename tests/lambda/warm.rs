//! `NextTableReady` and warm throughput: the create_new handler on moto behind the testkit proxy,
//! which reports the warm throughput of each table UPDATING in its first DescribeTable answers
//! (as AWS does while it pre-warms; moto reports ACTIVE at once). The run polls until DynamoDB
//! says ACTIVE and only then counts the next table ready; when its time ends first, the metric
//! is 0 and the tables are named. The waits are the proxy's answers, not a sleep of the test.

use std::time::{Duration, Instant};

use ddb_rollover::{Operation, Policy};
use ddb_rollover_lambda::Handler;
use serde_json::json;
use testkit::emf;
use testkit::{LocalDynamo, Proxy, Server};

use crate::support::ledger::stack_ledger;

const POLICY: &str = r#"
[[phases]]
min_age = 0
billing = "on_demand"
warm = { read = 40000, write = 20000 }
"#;

/// moto, the proxy in front of it answering each table's first `updating_answers` DescribeTable
/// calls with its warm throughput UPDATING, and the create_new handler with [`POLICY`] reaching
/// moto through the proxy.
async fn create_new_behind_proxy(updating_answers: usize) -> (LocalDynamo, Proxy, Handler) {
    let server = LocalDynamo::start(Server::Moto);
    // The family's ledger, as its stack makes it.
    stack_ledger(&server.client().await, "timeseries").await;
    let proxy = Proxy::start(server.endpoint());
    proxy.warm_updating_answers(updating_answers);
    let handler = Handler::new(
        Operation::CreateNew,
        Policy::from_toml(POLICY).unwrap(),
        proxy.client().await,
    )
    // The runs below are for 2018-10-25T23:45Z, now on this clock: they report readiness.
    .with_wall_clock("2018-10-25T23:45:00Z".parse().unwrap());
    (server, proxy, handler)
}

/// NextTableReady's value in a run's EMF documents.
fn next_table_ready(documents: &[String]) -> f64 {
    let found: Vec<f64> = documents
        .iter()
        .flat_map(|d| emf::validate(d))
        .filter(|m| m.name == "NextTableReady")
        .map(|m| m.value)
        .collect();
    assert_eq!(found.len(), 1, "{documents:#?}");
    found[0]
}

#[tokio::test]
async fn next_table_ready_waits_until_the_warm_throughput_is_active() {
    // Each table's first two DescribeTable answers say UPDATING, the third ACTIVE.
    let (server, proxy, handler) = create_new_behind_proxy(2).await;
    let started = Instant::now();
    let (report, documents) = handler
        .handle_metered(json!({"at": "2018-10-25T23:45:00Z"}), None)
        .await;
    let report = report.unwrap();
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(ready.ready, "{}", ready.line());
    assert_eq!(next_table_ready(&documents), 1.0);
    // Polled at once and after 0.5 s (both UPDATING), then after 1 s more (ACTIVE).
    let describes = proxy
        .calls()
        .iter()
        .filter(|c| c.operation == "DescribeTable" && c.table.as_deref() == Some("timeseries_2018-10-26"))
        .count();
    assert_eq!(describes, 3, "{:?}", proxy.counts());
    assert!(started.elapsed() >= Duration::from_millis(1500));
    // What moto holds, read back: the warm throughput create_new asked for.
    let described = testkit::describe(&server.client().await, "timeseries_2018-10-26").await;
    let warm = described.warm_throughput().unwrap();
    assert_eq!(
        (warm.read_units_per_second(), warm.write_units_per_second()),
        (Some(40_000), Some(20_000))
    );
}

#[tokio::test]
async fn next_table_ready_is_0_while_the_warm_throughput_is_still_updating() {
    let (_server, proxy, handler) = create_new_behind_proxy(1_000).await;
    // The invocation's time ends after 2 s: the run stops waiting then, and says why.
    let deadline = Instant::now() + Duration::from_secs(2);
    let (report, documents) = handler
        .handle_metered(json!({"at": "2018-10-25T23:45:00Z"}), Some(deadline))
        .await;
    let report = report.expect("still UPDATING is not a failure of the run");
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(!ready.ready);
    assert_eq!(
        ready.line(),
        "NOT READY: timeseries_2018-10-25 ACTIVE, warm throughput UPDATING, timeseries_2018-10-26 ACTIVE, warm throughput UPDATING"
    );
    assert_eq!(next_table_ready(&documents), 0.0);
    // The tables are there, created with their warm throughput: nothing is retried or failed.
    assert_eq!(proxy.count("CreateTable"), 2);
    assert_eq!(report.summary.failed, 0);
}
