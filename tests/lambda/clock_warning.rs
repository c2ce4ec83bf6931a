//! A manual event's `at` far ahead of the wall clock: create_new runs (it may look ahead), and
//! its report warns that the tables it builds stay at phase 0's capacity. On moto. (An instant
//! that is not now needs `"replay": true`, or a dry run.)

use chrono::{TimeDelta, Utc};
use ddb_rollover::{Operation, Policy};
use ddb_rollover_lambda::Handler;
use serde_json::json;
use testkit::{LocalDynamo, Server};

#[tokio::test]
async fn create_new_far_ahead_says_so_in_the_reports_warnings() {
    let server = LocalDynamo::start(Server::Moto);
    let handler = Handler::new(Operation::CreateNew, Policy::default(), server.client().await);
    for event in [
        json!({"at": "2999-01-01T00:00:00Z", "dry_run": true}),
        json!({"at": "2999-01-01T00:00:00Z", "replay": true}),
    ] {
        let report = handler.handle(event.clone()).await.unwrap();
        let first = report.warnings.first().map(String::as_str).unwrap_or_default();
        assert!(
            first.starts_with("at: 2999-01-01 00:00:00 UTC is in period 2999-01-01,")
                && first.contains("nothing lowers a future table"),
            "{event}: {:?}",
            report.warnings
        );
    }
    // The next period's run (create_new's 23:45), and runs on the wall clock, do not warn.
    let tomorrow = (Utc::now() + TimeDelta::days(1)).to_rfc3339();
    for event in [json!({"at": tomorrow, "replay": true}), json!({})] {
        let report = handler.handle(event.clone()).await.unwrap();
        assert!(
            !report.warnings.iter().any(|w| w.starts_with("at: ")),
            "{event}: {:?}",
            report.warnings
        );
    }
}
