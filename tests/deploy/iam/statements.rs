//! The roles' statements alone, for every parameter combination: each action on exactly its
//! expected resources, publishing and autoscaling scoped to what the stack uses, anything
//! beyond the needed actions denied, and the family tags deciding every change.

use super::*;

/// What `statement` alone decides for `request`.
fn alone(statement: &Statement, request: &Request) -> Decision {
    evaluate(std::slice::from_ref(statement), request)
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

/// Only Allow statements, but the one Deny that keeps the roles off the ledger tables (its
/// request-by-request checks are crates/deploy-checks' `ledger` checks).
#[test]
fn no_wildcard_or_negated_actions_and_only_allow_but_the_ledgers_deny() {
    let ledgers = [
        table_arn(&ledger_name(PREFIX)),
        table_arn(&format!("{PREFIX}_*_ledger")),
    ];
    for overrides in combinations() {
        let template = template(&overrides);
        for (id, _) in template.resources_of_type("AWS::IAM::Role") {
            for s in template.role_statements(&id).unwrap_or_else(|e| panic!("{e}")) {
                let what = format!("{id} {} with {overrides:?}", s.label());
                if s.effect == "Deny" {
                    assert_eq!(
                        s.sid.as_deref(),
                        Some("KeepLedgers"),
                        "{what}: an unexpected Deny"
                    );
                    assert_eq!(s.resources, ledgers, "{what}: on the ledgers only");
                    assert_eq!(s.actions, LEDGER_DENIED, "{what}");
                    assert!(s.conditions.is_empty(), "{what}: whatever the ledger's tags");
                }
                assert!(
                    s.effect == "Allow" || s.effect == "Deny",
                    "{what}: Effect {}",
                    s.effect
                );
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
/// autoscaling ones only with Autoscaling=true; on the family's ledger exactly the ledger's
/// calls. (The ledger's Deny: [`no_wildcard_or_negated_actions_and_only_allow_but_the_ledgers_deny`].)
fn check_grants(d: &Deployed, overrides: &[(&str, &str)]) {
    let ledger_arn = table_arn(&ledger_name(PREFIX));
    let mut ledger = BTreeSet::new();
    let mut dynamodb = BTreeSet::new();
    let mut s3 = BTreeSet::new();
    let mut scaling = BTreeSet::new();
    let mut publish = BTreeSet::new();
    let mut stream = BTreeSet::new();
    let mut mapping = BTreeSet::new();
    for s in d.statements.iter().filter(|s| s.effect == "Allow") {
        for a in &s.actions {
            let what = format!("{} {}: {a} with {overrides:?}", d.id(), s.label());
            let lower = a.to_ascii_lowercase();
            if s.resources.contains(&ledger_arn) {
                assert_eq!(
                    s.resources,
                    std::slice::from_ref(&ledger_arn),
                    "{what}: the ledger alone"
                );
                ledger.insert(a.clone());
                continue;
            }
            let kinesis_role =
                a == "iam:CreateServiceLinkedRole" && s.resources == [KINESIS_REPLICATION_ROLE];
            if lower.starts_with("kinesis:") || kinesis_role {
                // Each on its one resource: collected as (action, resource).
                assert_eq!(s.resources.len(), 1, "{what}");
                stream.insert((a.clone(), s.resources[0].clone()));
            } else if lower.starts_with("lambda:") {
                // Each on its one resource, as for Kinesis; what each may map or unmap is
                // checked request by request (the_consumer_function_is_mapped_and_unmapped_only).
                assert_eq!(s.resources.len(), 1, "{what}");
                mapping.insert((a.clone(), s.resources[0].clone()));
            } else if PUBLISH_ACTIONS.contains(&a.as_str()) {
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
    assert_eq!(
        ledger,
        LEDGER_ACTIONS.iter().map(|a| a.to_string()).collect(),
        "{}: actions granted on the ledger with {overrides:?}",
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
    let expected_stream: BTreeSet<(String, String)> = d
        .features
        .stream_actions(d.operation())
        .into_iter()
        .map(|(a, r)| (a.to_owned(), r.to_owned()))
        .collect();
    assert_eq!(
        stream,
        expected_stream,
        "{}: Kinesis actions granted with {overrides:?}",
        d.id()
    );
    let expected_mapping: BTreeSet<(String, String)> = d
        .features
        .mapping_actions(d.operation())
        .into_iter()
        .map(|(a, r)| (a.to_owned(), r.to_owned()))
        .collect();
    assert_eq!(
        mapping,
        expected_mapping,
        "{}: Lambda actions granted with {overrides:?}",
        d.id()
    );
}

/// The consumer function's grants, request by request: create_new may map exactly
/// ConsumerFunctionArn (lambda:FunctionArn) to a stream and list mappings when the parameter is
/// set, and update a mapping of exactly that function (its settings back); resize_old may list
/// mappings when it deletes, whatever the parameter, and remove a mapping of exactly that
/// function when it deletes and the parameter is set. Neither may map, update or unmap another
/// function's mapping, or touch the functions themselves.
#[test]
fn the_consumer_function_is_mapped_and_unmapped_only_with_its_arn() {
    let other_function = "arn:aws:lambda:us-east-1:123456789012:function:orders-consumer";
    let mapping =
        "arn:aws:lambda:us-east-1:123456789012:event-source-mapping:6d9bce8e-836b-442c-8070-74e77903c815";
    let other_account =
        "arn:aws:lambda:us-east-1:210987654321:event-source-mapping:6d9bce8e-836b-442c-8070-74e77903c815";
    for overrides in combinations() {
        for d in deploy(&overrides) {
            let allowed = |request: &Request| evaluate(&d.statements, request).is_allowed();
            let what = format!("{} with {overrides:?}", d.id());
            let mapping_ours = d.features.consumer && d.operation() == Operation::CreateNew;
            let deleting = d.features.delete && d.operation() == Operation::ResizeOld;
            let unmapping = deleting && d.features.consumer;
            let of = |action: &str, resource: &str, function: &str| {
                Request::new(action, resource).with_context("lambda:FunctionArn", function)
            };
            let create = "lambda:CreateEventSourceMapping";
            assert_eq!(
                allowed(&of(create, "*", FUNCTION_ARN)),
                mapping_ours,
                "{what}: mapping ConsumerFunctionArn"
            );
            assert!(
                !allowed(&of(create, "*", other_function)),
                "{what}: mapping another function"
            );
            assert!(
                !allowed(&of(create, "*", &format!("{FUNCTION_ARN}:live"))),
                "{what}: mapping an alias of the function"
            );
            assert!(
                !allowed(&Request::new(create, "*")),
                "{what}: a mapping without its function"
            );
            assert_eq!(
                allowed(&Request::new("lambda:ListEventSourceMappings", "*")),
                mapping_ours || deleting,
                "{what}: ListEventSourceMappings"
            );
            let delete = "lambda:DeleteEventSourceMapping";
            assert_eq!(
                allowed(&of(delete, mapping, FUNCTION_ARN)),
                unmapping,
                "{what}: unmapping ConsumerFunctionArn"
            );
            assert!(
                !allowed(&of(delete, mapping, other_function)),
                "{what}: unmapping another function"
            );
            assert!(
                !allowed(&Request::new(delete, mapping)),
                "{what}: unmapping without the function"
            );
            assert!(
                !allowed(&of(delete, other_account, FUNCTION_ARN)),
                "{what}: a mapping of another account"
            );
            // create_new puts our mapping's settings back: an update of a mapping of exactly
            // ConsumerFunctionArn, in the stack's account.
            let update = "lambda:UpdateEventSourceMapping";
            assert_eq!(
                allowed(&of(update, mapping, FUNCTION_ARN)),
                mapping_ours,
                "{what}: updating a mapping of ConsumerFunctionArn"
            );
            for (request, case) in [
                (
                    of(update, mapping, other_function),
                    "updating a mapping of another function",
                ),
                (
                    of(update, mapping, &format!("{FUNCTION_ARN}:live")),
                    "updating a mapping of an alias of the function",
                ),
                (
                    Request::new(update, mapping),
                    "updating a mapping without its function",
                ),
                (
                    of(update, other_account, FUNCTION_ARN),
                    "updating a mapping of another account",
                ),
                (of(update, "*", FUNCTION_ARN), "updating on `*`"),
            ] {
                assert!(!allowed(&request), "{what}: {case}");
            }
            // Nothing of the functions themselves.
            for action in [
                "lambda:GetEventSourceMapping",
                "lambda:InvokeFunction",
                "lambda:UpdateFunctionConfiguration",
                "lambda:DeleteFunction",
            ] {
                for resource in [mapping, FUNCTION_ARN] {
                    assert!(
                        !allowed(&of(action, resource, FUNCTION_ARN)),
                        "{what}: {action} on {resource}"
                    );
                }
            }
        }
    }
}

/// The Kinesis destination's grants, request by request: create_new may enable a destination
/// on our tables and use exactly ChangeStreamArn's stream (and create DynamoDB's service-linked
/// role for it) when the parameter is set; resize_old may read any stream's metadata of the
/// account and Region when it deletes (a foreign destination may name any), never write one;
/// with the parameter empty and no deletion, nothing of Kinesis at all.
#[test]
fn the_change_stream_is_granted_on_exactly_its_stream() {
    let other_stream = "arn:aws:kinesis:us-east-1:123456789012:stream/orders-changes";
    let other_account = "arn:aws:kinesis:us-east-1:210987654321:stream/timeseries-changes";
    let own = table_arn("timeseries_2018-10-25");
    for overrides in combinations() {
        for d in deploy(&overrides) {
            let allowed = |request: &Request| evaluate(&d.statements, request).is_allowed();
            let what = format!("{} with {overrides:?}", d.id());
            let enabling = d.features.stream && d.operation() == Operation::CreateNew;
            let reading_any = d.features.delete && d.operation() == Operation::ResizeOld;
            let enable =
                Request::new("dynamodb:EnableKinesisStreamingDestination", &own).with_resource_tags(ours());
            assert_eq!(allowed(&enable), enabling, "{what}: enable on our table");
            for action in ["kinesis:DescribeStream", "kinesis:DescribeStreamSummary"] {
                assert_eq!(
                    allowed(&Request::new(action, STREAM_ARN)),
                    enabling || reading_any,
                    "{what}: {action} on ChangeStreamArn"
                );
                assert_eq!(
                    allowed(&Request::new(action, other_stream)),
                    reading_any,
                    "{what}: {action} on another stream"
                );
                assert!(
                    !allowed(&Request::new(action, other_account)),
                    "{what}: {action} in another account"
                );
            }
            assert_eq!(
                allowed(&Request::new("kinesis:PutRecords", STREAM_ARN)),
                enabling,
                "{what}: PutRecords on ChangeStreamArn"
            );
            assert_eq!(
                allowed(&Request::new("kinesis:ListStreams", "*")),
                enabling,
                "{what}: ListStreams"
            );
            for action in ["kinesis:PutRecords", "kinesis:PutRecord", "kinesis:GetRecords"] {
                assert!(
                    !allowed(&Request::new(action, other_stream)),
                    "{what}: {action} on another stream"
                );
            }
            for action in [
                "kinesis:GetRecords",
                "kinesis:DeleteStream",
                "kinesis:CreateStream",
            ] {
                assert!(!allowed(&Request::new(action, STREAM_ARN)), "{what}: {action}");
            }
            let role = |service: &str| {
                Request::new("iam:CreateServiceLinkedRole", KINESIS_REPLICATION_ROLE)
                    .with_context("iam:AWSServiceName", service)
            };
            assert_eq!(
                allowed(&role(KINESIS_REPLICATION_SERVICE)),
                enabling,
                "{what}: the Kinesis replication role"
            );
            assert!(
                !allowed(&role("replication.dynamodb.amazonaws.com")),
                "{what}: another service"
            );
            assert!(
                !allowed(&Request::new(
                    "iam:CreateServiceLinkedRole",
                    KINESIS_REPLICATION_ROLE
                )),
                "{what}: without the service name"
            );
            // Never turned off, redirected or changed on anyone's table.
            for action in [
                "dynamodb:DisableKinesisStreamingDestination",
                "dynamodb:UpdateKinesisStreamingDestination",
            ] {
                assert!(
                    !allowed(&Request::new(action, &own).with_resource_tags(ours())),
                    "{what}: {action}"
                );
            }
        }
    }
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
        alone(
            listing,
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
        alone(listing, &Request::new("s3:ListBucket", ARCHIVE_BUCKET)),
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
            alone(statement, &Request::new("s3:PutObject", outside)),
            Decision::ImplicitDeny,
            "{outside}"
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
                "dynamodb:GetResourcePolicy",
                "dynamodb:PutResourcePolicy",
                "dynamodb:DeleteResourcePolicy",
                "dynamodb:DescribeKinesisStreamingDestination",
                "dynamodb:EnableKinesisStreamingDestination",
                "dynamodb:DisableKinesisStreamingDestination",
                "dynamodb:UpdateKinesisStreamingDestination",
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
                    for (created_with, what) in [
                        (
                            tags(&[("ddb-rollover:period-start", "2018-10-25T00:00:00+00:00")]),
                            "(e) CreateTable without the family tag",
                        ),
                        (Tags::new(), "(e) CreateTable without tags"),
                        (
                            tags(&[(FAMILY, SIBLING_FAMILY)]),
                            "(e) CreateTable of another family",
                        ),
                    ] {
                        check(on(OWN, Tags::new(), created_with), false, what);
                    }
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
