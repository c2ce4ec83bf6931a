//! Autoscaling phases end to end on moto (DynamoDB and Application Auto Scaling on one port):
//! create_new and resize_old over simulated days register scalable targets and target-tracking
//! policies for the hot tables and their global index, and deregister them once a table is in
//! a fixed phase, read back
//! through Application Auto Scaling's own API; a scalable target the test registers itself is
//! left alone, reported, and the capacity it holds (its dimension) is not changed; the table's
//! other dimension follows the phases (issue 38).

use std::collections::BTreeMap;

use crate::support::days::{assert_succeeded, run_at};
use crate::support::scaling::{put_policy, register_target, Scales};
use crate::support::{autoscaling_client, capacity};
use aws_sdk_applicationautoscaling::types::{ScalableDimension, ServiceNamespace};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use ddb_rollover::Decision;
use ddb_rollover::Operation;
use ddb_rollover::Policy;
use ddb_rollover_aws::dynamodb::DynamoDb;
use testkit::{LocalDynamo, Server};

const POLICY: &str = r#"
prefix = "scaled"
premake = 1
[[indexes]]
name = "by_device"
partition = { name = "device", type = "S" }
[[phases]]
min_age = 0
autoscaling = { min_read = 5, max_read = 500, min_write = 10, max_write = 1000, target = 60 }
[[phases]]
min_age = 1
read = 100
write = 1
[[phases]]
min_age = 2
read = 1
write = 1
"#;

/// One scalable target as read back: (dimension, min, max, [(policy name, type, target value)]).
type Target = (String, i32, i32, Vec<(String, String, Option<f64>)>);

/// resource id -> its targets, read with the SDK from Application Auto Scaling itself.
type Registered = BTreeMap<String, Vec<Target>>;

async fn registered(client: &aws_sdk_applicationautoscaling::Client) -> Registered {
    let policies = crate::support::scaling::policies(client).await;
    let mut found = Registered::new();
    for target in crate::support::scaling::targets(client).await {
        let attached = policies
            .iter()
            .filter(|p| {
                p.resource_id() == target.resource_id()
                    && p.scalable_dimension() == target.scalable_dimension()
            })
            .map(|p| {
                (
                    p.policy_name().to_string(),
                    p.policy_type().as_str().to_string(),
                    p.target_tracking_scaling_policy_configuration()
                        .map(|c| c.target_value()),
                )
            })
            .collect();
        found.entry(target.resource_id().to_string()).or_default().push((
            target.scalable_dimension().as_str().to_string(),
            target.min_capacity(),
            target.max_capacity(),
            attached,
        ));
    }
    for list in found.values_mut() {
        list.sort_by(|a, b| a.0.cmp(&b.0));
    }
    found
}

/// The scalable resources of table `n`: the table and its index.
fn resources(n: i64) -> Vec<String> {
    let table = format!("table/{}", name(n));
    vec![table.clone(), format!("{table}/index/by_device")]
}

/// What the hot phase registers on one resource: the table's or the index's dimensions.
fn hot_targets(resource: &str) -> Vec<Target> {
    let kind = if resource.contains("/index/") {
        "index"
    } else {
        "table"
    };
    vec![
        (
            format!("dynamodb:{kind}:ReadCapacityUnits"),
            5,
            500,
            vec![(
                "ddb-rollover-scaled-read".into(),
                "TargetTrackingScaling".into(),
                Some(60.0),
            )],
        ),
        (
            format!("dynamodb:{kind}:WriteCapacityUnits"),
            10,
            1000,
            vec![(
                "ddb-rollover-scaled-write".into(),
                "TargetTrackingScaling".into(),
                Some(60.0),
            )],
        ),
    ]
}

fn day(n: i64) -> NaiveDate {
    NaiveDate::from_ymd_opt(2030, 3, 1).unwrap() + Duration::days(n)
}

fn name(n: i64) -> String {
    format!("scaled_{}", day(n))
}

fn at(n: i64, hh_mm: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&format!("{}T{hh_mm}:00Z", day(n)))
        .unwrap()
        .with_timezone(&Utc)
}

async fn index_capacity(client: &aws_sdk_dynamodb::Client, table: &str) -> (i64, i64) {
    let out = client.describe_table().table_name(table).send().await.unwrap();
    let t = out.table().unwrap().global_secondary_indexes()[0]
        .provisioned_throughput()
        .unwrap();
    (
        t.read_capacity_units().unwrap(),
        t.write_capacity_units().unwrap(),
    )
}

#[tokio::test]
async fn autoscaling_hot_phase_registers_and_fixed_phases_deregister_on_moto() {
    let moto = LocalDynamo::start(Server::Moto);
    let dynamodb = moto.client().await;
    let scaling = autoscaling_client(moto.endpoint());
    let policy = Policy::from_toml(POLICY).unwrap();
    let control = DynamoDb::local(dynamodb.clone()).with_autoscaling(scaling.clone());

    // Day 0, 23:45: the current and the next table, created and registered in one run.
    let report = run_at(&control, &policy, Operation::CreateNew, at(0, "23:45")).await;
    assert_succeeded(&report);
    let found = registered(&scaling).await;
    assert_eq!(
        found.keys().cloned().collect::<Vec<_>>(),
        [resources(0), resources(1)].concat()
    );
    for (resource, targets) in &found {
        assert_eq!(*targets, hot_targets(resource), "{resource}");
    }
    assert_eq!(
        capacity(&dynamodb, &name(1)).await,
        (5, 10),
        "created at the minimums"
    );
    // Running again changes nothing.
    let again = run_at(&control, &policy, Operation::CreateNew, at(0, "23:45")).await;
    assert_eq!(again.summary.done, 0, "{:#?}", again.tables);

    // Days 1 to 4: resize_old after each boundary, create_new before the next.
    for n in 1..=4 {
        let resize = run_at(&control, &policy, Operation::ResizeOld, at(n, "00:15")).await;
        assert_succeeded(&resize);
        let create = run_at(&control, &policy, Operation::CreateNew, at(n, "23:45")).await;
        assert_succeeded(&create);
        let found = registered(&scaling).await;
        // Only the current and the pre-built table (and their index) are autoscaled.
        assert_eq!(
            found.keys().cloned().collect::<Vec<_>>(),
            [resources(n), resources(n + 1)].concat(),
            "day {n}"
        );
        // Yesterday's table: targets gone, then its fixed phase's capacity, index included.
        assert_eq!(capacity(&dynamodb, &name(n - 1)).await, (100, 1), "day {n}");
        assert_eq!(index_capacity(&dynamodb, &name(n - 1)).await, (100, 1), "day {n}");
        if n >= 2 {
            assert_eq!(capacity(&dynamodb, &name(n - 2)).await, (1, 1), "day {n}");
        }
    }

    // Someone attaches their own policy to the next table's write target, in place of ours:
    // that target is no longer this policy's, so the table's own throughput is left to it from
    // now on; the targets still ours alone (the table's read, the index's) are removed when the
    // phase ends, and the index, which no foreign target holds, follows the phases.
    let table = name(5);
    let resource = format!("table/{table}");
    scaling
        .delete_scaling_policy()
        .service_namespace(ServiceNamespace::Dynamodb)
        .resource_id(&resource)
        .scalable_dimension(ScalableDimension::DynamoDbTableWriteCapacityUnits)
        .policy_name("ddb-rollover-scaled-write")
        .send()
        .await
        .unwrap();
    let write = ScalableDimension::DynamoDbTableWriteCapacityUnits;
    register_target(&scaling, &resource, write.clone(), 2, 20)
        .send()
        .await
        .unwrap();
    put_policy(
        &scaling,
        &resource,
        write,
        "their-write-scaling",
        Scales::Tracking(50.0),
    )
    .send()
    .await
    .unwrap();
    let theirs: Vec<Target> = registered(&scaling).await[&resource]
        .iter()
        .filter(|t| t.0.ends_with("WriteCapacityUnits"))
        .cloned()
        .collect();
    assert_eq!(theirs.len(), 1);
    let index_resource = format!("{resource}/index/by_device");

    // Day 6: the table would move to the fixed phase 1 (100 / 1); day 7: phase 2 (1 / 1).
    for (n, index_want) in [(6, (100, 1)), (7, (1, 1))] {
        let resize = run_at(&control, &policy, Operation::ResizeOld, at(n, "00:15")).await;
        assert_succeeded(&resize);
        let lines: Vec<_> = resize
            .tables
            .iter()
            .filter(|l| l.item.facts.table == table)
            .collect();
        let actions: Vec<&str> = lines.iter().map(|l| l.item.decision.action()).collect();
        let expected: &[&str] = if n == 6 {
            &["deregister_scaling", "update"]
        } else {
            &["update"]
        };
        assert_eq!(actions, expected, "day {n}: {lines:#?}");
        if let Decision::DeregisterScaling(removal) = &lines[0].item.decision {
            let keys: Vec<String> = removal.targets.iter().map(|t| t.key.to_string()).collect();
            assert!(
                !keys.iter().any(|k| k.ends_with(&format!("{table} write"))),
                "{keys:?}"
            );
            assert!(
                removal.targets.iter().all(|t| t.deregister_target),
                "{removal:#?}"
            );
        }
        let update = lines.last().unwrap();
        assert!(
            update.item.reason.contains("not this policy's")
                && update.item.reason.contains("their-write-scaling"),
            "{}",
            update.item.reason
        );
        assert!(
            resize
                .warnings
                .iter()
                .any(|w| w.contains(&table) && w.contains("Application Auto Scaling")),
            "{:#?}",
            resize.warnings
        );
        // Their target and policy are untouched and the table's write capacity is theirs; ours
        // are gone; the table's read capacity and the index follow the phases.
        let found = registered(&scaling).await;
        assert_eq!(found[&resource], theirs, "day {n}");
        assert!(!found.contains_key(&index_resource), "day {n}: {found:#?}");
        assert_eq!(capacity(&dynamodb, &table).await, (index_want.0, 10), "day {n}");
        assert_eq!(index_capacity(&dynamodb, &table).await, index_want, "day {n}");
        run_at(&control, &policy, Operation::CreateNew, at(n, "23:45")).await;
    }
    // The other tables went on as before: day 6's table has left the hot phase by day 7.
    let found = registered(&scaling).await;
    assert!(!found.contains_key(&format!("table/{}", name(6))), "{found:#?}");
    assert_eq!(capacity(&dynamodb, &name(6)).await, (100, 1));
}
