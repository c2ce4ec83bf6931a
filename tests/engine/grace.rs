//! The write grace on moto: with `grace = "2h"`, yesterday's table keeps phase 0's write
//! capacity through the 01:00 run and is lowered by the 02:15 one. Read back with DescribeTable.

use chrono::{DateTime, Utc};
use ddb_rollover::aws::dynamodb::DynamoDb;
use ddb_rollover::{Operation, Policy};
use testkit::{LocalDynamo, Server};

use crate::support::days::run_at;

fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339).unwrap().with_timezone(&Utc)
}

async fn capacity(client: &aws_sdk_dynamodb::Client, table: &str) -> (i64, i64) {
    let out = client.describe_table().table_name(table).send().await.unwrap();
    let t = out.table().unwrap().provisioned_throughput().unwrap();
    (
        t.read_capacity_units().unwrap(),
        t.write_capacity_units().unwrap(),
    )
}

#[tokio::test]
async fn yesterdays_table_keeps_its_writes_until_the_grace_ends() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let control = DynamoDb::new(client.clone());
    let policy = Policy::from_toml("grace = \"2h\"").unwrap();
    run_at(
        &control,
        &policy,
        Operation::CreateNew,
        at("2018-10-25T23:45:00Z"),
    )
    .await;
    let yesterday = "timeseries_2018-10-25";
    assert_eq!(capacity(&client, yesterday).await, (300, 1000));

    let early = run_at(
        &control,
        &policy,
        Operation::ResizeOld,
        at("2018-10-26T01:00:00Z"),
    )
    .await;
    assert!(early.succeeded());
    assert_eq!(
        capacity(&client, yesterday).await,
        (300, 1000),
        "inside the grace"
    );

    let late = run_at(
        &control,
        &policy,
        Operation::ResizeOld,
        at("2018-10-26T02:15:00Z"),
    )
    .await;
    assert!(late.succeeded());
    assert_eq!(capacity(&client, yesterday).await, (100, 1), "after the grace");
}
