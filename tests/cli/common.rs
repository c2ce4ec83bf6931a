//! Shared by the CLI's integration tests that run the real binary.

use std::process::Command;

use testkit::ProcessRun;

/// Text that only a Rust debug dump of an SDK error would contain: a report line must never
/// show one.
pub const DEBUG_DUMP: [&str; 5] = [
    "DispatchFailure(",
    "ConnectorError {",
    "{ source:",
    "ServiceError(",
    "TimeoutError(",
];

/// Runs the `ddb-rollover` binary against `endpoint` with `env`, with no policy or log level
/// inherited from the caller's environment.
pub fn run_cli(endpoint: &str, env: Vec<(String, String)>, args: &[&str]) -> ProcessRun {
    ProcessRun::of(
        Command::new(crate::support::binaries::cli())
            .args(["--endpoint-url", endpoint, "--region", "us-east-1"])
            .args(args)
            .envs(env)
            .env_remove("ROLLOVER_POLICY")
            .env_remove("DDB_ROLLOVER_LOG"),
    )
}

/// The `error` of `table`'s failed line.
pub fn error_of(report: &serde_json::Value, table: &str) -> String {
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
