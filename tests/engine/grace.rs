//! The write grace on moto: with `grace = "2h"`, yesterday's table keeps phase 0's write
//! capacity through the 01:00 run and is lowered by the 02:15 one. Read back with DescribeTable.

use chrono::{DateTime, Utc};
use ddb_rollover::{Operation, Policy};
use ddb_rollover_aws::dynamodb::DynamoDb;
use testkit::{LocalDynamo, Server};

use crate::support::capacity;
use crate::support::days::run_at;

fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339).unwrap().with_timezone(&Utc)
}

#[tokio::test]
async fn yesterdays_table_keeps_its_writes_until_the_grace_ends() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let control = DynamoDb::local(client.clone());
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

    for (time, want, when) in [
        ("2018-10-26T01:00:00Z", (300, 1000), "inside the grace"),
        ("2018-10-26T02:15:00Z", (100, 1), "after the grace"),
    ] {
        let report = run_at(&control, &policy, Operation::ResizeOld, at(time)).await;
        assert!(report.succeeded(), "{when}");
        assert_eq!(capacity(&client, yesterday).await, want, "{when}");
    }
}
