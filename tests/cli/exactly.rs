//! Issue 38, point 2: `status` is exactly the run. The real binary on moto, each table read
//! back from moto:
//!
//! - `a_nested_familys_tables_appear_once_under_their_family`: family `ts` beside `ts_eu`
//!   (whose names start with `ts_`): `ts`'s status shows none of `ts_eu`'s tables as rows of
//!   its own (they were `MISSING` rows), and names them once, in the other family's warning;
//! - `each_table_in_one_warning_and_status_exits_as_the_run`: a table named like ours carrying
//!   another family's tag was in that family's warning and in "not in the ledger" too; a table
//!   nobody recorded in two "not in the ledger" warnings (the runs' and the full view's). Each is
//!   in one warning. With the family's ledger gone, status says the runs are blocked and exits
//!   1 (it exited 0); with the current table missing (NOT READY) it exits 1 too;
//! - `create_new_and_resize_old_warn_alike`: tables named like ours that are not ours (another
//!   family's tag, another key, made by hand with our key) were warned about by resize-old and
//!   not by create-new; both say the same warning;
//! - `no_log_lines_without_ddb_rollover_log`: a run whose next table is not ready logged a
//!   WARN line on stderr with DDB_ROLLOVER_LOG unset; only `warning:` and `error:` lines now.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::Client;
use ddb_rollover::control::Tables;
use ddb_rollover::Policy;
use ddb_rollover_aws::dynamodb::DynamoDb;
use testkit::{LocalDynamo, ProcessRun, Server};

use super::common::{self, run_cli};

fn arn(name: &str) -> String {
    format!("arn:aws:dynamodb:us-east-1:123456789012:table/{name}")
}

/// A table named `name` with `policy`'s key, made by hand (no tags).
async fn keyed_like(client: &Client, policy: &Policy, name: &str) {
    let spec = fake_aws::table_spec(name, policy.key.clone(), policy.hot_phase().billing);
    DynamoDb::new(client.clone()).create_table(&spec).await.unwrap();
}

/// The binary for family `prefix` at `at` with a JSON report.
fn cli(server: &LocalDynamo, prefix: &str, at: &str, args: &[&str]) -> ProcessRun {
    let mut all = vec!["--prefix", prefix, "--at", at, "--output", "json"];
    all.extend_from_slice(args);
    run_cli(server.endpoint(), server.env(), &all)
}

/// The binary for family `prefix` at `at`, printing its table.
fn cli_table(server: &LocalDynamo, prefix: &str, at: &str, args: &[&str]) -> ProcessRun {
    let mut all = vec!["--prefix", prefix, "--at", at];
    all.extend_from_slice(args);
    run_cli(server.endpoint(), server.env(), &all)
}

/// The warnings of a JSON report.
fn warnings(report: &serde_json::Value) -> Vec<String> {
    report["warnings"]
        .as_array()
        .map(|w| w.iter().map(|w| w.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// How many of `warnings` name `table`.
fn naming(warnings: &[String], table: &str) -> usize {
    warnings.iter().filter(|w| w.contains(table)).count()
}

/// The rows of a JSON status report, by table.
fn rows(report: &serde_json::Value) -> BTreeMap<String, serde_json::Value> {
    report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["table"].as_str().unwrap().to_owned(), l.clone()))
        .collect()
}

/// A day of the family `prefix`: its ledger started, then create-new at 23:45.
fn a_day_of(server: &LocalDynamo, prefix: &str) {
    let init = cli(server, prefix, "2018-10-25T23:40:00Z", &["init", "--yes"]);
    common::expect_exit(&init, 0, &format!("{prefix} init"));
    let create = cli(server, prefix, "2018-10-25T23:45:00Z", &["create-new"]);
    common::expect_exit(&create, 0, &format!("{prefix} create-new"));
}

#[tokio::test]
async fn a_nested_familys_tables_appear_once_under_their_family() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    a_day_of(&server, "ts_eu");
    a_day_of(&server, "ts");
    let theirs = ["ts_eu_2018-10-25", "ts_eu_2018-10-26", "ts_eu_ledger"];
    let all = testkit::describe_all(&client).await;
    let ledgers = testkit::ledgers(&client).await;
    for table in theirs {
        assert!(all.contains_key(table) || ledgers.contains_key(table), "{table}");
    }

    let status = cli(&server, "ts", "2018-10-26T00:20:00Z", &["status"]);
    let report = common::expect_exit(&status, 0, "ts status");
    let shown = rows(&report);
    for table in theirs {
        assert!(
            !shown.contains_key(table),
            "{table} is ts_eu's, shown as a row of ts's: {:#}",
            shown[table]
        );
    }
    // Every row of ts's is a table of ts's or one create-new will make; none is MISSING but
    // the one the next create-new makes.
    let missing: Vec<&String> = shown.keys().filter(|t| shown[*t]["status"].is_null()).collect();
    assert_eq!(missing, ["ts_2018-10-27"], "{report:#}");
    let warnings = warnings(&report);
    for table in theirs {
        assert_eq!(naming(&warnings, table), 1, "{table}: {warnings:#?}");
    }
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("another ddb-rollover family (\"ts_eu\")")),
        "{warnings:#?}"
    );
    // And the other way round: ts_eu's status shows nothing of ts's.
    let status = cli(&server, "ts_eu", "2018-10-26T00:20:00Z", &["status"]);
    let report = common::expect_exit(&status, 0, "ts_eu status");
    assert!(
        rows_of(&report).iter().all(|t| t.starts_with("ts_eu_")),
        "{report:#}"
    );
}

fn rows_of(report: &serde_json::Value) -> Vec<String> {
    rows(report).into_keys().collect()
}

#[tokio::test]
async fn each_table_in_one_warning_and_status_exits_as_the_run() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let ts = Policy::from_toml("prefix = \"ts\"").unwrap();
    a_day_of(&server, "ts");
    // Named like ours with our key: one tagged by another family, one made by hand.
    keyed_like(&client, &ts, "ts_2018-10-24").await;
    common::tag_family(&client, &arn("ts_2018-10-24"), "ts_eu").await;
    keyed_like(&client, &ts, "ts_2018-10-23").await;

    let status = cli(&server, "ts", "2018-10-26T00:20:00Z", &["status"]);
    let report = common::expect_exit(&status, 0, "status");
    let warnings = warnings(&report);
    for table in ["ts_2018-10-24", "ts_2018-10-23"] {
        assert_eq!(naming(&warnings, table), 1, "{table}: {warnings:#?}");
    }
    let family = warnings.iter().find(|w| w.contains("ts_2018-10-24")).unwrap();
    assert!(family.contains("\"ts_eu\""), "{family}");
    let shown = rows(&report);
    assert!(!shown.contains_key("ts_2018-10-24"), "ts_eu's, not a row of ours");
    assert_eq!(shown["ts_2018-10-23"]["status"], "ACTIVE");
    // Every warning of the command is distinct, on stdout and stderr alike.
    let text = cli_table(&server, "ts", "2018-10-26T00:20:00Z", &["status"]);
    assert_eq!(text.code, 0, "{}{}", text.stdout, text.stderr);
    let lines: Vec<&str> = text
        .stdout
        .lines()
        .chain(text.stderr.lines())
        .filter(|l| l.starts_with("warning: "))
        .collect();
    let mut distinct = lines.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), lines.len(), "{}", text.stdout);
    assert_eq!(lines.len(), 3, "family, not ours, quota: {}", text.stdout);

    // The family's ledger gone: the runs would fail on it (blocked), so status exits 1, and
    // says so on the ledger's row; each table is still named in one warning.
    client
        .update_table()
        .table_name("ts_ledger")
        .deletion_protection_enabled(false)
        .send()
        .await
        .unwrap();
    client
        .delete_table()
        .table_name("ts_ledger")
        .send()
        .await
        .unwrap();
    let status = cli(&server, "ts", "2018-10-26T00:20:00Z", &["status"]);
    let report = common::expect_exit(&status, 1, "status without the ledger");
    let shown = rows(&report);
    let ledger = &shown["ts_ledger"];
    assert_eq!(
        ledger["create_new"]["decision"]["action"], "blocked",
        "{ledger:#}"
    );
    assert!(
        ledger["create_new"]["reason"]
            .as_str()
            .unwrap()
            .contains("ddb-rollover init"),
        "{ledger:#}"
    );
    let warnings = self::warnings(&report);
    for table in ["ts_2018-10-24", "ts_2018-10-23", "ts_2018-10-25", "ts_2018-10-26"] {
        assert_eq!(naming(&warnings, table), 1, "{table}: {warnings:#?}");
    }
    let text = cli_table(&server, "ts", "2018-10-26T00:20:00Z", &["status"]);
    assert_eq!(text.code, 1, "{}{}", text.stdout, text.stderr);
    assert!(
        text.stdout
            .lines()
            .any(|l| l.starts_with("ts_ledger") && l.contains("create_new: blocked:")),
        "{}",
        text.stdout
    );

    // Another family's status, where its current table is missing: NOT READY, exit 1.
    let init = cli(&server, "other", "2018-10-26T00:20:00Z", &["init", "--yes"]);
    common::expect_exit(&init, 0, "other init");
    let status = cli(&server, "other", "2018-10-26T00:20:00Z", &["status"]);
    let report = common::expect_exit(&status, 1, "status with the current table missing");
    assert_eq!(report["health"]["ready"], false, "{report:#}");
}

#[tokio::test]
async fn create_new_and_resize_old_warn_alike() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let ts = Policy::from_toml("prefix = \"ts\"").unwrap();
    a_day_of(&server, "ts");
    // Another family's tag, another key, made by hand with our key: none of them ours.
    keyed_like(&client, &ts, "ts_2018-10-22").await;
    common::tag_family(&client, &arn("ts_2018-10-22"), "ts_eu").await;
    testkit::create_plain_table(&client, "ts_2018-10-23").await;
    keyed_like(&client, &ts, "ts_2018-10-24").await;
    let neighbours = ["ts_2018-10-22", "ts_2018-10-23", "ts_2018-10-24"];

    let create = cli(&server, "ts", "2018-10-26T23:45:00Z", &["create-new"]);
    let created = common::expect_exit(&create, 0, "create-new");
    let resize = cli(&server, "ts", "2018-10-27T00:15:00Z", &["resize-old"]);
    let resized = common::expect_exit(&resize, 0, "resize-old");
    let about = |report: &serde_json::Value| -> Vec<String> {
        warnings(report)
            .into_iter()
            .filter(|w| neighbours.iter().any(|t| w.contains(t)))
            .collect()
    };
    let (create_says, resize_says) = (about(&created), about(&resized));
    assert_eq!(create_says.len(), 1, "create-new: {:#?}", warnings(&created));
    assert_eq!(create_says, resize_says);
    for table in neighbours {
        assert!(create_says[0].contains(table), "{table}: {}", create_says[0]);
    }
    // Said, and left alone.
    let all = testkit::describe_all(&client).await;
    for table in neighbours {
        assert!(all.contains_key(table), "{table}");
    }
    assert_eq!(
        testkit::tags_of(&client, &arn("ts_2018-10-24")).await,
        BTreeMap::new()
    );
}

#[tokio::test]
async fn no_log_lines_without_ddb_rollover_log() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    a_day_of(&server, "ts");
    // A look-alike holds tomorrow's name: create-new fails, and its next table is not ready
    // (which the engine also logs, at WARN).
    testkit::create_plain_table(&client, "ts_2018-10-27").await;
    let create = cli(&server, "ts", "2018-10-26T23:45:00Z", &["create-new"]);
    let report = common::expect_exit(&create, 1, "create-new");
    assert_eq!(report["next_table_ready"]["ready"], false, "{report:#}");
    for line in create.stderr.lines() {
        assert!(
            line.starts_with("warning: ") || line.starts_with("error: "),
            "a log line without DDB_ROLLOVER_LOG: {line:?}\n{}",
            create.stderr
        );
    }
    // What the log line said is in the report: the health, and the failed line.
    assert!(
        report["tables"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["table"] == "ts_2018-10-27" && l["outcome"] == "failed"),
        "{report:#}"
    );
    // Asked for, the logs are there.
    let mut env = server.env();
    env.push(("DDB_ROLLOVER_LOG".into(), "warn".into()));
    let logged = ProcessRun::of(
        std::process::Command::new(crate::support::binaries::cli())
            .args(["--endpoint-url", server.endpoint(), "--region", "us-east-1"])
            .args([
                "--prefix",
                "ts",
                "--at",
                "2018-10-26T23:45:00Z",
                "--output",
                "json",
                "create-new",
            ])
            .envs(env)
            .env_remove("ROLLOVER_POLICY"),
    );
    assert!(
        logged.stderr.contains("WARN") && logged.stderr.contains("not ready"),
        "{}",
        logged.stderr
    );
}
