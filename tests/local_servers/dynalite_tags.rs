//! dynalite drops the `Tags` given to CreateTable (AWS and moto keep them); a dynalite
//! [`LocalDynamo`] is reached through a proxy that applies them, so every client of its
//! endpoint sees AWS's behaviour. Read back with ListTagsOfResource.

use std::collections::BTreeMap;

use crate::support::INSTANT_DYNALITE;
use aws_sdk_dynamodb::client::Waiters;
use aws_sdk_dynamodb::types::{ScalarAttributeType, TableStatus, Tag};
use aws_sdk_dynamodb::Client;
use testkit::{LocalDynamo, Server};

fn tag(key: &str, value: &str) -> Tag {
    Tag::builder().key(key).value(value).build().unwrap()
}

/// CreateTable `name` (key `pk` S, 1/1) with `tags`; returns (status, ARN) from its reply.
async fn create(client: &Client, name: &str, tags: &[(&str, &str)]) -> (TableStatus, String) {
    let mut request = testkit::create_keyed(client, name, &["pk"], ScalarAttributeType::S)
        .provisioned_throughput(testkit::throughput(1, 1));
    for (key, value) in tags {
        request = request.tags(tag(key, value));
    }
    let out = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateTable {name}: {e:?}"));
    let table = out.table_description().unwrap();
    (
        table.table_status().unwrap().clone(),
        table.table_arn().unwrap().to_string(),
    )
}

fn map(tags: &[(&str, &str)]) -> BTreeMap<String, String> {
    tags.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

const TAGS: [(&str, &str); 3] = [
    ("ddb-rollover:family", "timeseries"),
    ("ddb-rollover:period-start", "2018-10-25T00:00:00+00:00"),
    ("team", "iot"),
];

/// CreateTable's tags are there at once, also while the table is still CREATING.
async fn create_table_tags_are_kept(server: Server, status: TableStatus) {
    let db = LocalDynamo::start(server);
    let client = db.client().await;
    let (created, arn) = create(&client, "timeseries_2018-10-25", &TAGS).await;
    assert_eq!(created, status);
    assert_eq!(testkit::tags_of(&client, &arn).await, map(&TAGS));

    // No tags: nothing added.
    let (_, plain) = create(&client, "plain", &[]).await;
    assert_eq!(testkit::tags_of(&client, &plain).await, BTreeMap::new());
}

#[tokio::test]
async fn dynalite_keeps_the_tags_given_to_create_table() {
    create_table_tags_are_kept(INSTANT_DYNALITE, TableStatus::Creating).await;
}

#[tokio::test]
async fn dynalite_keeps_the_tags_given_to_create_table_while_creating() {
    create_table_tags_are_kept(
        Server::Dynalite {
            create_ms: 2000,
            update_ms: 0,
        },
        TableStatus::Creating,
    )
    .await;
}

/// The same on moto, which keeps them itself (the reference the proxy imitates).
#[tokio::test]
async fn moto_keeps_the_tags_given_to_create_table() {
    create_table_tags_are_kept(Server::Moto, TableStatus::Active).await;
}

/// Why the proxy is there: dynalite's own endpoint drops them; and a table deleted and made
/// again by the same name through the proxy carries only its new CreateTable's tags (dynalite
/// drops a table's tags with it, as AWS does).
#[tokio::test]
async fn dynalite_itself_drops_them_and_a_remade_table_has_only_its_own() {
    let db = LocalDynamo::start(INSTANT_DYNALITE);
    assert_ne!(db.endpoint(), db.server_endpoint());
    let raw = Client::from_conf(testkit::sdk_config(db.server_endpoint()).build());
    let (_, arn) = create(&raw, "raw", &TAGS).await;
    assert_eq!(testkit::tags_of(&raw, &arn).await, BTreeMap::new());

    let client = db.client().await;
    let (_, arn) = create(&client, "remade", &TAGS).await;
    assert_eq!(testkit::tags_of(&client, &arn).await, map(&TAGS));
    wait_active(&client, "remade").await;
    client.delete_table().table_name("remade").send().await.unwrap();
    wait_gone(&client, "remade").await;
    let (_, arn) = create(&client, "remade", &[("team", "ops")]).await;
    assert_eq!(testkit::tags_of(&client, &arn).await, map(&[("team", "ops")]));
}

/// Until DescribeTable reports `name` ACTIVE: the SDK's waiter (its first look is at once, and
/// with `create_ms: 0` the table is ACTIVE by then).
async fn wait_active(client: &Client, name: &str) {
    client
        .wait_until_table_exists()
        .table_name(name)
        .wait(WAIT_AT_MOST)
        .await
        .unwrap_or_else(|e| panic!("{name} never ACTIVE: {e:?}"));
}

/// Until DescribeTable no longer finds `name`: the SDK's waiter.
async fn wait_gone(client: &Client, name: &str) {
    client
        .wait_until_table_not_exists()
        .table_name(name)
        .wait(WAIT_AT_MOST)
        .await
        .unwrap_or_else(|e| panic!("{name} never gone: {e:?}"));
}

/// How long a waiter may take: its retries wait 20 s at least, and dynalite's transitions
/// here take 0 ms.
const WAIT_AT_MOST: std::time::Duration = std::time::Duration::from_secs(90);
