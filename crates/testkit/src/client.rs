//! How clients reach a local server as they would reach AWS: the SDK configuration and the
//! environment a child process gets, with the Region and static test credentials. Used by the
//! launcher and the proxy alike.

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};

/// Region used by [`LocalDynamo::client`] and [`LocalDynamo::env`].
pub const REGION: &str = "us-east-1";
/// Static test credentials used by [`LocalDynamo::client`] and [`LocalDynamo::env`].
pub const ACCESS_KEY_ID: &str = "test";
/// See [`ACCESS_KEY_ID`].
pub const SECRET_ACCESS_KEY: &str = "test";

/// The SDK configuration [`LocalDynamo::client`] and [`Proxy::client`] use, for `endpoint`:
/// region us-east-1, static test credentials, behavior version latest, the SDK's default
/// retries. Reads nothing from the environment or profile files. Returned as a builder so a
/// test can change it, e.g. `.retry_config(RetryConfig::disabled())`.
pub fn sdk_config(endpoint: &str) -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(REGION))
        .credentials_provider(Credentials::new(
            ACCESS_KEY_ID,
            SECRET_ACCESS_KEY,
            None,
            None,
            "testkit",
        ))
        .endpoint_url(endpoint)
}

/// The environment [`LocalDynamo::env`] and [`Proxy::env`] give a child process, for `endpoint`.
pub fn endpoint_env(endpoint: &str) -> Vec<(String, String)> {
    [
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_REGION", REGION),
        // boto3 (the docs' Python examples) reads the Region from this one.
        ("AWS_DEFAULT_REGION", REGION),
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}
