//! The functions' IAM roles in template.yaml against what the code really sends.
//!
//! The schedule scenario of `schedule_inputs.rs` runs again with an SDK client that records
//! every DynamoDB request; each (action, resource) is then evaluated against the statements
//! of the function's role, resolved for a stack in us-east-1 of account 123456789012: once
//! with the parameter defaults, once with every optional part on (TTL, point-in-time recovery,
//! deletion protection, archiving to S3, deletion) over several days. Neither moto nor dynalite
//! enforces IAM, so this is where an action the engine starts sending, or a table outside the
//! prefix it starts touching, shows up before a deployment fails with AccessDenied; and where
//! a permission nothing uses shows up as a grant to remove.
//!
//! Families: every changing statement is conditioned on the tag `ddb-rollover:family` (the
//! stack's TablePrefix), so that a sibling stack whose prefix nests in ours (`timeseries_eu`
//! inside `table/timeseries_*`) cannot have its tables changed by our role. Each recorded call
//! is evaluated with the tags its table carried on moto when it was sent and the tags it wrote;
//! the same calls are then turned on a sibling's table, on an untagged one, and given another
//! family, to show the conditions refuse exactly what they should.

use std::collections::BTreeSet;

use aws_model::iam::{self, evaluate, tags, Decision, Request, Statement, Tags};
use aws_model::stack::table_arn;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, KeySchemaElement, KeyType, ProvisionedThroughput, ScalarAttributeType,
};
use ddb_rollover::aws::dynamodb::DynamoDb;
use ddb_rollover::Operation;
use deploy_checks::features::{
    archive_s3_actions, combinations, Features, AUTOSCALING_ACTIONS, EXPORT_S3_ACTIONS, PROOF_LIST_ACTION,
    PROOF_S3_ACTIONS, SCALING_READS,
};
use deploy_checks::recorder::{Call, Recorder};
use deploy_checks::scenario;
use deploy_checks::template::{Function, RepoTemplate, Template};
use testkit::{LocalDynamo, Server};

/// Every optional part on, with ages short enough that a few days export and delete tables.
const RETENTION_STACK: [(&str, &str); 6] = [
    ("TtlAttribute", "expires_at"),
    ("PointInTimeRecovery", "true"),
    ("DeletionProtection", "true"),
    ("ArchiveBucket", "archive-bucket"),
    ("ArchiveAfter", "1"),
    ("DeleteAfter", "2"),
];
const ARCHIVE_OBJECTS: &str = "arn:aws:s3:::archive-bucket/ddb-rollover/*";
const ARCHIVE_BUCKET: &str = "arn:aws:s3:::archive-bucket";
/// ArchivePrefix's default.
const ARCHIVE_PREFIX: &str = "ddb-rollover/";

/// The tag that says which stack's tables a table belongs to, and our stack's value for it
/// (TablePrefix's default).
const FAMILY: &str = "ddb-rollover:family";
const PREFIX: &str = "timeseries";
/// A sibling stack's table, inside our resource pattern `table/timeseries_*`: its stack has the
/// prefix `timeseries_eu`.
const SIBLING: &str = "timeseries_eu_2018-10-18";
const SIBLING_FAMILY: &str = "timeseries_eu";
/// One of our names on a table without the family tag (made before the tag existed).
const UNTAGGED: &str = "timeseries_2018-10-18";

/// Our family tag.
fn ours() -> Tags {
    tags(&[(FAMILY, PREFIX)])
}

/// The sibling's tags, as its own stack's create_new would have set them.
fn siblings() -> Tags {
    tags(&[
        (FAMILY, SIBLING_FAMILY),
        ("ddb-rollover:period-start", "2018-10-18T00:00:00+00:00"),
        ("ddb-rollover:period-end", "2018-10-19T00:00:00+00:00"),
    ])
}

/// Whether an action changes a table: everything but reads (`Describe*`, `List*`).
/// The changes a table must carry our family tag for: its deletion, and the seal against item
/// writes that comes before it.
const FAMILY_ONLY: [&str; 4] = [
    "dynamodb:DeleteTable",
    "dynamodb:GetResourcePolicy",
    "dynamodb:PutResourcePolicy",
    "dynamodb:DeleteResourcePolicy",
];

fn changes(action: &str) -> bool {
    let name = action.split_once(':').map_or(action, |(_, name)| name);
    !(name.starts_with("Describe") || name.starts_with("List"))
}

/// The resource `action` names for `table`: the table, one of its exports, or `*`.
fn resource_of(action: &str, table: &str) -> String {
    match action {
        "dynamodb:ListTables" => "*".into(),
        "dynamodb:DescribeExport" => format!("{}/export/01234567890123-abcdef12", table_arn(table)),
        _ => table_arn(table),
    }
}

/// What a role may allow besides DynamoDB and the archive's S3 objects: its own log group, and
/// the failure queue that Lambda's OnFailure destination writes with the function's role.
const OTHER_ACTIONS: [&str; 3] = ["logs:CreateLogStream", "logs:PutLogEvents", "sqs:SendMessage"];

/// What the functions publish (crates/lambda/src/publish.rs).
const PUBLISH_ACTIONS: [&str; 2] = ["ssm:PutParameter", "events:PutEvents"];

/// The one resource each publishing action is granted on: the prefix's parameter, the
/// account's default event bus.
fn publish_resource(action: &str, prefix: &str) -> String {
    match action {
        "ssm:PutParameter" => {
            format!("arn:aws:ssm:us-east-1:123456789012:parameter/ddb-rollover/{prefix}/tables")
        }
        "events:PutEvents" => "arn:aws:events:us-east-1:123456789012:event-bus/default".to_owned(),
        other => panic!("{other} is not a publishing action"),
    }
}

/// Publishing, request by request, for each setting of its two switches: the parameter of this
/// prefix only and only by create_new; events on the default bus with the source
/// `ddb-rollover` only, by both functions.
#[test]
fn publishing_is_granted_for_its_parameter_and_its_source_only() {
    for tables in ["true", "false"] {
        for events in ["true", "false"] {
            let overrides = [("PublishTables", tables), ("PublishEvents", events)];
            for d in deploy(&overrides) {
                let allowed = |request: &Request| evaluate(&d.statements, request).is_allowed();
                let what = format!("{} with {overrides:?}", d.id());
                let ours = Request::new("ssm:PutParameter", &publish_resource("ssm:PutParameter", PREFIX));
                assert_eq!(
                    allowed(&ours),
                    tables == "true" && d.operation() == Operation::CreateNew,
                    "{what}: our parameter"
                );
                let theirs = Request::new(
                    "ssm:PutParameter",
                    &publish_resource("ssm:PutParameter", SIBLING_FAMILY),
                );
                assert!(!allowed(&theirs), "{what}: a sibling stack's parameter");
                let bus = publish_resource("events:PutEvents", PREFIX);
                let event = |source: &str| {
                    Request::new("events:PutEvents", &bus).with_context("events:source", source)
                };
                assert_eq!(
                    allowed(&event("ddb-rollover")),
                    events == "true",
                    "{what}: our events"
                );
                assert!(!allowed(&event("aws.dynamodb")), "{what}: another source");
                assert!(
                    !allowed(&Request::new("events:PutEvents", &bus)),
                    "{what}: an event without its source"
                );
                let other_bus = Request::new(
                    "events:PutEvents",
                    "arn:aws:events:us-east-1:123456789012:event-bus/orders",
                )
                .with_context("events:source", "ddb-rollover");
                assert!(!allowed(&other_bus), "{what}: another bus");
            }
        }
    }
}

/// A function of the stack, its role's statements, and what the stack turns on.
struct Deployed {
    function: Function,
    statements: Vec<Statement>,
    features: Features,
}

impl Deployed {
    fn id(&self) -> &str {
        &self.function.logical_id
    }

    fn operation(&self) -> Operation {
        self.function
            .operation()
            .unwrap_or_else(|| panic!("{}: no operation", self.id()))
    }

    fn needed(&self) -> BTreeSet<String> {
        self.features
            .needed(self.operation())
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

/// The template with these parameter overrides.
fn template(overrides: &[(&str, &str)]) -> Template {
    let mut template = Template::load();
    for (name, value) in overrides {
        template.set_parameter(name, value);
    }
    template
}

/// The stack's functions in day order (create_new first), with their roles' statements.
fn deploy(overrides: &[(&str, &str)]) -> Vec<Deployed> {
    let template = template(overrides);
    let functions = template
        .functions()
        .unwrap_or_else(|e| panic!("template.yaml: {e}"));
    scenario::in_day_order(functions)
        .into_iter()
        .map(|function| {
            let role = function
                .role
                .clone()
                .unwrap_or_else(|| panic!("{}: needs Role: !GetAtt SOME_ROLE.Arn", function.logical_id));
            let statements = template
                .role_statements(&role)
                .unwrap_or_else(|e| panic!("{}: {e}", function.logical_id));
            Deployed {
                function,
                statements,
                features: Features::of(overrides),
            }
        })
        .collect()
}

#[test]
fn no_wildcard_or_negated_actions_and_only_allow() {
    for overrides in combinations() {
        let template = template(&overrides);
        for (id, _) in template.resources_of_type("AWS::IAM::Role") {
            for s in template.role_statements(&id).unwrap_or_else(|e| panic!("{e}")) {
                let what = format!("{id} {} with {overrides:?}", s.label());
                assert_eq!(s.effect, "Allow", "{what}: only Allow statements expected");
                assert!(s.not_actions.is_empty() && s.not_resources.is_empty(), "{what}");
                assert!(!s.actions.is_empty(), "{what}: no Action");
                for a in &s.actions {
                    assert!(
                        !a.contains('*') && !a.contains('?'),
                        "{what}: wildcard action {a:?}; name each action"
                    );
                }
            }
        }
    }
    // SAM's own Policies on a function would add statements this check does not see.
    let template = Template::load();
    for (id, f) in template.resources_of_type("AWS::Serverless::Function") {
        let props = f.get("Properties").unwrap();
        assert!(
            props.get("Policies").is_none(),
            "{id}: use the explicit Role, not SAM Policies"
        );
    }
}

/// The resource patterns an action may be granted on: its own table ARNs, or `*` for
/// ListTables, which cannot be scoped to a table.
fn expected_resources(action: &str) -> Vec<String> {
    match action.to_ascii_lowercase().as_str() {
        "dynamodb:listtables" => vec!["*".into()],
        "dynamodb:describeexport" => vec![format!("{}/export/*", table_arn("timeseries_*"))],
        "s3:listbucket" => vec![ARCHIVE_BUCKET.into()],
        a if a.starts_with("s3:") => vec![ARCHIVE_OBJECTS.into()],
        _ => vec![table_arn("timeseries_*")],
    }
}

/// The service-linked role Application Auto Scaling creates for DynamoDB, and its service.
const SCALING_ROLE: &str = "arn:aws:iam::123456789012:role/aws-service-role/dynamodb.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_DynamoDBTable";
const SCALING_SERVICE: &str = "dynamodb.application-autoscaling.amazonaws.com";
/// Any DynamoDB scalable target of the account and Region (their ARNs end in a generated id).
const SCALABLE_TARGETS: &str = "arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/*";
/// The alarms target tracking makes for our tables and their indexes.
const SCALING_ALARMS: &str =
    "arn:aws:cloudwatch:us-east-1:123456789012:alarm:TargetTracking-table/timeseries_*";

/// The resource patterns an autoscaling action may be granted on: as tight as each allows.
fn expected_scaling_resources(action: &str) -> Vec<String> {
    let one = |r: &str| vec![r.to_owned()];
    match action {
        "application-autoscaling:DescribeScalableTargets"
        | "application-autoscaling:DescribeScalingPolicies"
        | "application-autoscaling:DescribeScheduledActions"
        | "cloudwatch:DescribeAlarms" => one("*"),
        "cloudwatch:PutMetricAlarm" | "cloudwatch:DeleteAlarms" => one(SCALING_ALARMS),
        "iam:CreateServiceLinkedRole" => one(SCALING_ROLE),
        _ => one(SCALABLE_TARGETS),
    }
}

/// A request for an autoscaling action as the executor (or Application Auto Scaling's
/// validation) would send it for our table `timeseries_2018-10-25`.
fn scaling_request(action: &str) -> Request {
    let alarm = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:TargetTracking-table/timeseries_2018-10-25-AlarmHigh-1a2b";
    match expected_scaling_resources(action)[0].as_str() {
        "*" => Request::new(action, "*"),
        SCALING_ALARMS => Request::new(action, alarm),
        SCALING_ROLE => {
            Request::new(action, SCALING_ROLE).with_context("iam:AWSServiceName", SCALING_SERVICE)
        }
        _ => Request::new(
            action,
            "arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/0123456789abcdef",
        )
        .with_context("application-autoscaling:service-namespace", "dynamodb")
        .with_context(
            "application-autoscaling:scalable-dimension",
            "dynamodb:table:WriteCapacityUnits",
        ),
    }
}

/// Every statement's actions are expected ones, each on exactly its expected resources; the
/// DynamoDB actions granted are those the function needs, S3 ones only when archiving, and the
/// autoscaling ones only with Autoscaling=true.
fn check_grants(d: &Deployed, overrides: &[(&str, &str)]) {
    let mut dynamodb = BTreeSet::new();
    let mut s3 = BTreeSet::new();
    let mut scaling = BTreeSet::new();
    let mut publish = BTreeSet::new();
    for s in &d.statements {
        for a in &s.actions {
            let what = format!("{} {}: {a} with {overrides:?}", d.id(), s.label());
            let lower = a.to_ascii_lowercase();
            if PUBLISH_ACTIONS.contains(&a.as_str()) {
                publish.insert(a.clone());
                assert_eq!(s.resources, [publish_resource(a, PREFIX)], "{what}");
            } else if AUTOSCALING_ACTIONS.contains(&a.as_str()) {
                scaling.insert(a.clone());
                assert_eq!(s.resources, expected_scaling_resources(a), "{what}");
            } else if lower.starts_with("dynamodb:") || lower.starts_with("s3:") {
                if lower.starts_with("s3:") {
                    s3.insert(a.clone());
                } else {
                    dynamodb.insert(a.clone());
                }
                assert_eq!(s.resources, expected_resources(a), "{what}");
            } else {
                assert!(OTHER_ACTIONS.contains(&a.as_str()), "{what}: unexpected action");
                for r in &s.resources {
                    assert!(!r.contains('*'), "{what} on {r}: scope it");
                }
            }
        }
    }
    assert_eq!(
        dynamodb,
        d.needed(),
        "{}: DynamoDB actions granted with {overrides:?}",
        d.id()
    );
    let archiving = d.features.archive && d.operation() == Operation::ResizeOld;
    let expected_s3: BTreeSet<String> = if archiving {
        archive_s3_actions().iter().map(|a| a.to_string()).collect()
    } else {
        BTreeSet::new()
    };
    assert_eq!(
        s3,
        expected_s3,
        "{}: S3 actions granted with {overrides:?}",
        d.id()
    );
    let expected_publish: BTreeSet<String> = d
        .features
        .publish_actions(d.operation())
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        publish,
        expected_publish,
        "{}: publishing actions granted with {overrides:?}",
        d.id()
    );
    let expected_scaling: BTreeSet<String> = d
        .features
        .autoscaling_actions()
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        scaling,
        expected_scaling,
        "{}: autoscaling actions granted with {overrides:?}",
        d.id()
    );
}

/// The autoscaling grants, request by request: allowed for what the executor does on our
/// tables exactly when Autoscaling is true; never for another service's scalable targets,
/// another prefix's alarms, or another service-linked role.
#[test]
fn autoscaling_is_granted_only_with_autoscaling_and_only_for_dynamodb() {
    for overrides in combinations() {
        for d in deploy(&overrides) {
            let on = d.features.autoscaling;
            for action in AUTOSCALING_ACTIONS {
                let request = scaling_request(action);
                assert_eq!(
                    evaluate(&d.statements, &request).is_allowed(),
                    on || SCALING_READS.contains(&action),
                    "{}: {action} on {} with {overrides:?}",
                    d.id(),
                    request.resource
                );
            }
            if !on {
                continue;
            }
            let denied = |request: Request, what: &str| {
                assert_eq!(
                    evaluate(&d.statements, &request),
                    Decision::ImplicitDeny,
                    "{}: {what}: {} on {} ({:?})",
                    d.id(),
                    request.action,
                    request.resource,
                    request.context
                );
            };
            let target =
                "arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/0123456789abcdef";
            for action in [
                "application-autoscaling:RegisterScalableTarget",
                "application-autoscaling:PutScalingPolicy",
                "application-autoscaling:DeregisterScalableTarget",
                "application-autoscaling:DeleteScalingPolicy",
            ] {
                denied(
                    Request::new(action, target)
                        .with_context("application-autoscaling:service-namespace", "ecs"),
                    "another service's scalable target",
                );
                denied(Request::new(action, target), "no service namespace");
                denied(
                    Request::new(
                        action,
                        "arn:aws:application-autoscaling:eu-west-1:123456789012:scalable-target/0123",
                    )
                    .with_context("application-autoscaling:service-namespace", "dynamodb"),
                    "another Region",
                );
            }
            for action in ["cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms"] {
                denied(
                    Request::new(
                        action,
                        "arn:aws:cloudwatch:us-east-1:123456789012:alarm:TargetTracking-table/other_2018-10-25-AlarmLow-1",
                    ),
                    "another prefix's alarm",
                );
                denied(
                    Request::new(action, "arn:aws:cloudwatch:us-east-1:123456789012:alarm:billing"),
                    "an alarm not of target tracking",
                );
            }
            denied(
                Request::new("iam:CreateServiceLinkedRole", SCALING_ROLE)
                    .with_context("iam:AWSServiceName", "ecs.application-autoscaling.amazonaws.com"),
                "another service's linked role",
            );
            denied(
                Request::new(
                    "iam:CreateServiceLinkedRole",
                    "arn:aws:iam::123456789012:role/aws-service-role/ecs.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_ECSService",
                )
                .with_context("iam:AWSServiceName", SCALING_SERVICE),
                "another role",
            );
            denied(Request::new("iam:PassRole", SCALING_ROLE), "passing the role");
        }
    }
}

#[test]
fn each_function_has_exactly_its_actions_for_every_parameter_combination() {
    for overrides in combinations() {
        for d in deploy(&overrides) {
            check_grants(&d, &overrides);
        }
    }
}

#[test]
fn the_archive_statement_exists_exactly_when_archive_bucket_is_set() {
    let s3_statements = |overrides: &[(&str, &str)]| -> Vec<(String, Statement)> {
        deploy(overrides)
            .into_iter()
            .flat_map(|d| {
                let id = d.id().to_owned();
                d.statements
                    .into_iter()
                    .filter(|s| s.actions.iter().any(|a| a.starts_with("s3:")))
                    .map(move |s| (id.clone(), s))
            })
            .collect()
    };
    assert!(s3_statements(&[]).is_empty(), "S3 statements with the defaults");
    assert!(
        s3_statements(&[("DeleteAfter", "40")]).is_empty(),
        "S3 statements without archiving"
    );

    let archiving = s3_statements(&RETENTION_STACK);
    assert_eq!(archiving.len(), 2, "{archiving:#?}");
    assert!(
        archiving.iter().all(|(id, _)| id == "ResizeOldFunction"),
        "{archiving:#?}"
    );
    let (_, statement) = archiving
        .iter()
        .find(|(_, s)| s.resources == [ARCHIVE_OBJECTS])
        .expect("a statement on the archive's objects");
    let (_, listing) = archiving
        .iter()
        .find(|(_, s)| s.resources == [ARCHIVE_BUCKET])
        .expect("a statement on the archive bucket");
    assert_eq!(listing.actions, [PROOF_LIST_ACTION]);
    let mut actions: Vec<&str> = statement
        .actions
        .iter()
        .chain(&listing.actions)
        .map(String::as_str)
        .collect();
    actions.sort();
    assert_eq!(actions, archive_s3_actions());
    // Listing: the archive prefix and below, in this bucket only. With it a missing key is a
    // 404, not a 403 (S3 API Reference, HeadObject, "Permissions").
    let list = |bucket: &str, prefix: &str| {
        evaluate(
            std::slice::from_ref(listing),
            &Request::new("s3:ListBucket", bucket).with_context("s3:prefix", prefix),
        )
    };
    assert!(list(ARCHIVE_BUCKET, ARCHIVE_PREFIX).is_allowed());
    assert!(list(ARCHIVE_BUCKET, "ddb-rollover/timeseries/AWSDynamoDB/01/data/").is_allowed());
    for (bucket, prefix) in [
        (ARCHIVE_BUCKET, ""),
        (ARCHIVE_BUCKET, "other/"),
        (ARCHIVE_BUCKET, "ddb-rolloverX/"),
        ("arn:aws:s3:::other-bucket", ARCHIVE_PREFIX),
    ] {
        assert_eq!(
            list(bucket, prefix),
            Decision::ImplicitDeny,
            "{bucket} {prefix:?}"
        );
    }
    assert_eq!(
        evaluate(
            std::slice::from_ref(listing),
            &Request::new("s3:ListBucket", ARCHIVE_BUCKET)
        ),
        Decision::ImplicitDeny,
        "a listing without a prefix"
    );
    // Outside the prefix, or in another bucket: nothing.
    for outside in [
        "arn:aws:s3:::archive-bucket/other/x",
        "arn:aws:s3:::archive-bucket/ddb-rolloverX/x",
        "arn:aws:s3:::other-bucket/ddb-rollover/x",
        "arn:aws:s3:::archive-bucket",
    ] {
        assert_eq!(
            evaluate(
                std::slice::from_ref(statement),
                &Request::new("s3:PutObject", outside)
            ),
            Decision::ImplicitDeny,
            "{outside}"
        );
    }
}

async fn create_keyed_table(client: &aws_sdk_dynamodb::Client, name: &str, read: i64, write: i64) {
    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            // The template's default key types (what the application helpers need).
            .attribute_type(ScalarAttributeType::S)
            .build()
            .unwrap()
    };
    let key = |n: &str, t: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(n)
            .key_type(t)
            .build()
            .unwrap()
    };
    client
        .create_table()
        .table_name(name)
        .attribute_definitions(attr("pk"))
        .attribute_definitions(attr("sk"))
        .key_schema(key("pk", KeyType::Hash))
        .key_schema(key("sk", KeyType::Range))
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(read)
                .write_capacity_units(write)
                .build()
                .unwrap(),
        )
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

/// Tables the scenarios start with: tomorrow's pre-built too small (create_new raises it:
/// UpdateTable); a past one made before ddb-rollover tagged its tables or had a template
/// (resize_old tags it, and brings it to the template); and neighbours the functions must not
/// touch: same string prefix without the underscore, another prefix, a foreign name under the
/// prefix, and a sibling family's table under the prefix (with that family's tags), which may be
/// read but never changed.
async fn seed_tables(client: &aws_sdk_dynamodb::Client) {
    create_keyed_table(client, "timeseries_2018-10-26", 5, 5).await;
    create_keyed_table(client, "timeseries_2018-10-24", 300, 1000).await;
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

/// Tables under the prefix the functions may read but never change.
const NOT_OURS: [&str; 2] = ["timeseries_backup", SIBLING];

/// Runs every schedule of `d` at `at` with a client that records into `recorder`, and S3 at
/// `archives` (for the archive proofs before a deletion) when the scenario archives.
async fn run_day(
    d: &Deployed,
    client: &aws_sdk_dynamodb::Client,
    archives: Option<&aws_sdk_s3::Client>,
    recorder: &Recorder,
    at: &str,
) {
    let recording = recorder.attach(client);
    for s in &d.function.schedules {
        let mut control = DynamoDb::new(recording.clone());
        if let Some(s3) = archives {
            control = control.with_archives(s3.clone());
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

/// Every recorded call is allowed (with the tags its table carried and the tags it wrote) and
/// stays on the prefix's tables; a foreign name or a sibling family's table under the prefix is
/// only read; the actions sent are exactly the DynamoDB actions granted; each is denied beside
/// the prefix; and the family conditions hold on the calls themselves (see
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
    let sent: BTreeSet<String> = calls.iter().flat_map(Call::actions).collect();
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
        if call.table_name().is_none() {
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
        .filter(|c| c.action() != "dynamodb:CreateTable")
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
    // Made by hand with our name and key: managed, but never given the family tag and never
    // deleted (nothing proves the family made it).
    assert!(
        remaining.contains_key("timeseries_2018-10-24"),
        "the hand-made timeseries_2018-10-24 was deleted"
    );
    assert!(
        !tags_of(&client, "timeseries_2018-10-24")
            .await
            .contains_key(FAMILY),
        "the hand-made timeseries_2018-10-24 was given the family tag"
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

#[test]
fn actions_beyond_the_needed_ones_are_denied_on_the_prefix_tables() {
    let own = table_arn("timeseries_2018-10-25");
    for overrides in combinations() {
        for d in deploy(&overrides) {
            let needed = d.needed();
            for action in [
                "dynamodb:CreateTable",
                "dynamodb:UpdateTable",
                "dynamodb:DeleteTable",
                "dynamodb:PutItem",
                "dynamodb:GetItem",
                "dynamodb:Scan",
                "dynamodb:Query",
                "dynamodb:DeleteItem",
                "dynamodb:UpdateTimeToLive",
                "dynamodb:UpdateContinuousBackups",
                "dynamodb:ExportTableToPointInTime",
                "dynamodb:TagResource",
                "dynamodb:UntagResource",
                "dynamodb:CreateBackup",
                "dynamodb:RestoreTableToPointInTime",
                "dynamodb:GetResourcePolicy",
                "dynamodb:PutResourcePolicy",
                "dynamodb:DeleteResourcePolicy",
            ] {
                // Our own family on both sides: only the granted actions can be allowed.
                let request = Request::new(action, &own)
                    .with_resource_tags(ours())
                    .with_request_tags(ours());
                let allowed = evaluate(&d.statements, &request).is_allowed();
                assert_eq!(
                    allowed,
                    needed.contains(action),
                    "{}: {action} on {own} with {overrides:?}",
                    d.id()
                );
            }
            assert!(
                !iam::evaluate(&d.statements, &Request::new("dynamodb:DescribeTable", "*")).is_allowed(),
                "{}: DescribeTable on *",
                d.id()
            );
        }
    }
}

/// The family conditions for every parameter combination, request by request, without moto:
/// what [`check_family_conditions`] shows on recorded calls, for every action each role grants.
#[test]
fn family_tags_decide_every_change_for_every_parameter_combination() {
    const OWN: &str = "timeseries_2018-10-25";
    for overrides in combinations() {
        for d in deploy(&overrides) {
            let check = |request: Request, expect_allowed: bool, what: &str| {
                let decision = evaluate(&d.statements, &request);
                assert_eq!(
                    decision.is_allowed(),
                    expect_allowed,
                    "{} with {overrides:?}: {what}: {} on {} (table tags {:?}, request tags {:?}): \
                     {decision:?}",
                    d.id(),
                    request.action,
                    request.resource,
                    request.resource_tags,
                    request.request_tags,
                );
            };
            for action in d.needed() {
                if action == "dynamodb:ListTables" {
                    continue;
                }
                let on = |table: &str, resource_tags: Tags, request_tags: Tags| {
                    Request::new(&action, &resource_of(&action, table))
                        .with_resource_tags(resource_tags)
                        .with_request_tags(request_tags)
                };
                // What the functions write: our family, with CreateTable and when tagging.
                let writes = if matches!(action.as_str(), "dynamodb:CreateTable" | "dynamodb:TagResource") {
                    ours()
                } else {
                    Tags::new()
                };

                if action == "dynamodb:CreateTable" {
                    // (a), (e): a new table has no tags; only the Tags it is created with count.
                    check(
                        on(OWN, Tags::new(), ours()),
                        true,
                        "(a) CreateTable of our family",
                    );
                    let no_family = tags(&[("ddb-rollover:period-start", "2018-10-25T00:00:00+00:00")]);
                    check(
                        on(OWN, Tags::new(), no_family),
                        false,
                        "(e) CreateTable without the family tag",
                    );
                    check(
                        on(OWN, Tags::new(), Tags::new()),
                        false,
                        "(e) CreateTable without tags",
                    );
                    check(
                        on(OWN, Tags::new(), tags(&[(FAMILY, SIBLING_FAMILY)])),
                        false,
                        "(e) CreateTable of another family",
                    );
                    continue;
                }

                // (a) our own tagged table.
                check(on(OWN, ours(), writes.clone()), true, "(a) our table");
                if changes(&action) {
                    // (b) the sibling's table, inside the resource pattern.
                    check(
                        on(SIBLING, siblings(), writes.clone()),
                        false,
                        "(b) a sibling's table",
                    );
                    // (c) untagged: still managed (and tagged), but never deleted, nor sealed on
                    // the way to a deletion (the resource-based policy calls).
                    let family_only = FAMILY_ONLY.contains(&action.as_str());
                    check(
                        on(UNTAGGED, Tags::new(), writes.clone()),
                        !family_only,
                        "(c) an untagged table",
                    );
                } else {
                    // (f) reads of the sibling.
                    check(
                        on(SIBLING, siblings(), Tags::new()),
                        true,
                        "(f) reading a sibling's table",
                    );
                }
                if action == "dynamodb:TagResource" {
                    // (d) never writing another family, whatever the table carries; tags without
                    // the family key are fine on our tables.
                    let other = || tags(&[(FAMILY, "other")]);
                    check(on(OWN, ours(), other()), false, "(d) tagging another family");
                    check(
                        on(UNTAGGED, Tags::new(), other()),
                        false,
                        "(d) tagging another family",
                    );
                    let period = tags(&[("ddb-rollover:period-end", "2018-10-26T00:00:00+00:00")]);
                    check(
                        on(OWN, ours(), period.clone()),
                        true,
                        "tags without the family key",
                    );
                    check(
                        on(UNTAGGED, Tags::new(), period),
                        true,
                        "tags without the family key",
                    );
                    // The TagResource a CreateTable implies: a table that does not exist yet.
                    check(on(OWN, Tags::new(), ours()), true, "the Tags of a CreateTable");
                }
            }
        }
    }
}
