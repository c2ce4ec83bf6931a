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
//! ([`Proxy::resource_policies_enforced`]; in front of every moto), and DynamoDB's Kinesis Data
//! Streams destinations, which moto lacks, with every item write carried into the stream as a
//! record in DynamoDB's format ([`Proxy::kinesis_destinations`]; in front of every moto), and S3
//! reads as AWS answers them: the expected bucket owner checked, a lifecycle rule's expiration
//! said ([`Proxy::s3_as_aws`]; in front of every moto).
//!
//! It runs on its own thread with its own tokio runtime, so sync and async tests use it alike,
//! and stops when dropped. HTTP is hyper's on both sides (HTTP/1.1 with keep-alive, as the SDK
//! speaks it): no hand-written parser to get wrong.
//!
//! Its parts, from the bottom: `wire` (DynamoDB's JSON protocol), `upstream` (the server behind
//! it), `rules` and `state` (what a test sets, and the proxy's bookkeeping), one module per AWS
//! behaviour it adds (`family_role`, `item_writes`, `warm`, `exports` with `export_arns`,
//! `scaling`, `create_table_tags`, `attribute_definitions`, `kinesis_destinations` with
//! `kinesis_requests`, `kinesis_state`, `kinesis_delivery` and `kinesis_records`, `s3_buckets`),
//! then `forward`, which puts them together per request. The rules of AWS those modules add
//! (the family role's IAM, warm throughput never lowered, the destinations' states, the
//! scaling cascade, the export layout, the seal) are `aws_model`'s, which fake-aws follows
//! too: the proxy keeps the wire, the upstream and the faults.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;

mod attribute_definitions;
mod create_table_tags;
mod export_arns;
mod exports;
mod family_role;
mod forward;
mod item_writes;
mod kinesis_delivery;
mod kinesis_destinations;
mod kinesis_records;
mod kinesis_requests;
mod kinesis_state;
mod rules;
mod s3_buckets;
mod scaling;
mod state;
mod upstream;
mod warm;
mod wire;

pub use rules::{Call, Fault, Rule, AWS_RATES, DEFAULT_TABLE_QUOTA};
pub use s3_buckets::MOTO_ACCOUNT;

use forward::{accept_loop, Forwarder};
use state::{lock, Armed, Bucket, State, TableQuota};

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
        let forwarder = Arc::new(Forwarder::new(upstream_endpoint, Arc::clone(&state)));
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
    /// (the SDK's default retries; use [`crate::client::sdk_config`] to change them).
    pub async fn client(&self) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::from_conf(crate::client::sdk_config(&self.endpoint).build())
    }

    /// Environment for child processes (the CLI binary), as [`crate::LocalDynamo::env`] with
    /// `AWS_ENDPOINT_URL` set to the proxy.
    pub fn env(&self) -> Vec<(String, String)> {
        crate::client::endpoint_env(&self.endpoint)
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
    /// `manifest-files.json` beside the data file moto wrote (`aws_model::exports`), and every
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
    /// does not allow (both functions' statements together, every optional grant on), as AWS
    /// would: HTTP 400 `AccessDeniedException`, recorded as `"error AccessDeniedException"`, not
    /// forwarded. The template's statements decide, through the evaluator the fake uses
    /// (`aws_model::family_role::FamilyRole`): every DynamoDB request naming a table (its ARN, the tags
    /// CreateTable and TagResource write), and every Application Auto Scaling request (on a
    /// DynamoDB scalable target; RegisterScalableTarget and PutScalingPolicy also need
    /// DescribeTable and UpdateTable on the table, as Application Auto Scaling checks). Other
    /// services are not evaluated.
    ///
    /// When a statement for the action reads `aws:ResourceTag`, the table's tags are read from
    /// the upstream (DescribeTable for its ARN, then ListTagsOfResource; not recorded); a table
    /// that does not exist is left to the upstream's own answer. Rules come first, as with the
    /// quota. Not undone by [`Proxy::clear`].
    pub fn family_role(&self, prefix: &str) {
        self.state().role = Some(prefix.to_owned());
    }

    /// S3 reads answered as AWS answers them, where moto does not: a request whose
    /// `x-amz-expected-bucket-owner` is not the bucket's owner (moto's account, or the one
    /// [`Proxy::bucket_owner`] gave) gets 403 AccessDenied, not forwarded; a GetObject or
    /// HeadObject of an object an Enabled lifecycle Expiration rule covers (the bucket's
    /// configuration read from moto, which stores it; rules filtering by tag or size are not
    /// applied) gets `x-amz-expiration: expiry-date="...", rule-id="..."`, the date counted from
    /// the object's Last-Modified as S3 counts it. [`crate::LocalDynamo`] turns it on in front
    /// of every moto. Not undone by [`Proxy::clear`].
    pub fn s3_as_aws(&self) {
        self.state().s3_as_aws = true;
    }

    /// The bucket `bucket` is owned by `account` from now on, as when its owner deleted it and
    /// another account made one of the same name (S3 bucket names are global): with
    /// [`Proxy::s3_as_aws`], reads expecting another owner are refused. Its objects stay (the
    /// new owner copied them back, the worst case for a proof).
    pub fn bucket_owner(&self, bucket: &str, account: &str) {
        self.state()
            .bucket_owners
            .insert(bucket.to_owned(), account.to_owned());
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

    /// DynamoDB's Kinesis Data Streams destinations, which moto lacks (it answers their
    /// operations with an HTML 500), as AWS documents them: the proxy answers
    /// EnableKinesisStreamingDestination, DescribeKinesisStreamingDestination,
    /// DisableKinesisStreamingDestination and UpdateKinesisStreamingDestination itself (not
    /// forwarded; recorded, faulted and checked by [`Proxy::family_role`] like any call), and
    /// carries every PutItem, UpdateItem, DeleteItem, BatchWriteItem and TransactWriteItems on a
    /// table whose destination is ACTIVE into its stream on the upstream: one record per changed
    /// item, in DynamoDB's Kinesis record format, put with Kinesis PutRecords before the client
    /// gets the write's answer (moto serves Kinesis on the same port; create the stream there).
    ///
    /// Enable answers ENABLING; the next DescribeKinesisStreamingDestination of the table
    /// (see [`Proxy::destinations_enabling_answers`]) finds it ACTIVE, or ENABLE_FAILED with a
    /// `DestinationStatusDescription` when the Kinesis stream does not exist. One destination a
    /// table: Enable is refused with a ValidationException while another (or the same) is
    /// ENABLING, ACTIVE, UPDATING or DISABLING. Disable answers DISABLING and Update UPDATING,
    /// DISABLED and ACTIVE from the next Describe. A missing table is a
    /// ResourceNotFoundException; a DeleteTable through the proxy drops the table's
    /// destinations. A stream deleted after the destination became ACTIVE takes no more records
    /// and the destination stays ACTIVE (AWS documents nothing else). The proxy's own calls
    /// (DescribeTable, GetItem before and after each carried write, Kinesis
    /// DescribeStreamSummary and PutRecords) are not recorded, faulted or checked against the
    /// family role: on AWS they are DynamoDB's. PartiQL writes are not carried.
    /// [`crate::LocalDynamo`] turns it on in front of every moto. Not undone by
    /// [`Proxy::clear`].
    pub fn kinesis_destinations(&self) {
        self.state()
            .kinesis_destinations
            .get_or_insert_with(Default::default);
    }

    /// Keeps each new Kinesis destination ENABLING for its table's first `n`
    /// DescribeKinesisStreamingDestination answers after its Enable (0, the default: ACTIVE, or
    /// ENABLE_FAILED, from the first), as AWS keeps one ENABLING for a while; no records are put
    /// while it is. Turns [`Proxy::kinesis_destinations`] on; applies to destinations enabled
    /// from now on and to those still ENABLING.
    pub fn destinations_enabling_answers(&self, n: usize) {
        self.state()
            .kinesis_destinations
            .get_or_insert_with(Default::default)
            .enabling_answers = n;
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

#[cfg(test)]
mod tests {
    use super::*;

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
