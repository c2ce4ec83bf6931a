//! What the functions publish, on moto: a simulated week of create_new (23:45) and resize_old
//! (00:15) through the handler with `PublishTables` and `PublishEvents` on. After each
//! create_new the Systems Manager parameter is read back and compared with the tables read
//! from moto; the events reach an SQS queue through an EventBridge rule on `source:
//! ddb-rollover`, as a subscriber would get them, and are compared with what moto shows was
//! created and resized. A writer in Python (the docs' example, boto3) picks its table from the
//! parameter.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::support::events::{received, subscribe};
use crate::support::ledger::{ledger_name, stack_ledger};
use ddb_rollover::{Operation, Policy};
use ddb_rollover_lambda::publish::{self, Publishing};
use ddb_rollover_lambda::Handler;
use serde_json::{json, Value};
use testkit::{LocalDynamo, Server};

/// The tables on the server but the family's ledger, and their (read, write) capacity.
async fn tables_on(client: &aws_sdk_dynamodb::Client) -> Vec<(String, String, (i64, i64))> {
    let mut out = Vec::new();
    let names = client.list_tables().send().await.unwrap();
    assert!(names.table_names().contains(&ledger_name("pub")), "{names:?}");
    for name in names.table_names().iter().filter(|n| **n != ledger_name("pub")) {
        let table = client.describe_table().table_name(name).send().await.unwrap();
        let table = table.table().unwrap();
        let throughput = table.provisioned_throughput().unwrap();
        out.push((
            name.clone(),
            table.table_status().unwrap().as_str().to_owned(),
            (
                throughput.read_capacity_units().unwrap(),
                throughput.write_capacity_units().unwrap(),
            ),
        ));
    }
    out
}

#[tokio::test]
async fn a_week_publishes_the_tables_writers_need_and_an_event_for_each_change() {
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    let clients = crate::support::aws_clients(db.endpoint()).await;
    let queue = subscribe(db.endpoint()).await;
    // The family's ledger, as its stack makes it.
    stack_ledger(&client, "pub").await;
    let policy = Policy::from_toml("prefix = \"pub\"\npremake = 2\n").unwrap();
    let publishing = Publishing {
        tables: true,
        events: true,
    };
    let handler = |operation| {
        Handler::new(operation, policy.clone(), client.clone()).with_publishing(publishing, clients.clone())
    };
    let parameter = publish::parameter_name("pub");

    let mut phase_changes = BTreeSet::new();
    for day in 1..=7 {
        let date = NaiveDate::from_ymd_opt(2018, 10, day).unwrap();
        let evening: DateTime<Utc> = date.and_hms_opt(23, 45, 0).unwrap().and_utc();
        // The schedule fires at its time: the wall clock stands there.
        let create = handler(Operation::CreateNew).with_wall_clock(evening);
        create
            .handle(json!({"scheduled_time": evening.to_rfc3339()}))
            .await
            .unwrap();

        // The parameter names the current and both pre-built tables with their periods, each
        // as moto has it.
        let got = clients.ssm.get_parameter().name(&parameter).send().await.unwrap();
        let document: Value = serde_json::from_str(got.parameter().unwrap().value().unwrap()).unwrap();
        assert_eq!(document["ready"], true, "{document}");
        assert_eq!(document["updated_at"], evening.to_rfc3339());
        let on_server = tables_on(&client).await;
        let listed = document["tables"].as_array().unwrap();
        let names: Vec<String> = (0..3)
            .map(|d| format!("pub_{}", date + chrono::Days::new(d)))
            .collect();
        assert_eq!(
            listed
                .iter()
                .map(|t| t["table"].as_str().unwrap())
                .collect::<Vec<_>>(),
            names,
            "{document}"
        );
        for entry in listed {
            let name = entry["table"].as_str().unwrap();
            let (_, status, _) = on_server
                .iter()
                .find(|(n, _, _)| n == name)
                .unwrap_or_else(|| panic!("{name} is published but not on the server"));
            assert_eq!(entry["status"], status.as_str(), "{name}");
            let start: DateTime<Utc> = entry["start"].as_str().unwrap().parse().unwrap();
            let end: DateTime<Utc> = entry["end"].as_str().unwrap().parse().unwrap();
            assert_eq!(end - start, Duration::days(1), "{entry}");
            assert_eq!(name, format!("pub_{}", start.date_naive()), "{entry}");
        }
        // What a writer does with it at 23:50: the table whose period holds the instant.
        let writing_at = evening + Duration::minutes(5);
        let current: Vec<&str> = listed
            .iter()
            .filter(|t| {
                let start: DateTime<Utc> = t["start"].as_str().unwrap().parse().unwrap();
                let end: DateTime<Utc> = t["end"].as_str().unwrap().parse().unwrap();
                start <= writing_at && writing_at < end
            })
            .map(|t| t["table"].as_str().unwrap())
            .collect();
        assert_eq!(current, [format!("pub_{date}")]);

        let morning = evening + Duration::minutes(30);
        let resize = handler(Operation::ResizeOld).with_wall_clock(morning);
        resize
            .handle(json!({"scheduled_time": morning.to_rfc3339()}))
            .await
            .unwrap();
        // Tables whose capacity this run changed, read from the server: yesterday's went warm.
        for (name, _, capacity) in tables_on(&client).await {
            if capacity != (300, 1000) {
                phase_changes.insert((name, capacity));
            }
        }
    }

    // One "Table Ready" per table create_new made (all ACTIVE on moto at once), one "Phase
    // Changed" per table and phase change seen on the server, nothing else.
    let events = received(&queue).await;
    let tables: BTreeSet<String> = tables_on(&client).await.into_iter().map(|(n, _, _)| n).collect();
    let ready: BTreeSet<String> = events
        .iter()
        .filter(|(kind, _)| kind == publish::TABLE_READY)
        .map(|(_, table)| table.clone())
        .collect();
    assert_eq!(ready, tables, "{events:?}");
    let changed: BTreeSet<(String, String)> = events
        .iter()
        .filter(|(kind, _)| kind == publish::PHASE_CHANGED)
        .cloned()
        .collect();
    let expected_changes: BTreeSet<(String, String)> = phase_changes
        .iter()
        .map(|(name, _)| (publish::PHASE_CHANGED.to_owned(), name.clone()))
        .collect();
    // Each table went warm, then cold: two changes, two events (deduplicated per run only).
    let per_table = events
        .iter()
        .filter(|(kind, _)| kind == publish::PHASE_CHANGED)
        .count();
    assert_eq!(changed, expected_changes, "{events:?}");
    assert_eq!(per_table, phase_changes.len(), "{events:?}");
    assert!(
        events
            .iter()
            .all(|(kind, _)| kind == publish::TABLE_READY || kind == publish::PHASE_CHANGED),
        "{events:?}"
    );

    // The docs' Python writer, on the same parameter (boto3 from moto's environment).
    let python = testkit::repo_root().join(".local/venv/bin/python");
    let script = testkit::repo_root().join("docs/examples/current_table.py");
    let output = std::process::Command::new(python)
        .arg(&script)
        .arg("pub")
        .arg("2018-10-07T23:50:00Z")
        .envs(db.env())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "pub_2018-10-07");
}

/// The parameter as it stands on the server: its type and value.
async fn stored(clients: &ddb_rollover_aws::sdk::AwsClients, name: &str) -> (String, String) {
    let got = clients.ssm.get_parameter().name(name).send().await.unwrap();
    let p = got.parameter().unwrap();
    (
        p.r#type().unwrap().as_str().to_owned(),
        p.value().unwrap().to_owned(),
    )
}

/// Issue 41, findings 1 and 3: a console test or a dead-letter replay for another period (the
/// shipped 2018 event) acts for that period, but says nothing about now: no NextTableReady, no
/// rewrite of the parameter (whose `updated_at` never goes backwards). Before: the 2018 tables
/// were published as ready and `updated_at` went back to 2018. A far-off time without
/// `"replay": true` is refused before any call.
#[tokio::test]
async fn a_replay_for_another_period_leaves_what_was_published_for_now() {
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    let clients = crate::support::aws_clients(db.endpoint()).await;
    stack_ledger(&client, "timeseries").await;
    let publishing = Publishing {
        tables: true,
        events: false,
    };
    let handler = Handler::new(Operation::CreateNew, Policy::default(), client.clone())
        .with_publishing(publishing, clients.clone());
    let parameter = publish::parameter_name("timeseries");
    // Now (the system's wall clock): today's tables, published.
    handler.handle(json!({})).await.unwrap();
    let (_, now_value) = stored(&clients, &parameter).await;
    let now_document: Value = serde_json::from_str(&now_value).unwrap();
    assert_eq!(now_document["ready"], true);

    // The shipped scheduler event: a replay of 2018-10-25's run.
    let replay = super::common::event_file("scheduler_create_new.json");
    assert_eq!(replay["replay"], true);
    let (report, documents) = handler.handle_metered(replay, None).await;
    let report = report.unwrap();
    assert_eq!(report.next_table_ready, None, "{report:#?}");
    assert!(
        !documents.iter().any(|d| d.contains("NextTableReady")),
        "{documents:#?}"
    );
    // It acted for 2018: the tables are there, read back.
    let names = testkit::table_names(&client).await;
    assert!(names.iter().any(|n| n == "timeseries_2018-10-25"), "{names:?}");
    // The parameter still speaks of now, unchanged.
    assert_eq!(stored(&clients, &parameter).await.1, now_value);

    // Without "replay": refused, nothing made.
    for event in [
        json!({"scheduled_time": "2018-10-27T23:45:00Z"}),
        json!({"at": (Utc::now() + Duration::days(400)).to_rfc3339()}),
    ] {
        let error = handler.handle(event.clone()).await.unwrap_err();
        assert_eq!(error.error_type(), "BadEvent", "{event}: {error}");
        assert!(error.to_string().contains("\"replay\": true"), "{error}");
    }
    let after = testkit::table_names(&client).await;
    assert!(
        !after
            .iter()
            .any(|n| n.contains("2018-10-27") || n.contains("2018-10-28")),
        "{after:?}"
    );
    assert_eq!(stored(&clients, &parameter).await.1, now_value);
}

/// Issue 41, finding 8: a parameter someone else wrote at the stack's name (a SecureString, a
/// value not in our format, another family's document) is a foreign part: the run fails
/// loudly naming it, and the parameter is left exactly as it was. Before: overwritten without a
/// word (the SecureString became a String). A parameter of ours is rewritten, and the ledger
/// records the version each write got: a copy of our document written by someone else is a
/// version past the record, so theirs.
#[tokio::test]
async fn a_parameter_someone_else_wrote_is_never_overwritten() {
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    let clients = crate::support::aws_clients(db.endpoint()).await;
    stack_ledger(&client, "timeseries").await;
    let publishing = Publishing {
        tables: true,
        events: false,
    };
    let handler = Handler::new(Operation::CreateNew, Policy::default(), client.clone())
        .with_publishing(publishing, clients.clone());
    let parameter = publish::parameter_name("timeseries");
    let other_family = r#"{"prefix":"orders","period":"day","timezone":"UTC","updated_at":"2018-10-25T23:45:00+00:00","ready":true,"tables":[],"omitted":0}"#;
    for (kind, value) in [
        (aws_sdk_ssm::types::ParameterType::SecureString, "s3cr3t"),
        (aws_sdk_ssm::types::ParameterType::String, "timeseries_2018-10-25"),
        (aws_sdk_ssm::types::ParameterType::String, other_family),
    ] {
        clients
            .ssm
            .put_parameter()
            .name(&parameter)
            .value(value)
            .r#type(kind.clone())
            .overwrite(true)
            .send()
            .await
            .unwrap();
        let before = stored(&clients, &parameter).await;
        let error = handler.handle(json!({})).await.unwrap_err();
        assert_eq!(error.error_type(), "PublishFailed", "{kind:?}: {error}");
        let message = error.to_string();
        assert!(
            message.contains("is not ours") && message.contains(&parameter),
            "{message}"
        );
        assert_eq!(stored(&clients, &parameter).await, before, "{kind:?}");
        assert_eq!(before.0, kind.as_str());
    }
    // Gone: ours to create; then ours to rewrite.
    clients
        .ssm
        .delete_parameter()
        .name(&parameter)
        .send()
        .await
        .unwrap();
    handler.handle(json!({})).await.unwrap();
    let (kind, value) = stored(&clients, &parameter).await;
    assert_eq!(kind, "String");
    let first: Value = serde_json::from_str(&value).unwrap();
    assert_eq!(first["prefix"], "timeseries");
    handler.handle(json!({})).await.unwrap();
    let second: Value = serde_json::from_str(&stored(&clients, &parameter).await.1).unwrap();
    assert!(
        second["updated_at"].as_str() >= first["updated_at"].as_str(),
        "{first} {second}"
    );
    // The ledger holds the version our last write got, read back from the server.
    let version = |clients: &ddb_rollover_aws::sdk::AwsClients| {
        let ssm = clients.ssm.clone();
        let name = parameter.clone();
        async move {
            let got = ssm.get_parameter().name(name).send().await.unwrap();
            got.parameter().unwrap().version()
        }
    };
    let ours = version(&clients).await;
    let book = ddb_rollover::ledger::Book::read(
        ddb_rollover::control::Ledger::read_ledger(
            &ddb_rollover_aws::dynamodb::DynamoDb::local(client.clone()),
            &crate::support::ledger::ledger_name("timeseries"),
            "timeseries",
        )
        .await
        .unwrap(),
    );
    let record = &book.parameters[&parameter].record;
    assert_eq!((record.version, record.intended_at), (Some(ours), None));
    // Someone writes our very document again (a copy: type, keys, prefix all ours): the version
    // moved on past our record, so it is theirs now, and stays as they wrote it.
    let (_, copy) = stored(&clients, &parameter).await;
    clients
        .ssm
        .put_parameter()
        .name(&parameter)
        .value(&copy)
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .overwrite(true)
        .send()
        .await
        .unwrap();
    let error = handler.handle(json!({})).await.unwrap_err();
    assert!(
        error.to_string().contains(&format!("version {}", ours + 1)),
        "{error}"
    );
    assert_eq!(version(&clients).await, ours + 1);
}

/// The ledger's record of the tables parameter, read back from the server.
async fn parameter_record(
    client: &aws_sdk_dynamodb::Client,
    parameter: &str,
) -> ddb_rollover::ledger::ParameterRecord {
    let book = ddb_rollover::ledger::Book::read(
        ddb_rollover::control::Ledger::read_ledger(
            &ddb_rollover_aws::dynamodb::DynamoDb::local(client.clone()),
            &crate::support::ledger::ledger_name("timeseries"),
            "timeseries",
        )
        .await
        .unwrap(),
    );
    book.parameters[parameter].record.clone()
}

/// Hostile read of issue 41, findings 1 and 2. A write that failed leaves no intent behind (a
/// version someone makes later is never taken for that write's). A parameter deleted and made
/// again restarts at version 1, our recorded version: the date Systems Manager gave our
/// version tells it apart, so a copy of our document made again is theirs and left as it is.
/// Before: the intent stayed, and the version alone made the new parameter ours, overwritten.
#[tokio::test]
async fn a_failed_write_leaves_no_intent_and_a_parameter_made_again_is_not_ours() {
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    let proxy = testkit::Proxy::start(db.endpoint());
    let clients = crate::support::aws_clients(&proxy.endpoint()).await;
    stack_ledger(&client, "timeseries").await;
    let publishing = Publishing {
        tables: true,
        events: false,
    };
    let handler = Handler::new(Operation::CreateNew, Policy::default(), client.clone())
        .with_publishing(publishing, clients.clone());
    let parameter = publish::parameter_name("timeseries");
    handler.handle(json!({})).await.unwrap();
    let ours = parameter_record(&client, &parameter).await;
    assert_eq!(ours.version, Some(1));
    assert!(ours.modified.is_some(), "{ours:?}");

    // A write Systems Manager refuses: the run fails, and the record is what stood.
    proxy.add(
        testkit::Rule::op("PutParameter").always(),
        testkit::Fault::Error {
            status: 400,
            error_type: "AccessDeniedException".into(),
            message: "not authorized to perform: ssm:PutParameter".into(),
        },
    );
    let error = handler.handle(json!({})).await.unwrap_err();
    assert_eq!(error.error_type(), "PublishFailed", "{error}");
    assert_eq!(parameter_record(&client, &parameter).await, ours);
    proxy.clear();

    // Deleted, and made again by someone with our very document: version 1 again.
    let (_, copy) = stored(&clients, &parameter).await;
    clients
        .ssm
        .delete_parameter()
        .name(&parameter)
        .send()
        .await
        .unwrap();
    clients
        .ssm
        .put_parameter()
        .name(&parameter)
        .value(&copy)
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .send()
        .await
        .unwrap();
    let error = handler.handle(json!({})).await.unwrap_err();
    assert_eq!(error.error_type(), "PublishFailed", "{error}");
    assert!(error.to_string().contains("made it again"), "{error}");
    assert_eq!(stored(&clients, &parameter).await.1, copy);
    let theirs = clients.ssm.get_parameter().name(&parameter).send().await.unwrap();
    assert_eq!(theirs.parameter().unwrap().version(), 1);
}
