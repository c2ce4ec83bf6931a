//! Contract between template.yaml and the Lambda code: what each ScheduleV2 event sends,
//! once EventBridge Scheduler fills in `<aws.scheduler.scheduled-time>`, is accepted by the
//! function that owns the event and does the day's work against a real DynamoDB wire API
//! (moto), with the policy the template's `ROLLOVER_POLICY` gives for the parameter defaults.

use chrono::{DateTime, Utc};
use ddb_rollover::{Operation, Outcome};
use ddb_rollover_aws::dynamodb::DynamoDb;
use deploy_checks::scenario;
use deploy_checks::template::{Function, RepoTemplate, Template};
use testkit::{LocalDynamo, Server};

use crate::support::capacity;
use crate::support::ledger::stack_ledger;

fn functions() -> Vec<Function> {
    Template::load()
        .functions()
        .unwrap_or_else(|e| panic!("template.yaml: {e}"))
}

/// A console test with the schedule's raw Input (placeholder not filled in) must change nothing.
#[tokio::test]
async fn raw_input_without_the_scheduled_time_is_refused() {
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    for f in functions() {
        for s in &f.schedules {
            let raw: serde_json::Value = serde_json::from_str(&s.input).unwrap();
            let result = scenario::handler(&f, DynamoDb::local(client.clone()))
                .handle(raw)
                .await;
            assert!(
                matches!(result, Err(ddb_rollover_lambda::HandlerError::BadEvent(_))),
                "{}.{}: {result:?}",
                f.logical_id,
                s.event
            );
        }
    }
    let tables = client.list_tables().send().await.unwrap();
    assert!(tables.table_names().is_empty(), "{:?}", tables.table_names());
}

/// The blog's day through the template's schedules: at 23:45 create_new pre-builds the next
/// day's table (and today's), at 00:15 resize_old dials yesterday's down. Each run is delivered
/// twice, as a Scheduler or Lambda retry would: the second delivery changes nothing.
#[tokio::test]
async fn schedule_inputs_do_the_day_through_the_handlers() {
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    // The stack's LedgerTable, made before any schedule runs.
    stack_ledger(&client, "timeseries").await;

    for f in &scenario::in_day_order(functions()) {
        let operation = f.operation().unwrap();
        let at: DateTime<Utc> = scenario::scheduled_time(operation).parse().unwrap();
        for s in &f.schedules {
            for delivery in 1..=2 {
                let report = scenario::run_schedule(f, s, DynamoDb::local(client.clone()))
                    .await
                    .unwrap_or_else(|e| panic!("{}.{} delivery {delivery}: {e}", f.logical_id, s.event));
                let what = format!("{}.{} delivery {delivery}: {report:#?}", f.logical_id, s.event);
                assert_eq!(report.operation, operation, "{what}");
                assert_eq!(report.at, at, "{what}");
                assert!(!report.dry_run, "{what}");
                assert_eq!(report.summary.failed, 0, "{what}");
                let done: Vec<_> = report
                    .lines_with(Outcome::Done)
                    .map(|l| l.item.facts.table.as_str())
                    .collect();
                let expected: &[&str] = match (delivery, operation) {
                    (1, Operation::CreateNew) => &["timeseries_2018-10-25", "timeseries_2018-10-26"],
                    (1, Operation::ResizeOld) => &["timeseries_2018-10-25"],
                    _ => &[],
                };
                assert_eq!(done, expected, "{what}");
            }
        }
        match operation {
            Operation::CreateNew => {
                assert_eq!(capacity(&client, "timeseries_2018-10-25").await, (300, 1000));
                assert_eq!(capacity(&client, "timeseries_2018-10-26").await, (300, 1000));
            }
            Operation::ResizeOld => {
                assert_eq!(capacity(&client, "timeseries_2018-10-25").await, (100, 1));
                assert_eq!(capacity(&client, "timeseries_2018-10-26").await, (300, 1000));
            }
        }
    }
    // A create_new retry delivered late, after resize_old ran, still decides as of 23:45: it
    // must not raise the table resize_old just dialled down.
    let functions = functions();
    let create = functions
        .iter()
        .find(|f| f.operation() == Some(Operation::CreateNew))
        .unwrap();
    let late = scenario::run_schedule(create, &create.schedules[0], DynamoDb::local(client.clone()))
        .await
        .unwrap();
    assert_eq!(late.lines_with(Outcome::Done).count(), 0, "{late:#?}");
    assert_eq!(capacity(&client, "timeseries_2018-10-25").await, (100, 1));

    let mut tables = client.list_tables().send().await.unwrap().table_names().to_vec();
    tables.sort();
    assert_eq!(
        tables,
        [
            "timeseries_2018-10-25",
            "timeseries_2018-10-26",
            "timeseries_ledger"
        ]
    );
}
