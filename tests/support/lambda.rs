//! moto's Lambda as the tests' consumers use it: a consumer function to map (moto needs its role
//! in its IAM first, and some code; it is never run: moto has no Docker here), and the event
//! source mappings on a stream, read back with ListEventSourceMappings.

use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::{FunctionCode, Runtime};

use super::testkit_credentials;

/// A Lambda client for `endpoint` (moto serves it on DynamoDB's port), with the testkit's Region
/// and credentials.
pub(crate) fn lambda_client(endpoint: &str) -> aws_sdk_lambda::Client {
    let config = aws_sdk_lambda::Config::builder()
        .behavior_version(aws_sdk_lambda::config::BehaviorVersion::latest())
        .region(aws_sdk_lambda::config::Region::new(testkit::REGION))
        .credentials_provider(testkit_credentials())
        .endpoint_url(endpoint)
        .build();
    aws_sdk_lambda::Client::from_conf(config)
}

/// An empty zip archive (its end-of-central-directory record alone): code moto accepts.
const EMPTY_ZIP: [u8; 22] = [
    0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// Creates the function `name` on moto at `endpoint` (with a role of the same name in moto's
/// IAM, which CreateFunction checks) and returns its ARN.
pub(crate) async fn create_function(endpoint: &str, name: &str) -> String {
    let body =
        format!("Action=CreateRole&Version=2010-05-08&RoleName={name}&AssumeRolePolicyDocument=%7B%7D");
    // moto routes by the credential scope's service and checks no signature.
    let authorization = format!(
        "AWS4-HMAC-SHA256 Credential=testing/20180101/{}/iam/aws4_request, SignedHeaders=host, Signature=0",
        testkit::REGION
    );
    let (status, reply) = testkit::http_exchange(
        endpoint,
        "POST",
        "/",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Authorization", &authorization),
        ],
        body.as_bytes(),
    );
    assert_eq!(
        status,
        200,
        "IAM CreateRole {name}: {}",
        String::from_utf8_lossy(&reply)
    );
    let created = lambda_client(endpoint)
        .create_function()
        .function_name(name)
        .runtime(Runtime::Python312)
        .handler("index.handler")
        .role(format!("arn:aws:iam::123456789012:role/{name}"))
        .code(
            FunctionCode::builder()
                .zip_file(Blob::new(EMPTY_ZIP.to_vec()))
                .build(),
        )
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateFunction {name}: {e:?}"));
    created.function_arn().unwrap().to_owned()
}

/// (function ARN, state, UUID) of every mapping on the stream `stream_arn`.
pub(crate) async fn mappings_on(
    lambda: &aws_sdk_lambda::Client,
    stream_arn: &str,
) -> Vec<(String, String, String)> {
    let out = lambda
        .list_event_source_mappings()
        .event_source_arn(stream_arn)
        .send()
        .await
        .unwrap_or_else(|e| panic!("ListEventSourceMappings {stream_arn}: {e:?}"));
    out.event_source_mappings()
        .iter()
        .map(|m| {
            (
                m.function_arn().unwrap_or_default().to_owned(),
                m.state().unwrap_or_default().to_owned(),
                m.uuid().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The event source ARN of every mapping of the function `function_arn`.
pub(crate) async fn streams_of(lambda: &aws_sdk_lambda::Client, function_arn: &str) -> Vec<String> {
    let out = lambda
        .list_event_source_mappings()
        .function_name(function_arn)
        .send()
        .await
        .unwrap_or_else(|e| panic!("ListEventSourceMappings {function_arn}: {e:?}"));
    out.event_source_mappings()
        .iter()
        .map(|m| m.event_source_arn().unwrap_or_default().to_owned())
        .collect()
}
