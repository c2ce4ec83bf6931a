//! Helpers shared by every area. The servers and the proxy are the `testkit` crate's.

pub(crate) mod binaries;
pub(crate) mod days;
pub(crate) mod events;
pub(crate) mod kinesis;
pub(crate) mod lambda;
pub(crate) mod ledger;
pub(crate) mod scaling;
pub(crate) mod schema;

use aws_config::{BehaviorVersion, Region};
use aws_sdk_dynamodb::config::Credentials;
use ddb_rollover_aws::dynamodb::DynamoDb;
use ddb_rollover_aws::sdk::AwsClients;

/// The SDK's clients (DynamoDB, S3, Systems Manager, EventBridge, ...) for `endpoint` with the
/// test credentials, built as the functions and the CLI build theirs (one configuration).
pub(crate) async fn aws_clients(endpoint: &str) -> AwsClients {
    AwsClients::from_config(&sdk_config(endpoint).await)
}

/// dynalite with instant transitions: no table is ever seen CREATING or UPDATING.
pub(crate) const INSTANT_DYNALITE: testkit::Server = testkit::Server::Dynalite {
    create_ms: 0,
    update_ms: 0,
};

/// The testkit's credentials, which the local servers take (the clients below use them).
fn testkit_credentials() -> Credentials {
    Credentials::new(
        testkit::ACCESS_KEY_ID,
        testkit::SECRET_ACCESS_KEY,
        None,
        None,
        "tests",
    )
}

/// A Kinesis client for `endpoint` (moto serves Kinesis on DynamoDB's port), with the testkit's
/// Region and credentials: how the tests read what a table's Kinesis destination put.
pub(crate) fn kinesis_client(endpoint: &str) -> aws_sdk_kinesis::Client {
    let config = aws_sdk_kinesis::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(testkit::REGION))
        .credentials_provider(testkit_credentials())
        .endpoint_url(endpoint)
        .build();
    aws_sdk_kinesis::Client::from_conf(config)
}

/// An Application Auto Scaling client for `endpoint` (moto serves it on DynamoDB's port), with
/// the testkit's Region and credentials, as [`testkit::LocalDynamo::client`] builds DynamoDB's.
pub(crate) fn autoscaling_client(endpoint: &str) -> aws_sdk_applicationautoscaling::Client {
    let config = aws_sdk_applicationautoscaling::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(testkit::REGION))
        .credentials_provider(testkit_credentials())
        .endpoint_url(endpoint)
        .build();
    aws_sdk_applicationautoscaling::Client::from_conf(config)
}

/// `table`'s provisioned (RCU, WCU), read back with DescribeTable.
pub(crate) async fn capacity(client: &aws_sdk_dynamodb::Client, table: &str) -> (i64, i64) {
    testkit::capacity_of(&testkit::describe(client, table).await)
}

/// The configuration of every test client: `endpoint`, us-east-1, the test credentials.
pub(crate) async fn sdk_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new("testing", "testing", None, None, "tests"))
        .load()
        .await
}

/// The engine's DynamoDB control plane on `client`, with S3 at `endpoint` for archive proofs,
/// as the CLI and the functions build it (without Application Auto Scaling).
pub(crate) async fn control_with_archives(client: aws_sdk_dynamodb::Client, endpoint: &str) -> DynamoDb {
    DynamoDb::local(client).with_archives(aws_clients(endpoint).await.s3)
}

/// moto with the `archive` bucket, a DynamoDB client of it, and the engine's control plane on
/// both: what every archive and restore test starts from.
pub(crate) struct ArchiveRig {
    pub server: testkit::LocalDynamo,
    pub client: aws_sdk_dynamodb::Client,
    pub control: DynamoDb,
}

impl ArchiveRig {
    pub(crate) async fn start() -> Self {
        let server = testkit::LocalDynamo::start(testkit::Server::Moto);
        server.create_bucket("archive");
        let client = server.client().await;
        let control = control_with_archives(client.clone(), server.endpoint()).await;
        Self {
            server,
            client,
            control,
        }
    }
}
