//! Secondary indexes over ten simulated days on moto, dynalite and DynamoDB Local: two global
//! indexes (one with its own capacity per phase), a local index, and a third global index the
//! policy adds on day 5. Every table's and every index's throughput is read back with
//! DescribeTable at the end.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{KeyType, ScalarAttributeType, TableDescription};
use chrono::{Duration, NaiveDate};
use ddb_rollover::{Operation, Policy};
use testkit::{LocalDynamo, Server};

use crate::support::days::{assert_succeeded, at, run_at};
use crate::support::schema::{attribute, key_element, keys_only};
use crate::support::INSTANT_DYNALITE;

const POLICY: &str = r#"
prefix = "metrics"
period = "day"
premake = 2

[key]
partition = { name = "pk", type = "S" }
sort = { name = "sk", type = "S" }

[[indexes]]
name = "by_device"
partition = { name = "device", type = "S" }
sort = { name = "sk", type = "S" }
projection = "keys_only"

[[indexes]]
name = "by_site"
partition = { name = "site", type = "S" }
projection = { include = ["temp"] }

[[local_indexes]]
name = "by_time"
sort = { name = "ts", type = "N" }
projection = "all"

[[phases]]
min_age = 0
read = 50
write = 500
index_read = 20
index_write = 200
index_overrides = { by_site = { read = 10, write = 100 } }

[[phases]]
min_age = 1
read = 20
write = 1
index_read = 5
index_write = 1

[[phases]]
min_age = 3
read = 1
write = 1
"#;

/// The index the policy gains on day 5.
const ADDED: &str = r#"
[[indexes]]
name = "by_status"
partition = { name = "status", type = "S" }
projection = "keys_only"
"#;

/// (read, write) of the table and of each global index, by name, as DescribeTable says.
fn throughput(table: &TableDescription) -> ((i64, i64), BTreeMap<String, (i64, i64)>) {
    let pair = |t: Option<&aws_sdk_dynamodb::types::ProvisionedThroughputDescription>| {
        let t = t.expect("provisioned throughput");
        (
            t.read_capacity_units().unwrap_or(0),
            t.write_capacity_units().unwrap_or(0),
        )
    };
    let indexes = table
        .global_secondary_indexes()
        .iter()
        .map(|i| {
            (
                i.index_name().unwrap().to_string(),
                pair(i.provisioned_throughput()),
            )
        })
        .collect();
    (pair(table.provisioned_throughput()), indexes)
}

#[tokio::test]
async fn ten_days_with_two_global_indexes_a_local_one_and_an_index_added_on_day_5_on_moto() {
    ten_days(Server::Moto).await;
}

#[tokio::test]
async fn ten_days_with_two_global_indexes_a_local_one_and_an_index_added_on_day_5_on_dynalite() {
    ten_days(INSTANT_DYNALITE).await;
}

/// Whether the server builds an index added by UpdateTable: dynalite validates the request
/// and answers 200, but never creates the index.
fn builds_added_indexes(server: Server) -> bool {
    !matches!(server, Server::Dynalite { .. })
}

/// DynamoDB Local keeps a new index CREATING for a while (`-delayTransientStatuses`): the
/// run after it defers, and the simulation waits for indexes to settle between days.
#[tokio::test]
async fn ten_days_with_two_global_indexes_a_local_one_and_an_index_added_on_day_5_on_dynamodb_local() {
    ten_days(Server::DynamoDbLocal).await;
}

/// Waits until every table and index is ACTIVE (DynamoDB Local builds indexes for a while).
async fn settle(client: &aws_sdk_dynamodb::Client) {
    for _ in 0..300 {
        let busy = testkit::describe_all(client).await.values().any(|t| {
            t.table_status().is_some_and(|s| s.as_str() != "ACTIVE")
                || t.global_secondary_indexes()
                    .iter()
                    .any(|i| i.index_status().is_some_and(|s| s.as_str() != "ACTIVE"))
        });
        if !busy {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("tables or indexes still not ACTIVE after 30 s");
}

async fn ten_days(kind: Server) {
    let server = LocalDynamo::start(kind);
    let client = server.client().await;
    let control = ddb_rollover_aws::dynamodb::DynamoDb::local(client.clone());
    let before = Policy::from_toml(POLICY).unwrap();
    let after = Policy::from_toml(&format!("{POLICY}{ADDED}")).unwrap();

    let start = NaiveDate::from_ymd_opt(2024, 3, 1).unwrap();
    let added_on = start + Duration::days(4);
    let days = 10;
    let mut last_resize = at(start, "00:15:00");
    for d in 0..days {
        let day = start + Duration::days(d);
        let policy = if day < added_on { &before } else { &after };
        let create = run_at(&control, policy, Operation::CreateNew, at(day, "23:45:00")).await;
        assert_succeeded(&create);
        settle(&client).await;
        last_resize = at(day + Duration::days(1), "00:15:00");
        let resize = run_at(&control, policy, Operation::ResizeOld, last_resize).await;
        assert_succeeded(&resize);
        settle(&client).await;
    }

    let described = testkit::describe_all(&client).await;
    let calendar = after.calendar();
    let current = calendar.floor(last_resize);
    // Day 1 to day 10, plus the two pre-built by the last create_new.
    assert_eq!(described.len(), days as usize + 2, "{:?}", described.keys());
    for (name, table) in &described {
        let label = name.strip_prefix("metrics_").unwrap();
        let slot = calendar.parse(label).unwrap();
        let age = if slot <= current {
            calendar.periods_between(slot, current)
        } else {
            -calendar.periods_between(current, slot)
        };
        let phase = after.phase_for_age(age);
        let ((read, write), indexes) = throughput(table);
        let ddb_rollover::policy::Billing::Provisioned(want) = phase.billing else {
            panic!("provisioned phases only")
        };
        assert_eq!((read, write), (want.read, want.write), "{name} (age {age})");

        // The added index is on the tables current or pre-built when it was added, only.
        let mut want_indexes = vec!["by_device", "by_site"];
        // Created by a run with the new policy (beyond the pre-built reach of the day before).
        let created_with_it = slot.start() >= at(added_on + Duration::days(2), "00:00:00");
        if created_with_it || (slot.start() >= at(added_on, "00:00:00") && builds_added_indexes(kind)) {
            want_indexes.push("by_status");
        }
        assert_eq!(
            indexes.keys().map(String::as_str).collect::<Vec<_>>(),
            {
                want_indexes.sort();
                want_indexes
            },
            "{name}"
        );
        for (index, have) in &indexes {
            let ddb_rollover::policy::Billing::Provisioned(want) = phase.billing_of_index(index) else {
                panic!("provisioned phases only")
            };
            assert_eq!(*have, (want.read, want.write), "{name} index {index} (age {age})");
        }
        let local: Vec<&str> = table
            .local_secondary_indexes()
            .iter()
            .filter_map(|i| i.index_name())
            .collect();
        assert_eq!(local, ["by_time"], "{name}");
    }
    // The phases really differ per index: a current table's by_site has its override.
    let today = &described[&format!("metrics_{}", calendar.label(current))];
    assert_eq!(throughput(today).1["by_site"], (10, 100));
    assert_eq!(throughput(today).1["by_device"], (20, 200));
}

/// DynamoDB takes a switch from on-demand to provisioned only with every global index's
/// throughput in the same UpdateTable; DynamoDB Local enforces it as AWS does. An index made
/// outside the policy would have its throughput set by the switch, so a table carrying one is
/// not switched (anything foreign removes exactly the actions that would touch it).
#[tokio::test]
async fn a_switch_to_provisioned_carries_every_index_and_is_never_made_over_a_foreign_one_on_dynamodb_local()
{
    let server = LocalDynamo::start(Server::DynamoDbLocal);
    let client = server.client().await;
    let control = ddb_rollover_aws::dynamodb::DynamoDb::local(client.clone());
    let policy = Policy::from_toml(&POLICY.replace(
        "min_age = 0\nread = 50\nwrite = 500\nindex_read = 20\nindex_write = 200\nindex_overrides = { by_site = { read = 10, write = 100 } }",
        "min_age = 0\nbilling = \"on_demand\"",
    ))
    .unwrap();
    assert!(matches!(
        policy.hot_phase().billing,
        ddb_rollover::policy::Billing::OnDemand(_)
    ));
    let day = NaiveDate::from_ymd_opt(2024, 3, 1).unwrap();
    assert_succeeded(&run_at(&control, &policy, Operation::CreateNew, at(day, "23:45:00")).await);
    settle(&client).await;
    // An index the policy does not name, added by hand to tomorrow's (pre-built) table.
    let hand_indexed = "metrics_2024-03-02";
    client
        .update_table()
        .table_name(hand_indexed)
        .attribute_definitions(attribute("owner", ScalarAttributeType::S))
        .global_secondary_index_updates(
            aws_sdk_dynamodb::types::GlobalSecondaryIndexUpdate::builder()
                .create(
                    aws_sdk_dynamodb::types::CreateGlobalSecondaryIndexAction::builder()
                        .index_name("by_hand")
                        .key_schema(key_element("owner", KeyType::Hash))
                        .projection(keys_only())
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    settle(&client).await;
    // Two days on: 03-01 (age 2) and 03-02 (age 1) are both due for provisioned phase 1.
    let resize = run_at(
        &control,
        &policy,
        Operation::ResizeOld,
        at(day + Duration::days(2), "00:15:00"),
    )
    .await;
    assert_succeeded(&resize);
    let described = testkit::describe_all(&client).await;
    // Every index the policy's: switched with every index's throughput (DynamoDB Local refuses
    // a switch that leaves one out).
    let ((read, write), indexes) = throughput(&described["metrics_2024-03-01"]);
    assert_eq!((read, write), (20, 1));
    assert_eq!(indexes["by_device"], (5, 1));
    assert_eq!(indexes["by_site"], (5, 1));
    // An index that is not the policy's: the switch would set its throughput, so it is not
    // made; the table stays on-demand, the index as it was, and the line says why.
    let kept = &described[hand_indexed];
    assert_eq!(
        kept.billing_mode_summary()
            .and_then(|b| b.billing_mode())
            .map(|m| m.as_str()),
        Some("PAY_PER_REQUEST")
    );
    assert!(kept
        .global_secondary_indexes()
        .iter()
        .any(|i| i.index_name() == Some("by_hand")));
    let line = resize
        .tables
        .iter()
        .find(|l| l.item.facts.table == hand_indexed)
        .expect("a line for the hand-indexed table");
    assert_eq!(line.item.decision.action(), "skipped", "{line:#?}");
    assert!(line.item.reason.contains("index by_hand"), "{}", line.item.reason);
}
