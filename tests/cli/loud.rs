//! Loud and consistent, through the real binary on moto: a next table that carries this
//! family's tag but another key is NOT READY in `status` and fails `create-new` (exit 1), with
//! the same words; an invalid policy exits 2 naming every bad field before any AWS call. Read
//! back from moto: the table is untouched.

use super::common;

use common::run_cli;
use testkit::{LocalDynamo, Server};

const NEXT: &str = "timeseries_2018-10-26";

/// The health line of a `status` or `create-new` output.
fn health(output: &str) -> String {
    output
        .lines()
        .find(|line| line.starts_with("health: "))
        .unwrap_or_else(|| panic!("no health line in {output}"))
        .to_string()
}

#[tokio::test]
async fn our_family_tag_on_another_key_is_not_ready_in_status_and_create_new_alike() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    testkit::create_plain_table(&client, NEXT).await;
    let arn = testkit::table_arn(&client, NEXT).await;
    common::tag_family(&client, &arn, "timeseries").await;
    let cli = |args: &[&str]| run_cli(server.endpoint(), server.env(), args);
    // A table of the family's names before its first run: the operator starts the ledger,
    // which does not record this one (another key).
    let init = cli(&["--at", "2018-10-25T23:30:00Z", "init", "--yes"]);
    assert_eq!(init.code, 0, "{}\n{}", init.stdout, init.stderr);

    let status = cli(&["--at", "2018-10-25T23:40:00Z", "status"]);
    let create = cli(&["--at", "2018-10-25T23:45:00Z", "create-new"]);
    assert_eq!(create.code, 1, "{}\n{}", create.stdout, create.stderr);
    let said = |line: &str| {
        line.split(", ")
            .find(|part| part.contains(NEXT))
            .map(|part| part.trim_start_matches("health: NOT READY: ").to_string())
    };
    let (status_health, create_health) = (health(&status.stdout), health(&create.stdout));
    assert!(status_health.starts_with("health: NOT READY"), "{status_health}");
    assert!(create_health.starts_with("health: NOT READY"), "{create_health}");
    assert!(
        status_health.contains(&format!("{NEXT} taken by a table that is not this policy's")),
        "{}\n{}",
        status.stdout,
        status.stderr
    );
    assert_eq!(said(&status_health), said(&create_health));

    // Read back from moto: still its own key, still only its tag.
    let described = client.describe_table().table_name(NEXT).send().await.unwrap();
    let keys: Vec<&str> = described
        .table()
        .unwrap()
        .key_schema()
        .iter()
        .map(|k| k.attribute_name())
        .collect();
    assert_eq!(keys, ["id"]);
}

#[tokio::test]
async fn an_invalid_policy_exits_2_naming_every_field_before_any_call() {
    let dir = std::env::temp_dir().join(format!("ddb-rollover-loud-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = dir.join("bad.json");
    std::fs::write(
        &policy,
        r#"{"premake": "two", "grace": 90, "phases": [{"min_age": 0, "read": "many", "write": 0}],
            "retention": {"delete_after": 0, "archive_after": 1, "bucket": "b-archive", "prefix": "../../"}}"#,
    )
    .unwrap();
    // Nothing listens there: any AWS call would fail otherwise than with exit 2.
    let run = run_cli(
        "http://127.0.0.1:9",
        Vec::new(),
        &["--policy", policy.to_str().unwrap(), "status"],
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    for field in [
        "premake",
        "grace",
        "phases[0].read",
        "phases[0].write",
        "retention.delete_after",
        "retention.prefix",
    ] {
        assert!(run.stderr.contains(field), "{field} not named: {}", run.stderr);
    }
    std::fs::remove_dir_all(&dir).ok();
}
