//! Reading a server's tables back (DescribeTable, Scan, ListTagsOfResource), and creating one
//! as a user outside ddb-rollover would: how tests check results instead of trusting the code
//! under test.

use aws_sdk_dynamodb::operation::create_table::builders::CreateTableFluentBuilder;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, KeySchemaElement, KeyType, ProvisionedThroughput, ScalarAttributeType,
    TableDescription,
};

/// Whether `name` is a family's ledger (`{prefix}_ledger`, a name outside the period-name
/// grammar): the table the first run of a family (or its stack, or `init`) makes beside its
/// period tables.
pub fn is_ledger_name(name: &str) -> bool {
    name.ends_with("_ledger")
}

/// Every table on the server but the families' ledgers ([`ledgers`]), as DescribeTable reports
/// it: how tests read results back instead of trusting the code under test.
pub async fn describe_all(
    client: &aws_sdk_dynamodb::Client,
) -> std::collections::BTreeMap<String, TableDescription> {
    let names = table_names(client).await;
    describe_each(client, names).await
}

/// The families' ledgers on the server, each checked to be one (keyed by `family` and
/// `record`, on demand).
pub async fn ledgers(
    client: &aws_sdk_dynamodb::Client,
) -> std::collections::BTreeMap<String, TableDescription> {
    let names = all_table_names(client)
        .await
        .into_iter()
        .filter(|n| is_ledger_name(n))
        .collect();
    let ledgers = describe_each(client, names).await;
    for (name, table) in &ledgers {
        let keys: Vec<(&str, &KeyType)> = table
            .key_schema()
            .iter()
            .map(|k| (k.attribute_name(), k.key_type()))
            .collect();
        assert_eq!(
            keys,
            [("family", &KeyType::Hash), ("record", &KeyType::Range)],
            "{name}'s key"
        );
    }
    ledgers
}

async fn describe_each(
    client: &aws_sdk_dynamodb::Client,
    names: Vec<String>,
) -> std::collections::BTreeMap<String, TableDescription> {
    let mut tables = std::collections::BTreeMap::new();
    for name in names {
        let out = match client.describe_table().table_name(&name).send().await {
            Ok(out) => out,
            // Listed, then deleted before it could be described (dynalite answers DeleteTable
            // before it drops the table from its listing): gone.
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_resource_not_found_exception()) =>
            {
                continue
            }
            Err(e) => panic!("DescribeTable {name}: {e:?}"),
        };
        tables.insert(name, out.table().expect("DescribeTable has a table").clone());
    }
    tables
}

/// Every table name on the server but the families' ledgers, by a paginated ListTables.
pub async fn table_names(client: &aws_sdk_dynamodb::Client) -> Vec<String> {
    let mut names = all_table_names(client).await;
    names.retain(|n| !is_ledger_name(n));
    names
}

/// Every table name on the server, the ledgers included.
pub async fn all_table_names(client: &aws_sdk_dynamodb::Client) -> Vec<String> {
    client
        .list_tables()
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("ListTables: {e:?}"))
}

/// A CreateTable request for `name` keyed by `key` (the partition key's name, then the sort
/// key's if any), each attribute of type `kind`; the throughput, tags and settings are the
/// caller's to add.
pub fn create_keyed(
    client: &aws_sdk_dynamodb::Client,
    name: &str,
    key: &[&str],
    kind: ScalarAttributeType,
) -> CreateTableFluentBuilder {
    let mut request = client.create_table().table_name(name);
    for (attribute, key_type) in key.iter().zip([KeyType::Hash, KeyType::Range]) {
        request = request
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(*attribute)
                    .attribute_type(kind.clone())
                    .build()
                    .expect("name and type are set"),
            )
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name(*attribute)
                    .key_type(key_type)
                    .build()
                    .expect("name and key type are set"),
            );
    }
    request
}

/// Provisioned throughput of `read` RCU and `write` WCU.
pub fn throughput(read: i64, write: i64) -> ProvisionedThroughput {
    ProvisionedThroughput::builder()
        .read_capacity_units(read)
        .write_capacity_units(write)
        .build()
        .expect("both units are set")
}

/// Creates a table the way a user outside ddb-rollover would: key `id` (S), 5 RCU / 5 WCU.
/// Returns the TableStatus CreateTable reported.
pub async fn create_plain_table(client: &aws_sdk_dynamodb::Client, name: &str) -> String {
    let out = create_keyed(client, name, &["id"], ScalarAttributeType::S)
        .provisioned_throughput(throughput(5, 5))
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateTable {name}: {e:?}"));
    out.table_description()
        .and_then(|t| t.table_status())
        .map(|s| s.as_str().to_string())
        .unwrap_or_default()
}

/// Every item of `table`, by a paginated Scan.
pub async fn scan(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
) -> Vec<std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>> {
    client
        .scan()
        .table_name(table)
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("Scan {table}: {e:?}"))
}

/// A table's ARN, read back from the server (DescribeTable).
pub async fn table_arn(client: &aws_sdk_dynamodb::Client, table: &str) -> String {
    describe(client, table)
        .await
        .table_arn
        .unwrap_or_else(|| panic!("DescribeTable {table} gave no ARN"))
}

/// One table as DescribeTable reports it.
pub async fn describe(client: &aws_sdk_dynamodb::Client, table: &str) -> TableDescription {
    client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap_or_else(|e| panic!("DescribeTable {table}: {e:?}"))
        .table
        .unwrap_or_else(|| panic!("DescribeTable {table}: no table"))
}

/// A table's tags, read back from the server (ListTagsOfResource).
pub async fn tags_of(
    client: &aws_sdk_dynamodb::Client,
    arn: &str,
) -> std::collections::BTreeMap<String, String> {
    client
        .list_tags_of_resource()
        .resource_arn(arn)
        .send()
        .await
        .unwrap_or_else(|e| panic!("ListTagsOfResource {arn}: {e:?}"))
        .tags()
        .iter()
        .map(|t| (t.key().to_owned(), t.value().to_owned()))
        .collect()
}

/// A table's provisioned (RCU, WCU), as DescribeTable reports it. Panics for a table without
/// provisioned throughput.
pub fn capacity_of(table: &TableDescription) -> (i64, i64) {
    let throughput = table
        .provisioned_throughput()
        .unwrap_or_else(|| panic!("{:?} has no provisioned throughput", table.table_name()));
    (
        throughput.read_capacity_units().unwrap_or(0),
        throughput.write_capacity_units().unwrap_or(0),
    )
}

/// Every table on the server with its provisioned (RCU, WCU), read back ([`describe_all`]).
pub async fn capacities(client: &aws_sdk_dynamodb::Client) -> std::collections::BTreeMap<String, (i64, i64)> {
    describe_all(client)
        .await
        .into_iter()
        .map(|(name, table)| {
            let capacity = capacity_of(&table);
            (name, capacity)
        })
        .collect()
}
