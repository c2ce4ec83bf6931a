//! Warm throughput with the real binary: on moto, an on-demand hot phase with `warm` pre-builds
//! its tables with it (read back with DescribeTable through the SDK, the table's and the index's),
//! a policy asking more raises the pre-built table and not the current one, a policy asking less
//! sends nothing and says the warm throughput cannot be lowered, resize_old's phase change says
//! so once, and `status` shows it (text and JSON). On dynalite and DynamoDB Local, which accept
//! `WarmThroughput` at CreateTable and report none, the same policy runs cleanly.

use std::path::{Path, PathBuf};

use aws_sdk_dynamodb::Client;
use serde_json::Value;
use testkit::{LocalDynamo, Proxy, Server};

use super::common::{json_run, line_of, run_cli};

/// An on-demand hot phase pre-warmed to `read` / `write`, a provisioned phase after it.
fn policy_file(name: &str, read: i64, write: i64) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ddb-rollover-warm-{name}-{}.toml", std::process::id()));
    let text = format!(
        r#"
[[indexes]]
name = "by_device"
partition = {{ name = "device", type = "S" }}

[[phases]]
min_age = 0
billing = "on_demand"
warm = {{ read = {read}, write = {write} }}

[[phases]]
min_age = 1
read = 10
write = 5
"#
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// (read, write, status) of the table's warm throughput, then of each index's, as DynamoDB
/// reports them.
async fn warm(client: &Client, table: &str) -> Vec<Option<(i64, i64, String)>> {
    let out = client.describe_table().table_name(table).send().await.unwrap();
    let t = out.table().unwrap();
    let table_warm = t.warm_throughput().map(|w| {
        (
            w.read_units_per_second().unwrap(),
            w.write_units_per_second().unwrap(),
            w.status().unwrap().as_str().to_string(),
        )
    });
    std::iter::once(table_warm)
        .chain(t.global_secondary_indexes().iter().map(|i| {
            i.warm_throughput().map(|w| {
                (
                    w.read_units_per_second().unwrap(),
                    w.write_units_per_second().unwrap(),
                    w.status().unwrap().as_str().to_string(),
                )
            })
        }))
        .collect()
}

fn active(read: i64, write: i64) -> Option<(i64, i64, String)> {
    Some((read, write, "ACTIVE".to_string()))
}

/// The line of `table` whose action is `action` in a run report.
fn line<'a>(report: &'a Value, table: &str, action: &str) -> &'a Value {
    report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["table"] == table && l["decision"]["action"] == action)
        .unwrap_or_else(|| panic!("no {action} line for {table}: {report:#}"))
}

#[tokio::test]
async fn an_on_demand_hot_phase_pre_builds_raises_and_never_lowers_warm_throughput_on_moto() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    // Recorded: which calls each run sends.
    let proxy = Proxy::start(server.endpoint());
    let endpoint = proxy.endpoint();
    let (today, tomorrow) = ("timeseries_2018-10-25", "timeseries_2018-10-26");

    let run = |policy: &Path, at: &str, command: &str| json_run(&endpoint, server.env(), policy, at, command);
    let warm40 = policy_file("40", 40_000, 20_000);
    let created = run(&warm40, "2018-10-25T23:45:00Z", "create-new");
    assert_eq!(created["next_table_ready"]["ready"], true, "{created:#}");
    for table in [today, tomorrow] {
        assert_eq!(
            warm(&client, table).await,
            [active(40_000, 20_000), active(40_000, 20_000)],
            "{table}: the table and its index"
        );
    }

    // status: the WARM column and the JSON, wanted and reported.
    let status = run_cli(
        &endpoint,
        server.env(),
        &[
            "--policy",
            warm40.to_str().unwrap(),
            "--at",
            "2018-10-25T23:46:00Z",
            "status",
        ],
    );
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert!(status.stdout.contains("  WARM  "), "{}", status.stdout);
    let row = status.stdout.lines().find(|l| l.starts_with(tomorrow)).unwrap();
    assert!(row.contains("40000/20000 ACTIVE"), "{row}");
    let json = run(&warm40, "2018-10-25T23:46:00Z", "status");
    let pre_built = line_of(&json, tomorrow);
    assert_eq!(
        pre_built["warm"]["wanted"],
        serde_json::json!({"read": 40000, "write": 20000})
    );
    assert_eq!(pre_built["warm"]["table"]["status"], "ACTIVE");
    assert_eq!(pre_built["warm"]["indexes"]["by_device"]["write"], 20000);

    // A policy asking more: the pre-built table is raised (table and index), the current one not.
    let warm50 = policy_file("50", 50_000, 25_000);
    let raised = run(&warm50, "2018-10-25T23:50:00Z", "create-new");
    assert_eq!(
        line(&raised, tomorrow, "configure")["outcome"],
        "done",
        "{raised:#}"
    );
    assert_eq!(
        warm(&client, tomorrow).await,
        [active(50_000, 25_000), active(50_000, 25_000)]
    );
    assert_eq!(
        warm(&client, today).await,
        [active(40_000, 20_000), active(40_000, 20_000)],
        "the current table is left as it is"
    );

    // A policy asking less: nothing is sent, and the report says why.
    let warm30 = policy_file("30", 30_000, 15_000);
    proxy.reset_calls();
    let lower = run(&warm30, "2018-10-25T23:55:00Z", "create-new");
    assert_eq!(proxy.count("UpdateTable"), 0, "{:?}", proxy.counts());
    let reason = line(&lower, tomorrow, "unchanged")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.ends_with(
            "unchanged: warm throughput cannot be lowered (the table's 50000 read / 25000 write units/s, index by_device's 50000 read / 25000 write units/s stay)"
        ),
        "{reason}"
    );
    assert_eq!(
        warm(&client, tomorrow).await,
        [active(50_000, 25_000), active(50_000, 25_000)]
    );
    // Anyone else asking less is refused, as on AWS (moto itself would take it).
    let lowering = client
        .update_table()
        .table_name(tomorrow)
        .warm_throughput(
            aws_sdk_dynamodb::types::WarmThroughput::builder()
                .read_units_per_second(30_000)
                .write_units_per_second(15_000)
                .build(),
        )
        .send()
        .await
        .unwrap_err();
    let code = lowering.as_service_error().and_then(|e| e.meta().code());
    assert_eq!(code, Some("ValidationException"), "{lowering:?}");

    // resize_old moves yesterday's table to the provisioned phase: its warm throughput stays,
    // and that line says so.
    let resized = run(&warm40, "2018-10-26T00:15:00Z", "resize-old");
    let update = line(&resized, today, "update");
    assert_eq!(update["outcome"], "done");
    assert!(
        update["reason"]
            .as_str()
            .unwrap()
            .contains("unchanged: warm throughput cannot be lowered"),
        "{update:#}"
    );
    assert_eq!(
        warm(&client, today).await,
        [active(40_000, 20_000), active(40_000, 20_000)]
    );
    for path in [warm40, warm50, warm30] {
        let _ = std::fs::remove_file(path);
    }
}

/// dynalite and DynamoDB Local accept CreateTable's `WarmThroughput` and report none: the
/// tables are created, the run and `status` succeed, and the health line does not wait for it.
#[tokio::test]
async fn servers_without_warm_throughput_run_the_same_policy_cleanly() {
    let policy = policy_file("servers", 40_000, 20_000);
    for server in [
        Server::Dynalite {
            create_ms: 0,
            update_ms: 0,
        },
        Server::DynamoDbLocal,
    ] {
        let server = LocalDynamo::start(server);
        let client = server.client().await;
        let run = |at: &str, command: &str| json_run(server.endpoint(), server.env(), &policy, at, command);
        let created = run("2018-10-25T23:45:00Z", "create-new");
        assert_eq!(created["summary"]["failed"], 0, "{}: {created:#}", server.name());
        assert_eq!(created["next_table_ready"]["ready"], true, "{}", server.name());
        assert_eq!(
            warm(&client, "timeseries_2018-10-26").await,
            [None, None],
            "{}",
            server.name()
        );
        let again = run("2018-10-25T23:50:00Z", "create-new");
        assert_eq!(
            again["summary"]["done"],
            0,
            "{}: nothing to raise: {again:#}",
            server.name()
        );
        let status = run("2018-10-25T23:50:00Z", "status");
        assert_eq!(status["health"]["ready"], true, "{}", server.name());
    }
    let _ = std::fs::remove_file(policy);
}
