//! Reading a server's tables back (DescribeTable, Scan, ListTagsOfResource), and creating one
//! as a user outside ddb-rollover would: how tests check results instead of trusting the code
//! under test.

/// Every table on the server, as DescribeTable reports it: how tests read results back
/// instead of trusting the code under test.
pub async fn describe_all(
    client: &aws_sdk_dynamodb::Client,
) -> std::collections::BTreeMap<String, aws_sdk_dynamodb::types::TableDescription> {
    let names: Vec<String> = client
        .list_tables()
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("ListTables: {e:?}"));
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

/// Creates a table the way a user outside ddb-rollover would: key `id` (S), 5 RCU / 5 WCU.
/// Returns the TableStatus CreateTable reported.
pub async fn create_plain_table(client: &aws_sdk_dynamodb::Client, name: &str) -> String {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, KeySchemaElement, KeyType, ProvisionedThroughput, ScalarAttributeType,
    };
    let out = client
        .create_table()
        .table_name(name)
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("id")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .expect("name and type are set"),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("id")
                .key_type(KeyType::Hash)
                .build()
                .expect("name and key type are set"),
        )
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(5)
                .write_capacity_units(5)
                .build()
                .expect("both units are set"),
        )
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
    client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap_or_else(|e| panic!("DescribeTable {table}: {e:?}"))
        .table
        .and_then(|t| t.table_arn)
        .unwrap_or_else(|| panic!("DescribeTable {table} gave no ARN"))
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
pub fn capacity_of(table: &aws_sdk_dynamodb::types::TableDescription) -> (i64, i64) {
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
