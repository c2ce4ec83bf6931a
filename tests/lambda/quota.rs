//! The account's table quota reached, through the Lambda handler: moto behind the testkit
//! proxy, which answers CreateTable past its `table_quota` with AWS's LimitExceededException.
//! The handler's client retries as the function's does (the SDK's adaptive mode), so the run
//! sits through its 3 attempts per table.
//!
//! - `create_new_handler_errors_when_the_quota_is_reached`: the account holds its quota of 4
//!   tables (3 of another application's, and the family's ledger its stack made), `create_new` for 2018-10-25T23:45 returns
//!   `HandlerError::ActionsFailed` (errorType `ActionsFailed`: a Lambda error, so Scheduler's
//!   retries, the dead-letter queue and the alarms work) whose message names both missing
//!   tables and the table quota, and lists them each with one line naming AWS's refusal, the
//!   quota ("2,500 tables per Region") and `retention.delete_after`; nothing was created.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::Client;
use ddb_rollover::{Operation, Policy};
use ddb_rollover_lambda::Handler;
use lambda_runtime::Diagnostic;
use serde_json::json;
use testkit::{LocalDynamo, Proxy, Server};

use crate::support::ledger::stack_ledger;

use super::common::create_new_failures;

const QUOTA: &str = "2,500 tables per Region";
const DELETE_AFTER: &str = "retention.delete_after";
const AWS_MESSAGE: &str = "Subscriber limit exceeded: There is a limit of 4 tables per subscriber";

async fn table_names(client: &Client) -> Vec<String> {
    testkit::describe_all(client).await.into_keys().collect()
}

#[tokio::test]
async fn create_new_handler_errors_when_the_quota_is_reached() {
    let server = LocalDynamo::start(Server::Moto);
    let direct = server.client().await;
    for name in ["orders", "customers", "invoices"] {
        testkit::create_plain_table(&direct, name).await;
    }
    stack_ledger(&direct, "timeseries").await;
    let before = table_names(&direct).await;
    let proxy = Proxy::start(server.endpoint());
    proxy.table_quota(4);
    // As the function's client: the SDK's adaptive retries.
    let client = Client::from_conf(
        testkit::sdk_config(&proxy.endpoint())
            .retry_config(RetryConfig::adaptive())
            .build(),
    );
    let handler = Handler::new(Operation::CreateNew, Policy::default(), client);

    let started = std::time::Instant::now();
    let error = handler
        .handle(json!({ "at": "2018-10-25T23:45:00Z", "replay": true }))
        .await
        .expect_err("the period's tables cannot be created: a function error");
    let seconds = started.elapsed().as_secs_f64();
    let message = error.to_string();
    let (failed, report) = create_new_failures(&error);
    let failed: BTreeMap<&str, &str> = failed
        .iter()
        .map(|f| (f.table.as_str(), f.error.as_str()))
        .collect();
    assert_eq!(
        failed.keys().copied().collect::<Vec<_>>(),
        ["timeseries_2018-10-25", "timeseries_2018-10-26"],
        "{message}"
    );
    for (table, error) in &failed {
        assert!(!error.contains('\n'), "one line: {error}");
        assert!(error.starts_with(&format!("CreateTable {table}: ")), "{error}");
        for needed in [AWS_MESSAGE, QUOTA, DELETE_AFTER] {
            assert!(error.contains(needed), "{table}: should say {needed:?}: {error}");
        }
    }
    assert_eq!(report.summary.failed, 2, "{message}");
    // The error Lambda reports names each table and the quota. It cuts each table's error to
    // a bounded length, so it says "table quota" but not always the whole advice: that is in
    // `failed` above and in the logged report.
    assert!(message.contains("table quota"), "{message}");
    assert!(message.contains("Subscriber limit exceeded"), "{message}");
    for table in ["timeseries_2018-10-25", "timeseries_2018-10-26"] {
        assert!(message.contains(&format!("CreateTable {table}: ")), "{message}");
    }
    let debug = format!("{error:?}");
    assert!(debug.starts_with("ActionsFailed: "), "{debug}");
    let diagnostic = Diagnostic::from(error);
    assert_eq!(diagnostic.error_type, "ActionsFailed");
    assert_eq!(diagnostic.error_message, message);

    // 3 attempts per table, each refused for the quota; nothing else was changed.
    let creates = proxy.calls().into_iter().filter(|c| c.operation == "CreateTable");
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    for call in creates {
        assert_eq!(call.fault.as_deref(), Some("quota"), "{call:?}");
        *refused.entry(call.table.unwrap_or_default()).or_insert(0) += 1;
    }
    assert_eq!(
        refused,
        BTreeMap::from([
            ("timeseries_2018-10-25".to_owned(), 3),
            ("timeseries_2018-10-26".to_owned(), 3)
        ])
    );
    assert_eq!(table_names(&direct).await, before, "nothing was created");
    eprintln!("create_new with the quota reached: ActionsFailed in {seconds:.1} s");
}
