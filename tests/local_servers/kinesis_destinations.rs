//! `Proxy::kinesis_destinations` against moto, which has Kinesis but not DynamoDB's Kinesis
//! Data Streams destinations: their states and timing, one destination a table, ENABLE_FAILED
//! for a missing stream, and every kind of item write carried into moto's own Kinesis stream as
//! DynamoDB's records, read back with the Kinesis API.

use std::collections::HashMap;

use crate::support::kinesis::{create_stream, records as stream_records};
use crate::support::kinesis_client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    ApproximateCreationDateTimePrecision as Precision, AttributeValue, Delete, DeleteRequest,
    DestinationStatus, EnableKinesisStreamingConfiguration, Put, PutRequest, TransactWriteItem, Update,
    UpdateKinesisStreamingConfiguration, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use serde_json::{json, Value};
use testkit::{create_plain_table, LocalDynamo, Proxy, Server};

/// Every record in the one-shard stream `arn`, in order, its data parsed as JSON, read back
/// from moto's Kinesis.
async fn records(kinesis: &aws_sdk_kinesis::Client, arn: &str) -> Vec<Value> {
    stream_records(kinesis, arn)
        .await
        .iter()
        .map(|record| {
            let data: Value = serde_json::from_slice(record.data().as_ref()).unwrap();
            // DynamoDB's partition key: a hash of the item's key, the same for each of its records.
            assert_eq!(record.partition_key().map(str::len), Some(32), "{data}");
            data
        })
        .collect()
}

/// A record reduced to what a test compares: event, table, key, and each image's `n`
/// (or `-` for no image).
fn summary(record: &Value) -> (String, String, String, String, String) {
    let image = |name: &str| {
        let image = &record["dynamodb"][name];
        if image.is_null() {
            "-".to_owned()
        } else {
            image["n"]["N"].as_str().unwrap_or("no n").to_owned()
        }
    };
    (
        record["eventName"].as_str().unwrap().to_owned(),
        record["tableName"].as_str().unwrap().to_owned(),
        record["dynamodb"]["Keys"]["id"]["S"].as_str().unwrap().to_owned(),
        image("OldImage"),
        image("NewImage"),
    )
}

fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.to_owned())
}

fn item(id: &str, n: i64) -> HashMap<String, AttributeValue> {
    HashMap::from([
        ("id".to_owned(), s(id)),
        ("n".to_owned(), AttributeValue::N(n.to_string())),
    ])
}

fn key(id: &str) -> HashMap<String, AttributeValue> {
    HashMap::from([("id".to_owned(), s(id))])
}

async fn put(client: &Client, table: &str, id: &str, n: i64) {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item(id, n)))
        .send()
        .await
        .unwrap();
}

async fn enable(
    client: &Client,
    table: &str,
    stream: &str,
    precision: Option<Precision>,
) -> Result<DestinationStatus, String> {
    let configuration = precision.map(|p| {
        EnableKinesisStreamingConfiguration::builder()
            .approximate_creation_date_time_precision(p)
            .build()
    });
    client
        .enable_kinesis_streaming_destination()
        .table_name(table)
        .stream_arn(stream)
        .set_enable_kinesis_streaming_configuration(configuration)
        .send()
        .await
        .map(|out| out.destination_status().unwrap().clone())
        .map_err(|e| format!("{}: {}", e.code().unwrap_or("?"), e.message().unwrap_or("")))
}

/// The table's destinations as DescribeKinesisStreamingDestination gives them: stream, status,
/// description, precision.
async fn describe(client: &Client, table: &str) -> Result<Vec<(String, String, String, String)>, String> {
    let out = client
        .describe_kinesis_streaming_destination()
        .table_name(table)
        .send()
        .await
        .map_err(|e| e.code().unwrap_or("?").to_owned())?;
    assert_eq!(out.table_name(), Some(table));
    Ok(out
        .kinesis_data_stream_destinations()
        .iter()
        .map(|d| {
            (
                d.stream_arn().unwrap_or_default().to_owned(),
                d.destination_status()
                    .map(|s| s.as_str().to_owned())
                    .unwrap_or_default(),
                d.destination_status_description().unwrap_or_default().to_owned(),
                d.approximate_creation_date_time_precision()
                    .map(|p| p.as_str().to_owned())
                    .unwrap_or_default(),
            )
        })
        .collect())
}

/// A table without destinations, as [`describe`] gives it.
const NONE: [(String, String, String, String); 0] = [];

fn listed(stream: &str, status: &str, precision: &str) -> (String, String, String, String) {
    (
        stream.to_owned(),
        status.to_owned(),
        String::new(),
        precision.to_owned(),
    )
}

#[tokio::test]
async fn a_destination_is_enabling_for_n_answers_then_active_and_a_table_holds_one() {
    let moto = LocalDynamo::start(Server::Moto);
    let kinesis = kinesis_client(moto.endpoint());
    let family = create_stream(&kinesis, "family").await;
    let other = create_stream(&kinesis, "other").await;
    let proxy = Proxy::start(moto.endpoint());
    proxy.destinations_enabling_answers(2);
    let client = proxy.client().await;
    create_plain_table(&client, "t_1").await;

    assert_eq!(describe(&client, "t_1").await.unwrap(), NONE);
    assert_eq!(
        enable(&client, "t_1", &family, Some(Precision::Microsecond))
            .await
            .unwrap(),
        DestinationStatus::Enabling
    );
    // While ENABLING: no records.
    put(&client, "t_1", "early", 1).await;
    for _ in 0..2 {
        assert_eq!(
            describe(&client, "t_1").await.unwrap(),
            [listed(&family, "ENABLING", "MICROSECOND")]
        );
    }
    assert_eq!(
        describe(&client, "t_1").await.unwrap(),
        [listed(&family, "ACTIVE", "MICROSECOND")]
    );
    assert_eq!(records(&kinesis, &family).await, Vec::<Value>::new());

    // One destination a table: neither another stream nor the same one again.
    let refused = enable(&client, "t_1", &other, None).await.unwrap_err();
    assert!(
        refused.starts_with("ValidationException: Table is not in a valid state to enable"),
        "{refused}"
    );
    let again = enable(&client, "t_1", &family, None).await.unwrap_err();
    assert!(again.starts_with("ValidationException"), "{again}");
    assert!(enable(&client, "missing", &family, None)
        .await
        .unwrap_err()
        .starts_with("ResourceNotFoundException"));
    assert_eq!(
        describe(&client, "missing").await.unwrap_err(),
        "ResourceNotFoundException"
    );

    // ACTIVE: a write is one record, timed in microseconds.
    put(&client, "t_1", "late", 2).await;
    let put_records = records(&kinesis, &family).await;
    assert_eq!(put_records.len(), 1, "{put_records:?}");
    let record = &put_records[0];
    assert_eq!(
        summary(record),
        (
            "INSERT".into(),
            "t_1".into(),
            "late".into(),
            "-".into(),
            "2".into()
        )
    );
    assert_eq!(
        record["dynamodb"]["ApproximateCreationDateTimePrecision"],
        "MICROSECOND"
    );
    let micros = record["dynamodb"]["ApproximateCreationDateTime"]
        .as_i64()
        .unwrap();
    assert!(micros > 1_700_000_000_000_000, "{micros} is not in microseconds");
    assert_eq!(records(&kinesis, &other).await, Vec::<Value>::new());

    // The proxy's own reads and Kinesis calls are not recorded; the client's are.
    let counts = proxy.counts();
    assert_eq!(
        counts.get("EnableKinesisStreamingDestination"),
        Some(&4),
        "{counts:?}"
    );
    assert_eq!(counts.get("GetItem"), None, "{counts:?}");
    assert_eq!(counts.get("PutRecords"), None, "{counts:?}");
}

#[tokio::test]
async fn a_missing_stream_ends_enable_failed_with_its_reason_in_front_of_every_moto() {
    let moto = LocalDynamo::start(Server::Moto);
    let client = moto.client().await;
    let kinesis = kinesis_client(moto.endpoint());
    create_plain_table(&client, "t_1").await;
    // moto on its own has no such operation (an HTML 500).
    let direct = testkit::sdk_config(moto.server_endpoint()).build();
    let direct = Client::from_conf(direct);
    assert!(direct
        .describe_kinesis_streaming_destination()
        .table_name("t_1")
        .send()
        .await
        .is_err());

    assert_eq!(describe(&client, "t_1").await.unwrap(), NONE);
    let missing = "arn:aws:kinesis:us-east-1:123456789012:stream/not-there";
    assert_eq!(
        enable(&client, "t_1", missing, None).await.unwrap(),
        DestinationStatus::Enabling
    );
    let failed = describe(&client, "t_1").await.unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(
        (failed[0].1.as_str(), failed[0].3.as_str()),
        ("ENABLE_FAILED", "MILLISECOND")
    );
    assert!(failed[0].2.contains(missing), "{failed:?}");
    assert!(failed[0].2.contains("does not exist"), "{failed:?}");
    // No records go anywhere; once the stream exists, enabling again succeeds.
    put(&client, "t_1", "a", 1).await;
    let family = create_stream(&kinesis, "not-there").await;
    assert_eq!(family, missing);
    assert_eq!(records(&kinesis, &family).await, Vec::<Value>::new());
    assert_eq!(
        enable(&client, "t_1", missing, None).await.unwrap(),
        DestinationStatus::Enabling
    );
    assert_eq!(
        describe(&client, "t_1").await.unwrap(),
        [listed(missing, "ACTIVE", "MILLISECOND")]
    );
}

#[tokio::test]
async fn every_item_write_becomes_exactly_its_records_in_the_stream() {
    let moto = LocalDynamo::start(Server::Moto);
    let client = moto.client().await;
    let kinesis = kinesis_client(moto.endpoint());
    let family = create_stream(&kinesis, "family").await;
    for table in ["t_1", "t_2", "plain"] {
        create_plain_table(&client, table).await;
    }
    for table in ["t_1", "t_2"] {
        enable(&client, table, &family, None).await.unwrap();
        assert_eq!(describe(&client, table).await.unwrap()[0].1, "ACTIVE");
    }
    put(&client, "t_1", "a", 1).await; // INSERT
    put(&client, "t_1", "a", 2).await; // MODIFY
    put(&client, "t_1", "a", 2).await; // the same item: no record
    put(&client, "plain", "a", 1).await; // no destination: no record
    client
        .update_item()
        .table_name("t_1")
        .set_key(Some(key("a")))
        .update_expression("SET n = :n")
        .expression_attribute_values(":n", AttributeValue::N("3".into()))
        .send()
        .await
        .unwrap(); // MODIFY
    client
        .update_item()
        .table_name("t_2")
        .set_key(Some(key("u")))
        .update_expression("SET n = :n")
        .expression_attribute_values(":n", AttributeValue::N("7".into()))
        .send()
        .await
        .unwrap(); // INSERT
    let refused = client
        .put_item()
        .table_name("t_1")
        .set_item(Some(item("a", 9)))
        .condition_expression("attribute_not_exists(id)")
        .send()
        .await;
    assert_eq!(
        refused.unwrap_err().code(),
        Some("ConditionalCheckFailedException")
    );
    client
        .delete_item()
        .table_name("t_1")
        .set_key(Some(key("missing")))
        .send()
        .await
        .unwrap(); // no record
    client
        .delete_item()
        .table_name("t_1")
        .set_key(Some(key("a")))
        .send()
        .await
        .unwrap(); // REMOVE
    put(&client, "t_1", "b", 1).await; // INSERT
    let request = |put: Option<(&str, i64)>, delete: Option<&str>| {
        WriteRequest::builder()
            .set_put_request(
                put.map(|(id, n)| PutRequest::builder().set_item(Some(item(id, n))).build().unwrap()),
            )
            .set_delete_request(
                delete.map(|id| DeleteRequest::builder().set_key(Some(key(id))).build().unwrap()),
            )
            .build()
    };
    client
        .batch_write_item()
        .request_items(
            "t_1",
            vec![request(Some(("c", 1)), None), request(None, Some("b"))],
        )
        // Another id than t_1's: moto takes the same key in two tables of one batch for a duplicate.
        .request_items("plain", vec![request(Some(("p", 1)), None)])
        .send()
        .await
        .unwrap(); // t_1: INSERT c, REMOVE b; plain: nothing
    let transact = |table: &str| {
        vec![
            TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name(table)
                        .set_item(Some(item("d", 1)))
                        .build()
                        .unwrap(),
                )
                .build(),
            TransactWriteItem::builder()
                .update(
                    Update::builder()
                        .table_name(table)
                        .set_key(Some(key("c")))
                        .update_expression("SET n = :n")
                        .expression_attribute_values(":n", AttributeValue::N("5".into()))
                        .build()
                        .unwrap(),
                )
                .build(),
            TransactWriteItem::builder()
                .delete(
                    Delete::builder()
                        .table_name("t_2")
                        .set_key(Some(key("u")))
                        .build()
                        .unwrap(),
                )
                .build(),
        ]
    };
    client
        .transact_write_items()
        .set_transact_items(Some(transact("t_1")))
        .send()
        .await
        .unwrap();
    // A cancelled transaction changes nothing and puts nothing.
    let mut cancelled = transact("t_1");
    cancelled[0] = TransactWriteItem::builder()
        .put(
            Put::builder()
                .table_name("t_1")
                .set_item(Some(item("e", 1)))
                .condition_expression("attribute_exists(id)")
                .build()
                .unwrap(),
        )
        .build();
    let cancelled = client
        .transact_write_items()
        .set_transact_items(Some(cancelled))
        .send()
        .await;
    assert!(cancelled.is_err());

    let put_records = records(&kinesis, &family).await;
    let got: Vec<_> = put_records.iter().map(summary).collect();
    let r = |event: &str, table: &str, id: &str, old: &str, new: &str| {
        (
            event.to_owned(),
            table.to_owned(),
            id.to_owned(),
            old.to_owned(),
            new.to_owned(),
        )
    };
    assert_eq!(
        got,
        [
            r("INSERT", "t_1", "a", "-", "1"),
            r("MODIFY", "t_1", "a", "1", "2"),
            r("MODIFY", "t_1", "a", "2", "3"),
            r("INSERT", "t_2", "u", "-", "7"),
            r("REMOVE", "t_1", "a", "3", "-"),
            r("INSERT", "t_1", "b", "-", "1"),
            r("INSERT", "t_1", "c", "-", "1"),
            r("REMOVE", "t_1", "b", "1", "-"),
            r("INSERT", "t_1", "d", "-", "1"),
            r("MODIFY", "t_1", "c", "1", "5"),
            r("REMOVE", "t_2", "u", "7", "-"),
        ]
    );
    for record in &put_records {
        assert_eq!(record["eventSource"], "aws:dynamodb", "{record}");
        assert_eq!(record["recordFormat"], "application/json", "{record}");
        assert_eq!(record["awsRegion"], testkit::REGION, "{record}");
        assert_eq!(record["userIdentity"], Value::Null, "{record}");
        assert_eq!(
            record["dynamodb"]["ApproximateCreationDateTimePrecision"],
            "MILLISECOND"
        );
        assert!(record["dynamodb"]["SizeBytes"].as_u64().unwrap() > 0, "{record}");
    }
    let ids: std::collections::BTreeSet<&str> = put_records
        .iter()
        .map(|r| r["eventID"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), put_records.len(), "event ids are unique");
    assert_eq!(
        put_records[1]["dynamodb"]["NewImage"],
        json!({"id": {"S": "a"}, "n": {"N": "2"}}),
        "a whole image, in DynamoDB JSON"
    );
}

#[tokio::test]
async fn disable_update_delete_table_and_a_deleted_stream() {
    let moto = LocalDynamo::start(Server::Moto);
    let client = moto.client().await;
    let kinesis = kinesis_client(moto.endpoint());
    let family = create_stream(&kinesis, "family").await;
    create_plain_table(&client, "t_1").await;
    enable(&client, "t_1", &family, None).await.unwrap();
    describe(&client, "t_1").await.unwrap();

    // Update: UPDATING in its answer, ACTIVE with the new precision from the next Describe.
    let updated = client
        .update_kinesis_streaming_destination()
        .table_name("t_1")
        .stream_arn(&family)
        .update_kinesis_streaming_configuration(
            UpdateKinesisStreamingConfiguration::builder()
                .approximate_creation_date_time_precision(Precision::Microsecond)
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(updated.destination_status(), Some(&DestinationStatus::Updating));
    assert_eq!(
        describe(&client, "t_1").await.unwrap(),
        [listed(&family, "ACTIVE", "MICROSECOND")]
    );
    put(&client, "t_1", "a", 1).await;

    // Disable: DISABLING, then DISABLED; no records from the Disable on.
    let disabled = client
        .disable_kinesis_streaming_destination()
        .table_name("t_1")
        .stream_arn(&family)
        .send()
        .await
        .unwrap();
    assert_eq!(disabled.destination_status(), Some(&DestinationStatus::Disabling));
    put(&client, "t_1", "b", 1).await;
    assert_eq!(
        describe(&client, "t_1").await.unwrap(),
        [listed(&family, "DISABLED", "MICROSECOND")]
    );
    let again = client
        .disable_kinesis_streaming_destination()
        .table_name("t_1")
        .stream_arn(&family)
        .send()
        .await;
    assert_eq!(again.unwrap_err().code(), Some("ValidationException"));
    let got: Vec<_> = records(&kinesis, &family).await.iter().map(summary).collect();
    assert_eq!(
        got,
        [("INSERT".into(), "t_1".into(), "a".into(), "-".into(), "1".into())]
    );

    // DeleteTable takes the destinations with it: a new table of that name has none.
    enable(&client, "t_1", &family, None).await.unwrap();
    assert_eq!(describe(&client, "t_1").await.unwrap()[0].1, "ACTIVE");
    client.delete_table().table_name("t_1").send().await.unwrap();
    create_plain_table(&client, "t_1").await;
    assert_eq!(describe(&client, "t_1").await.unwrap(), NONE);
    put(&client, "t_1", "c", 1).await;
    assert_eq!(records(&kinesis, &family).await.len(), 1);

    // The stream deleted under an ACTIVE destination: writes succeed, their records are
    // dropped, the destination stays ACTIVE (AWS documents nothing else).
    enable(&client, "t_1", &family, None).await.unwrap();
    assert_eq!(describe(&client, "t_1").await.unwrap()[0].1, "ACTIVE");
    kinesis.delete_stream().stream_arn(&family).send().await.unwrap();
    put(&client, "t_1", "d", 1).await;
    assert_eq!(describe(&client, "t_1").await.unwrap()[0].1, "ACTIVE");
    let read = client
        .get_item()
        .table_name("t_1")
        .set_key(Some(key("d")))
        .send()
        .await
        .unwrap();
    assert!(read.item().is_some());
}
