//! The Lambda handler against AWS's DynamoDB Local, which has no tagging API: the blog's
//! `resize_old.json` run succeeds (no function error), dials every table to its phase, and says
//! once in the response's `warnings` which API it went without. One server: its JVM start is
//! the slow part. (`handler.rs` runs every payload on moto and dynalite.)

use chrono::Utc;
use ddb_rollover::{Operation, Policy};
use ddb_rollover_lambda::Handler;
use serde_json::json;
use testkit::{LocalDynamo, Server};

use crate::support::days::warnings_about;
use crate::support::ledger::{assert_is_ledger, stack_ledger, without_ledger};

use super::common::{assert_capacities_by_age, event_file, four_periods_to_now};

/// As `handler.rs` does on moto: four periods seeded through the create_new handler (with
/// `at`), then `resize_old.json`, which runs now; each table ends at the phase its age calls
/// for relative to the wall clock's period before or (if the run straddles a boundary) after.
#[tokio::test]
async fn resize_old_json_runs_now_on_dynamodb_local() {
    let server = LocalDynamo::start(Server::DynamoDbLocal);
    let client = server.client().await;
    // The family's ledger, as its stack makes it.
    stack_ledger(&client, "timeseries").await;
    let policy = Policy::default();
    let handler = |operation| Handler::new(operation, Policy::default(), client.clone());
    let seeded = four_periods_to_now(&policy.calendar());
    let [p3, _, p1, _] = seeded;
    for slot in [p3, p1] {
        let event = json!({ "at": slot.start().to_rfc3339(), "replay": true });
        let report = handler(Operation::CreateNew)
            .handle(event.clone())
            .await
            .unwrap_or_else(|e| panic!("create_new with {event}: {e}"));
        assert!(report.succeeded(), "{report:#?}");
    }

    let report = handler(Operation::ResizeOld)
        .handle(event_file("resize_old.json"))
        .await
        .unwrap_or_else(|e| panic!("resize_old.json on DynamoDB Local is a function error: {e}"));
    let after = Utc::now();
    assert!(report.succeeded(), "{report:#?}");
    assert_eq!(report.summary.failed, 0);
    // A steady-state run reads the tags of the current and pre-built tables only (whose they
    // are); DynamoDB Local has no tagging API, which the run says once, not once per table.
    let skipped = warnings_about(&report, "ListTagsOfResource");
    assert_eq!(skipped.len(), 1, "{:#?}", report.warnings);
    assert!(
        !report.tables.iter().any(|l| l
            .error
            .as_deref()
            .is_some_and(|e| e.contains("ListTagsOfResource"))),
        "{report:#?}"
    );
    // The table quota is years away with four daily tables: a scheduled run does not say it
    // (only `status` and `plan` always do).
    let response = serde_json::to_value(&report).unwrap();
    assert!(
        !response["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("2500 tables")),
        "{response:#}"
    );

    assert_capacities_by_age(
        &without_ledger(testkit::capacities(&client).await, "timeseries"),
        &policy.naming(),
        &seeded,
        after,
    );
    // The ledger the stack made, still the ledger, with the records the runs wrote.
    assert_is_ledger(&testkit::ledgers(&client).await, "timeseries");
}
