//! The one place the AWS SDK is set up: the CLI, both Lambda functions and the example build
//! their clients here, from the few knobs that differ between them ([`SdkSettings`]).
//!
//! Everything else is the same everywhere: the usual credential and region chain
//! (environment, profile, container or instance role; `AWS_ENDPOINT_URL` included), and
//! adaptive retries, so that throttling which happens anyway (another stack of the account
//! spending the same per-account rate) slows the client down instead of failing calls.
//!
//! Every client is built from the same `SdkConfig`, so they share one credentials cache: a
//! function's role credentials are fetched once, not once per service.
//!
//! The HTTPS client is a knob, not a choice made here: this crate enables no TLS feature of
//! `aws-config`, so a Lambda binary links only the client it passes in (rustls with ring) and
//! the CLI gets the SDK's default by enabling `aws-config/default-https-client` itself.

use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, SdkConfig};
use aws_sdk_dynamodb::config::{Region, SharedHttpClient};

use crate::dynamodb::DynamoDb;
use crate::Server;

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

/// The clients of every service the binary links, all built from one `SdkConfig`: one
/// credentials cache, one HTTPS client, the same endpoint, region, retries and timeouts.
#[derive(Clone, Debug)]
pub struct AwsClients {
    /// DynamoDB: the tables, their exports and imports.
    pub dynamodb: aws_sdk_dynamodb::Client,
    /// Application Auto Scaling, for autoscaling phases.
    pub autoscaling: aws_sdk_applicationautoscaling::Client,
    /// Lambda: the consumer function's event source mappings on the tables' streams.
    pub lambda: aws_sdk_lambda::Client,
    /// Archives: the exports' manifests and data files ([`crate::archive`]).
    #[cfg(feature = "s3")]
    pub s3: aws_sdk_s3::Client,
    /// The published table names ([`crate::parameters`]).
    #[cfg(feature = "ssm")]
    pub ssm: aws_sdk_ssm::Client,
    /// The runs' events ([`crate::events`]).
    #[cfg(feature = "eventbridge")]
    pub eventbridge: aws_sdk_eventbridge::Client,
    /// Whose endpoint they call (the configuration's endpoint URL, `AWS_ENDPOINT_URL`
    /// included): AWS's, or a local server's.
    pub server: Server,
}

impl AwsClients {
    /// Loads the configuration (credentials are resolved lazily, at the first call) and builds
    /// every client from it.
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
        AwsClients::from_config(&loader.load().await)
    }

    /// Every client from one configuration (the tests' own, with their credentials).
    pub fn from_config(config: &SdkConfig) -> AwsClients {
        AwsClients {
            dynamodb: aws_sdk_dynamodb::Client::new(config),
            autoscaling: aws_sdk_applicationautoscaling::Client::new(config),
            lambda: aws_sdk_lambda::Client::new(config),
            #[cfg(feature = "s3")]
            s3: crate::archive::s3_client(config),
            #[cfg(feature = "ssm")]
            ssm: aws_sdk_ssm::Client::new(config),
            #[cfg(feature = "eventbridge")]
            eventbridge: aws_sdk_eventbridge::Client::new(config),
            server: Server::of_endpoint(config.endpoint_url()),
        }
    }

    /// The engine's control plane: DynamoDB, with Application Auto Scaling: every run reads
    /// the scalable targets before it changes capacity or deletes (whose they are decides what
    /// it may touch), and registers them for autoscaling phases; with Lambda, whose event
    /// source mappings on a table are read before it is deleted and made for a policy's
    /// consumer function; and, where S3 is linked, the archives retention proves before it
    /// deletes a table.
    pub fn control_plane(&self) -> DynamoDb {
        let control = DynamoDb::new(self.dynamodb.clone())
            .on(self.server)
            .with_autoscaling(self.autoscaling.clone())
            .with_lambda(self.lambda.clone());
        #[cfg(feature = "s3")]
        let control = control.with_archives(self.s3.clone());
        control
    }
}
