//! The forwarding: the proxy's accept loop, one hyper connection per client, and
//! [`Forwarder::handle`], which decides each request's fault ([`State::decide_with`]), applies
//! the behaviours a test turned on (each in its own module) and forwards what gets through.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use super::rules::Fault;
use super::state::{lock, State};
use super::upstream::Upstream;
use super::wire::{aws_error, is_dynamodb, operation_of, table_of, Body};
use super::{
    attribute_definitions, create_table_tags, exports, family_role, item_writes, kinesis_delivery,
    kinesis_destinations, s3_buckets, scaling, warm,
};

/// How long [`Fault::VanishBefore`] waits for the upstream to stop describing the table.
const VANISH_TIMEOUT: Duration = Duration::from_secs(5);

/// The service's error: hyper closes the connection without a response when it gets one.
#[derive(Debug)]
struct CloseConnection;

impl fmt::Display for CloseConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("testkit proxy: connection closed by a fault")
    }
}

impl std::error::Error for CloseConnection {}

pub(super) async fn accept_loop(listener: TcpListener, forwarder: Arc<Forwarder>) {
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
pub(super) struct Forwarder {
    upstream: Upstream,
    state: Arc<Mutex<State>>,
    /// Held while counting the upstream's tables for the quota, so concurrent first
    /// CreateTable calls count once.
    counting: tokio::sync::Mutex<()>,
    /// Held by an item write carried into a Kinesis stream from its first read to its record.
    carrying: tokio::sync::Mutex<()>,
}

/// A CreateTable's place under the quota, given back (and the table counted if it was
/// created) when dropped: also when the client goes away before the reply.
struct Reservation<'a> {
    state: &'a Mutex<State>,
    created: bool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        lock(self.state).created(self.created);
    }
}

impl Forwarder {
    /// Forwards to the server at `upstream_endpoint`, under the rules and behaviours in `state`.
    pub(super) fn new(upstream_endpoint: &str, state: Arc<Mutex<State>>) -> Forwarder {
        Forwarder {
            upstream: Upstream::new(upstream_endpoint),
            state,
            counting: tokio::sync::Mutex::new(()),
            carrying: tokio::sync::Mutex::new(()),
        }
    }

    /// One request: its fault, if any; else the behaviours around forwarding it.
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
        if operation == "CreateTable" && lock(&self.state).needs_count() {
            self.count_tables(&parts.headers).await;
        }
        let role = lock(&self.state).role.clone();
        let denied = match role {
            Some(prefix) => {
                family_role::refusal(&self.upstream, &parts.headers, &operation, &body, &prefix).await
            }
            None => None,
        };
        let verdict = lock(&self.state).decide_with(&operation, table.as_deref(), Instant::now(), denied);
        // Built only when reserved: a Reservation dropped gives a place back.
        let mut reservation = verdict.reserved.then(|| Reservation {
            state: &self.state,
            created: false,
        });
        match verdict.fault {
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
            Some(Fault::TableQuota(limit)) => {
                let message =
                    format!("Subscriber limit exceeded: There is a limit of {limit} tables per subscriber");
                return Ok(aws_error(400, "LimitExceededException", &message));
            }
            Some(Fault::Latency(delay)) => tokio::time::sleep(delay).await,
            Some(Fault::VanishBefore) => {
                if let Some(table) = &table {
                    self.vanish(&parts.headers, table).await;
                }
            }
        }
        if !verdict.latency.is_zero() {
            tokio::time::sleep(verdict.latency).await;
        }
        let s3 = if lock(&self.state).s3_as_aws {
            s3_buckets::s3_request(&parts.method, &parts.uri, &parts.headers)
        } else {
            None
        };
        if let Some(request) = &s3 {
            let refusal =
                s3_buckets::owner_refusal(&lock(&self.state), &parts.headers, &parts.method, request);
            if let Some(refusal) = refusal {
                return Ok(refusal);
            }
        }
        if lock(&self.state).resource_policies_enforced && is_dynamodb(&parts.headers, &operation) {
            if let Some(refusal) =
                item_writes::refuse_denied_write(&self.upstream, &parts.headers, &operation, &body).await
            {
                return Ok(refusal);
            }
        }
        if lock(&self.state).warm_never_lowered && is_dynamodb(&parts.headers, "UpdateTable") {
            if let Some(refusal) = warm::refuse_lower_warm(&self.upstream, &parts.headers, &body).await {
                return Ok(refusal);
            }
        }
        let destinations =
            lock(&self.state).kinesis_destinations.is_some() && is_dynamodb(&parts.headers, &operation);
        if destinations && kinesis_destinations::OPERATIONS.contains(&operation.as_str()) {
            let answer =
                kinesis_destinations::answer(&self.upstream, &self.state, &parts.headers, &operation, &body)
                    .await;
            return Ok(answer);
        }
        let carried = if destinations {
            let watched = kinesis_delivery::watch(
                &self.upstream,
                &self.state,
                &self.carrying,
                &parts.headers,
                &operation,
                &body,
            );
            match watched.await {
                Ok(carried) => carried,
                Err(failure) => return Ok(failure.reply()),
            }
        } else {
            None
        };
        let body = if lock(&self.state).attribute_definitions_at_update_table
            && is_dynamodb(&parts.headers, "UpdateTable")
        {
            match attribute_definitions::with_table_definitions(&self.upstream, &parts.headers, body).await {
                Ok(body) => body,
                Err(failure) => return Ok(failure),
            }
        } else {
            body
        };
        let body = exports::request_for_moto(&parts.headers, body);
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        let reply = self
            .upstream
            .send(parts.method, path, &parts.headers, body.clone())
            .await
            .unwrap_or_else(|e| {
                let message = format!("testkit proxy: upstream {}: {e}", self.upstream.endpoint());
                aws_error(502, "BadGateway", &message)
            });
        let success = reply.status().is_success();
        if let Some(reservation) = reservation.as_mut() {
            reservation.created = success;
        }
        drop(reservation);
        let reply = match carried {
            Some(carried) if success => carried.deliver(&self.upstream, &parts.headers, reply).await,
            _ => reply,
        };
        let reply = if operation == "CreateTable" && success && lock(&self.state).tags_at_create_table {
            create_table_tags::apply_create_table_tags(&self.upstream, &parts.headers, &body, reply).await
        } else {
            reply
        };
        let reply = if operation == "DeregisterScalableTarget"
            && success
            && lock(&self.state).deregister_deletes_policies
        {
            scaling::delete_target_policies(&self.upstream, &parts.headers, &body, reply).await
        } else {
            reply
        };
        let reply = exports::reply_as_aws(&self.upstream, &self.state, &operation, reply).await;
        let reply = match &s3 {
            Some(request) if request.object_read => {
                s3_buckets::with_expiration(&self.upstream, request, reply).await
            }
            _ => reply,
        };
        if operation == "DeleteTable" && success {
            match &table {
                Some(table) => lock(&self.state).table_deleted(table),
                None => lock(&self.state).deleted(),
            }
        }
        let warm_updating = lock(&self.state).warm_updating;
        let reply = match (&table, warm_updating) {
            (Some(table), Some(n)) if success && is_dynamodb(&parts.headers, "DescribeTable") => {
                warm::report_updating(&self.state, table, n, reply).await
            }
            _ => reply,
        };
        Ok(reply)
    }

    /// Counts the upstream's tables for the quota (ListTables, every page), unless another
    /// request did meanwhile. If the upstream cannot be listed, the count stays unknown and the
    /// next CreateTable tries again.
    async fn count_tables(&self, headers: &HeaderMap) {
        let _counting = self.counting.lock().await;
        if !lock(&self.state).needs_count() {
            return;
        }
        let mut tables = 0;
        let mut start: Option<String> = None;
        loop {
            let body = match &start {
                Some(name) => serde_json::json!({ "ExclusiveStartTableName": name }),
                None => serde_json::json!({}),
            };
            let Some((status, reply)) = self.upstream.call(headers, "ListTables", &body).await else {
                return;
            };
            let Ok(page) = serde_json::from_str::<serde_json::Value>(&reply) else {
                return;
            };
            if !status.is_success() {
                return;
            }
            tables += page["TableNames"].as_array().map_or(0, Vec::len);
            match page["LastEvaluatedTableName"].as_str() {
                Some(last) => start = Some(last.to_owned()),
                None => break,
            }
        }
        if let Some(quota) = lock(&self.state).quota.as_mut() {
            quota.tables.get_or_insert(tables);
        }
    }

    /// Deletes `table` on the upstream and waits (up to 5 s) until DescribeTable no longer
    /// finds it: dynalite keeps a table DELETING for a moment. The calls reuse the client's
    /// headers ([`Upstream::call`]).
    async fn vanish(&self, headers: &HeaderMap, table: &str) {
        let body = serde_json::json!({ "TableName": table });
        let call = |operation: &'static str| self.upstream.call(headers, operation, &body);
        match call("DeleteTable").await {
            Some((status, _)) if status.is_success() => lock(&self.state).table_deleted(table),
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
