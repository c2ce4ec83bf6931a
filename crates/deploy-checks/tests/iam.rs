//! The functions' IAM roles in template.yaml against what the code really sends.
//!
//! The schedule scenario of `schedule_inputs.rs` runs again with an SDK client that records
//! every DynamoDB request; each (action, table ARN) is then evaluated against the statements
//! of the function's role, resolved for a stack with the parameter defaults in us-east-1 of
//! account 123456789012. Neither moto nor dynalite enforces IAM, so this is where an action the
//! engine starts sending, or a table outside the prefix it starts touching, shows up before a
//! deployment fails with AccessDenied.

use std::collections::BTreeSet;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, KeySchemaElement, KeyType, ProvisionedThroughput, ScalarAttributeType,
};
use ddb_rollover::Operation;
use deploy_checks::iam::{self, evaluate, table_arn, Decision, Statement};
use deploy_checks::recorder::{Call, Recorder};
use deploy_checks::scenario;
use deploy_checks::template::{Function, Template};
use testkit::{LocalDynamo, Server};

/// The DynamoDB actions each function needs, and no more.
fn needed(operation: Operation) -> BTreeSet<&'static str> {
    let actions: &[&'static str] = match operation {
        // UpdateTable: a pre-built table below phase 0 is raised.
        Operation::CreateNew => &[
            "dynamodb:ListTables",
            "dynamodb:DescribeTable",
            "dynamodb:CreateTable",
            "dynamodb:UpdateTable",
        ],
        Operation::ResizeOld => &[
            "dynamodb:ListTables",
            "dynamodb:DescribeTable",
            "dynamodb:UpdateTable",
        ],
    };
    actions.iter().copied().collect()
}

/// What a role may allow besides DynamoDB: its own log group, and the failure queue that
/// Lambda's OnFailure destination writes with the function's role.
const OTHER_ACTIONS: [&str; 3] = ["logs:CreateLogStream", "logs:PutLogEvents", "sqs:SendMessage"];

fn setup() -> (Template, Vec<(Function, Vec<Statement>)>) {
    let template = Template::load();
    let functions = template
        .functions()
        .unwrap_or_else(|e| panic!("template.yaml: {e}"));
    let with_statements = scenario::in_day_order(functions)
        .into_iter()
        .map(|f| {
            let role = f
                .role
                .clone()
                .unwrap_or_else(|| panic!("{}: needs Role: !GetAtt SOME_ROLE.Arn", f.logical_id));
            let statements = template
                .role_statements(&role)
                .unwrap_or_else(|e| panic!("{}: {e}", f.logical_id));
            (f, statements)
        })
        .collect();
    (template, with_statements)
}

fn operation(f: &Function) -> Operation {
    f.operation()
        .unwrap_or_else(|| panic!("{}: no operation", f.logical_id))
}

#[test]
fn no_wildcard_or_negated_actions_and_only_allow() {
    let (template, _) = setup();
    for (id, _) in template.resources_of_type("AWS::IAM::Role") {
        for s in template.role_statements(&id).unwrap_or_else(|e| panic!("{e}")) {
            assert_eq!(
                s.effect,
                "Allow",
                "{id} {}: only Allow statements expected",
                s.label()
            );
            assert!(
                s.not_actions.is_empty() && s.not_resources.is_empty(),
                "{id} {}",
                s.label()
            );
            assert!(!s.actions.is_empty(), "{id} {}: no Action", s.label());
            for a in &s.actions {
                assert!(
                    !a.contains('*') && !a.contains('?'),
                    "{id} {}: wildcard action {a:?}; name each action",
                    s.label()
                );
            }
        }
    }
    // SAM's own Policies on a function would add statements this check does not see.
    for (id, f) in template.resources_of_type("AWS::Serverless::Function") {
        let props = f.get("Properties").unwrap();
        assert!(
            props.get("Policies").is_none(),
            "{id}: use the explicit Role, not SAM Policies"
        );
    }
}

#[test]
fn each_function_has_exactly_its_dynamodb_actions_on_the_prefix_tables() {
    let (_, functions) = setup();
    let prefix_tables = table_arn("timeseries_*");
    for (f, statements) in &functions {
        let mut dynamodb = BTreeSet::new();
        for s in statements {
            for a in &s.actions {
                let lower = a.to_ascii_lowercase();
                if lower.starts_with("dynamodb:") {
                    dynamodb.insert(a.as_str());
                    let expected: &[&str] = if lower == "dynamodb:listtables" {
                        // ListTables cannot be scoped to a table.
                        &["*"]
                    } else {
                        &[prefix_tables.as_str()]
                    };
                    assert_eq!(s.resources, expected, "{} {}: {a}", f.logical_id, s.label());
                } else {
                    assert!(
                        OTHER_ACTIONS.contains(&a.as_str()),
                        "{} {}: unexpected action {a}",
                        f.logical_id,
                        s.label()
                    );
                    for r in &s.resources {
                        assert!(
                            !r.contains('*'),
                            "{} {}: {a} on {r}: scope it",
                            f.logical_id,
                            s.label()
                        );
                    }
                }
            }
        }
        assert_eq!(dynamodb, needed(operation(f)), "{}", f.logical_id);
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

#[tokio::test]
async fn every_call_the_functions_send_is_allowed_and_nothing_beside_the_prefix() {
    let (_, functions) = setup();
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    // Tomorrow's table pre-built too small: create_new raises it (UpdateTable).
    create_keyed_table(&client, "timeseries_2018-10-26", 5, 5).await;
    // Neighbours the functions must not touch: same string prefix without the underscore, and
    // another prefix. A foreign name under the prefix may be described but never changed.
    for name in ["timeseriesX_2018-10-25", "other_2018-10-25"] {
        testkit::create_plain_table(&client, name).await;
    }
    create_keyed_table(&client, "timeseries_backup", 5, 5).await;

    for (f, statements) in &functions {
        let recorder = Recorder::new();
        let recording = recorder.attach(&client);
        for s in &f.schedules {
            let report = scenario::run_schedule(f, s, recording.clone())
                .await
                .unwrap_or_else(|e| panic!("{}.{}: {e}", f.logical_id, s.event));
            assert_eq!(
                report.summary.failed, 0,
                "{}.{}: {report:#?}",
                f.logical_id, s.event
            );
        }
        let calls: BTreeSet<Call> = recorder.take().into_iter().collect();
        assert!(!calls.is_empty(), "{}: recorded nothing", f.logical_id);

        for call in &calls {
            let decision = evaluate(statements, &call.action(), &call.resource());
            assert!(
                decision.is_allowed(),
                "{}: {} on {} is not allowed by its role ({decision:?}); the deployed function would get \
                 AccessDenied. Add the action (scoped to the prefix's tables) to the role in template.yaml.",
                f.logical_id,
                call.action(),
                call.resource()
            );
            if let Some(table) = &call.table {
                assert!(
                    table.starts_with("timeseries_"),
                    "{}: {} on {table}, outside the prefix",
                    f.logical_id,
                    call.action()
                );
            }
        }
        if let Some(backup) = calls
            .iter()
            .find(|c| c.table.as_deref() == Some("timeseries_backup") && c.operation != "DescribeTable")
        {
            panic!("{}: changed the foreign table: {backup:?}", f.logical_id);
        }

        // Every permission the role grants is one the scenario exercised: nothing is spare.
        let sent: BTreeSet<String> = calls.iter().map(Call::action).collect();
        let needed: BTreeSet<String> = needed(operation(f)).into_iter().map(str::to_owned).collect();
        assert_eq!(sent, needed, "{}: actions sent vs. actions granted", f.logical_id);

        // The same actions on any table beside the prefix's are denied.
        for action in &sent {
            if action == "dynamodb:ListTables" {
                continue;
            }
            for outside in [
                table_arn("other_2018-10-25"),
                table_arn("timeseriesX_2018-10-25"),
                table_arn("timeseries"),
                "arn:aws:dynamodb:eu-west-1:123456789012:table/timeseries_2018-10-25".to_owned(),
                "arn:aws:dynamodb:us-east-1:210987654321:table/timeseries_2018-10-25".to_owned(),
            ] {
                assert_eq!(
                    evaluate(statements, action, &outside),
                    Decision::ImplicitDeny,
                    "{}: {action} on {outside}",
                    f.logical_id
                );
            }
        }
    }
}

#[test]
fn actions_beyond_the_needed_ones_are_denied_on_the_prefix_tables() {
    let (_, functions) = setup();
    let own = table_arn("timeseries_2018-10-25");
    for (f, statements) in &functions {
        let needed = needed(operation(f));
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
            "dynamodb:TagResource",
            "dynamodb:CreateBackup",
        ] {
            let allowed = evaluate(statements, action, &own).is_allowed();
            assert_eq!(
                allowed,
                needed.contains(action),
                "{}: {action} on {own}",
                f.logical_id
            );
        }
        assert!(
            !iam::evaluate(statements, "dynamodb:DescribeTable", "*").is_allowed(),
            "{}: DescribeTable on *",
            f.logical_id
        );
    }
}
