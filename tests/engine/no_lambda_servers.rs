//! What the local servers without Lambda (dynalite, AWS's DynamoDB Local) answer the event
//! source mapping calls, through the adapter: each `ErrorKind::Unsupported` (which the
//! observation says once when the policy names a consumer function, and which lets nothing be
//! missing before a deletion: no mapping can exist there), never a failure of Lambda's own.
//!
//! The Lambda SDK sends REST calls (`GET /2015-03-31/event-source-mappings/?EventSourceArn=…`).
//! Probed with that SDK (these assertions fail when a release changes it): dynalite 4.0.0 answers
//! HTTP 200 with its health check, `healthy: dynamodb.REGION.amazonaws.com`; DynamoDB Local 3.3
//! answers HTTP 500 with DynamoDB's own `com.amazonaws.dynamodb.v20120810#InternalFailure`.

use crate::support::lambda::lambda_client;
use crate::support::INSTANT_DYNALITE;
use ddb_rollover::control::{ErrorKind, Mappings};
use ddb_rollover::policy::{FunctionArn, LambdaConsumer, StartingPosition};
use ddb_rollover::table::{MappingChange, MappingRemoval};
use ddb_rollover_aws::dynamodb::DynamoDb;
use testkit::{LocalDynamo, Server};

const FUNCTION: &str = "arn:aws:lambda:us-east-1:123456789012:function:ingest-consumer";
const STREAM: &str =
    "arn:aws:dynamodb:us-east-1:123456789012:table/probe_2018-10-25/stream/2018-10-25T00:00:00.000";

/// The adapter's three mapping calls on `db`: each Unsupported, and saying so.
async fn adapter_says_unsupported(db: &LocalDynamo) {
    let control = DynamoDb::local(db.client().await).with_lambda(lambda_client(db.endpoint()));
    let listed = control
        .list_event_source_mappings("probe_2018-10-25", STREAM)
        .await;
    let change = MappingChange {
        name: "probe_2018-10-25".into(),
        consumer: LambdaConsumer {
            function: FunctionArn::parse(FUNCTION).unwrap(),
            batch_size: 100,
            starting_position: StartingPosition::TrimHorizon,
            filters: Vec::new(),
        },
    };
    let created = control.create_event_source_mapping(&change, STREAM).await;
    let removal = MappingRemoval {
        name: "probe_2018-10-25".into(),
        uuid: "14e0db71-5d35-4eb5-b481-8945cf9d10c2".into(),
        function_arn: FUNCTION.into(),
    };
    let deleted = control.delete_event_source_mapping(&removal).await;
    for (operation, error) in [
        ("ListEventSourceMappings", listed.map(drop).unwrap_err()),
        ("CreateEventSourceMapping", created.map(drop).unwrap_err()),
        ("DeleteEventSourceMapping", deleted.unwrap_err()),
    ] {
        assert_eq!(
            error.kind,
            ErrorKind::Unsupported,
            "{}: {operation}: {error:?}",
            db.name()
        );
        assert_eq!(error.operation, operation, "{}", db.name());
        assert!(
            error.message.contains("this endpoint does not implement Lambda"),
            "{}: {}",
            db.name(),
            error.message
        );
    }
}

#[tokio::test]
async fn dynalite_and_dynamodb_local_answer_that_they_lack_lambda() {
    let dynalite = std::thread::spawn(|| LocalDynamo::start(INSTANT_DYNALITE));
    let ddblocal = LocalDynamo::start(Server::DynamoDbLocal);
    let dynalite = dynalite.join().expect("dynalite starts");
    adapter_says_unsupported(&dynalite).await;
    adapter_says_unsupported(&ddblocal).await;
}
