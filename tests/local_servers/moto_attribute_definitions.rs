//! AWS keeps an attribute definition for every attribute of the table's key and of every
//! index's, and an UpdateTable that creates a global index names only that index's key
//! attributes in `AttributeDefinitions`. moto instead replaces the table's definitions with the
//! request's, so DescribeTable loses the types of the table's key and of the other indexes'
//! keys. A moto [`LocalDynamo`] is reached through a proxy that sends the table's own along,
//! so every client of its endpoint sees AWS's behaviour. Read back with DescribeTable.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{
    CreateGlobalSecondaryIndexAction, GlobalSecondaryIndex, GlobalSecondaryIndexUpdate, KeySchemaElement,
    KeyType, LocalSecondaryIndex, ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;
use testkit::{LocalDynamo, Server};

use crate::support::schema::{attribute, key_element, keys_only};

fn key(hash: &str, range: &str) -> Vec<KeySchemaElement> {
    vec![
        key_element(hash, KeyType::Hash),
        key_element(range, KeyType::Range),
    ]
}

use ScalarAttributeType::{N, S};

/// Creates `name`: key (`pk` S, `sk` N), a global index `by_device` on (`device` S, `at` N) and
/// a local one `by_kind` on (`pk`, `kind` S); then adds the global index `by_status` on
/// (`status` S, `score` N) with only those two in `AttributeDefinitions`, as AWS asks.
/// Returns the definitions DescribeTable gives afterwards, and the global indexes' names.
async fn add_an_index(client: &Client, name: &str) -> (BTreeMap<String, String>, Vec<String>) {
    client
        .create_table()
        .table_name(name)
        .set_attribute_definitions(Some(vec![
            attribute("pk", S),
            attribute("sk", N),
            attribute("device", S),
            attribute("at", N),
            attribute("kind", S),
        ]))
        .set_key_schema(Some(key("pk", "sk")))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("by_device")
                .set_key_schema(Some(key("device", "at")))
                .projection(keys_only())
                .provisioned_throughput(testkit::throughput(1, 1))
                .build()
                .unwrap(),
        )
        .local_secondary_indexes(
            LocalSecondaryIndex::builder()
                .index_name("by_kind")
                .set_key_schema(Some(key("pk", "kind")))
                .projection(keys_only())
                .build()
                .unwrap(),
        )
        .provisioned_throughput(testkit::throughput(1, 1))
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateTable {name}: {e:?}"));
    client
        .update_table()
        .table_name(name)
        .set_attribute_definitions(Some(vec![attribute("status", S), attribute("score", N)]))
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder()
                .create(
                    CreateGlobalSecondaryIndexAction::builder()
                        .index_name("by_status")
                        .set_key_schema(Some(key("status", "score")))
                        .projection(keys_only())
                        .provisioned_throughput(testkit::throughput(1, 1))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap_or_else(|e| panic!("UpdateTable {name}: {e:?}"));
    let table = testkit::describe(client, name).await;
    let definitions = table
        .attribute_definitions()
        .iter()
        .map(|d| {
            (
                d.attribute_name().to_owned(),
                d.attribute_type().as_str().to_owned(),
            )
        })
        .collect();
    let mut indexes: Vec<String> = table
        .global_secondary_indexes()
        .iter()
        .filter_map(|i| i.index_name().map(str::to_owned))
        .collect();
    indexes.sort_unstable();
    (definitions, indexes)
}

fn map(definitions: &[(&str, &str)]) -> BTreeMap<String, String> {
    definitions
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Through the LocalDynamo's endpoint, as on AWS: the table's key, the old indexes' keys and
/// the new index's key, each with its type.
#[tokio::test]
async fn moto_keeps_every_key_attribute_definition_when_an_index_is_added() {
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    let (definitions, indexes) = add_an_index(&client, "metrics_2024-03-05").await;
    assert_eq!(
        definitions,
        map(&[
            ("pk", "S"),
            ("sk", "N"),
            ("device", "S"),
            ("at", "N"),
            ("kind", "S"),
            ("status", "S"),
            ("score", "N"),
        ])
    );
    assert_eq!(indexes, ["by_device", "by_status"]);

    // A table that is not there: moto's own answer, as without the proxy.
    let missing = client
        .update_table()
        .table_name("no_such_table")
        .attribute_definitions(attribute("status", S))
        .send()
        .await
        .unwrap_err();
    assert!(
        missing
            .as_service_error()
            .is_some_and(|e| e.is_resource_not_found_exception()),
        "{missing:?}"
    );
}

/// Why the proxy is there: moto's own endpoint keeps only the request's definitions.
#[tokio::test]
async fn moto_itself_replaces_them_with_the_update_tables() {
    let db = LocalDynamo::start(Server::Moto);
    assert_ne!(db.endpoint(), db.server_endpoint());
    let raw = Client::from_conf(testkit::sdk_config(db.server_endpoint()).build());
    let (definitions, indexes) = add_an_index(&raw, "raw").await;
    assert_eq!(definitions, map(&[("status", "S"), ("score", "N")]));
    assert_eq!(indexes, ["by_device", "by_status"]);
}
