//! Shared by the CLI's integration tests that run the real binary.

use std::path::Path;
use std::process::Command;

use testkit::ProcessRun;

/// Text that only a Rust debug dump of an SDK error would contain: a report line must never
/// show one.
pub(super) const DEBUG_DUMP: [&str; 5] = [
    "DispatchFailure(",
    "ConnectorError {",
    "{ source:",
    "ServiceError(",
    "TimeoutError(",
];

/// Fails the test where `text` shows a Rust debug dump ([`DEBUG_DUMP`]).
pub(super) fn assert_no_debug_dump(text: &str) {
    for dump in DEBUG_DUMP {
        assert!(!text.contains(dump), "Rust debug dump {dump:?} in: {text}");
    }
}

/// A run's exit code must be `code`; returns its JSON report.
pub(super) fn expect_exit(run: &ProcessRun, code: i32, what: &str) -> serde_json::Value {
    assert_eq!(
        run.code, code,
        "{what}: exit {} (want {code})\nstdout:\n{}\nstderr:\n{}",
        run.code, run.stdout, run.stderr
    );
    run.json()
}

/// Runs the `ddb-rollover` binary against `endpoint` with `env`, with no policy or log level
/// inherited from the caller's environment.
pub(super) fn run_cli(endpoint: &str, env: Vec<(String, String)>, args: &[&str]) -> ProcessRun {
    ProcessRun::of(
        Command::new(crate::support::binaries::cli())
            .args(["--endpoint-url", endpoint, "--region", "us-east-1"])
            .args(args)
            .envs(env)
            .env_remove("ROLLOVER_POLICY")
            .env_remove("DDB_ROLLOVER_LOG"),
    )
}

/// The arguments of a scheduled run with a JSON report: `command` at `at` under the policy
/// file `policy`.
pub(crate) fn scheduled<'a>(policy: &'a str, at: &'a str, command: &'a str) -> [&'a str; 7] {
    ["--policy", policy, "--output", "json", "--at", at, command]
}

/// A scheduled run ([`scheduled`]) of the binary against `endpoint` with `env`: it must exit
/// 0; returns its JSON report.
pub(crate) fn json_run(
    endpoint: &str,
    env: Vec<(String, String)>,
    policy: &Path,
    at: &str,
    command: &str,
) -> serde_json::Value {
    let policy = policy.to_str().expect("a UTF-8 path");
    let run = run_cli(endpoint, env, &scheduled(policy, at, command));
    expect_exit(&run, 0, &format!("{command} at {at}"))
}

/// The (first) line of `table` in a run's JSON report.
pub(super) fn line_of<'r>(report: &'r serde_json::Value, table: &str) -> &'r serde_json::Value {
    report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["table"] == table)
        .unwrap_or_else(|| panic!("no line for {table} in {report:#}"))
}

/// Tags the table `arn` as a member of `family` (the tag create-new gives its tables), as
/// someone outside ddb-rollover would.
pub(super) async fn tag_family(client: &aws_sdk_dynamodb::Client, arn: &str, family: &str) {
    client
        .tag_resource()
        .resource_arn(arn)
        .tags(
            aws_sdk_dynamodb::types::Tag::builder()
                .key("ddb-rollover:family")
                .value(family)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap_or_else(|e| panic!("TagResource {arn}: {e:?}"));
}

/// The `error` of `table`'s failed line.
pub(super) fn error_of(report: &serde_json::Value, table: &str) -> String {
    report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["table"] == table && l["outcome"] == "failed")
        .unwrap_or_else(|| panic!("no failed line for {table} in {report:#}"))["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{table}'s failed line has no error"))
        .to_owned()
}
