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

use std::collections::BTreeSet;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, KeySchemaElement, KeyType, ProvisionedThroughput, ScalarAttributeType,
};
use ddb_rollover::Operation;
use deploy_checks::features::{combinations, Features, EXPORT_S3_ACTIONS};
use deploy_checks::iam::{self, evaluate, table_arn, Decision, Statement};
use deploy_checks::recorder::{Call, Recorder};
use deploy_checks::scenario;
use deploy_checks::template::{Function, Template};
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

/// What a role may allow besides DynamoDB and the archive's S3 objects: its own log group, and
/// the failure queue that Lambda's OnFailure destination writes with the function's role.
const OTHER_ACTIONS: [&str; 3] = ["logs:CreateLogStream", "logs:PutLogEvents", "sqs:SendMessage"];

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
        a if a.starts_with("s3:") => vec![ARCHIVE_OBJECTS.into()],
        _ => vec![table_arn("timeseries_*")],
    }
}

/// Every statement's actions are expected ones, each on exactly its expected resources; the
/// DynamoDB actions granted are those the function needs, and S3 ones only when archiving.
fn check_grants(d: &Deployed, overrides: &[(&str, &str)]) {
    let mut dynamodb = BTreeSet::new();
    let mut s3 = BTreeSet::new();
    for s in &d.statements {
        for a in &s.actions {
            let what = format!("{} {}: {a} with {overrides:?}", d.id(), s.label());
            let lower = a.to_ascii_lowercase();
            if lower.starts_with("dynamodb:") || lower.starts_with("s3:") {
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
        EXPORT_S3_ACTIONS.iter().map(|a| a.to_string()).collect()
    } else {
        BTreeSet::new()
    };
    assert_eq!(
        s3,
        expected_s3,
        "{}: S3 actions granted with {overrides:?}",
        d.id()
    );
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
    assert_eq!(archiving.len(), 1, "{archiving:#?}");
    let (id, statement) = &archiving[0];
    assert_eq!(id, "ResizeOldFunction");
    assert_eq!(statement.resources, [ARCHIVE_OBJECTS]);
    let mut actions = statement.actions.clone();
    actions.sort();
    assert_eq!(actions, EXPORT_S3_ACTIONS);
    // Outside the prefix, or in another bucket: nothing.
    for outside in [
        "arn:aws:s3:::archive-bucket/other/x",
        "arn:aws:s3:::archive-bucket/ddb-rolloverX/x",
        "arn:aws:s3:::other-bucket/ddb-rollover/x",
        "arn:aws:s3:::archive-bucket",
    ] {
        assert_eq!(
            evaluate(std::slice::from_ref(statement), "s3:PutObject", outside),
            Decision::ImplicitDeny,
            "{outside}"
        );
    }
}

async fn create_keyed_table(client: &aws_sdk_dynamodb::Client, name: &str, read: i64, write: i64) {
    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            .attribute_type(ScalarAttributeType::N)
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

/// Tables the scenarios start with: tomorrow's pre-built too small (create_new raises it:
/// UpdateTable); a past one made before ddb-rollover tagged its tables or had a template
/// (resize_old tags it, and brings it to the template); and neighbours the functions must not
/// touch: same string prefix without the underscore, another prefix, and a foreign name under
/// the prefix, which may be read but never changed.
async fn seed_tables(client: &aws_sdk_dynamodb::Client) {
    create_keyed_table(client, "timeseries_2018-10-26", 5, 5).await;
    create_keyed_table(client, "timeseries_2018-10-24", 300, 1000).await;
    for name in ["timeseriesX_2018-10-25", "other_2018-10-25"] {
        testkit::create_plain_table(client, name).await;
    }
    create_keyed_table(client, "timeseries_backup", 5, 5).await;
}

/// Runs every schedule of `d` at `at` with a client that records into `recorder`.
async fn run_day(d: &Deployed, client: &aws_sdk_dynamodb::Client, recorder: &Recorder, at: &str) {
    let recording = recorder.attach(client);
    for s in &d.function.schedules {
        let report = scenario::run_schedule_at(&d.function, s, recording.clone(), at)
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

/// Every recorded call is allowed and stays on the prefix's tables; a foreign name under the
/// prefix is only read; the actions sent are exactly the DynamoDB actions granted; and each is
/// denied beside the prefix.
fn check_calls(d: &Deployed, calls: &BTreeSet<Call>) {
    assert!(!calls.is_empty(), "{}: recorded nothing", d.id());
    for call in calls {
        for action in call.actions() {
            let decision = evaluate(&d.statements, &action, &call.resource());
            assert!(
                decision.is_allowed(),
                "{}: {action} on {} is not allowed by its role ({decision:?}); the deployed function \
                 would get AccessDenied. Add the action (scoped to the prefix's tables) to the role in \
                 template.yaml.",
                d.id(),
                call.resource()
            );
        }
        if let Some(table) = call.table_name() {
            assert!(
                table.starts_with("timeseries_"),
                "{}: {} on {table}, outside the prefix",
                d.id(),
                call.action()
            );
            let read_only = call.operation.starts_with("Describe") || call.operation.starts_with("List");
            assert!(
                table != "timeseries_backup" || read_only,
                "{}: changed the foreign table: {call:?}",
                d.id()
            );
        }
    }

    // Every permission the role grants is one the scenario exercised: nothing is spare.
    let sent: BTreeSet<String> = calls.iter().flat_map(Call::actions).collect();
    assert_eq!(
        sent,
        d.needed(),
        "{}: actions sent (left) vs. actions granted (right)",
        d.id()
    );

    for action in &sent {
        if action == "dynamodb:ListTables" {
            continue;
        }
        for outside in outside_resources(action) {
            assert_eq!(
                evaluate(&d.statements, action, &outside),
                Decision::ImplicitDeny,
                "{}: {action} on {outside}",
                d.id()
            );
        }
    }
}

#[tokio::test]
async fn every_call_the_functions_send_is_allowed_and_nothing_beside_the_prefix() {
    let functions = deploy(&[]);
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    seed_tables(&client).await;

    for d in &functions {
        let recorder = Recorder::new();
        let at = scenario::scheduled_time(d.operation());
        run_day(d, &client, &recorder, at).await;
        check_calls(d, &recorder.take().into_iter().collect());
    }
}

/// Days the retention scenario runs: with ArchiveAfter 1, DeleteAfter 2 and the three newest
/// tables always kept, 2018-10-25 is exported on the second day and deleted on the fourth.
const RETENTION_DAYS: u32 = 6;

#[tokio::test]
async fn with_every_option_on_each_call_is_allowed_and_each_grant_is_used() {
    let functions = deploy(&RETENTION_STACK);
    let db = LocalDynamo::start(Server::Moto);
    db.create_bucket("archive-bucket");
    let client = db.client().await;
    seed_tables(&client).await;

    let recorders: Vec<Recorder> = functions.iter().map(|_| Recorder::new()).collect();
    for day in 0..RETENTION_DAYS {
        for (d, recorder) in functions.iter().zip(&recorders) {
            let at = scenario::scheduled_time_on_day(d.operation(), day);
            run_day(d, &client, recorder, &at).await;
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
                evaluate(&resize.statements, action, &arn).is_allowed(),
                "{action} on {arn}: the export would fail"
            );
        }
    }

    let remaining = testkit::describe_all(&client).await;
    for name in ["timeseries_2018-10-24", "timeseries_2018-10-25"] {
        assert!(
            !remaining.contains_key(name),
            "{name} was not deleted: {:?}",
            remaining.keys()
        );
    }
    for name in ["timeseries_backup", "timeseriesX_2018-10-25", "other_2018-10-25"] {
        assert!(
            remaining.contains_key(name),
            "{name} is gone: {:?}",
            remaining.keys()
        );
    }
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
            ] {
                let allowed = evaluate(&d.statements, action, &own).is_allowed();
                assert_eq!(
                    allowed,
                    needed.contains(action),
                    "{}: {action} on {own} with {overrides:?}",
                    d.id()
                );
            }
            assert!(
                !iam::evaluate(&d.statements, "dynamodb:DescribeTable", "*").is_allowed(),
                "{}: DescribeTable on *",
                d.id()
            );
        }
    }
}
