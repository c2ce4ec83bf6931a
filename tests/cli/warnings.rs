//! Each warning said once per command, and the table quota only where it matters: the real
//! binary on moto, with the default policy (no retention: every table kept, so the account's
//! 2,500-table quota is about 2,500 days away) and a hand-made look-alike
//! (`timeseries_2018-09-25`, key `id` (S)) under the prefix.
//!
//! - `each_warning_once_per_command`: over a day of the blog's schedule (create-new at 23:45,
//!   resize-old at 00:15) and `status` and `plan` after it, every command's output (stdout and
//!   stderr, log lines included) holds each distinct warning at most once: the look-alike's in
//!   create-new, resize-old, status and plan alike (once in plan, though both its operations
//!   report it), the quota in status and plan only, never in the scheduled runs while it is years
//!   away. The tables are read back from moto: the look-alike is untouched.

use super::common;

use aws_sdk_dynamodb::Client;
use common::run_cli;
use testkit::{LocalDynamo, ProcessRun, Server};

/// What identifies each warning in a line of output, log lines included.
const LOOK_ALIKE: &str = "named like this policy's are not this family's";
const QUOTA: &str = "2500 tables per Region";

/// How many lines of the run's whole output say `needle`.
fn lines_saying(run: &ProcessRun, needle: &str) -> usize {
    run.stdout
        .lines()
        .chain(run.stderr.lines())
        .filter(|line| line.contains(needle))
        .count()
}

async fn key_of(client: &Client, table: &str) -> Vec<String> {
    let described = client.describe_table().table_name(table).send().await.unwrap();
    let table = described.table().expect("a table");
    table
        .key_schema()
        .iter()
        .map(|k| k.attribute_name().to_owned())
        .collect()
}

#[tokio::test]
async fn each_warning_once_per_command() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    testkit::create_plain_table(&client, "timeseries_2018-09-25").await;
    let cli = |args: &[&str]| {
        let run = run_cli(server.endpoint(), server.env(), args);
        assert_eq!(run.code, 0, "{args:?}: {}\n{}", run.stdout, run.stderr);
        run
    };

    // A table of the family's names before its first run: the operator starts the ledger.
    cli(&["--at", "2018-10-25T23:40:00Z", "init", "--yes"]);
    let create = cli(&["--at", "2018-10-25T23:45:00Z", "create-new"]);
    let resize = cli(&["--at", "2018-10-26T00:15:00Z", "resize-old"]);
    let status = cli(&["--at", "2018-10-26T00:20:00Z", "status"]);
    let plan = cli(&["--at", "2018-10-26T00:20:00Z", "plan"]);

    // (command, lines naming the look-alike, lines naming the quota)
    let said: Vec<(&str, usize, usize)> = [
        ("create-new", &create),
        ("resize-old", &resize),
        ("status", &status),
        ("plan", &plan),
    ]
    .into_iter()
    .map(|(name, run)| (name, lines_saying(run, LOOK_ALIKE), lines_saying(run, QUOTA)))
    .collect();
    assert_eq!(
        said,
        [
            // create_new only lists the look-alike, and warns of it as resize_old does (issue 38).
            ("create-new", 1, 0),
            ("resize-old", 1, 0),
            ("status", 1, 1),
            ("plan", 1, 1),
        ],
        "create-new:\n{}{}\nresize-old:\n{}{}\nstatus:\n{}{}\nplan:\n{}{}",
        create.stdout,
        create.stderr,
        resize.stdout,
        resize.stderr,
        status.stdout,
        status.stderr,
        plan.stdout,
        plan.stderr
    );
    // Every `warning:` line of a command is distinct.
    for (name, run) in [
        ("create-new", &create),
        ("resize-old", &resize),
        ("status", &status),
        ("plan", &plan),
    ] {
        let mut warnings: Vec<&str> = run
            .stdout
            .lines()
            .filter(|l| l.starts_with("warning: "))
            .collect();
        let all = warnings.len();
        warnings.sort_unstable();
        warnings.dedup();
        assert_eq!(warnings.len(), all, "{name} repeats a warning:\n{}", run.stdout);
    }
    // Said, and left alone.
    assert_eq!(key_of(&client, "timeseries_2018-09-25").await, ["id"]);
}
