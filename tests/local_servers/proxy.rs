//! The fault-injecting proxy against a real moto (and dynalite for VanishBefore and the table
//! quota), through the SDK: each fault shows up in the SDK as AWS's own failure would; AWS's
//! rates, the table quota and the per-call latency behave as an AWS account does.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use crate::support::INSTANT_DYNALITE;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::describe_table::DescribeTableError;
use aws_sdk_dynamodb::Client;
use testkit::{create_plain_table, sdk_config, Call, Fault, LocalDynamo, Proxy, Rule, Server, AWS_RATES};

const TABLE: &str = "proxy_table";

/// A moto server with [`TABLE`] in it, a proxy in front of it, and a client of the proxy with
/// retries disabled, so each injected fault reaches the test as the call's error.
async fn setup() -> (LocalDynamo, Proxy, Client) {
    setup_on(Server::Moto).await
}

async fn setup_on(server: Server) -> (LocalDynamo, Proxy, Client) {
    let db = LocalDynamo::start(server);
    create_plain_table(&db.client().await, TABLE).await;
    let proxy = Proxy::start(db.endpoint());
    let client = no_retries(&proxy);
    (db, proxy, client)
}

fn no_retries(proxy: &Proxy) -> Client {
    Client::from_conf(
        sdk_config(&proxy.endpoint())
            .retry_config(RetryConfig::disabled())
            .build(),
    )
}

async fn describe(client: &Client) -> Result<(), SdkError<DescribeTableError, HttpResponse>> {
    client.describe_table().table_name(TABLE).send().await.map(|_| ())
}

/// The HTTP status and AWS error code of a service error; panics on any other error.
fn service_error<E: ProvideErrorMetadata + Debug>(err: &SdkError<E, HttpResponse>) -> (u16, String) {
    assert!(
        matches!(err, SdkError::ServiceError(_)),
        "expected a service error, got {err:?}"
    );
    let status = err.raw_response().expect("a reply").status().as_u16();
    (status, err.code().unwrap_or_default().to_owned())
}

fn call(operation: &str, table: Option<&str>, fault: Option<&str>) -> Call {
    Call {
        operation: operation.to_owned(),
        table: table.map(str::to_owned),
        fault: fault.map(str::to_owned),
    }
}

#[tokio::test]
async fn forwards_and_records_each_call_with_its_table() {
    let db = LocalDynamo::start(Server::Moto);
    let proxy = Proxy::start(db.endpoint());
    let client = proxy.client().await;
    assert_eq!(create_plain_table(&client, TABLE).await, "ACTIVE");
    let arn = client
        .describe_table()
        .table_name(TABLE)
        .send()
        .await
        .expect("DescribeTable through the proxy")
        .table()
        .and_then(|t| t.table_arn())
        .expect("a table ARN")
        .to_owned();
    client
        .list_tags_of_resource()
        .resource_arn(&arn)
        .send()
        .await
        .expect("ListTagsOfResource through the proxy");
    let names = client.list_tables().send().await.expect("ListTables");
    assert_eq!(names.table_names(), [TABLE]);

    assert_eq!(
        proxy.calls(),
        [
            call("CreateTable", Some(TABLE), None),
            call("DescribeTable", Some(TABLE), None),
            call("ListTagsOfResource", Some(TABLE), None),
            call("ListTables", None, None),
        ]
    );
    assert_eq!(proxy.count("DescribeTable"), 1);
    assert_eq!(proxy.count("DeleteTable"), 0);
    // Keep-alive: four sequential calls of one client share one connection.
    assert_eq!(proxy.connections(), 1);
    proxy.reset_calls();
    assert_eq!(proxy.calls(), []);
    // The table is really on moto.
    let direct = db.client().await.list_tables().send().await.expect("ListTables");
    assert_eq!(direct.table_names(), [TABLE]);
}

#[tokio::test]
async fn drop_closes_the_connection_without_a_reply() {
    let (_db, proxy, client) = setup().await;
    proxy.add(Rule::op("DescribeTable"), Fault::Drop);
    let err = describe(&client).await.expect_err("a dropped call fails");
    assert!(matches!(err, SdkError::DispatchFailure(_)), "{err:?}");
    // A clean close (FIN) before any reply: hyper's "connection closed before message completed".
    assert!(format!("{err:?}").contains("IncompleteMessage"), "{err:?}");
    describe(&client).await.expect("the rule is spent");
    assert_eq!(
        proxy.calls(),
        [
            call("DescribeTable", Some(TABLE), Some("drop")),
            call("DescribeTable", Some(TABLE), None),
        ]
    );
}

#[tokio::test]
async fn reset_aborts_the_connection() {
    let (_db, proxy, client) = setup().await;
    proxy.add(Rule::op("DescribeTable"), Fault::Reset);
    let err = describe(&client).await.expect_err("a reset call fails");
    match &err {
        SdkError::DispatchFailure(failure) => assert!(failure.is_io(), "{err:?}"),
        _ => panic!("expected a dispatch failure, got {err:?}"),
    }
    // A RST, not a FIN: the client's read fails with ECONNRESET.
    assert!(format!("{err:?}").contains("ConnectionReset"), "{err:?}");
    describe(&client).await.expect("the rule is spent");
}

#[tokio::test]
async fn status_faults_are_service_errors_with_aws_codes() {
    let (_db, proxy, client) = setup().await;
    proxy.add(Rule::op("DescribeTable"), Fault::Status(500));
    proxy.add(Rule::op("DescribeTable"), Fault::Status(503));
    let err = describe(&client).await.expect_err("500");
    assert_eq!(service_error(&err), (500, "InternalServerError".to_owned()));
    let err = describe(&client).await.expect_err("503");
    assert_eq!(service_error(&err), (503, "ServiceUnavailable".to_owned()));
    describe(&client).await.expect("both rules are spent");
}

#[tokio::test]
async fn throttle_and_named_errors_are_what_aws_sends() {
    let (_db, proxy, client) = setup().await;
    proxy.add(Rule::op("DescribeTable"), Fault::Throttle);
    proxy.add(
        Rule::op("UpdateTable").on_table(TABLE),
        Fault::Error {
            status: 400,
            error_type: "LimitExceededException".into(),
            message: "Subscriber limit exceeded: decreases today".into(),
        },
    );
    let err = describe(&client).await.expect_err("throttled");
    assert_eq!(service_error(&err), (400, "ThrottlingException".to_owned()));
    assert_eq!(err.message(), Some("Rate exceeded"));

    let err = client
        .update_table()
        .table_name(TABLE)
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .send()
        .await
        .expect_err("limit exceeded");
    assert_eq!(service_error(&err), (400, "LimitExceededException".to_owned()));
    assert!(
        err.as_service_error()
            .is_some_and(|e| e.is_limit_exceeded_exception()),
        "the SDK models it: {err:?}"
    );
    assert_eq!(err.message(), Some("Subscriber limit exceeded: decreases today"));
    assert_eq!(
        proxy
            .calls()
            .iter()
            .map(|c| c.fault.as_deref())
            .collect::<Vec<_>>(),
        [Some("throttle"), Some("error LimitExceededException")]
    );
}

#[tokio::test]
async fn latency_delays_then_forwards() {
    let (_db, proxy, client) = setup().await;
    let delay = Duration::from_millis(300);
    proxy.add(Rule::op("DescribeTable"), Fault::Latency(delay));
    let started = Instant::now();
    describe(&client).await.expect("a slow call still succeeds");
    assert!(started.elapsed() >= delay, "took {:?}", started.elapsed());
    assert_eq!(
        proxy.calls(),
        [call("DescribeTable", Some(TABLE), Some("latency 300ms"))]
    );
}

#[tokio::test]
async fn skip_one_times_one_faults_only_the_second_call() {
    let (_db, proxy, client) = setup().await;
    proxy.add(Rule::op("DescribeTable").skip(1).times(1), Fault::Status(500));
    describe(&client).await.expect("first call passes");
    describe(&client).await.expect_err("second call fails");
    describe(&client).await.expect("third call passes");
    let faults: Vec<Option<String>> = proxy.calls().into_iter().map(|c| c.fault).collect();
    assert_eq!(faults, [None, Some("status 500".to_owned()), None]);
}

/// VanishBefore deletes the table on the upstream, then forwards: the call sees it gone.
async fn vanish_before_describe(server: Server) {
    let (db, proxy, client) = setup_on(server).await;
    proxy.add(Rule::op("DescribeTable").on_table(TABLE), Fault::VanishBefore);
    let err = describe(&client).await.expect_err("the table is gone");
    assert_eq!(
        service_error(&err),
        (400, "ResourceNotFoundException".to_owned()),
        "{}",
        db.name()
    );
    let direct = db.client().await.list_tables().send().await.expect("ListTables");
    assert!(direct.table_names().is_empty(), "{}: {direct:?}", db.name());
    // The proxy's own DeleteTable and DescribeTable calls are not recorded.
    assert_eq!(
        proxy.calls(),
        [call("DescribeTable", Some(TABLE), Some("vanish"))]
    );
}

#[tokio::test]
async fn vanish_before_deletes_the_table_on_moto() {
    vanish_before_describe(Server::Moto).await;
}

#[tokio::test]
async fn vanish_before_deletes_the_table_on_dynalite() {
    vanish_before_describe(INSTANT_DYNALITE).await;
}

#[tokio::test]
async fn rate_limit_throttles_a_burst() {
    let (_db, proxy, client) = setup().await;
    let arn = testkit::table_arn(&client, TABLE).await;
    proxy.rate_limit("ListTagsOfResource", 5);
    let mut burst = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let (client, arn) = (client.clone(), arn.clone());
        burst.spawn(async move { client.list_tags_of_resource().resource_arn(arn).send().await });
    }
    let (mut passed, mut throttled) = (0, 0);
    while let Some(result) = burst.join_next().await {
        match result.expect("task") {
            Ok(_) => passed += 1,
            Err(err) => {
                assert_eq!(service_error(&err), (400, "ThrottlingException".to_owned()));
                throttled += 1;
            }
        }
    }
    assert!(throttled >= 10, "{throttled} throttled, {passed} passed");
    assert!(passed >= 5, "{throttled} throttled, {passed} passed");
    let recorded = proxy
        .calls()
        .iter()
        .filter(|c| c.operation == "ListTagsOfResource" && c.fault.as_deref() == Some("throttle"))
        .count();
    assert_eq!(recorded, throttled);
    // Other operations are not limited.
    for _ in 0..10 {
        describe(&client).await.expect("DescribeTable is not limited");
    }
    proxy.clear();
    client
        .list_tags_of_resource()
        .resource_arn(&arn)
        .send()
        .await
        .expect("no limit after clear");
}

#[tokio::test]
async fn standard_retries_get_past_a_single_503() {
    let (_db, proxy, _) = setup().await;
    proxy.add(Rule::op("DescribeTable"), Fault::Status(503));
    let client = proxy.client().await; // the SDK's default config: standard retries
    describe(&client).await.expect("retried after the 503");
    assert_eq!(
        proxy.calls(),
        [
            call("DescribeTable", Some(TABLE), Some("status 503")),
            call("DescribeTable", Some(TABLE), None),
        ]
    );
}

#[test]
fn stops_when_dropped_outside_any_runtime() {
    // No upstream needed: nothing is forwarded.
    let proxy = Proxy::start("http://127.0.0.1:9");
    let endpoint = proxy.endpoint();
    let authority = endpoint.strip_prefix("http://").expect("http endpoint");
    std::net::TcpStream::connect(authority).expect("listening while alive");
    drop(proxy);
    assert!(
        std::net::TcpStream::connect(authority).is_err(),
        "still listening after drop"
    );
}

/// CreateTable of a plain table `name`, through `client`.
async fn create(
    client: &Client,
    name: &str,
) -> Result<(), SdkError<aws_sdk_dynamodb::operation::create_table::CreateTableError, HttpResponse>> {
    use aws_sdk_dynamodb::types::{BillingMode, ScalarAttributeType};
    testkit::create_keyed(client, name, &["id"], ScalarAttributeType::S)
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .map(|_| ())
}

async fn table_names(db: &LocalDynamo) -> Vec<String> {
    let mut names: Vec<String> = testkit::describe_all(&db.client().await)
        .await
        .into_keys()
        .collect();
    names.sort();
    names
}

/// The quota counts the upstream's tables (also one made there directly before the first
/// count), refuses CreateTable past it as AWS does, and follows CreateTable and DeleteTable.
async fn table_quota_on(server: Server) {
    let (db, proxy, client) = setup_on(server).await;
    let name = db.name();
    // Made on the server directly, before the proxy counts: counted by its ListTables.
    create_plain_table(&db.client().await, "direct_table").await;
    proxy.table_quota(4);
    assert_eq!(
        proxy.table_count(),
        None,
        "{name}: counted on the first CreateTable"
    );
    create(&client, "t_a").await.expect("3rd table");
    assert_eq!(proxy.table_count(), Some(3), "{name}");
    create(&client, "t_b").await.expect("4th table");
    let err = create(&client, "t_c")
        .await
        .expect_err("a 5th table is past the quota");
    assert_eq!(
        service_error(&err),
        (400, "LimitExceededException".to_owned()),
        "{name}"
    );
    assert!(
        err.as_service_error()
            .is_some_and(|e| e.is_limit_exceeded_exception()),
        "{name}: the SDK models it: {err:?}"
    );
    assert_eq!(
        err.message(),
        Some("Subscriber limit exceeded: There is a limit of 4 tables per subscriber"),
        "{name}"
    );
    // An existing name is refused by the server, as it is past the quota: not counted twice.
    assert_eq!(proxy.table_count(), Some(4), "{name}");
    // A deleted table frees a place.
    client
        .delete_table()
        .table_name("t_a")
        .send()
        .await
        .expect("DeleteTable through the proxy");
    assert_eq!(proxy.table_count(), Some(3), "{name}");
    create(&client, "t_c")
        .await
        .expect("in quota again after a delete");
    assert_eq!(
        table_names(&db).await,
        ["direct_table", TABLE, "t_b", "t_c"],
        "{name}: the refused create made nothing"
    );
    // The proxy's own ListTables is not recorded; the refused call is, as "quota".
    let calls: Vec<(String, Option<String>, Option<String>)> = proxy
        .calls()
        .into_iter()
        .map(|c| (c.operation, c.table, c.fault))
        .collect();
    let own = |op: &str, t: &str, f: Option<&str>| (op.to_owned(), Some(t.to_owned()), f.map(str::to_owned));
    assert_eq!(
        calls,
        [
            own("CreateTable", "t_a", None),
            own("CreateTable", "t_b", None),
            own("CreateTable", "t_c", Some("quota")),
            own("DeleteTable", "t_a", None),
            own("CreateTable", "t_c", None),
        ],
        "{name}"
    );
    // Set again: counted afresh.
    proxy.table_quota(10);
    assert_eq!(proxy.table_count(), None);
    create(&client, "t_d").await.expect("in the new quota");
    assert_eq!(proxy.table_count(), Some(5), "{name}");
    proxy.clear();
    assert_eq!(proxy.table_count(), None, "clear removes the quota");
}

#[tokio::test]
async fn table_quota_refuses_create_table_past_it_on_moto() {
    table_quota_on(Server::Moto).await;
}

#[tokio::test]
async fn table_quota_refuses_create_table_past_it_on_dynalite() {
    table_quota_on(INSTANT_DYNALITE).await;
}

/// Creates in flight hold their place: ten at once against four free places make four tables.
#[tokio::test]
async fn table_quota_holds_for_concurrent_creates() {
    let (db, proxy, client) = setup().await;
    proxy.table_quota(5);
    let mut creates = tokio::task::JoinSet::new();
    for i in 0..10 {
        let client = client.clone();
        creates.spawn(async move { create(&client, &format!("c_{i}")).await });
    }
    let (mut made, mut refused) = (0, 0);
    while let Some(result) = creates.join_next().await {
        match result.expect("task") {
            Ok(()) => made += 1,
            Err(err) => {
                assert_eq!(service_error(&err), (400, "LimitExceededException".to_owned()));
                refused += 1;
            }
        }
    }
    assert_eq!((made, refused), (4, 6));
    assert_eq!(table_names(&db).await.len(), 5);
    assert_eq!(proxy.table_count(), Some(5));
    assert_eq!(proxy.faulted_counts().get("CreateTable"), Some(&6));
}

/// With the SDK's default retries, a refused CreateTable is tried 3 times (the SDK counts
/// LimitExceededException as throttling), each refused.
#[tokio::test]
async fn table_quota_with_default_retries_is_refused_three_times() {
    let (_db, proxy, _) = setup().await;
    proxy.table_quota(1);
    let client = proxy.client().await;
    let err = create(&client, "over").await.expect_err("past the quota");
    assert_eq!(service_error(&err), (400, "LimitExceededException".to_owned()));
    assert_eq!(
        proxy.calls(),
        vec![call("CreateTable", Some("over"), Some("quota")); 3]
    );
}

/// A call's outcome as a burst tallies it: done, or the error code it was refused with.
fn error_code<T, E: ProvideErrorMetadata>(
    result: Result<T, SdkError<E, HttpResponse>>,
) -> Result<(), Option<String>> {
    result.map(|_| ()).map_err(|e| e.code().map(str::to_owned))
}

/// `aws_rates` limits the three tag APIs to AWS's documented rates, and nothing else.
#[tokio::test]
async fn aws_rates_throttle_the_tag_apis_at_aws_rates() {
    let (_db, proxy, client) = setup().await;
    let arn = testkit::table_arn(&client, TABLE).await;
    proxy.aws_rates();
    proxy.reset_calls();
    let tag = || {
        aws_sdk_dynamodb::types::Tag::builder()
            .key("k")
            .value("v")
            .build()
            .expect("key and value")
    };
    // A burst of 40 calls of each kind at once.
    let mut burst = tokio::task::JoinSet::new();
    for _ in 0..40 {
        let (c, a) = (client.clone(), arn.clone());
        burst.spawn(async move { error_code(c.list_tags_of_resource().resource_arn(a).send().await) });
        let (c, a, t) = (client.clone(), arn.clone(), tag());
        burst.spawn(async move { error_code(c.tag_resource().resource_arn(a).tags(t).send().await) });
        let (c, a) = (client.clone(), arn.clone());
        burst.spawn(async move { error_code(c.untag_resource().resource_arn(a).tag_keys("k").send().await) });
        let c = client.clone();
        burst.spawn(async move { error_code(c.describe_table().table_name(TABLE).send().await) });
    }
    let started = Instant::now();
    while let Some(result) = burst.join_next().await {
        if let Err(code) = result.expect("task") {
            assert_eq!(code.as_deref(), Some("ThrottlingException"));
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let passed = |op: &str| {
        proxy
            .calls()
            .iter()
            .filter(|c| c.operation == op && c.fault.is_none())
            .count()
    };
    assert_eq!(proxy.counts().values().sum::<usize>(), 160);
    // The burst (one second's worth) plus what refills while the burst lasts.
    for (operation, rate) in AWS_RATES {
        let rate = rate as usize;
        let most = rate + (elapsed * rate as f64).ceil() as usize;
        let got = passed(operation);
        assert!(
            (rate..=most).contains(&got),
            "{operation}: {got} of 40 passed in {elapsed:.2} s at {rate}/s"
        );
    }
    assert_eq!(passed("DescribeTable"), 40, "DescribeTable is not limited");
    // A client that keeps to the rates is never throttled.
    tokio::time::sleep(Duration::from_secs(1)).await;
    proxy.reset_calls();
    for _ in 0..15 {
        client
            .list_tags_of_resource()
            .resource_arn(&arn)
            .send()
            .await
            .expect("at 10/s, never throttled");
        tokio::time::sleep(Duration::from_millis(110)).await;
    }
    assert_eq!(proxy.faulted_counts(), Default::default());
}

/// Every forwarded call waits the latency, concurrently (the proxy does not serialise them);
/// calls the proxy refuses itself do not.
#[tokio::test]
async fn latency_per_call_delays_every_forwarded_call() {
    let (_db, proxy, client) = setup().await;
    let delay = Duration::from_millis(20);
    proxy.latency_per_call(delay);
    let started = Instant::now();
    for _ in 0..10 {
        describe(&client).await.expect("a slow call still succeeds");
    }
    let sequential = started.elapsed();
    assert!(sequential >= 10 * delay, "10 calls took {sequential:?}");
    assert_eq!(
        proxy.calls(),
        vec![call("DescribeTable", Some(TABLE), None); 10],
        "latency is not a fault"
    );

    proxy.latency_per_call(Duration::from_millis(500));
    let started = Instant::now();
    let mut burst = tokio::task::JoinSet::new();
    for _ in 0..10 {
        let client = client.clone();
        burst.spawn(async move { describe(&client).await.map_err(|e| format!("{e:?}")) });
    }
    while let Some(result) = burst.join_next().await {
        result.expect("task").expect("DescribeTable");
    }
    let concurrent = started.elapsed();
    assert!(
        concurrent >= Duration::from_millis(500) && concurrent < Duration::from_millis(2500),
        "10 concurrent calls with 500 ms each took {concurrent:?}"
    );

    // A refused call is answered at once.
    proxy.add(Rule::op("DescribeTable"), Fault::Status(503));
    let started = Instant::now();
    describe(&client).await.expect_err("503");
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "took {:?}",
        started.elapsed()
    );

    proxy.latency_per_call(Duration::ZERO);
    proxy.add(
        Rule::op("DescribeTable"),
        Fault::Latency(Duration::from_millis(100)),
    );
    proxy.latency_per_call(Duration::from_millis(100));
    let started = Instant::now();
    describe(&client).await.expect("both delays, then forwarded");
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "took {:?}",
        started.elapsed()
    );
}
