//! A fault-injecting HTTP proxy in front of a local DynamoDB server.
//!
//! moto and dynalite answer every call at once and never fail, so the failures that real AWS
//! produces (dropped and reset connections, 5xx, throttling, a table deleted between two of our
//! calls) cannot be tested against them directly. [`Proxy`] sits between the client under test
//! (the SDK, or the CLI binary through `AWS_ENDPOINT_URL`) and the local server, forwards
//! DynamoDB JSON-protocol requests unchanged, records each of them, and fails the ones that a
//! programmed [`Rule`] or a per-operation rate limit picks.
//!
//! It can also behave as an AWS account does where the local servers do not: the documented
//! per-account rates of the tag APIs ([`Proxy::aws_rates`]), the account's table quota
//! ([`Proxy::table_quota`]), the round trip of a real endpoint
//! ([`Proxy::latency_per_call`]), and the tags given to CreateTable, which dynalite drops
//! ([`Proxy::tags_at_create_table`]; [`crate::LocalDynamo`] puts such a proxy in front of every
//! dynalite it starts), the attribute definitions an UpdateTable does not repeat, which moto
//! drops ([`Proxy::attribute_definitions_at_update_table`]; in front of every moto),
//! Application Auto Scaling's DeregisterScalableTarget deleting the target's scaling
//! policies and scheduled actions, which moto keeps ([`Proxy::deregister_deletes_policies`]; moto serves Application
//! Auto Scaling on the same port, so one proxy carries both APIs), the IAM role
//! `template.yaml` gives one family's functions, which no local server enforces
//! ([`Proxy::family_role`]), and warm throughput that cannot be lowered, which moto lowers
//! ([`Proxy::warm_never_lowered`]; in front of every moto) or that stays UPDATING for a while
//! after a raise, which moto reports ACTIVE at once ([`Proxy::warm_updating_answers`]), and
//! item writes a table's resource-based policy denies, which moto accepts
//! ([`Proxy::resource_policies_enforced`]; in front of every moto).
//!
//! It runs on its own thread with its own tokio runtime, so sync and async tests use it alike,
//! and stops when dropped. HTTP is hyper's on both sides (HTTP/1.1 with keep-alive, as the SDK
//! speaks it): no hand-written parser to get wrong.

use std::collections::{BTreeMap, HashMap};
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

mod item_writes;
mod warm;

use crate::export_layout;

/// The JSON protocol's error type prefix, as DynamoDB writes it in `__type`.
const ERROR_PREFIX: &str = "com.amazonaws.dynamodb.v20120810#";
/// The JSON protocol's content type (DynamoDB's `x-amz-json-1.0`).
const AMZ_JSON: &str = "application/x-amz-json-1.0";
/// The header that names the operation: `DynamoDB_20120810.<Operation>`.
const TARGET: &str = "x-amz-target";
/// The tag `template.yaml`'s IAM conditions check ([`Proxy::family_role`]).
const FAMILY_TAG: &str = "ddb-rollover:family";
/// How long [`Fault::VanishBefore`] waits for the upstream to stop describing the table.
const VANISH_TIMEOUT: Duration = Duration::from_secs(5);

/// DynamoDB's documented per-account rates, in calls per second, for the control-plane APIs
/// that have one (API Reference: "You can call ListTagsOfResource up to 10 times per second,
/// per account"; TagResource and UntagResource "up to five times per second, per account").
/// DescribeExport and ExportTableToPointInTime document no per-second rate (exports are
/// limited by how many run at once), so they are not limited here. [`Proxy::aws_rates`]
/// sets these.
pub const AWS_RATES: [(&str, u32); 3] = [
    ("ListTagsOfResource", 10),
    ("TagResource", 5),
    ("UntagResource", 5),
];

/// DynamoDB's default table quota per account and Region (adjustable in Service Quotas).
pub const DEFAULT_TABLE_QUOTA: usize = 2_500;

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
    /// HTTP 400 `LimitExceededException` "Subscriber limit exceeded: There is a limit of N
    /// tables per subscriber": what CreateTable gets when the account already has its quota of
    /// N tables. [`Proxy::table_quota`] answers with it; a rule may too. Not forwarded.
    TableQuota(usize),
}

impl Fault {
    /// The name recorded in [`Call::fault`]: `drop`, `reset`, `status 503`, `throttle`,
    /// `error LimitExceededException`, `latency 200ms`, `vanish` or `quota`.
    pub fn label(&self) -> String {
        match self {
            Fault::Drop => "drop".into(),
            Fault::Reset => "reset".into(),
            Fault::Status(code) => format!("status {code}"),
            Fault::Throttle => "throttle".into(),
            Fault::Error { error_type, .. } => format!("error {error_type}"),
            Fault::Latency(delay) => format!("latency {delay:?}"),
            Fault::VanishBefore => "vanish".into(),
            Fault::TableQuota(_) => "quota".into(),
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
            counting: tokio::sync::Mutex::new(()),
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

    /// Limits every API AWS rate-limits per account to AWS's documented rate ([`AWS_RATES`]:
    /// ListTagsOfResource 10/s, TagResource and UntagResource 5/s), each with
    /// [`Proxy::rate_limit`].
    pub fn aws_rates(&self) {
        for (operation, per_second) in AWS_RATES {
            self.rate_limit(operation, per_second);
        }
    }

    /// The account's table quota: CreateTable is answered with [`Fault::TableQuota`] (HTTP 400
    /// `LimitExceededException`, "Subscriber limit exceeded: There is a limit of `n` tables per
    /// subscriber", recorded as `"quota"`) when the upstream already has `n` tables, counting
    /// the CreateTable calls in flight.
    ///
    /// The proxy counts the upstream's tables with ListTables (all pages, not recorded) on the
    /// first CreateTable after this call, then keeps the count as CreateTable and DeleteTable
    /// calls pass through it (and [`Fault::VanishBefore`] deletes). Tables created or deleted
    /// on the upstream directly after that first count are not seen: call this again to count
    /// afresh. Applies to requests no rule or rate limit failed; replaces an earlier quota.
    /// [`DEFAULT_TABLE_QUOTA`] is AWS's default.
    pub fn table_quota(&self, n: usize) {
        self.state().quota = Some(TableQuota {
            limit: n,
            tables: None,
            creating: 0,
        });
    }

    /// How many tables the proxy counts on the upstream under [`Proxy::table_quota`]: `None`
    /// without a quota, or before the first CreateTable counted them.
    pub fn table_count(&self) -> Option<usize> {
        self.state().quota.as_ref().and_then(|q| q.tables)
    }

    /// Adds `delay` before every request the proxy forwards (0 to stop): the round trip of a
    /// real endpoint, which the local servers answer without. Requests the proxy fails itself
    /// (rules, rate limits, the quota) are answered at once. Not recorded as a fault; adds to a
    /// [`Fault::Latency`] rule's delay.
    pub fn latency_per_call(&self, delay: Duration) {
        self.state().latency = delay;
    }

    /// Tags given to CreateTable are applied as AWS applies them: after the upstream answers a
    /// CreateTable carrying a non-empty `Tags` with success, the proxy sends TagResource for the
    /// new table's ARN (from the reply's `TableDescription.TableArn`) with those tags, and only
    /// then answers the client. dynalite accepts CreateTable's `Tags` and drops them (its
    /// TagResource and ListTagsOfResource work, also while the table is CREATING); AWS and moto
    /// keep them. The proxy's own TagResource is not recorded, rate-limited or faulted: on AWS
    /// the tags are part of the one CreateTable call. If it fails, the CreateTable reply is
    /// replaced by an HTTP 500 naming the failure (the table stays created without its tags),
    /// so no test passes on a table silently missing them. Not undone by [`Proxy::clear`].
    pub fn tags_at_create_table(&self) {
        self.state().tags_at_create_table = true;
    }

    /// An UpdateTable's `AttributeDefinitions` add to the table's, as on AWS: before forwarding
    /// an UpdateTable (DynamoDB's) that carries a non-empty `AttributeDefinitions`, the proxy
    /// asks the upstream for the table's current ones (DescribeTable) and forwards the
    /// UpdateTable with both: the table's, each replaced by the request's of the same name, then
    /// the request's new ones. AWS keeps a definition for every attribute of the table's key
    /// and of every index's, and an UpdateTable that creates a global index must name that
    /// index's key attributes there (and need name no other); moto replaces the table's
    /// definitions with the request's, so after an index is added DescribeTable no longer gives
    /// the types of the table's key nor of the other indexes' keys. dynalite and DynamoDB Local
    /// keep them.
    ///
    /// The proxy's DescribeTable is not recorded, rate-limited or faulted (it comes after the
    /// UpdateTable's own fault and latency: a [`Fault::VanishBefore`] has deleted the table by
    /// then). If the upstream refuses it with a 4xx (no such table), the UpdateTable is
    /// forwarded unchanged and gets the upstream's own answer; if it gives no answer, a 5xx or
    /// a reply without `Table.AttributeDefinitions`, the UpdateTable is not forwarded and the
    /// client gets an HTTP 500 naming the failure, so no test passes on definitions silently
    /// lost. Not undone by [`Proxy::clear`].
    pub fn attribute_definitions_at_update_table(&self) {
        self.state().attribute_definitions_at_update_table = true;
    }

    /// Lay out each COMPLETED export in S3 as AWS documents it, as moto does not: on the first
    /// DescribeExport that reports it COMPLETED, the proxy writes `manifest-summary.json` and
    /// `manifest-files.json` beside the data file moto wrote (see `export_layout.rs`), and every
    /// DescribeExport of it then names the summary in `ExportManifest`. moto only: the upstream
    /// must serve S3 on the same port. [`crate::LocalDynamo`] turns it on in front of every moto.
    pub fn export_layout(&self) {
        self.state().export_layout = true;
    }

    /// Application Auto Scaling's DeregisterScalableTarget deletes the target's scaling policies
    /// and scheduled actions, as AWS does ("Deregistering a scalable target deletes the scaling
    /// policies and the scheduled actions that are associated with it", Application Auto
    /// Scaling API Reference) and moto 5.2 does not: after the upstream answers a
    /// DeregisterScalableTarget with success, the proxy reads the policies, then the scheduled
    /// actions, on that target (DescribeScalingPolicies / DescribeScheduledActions for its
    /// namespace, resource id and dimension, every page, kept only when both match exactly:
    /// moto matches resource ids by substring) and deletes each (DeleteScalingPolicy /
    /// DeleteScheduledAction), then answers the client. Its own calls are not recorded,
    /// rate-limited or faulted: on AWS they are part of the one call. If one fails, the reply
    /// is replaced by an HTTP 500 naming the failure, so no test passes on objects silently
    /// left behind. Not undone by [`Proxy::clear`].
    pub fn deregister_deletes_policies(&self) {
        self.state().deregister_deletes_policies = true;
    }

    /// Item writes a table's resource-based policy denies to every principal are refused, as
    /// AWS refuses them and moto (which stores the policy) does not: before forwarding a
    /// PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems or PartiQL write, the
    /// proxy reads each table's policy from the upstream (DescribeTable for its ARN, then
    /// GetResourcePolicy; not recorded) and answers HTTP 400 `AccessDeniedException` when a
    /// `Deny` statement for principal `*` covers the write's action (PartiQL writes as
    /// `PartiQLInsert`/`Update`/`Delete`, a transaction's items as PutItem/UpdateItem/DeleteItem).
    /// Policies that deny by condition or to named principals are not modelled. Not undone by
    /// [`Proxy::clear`].
    pub fn resource_policies_enforced(&self) {
        self.state().resource_policies_enforced = true;
    }

    /// Refuses what the IAM role `template.yaml` gives the functions of the family `prefix`
    /// does not allow (both functions' statements together), as AWS would: HTTP 400
    /// `AccessDeniedException`, recorded as `"error AccessDeniedException"`, not forwarded.
    /// - DynamoDB: any action on a table outside `table/{prefix}_*` (ListTables names no
    ///   table); CreateTable unless its `Tags` carry `ddb-rollover:family` = `prefix`
    ///   (`aws:RequestTag`, StringEquals); UpdateTable, UpdateTimeToLive,
    ///   UpdateContinuousBackups, ExportTableToPointInTime and TagResource on a table whose
    ///   family tag names another family (`aws:ResourceTag`, StringEqualsIfExists), and
    ///   TagResource writing another family's tag; DeleteTable unless the table carries our
    ///   family tag (StringEquals); UntagResource (never granted).
    /// - Application Auto Scaling: RegisterScalableTarget and PutScalingPolicy on a table the
    ///   role may not update (Application Auto Scaling checks the caller's permissions on the
    ///   target resource); reads and removals only check the namespace.
    ///
    /// The table's tags are read from the upstream (DescribeTable for its ARN, then
    /// ListTagsOfResource; not recorded) before each such write; a table that does not exist
    /// is left to the upstream's own answer. Rules come first, as with the quota. Not undone by
    /// [`Proxy::clear`].
    pub fn family_role(&self, prefix: &str) {
        self.state().role = Some(prefix.to_owned());
    }

    /// An UpdateTable asking a lower warm throughput than the table (or one of its indexes) has
    /// is refused, as on AWS ("Once increased, warm throughput values can't be decreased"):
    /// before forwarding a DynamoDB UpdateTable that carries `WarmThroughput` (the table's or an
    /// index update's), the proxy reads the table (DescribeTable on the upstream, not recorded)
    /// and answers HTTP 400 `ValidationException` naming the part and dimension instead of
    /// forwarding a lower value. moto takes and keeps a lower one. A table that cannot be read
    /// is left to the upstream's own answer. Not undone by [`Proxy::clear`].
    pub fn warm_never_lowered(&self) {
        self.state().warm_never_lowered = true;
    }

    /// The first `n` DescribeTable answers of each table that report a warm throughput report it
    /// UPDATING (the table's and every index's `WarmThroughput.Status`), as AWS does while a
    /// raise or a pre-warmed creation is carried out; later answers are forwarded as they are.
    /// moto reports ACTIVE at once. Counted per table from this call; the proxy's own reads
    /// for its other behaviours are not counted or changed. Not undone by [`Proxy::clear`].
    pub fn warm_updating_answers(&self, n: usize) {
        let mut state = self.state();
        state.warm_updating = Some(n);
        state.warm_answers.clear();
    }

    /// Records no calls from now on: for a proxy that only changes behaviour (the one
    /// [`crate::LocalDynamo`] puts in front of dynalite), whose record nobody reads and which
    /// would otherwise grow with every call of a long test.
    pub(crate) fn unrecorded(&self) {
        let mut state = self.state();
        state.unrecorded = true;
        state.calls.clear();
    }

    /// Removes every rule, rate limit, table quota and per-call latency: from now on every
    /// request is forwarded at once.
    pub fn clear(&self) {
        let mut state = self.state();
        state.rules.clear();
        state.limits.clear();
        state.quota = None;
        state.latency = Duration::ZERO;
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

    /// How many requests of each operation were received (faulted or not), by operation name.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for call in &self.state().calls {
            *counts.entry(call.operation.clone()).or_insert(0) += 1;
        }
        counts
    }

    /// How many requests of each operation got a fault (a rule's, a rate limit's or the
    /// quota's), by operation name.
    pub fn faulted_counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for call in self.state().calls.iter().filter(|c| c.fault.is_some()) {
            *counts.entry(call.operation.clone()).or_insert(0) += 1;
        }
        counts
    }

    /// Forgets the recorded calls (rules, rate limits, the quota and latency stay).
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

/// Rules, rate limits, the quota, the latency and the record, shared by the test and the
/// proxy thread.
#[derive(Debug, Default)]
struct State {
    rules: Vec<Armed>,
    limits: HashMap<String, Bucket>,
    quota: Option<TableQuota>,
    latency: Duration,
    /// Apply a successful CreateTable's `Tags` with TagResource before answering.
    tags_at_create_table: bool,
    /// Add the table's current attribute definitions to an UpdateTable's before forwarding it.
    attribute_definitions_at_update_table: bool,
    /// Delete the policies of a target a DeregisterScalableTarget removed before answering.
    deregister_deletes_policies: bool,
    /// Lay out COMPLETED exports as AWS does ([`Proxy::export_layout`]).
    export_layout: bool,
    /// The exports laid out so far: ARN to their folder in S3.
    exports: HashMap<String, String>,
    /// When the proxy first saw each export (milliseconds since the epoch): its `ExportTime`
    /// and its summary's `exportTime`, which moto leaves out and AWS gives (the request's time
    /// when it names none).
    export_times: HashMap<String, i64>,
    /// The family whose IAM role the proxy enforces ([`Proxy::family_role`]).
    role: Option<String>,
    /// Refuse an UpdateTable that lowers a warm throughput ([`Proxy::warm_never_lowered`]).
    warm_never_lowered: bool,
    /// Report warm throughput UPDATING in this many DescribeTable answers per table
    /// ([`Proxy::warm_updating_answers`]), and the answers given so far by table.
    warm_updating: Option<usize>,
    warm_answers: HashMap<String, usize>,
    /// Refuse item writes a table's resource-based policy denies
    /// ([`Proxy::resource_policies_enforced`]).
    resource_policies_enforced: bool,
    /// Record nothing in `calls` (a proxy nobody asks what it saw).
    unrecorded: bool,
    calls: Vec<Call>,
    connections: usize,
}

/// The account's table quota and the proxy's count of the upstream's tables.
#[derive(Debug)]
struct TableQuota {
    limit: usize,
    /// Tables on the upstream; `None` until counted.
    tables: Option<usize>,
    /// CreateTable calls forwarded and not yet answered: each holds a place under the quota.
    creating: usize,
}

/// What the proxy does with one request.
#[derive(Debug, Default, PartialEq, Eq)]
struct Verdict {
    fault: Option<Fault>,
    /// A CreateTable that holds a place under the quota until its reply: give it back with
    /// [`State::created`].
    reserved: bool,
    /// Added before forwarding ([`Proxy::latency_per_call`]).
    latency: Duration,
}

impl State {
    /// Records the request and decides its fault: the first rule whose turn it is, else the
    /// operation's rate limit, else (CreateTable) the table quota.
    #[cfg(test)]
    fn decide(&mut self, operation: &str, table: Option<&str>, now: Instant) -> Verdict {
        self.decide_with(operation, table, now, None)
    }

    /// [`State::decide`] for a request the role refuses (`denied`: why) unless a rule faults
    /// it first.
    fn decide_with(
        &mut self,
        operation: &str,
        table: Option<&str>,
        now: Instant,
        denied: Option<String>,
    ) -> Verdict {
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
        if let (None, Some(message)) = (&fault, denied) {
            fault = Some(Fault::Error {
                status: 400,
                error_type: "AccessDeniedException".to_owned(),
                message,
            });
        }
        if fault.as_ref().is_none_or(Fault::forwards) {
            if let Some(bucket) = self.limits.get_mut(operation) {
                if !bucket.take(now) {
                    fault = Some(Fault::Throttle);
                }
            }
        }
        let mut reserved = false;
        if operation == "CreateTable" && fault.as_ref().is_none_or(Fault::forwards) {
            if let Some(quota) = self.quota.as_mut() {
                // Not counted (the upstream could not be listed): nothing to hold against.
                let used = quota.tables.map(|tables| tables + quota.creating);
                if used.is_some_and(|used| used >= quota.limit) {
                    fault = Some(Fault::TableQuota(quota.limit));
                } else {
                    quota.creating += 1;
                    reserved = true;
                }
            }
        }
        if !self.unrecorded {
            self.calls.push(Call {
                operation: operation.to_owned(),
                table: table.map(str::to_owned),
                fault: fault.as_ref().map(Fault::label),
            });
        }
        let forwarded = fault.as_ref().is_none_or(Fault::forwards);
        Verdict {
            fault,
            reserved,
            latency: if forwarded { self.latency } else { Duration::ZERO },
        }
    }

    /// A reserved CreateTable was answered: the table now counts if it was created.
    fn created(&mut self, success: bool) {
        if let Some(quota) = self.quota.as_mut() {
            quota.creating = quota.creating.saturating_sub(1);
            if success {
                quota.tables = quota.tables.map(|t| t + 1);
            }
        }
    }

    /// A DeleteTable succeeded on the upstream.
    fn deleted(&mut self) {
        if let Some(quota) = self.quota.as_mut() {
            quota.tables = quota.tables.map(|t| t.saturating_sub(1));
        }
    }

    /// Whether the quota is set and its count is still to be made.
    fn needs_count(&self) -> bool {
        self.quota.as_ref().is_some_and(|q| q.tables.is_none())
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
    /// Held while counting the upstream's tables for the quota, so concurrent first
    /// CreateTable calls count once.
    counting: tokio::sync::Mutex<()>,
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
            Some(prefix) => self.authorize(&parts.headers, &operation, &body, &prefix).await,
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
        if lock(&self.state).resource_policies_enforced && is_dynamodb(&parts.headers, &operation) {
            if let Some(refusal) = self.refuse_denied_write(&parts.headers, &operation, &body).await {
                return Ok(refusal);
            }
        }
        if lock(&self.state).warm_never_lowered && is_dynamodb(&parts.headers, "UpdateTable") {
            if let Some(refusal) = self.refuse_lower_warm(&parts.headers, &body).await {
                return Ok(refusal);
            }
        }
        let body = if lock(&self.state).attribute_definitions_at_update_table
            && is_dynamodb(&parts.headers, "UpdateTable")
        {
            match self.keep_attribute_definitions(&parts.headers, body).await {
                Ok(body) => body,
                Err(failure) => return Ok(failure),
            }
        } else {
            body
        };
        // moto's export ARNs are `…:table/{table ARN}/import/{id}`; AWS's `{table ARN}/export/{id}`:
        // the client sees AWS's, moto gets its own back.
        let body = if is_dynamodb(&parts.headers, "DescribeExport") {
            export_layout::rewrite_export_arns(&body, export_layout::moto_export_arn)
        } else {
            body
        };
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        let reply = self
            .send(parts.method, path, &parts.headers, body.clone())
            .await
            .unwrap_or_else(|e| {
                let message = format!("testkit proxy: upstream {}: {e}", self.upstream);
                aws_error(502, "BadGateway", &message)
            });
        let success = reply.status().is_success();
        if let Some(reservation) = reservation.as_mut() {
            reservation.created = success;
        }
        drop(reservation);
        let reply = if operation == "CreateTable" && success && lock(&self.state).tags_at_create_table {
            self.apply_create_table_tags(&parts.headers, &body, reply).await
        } else {
            reply
        };
        let reply = if operation == "DeregisterScalableTarget"
            && success
            && lock(&self.state).deregister_deletes_policies
        {
            self.delete_target_policies(&parts.headers, &body, reply).await
        } else {
            reply
        };
        let reply = if operation == "DescribeExport" && success && lock(&self.state).export_layout {
            self.lay_out_export(reply).await
        } else {
            reply
        };
        let reply =
            if ["DescribeExport", "ExportTableToPointInTime", "ListExports"].contains(&operation.as_str()) {
                let (parts, body) = reply.into_parts();
                let bytes = match body.collect().await {
                    Ok(collected) => collected.to_bytes(),
                    Err(never) => match never {},
                };
                let rewritten = export_layout::rewrite_export_arns(&bytes, export_layout::aws_export_arn);
                let stamped = self.stamp_export_time(rewritten);
                Response::from_parts(parts, Full::new(stamped))
            } else {
                reply
            };
        if operation == "DeleteTable" && success {
            lock(&self.state).deleted();
        }
        let warm_updating = lock(&self.state).warm_updating;
        let reply = match (&table, warm_updating) {
            (Some(table), Some(n)) if success && is_dynamodb(&parts.headers, "DescribeTable") => {
                self.report_warm_updating(table, n, reply).await
            }
            _ => reply,
        };
        Ok(reply)
    }

    /// AWS's refusal of an item write that a table's resource-based policy denies to everyone.
    /// See [`Proxy::resource_policies_enforced`].
    async fn refuse_denied_write(
        &self,
        headers: &HeaderMap,
        operation: &str,
        request: &Bytes,
    ) -> Option<Response<Body>> {
        let request = serde_json::from_slice::<serde_json::Value>(request).ok()?;
        for (table, action) in item_writes::touched(operation, &request) {
            let (status, described) = self
                .call_upstream(
                    headers,
                    "DescribeTable",
                    &serde_json::json!({ "TableName": table }),
                )
                .await?;
            if !status.is_success() {
                // No such table: the upstream answers for it.
                continue;
            }
            let described: serde_json::Value = serde_json::from_str(&described).ok()?;
            let arn = described["Table"]["TableArn"].as_str()?.to_owned();
            let (status, policy) = self
                .call_upstream(
                    headers,
                    "GetResourcePolicy",
                    &serde_json::json!({ "ResourceArn": arn }),
                )
                .await?;
            if !status.is_success() {
                continue;
            }
            let policy: serde_json::Value = serde_json::from_str(&policy).ok()?;
            let document = policy["Policy"].as_str().unwrap_or_default();
            if ddb_rollover::table::seal::denies_to_everyone(document, action) {
                let message = format!(
                    "User: arn:aws:iam::123456789012:user/testing is not authorized to perform: {action} on \
                     resource: {arn} with an explicit deny in a resource-based policy (emulated by the testkit proxy)"
                );
                return Some(aws_error(400, "AccessDeniedException", &message));
            }
        }
        None
    }

    /// AWS's refusal of an UpdateTable that lowers a warm throughput, if `request` is one. See
    /// [`Proxy::warm_never_lowered`].
    async fn refuse_lower_warm(&self, headers: &HeaderMap, request: &Bytes) -> Option<Response<Body>> {
        let update = serde_json::from_slice::<serde_json::Value>(request).ok()?;
        let asks_warm = update.get("WarmThroughput").is_some()
            || update["GlobalSecondaryIndexUpdates"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|u| u["Update"].get("WarmThroughput").is_some());
        if !asks_warm {
            return None;
        }
        let describe = serde_json::json!({ "TableName": update.get("TableName")? });
        let (status, reply) = self.call_upstream(headers, "DescribeTable", &describe).await?;
        if !status.is_success() {
            return None;
        }
        let described = serde_json::from_str::<serde_json::Value>(&reply).ok()?;
        let why = warm::lowered(&update, &described)?;
        Some(aws_error(400, "ValidationException", &why))
    }

    /// `reply` (a successful DescribeTable of `table`) with its warm throughput UPDATING while
    /// the table has had fewer than `n` such answers. See [`Proxy::warm_updating_answers`].
    async fn report_warm_updating(&self, table: &str, n: usize, reply: Response<Body>) -> Response<Body> {
        if lock(&self.state).warm_answers.get(table).copied().unwrap_or(0) >= n {
            return reply;
        }
        let (parts, body) = reply.into_parts();
        let body = match body.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(never) => match never {},
        };
        let Ok(mut described) = serde_json::from_slice::<serde_json::Value>(&body) else {
            return Response::from_parts(parts, Full::new(body));
        };
        if !warm::mark_updating(&mut described) {
            return Response::from_parts(parts, Full::new(body));
        }
        *lock(&self.state)
            .warm_answers
            .entry(table.to_owned())
            .or_insert(0) += 1;
        Response::from_parts(parts, Full::new(Bytes::from(described.to_string())))
    }

    /// Why the role of the family `prefix` refuses this request, if it does (see
    /// [`Proxy::family_role`]).
    async fn authorize(
        &self,
        headers: &HeaderMap,
        operation: &str,
        body: &Bytes,
        prefix: &str,
    ) -> Option<String> {
        let service = headers
            .get(TARGET)
            .and_then(|v| v.to_str().ok())
            .and_then(|t| t.split_once('.'))
            .map_or("", |(service, _)| service);
        let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        let table = match service {
            "AnyScaleFrontendService" => match operation {
                "RegisterScalableTarget" | "PutScalingPolicy" => json["ResourceId"]
                    .as_str()
                    .and_then(|id| id.strip_prefix("table/"))
                    .map(|rest| rest.split('/').next().unwrap_or(rest).to_owned()),
                _ => None,
            },
            service if service.starts_with("DynamoDB_") => table_of(body),
            _ => None,
        };
        let table = table?;
        let action = match service {
            "AnyScaleFrontendService" => format!("application-autoscaling:{operation}"),
            _ => format!("dynamodb:{operation}"),
        };
        let deny = |why: String| {
            Some(format!(
                "User: arn:aws:sts::123456789012:assumed-role/ddb-rollover-{prefix}/function is not authorized to \
                 perform: {action} on resource: table/{table} because no identity-based policy allows the {action} \
                 action ({why}; emulated by the testkit proxy)"
            ))
        };
        if !table.starts_with(&format!("{prefix}_")) {
            return deny(format!("outside table/{prefix}_*"));
        }
        let family_in = |tags: &serde_json::Value| {
            tags.as_array()
                .into_iter()
                .flatten()
                .find(|tag| tag["Key"] == FAMILY_TAG)
                .and_then(|tag| tag["Value"].as_str().map(str::to_owned))
        };
        match operation {
            "CreateTable" => match family_in(&json["Tags"]) {
                Some(family) if family == prefix => None,
                other => deny(format!("aws:RequestTag/{FAMILY_TAG} is {other:?}")),
            },
            "UntagResource" => deny("UntagResource is not granted".to_owned()),
            "UpdateTable"
            | "UpdateTimeToLive"
            | "UpdateContinuousBackups"
            | "ExportTableToPointInTime"
            | "TagResource"
            | "DeleteTable"
            | "RegisterScalableTarget"
            | "PutScalingPolicy" => {
                if operation == "TagResource" {
                    if let Some(family) = family_in(&json["Tags"]).filter(|f| f != prefix) {
                        return deny(format!("aws:RequestTag/{FAMILY_TAG} is {family:?}"));
                    }
                }
                // A table that does not exist: the upstream answers for it.
                let tags = self.upstream_tags(headers, &table).await?;
                let family = tags.get(FAMILY_TAG);
                match (operation, family) {
                    ("DeleteTable", Some(family)) if family == prefix => None,
                    ("DeleteTable", other) => deny(format!("aws:ResourceTag/{FAMILY_TAG} is {other:?}")),
                    (_, Some(family)) if family != prefix => {
                        deny(format!("aws:ResourceTag/{FAMILY_TAG} is {family:?}"))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The tags of `table` on the upstream (DescribeTable for its ARN, ListTagsOfResource every
    /// page), with DynamoDB requests however the client's request was signed; `None` when the
    /// table does not exist or cannot be read.
    async fn upstream_tags(&self, headers: &HeaderMap, table: &str) -> Option<BTreeMap<String, String>> {
        let mut headers = headers.clone();
        if let Some(auth) = headers
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
        {
            // moto picks the service from the signature's credential scope.
            let auth = auth.replace("/application-autoscaling/aws4_request", "/dynamodb/aws4_request");
            if let Ok(value) = HeaderValue::from_str(&auth) {
                headers.insert(hyper::header::AUTHORIZATION, value);
            }
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(AMZ_JSON));
        let described = self
            .call_upstream(
                &headers,
                "DescribeTable",
                &serde_json::json!({ "TableName": table }),
            )
            .await?;
        if !described.0.is_success() {
            return None;
        }
        let described: serde_json::Value = serde_json::from_str(&described.1).ok()?;
        let arn = described["Table"]["TableArn"].as_str()?.to_owned();
        let mut tags = BTreeMap::new();
        let mut token: Option<String> = None;
        loop {
            let mut body = serde_json::json!({ "ResourceArn": arn });
            if let Some(token) = &token {
                body["NextToken"] = serde_json::Value::from(token.clone());
            }
            let (status, page) = self.call_upstream(&headers, "ListTagsOfResource", &body).await?;
            if !status.is_success() {
                return None;
            }
            let page: serde_json::Value = serde_json::from_str(&page).ok()?;
            for tag in page["Tags"].as_array().into_iter().flatten() {
                if let (Some(key), Some(value)) = (tag["Key"].as_str(), tag["Value"].as_str()) {
                    tags.insert(key.to_owned(), value.to_owned());
                }
            }
            match page["NextToken"].as_str() {
                Some(next) if !next.is_empty() => token = Some(next.to_owned()),
                _ => return Some(tags),
            }
        }
    }

    /// What AWS's DeregisterScalableTarget does and moto's does not: deletes every scaling
    /// policy and every scheduled action on the target (DescribeScalingPolicies, then
    /// DeleteScalingPolicy each; DescribeScheduledActions, then DeleteScheduledAction each; on
    /// the upstream, not recorded) before the client gets `reply`. See
    /// [`Proxy::deregister_deletes_policies`].
    async fn delete_target_policies(
        &self,
        headers: &HeaderMap,
        request: &Bytes,
        reply: Response<Body>,
    ) -> Response<Body> {
        let Ok(request) = serde_json::from_slice::<serde_json::Value>(request) else {
            return reply;
        };
        let field = |name: &str| request.get(name).and_then(|v| v.as_str()).map(str::to_owned);
        let (Some(namespace), Some(resource), Some(dimension)) = (
            field("ServiceNamespace"),
            field("ResourceId"),
            field("ScalableDimension"),
        ) else {
            return reply;
        };
        let target = TargetOf {
            namespace,
            resource,
            dimension,
        };
        let mut failure = None;
        for attached in [Attached::POLICIES, Attached::SCHEDULED_ACTIONS] {
            failure = self.delete_attached(headers, &target, attached).await;
            if failure.is_some() {
                break;
            }
        }
        match failure {
            None => reply,
            Some(failure) => aws_error(
                500,
                "InternalServerError",
                &format!(
                    "testkit proxy: DeregisterScalableTarget {} {} succeeded but what was attached to it could not be deleted: {failure}",
                    target.resource, target.dimension
                ),
            ),
        }
    }

    /// Deletes every `attached` object on `target` on the upstream; the failure, if any.
    async fn delete_attached(
        &self,
        headers: &HeaderMap,
        target: &TargetOf,
        attached: Attached,
    ) -> Option<String> {
        let operation = |operation: &str| {
            let service = headers
                .get(TARGET)
                .and_then(|v| v.to_str().ok())
                .and_then(|t| t.rsplit_once('.'))
                .map_or("AnyScaleFrontendService", |(service, _)| service);
            format!("{service}.{operation}")
        };
        let mut names = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut body = serde_json::json!({
                "ServiceNamespace": target.namespace,
                "ResourceId": target.resource,
                "ScalableDimension": target.dimension,
            });
            if let Some(token) = &token {
                body["NextToken"] = serde_json::Value::from(token.clone());
            }
            let describe = attached.describe;
            let page = match self.call_upstream_as(headers, &operation(describe), &body).await {
                Some((status, page)) if status.is_success() => page,
                Some((status, page)) => return Some(format!("{describe}: HTTP {status}: {page}")),
                None => return Some(format!("{describe}: no answer")),
            };
            let Ok(page) = serde_json::from_str::<serde_json::Value>(&page) else {
                return Some(format!("{describe}: not JSON: {page}"));
            };
            // Kept only when both match exactly: moto matches resource ids by substring.
            for object in page[attached.list].as_array().into_iter().flatten() {
                if object["ResourceId"] == target.resource.as_str()
                    && object["ScalableDimension"] == target.dimension.as_str()
                {
                    if let Some(name) = object[attached.name].as_str() {
                        names.push(name.to_owned());
                    }
                }
            }
            match page["NextToken"].as_str() {
                Some(next) if !next.is_empty() => token = Some(next.to_owned()),
                _ => break,
            }
        }
        for name in &names {
            let mut body = serde_json::json!({
                "ServiceNamespace": target.namespace,
                "ResourceId": target.resource,
                "ScalableDimension": target.dimension,
            });
            body[attached.name] = serde_json::Value::from(name.clone());
            let delete = attached.delete;
            match self.call_upstream_as(headers, &operation(delete), &body).await {
                Some((status, _)) if status.is_success() => {}
                Some((status, answer)) => return Some(format!("{delete} {name}: HTTP {status}: {answer}")),
                None => return Some(format!("{delete} {name}: no answer")),
            }
        }
        None
    }

    /// What AWS does with CreateTable's `Tags` and dynalite does not: applies them to the table
    /// just created (TagResource on the upstream, not recorded) before the client gets `reply`.
    /// See [`Proxy::tags_at_create_table`].
    async fn apply_create_table_tags(
        &self,
        headers: &HeaderMap,
        request: &Bytes,
        reply: Response<Body>,
    ) -> Response<Body> {
        let tags = serde_json::from_slice::<serde_json::Value>(request)
            .ok()
            .and_then(|body| body.get("Tags").cloned())
            .filter(|tags| tags.as_array().is_some_and(|tags| !tags.is_empty()));
        let Some(tags) = tags else {
            return reply;
        };
        let (parts, body) = reply.into_parts();
        let body = match body.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(never) => match never {},
        };
        let arn = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|reply| reply["TableDescription"]["TableArn"].as_str().map(str::to_owned));
        let failure = match arn {
            None => Some("its reply names no TableDescription.TableArn".to_owned()),
            Some(arn) => {
                let request = serde_json::json!({ "ResourceArn": arn, "Tags": tags });
                match self.call_upstream(headers, "TagResource", &request).await {
                    Some((status, _)) if status.is_success() => None,
                    Some((status, reply)) => Some(format!("TagResource {arn}: HTTP {status}: {reply}")),
                    None => Some(format!("TagResource {arn}: no answer")),
                }
            }
        };
        match failure {
            None => Response::from_parts(parts, Full::new(body)),
            Some(failure) => aws_error(
                500,
                "InternalServerError",
                &format!("testkit proxy: CreateTable succeeded but its Tags could not be applied: {failure}"),
            ),
        }
    }

    /// What AWS does with an UpdateTable's `AttributeDefinitions` and moto does not: adds them
    /// to the table's current ones (DescribeTable on the upstream, not recorded). Returns the
    /// body to forward, or the reply to give the client instead. See
    /// [`Proxy::attribute_definitions_at_update_table`].
    async fn keep_attribute_definitions(
        &self,
        headers: &HeaderMap,
        request: Bytes,
    ) -> Result<Bytes, Response<Body>> {
        let Ok(mut update) = serde_json::from_slice::<serde_json::Value>(&request) else {
            return Ok(request);
        };
        let requested = match update.get("AttributeDefinitions").and_then(|d| d.as_array()) {
            Some(requested) if !requested.is_empty() => requested.clone(),
            _ => return Ok(request),
        };
        let Some(table) = update.get("TableName").cloned() else {
            return Ok(request);
        };
        let failure = |why: String| {
            let message = format!(
                "testkit proxy: UpdateTable not forwarded: the table's attribute definitions could not be read: {why}"
            );
            aws_error(500, "InternalServerError", &message)
        };
        let describe = serde_json::json!({ "TableName": table });
        let current = match self.call_upstream(headers, "DescribeTable", &describe).await {
            None => return Err(failure("DescribeTable: no answer".into())),
            // No such table (or no table name it accepts): the upstream answers the UpdateTable.
            Some((status, _)) if status.is_client_error() => return Ok(request),
            Some((status, reply)) if !status.is_success() => {
                return Err(failure(format!("DescribeTable: HTTP {status}: {reply}")))
            }
            Some((_, reply)) => {
                let described = serde_json::from_str::<serde_json::Value>(&reply).ok();
                match described
                    .as_ref()
                    .and_then(|d| d["Table"]["AttributeDefinitions"].as_array())
                {
                    Some(current) => current.clone(),
                    None => {
                        return Err(failure(format!(
                            "DescribeTable: no Table.AttributeDefinitions in {reply}"
                        )))
                    }
                }
            }
        };
        update["AttributeDefinitions"] =
            serde_json::Value::Array(merge_attribute_definitions(&current, &requested));
        Ok(Bytes::from(update.to_string()))
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
            let Some((status, reply)) = self.call_upstream(headers, "ListTables", &body).await else {
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

    /// One call of the proxy's own to the upstream (not recorded), with the client's headers
    /// (Authorization, X-Amz-Date: no server checks signatures, but dynalite wants them present,
    /// and DynamoDB Local keeps one database per access key and Region) and `operation`'s
    /// target. Returns the reply's status and body, or `None` if the upstream did not answer.
    async fn call_upstream(
        &self,
        headers: &HeaderMap,
        operation: &str,
        body: &serde_json::Value,
    ) -> Option<(StatusCode, String)> {
        self.call_upstream_as(headers, &format!("DynamoDB_20120810.{operation}"), body)
            .await
    }

    /// [`Forwarder::call_upstream`] with the whole `X-Amz-Target` (another service's, such as
    /// `AnyScaleFrontendService.DeleteScalingPolicy`): the client's other headers, its content
    /// type and signature included, tell the server which service it is.
    async fn call_upstream_as(
        &self,
        headers: &HeaderMap,
        target: &str,
        body: &serde_json::Value,
    ) -> Option<(StatusCode, String)> {
        let mut headers = headers.clone();
        headers.insert(TARGET, HeaderValue::from_str(target).ok()?);
        let reply = self
            .send(hyper::Method::POST, "/", &headers, Bytes::from(body.to_string()))
            .await
            .ok()?;
        let status = reply.status();
        let body = reply.into_body().collect().await.ok()?.to_bytes();
        Some((status, String::from_utf8_lossy(&body).into_owned()))
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
        let head = method == hyper::Method::HEAD;
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
        // A HEAD reply has no body, and its Content-Length is the object's size (S3's
        // HeadObject): kept. Any other is set again by hyper from the body.
        if !head {
            response.headers_mut().remove(CONTENT_LENGTH);
        }
        Ok(response)
    }

    /// An export's `ExportTime` where moto gives none: when the proxy first saw it, as AWS
    /// stamps an export that names no time with the time of its request.
    fn stamp_export_time(&self, bytes: Bytes) -> Bytes {
        let Ok(mut answer) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return bytes;
        };
        let description = &mut answer["ExportDescription"];
        let Some(arn) = description["ExportArn"].as_str().map(str::to_owned) else {
            return bytes;
        };
        if description.get("ExportTime").is_some() {
            return bytes;
        }
        let at = self.export_time(&arn);
        description["ExportTime"] = (at.timestamp_millis() as f64 / 1000.0).into();
        Bytes::from(answer.to_string())
    }

    /// The export's `ExportTime` as the proxy gives it: when it first saw the export (AWS ARN).
    fn export_time(&self, arn: &str) -> chrono::DateTime<chrono::Utc> {
        let now = chrono::Utc::now().timestamp_millis();
        let millis = *lock(&self.state)
            .export_times
            .entry(arn.to_owned())
            .or_insert(now);
        chrono::DateTime::from_timestamp_millis(millis).unwrap_or_default()
    }

    /// [`Proxy::export_layout`]: the manifests of a COMPLETED export written once, and its
    /// `ExportManifest` added to the reply. A reply it cannot read is passed on as it is.
    async fn lay_out_export(&self, reply: Response<Body>) -> Response<Body> {
        let (parts, body) = reply.into_parts();
        // The body is already whole (Full): collecting it cannot fail.
        let bytes = match body.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(never) => match never {},
        };
        let pass_on = |bytes: Bytes| Response::from_parts(parts.clone(), Full::new(bytes));
        let Ok(mut answer) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return pass_on(bytes);
        };
        let description = &answer["ExportDescription"];
        let text = |field: &str| description[field].as_str().map(str::to_owned);
        let (Some(arn), Some(bucket)) = (text("ExportArn"), text("S3Bucket")) else {
            return pass_on(bytes);
        };
        if text("ExportStatus").as_deref() != Some("COMPLETED") || description.get("ExportManifest").is_some()
        {
            return pass_on(bytes);
        }
        let known = lock(&self.state).exports.get(&arn).cloned();
        let directory = match known {
            Some(directory) => directory,
            None => {
                let prefix = text("S3Prefix");
                let items = description["ItemCount"].as_u64().unwrap_or(0);
                match self
                    .write_manifests(
                        &arn,
                        &export_layout::aws_export_arn(&arn),
                        &bucket,
                        prefix.as_deref(),
                        items,
                    )
                    .await
                {
                    Some(directory) => directory,
                    None => return pass_on(bytes),
                }
            }
        };
        answer["ExportDescription"]["ExportManifest"] = export_layout::manifest_key(&directory).into();
        pass_on(Bytes::from(answer.to_string()))
    }

    /// Finds the data file moto wrote for the export (under its prefix, in a folder no earlier
    /// export claimed) and writes the manifests beside it; returns the folder.
    async fn write_manifests(
        &self,
        arn: &str,
        aws_arn: &str,
        bucket: &str,
        prefix: Option<&str>,
        items: u64,
    ) -> Option<String> {
        let listed = format!("{}/AWSDynamoDB/", prefix.unwrap_or(""));
        let path = format!(
            "/{}?list-type=2&prefix={}",
            crate::percent_encode(bucket),
            crate::percent_encode(&listed)
        );
        let reply = self
            .send(hyper::Method::GET, &path, &HeaderMap::new(), Bytes::new())
            .await
            .ok()?;
        let listing = reply.into_body().collect().await.ok()?.to_bytes();
        let listing = String::from_utf8_lossy(&listing);
        let keys = crate::xml_elements(&listing, "Key");
        let etags = crate::xml_elements(&listing, "ETag");
        let claimed: Vec<String> = lock(&self.state).exports.values().cloned().collect();
        let data: Vec<(String, String)> = keys
            .into_iter()
            .zip(etags)
            .filter(|(key, _)| {
                export_layout::export_directory(key).is_some_and(|d| !claimed.iter().any(|c| c == d))
            })
            .collect();
        let directory = export_layout::export_directory(&data.first()?.0)?.to_string();
        // moto writes one data file per export, holding every item.
        let files: Vec<(String, String, u64)> = data
            .into_iter()
            .filter(|(key, _)| export_layout::export_directory(key) == Some(directory.as_str()))
            .enumerate()
            .map(|(n, (key, etag))| (key, etag, if n == 0 { items } else { 0 }))
            .collect();
        let export_time = self.export_time(aws_arn);
        for (key, body) in export_layout::manifests(aws_arn, bucket, prefix, &directory, &files, export_time)
        {
            let path = format!(
                "/{}/{}",
                crate::percent_encode(bucket),
                crate::percent_encode(&key).replace("%2F", "/")
            );
            let put = self
                .send(hyper::Method::PUT, &path, &HeaderMap::new(), Bytes::from(body))
                .await
                .ok()?;
            if !put.status().is_success() {
                return None;
            }
        }
        lock(&self.state)
            .exports
            .insert(arn.to_string(), directory.clone());
        Some(directory)
    }

    /// Deletes `table` on the upstream and waits (up to 5 s) until DescribeTable no longer
    /// finds it: dynalite keeps a table DELETING for a moment. The calls reuse the client's
    /// headers ([`Forwarder::call_upstream`]).
    async fn vanish(&self, headers: &HeaderMap, table: &str) {
        let body = serde_json::json!({ "TableName": table });
        let call = |operation: &'static str| self.call_upstream(headers, operation, &body);
        match call("DeleteTable").await {
            Some((status, _)) if status.is_success() => lock(&self.state).deleted(),
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

/// Whether the request is DynamoDB's `operation` (`X-Amz-Target: DynamoDB_20120810.<operation>`),
/// not another service's of the same name on the same endpoint (moto serves them all on one).
fn is_dynamodb(headers: &HeaderMap, operation: &str) -> bool {
    headers
        .get(TARGET)
        .and_then(|v| v.to_str().ok())
        .and_then(|target| target.strip_prefix("DynamoDB_20120810."))
        == Some(operation)
}

/// The table's attribute definitions with an UpdateTable's added, as AWS keeps them: each of
/// `current` in its order, replaced by the one of `requested` with the same `AttributeName`
/// if any, then the rest of `requested` in its order.
fn merge_attribute_definitions(
    current: &[serde_json::Value],
    requested: &[serde_json::Value],
) -> Vec<serde_json::Value> {
    let name = |definition: &serde_json::Value| definition["AttributeName"].as_str().map(str::to_owned);
    let mut merged: Vec<serde_json::Value> = current
        .iter()
        .map(|kept| {
            requested
                .iter()
                .find(|new| name(new).is_some() && name(new) == name(kept))
                .unwrap_or(kept)
                .clone()
        })
        .collect();
    for new in requested {
        if !merged
            .iter()
            .any(|kept| name(kept).is_some() && name(kept) == name(new))
        {
            merged.push(new.clone());
        }
    }
    merged
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
    fn only_dynamodb_targets_are_dynamodb() {
        let mut headers = HeaderMap::new();
        assert!(!is_dynamodb(&headers, "UpdateTable"));
        headers.insert(TARGET, HeaderValue::from_static("DynamoDB_20120810.UpdateTable"));
        assert!(is_dynamodb(&headers, "UpdateTable"));
        assert!(!is_dynamodb(&headers, "CreateTable"));
        headers.insert(
            TARGET,
            HeaderValue::from_static("AnyScaleFrontendService.UpdateTable"),
        );
        assert!(!is_dynamodb(&headers, "UpdateTable"));
    }

    #[test]
    fn attribute_definitions_merge_with_the_request_winning() {
        let def =
            |name: &str, kind: &str| serde_json::json!({ "AttributeName": name, "AttributeType": kind });
        let current = [def("pk", "S"), def("sk", "N"), def("device", "S")];
        let requested = [def("status", "S"), def("sk", "S")];
        assert_eq!(
            merge_attribute_definitions(&current, &requested),
            [
                def("pk", "S"),
                def("sk", "S"),
                def("device", "S"),
                def("status", "S")
            ]
        );
        assert_eq!(merge_attribute_definitions(&[], &requested), requested);
        assert_eq!(merge_attribute_definitions(&current, &[]), current);
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
        .map(|(op, table)| state.decide(op, Some(table), now).fault)
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
        assert_eq!(state.decide("CreateTable", None, now).fault, Some(Fault::Reset));
        assert_eq!(
            state.decide("CreateTable", None, now).fault,
            Some(Fault::Throttle)
        );
        assert_eq!(state.decide("CreateTable", None, now).fault, None);
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
        assert_eq!(
            state.decide("TagResource", None, now).fault,
            Some(Fault::Status(503))
        );
        assert_eq!(state.decide("TagResource", None, now).fault, None);
        assert_eq!(
            state.decide("TagResource", None, now).fault,
            Some(Fault::Throttle)
        );
        assert_eq!(state.decide("UntagResource", None, now).fault, None);
        assert_eq!(state.calls[2].fault.as_deref(), Some("throttle"));
    }

    fn with_quota(limit: usize, tables: Option<usize>) -> State {
        State {
            quota: Some(TableQuota {
                limit,
                tables,
                creating: 0,
            }),
            ..State::default()
        }
    }

    #[test]
    fn quota_counts_tables_and_creates_in_flight() {
        let now = Instant::now();
        let mut state = with_quota(3, Some(1));
        let first = state.decide("CreateTable", Some("a"), now);
        assert_eq!((first.fault.clone(), first.reserved), (None, true));
        let second = state.decide("CreateTable", Some("b"), now);
        assert!(second.reserved);
        // 1 table and 2 creates in flight: the quota of 3 is used up.
        let refused = state.decide("CreateTable", Some("c"), now);
        assert_eq!(
            (refused.fault, refused.reserved),
            (Some(Fault::TableQuota(3)), false)
        );
        // One create failed upstream (e.g. the name was taken): its place is free again.
        state.created(false);
        assert_eq!(state.decide("CreateTable", Some("c"), now).fault, None);
        state.created(true);
        state.created(true);
        assert_eq!(state.quota.as_ref().unwrap().tables, Some(3));
        assert_eq!(
            state.decide("CreateTable", Some("d"), now).fault,
            Some(Fault::TableQuota(3))
        );
        // Other operations are never refused for the quota.
        assert_eq!(state.decide("DescribeTable", Some("d"), now).fault, None);
        state.deleted();
        assert_eq!(state.decide("CreateTable", Some("d"), now).fault, None);
        let labels: Vec<Option<&str>> = state.calls.iter().map(|c| c.fault.as_deref()).collect();
        assert_eq!(
            labels,
            [None, None, Some("quota"), None, Some("quota"), None, None]
        );
    }

    #[test]
    fn quota_not_counted_yet_refuses_nothing() {
        let now = Instant::now();
        let mut state = with_quota(0, None);
        assert!(state.needs_count());
        assert_eq!(state.decide("CreateTable", Some("a"), now).fault, None);
        assert!(!with_quota(0, Some(0)).needs_count());
        assert!(!State::default().needs_count());
    }

    #[test]
    fn a_rule_or_throttle_comes_before_the_quota() {
        let now = Instant::now();
        let mut state = with_quota(0, Some(5));
        state.rules.push(Armed {
            rule: Rule::op("CreateTable"),
            fault: Fault::Status(500),
            skipped: 0,
            applied: 0,
        });
        state.limits.insert("CreateTable".into(), Bucket::new(1, now));
        assert_eq!(
            state.decide("CreateTable", None, now).fault,
            Some(Fault::Status(500))
        );
        assert_eq!(
            state.decide("CreateTable", None, now).fault,
            Some(Fault::TableQuota(0))
        );
        assert_eq!(
            state.decide("CreateTable", None, now).fault,
            Some(Fault::Throttle)
        );
        assert_eq!(state.quota.as_ref().unwrap().creating, 0);
    }

    #[test]
    fn latency_only_for_forwarded_requests() {
        let now = Instant::now();
        let mut state = State {
            latency: Duration::from_millis(20),
            ..State::default()
        };
        state.limits.insert("TagResource".into(), Bucket::new(1, now));
        assert_eq!(
            state.decide("TagResource", None, now).latency,
            Duration::from_millis(20)
        );
        let throttled = state.decide("TagResource", None, now);
        assert_eq!(throttled.fault, Some(Fault::Throttle));
        assert_eq!(throttled.latency, Duration::ZERO);
        // Per-call latency is no fault.
        assert_eq!(state.calls[0].fault, None);
    }

    #[test]
    fn aws_rates_are_the_documented_ones() {
        let rates: BTreeMap<&str, u32> = AWS_RATES.into_iter().collect();
        assert_eq!(
            rates,
            BTreeMap::from([
                ("ListTagsOfResource", 10),
                ("TagResource", 5),
                ("UntagResource", 5)
            ])
        );
        assert_eq!(Fault::TableQuota(3).label(), "quota");
    }
}

/// A scalable target, as a DeregisterScalableTarget names it.
struct TargetOf {
    namespace: String,
    resource: String,
    dimension: String,
}

/// One kind of object Application Auto Scaling attaches to a target, and its calls.
#[derive(Clone, Copy)]
struct Attached {
    describe: &'static str,
    /// The list in the describe call's answer.
    list: &'static str,
    /// Each object's name field, in the answer and in the delete call.
    name: &'static str,
    delete: &'static str,
}

impl Attached {
    const POLICIES: Attached = Attached {
        describe: "DescribeScalingPolicies",
        list: "ScalingPolicies",
        name: "PolicyName",
        delete: "DeleteScalingPolicy",
    };
    const SCHEDULED_ACTIONS: Attached = Attached {
        describe: "DescribeScheduledActions",
        list: "ScheduledActions",
        name: "ScheduledActionName",
        delete: "DeleteScheduledAction",
    };
}
