//! A read that fails is a failure (issue 38), through the real binary: on plain moto (no AWS
//! layer), which answers DescribeKinesisStreamingDestination with an HTML 500 (an action it
//! lacks), retention still deletes what is due; the same policy behind a proxy that refuses the
//! read with AccessDeniedException fails every resize-old that needs it (exit 1, naming the
//! grant once, not once per table) and deletes nothing. Read back from moto itself.

use super::common;

use chrono::{Duration, NaiveDate};
use common::run_cli;
use testkit::{Fault, LocalDynamo, Proxy, Rule, Server};

const POLICY: &str = "[retention]\ndelete_after = 3\nkeep_newest = 2\n";
const DAYS: i64 = 12;
const START: &str = "2018-10-20";

/// The family's period tables on moto, read from the server itself (the ledger aside).
async fn tables(client: &aws_sdk_dynamodb::Client) -> Vec<String> {
    testkit::table_names(client)
        .await
        .into_iter()
        .filter(|name| name.starts_with("timeseries_2"))
        .collect()
}

fn policy_file(name: &str) -> String {
    let path = std::env::temp_dir().join(format!("ddb-rollover-unread-{name}-{}.toml", std::process::id()));
    std::fs::write(&path, POLICY).unwrap();
    path.to_string_lossy().into_owned()
}

/// `DAYS` of the blog's schedule through `endpoint`; the exit codes of each resize-old, and
/// its output when it failed.
fn lifecycle(endpoint: &str, env: Vec<(String, String)>, policy: &str) -> Vec<(String, i32, String)> {
    let start = NaiveDate::parse_from_str(START, "%Y-%m-%d").unwrap();
    let mut resizes = Vec::new();
    for day in 0..DAYS {
        let today = start + Duration::days(day);
        let tomorrow = today + Duration::days(1);
        let create = run_cli(
            endpoint,
            env.clone(),
            &[
                "--policy",
                policy,
                "--at",
                &format!("{today}T23:45:00Z"),
                "create-new",
            ],
        );
        assert_eq!(
            create.code, 0,
            "create-new {today}: {}\n{}",
            create.stdout, create.stderr
        );
        let resize = run_cli(
            endpoint,
            env.clone(),
            &[
                "--policy",
                policy,
                "--output",
                "json",
                "--at",
                &format!("{tomorrow}T00:15:00Z"),
                "resize-old",
            ],
        );
        resizes.push((
            tomorrow.to_string(),
            resize.code,
            format!("{}\n{}", resize.stdout, resize.stderr),
        ));
    }
    resizes
}

#[tokio::test]
async fn plain_moto_deletes_what_is_due() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let policy = policy_file("plain");
    let endpoint = server.server_endpoint().to_owned();
    let resizes = lifecycle(&endpoint, testkit::endpoint_env(&endpoint), &policy);
    for (day, code, output) in &resizes {
        assert_eq!(*code, 0, "resize-old {day}: {output}");
    }
    // By 2018-11-01 00:15 the tables of 10-20 .. 11-01 were made; those of age 3 (delete_after)
    // and more are gone, read back from moto.
    let left = tables(&client).await;
    let first_kept = NaiveDate::from_ymd_opt(2018, 10, 30).unwrap();
    let expected: Vec<String> = (0..3)
        .map(|d| format!("timeseries_{}", first_kept + Duration::days(d)))
        .collect();
    assert_eq!(left, expected, "{resizes:#?}");
}

#[tokio::test]
async fn a_refused_destination_read_fails_every_run_that_needs_it_and_deletes_nothing() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let proxy = Proxy::start(server.endpoint());
    proxy.add(
        Rule::op("DescribeKinesisStreamingDestination").always(),
        Fault::Error {
            status: 400,
            error_type: "AccessDeniedException".into(),
            message: "User: arn:aws:sts::123456789012:assumed-role/rollover/fn is not authorized to perform: dynamodb:DescribeKinesisStreamingDestination".into(),
        },
    );
    let policy = policy_file("refused");
    let resizes = lifecycle(&proxy.endpoint(), proxy.env(), &policy);
    let mut failed = 0;
    for (day, code, output) in &resizes {
        if *code == 0 {
            // Nothing was due yet: no destination was read.
            assert!(
                !output.contains("DescribeKinesisStreamingDestination failed"),
                "{day}: {output}"
            );
            continue;
        }
        failed += 1;
        assert_eq!(*code, 1, "{day}: {output}");
        assert!(
            output.contains("dynamodb:DescribeKinesisStreamingDestination"),
            "{day}: {output}"
        );
        assert_eq!(
            output
                .matches("\"reason\": \"DescribeKinesisStreamingDestination failed for")
                .count(),
            1,
            "once per run, not per table ({day}): {output}"
        );
    }
    assert!(failed >= (DAYS as usize) - 4, "{resizes:#?}");
    // Nothing deleted: every table made (10-20 .. 11-01) is still there.
    assert_eq!(tables(&client).await.len(), DAYS as usize + 1, "{resizes:#?}");
}
