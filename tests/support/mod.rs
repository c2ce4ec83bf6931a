//! Helpers shared by every area. The servers and the proxy are the `testkit` crate's.

pub mod binaries;
pub mod days;
pub mod events;

use aws_config::{BehaviorVersion, Region};
use aws_sdk_dynamodb::config::Credentials;
use ddb_rollover::aws::dynamodb::DynamoDb;
use ddb_rollover::aws::signed::SignedClient;

/// Signed calls (S3, Systems Manager, EventBridge) to `endpoint` with the test credentials.
pub async fn signed_client(endpoint: &str) -> SignedClient {
    let config = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new("testing", "testing", None, None, "tests"))
        .load()
        .await;
    SignedClient::new(config)
}

/// The engine's DynamoDB control plane on `client`, with S3 at `endpoint` for archive proofs,
/// as the CLI and the functions build it (without Application Auto Scaling).
pub async fn control_with_archives(client: aws_sdk_dynamodb::Client, endpoint: &str) -> DynamoDb {
    DynamoDb::new(client).with_archives(signed_client(endpoint).await)
}
