//! The family's one change stream with the real binary on moto, through the tests' proxy in
//! front of it (which answers DynamoDB's Kinesis destination calls as AWS documents them and
//! puts every item write into moto's own Kinesis stream as DynamoDB's record): ten simulated
//! days with an application writing on both sides of every boundary, and a consumer of the one
//! stream that gets every write, item by item, with its table and period (decoded by the app
//! crate's `ChangeDecoder`); each table of the family streams into it, and a foreign table's
//! destination to another stream is left as it was. Then the loud side: create-new does not
//! report the next table ready while its destination is ENABLING, and fails when it ends
//! ENABLE_FAILED. Everything is read back from the servers (DescribeKinesisStreamingDestination,
//! GetRecords), not from our reports.

use std::collections::BTreeSet;
use std::path::PathBuf;

use aws_sdk_dynamodb::types::{AttributeValue, DestinationStatus};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Duration, TimeZone, Utc};
use ddb_rollover::Policy;
use ddb_rollover_app::{table_for, ChangeDecoder, ChangeKind};
use serde_json::Value;
use testkit::{create_plain_table, LocalDynamo, Proxy, Server};

use super::common::{json_run, run_cli};
use crate::support::kinesis::{create_stream, records as stream_records};
use crate::support::kinesis_client;

const FAMILY_STREAM: &str = "timeseries-changes";
const AUDIT_STREAM: &str = "audit";

fn stream_arn(name: &str) -> String {
    format!("arn:aws:kinesis:us-east-1:123456789012:stream/{name}")
}

/// String keys (the app's layout) and the family's stream `stream`.
fn policy_text(stream: &str) -> String {
    format!(
        "prefix = \"timeseries\"\n[key]\npartition = {{ name = \"pk\", type = \"S\" }}\nsort = {{ name = \"sk\", type = \"S\" }}\n[stream]\nkinesis = \"{}\"\n",
        stream_arn(stream)
    )
}

fn policy_file(name: &str, stream: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ddb-rollover-stream-{name}-{}.toml", std::process::id()));
    std::fs::write(&path, policy_text(stream)).unwrap();
    path
}

/// The data of every record in the stream `name`, oldest first.
async fn records(kinesis: &aws_sdk_kinesis::Client, name: &str) -> Vec<Vec<u8>> {
    stream_records(kinesis, &stream_arn(name))
        .await
        .iter()
        .map(|r| r.data().as_ref().to_vec())
        .collect()
}

/// (stream name, status) of each of the table's destinations, as DynamoDB (the proxy) says.
async fn destinations(client: &Client, table: &str) -> Vec<(String, DestinationStatus)> {
    let out = client
        .describe_kinesis_streaming_destination()
        .table_name(table)
        .send()
        .await
        .unwrap();
    out.kinesis_data_stream_destinations()
        .iter()
        .map(|d| {
            let arn = d.stream_arn().unwrap_or_default();
            let name = arn.rsplit_once("stream/").map_or(arn, |(_, n)| n).to_string();
            (name, d.destination_status().cloned().unwrap())
        })
        .collect()
}

/// One write the application made: (table, partition key, sort key, kind).
type Write = (String, String, String, ChangeKind);

/// Puts one reading of `device` at `t` into the table `t` falls in, as an application does.
async fn put(client: &Client, policy: &Policy, device: &str, t: DateTime<Utc>) -> Write {
    let table = table_for(policy, t).unwrap().name;
    let sk = t.to_rfc3339();
    client
        .put_item()
        .table_name(&table)
        .item("pk", AttributeValue::S(device.into()))
        .item("sk", AttributeValue::S(sk.clone()))
        .item("celsius", AttributeValue::N("21.5".into()))
        .send()
        .await
        .unwrap_or_else(|e| panic!("PutItem {table}: {e:?}"));
    (table, device.into(), sk, ChangeKind::Insert)
}

#[tokio::test]
async fn ten_days_of_writes_across_every_boundary_reach_the_one_stream_item_by_item_on_moto() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let kinesis = kinesis_client(server.server_endpoint());
    create_stream(&kinesis, FAMILY_STREAM).await;
    create_stream(&kinesis, AUDIT_STREAM).await;
    let policy = Policy::from_toml(&policy_text(FAMILY_STREAM)).unwrap();
    let file = policy_file("ten-days", FAMILY_STREAM);
    let run = |at: DateTime<Utc>, command: &str| {
        json_run(server.endpoint(), server.env(), &file, &at.to_rfc3339(), command)
    };

    // A neighbour under the prefix with its own change feed to another stream.
    let foreign = "timeseries_backup";
    create_plain_table(&client, foreign).await;
    client
        .enable_kinesis_streaming_destination()
        .table_name(foreign)
        .stream_arn(stream_arn(AUDIT_STREAM))
        .send()
        .await
        .unwrap();
    // Its owner waits for it to stream, as one does after enabling.
    assert_eq!(
        destinations(&client, foreign).await,
        [(AUDIT_STREAM.to_string(), DestinationStatus::Active)]
    );

    let first = Utc.with_ymd_and_hms(2018, 10, 25, 0, 0, 0).unwrap();
    let mut written: Vec<Write> = Vec::new();
    for day in 0..10 {
        let midnight = first + Duration::days(day + 1);
        let created = run(midnight - Duration::minutes(15), "create-new");
        assert_eq!(created["next_table_ready"]["ready"], true, "{created:#}");
        // Late writes to the ending period's table, the first writes to the next one.
        for minutes in [-10, -5, 5, 10] {
            for device in ["SENSOR#1", "SENSOR#2"] {
                written.push(put(&client, &policy, device, midnight + Duration::minutes(minutes)).await);
            }
        }
        run(midnight + Duration::minutes(15), "resize-old");
    }
    // A modify and a remove reach it too.
    let (table, pk, sk, _) = written[0].clone();
    client
        .update_item()
        .table_name(&table)
        .key("pk", AttributeValue::S(pk.clone()))
        .key("sk", AttributeValue::S(sk.clone()))
        .update_expression("SET celsius = :c")
        .expression_attribute_values(":c", AttributeValue::N("22".into()))
        .send()
        .await
        .unwrap();
    written.push((table.clone(), pk.clone(), sk.clone(), ChangeKind::Modify));
    client
        .delete_item()
        .table_name(&table)
        .key("pk", AttributeValue::S(pk.clone()))
        .key("sk", AttributeValue::S(sk.clone()))
        .send()
        .await
        .unwrap();
    written.push((table, pk, sk, ChangeKind::Remove));
    // The neighbour's write goes to its own stream only.
    client
        .put_item()
        .table_name(foreign)
        .item("id", AttributeValue::S("backup".into()))
        .send()
        .await
        .unwrap();

    // The consumer: every record of the one stream, decoded, with its table's period.
    let decoder = ChangeDecoder::new(&policy);
    let mut received: Vec<Write> = Vec::new();
    for data in records(&kinesis, FAMILY_STREAM).await {
        let change = decoder
            .decode_kinesis_data(&data)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&data)));
        let text = |name: &str| match change.keys.get(name) {
            Some(AttributeValue::S(s)) => s.clone(),
            other => panic!("key {name}: {other:?}"),
        };
        assert_eq!(change.period.name, change.table, "the period is the table's");
        let t = DateTime::parse_from_rfc3339(&text("sk")).unwrap().to_utc();
        assert!(change.period.contains(t), "{t} is not in {:?}", change.period);
        received.push((change.table.clone(), text("pk"), text("sk"), change.kind));
    }
    assert_eq!(received.len(), written.len(), "one record per accepted write");
    let as_set = |writes: &[Write]| -> BTreeSet<(String, String, String, String)> {
        writes
            .iter()
            .map(|(t, p, s, k)| (t.clone(), p.clone(), s.clone(), format!("{k:?}")))
            .collect()
    };
    assert_eq!(as_set(&received), as_set(&written));
    let tables: BTreeSet<&str> = written.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(
        tables.len(),
        11,
        "ten boundaries: eleven periods' tables written to"
    );

    // Every table of the family streams into the one stream; the neighbour's feed is its own.
    let names = client.list_tables().send().await.unwrap();
    let family: Vec<&str> = names
        .table_names()
        .iter()
        .map(String::as_str)
        .filter(|n| n.starts_with("timeseries_20"))
        .collect();
    assert_eq!(family.len(), 11, "{family:?}");
    for table in family {
        assert_eq!(
            destinations(&client, table).await,
            [(FAMILY_STREAM.to_string(), DestinationStatus::Active)],
            "{table}"
        );
    }
    assert_eq!(
        destinations(&client, foreign).await,
        [(AUDIT_STREAM.to_string(), DestinationStatus::Active)]
    );
    let audit = records(&kinesis, AUDIT_STREAM).await;
    assert_eq!(audit.len(), 1);
    let record: Value = serde_json::from_slice(&audit[0]).unwrap();
    assert_eq!(record["tableName"], foreign);
}

#[tokio::test]
async fn create_new_is_not_ready_while_enabling_and_fails_loudly_on_enable_failed() {
    let server = LocalDynamo::start(Server::Moto);
    let kinesis = kinesis_client(server.server_endpoint());
    create_stream(&kinesis, FAMILY_STREAM).await;
    // A proxy of our own in front of moto's holds every destination ENABLING.
    let holding = Proxy::start(server.endpoint());
    holding.destinations_enabling_answers(1_000);
    let file = policy_file("enabling", FAMILY_STREAM);
    let args = |at: &str| {
        vec![
            "--policy".to_string(),
            file.to_str().unwrap().to_string(),
            "--output".into(),
            "json".into(),
            "--time-budget".into(),
            "15s".into(),
            "--at".into(),
            at.to_string(),
            "create-new".into(),
        ]
    };
    let argv = args("2018-10-25T23:45:00Z");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let enabling = run_cli(&holding.endpoint(), server.env(), &argv);
    let report = enabling.json();
    assert_eq!(report["next_table_ready"]["ready"], false, "{report:#}");
    let tomorrow = &report["next_table_ready"]["tables"][1];
    assert_eq!(tomorrow["stream"], "ENABLING", "{report:#}");
    assert_eq!(
        enabling.code, 0,
        "ENABLING is on its way, not a failure: {}",
        enabling.stderr
    );

    // A policy naming a stream that does not exist: ENABLE_FAILED, a failed run (exit 1) whose
    // enable lines carry DynamoDB's reason.
    let missing = policy_file("missing", "no-such-stream");
    let run = run_cli(
        server.endpoint(),
        server.env(),
        &[
            "--policy",
            missing.to_str().unwrap(),
            "--output",
            "json",
            "--at",
            "2018-11-01T23:45:00Z",
            "create-new",
        ],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report = run.json();
    let failed: Vec<&Value> = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["decision"]["action"] == "enable_kinesis_destination")
        .collect();
    assert_eq!(failed.len(), 2, "{report:#}");
    for line in failed {
        assert_eq!(line["outcome"], "failed", "{line:#}");
        let error = line["error"].as_str().unwrap();
        assert!(
            error.contains("ENABLE_FAILED") && error.contains("no-such-stream"),
            "{error}"
        );
    }
    let client = server.client().await;
    for table in ["timeseries_2018-11-01", "timeseries_2018-11-02"] {
        assert_eq!(
            destinations(&client, table).await,
            [("no-such-stream".to_string(), DestinationStatus::EnableFailed)]
        );
    }
}
