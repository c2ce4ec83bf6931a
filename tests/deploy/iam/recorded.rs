//! The calls the functions really send, recorded on moto over the schedule scenario, each
//! evaluated against its function's role (with the defaults, and with every option on), then
//! turned on a sibling's, an untagged and another family's table.

use super::*;

async fn create_keyed_table(client: &aws_sdk_dynamodb::Client, name: &str, read: i64, write: i64) {
    // The template's default key types (what the application helpers need).
    testkit::create_keyed(client, name, &["pk", "sk"], ScalarAttributeType::S)
        .provisioned_throughput(testkit::throughput(read, write))
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateTable {name}: {e:?}"));
}

async fn tag_table(client: &aws_sdk_dynamodb::Client, name: &str, tags: &Tags) {
    let mut request = client.tag_resource().resource_arn(table_arn(name));
    for (key, value) in tags {
        request = request.tags(
            aws_sdk_dynamodb::types::Tag::builder()
                .key(key)
                .value(value)
                .build()
                .unwrap(),
        );
    }
    request
        .send()
        .await
        .unwrap_or_else(|e| panic!("TagResource {name}: {e:?}"));
}

async fn tags_of(client: &aws_sdk_dynamodb::Client, name: &str) -> Tags {
    let out = client
        .list_tags_of_resource()
        .resource_arn(table_arn(name))
        .send()
        .await
        .unwrap_or_else(|e| panic!("ListTagsOfResource {name}: {e:?}"));
    out.tags()
        .iter()
        .map(|t| (t.key().to_owned(), t.value().to_owned()))
        .collect()
}

/// Tables the scenarios start with: tomorrow's pre-built by an earlier version, too small
/// (create_new raises it: UpdateTable), with the family tag every version wrote at CreateTable;
/// and neighbours the functions must not touch: a past one made by hand with our name and key
/// (never recorded, so never ours), same string prefix without the underscore, another
/// prefix, a foreign name under the prefix, and a sibling family's table under the prefix (with
/// that family's tags), which may be read but never changed. [`start_ledger`] then gives the
/// family its ledger, as an upgrade to it does.
async fn seed_tables(client: &aws_sdk_dynamodb::Client) {
    create_keyed_table(client, "timeseries_2018-10-26", 5, 5).await;
    tag_table(client, "timeseries_2018-10-26", &ours()).await;
    create_keyed_table(client, HAND_MADE, 300, 1000).await;
    for name in ["timeseriesX_2018-10-25", "other_2018-10-25"] {
        testkit::create_plain_table(client, name).await;
    }
    create_keyed_table(client, "timeseries_backup", 5, 5).await;
    create_keyed_table(client, SIBLING, 1, 1).await;
    tag_table(client, SIBLING, &siblings()).await;
    // A table of ours from an earlier `Period = month`: ours only by its tags, which
    // resize_old reads (ListTagsOfResource).
    create_keyed_table(client, EARLIER_PERIOD, 1, 1).await;
    tag_table(
        client,
        EARLIER_PERIOD,
        &tags(&[
            (FAMILY, PREFIX),
            ("ddb-rollover:period-start", "2018-09-01T00:00:00+00:00"),
            ("ddb-rollover:period-end", "2018-10-01T00:00:00+00:00"),
        ]),
    )
    .await;
}

/// A table of ours made under `Period = month`.
const EARLIER_PERIOD: &str = "timeseries_2018-09";

/// Made by hand with our name and key, never recorded in the family's ledger.
const HAND_MADE: &str = "timeseries_2018-10-24";

/// Tables under the prefix the functions may read but never change.
const NOT_OURS: [&str; 3] = ["timeseries_backup", SIBLING, HAND_MADE];

/// The family's ledger, as a deployment made before the ledger gets it: the stack's
/// `LedgerTable`, then the operator's `ddb-rollover init --yes` (the account's own credentials,
/// not a function's role: its calls are not recorded), which records the tables carrying our
/// family tag with the policy's key and a period: the earlier version's two, not the hand-made
/// one nor the sibling's.
async fn start_ledger(client: &aws_sdk_dynamodb::Client, functions: &[Deployed]) {
    let policy = functions[0].function.policy().expect("the stack's policy");
    stack_ledger(client, PREFIX).await;
    let at = scenario::scheduled_time(Operation::CreateNew).parse().unwrap();
    let report = init(&DynamoDb::local(client.clone()), &policy, at).await;
    assert_eq!(
        recorded_by(&report),
        [EARLIER_PERIOD, "timeseries_2018-10-26"],
        "{report:#?}"
    );
}

/// Runs every schedule of `d` at `at` with a client that records into `recorder`, and S3 at
/// `archives` (for the archive proofs before a deletion) when the scenario archives.
async fn run_day(
    d: &Deployed,
    client: &aws_sdk_dynamodb::Client,
    archives: Option<&aws_sdk_s3::Client>,
    recorder: &Recorder,
    at: &str,
) {
    run_day_with(d, client, archives, None, recorder, at).await;
}

/// [`run_day`], with Lambda for the consumer function's mappings when `lambda` is given.
async fn run_day_with(
    d: &Deployed,
    client: &aws_sdk_dynamodb::Client,
    archives: Option<&aws_sdk_s3::Client>,
    lambda: Option<&aws_sdk_lambda::Client>,
    recorder: &Recorder,
    at: &str,
) {
    let recording = recorder.attach(client);
    for s in &d.function.schedules {
        let mut control = DynamoDb::local(recording.clone());
        if let Some(s3) = archives {
            control = control.with_archives(s3.clone());
        }
        if let Some(lambda) = lambda {
            control = control.with_lambda(lambda.clone());
        }
        let report = scenario::run_schedule_at(&d.function, s, control, at)
            .await
            .unwrap_or_else(|e| panic!("{}.{} at {at}: {e}", d.id(), s.event));
        assert_eq!(
            report.summary.failed,
            0,
            "{}.{} at {at}: {report:#?}",
            d.id(),
            s.event
        );
    }
}

/// The resources beside the prefix's where `action` must be denied.
fn outside_resources(action: &str) -> Vec<String> {
    let tables = [
        table_arn("other_2018-10-25"),
        table_arn("timeseriesX_2018-10-25"),
        table_arn("timeseries"),
        "arn:aws:dynamodb:eu-west-1:123456789012:table/timeseries_2018-10-25".to_owned(),
        "arn:aws:dynamodb:us-east-1:210987654321:table/timeseries_2018-10-25".to_owned(),
    ];
    if action == "dynamodb:DescribeExport" {
        tables
            .iter()
            .map(|t| format!("{t}/export/01234567890123-abcdef12"))
            .collect()
    } else {
        tables.to_vec()
    }
}

/// Whether `call` is on our family's ledger.
fn on_ledger(call: &Call) -> bool {
    call.table_name() == Some(ledger_name(PREFIX))
}

/// Every recorded call is allowed (with the tags its table carried and the tags it wrote) and
/// stays on the prefix's tables; a foreign name or a sibling family's table under the prefix is
/// only read; the actions sent are exactly the DynamoDB actions granted (on the ledger: all of
/// its grants, or none until the engine keeps the ledger); each is denied beside the prefix; and the family conditions hold on the calls themselves (see
/// [`check_family_conditions`]).
fn check_calls(d: &Deployed, calls: &BTreeSet<Call>) {
    assert!(!calls.is_empty(), "{}: recorded nothing", d.id());
    for call in calls {
        for request in call.requests() {
            let decision = evaluate(&d.statements, &request);
            assert!(
                decision.is_allowed(),
                "{}: {} on {} is not allowed by its role ({decision:?}); the deployed function would \
                 get AccessDenied. The table carried {:?}, the request wrote {:?}. Add the action \
                 (scoped to the prefix's tables) to the role in template.yaml; a CreateTable must \
                 write {FAMILY} = {PREFIX} in its Tags, a DeleteTable needs a table that carries it.",
                d.id(),
                request.action,
                request.resource,
                request.resource_tags,
                request.request_tags,
            );
        }
        if let Some(table) = call.table_name() {
            assert!(
                table.starts_with("timeseries_"),
                "{}: {} on {table}, outside the prefix",
                d.id(),
                call.action()
            );
            assert!(
                !NOT_OURS.contains(&table.as_str()) || !changes(&call.action()),
                "{}: changed a table that is not ours: {call:?}",
                d.id()
            );
        }
    }

    // Every permission the role grants is one the scenario exercised: nothing is spare. But
    // DeleteResourcePolicy, which only unseals a sealed table that stopped being due for
    // deletion (engine::seal_rules plays that); the scenario's tables stay due once sealed.
    // The ledger's calls are compared on their own, below.
    let sent: BTreeSet<String> = calls
        .iter()
        .filter(|c| !on_ledger(c))
        .flat_map(Call::actions)
        .collect();
    let mut needed = d.needed();
    if !sent.contains("dynamodb:DeleteResourcePolicy") && sent.contains("dynamodb:PutResourcePolicy") {
        needed.remove("dynamodb:DeleteResourcePolicy");
    }
    assert_eq!(
        sent,
        needed,
        "{}: actions sent (left) vs. actions granted (right)",
        d.id()
    );

    // The ledger's grants (FamilyLedger): the engine sends these calls from the `ledger` branch
    // on (issue 37); before it, none is sent, the one expected exception to "nothing is spare".
    // Once any is sent, every one granted must be.
    let sent_on_ledger: BTreeSet<String> = calls
        .iter()
        .filter(|c| on_ledger(c))
        .flat_map(Call::actions)
        .collect();
    let ledger_granted: BTreeSet<String> = LEDGER_ACTIONS.iter().map(|a| a.to_string()).collect();
    assert!(
        sent_on_ledger.is_empty() || sent_on_ledger == ledger_granted,
        "{}: actions sent on the ledger {sent_on_ledger:?} vs. granted on it {ledger_granted:?}",
        d.id()
    );

    for action in &sent {
        if action == "dynamodb:ListTables" {
            continue;
        }
        for outside in outside_resources(action) {
            // Our own family on both sides: only the resource pattern can refuse it.
            let request = Request::new(action, &outside)
                .with_resource_tags(ours())
                .with_request_tags(ours());
            assert_eq!(
                evaluate(&d.statements, &request),
                Decision::ImplicitDeny,
                "{}: {action} on {outside}",
                d.id()
            );
        }
    }

    check_family_conditions(d, calls);
}

/// The recorded calls turned where the family conditions must decide:
/// (b) every changing call (CreateTable aside: see below) on the sibling's table, which lies
///     inside our resource pattern, is denied, and every changing action sent is among them;
/// (c) a DeleteTable (or the resource-based policy calls that seal a table before it) on one of
///     our names without the family tag is denied, while the other
///     changing calls on it are allowed (tables made before the tag still get it, and are
///     still managed);
/// (d) a TagResource writing another family is denied, on a table of ours or an untagged one;
/// (e) a CreateTable without our family in its Tags, or with another, is denied;
/// (f) every read on the sibling's table is allowed: the function sees it, and refuses it itself.
/// A CreateTable is not turned on the sibling: it fails on an existing table whatever IAM says,
/// and a new table is held by (e), the family it is created with.
fn check_family_conditions(d: &Deployed, calls: &BTreeSet<Call>) {
    let denied = |request: &Request, what: &str| {
        assert_eq!(
            evaluate(&d.statements, request),
            Decision::ImplicitDeny,
            "{}: {what}: {} on {} (table tags {:?}, request tags {:?}) must be denied",
            d.id(),
            request.action,
            request.resource,
            request.resource_tags,
            request.request_tags,
        );
    };
    let allowed = |request: &Request, what: &str| {
        let decision = evaluate(&d.statements, request);
        assert!(
            decision.is_allowed(),
            "{}: {what}: {} on {} (table tags {:?}, request tags {:?}) must be allowed: {decision:?}",
            d.id(),
            request.action,
            request.resource,
            request.resource_tags,
            request.request_tags,
        );
    };

    let mut refused_on_sibling = BTreeSet::new();
    for call in calls {
        // The ledger's grants are its ARN's, not the family tag's: crates/deploy-checks' `ledger`
        // checks turn them on another family's ledger.
        if call.table_name().is_none() || on_ledger(call) {
            continue;
        }
        if call.operation == "CreateTable" {
            // (e)
            let mut without = call.clone();
            without.request_tags.remove(FAMILY);
            denied(&without.requests()[0], "(e) CreateTable without the family tag");
            let mut other = call.clone();
            other.request_tags.insert(FAMILY.into(), "other".into());
            denied(&other.requests()[0], "(e) CreateTable with another family");
            continue;
        }
        let on_sibling = call.retargeted(SIBLING, siblings());
        let on_untagged = call.retargeted(UNTAGGED, Tags::new());
        for (sibling, untagged) in on_sibling.requests().iter().zip(on_untagged.requests()) {
            if changes(&sibling.action) {
                denied(sibling, "(b) a change on a sibling family's table");
                refused_on_sibling.insert(sibling.action.clone());
                if FAMILY_ONLY.contains(&sibling.action.as_str()) {
                    denied(
                        &untagged,
                        "(c) DeleteTable, or the seal before it, on a table without the family tag",
                    );
                } else {
                    allowed(
                        &untagged,
                        "a change on one of our tables made before the family tag",
                    );
                }
            } else {
                allowed(sibling, "(f) a read of a sibling family's table");
            }
        }
        if call.operation == "TagResource" {
            // (d)
            for target in [call.clone(), on_untagged] {
                let mut other = target;
                other.request_tags.insert(FAMILY.into(), "other".into());
                denied(&other.requests()[0], "(d) TagResource writing another family");
            }
        }
    }
    // Every changing action the function sends on its own (not as part of a CreateTable, which
    // is not turned on the sibling: see above). create_new's TagResource is only CreateTable's
    // Tags in these scenarios; its refusal on another family is (e) and the 32-combination test.
    let standalone: BTreeSet<String> = calls
        .iter()
        .filter(|c| c.action() != "dynamodb:CreateTable" && !on_ledger(c))
        .flat_map(Call::actions)
        .collect();
    let changing: BTreeSet<String> = d
        .needed()
        .into_iter()
        .filter(|a| changes(a) && a != "dynamodb:CreateTable" && standalone.contains(a))
        .collect();
    assert_eq!(
        refused_on_sibling,
        changing,
        "{}: changing actions refused on the sibling's table (left) vs. changing actions granted (right)",
        d.id()
    );
}

#[tokio::test]
async fn every_call_the_functions_send_is_allowed_and_nothing_beside_the_prefix() {
    let functions = deploy(&[]);
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    seed_tables(&client).await;
    start_ledger(&client, &functions).await;

    for d in &functions {
        let recorder = Recorder::new(&client);
        let at = scenario::scheduled_time(d.operation());
        run_day(d, &client, None, &recorder, at).await;
        check_calls(d, &recorder.take().into_iter().collect());
    }
    assert_eq!(
        tags_of(&client, SIBLING).await,
        siblings(),
        "the sibling's tags changed"
    );
}

/// Days the retention scenario runs: with ArchiveAfter 1, DeleteAfter 2 and the three newest
/// tables always kept, 2018-10-25 is exported on the second day, sealed against writes once
/// due for deletion, exported again the run after, and deleted once that export is proven.
const RETENTION_DAYS: u32 = 9;

#[tokio::test]
async fn with_every_option_on_each_call_is_allowed_and_each_grant_is_used() {
    let functions = deploy(&RETENTION_STACK);
    let db = LocalDynamo::start(Server::Moto);
    db.create_bucket("archive-bucket");
    let client = db.client().await;
    seed_tables(&client).await;
    start_ledger(&client, &functions).await;

    let s3 = crate::support::aws_clients(db.endpoint()).await.s3;
    let recorders: Vec<Recorder> = functions.iter().map(|_| Recorder::new(&client)).collect();
    for day in 0..RETENTION_DAYS {
        for (d, recorder) in functions.iter().zip(&recorders) {
            let at = scenario::scheduled_time_on_day(d.operation(), day);
            run_day(d, &client, Some(&s3), recorder, &at).await;
        }
    }
    for (d, recorder) in functions.iter().zip(&recorders) {
        check_calls(d, &recorder.take().into_iter().collect());
    }

    // DynamoDB writes the export's objects with the caller's permissions: each must be one
    // the role allows.
    let resize = functions
        .iter()
        .find(|d| d.operation() == Operation::ResizeOld)
        .expect("a resize_old function");
    let objects = db.list_objects("archive-bucket", "");
    assert!(!objects.is_empty(), "nothing was exported to archive-bucket");
    for key in &objects {
        let arn = format!("arn:aws:s3:::archive-bucket/{key}");
        for action in EXPORT_S3_ACTIONS {
            assert!(
                evaluate(&resize.statements, &Request::new(action, &arn)).is_allowed(),
                "{action} on {arn}: the export would fail"
            );
        }
        for action in PROOF_S3_ACTIONS {
            assert!(
                evaluate(&resize.statements, &Request::new(action, &arn)).is_allowed(),
                "{action} on {arn}: the archive could not be proven before a deletion"
            );
        }
        // The key's own folder listed: a missing file there answers 404, not 403.
        let folder = &key[..key.rfind('/').map_or(0, |at| at + 1)];
        assert!(
            evaluate(
                &resize.statements,
                &Request::new(PROOF_LIST_ACTION, ARCHIVE_BUCKET).with_context("s3:prefix", folder)
            )
            .is_allowed(),
            "s3:ListBucket for {folder:?}: a missing file under it would read as a refusal"
        );
    }

    let remaining = testkit::describe_all(&client).await;
    // Made by the functions (our family tag at CreateTable): deleted once due.
    assert!(
        !remaining.contains_key("timeseries_2018-10-25"),
        "timeseries_2018-10-25 was not deleted: {:?}",
        remaining.keys()
    );
    // Made by hand with our name and key, never recorded: not the family's, so never changed
    // (check_calls), never given the family tag and never deleted.
    assert!(
        remaining.contains_key(HAND_MADE),
        "the hand-made {HAND_MADE} was deleted"
    );
    assert!(
        !tags_of(&client, HAND_MADE).await.contains_key(FAMILY),
        "the hand-made {HAND_MADE} was given the family tag"
    );
    assert_eq!(
        testkit::capacity_of(&remaining[HAND_MADE]),
        (300, 1000),
        "the hand-made {HAND_MADE} was resized"
    );
    for name in [
        "timeseries_backup",
        "timeseriesX_2018-10-25",
        "other_2018-10-25",
        SIBLING,
    ] {
        assert!(
            remaining.contains_key(name),
            "{name} is gone: {:?}",
            remaining.keys()
        );
    }
    assert_eq!(
        tags_of(&client, SIBLING).await,
        siblings(),
        "the sibling's tags changed"
    );
}

/// The Lambda requests a client sends, as (HTTP method, path, body): Lambda's REST API names the
/// operation by both (`POST /2015-03-31/event-source-mappings/` creates a mapping, `GET` on it
/// lists, `DELETE .../UUID` deletes one).
#[derive(Clone, Debug, Default)]
struct LambdaRequests(std::sync::Arc<std::sync::Mutex<Vec<LambdaHttp>>>);

/// One Lambda request: (HTTP method, path after the API version, body).
type LambdaHttp = (String, String, Vec<u8>);

impl aws_sdk_lambda::config::Intercept for LambdaRequests {
    fn name(&self) -> &'static str {
        "deploy checks' Lambda request recorder"
    }

    fn read_before_transmit(
        &self,
        context: &aws_sdk_lambda::config::interceptors::BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &aws_sdk_lambda::config::RuntimeComponents,
        _cfg: &mut aws_sdk_lambda::config::ConfigBag,
    ) -> Result<(), aws_sdk_lambda::error::BoxError> {
        let request = context.request();
        let path = request.uri().split('?').next().unwrap_or_default();
        let path = path
            .split_once("/2015-03-31/")
            .map_or(path, |(_, p)| p)
            .to_owned();
        let body = request.body().bytes().unwrap_or_default().to_vec();
        self.0
            .lock()
            .unwrap()
            .push((request.method().to_owned(), path, body));
        Ok(())
    }
}

/// A request of the consumer's mappings as IAM sees it: the action, its resource (a mapping's
/// ARN in the stack's account and Region, or `*`) and the function it maps (`lambda:FunctionArn`;
/// a deleted mapping's function as Lambda listed it before).
fn lambda_request(
    (method, path, body): &LambdaHttp,
    functions: &std::collections::BTreeMap<String, String>,
) -> Request {
    let uuid = path
        .strip_prefix("event-source-mappings/")
        .filter(|uuid| !uuid.is_empty());
    match (method.as_str(), uuid) {
        ("POST", None) => {
            let body: serde_json::Value = serde_json::from_slice(body).unwrap();
            let function = body["FunctionName"].as_str().unwrap();
            Request::new("lambda:CreateEventSourceMapping", "*").with_context("lambda:FunctionArn", function)
        }
        ("GET", None) => Request::new("lambda:ListEventSourceMappings", "*"),
        ("DELETE", Some(uuid)) => {
            let function = functions
                .get(uuid)
                .unwrap_or_else(|| panic!("DeleteEventSourceMapping {uuid}: a mapping never listed"));
            Request::new(
                "lambda:DeleteEventSourceMapping",
                &format!("arn:aws:lambda:us-east-1:123456789012:event-source-mapping:{uuid}"),
            )
            .with_context("lambda:FunctionArn", function)
        }
        ("PUT", Some(uuid)) => {
            let function = functions
                .get(uuid)
                .unwrap_or_else(|| panic!("UpdateEventSourceMapping {uuid}: a mapping never listed"));
            Request::new(
                "lambda:UpdateEventSourceMapping",
                &format!("arn:aws:lambda:us-east-1:123456789012:event-source-mapping:{uuid}"),
            )
            .with_context("lambda:FunctionArn", function)
        }
        other => panic!("an unexpected Lambda request: {method} {path} ({other:?})"),
    }
}

/// With ConsumerFunctionArn (and deletions), every Lambda call the functions send over the
/// days is allowed by its role, with the function each maps or unmaps; the Lambda actions sent
/// are exactly those granted (create_new maps, lists and puts our mapping's batch size back
/// after someone changed it, resize_old lists and unmaps); and the
/// DynamoDB calls pass [`check_calls`] as without a consumer.
#[tokio::test]
async fn with_a_consumer_each_mapping_call_is_allowed_and_each_grant_is_used() {
    let db = LocalDynamo::start(Server::Moto);
    let consumer = crate::support::lambda::create_function(db.server_endpoint(), "ingest-consumer").await;
    let overrides = [("ConsumerFunctionArn", consumer.as_str()), ("DeleteAfter", "2")];
    let functions = deploy(&overrides);
    let client = db.client().await;
    seed_tables(&client).await;
    start_ledger(&client, &functions).await;
    // The seeded pre-built table was made without a stream; the runs map only a table that
    // has one (create_new turns it on only for the tables it creates), so it gets one here.
    client
        .update_table()
        .table_name("timeseries_2018-10-26")
        .stream_specification(
            aws_sdk_dynamodb::types::StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(aws_sdk_dynamodb::types::StreamViewType::NewAndOldImages)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let plain = crate::support::lambda::lambda_client(db.server_endpoint());
    let recorders: Vec<(Recorder, LambdaRequests)> = functions
        .iter()
        .map(|_| (Recorder::new(&client), LambdaRequests::default()))
        .collect();
    // Every mapping's function by its UUID, as Lambda lists it after each run.
    let mut mapped = std::collections::BTreeMap::new();
    for day in 0..RETENTION_DAYS {
        for (d, (recorder, requests)) in functions.iter().zip(&recorders) {
            let lambda = aws_sdk_lambda::Client::from_conf(
                plain.config().to_builder().interceptor(requests.clone()).build(),
            );
            let at = scenario::scheduled_time_on_day(d.operation(), day);
            run_day_with(d, &client, None, Some(&lambda), recorder, &at).await;
            let listed = plain.list_event_source_mappings().send().await.unwrap();
            for m in listed.event_source_mappings() {
                mapped.insert(
                    m.uuid().unwrap_or_default().to_owned(),
                    m.function_arn().unwrap_or_default().to_owned(),
                );
            }
        }
        if day == 0 {
            // Someone changes the batch size of ours on the table current on day 1: that day's
            // create_new puts it back (UpdateEventSourceMapping).
            let stream = testkit::describe(&client, "timeseries_2018-10-26")
                .await
                .latest_stream_arn()
                .expect("the pre-built table has a stream")
                .to_owned();
            let listed = plain
                .list_event_source_mappings()
                .event_source_arn(&stream)
                .send()
                .await
                .unwrap();
            let ours = listed.event_source_mappings()[0].uuid().unwrap().to_owned();
            plain
                .update_event_source_mapping()
                .uuid(&ours)
                .batch_size(7)
                .send()
                .await
                .unwrap();
        }
    }
    assert!(!mapped.is_empty(), "create_new mapped nothing");
    for (d, (recorder, requests)) in functions.iter().zip(&recorders) {
        check_calls(d, &recorder.take().into_iter().collect());
        let requests = requests.0.lock().unwrap().clone();
        let mut sent = BTreeSet::new();
        for request in &requests {
            let request = lambda_request(request, &mapped);
            let decision = evaluate(&d.statements, &request);
            assert!(
                decision.is_allowed(),
                "{}: {} on {} for {:?} is not allowed by its role ({decision:?})",
                d.id(),
                request.action,
                request.resource,
                request.context
            );
            sent.insert(request.action);
        }
        let granted: BTreeSet<String> = d
            .features
            .mapping_actions(d.operation())
            .into_iter()
            .map(|(action, _)| action.to_owned())
            .collect();
        assert_eq!(
            sent,
            granted,
            "{}: Lambda actions sent (left) vs. granted (right)",
            d.id()
        );
    }
    // The days did delete a table (so resize_old unmapped it).
    let remaining = testkit::describe_all(&client).await;
    assert!(
        !remaining.contains_key("timeseries_2018-10-25"),
        "timeseries_2018-10-25 was not deleted: {:?}",
        remaining.keys()
    );
}
