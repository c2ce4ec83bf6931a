//! The one place the AWS SDK is set up: the CLI, both Lambda functions and the example build
//! their clients here, from the few knobs that differ between them ([`SdkSettings`]).
//!
//! Everything else is the same everywhere: the usual credential and region chain
//! (environment, profile, container or instance role; `AWS_ENDPOINT_URL` included), and
//! adaptive retries, so that throttling which happens anyway (another stack of the account
//! spending the same per-account rate) slows the client down instead of failing calls.
//!
//! The HTTPS client is a knob, not a choice made here: this crate enables no TLS feature of
//! `aws-config`, so a Lambda binary links only the client it passes in (rustls with ring) and
//! the CLI gets the SDK's default by enabling `aws-config/default-https-client` itself.

use aws_config::retry::RetryConfig;
use aws_config::BehaviorVersion;
use aws_sdk_dynamodb::config::{Region, SharedHttpClient};

use crate::aws::dynamodb::DynamoDb;
use crate::aws::signed::SignedClient;

/// What differs between the SDK clients of the CLI, the functions and the example. Each
/// `None` leaves the setting to the SDK's default chain.
#[derive(Clone, Debug, Default)]
pub struct SdkSettings {
    /// `--region`; else `AWS_REGION`, the profile's, or the instance's.
    pub region: Option<String>,
    /// `--profile`; else `AWS_PROFILE` or `default`.
    pub profile: Option<String>,
    /// `--endpoint-url` (DynamoDB Local, moto); else `AWS_ENDPOINT_URL`, or AWS's.
    pub endpoint_url: Option<String>,
    /// The HTTPS client; `None` is the SDK's default, which needs `aws-config`'s
    /// `default-https-client` feature in the binary.
    pub http_client: Option<SharedHttpClient>,
}

/// DynamoDB and Application Auto Scaling clients sharing one configuration (endpoint, region,
/// credentials, retries, HTTPS client), and signed calls to other services with it.
#[derive(Clone, Debug)]
pub struct AwsClients {
    pub dynamodb: aws_sdk_dynamodb::Client,
    pub autoscaling: aws_sdk_applicationautoscaling::Client,
    /// Systems Manager, EventBridge and S3 ([`crate::aws::signed`]).
    pub signed: SignedClient,
}

impl AwsClients {
    /// Loads the configuration (credentials are resolved lazily, at the first call) and builds
    /// both clients from it.
    pub async fn load(settings: SdkSettings) -> AwsClients {
        let mut loader =
            aws_config::defaults(BehaviorVersion::latest()).retry_config(RetryConfig::adaptive());
        if let Some(region) = settings.region {
            loader = loader.region(Region::new(region));
        }
        if let Some(profile) = settings.profile {
            loader = loader.profile_name(profile);
        }
        if let Some(endpoint) = settings.endpoint_url {
            loader = loader.endpoint_url(endpoint);
        }
        if let Some(http_client) = settings.http_client {
            loader = loader.http_client(http_client);
        }
        let config = loader.load().await;
        AwsClients {
            dynamodb: aws_sdk_dynamodb::Client::new(&config),
            autoscaling: aws_sdk_applicationautoscaling::Client::new(&config),
            signed: SignedClient::new(config),
        }
    }

    /// The engine's control plane: DynamoDB, with Application Auto Scaling: every run reads
    /// the scalable targets before it changes capacity or deletes (whose they are decides what
    /// it may touch), and registers them for autoscaling phases; and S3, where retention proves
    /// an archive before it deletes the table.
    pub fn control_plane(self) -> DynamoDb {
        DynamoDb::new(self.dynamodb)
            .with_autoscaling(self.autoscaling)
            .with_archives(self.signed)
    }
}
