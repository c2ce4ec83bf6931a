//! The Lambda handler against real local DynamoDB servers (moto and dynalite), each test on its
//! own fresh server, fed the payloads in `events/`. Results are read back with DescribeTable,
//! never taken from our own report.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodb::types::TableDescription;
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};
use ddb_rollover::{Operation, Policy, RunReport};
use ddb_rollover_lambda::event::parse_invocation;
use ddb_rollover_lambda::{Handler, HandlerError};
use lambda_runtime::Diagnostic;
use serde_json::{json, Value};
use testkit::emf::{self, EmfMetric};
use testkit::{LocalDynamo, Server};

use crate::support::ledger::{stack_ledger, without_ledger};

use super::common::{
    assert_capacities_by_age, create_new_failures, event_file, four_periods_to_now, COLD, HOT, WARM,
};

/// Every file in `events/` and the function it is for.
const EVENT_FILES: [(&str, Operation); 5] = [
    ("create_new.json", Operation::CreateNew),
    ("resize_old.json", Operation::ResizeOld),
    ("scheduler_create_new.json", Operation::CreateNew),
    ("scheduler_resize_old.json", Operation::ResizeOld),
    ("manual_dry_run.json", Operation::ResizeOld),
];

/// The default policy's prefix.
const PREFIX: &str = "timeseries";

struct Harness {
    _server: LocalDynamo,
    client: Client,
}

impl Harness {
    /// A fresh `server` with the family's ledger table its stack makes (a deployed function
    /// finds it there; its role may not create it).
    async fn start(server: Server) -> Harness {
        let server = LocalDynamo::start(server);
        let client = server.client().await;
        stack_ledger(&client, PREFIX).await;
        Harness {
            _server: server,
            client,
        }
    }

    fn handler(&self, operation: Operation) -> Handler {
        Handler::new(operation, Policy::default(), self.client.clone())
    }

    /// The handler on a wall clock that stands at `wall` (RFC 3339): runs for then are now,
    /// with their readiness and metrics.
    fn handler_at(&self, operation: Operation, wall: &str) -> Handler {
        self.handler(operation).with_wall_clock(wall.parse().unwrap())
    }

    async fn run(&self, operation: Operation, event: Value) -> RunReport {
        self.handler(operation)
            .handle(event.clone())
            .await
            .unwrap_or_else(|e| panic!("{operation} with {event}: {e}"))
    }

    /// Every table but the family's ledger (which must be there), read back from the server.
    async fn describe_all(&self) -> BTreeMap<String, TableDescription> {
        without_ledger(testkit::describe_all(&self.client).await, PREFIX)
    }

    /// Every table but the family's ledger with its (RCU, WCU), read back from the server.
    async fn capacities(&self) -> BTreeMap<String, (i64, i64)> {
        without_ledger(testkit::capacities(&self.client).await, PREFIX)
    }
}

/// dynalite, keeping a new table CREATING for `create_ms`, as DynamoDB does for a while.
fn dynalite(create_ms: u64) -> Server {
    Server::Dynalite {
        create_ms,
        update_ms: 0,
    }
}

/// A client for an endpoint where nothing listens (port 9, discard: privileged, so no test
/// server ever takes it), with one attempt so the test does not sit through retries.
fn unreachable_client() -> Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "test"))
        .endpoint_url("http://127.0.0.1:9")
        .retry_config(RetryConfig::standard().with_max_attempts(1))
        .build();
    Client::from_conf(config)
}

fn tables(entries: &[(&str, (i64, i64))]) -> BTreeMap<String, (i64, i64)> {
    entries
        .iter()
        .map(|(name, cap)| (name.to_string(), *cap))
        .collect()
}

/// The blog's create_new schedule time (2018-10-25T23:45Z), as Scheduler sends it.
const CREATE_AT: &str = "2018-10-25T23:45:00Z";

/// What Scheduler sends for a run at `time`; on a handler whose wall clock is then, it is now.
fn scheduled(time: &str) -> Value {
    json!({ "Operation": "create_new", "scheduled_time": time })
}

/// The blog's resize_old schedule time after [`CREATE_AT`].
const RESIZE_AT: &str = "2018-10-26T00:15:00Z";

/// The shipped scheduler event `file` as Scheduler sends it at its time (without the
/// `"replay": true` that makes a console test of it a replay): on a handler whose wall clock
/// is then, it is now.
fn as_sent(file: &str) -> Value {
    let mut event = event_file(file);
    event.as_object_mut().unwrap().remove("replay");
    event
}

/// A manual run for `instant`, which is not now: a replay.
fn at(instant: DateTime<Utc>) -> Value {
    json!({ "at": instant.to_rfc3339(), "replay": true })
}

#[test]
fn every_event_file_is_listed_and_parses_for_its_function() {
    let dir = testkit::repo_root().join("events");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = EVENT_FILES.iter().map(|(name, _)| name.to_string()).collect();
    listed.sort();
    assert_eq!(
        on_disk, listed,
        "a new events/*.json needs a line in EVENT_FILES and a test"
    );
    for (name, function) in EVENT_FILES {
        parse_invocation(&event_file(name), function).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let readme = std::fs::read_to_string(PathBuf::from(&dir).join("README.md")).unwrap();
    for (name, _) in EVENT_FILES {
        assert!(readme.contains(name), "events/README.md does not mention {name}");
    }
}

/// `create_new.json` has no time: the run uses the wall clock. The expected names come from
/// the same policy's calendar, at the instants just before and just after the run, so a run
/// that straddles a period boundary (midnight UTC) still passes.
#[tokio::test]
async fn create_new_json_runs_now_on_moto() {
    let h = Harness::start(Server::Moto).await;
    let policy = Policy::default();
    let (calendar, naming) = (policy.calendar(), policy.naming());
    let expected = |now: DateTime<Utc>| {
        let current = calendar.floor(now);
        let mut expected = BTreeMap::new();
        expected.insert(naming.table_name(current), HOT);
        expected.insert(naming.table_name(calendar.next(current)), HOT);
        expected
    };
    let before = Utc::now();
    let report = h.run(Operation::CreateNew, event_file("create_new.json")).await;
    let after = Utc::now();
    let found = h.capacities().await;
    assert!(
        found == expected(before) || found == expected(after),
        "tables {found:?}, expected {:?} (or {:?} if the run straddled midnight)",
        expected(before),
        expected(after)
    );
    assert!(
        before <= report.at && report.at <= after,
        "report.at {}",
        report.at
    );
    assert!(!report.dry_run);
}

/// `resize_old.json` has no time either. Four periods are seeded through the create_new
/// handler (with `at`); after the run each is at the phase its age calls for relative to the
/// wall clock's period, before or (if the run straddles a boundary) after the run.
#[tokio::test]
async fn resize_old_json_runs_now_on_moto() {
    let h = Harness::start(Server::Moto).await;
    let policy = Policy::default();
    let seeded = four_periods_to_now(&policy.calendar());
    let [p3, _, p1, _] = seeded;
    // create_new at p3 makes p3 and p2; at p1 it makes p1 and the current period.
    h.run(Operation::CreateNew, at(p3.start())).await;
    h.run(Operation::CreateNew, at(p1.start())).await;
    assert_eq!(h.capacities().await.len(), 4);

    h.run(Operation::ResizeOld, event_file("resize_old.json")).await;
    let after = Utc::now();

    assert_capacities_by_age(&h.capacities().await, &policy.naming(), &seeded, after);
}

/// The two scheduled runs of one boundary, as EventBridge Scheduler sends them; a retry of a
/// scheduled run decides the same thing and changes nothing more.
#[tokio::test]
async fn scheduler_payloads_create_then_dial_down_on_moto() {
    let h = Harness::start(Server::Moto).await;
    let report = h
        .run(Operation::CreateNew, event_file("scheduler_create_new.json"))
        .await;
    assert_eq!(
        h.capacities().await,
        tables(&[("timeseries_2018-10-25", HOT), ("timeseries_2018-10-26", HOT)])
    );
    // The function's response is the RunReport as JSON.
    let response = serde_json::to_value(&report).unwrap();
    assert_eq!(response["operation"], "create_new");
    assert_eq!(response["at"], "2018-10-25T23:45:00Z");
    assert_eq!(response["summary"]["done"], 2, "{response:#}");

    let resize = h.handler_at(Operation::ResizeOld, RESIZE_AT);
    resize.handle(as_sent("scheduler_resize_old.json")).await.unwrap();
    let after_resize = h.capacities().await;
    assert_eq!(
        after_resize,
        tables(&[("timeseries_2018-10-25", WARM), ("timeseries_2018-10-26", HOT)])
    );

    // Scheduler retries deliver the same payload: same decision, nothing left to do.
    let retry = resize.handle(as_sent("scheduler_resize_old.json")).await.unwrap();
    assert_eq!(retry.summary.done, 0, "{retry:#?}");
    assert_eq!(h.capacities().await, after_resize);

    // Hostile read of issue 41, finding 4: a day later resize_old dials 10-25 down again; the
    // day before's resize_old replayed then (the shipped event, as a console test or a
    // dead-letter replay sends it) makes only what is missing: it raises nothing back, read
    // back from the server. Before: 10-25 went back up to WARM.
    let next_create = "2018-10-26T23:45:00Z";
    h.handler_at(Operation::CreateNew, next_create)
        .handle(scheduled(next_create))
        .await
        .unwrap();
    let next_resize = "2018-10-27T00:15:00Z";
    h.handler_at(Operation::ResizeOld, next_resize)
        .handle(json!({ "scheduled_time": next_resize }))
        .await
        .unwrap();
    let dialled = h.capacities().await;
    assert_eq!(dialled["timeseries_2018-10-25"], COLD);
    let replayed = h
        .handler_at(Operation::ResizeOld, "2018-10-27T00:20:00Z")
        .handle(event_file("scheduler_resize_old.json"))
        .await
        .unwrap();
    assert_eq!(replayed.summary.done, 0, "{replayed:#?}");
    assert_eq!(h.capacities().await, dialled);
}

#[tokio::test]
async fn manual_dry_run_changes_nothing_on_moto() {
    let h = Harness::start(Server::Moto).await;
    h.run(Operation::CreateNew, event_file("scheduler_create_new.json"))
        .await;
    let before = h.describe_all().await;
    assert_eq!(before.len(), 2);

    let report = h
        .run(Operation::ResizeOld, event_file("manual_dry_run.json"))
        .await;

    assert_eq!(h.describe_all().await, before, "a dry run changed a table");
    assert!(report.dry_run);
    assert_eq!(serde_json::to_value(&report).unwrap()["dry_run"], true);
    // At 2018-10-28T00:15Z both tables are 2 or more days old: it would dial both to 1 / 1.
    assert_eq!(report.summary.planned, 2, "{report:#?}");
    assert_eq!(report.summary.done, 0);
}

#[tokio::test]
async fn an_operation_for_the_other_function_is_refused_on_moto() {
    let h = Harness::start(Server::Moto).await;
    for (function, file) in [
        (Operation::CreateNew, "resize_old.json"),
        (Operation::CreateNew, "scheduler_resize_old.json"),
        (Operation::CreateNew, "manual_dry_run.json"),
        (Operation::ResizeOld, "create_new.json"),
        (Operation::ResizeOld, "scheduler_create_new.json"),
    ] {
        let error = h.handler(function).handle(event_file(file)).await.unwrap_err();
        assert!(matches!(error, HandlerError::BadEvent(_)), "{file}: {error:?}");
        let message = error.to_string();
        let other = match function {
            Operation::CreateNew => "resize_old",
            Operation::ResizeOld => "create_new",
        };
        assert!(
            message.contains(&format!("this is the {function} function"))
                && message.contains(&format!("invoke the {other} function instead")),
            "{file}: {message}"
        );
    }
    assert!(h.capacities().await.is_empty(), "a refused event created a table");
}

/// Bad events are refused before any AWS call: the handler points at an endpoint where
/// nothing listens, so any call would surface as a ListTables error instead.
#[tokio::test]
async fn bad_events_are_refused_before_any_aws_call() {
    let handler = Handler::new(Operation::CreateNew, Policy::default(), unreachable_client());
    for (event, names) in [
        (json!({"Operation": "resize_old"}), "resize_old"),
        (
            json!({"Operation": "create_new", "scheduled_time": "<aws.scheduler.scheduled-time>"}),
            "placeholder was not substituted",
        ),
        (
            json!({"dryrun": true}),
            "dryrun: unknown field `dryrun`, expected one of",
        ),
        (
            json!({"dry_run": "yes"}),
            "dry_run: invalid type: string \"yes\", expected true or false",
        ),
        (
            json!({"at": 5}),
            "at: invalid type: integer `5`, expected an RFC 3339 timestamp",
        ),
        (json!("create_new"), "must be a JSON object"),
    ] {
        let started = Instant::now();
        let error = handler.handle(event.clone()).await.unwrap_err();
        assert!(matches!(error, HandlerError::BadEvent(_)), "{event}: {error:?}");
        assert!(error.to_string().contains(names), "{event}: {error}");
        assert_eq!(Diagnostic::from(error).error_type, "BadEvent");
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}

/// A clock that would dial live tables down, or that has no table name, is refused before any
/// call; a manual event may allow a future clock explicitly (a simulation).
#[tokio::test]
async fn far_future_and_unlabelled_clocks_are_refused_before_any_aws_call() {
    let resize = Handler::new(Operation::ResizeOld, Policy::default(), unreachable_client());
    let create = Handler::new(Operation::CreateNew, Policy::default(), unreachable_client());
    let years_ahead = (Utc::now() + chrono::Duration::days(5 * 366)).to_rfc3339();
    for (handler, event, names) in [
        (&resize, json!({ "at": years_ahead }), "at: "),
        (
            &resize,
            json!({ "scheduled_time": "9999-12-30T23:59:59Z" }),
            "scheduled_time: ",
        ),
        (&create, json!({ "at": "0999-06-01T00:00:00Z" }), "1000 to 9999"),
        (
            &create,
            json!({ "at": "9999-12-31T12:00:00Z", "allow_future_clock": true }),
            "1000 to 9999",
        ),
    ] {
        let error = handler.handle(event.clone()).await.unwrap_err();
        assert!(matches!(error, HandlerError::BadEvent(_)), "{event}: {error:?}");
        assert!(error.to_string().contains(names), "{event}: {error}");
    }
    // Allowed explicitly: the run goes ahead, so the unreachable server is reached.
    let error = resize
        .handle(json!({ "at": years_ahead, "allow_future_clock": true, "replay": true }))
        .await
        .unwrap_err();
    assert!(matches!(error, HandlerError::ControlPlane(_)), "{error:?}");
}

/// A table action the server refuses makes the invocation an error that names the tables.
///
/// The policy bounds capacities below anything DynamoDB refuses, so the refusal is DynamoDB's
/// own ValidationException for a throughput above an account's limits, answered to CreateTable
/// by the tests' proxy in front of dynalite (every other call reaches dynalite).
#[tokio::test]
async fn a_failed_create_table_is_a_function_error_on_dynalite() {
    let h = Harness::start(dynalite(0)).await;
    let proxy = testkit::Proxy::start(h._server.endpoint());
    proxy.add(
        testkit::Rule::op("CreateTable").always(),
        testkit::Fault::Error {
            status: 400,
            error_type: "ValidationException".into(),
            message: "Given value 2000000000000 for ReadCapacityUnits is out of bounds".into(),
        },
    );
    let policy = Policy::from_json(r#"{"phases":[{"min_age":0,"read":2000,"write":1000}]}"#).unwrap();
    let handler = Handler::new(Operation::CreateNew, policy, proxy.client().await);

    let error = handler
        .handle(event_file("scheduler_create_new.json"))
        .await
        .unwrap_err();

    let (failed, report) = create_new_failures(&error);
    let failed_tables: Vec<&str> = failed.iter().map(|f| f.table.as_str()).collect();
    assert_eq!(failed_tables, ["timeseries_2018-10-25", "timeseries_2018-10-26"]);
    assert!(
        failed.iter().all(|f| f.error.contains("out of bounds")),
        "{failed:?}"
    );
    assert_eq!(report.summary.failed, 2);
    let message = error.to_string();
    assert!(
        message.starts_with("create_new: 2 of 2 tables failed (CreateTable timeseries_2018-10-25: "),
        "{message}"
    );
    assert!(
        message.contains("; CreateTable timeseries_2018-10-26: "),
        "{message}"
    );
    let diagnostic = Diagnostic::from(error);
    assert_eq!(diagnostic.error_type, "ActionsFailed");
    assert!(diagnostic.error_message.contains("out of bounds"));
    assert!(h.capacities().await.is_empty());
}

/// Deferred is not failed: a table still CREATING when resize_old comes is left for the next
/// run, and the invocation succeeds. create_new, out of time to wait for its tables, says the
/// next table is not ready; resize_old's metrics count the deferral by its reason.
#[tokio::test]
async fn deferred_tables_are_not_a_function_error_on_dynalite() {
    let h = Harness::start(dynalite(5000)).await;
    let (created, documents) = h
        .handler_at(Operation::CreateNew, CREATE_AT)
        .handle_metered(
            scheduled(CREATE_AT),
            Some(Instant::now() + Duration::from_secs(1)),
        )
        .await;
    let created = created.unwrap();
    assert_eq!(created.summary.done, 2);
    assert_eq!(metric(&documents, "NextTableReady").value, 0.0);
    let (report, documents) = h
        .handler_at(Operation::ResizeOld, RESIZE_AT)
        .handle_metered(as_sent("scheduler_resize_old.json"), None)
        .await;
    let report = report.unwrap();
    assert_eq!(report.summary.deferred, 1, "{report:#?}");
    assert!(report.succeeded());
    assert_eq!(h.capacities().await.get("timeseries_2018-10-25"), Some(&HOT));
    let deferrals = metric(&documents, "Deferrals");
    assert_eq!(deferrals.dimension("Reason"), Some("table_busy"));
    assert_eq!(deferrals.dimension("Operation"), Some("resize_old"));
    assert_eq!(deferrals.value, 1.0);
    assert_eq!(metric(&documents, "TablesDeferred").value, 1.0);
}

/// The one metric named `name` in `documents`, each checked against the EMF specification.
fn metric(documents: &[String], name: &str) -> EmfMetric {
    let found: Vec<EmfMetric> = documents
        .iter()
        .flat_map(|d| emf::validate(d))
        .filter(|m| m.name == name)
        .collect();
    assert_eq!(found.len(), 1, "{name} in {documents:#?}");
    found.into_iter().next().unwrap()
}

/// What a real create_new run writes on moto: valid EMF documents, NextTableReady 1 once its
/// tables exist; 0 when the next period's name is taken by a table that is not the policy's,
/// or when the tables cannot even be listed.
#[tokio::test]
async fn create_new_writes_emf_metrics_with_next_table_ready_on_moto() {
    let h = Harness::start(Server::Moto).await;
    let handler = h.handler_at(Operation::CreateNew, CREATE_AT);
    let (report, documents) = handler.handle_metered(scheduled(CREATE_AT), None).await;
    let report = report.unwrap();
    assert_eq!(report.next_table_ready.as_ref().map(|r| r.ready), Some(true));
    // The run document, and NextTableReady: no deferral.
    assert_eq!(documents.len(), 2, "{documents:#?}");
    let all: Vec<EmfMetric> = documents.iter().flat_map(|d| emf::validate(d)).collect();
    assert!(all.iter().all(|m| m.namespace == "ddb-rollover"));
    let ready = metric(&documents, "NextTableReady");
    assert_eq!(ready.value, 1.0);
    assert_eq!(
        ready.dimensions,
        [("Prefix".to_string(), "timeseries".to_string())]
    );
    assert_eq!(ready.unit.as_deref(), Some("None"));
    let done = metric(&documents, "TablesDone");
    assert_eq!(done.dimension_names(), ["Prefix", "Operation"]);
    assert_eq!(done.dimension("Operation"), Some("create_new"));
    assert_eq!(done.value, 2.0);
    assert_eq!(metric(&documents, "OwnedTables").value, 2.0);
    assert_eq!(metric(&documents, "TablesFailed").value, 0.0);
    // A dry run writes no metrics.
    let (_, documents) = handler
        .handle_metered(json!({"at": "2018-10-25T23:46:00Z", "dry_run": true}), None)
        .await;
    assert!(documents.is_empty(), "{documents:#?}");

    // Someone deletes the next period's table and takes its name for a table of their own.
    let delete_next = || h.client.delete_table().table_name("timeseries_2018-10-26").send();
    delete_next().await.unwrap();
    testkit::create_plain_table(&h.client, "timeseries_2018-10-26").await;
    let (result, documents) = handler
        .handle_metered(scheduled("2018-10-25T23:50:00Z"), None)
        .await;
    let error = result.unwrap_err();
    assert_eq!(error.error_type(), "ActionsFailed", "{error:?}");
    assert_eq!(metric(&documents, "NextTableReady").value, 0.0);
    assert_eq!(metric(&documents, "TablesFailed").value, 1.0);
    assert_eq!(metric(&documents, "TablesUnchanged").value, 1.0);

    // Deleted, and no table under the name: this run creates it again, ready again.
    delete_next().await.unwrap();
    let (result, documents) = h
        .handler_at(Operation::CreateNew, "2018-10-25T23:55:00Z")
        .handle_metered(scheduled("2018-10-25T23:55:00Z"), None)
        .await;
    result.unwrap();
    assert_eq!(metric(&documents, "NextTableReady").value, 1.0);

    // A broken function reads as not ready.
    let broken = Handler::new(Operation::CreateNew, Policy::default(), unreachable_client())
        .with_wall_clock(CREATE_AT.parse().unwrap());
    let (result, documents) = broken.handle_metered(scheduled(CREATE_AT), None).await;
    assert_eq!(result.unwrap_err().error_type(), "ListTablesFailed");
    assert_eq!(documents.len(), 1);
    assert_eq!(metric(&documents, "NextTableReady").value, 0.0);
    // ... but a broken replay says nothing about now.
    let (result, documents) = broken
        .handle_metered(event_file("scheduler_create_new.json"), None)
        .await;
    assert_eq!(result.unwrap_err().error_type(), "ListTablesFailed");
    assert!(documents.is_empty(), "{documents:#?}");
    // A refused event: nothing ran, nothing to say.
    let (result, documents) = handler.handle_metered(json!({"at": "yesterday"}), None).await;
    assert_eq!(result.unwrap_err().error_type(), "BadEvent");
    assert!(documents.is_empty());
}

/// dynalite keeps new tables CREATING for a while, as DynamoDB does: create_new polls them
/// until ACTIVE before it says the next table is ready.
#[tokio::test]
async fn create_new_waits_for_its_tables_to_be_active_on_dynalite() {
    let h = Harness::start(dynalite(2000)).await;
    let started = Instant::now();
    let (report, documents) = h
        .handler_at(Operation::CreateNew, CREATE_AT)
        .handle_metered(scheduled(CREATE_AT), None)
        .await;
    let report = report.unwrap();
    assert!(started.elapsed() >= Duration::from_secs(2));
    let ready = report.next_table_ready.unwrap();
    assert!(ready.ready, "{ready:#?}");
    assert!(ready.tables.iter().all(|t| t.status.as_deref() == Some("ACTIVE")));
    assert_eq!(metric(&documents, "NextTableReady").value, 1.0);
    let statuses: Vec<_> = h
        .describe_all()
        .await
        .into_values()
        .map(|t| t.table_status().unwrap().as_str().to_string())
        .collect();
    assert_eq!(statuses, ["ACTIVE", "ACTIVE"]);
}

/// A server that is not there: ListTables fails, nothing is decided, the invocation errors.
#[tokio::test]
async fn an_unreachable_server_is_a_function_error() {
    let handler = Handler::new(Operation::ResizeOld, Policy::default(), unreachable_client());
    let error = handler
        .handle(event_file("scheduler_resize_old.json"))
        .await
        .unwrap_err();
    let HandlerError::ControlPlane(cause) = &error else {
        panic!("expected a ListTables error, got {error:?}");
    };
    assert_eq!(cause.operation, "ListTables");
    let message = error.to_string();
    assert!(
        message.starts_with("could not list the tables, nothing was changed: ListTables timeseries_: "),
        "{message}"
    );
    assert_eq!(Diagnostic::from(error).error_type, "ListTablesFailed");
}

/// Hostile read of issue 41, finding 3: a later time of the wall clock's own period is not now.
/// Within a period the write grace, a restored table's keep and a deferral's time still run: an
/// event at 23:50 while the wall clock says 21:50 let resize_old dial yesterday's table down
/// before its grace ended. Refused before any call; the period's scheduled time retried later
/// that day is now.
#[tokio::test]
async fn a_later_time_of_the_wall_clocks_period_is_not_now() {
    let h = Harness::start(Server::Moto).await;
    h.handler_at(Operation::CreateNew, CREATE_AT)
        .handle(scheduled(CREATE_AT))
        .await
        .unwrap();
    let before = h.capacities().await;
    let resize = h.handler_at(Operation::ResizeOld, "2018-10-26T21:50:00Z");
    let error = resize
        .handle(json!({"at": "2018-10-26T23:50:00Z"}))
        .await
        .unwrap_err();
    assert_eq!(error.error_type(), "BadEvent", "{error}");
    assert!(error.to_string().contains("\"replay\": true"), "{error}");
    assert_eq!(h.capacities().await, before, "a refused event changed capacities");
    let retried = resize
        .handle(json!({"scheduled_time": "2018-10-26T00:15:00Z"}))
        .await
        .unwrap();
    assert_eq!(retried.at.to_rfc3339(), "2018-10-26T00:15:00+00:00");
}
