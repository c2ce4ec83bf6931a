//! A fault-injecting HTTP proxy in front of a local DynamoDB server.
//!
//! moto and dynalite answer every call at once and never fail, so the failures that real AWS
//! produces (dropped and reset connections, 5xx, throttling, a table deleted between two of our
//! calls) cannot be tested against them directly. [`Proxy`] sits between the client under test
//! (the SDK, or the CLI binary through `AWS_ENDPOINT_URL`) and the local server, forwards
//! DynamoDB JSON-protocol requests unchanged, records each of them, and fails the ones that a
//! programmed [`Rule`] or a per-operation rate limit picks.
//!
//! It runs on its own thread with its own tokio runtime, so sync and async tests use it alike,
//! and stops when dropped. HTTP is hyper's on both sides (HTTP/1.1 with keep-alive, as the SDK
//! speaks it): no hand-written parser to get wrong.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpListener, TcpStream};

/// The JSON protocol's error type prefix, as DynamoDB writes it in `__type`.
const ERROR_PREFIX: &str = "com.amazonaws.dynamodb.v20120810#";
/// The JSON protocol's content type (DynamoDB's `x-amz-json-1.0`).
const AMZ_JSON: &str = "application/x-amz-json-1.0";
/// The header that names the operation: `DynamoDB_20120810.<Operation>`.
const TARGET: &str = "x-amz-target";
/// How long [`Fault::VanishBefore`] waits for the upstream to stop describing the table.
const VANISH_TIMEOUT: Duration = Duration::from_secs(5);

/// One request the proxy received, in arrival order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The operation from `X-Amz-Target` (`DescribeTable`), or `""` if the header is missing.
    pub operation: String,
    /// The body's `TableName`, else the table named by its `ResourceArn` or `TableArn`.
    pub table: Option<String>,
    /// [`Fault::label`] of the fault this request got (`"throttle"` from a rate limit).
    pub fault: Option<String>,
}

/// What happens to a request a [`Rule`] picks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Read the request, then close the connection without a response (FIN): the client
    /// cannot know whether the call was carried out.
    Drop,
    /// Read the request, then abort the connection with a TCP RST (`SO_LINGER` 0).
    Reset,
    /// A server-side failure with an AWS-shaped body: 500 is `InternalServerError`, any other
    /// code `ServiceUnavailable`. The request is not forwarded.
    Status(u16),
    /// HTTP 400 `ThrottlingException` "Rate exceeded": what DynamoDB's control plane answers
    /// when a per-account API rate is exceeded. The request is not forwarded.
    Throttle,
    /// Any AWS error (`LimitExceededException`, `ResourceNotFoundException`,
    /// `ValidationException`, ...) with this status and message. The request is not forwarded.
    Error {
        status: u16,
        error_type: String,
        message: String,
    },
    /// Wait this long, then forward the request.
    Latency(Duration),
    /// Delete the request's table on the upstream first (and wait until it is gone), then
    /// forward the request: as if another run deleted the table between two of our calls.
    VanishBefore,
}

impl Fault {
    /// The name recorded in [`Call::fault`]: `drop`, `reset`, `status 503`, `throttle`,
    /// `error LimitExceededException`, `latency 200ms` or `vanish`.
    pub fn label(&self) -> String {
        match self {
            Fault::Drop => "drop".into(),
            Fault::Reset => "reset".into(),
            Fault::Status(code) => format!("status {code}"),
            Fault::Throttle => "throttle".into(),
            Fault::Error { error_type, .. } => format!("error {error_type}"),
            Fault::Latency(delay) => format!("latency {delay:?}"),
            Fault::VanishBefore => "vanish".into(),
        }
    }

    /// Whether the request is still forwarded (and so still subject to a rate limit).
    fn forwards(&self) -> bool {
        matches!(self, Fault::Latency(_) | Fault::VanishBefore)
    }
}

/// Which requests get a fault.
///
/// A rule matches requests of its operation and table (`None`: any). It lets the first `skip`
/// matching requests through, counted from when it was added and whether or not an earlier rule
/// took them; then the next `times` matching requests that no earlier rule took get its fault,
/// and the rule is spent. Rules are checked in the order they were added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub operation: Option<String>,
    pub table: Option<String>,
    pub times: usize,
    pub skip: usize,
}

impl Rule {
    /// Every request, once.
    pub fn any() -> Rule {
        Rule {
            operation: None,
            table: None,
            times: 1,
            skip: 0,
        }
    }

    /// Requests of `operation` (`"DescribeTable"`), once.
    pub fn op(operation: &str) -> Rule {
        Rule {
            operation: Some(operation.to_owned()),
            ..Rule::any()
        }
    }

    /// Only requests for table `name`.
    pub fn on_table(self, name: &str) -> Rule {
        Rule {
            table: Some(name.to_owned()),
            ..self
        }
    }

    /// Fault `n` matching requests instead of one.
    pub fn times(self, n: usize) -> Rule {
        Rule { times: n, ..self }
    }

    /// Fault every matching request, for as long as the rule is in place.
    pub fn always(self) -> Rule {
        self.times(usize::MAX)
    }

    /// Let the first `n` matching requests through first.
    pub fn skip(self, n: usize) -> Rule {
        Rule { skip: n, ..self }
    }

    fn matches(&self, operation: &str, table: Option<&str>) -> bool {
        self.operation.as_deref().is_none_or(|op| op == operation)
            && self.table.as_deref().is_none_or(|t| Some(t) == table)
    }
}

/// A running proxy, stopped (its connections closed) when dropped.
#[derive(Debug)]
pub struct Proxy {
    endpoint: String,
    state: Arc<Mutex<State>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    /// Starts a proxy on a free 127.0.0.1 port forwarding to `upstream_endpoint`
    /// (`http://127.0.0.1:PORT`, e.g. [`crate::LocalDynamo::endpoint`]). It listens before
    /// this returns.
    pub fn start(upstream_endpoint: &str) -> Proxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|e| panic!("testkit proxy: bind 127.0.0.1:0: {e}"));
        listener
            .set_nonblocking(true)
            .expect("testkit proxy: set_nonblocking");
        let port = listener.local_addr().expect("a bound listener").port();
        let state = Arc::new(Mutex::new(State::default()));
        let forwarder = Arc::new(Forwarder {
            upstream: upstream_endpoint.trim_end_matches('/').to_owned(),
            // No idle upstream connections: a keep-alive connection the server closes while
            // idle would fail the next request now and then, which no test asked for.
            client: Client::builder(TokioExecutor::new())
                .pool_max_idle_per_host(0)
                .build_http(),
            state: Arc::clone(&state),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(format!("testkit-proxy-{port}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("testkit proxy: tokio runtime");
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(listener).expect("testkit proxy: listener");
                    tokio::select! {
                        () = accept_loop(listener, forwarder) => {}
                        _ = stopped => {}
                    }
                });
                // Dropping the runtime drops every connection task, closing its socket.
            })
            .expect("testkit proxy: spawn thread");
        Proxy {
            endpoint: format!("http://127.0.0.1:{port}"),
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`: the endpoint to give the client under test.
    pub fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    /// An SDK client for the proxy, configured as [`crate::LocalDynamo::client`] is
    /// (the SDK's default retries; use [`crate::sdk_config`] to change them).
    pub async fn client(&self) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::from_conf(crate::sdk_config(&self.endpoint).build())
    }

    /// Environment for child processes (the CLI binary), as [`crate::LocalDynamo::env`] with
    /// `AWS_ENDPOINT_URL` set to the proxy.
    pub fn env(&self) -> Vec<(String, String)> {
        crate::endpoint_env(&self.endpoint)
    }

    /// Adds a rule after the existing ones.
    pub fn add(&self, rule: Rule, fault: Fault) {
        self.state().rules.push(Armed {
            rule,
            fault,
            skipped: 0,
            applied: 0,
        });
    }

    /// Throttles requests of `operation` beyond `per_second` a second, as DynamoDB limits
    /// control-plane APIs per account (ListTagsOfResource about 10/s, TagResource and
    /// UntagResource about 5/s): a token bucket holding `per_second` tokens (the burst),
    /// refilled at `per_second` a second. A throttled request gets [`Fault::Throttle`] and is
    /// recorded with fault `"throttle"`. Applies to requests no rule failed; replaces an earlier
    /// limit on the same operation.
    pub fn rate_limit(&self, operation: &str, per_second: u32) {
        assert!(per_second > 0, "testkit proxy: a rate limit needs per_second > 0");
        self.state()
            .limits
            .insert(operation.to_owned(), Bucket::new(per_second, Instant::now()));
    }

    /// Removes every rule and rate limit: from now on every request is forwarded.
    pub fn clear(&self) {
        let mut state = self.state();
        state.rules.clear();
        state.limits.clear();
    }

    /// Every request received so far (since the last [`Proxy::reset_calls`]), in arrival order.
    pub fn calls(&self) -> Vec<Call> {
        self.state().calls.clone()
    }

    /// How many requests of `operation` were received (faulted or not).
    pub fn count(&self, operation: &str) -> usize {
        self.state()
            .calls
            .iter()
            .filter(|c| c.operation == operation)
            .count()
    }

    /// Forgets the recorded calls (rules and rate limits stay).
    pub fn reset_calls(&self) {
        self.state().calls.clear();
    }

    /// How many client connections the proxy has accepted: with keep-alive, sequential calls
    /// of one client share one.
    pub fn connections(&self) -> usize {
        self.state().connections
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Rules, rate limits and the record, shared by the test and the proxy thread.
#[derive(Debug, Default)]
struct State {
    rules: Vec<Armed>,
    limits: HashMap<String, Bucket>,
    calls: Vec<Call>,
    connections: usize,
}

impl State {
    /// Records the request and decides its fault: the first rule whose turn it is, else the
    /// operation's rate limit.
    fn decide(&mut self, operation: &str, table: Option<&str>, now: Instant) -> Option<Fault> {
        let mut fault = None;
        for armed in self.rules.iter_mut() {
            if !armed.rule.matches(operation, table) || armed.applied >= armed.rule.times {
                continue;
            }
            if armed.skipped < armed.rule.skip {
                armed.skipped += 1;
            } else if fault.is_none() {
                armed.applied += 1;
                fault = Some(armed.fault.clone());
            }
        }
        if fault.as_ref().is_none_or(Fault::forwards) {
            if let Some(bucket) = self.limits.get_mut(operation) {
                if !bucket.take(now) {
                    fault = Some(Fault::Throttle);
                }
            }
        }
        self.calls.push(Call {
            operation: operation.to_owned(),
            table: table.map(str::to_owned),
            fault: fault.as_ref().map(Fault::label),
        });
        fault
    }
}

/// A rule with its progress.
#[derive(Debug)]
struct Armed {
    rule: Rule,
    fault: Fault,
    skipped: usize,
    applied: usize,
}

/// A token bucket: `capacity` tokens, refilled continuously at `capacity` a second.
#[derive(Debug)]
struct Bucket {
    capacity: f64,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn new(per_second: u32, now: Instant) -> Bucket {
        Bucket {
            capacity: f64::from(per_second),
            tokens: f64::from(per_second),
            at: now,
        }
    }

    /// Takes a token if there is one.
    fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.capacity).min(self.capacity);
        self.at = self.at.max(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The service's error: hyper closes the connection without a response when it gets one.
#[derive(Debug)]
struct CloseConnection;

impl fmt::Display for CloseConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("testkit proxy: connection closed by a fault")
    }
}

impl std::error::Error for CloseConnection {}

type Body = Full<Bytes>;

async fn accept_loop(listener: TcpListener, forwarder: Arc<Forwarder>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                lock(&forwarder.state).connections += 1;
                tokio::spawn(serve_connection(stream, Arc::clone(&forwarder)));
            }
            // E.g. out of file descriptors: wait for some to be freed instead of spinning.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// Serves one client connection (many requests with keep-alive). A [`Fault::Reset`] sets
/// `SO_LINGER` 0 once hyper has let go of the socket, so closing it sends a RST.
async fn serve_connection(mut stream: TcpStream, forwarder: Arc<Forwarder>) {
    let _ = stream.set_nodelay(true);
    let reset = Arc::new(AtomicBool::new(false));
    let service = {
        let reset = Arc::clone(&reset);
        hyper::service::service_fn(move |request| {
            let forwarder = Arc::clone(&forwarder);
            let reset = Arc::clone(&reset);
            async move { forwarder.handle(request, &reset).await }
        })
    };
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(&mut stream), service)
        .await;
    if reset.load(Ordering::SeqCst) {
        let _ = stream.set_zero_linger();
    }
}

/// Decides each request's fault and forwards what gets through.
#[derive(Debug)]
struct Forwarder {
    /// `http://HOST:PORT` without a trailing slash.
    upstream: String,
    client: Client<HttpConnector, Body>,
    state: Arc<Mutex<State>>,
}

impl Forwarder {
    async fn handle(
        &self,
        request: Request<Incoming>,
        reset: &AtomicBool,
    ) -> Result<Response<Body>, CloseConnection> {
        let (parts, body) = request.into_parts();
        // The whole request is read before any fault: Drop and Reset happen after the client
        // sent it, when it cannot know whether the call was carried out.
        let body = body.collect().await.map_err(|_| CloseConnection)?.to_bytes();
        let operation = operation_of(&parts.headers);
        let table = table_of(&body);
        let fault = lock(&self.state).decide(&operation, table.as_deref(), Instant::now());
        match fault {
            None => {}
            Some(Fault::Drop) => return Err(CloseConnection),
            Some(Fault::Reset) => {
                reset.store(true, Ordering::SeqCst);
                return Err(CloseConnection);
            }
            Some(Fault::Status(500)) => {
                return Ok(aws_error(
                    500,
                    "InternalServerError",
                    "Internal server error (injected by the testkit proxy)",
                ))
            }
            Some(Fault::Status(code)) => {
                return Ok(aws_error(
                    code,
                    "ServiceUnavailable",
                    "Service unavailable (injected by the testkit proxy)",
                ))
            }
            Some(Fault::Throttle) => return Ok(aws_error(400, "ThrottlingException", "Rate exceeded")),
            Some(Fault::Error {
                status,
                error_type,
                message,
            }) => return Ok(aws_error(status, &error_type, &message)),
            Some(Fault::Latency(delay)) => tokio::time::sleep(delay).await,
            Some(Fault::VanishBefore) => {
                if let Some(table) = &table {
                    self.vanish(&parts.headers, table).await;
                }
            }
        }
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        Ok(self
            .send(parts.method, path, &parts.headers, body)
            .await
            .unwrap_or_else(|e| {
                let message = format!("testkit proxy: upstream {}: {e}", self.upstream);
                aws_error(502, "BadGateway", &message)
            }))
    }

    /// Sends a request to the upstream with `headers` (less hop-by-hop ones; hyper sets
    /// Content-Length from the body) and returns its reply, read whole.
    async fn send(
        &self,
        method: hyper::Method,
        path: &str,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Response<Body>, Box<dyn std::error::Error + Send + Sync>> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.upstream))
            .body(Full::new(body))?;
        *request.headers_mut() = end_to_end(headers);
        request.headers_mut().remove(CONTENT_LENGTH);
        let (parts, body) = self.client.request(request).await?.into_parts();
        let body = body.collect().await?.to_bytes();
        let mut response = Response::new(Full::new(body));
        *response.status_mut() = parts.status;
        *response.headers_mut() = end_to_end(&parts.headers);
        response.headers_mut().remove(CONTENT_LENGTH);
        Ok(response)
    }

    /// Deletes `table` on the upstream and waits (up to 5 s) until DescribeTable no longer
    /// finds it: dynalite keeps a table DELETING for a moment. The calls reuse the client's
    /// headers (Authorization, X-Amz-Date): neither server checks signatures, but dynalite
    /// wants them present.
    async fn vanish(&self, headers: &HeaderMap, table: &str) {
        let call = |operation: &str| {
            let mut headers = headers.clone();
            let target = format!("DynamoDB_20120810.{operation}");
            headers.insert(TARGET, HeaderValue::from_str(&target).expect("an ASCII target"));
            let body = serde_json::json!({ "TableName": table }).to_string();
            async move {
                let reply = self
                    .send(hyper::Method::POST, "/", &headers, Bytes::from(body))
                    .await
                    .ok()?;
                let status = reply.status();
                let body = reply.into_body().collect().await.ok()?.to_bytes();
                Some((status, String::from_utf8_lossy(&body).into_owned()))
            }
        };
        match call("DeleteTable").await {
            Some((status, _)) if status.is_success() => {}
            // Not there to begin with, or not deletable (deletion protection): nothing to wait for.
            _ => return,
        }
        let deadline = Instant::now() + VANISH_TIMEOUT;
        while Instant::now() < deadline {
            match call("DescribeTable").await {
                Some((_, body)) if body.contains("ResourceNotFoundException") => return,
                _ => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }
}

/// An error reply as DynamoDB writes it: status, `x-amzn-ErrorType`, and a JSON body with
/// `__type` and `message`.
fn aws_error(status: u16, error_type: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({
        "__type": format!("{ERROR_PREFIX}{error_type}"),
        "message": message,
    })
    .to_string();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(AMZ_JSON));
    if let Ok(value) = HeaderValue::from_str(error_type) {
        headers.insert("x-amzn-errortype", value);
    }
    headers.insert(
        "x-amzn-requestid",
        HeaderValue::from_static("testkit-proxy-injected-fault"),
    );
    response
}

/// `headers` without the hop-by-hop ones (RFC 9110 7.6.1), including any the `Connection`
/// header names.
fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    const HOP_BY_HOP: [&str; 8] = [
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    ];
    let named: Vec<HeaderName> = headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    let mut out = headers.clone();
    for name in HOP_BY_HOP.iter().map(|n| HeaderName::from_static(n)).chain(named) {
        out.remove(name);
    }
    out
}

/// The operation from `X-Amz-Target: DynamoDB_20120810.<Operation>`, or `""`.
fn operation_of(headers: &HeaderMap) -> String {
    let target = headers.get(TARGET).and_then(|v| v.to_str().ok()).unwrap_or("");
    target.rsplit_once('.').map_or(target, |(_, op)| op).to_owned()
}

/// The body's `TableName`, else the table in its `ResourceArn` or `TableArn`
/// (`arn:aws:dynamodb:REGION:ACCOUNT:table/NAME[/stream/...]`).
fn table_of(body: &[u8]) -> Option<String> {
    let json: serde_json::Value = serde_json::from_slice(body).ok()?;
    if let Some(name) = json.get("TableName").and_then(|v| v.as_str()) {
        return Some(name.to_owned());
    }
    ["ResourceArn", "TableArn"]
        .iter()
        .filter_map(|key| json.get(key).and_then(|v| v.as_str()))
        .find_map(table_of_arn)
}

fn table_of_arn(arn: &str) -> Option<String> {
    let (_, rest) = arn.split_once(":table/")?;
    let name = rest.split('/').next()?;
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_from_name_or_arn() {
        assert_eq!(table_of(br#"{"TableName":"t_1"}"#).as_deref(), Some("t_1"));
        let arn = br#"{"ResourceArn":"arn:aws:dynamodb:us-east-1:123456789012:table/t_2"}"#;
        assert_eq!(table_of(arn).as_deref(), Some("t_2"));
        let stream = br#"{"TableArn":"arn:aws:dynamodb:us-east-1:1:table/t_3/stream/2024"}"#;
        assert_eq!(table_of(stream).as_deref(), Some("t_3"));
        assert_eq!(table_of(br#"{"Limit":10}"#), None);
        assert_eq!(table_of(b"not json"), None);
        assert_eq!(table_of_arn("arn:aws:s3:::bucket"), None);
    }

    #[test]
    fn operation_from_target() {
        let mut headers = HeaderMap::new();
        assert_eq!(operation_of(&headers), "");
        headers.insert(TARGET, HeaderValue::from_static("DynamoDB_20120810.ListTables"));
        assert_eq!(operation_of(&headers), "ListTables");
    }

    #[test]
    fn hop_by_hop_headers_are_dropped() {
        let mut headers = HeaderMap::new();
        headers.insert("connection", HeaderValue::from_static("keep-alive, x-private"));
        headers.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        headers.insert("x-private", HeaderValue::from_static("1"));
        headers.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        headers.insert("authorization", HeaderValue::from_static("AWS4-HMAC-SHA256 ..."));
        headers.insert(TARGET, HeaderValue::from_static("DynamoDB_20120810.ListTables"));
        let kept = end_to_end(&headers);
        let mut names: Vec<&str> = kept.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["authorization", TARGET]);
    }

    fn state_with(rules: Vec<(Rule, Fault)>) -> State {
        State {
            rules: rules
                .into_iter()
                .map(|(rule, fault)| Armed {
                    rule,
                    fault,
                    skipped: 0,
                    applied: 0,
                })
                .collect(),
            ..State::default()
        }
    }

    #[test]
    fn rules_skip_then_fault_then_are_spent() {
        let now = Instant::now();
        let mut state = state_with(vec![
            (Rule::op("DescribeTable").skip(1).times(2), Fault::Drop),
            (Rule::any().on_table("b"), Fault::Status(500)),
        ]);
        let faults: Vec<Option<Fault>> = [
            ("DescribeTable", "a"),
            ("ListTables", "a"),
            ("DescribeTable", "a"),
            ("DescribeTable", "b"),
            ("DescribeTable", "b"),
            ("DescribeTable", "a"),
        ]
        .iter()
        .map(|(op, table)| state.decide(op, Some(table), now))
        .collect();
        assert_eq!(
            faults,
            [
                None,
                None,
                Some(Fault::Drop),
                Some(Fault::Drop),
                Some(Fault::Status(500)),
                None
            ]
        );
        let labels: Vec<Option<&str>> = state.calls.iter().map(|c| c.fault.as_deref()).collect();
        assert_eq!(
            labels,
            [None, None, Some("drop"), Some("drop"), Some("status 500"), None]
        );
    }

    #[test]
    fn a_skipping_rule_counts_requests_an_earlier_rule_took() {
        let now = Instant::now();
        let mut state = state_with(vec![
            (Rule::op("CreateTable"), Fault::Reset),
            (Rule::op("CreateTable").skip(1), Fault::Throttle),
        ]);
        assert_eq!(state.decide("CreateTable", None, now), Some(Fault::Reset));
        assert_eq!(state.decide("CreateTable", None, now), Some(Fault::Throttle));
        assert_eq!(state.decide("CreateTable", None, now), None);
    }

    #[test]
    fn bucket_allows_a_burst_then_the_rate() {
        let t0 = Instant::now();
        let mut bucket = Bucket::new(5, t0);
        assert_eq!((0..7).filter(|_| bucket.take(t0)).count(), 5);
        assert!(!bucket.take(t0 + Duration::from_millis(100)));
        assert!(bucket.take(t0 + Duration::from_millis(200)));
        assert!(!bucket.take(t0 + Duration::from_millis(210)));
        // A long pause refills only up to the burst.
        let later = t0 + Duration::from_secs(10);
        assert_eq!((0..7).filter(|_| bucket.take(later)).count(), 5);
    }

    #[test]
    fn rate_limit_applies_to_requests_no_rule_failed() {
        let now = Instant::now();
        let mut state = state_with(vec![(Rule::op("TagResource"), Fault::Status(503))]);
        state.limits.insert("TagResource".into(), Bucket::new(1, now));
        assert_eq!(state.decide("TagResource", None, now), Some(Fault::Status(503)));
        assert_eq!(state.decide("TagResource", None, now), None);
        assert_eq!(state.decide("TagResource", None, now), Some(Fault::Throttle));
        assert_eq!(state.decide("UntagResource", None, now), None);
        assert_eq!(state.calls[2].fault.as_deref(), Some("throttle"));
    }
}
