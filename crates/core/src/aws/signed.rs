//! Signed calls to the few AWS services whose SDK crate the Lambda bootstraps cannot carry:
//! Systems Manager (the published table names), EventBridge (the run's events) and S3 (reading
//! an export's manifest). Each call goes through the SDK's own orchestrator with the SDK's
//! SigV4 signer, standard retries, timeouts, credentials and HTTPS client, taken from the same
//! `SdkConfig` as the DynamoDB client; only the request and response shapes are ours.
//!
//! Why not `aws-sdk-ssm`, `aws-sdk-eventbridge` and `aws-sdk-s3`: measured in a release build
//! with the bootstraps' profile, the first two add 933 KB and S3 alone 1.14 MB to a binary
//! with the DynamoDB client, and the bootstraps have 395 KB left under their 8 MB limit. This
//! module adds 34 KB for all three. docs/architecture.md has the numbers.

use std::fmt;

use aws_config::SdkConfig;
use aws_runtime::auth::sigv4::{SigV4AuthScheme, SCHEME_ID};
use aws_runtime::auth::{SigV4OperationSigningConfig, SigningOptions};
use aws_smithy_runtime::client::identity::IdentityCache;
use aws_smithy_runtime::client::orchestrator::operation::Operation;
use aws_smithy_runtime_api::client::auth::static_resolver::StaticAuthSchemeOptionResolver;
use aws_smithy_runtime_api::client::auth::AuthSchemeOptionResolverParams;
use aws_smithy_runtime_api::client::identity::SharedIdentityResolver;
use aws_smithy_runtime_api::client::interceptors::context::InterceptorContext;
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse, OrchestratorError};
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_runtime_api::client::retries::classifiers::{ClassifyRetry, RetryAction};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponentsBuilder;
use aws_smithy_runtime_api::client::runtime_plugin::StaticRuntimePlugin;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::Layer;
use aws_smithy_types::retry::{ErrorKind, RetryConfig};
use aws_types::region::SigningRegion;
use aws_types::SigningName;

use crate::table::archive::ObjectHead;

/// An AWS service reached through [`SignedClient`]: its SigV4 signing name, the first label
/// of its regional endpoint, and the SDK's service id for `AWS_ENDPOINT_URL_{ID}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Service {
    signing_name: &'static str,
    endpoint_prefix: &'static str,
    env_id: &'static str,
    /// The AWS JSON protocol's `X-Amz-Target` prefix; `None` for S3's REST protocol.
    json_target: Option<&'static str>,
    /// `application/x-amz-json-1.1` or `-1.0`, by the service's protocol version.
    content_type: &'static str,
}

impl Service {
    /// Another service of the AWS JSON protocol (the tests read SQS this way).
    pub const fn json(
        signing_name: &'static str,
        endpoint_prefix: &'static str,
        env_id: &'static str,
        target_prefix: &'static str,
        content_type: &'static str,
    ) -> Service {
        Service {
            signing_name,
            endpoint_prefix,
            env_id,
            json_target: Some(target_prefix),
            content_type,
        }
    }
}

const JSON_1_1: &str = "application/x-amz-json-1.1";

pub const SSM: Service = Service::json("ssm", "ssm", "SSM", "AmazonSSM", JSON_1_1);
pub const EVENTBRIDGE: Service = Service::json("events", "events", "EVENTBRIDGE", "AWSEvents", JSON_1_1);
pub const S3: Service = Service {
    signing_name: "s3",
    endpoint_prefix: "s3",
    env_id: "S3",
    json_target: None,
    content_type: "",
};

/// A call that failed: the HTTP status and AWS's error code when the service answered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{operation}: {}", self.describe())]
pub struct SignedError {
    pub operation: &'static str,
    /// `None`: no response (connection, timeout, credentials).
    pub status: Option<u16>,
    /// `__type` of a JSON error or `<Code>` of S3's XML error, without a namespace.
    pub code: String,
    pub message: String,
}

impl SignedError {
    fn describe(&self) -> String {
        match self.status {
            Some(status) if self.code.is_empty() => format!("HTTP {status} {}", self.message),
            Some(status) => format!("HTTP {status} {}: {}", self.code, self.message),
            None => self.message.clone(),
        }
    }

    /// The caller has no permission (an IAM refusal): a deployment problem, not a transient one.
    pub fn is_access_denied(&self) -> bool {
        self.status == Some(403) || self.code.contains("AccessDenied")
    }
}

/// What an answered call gave back.
#[derive(Clone, Debug)]
struct Answer {
    status: u16,
    body: Vec<u8>,
    /// Its headers, names in lower case.
    headers: Vec<(String, String)>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The request as the serializer builds it; the orchestrator adds the endpoint and signs.
struct Request {
    method: &'static str,
    path: String,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// A service's error body, for the orchestrator's error type.
#[derive(Debug)]
struct Refused {
    status: u16,
    body: Vec<u8>,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)
    }
}

impl std::error::Error for Refused {}

/// Throttling (HTTP 429, a `...Throttl...` or `SlowDown` code) and server errors are retried
/// with the standard strategy's backoff; nothing else is.
#[derive(Debug)]
struct RetryThrottlingAndServerErrors;

impl ClassifyRetry for RetryThrottlingAndServerErrors {
    fn classify_retry(&self, ctx: &InterceptorContext) -> RetryAction {
        let Some(response) = ctx.response() else {
            return RetryAction::NoActionIndicated;
        };
        let status = response.status().as_u16();
        let throttled = || {
            response
                .body()
                .bytes()
                .map(String::from_utf8_lossy)
                .is_some_and(|b| b.contains("Throttl") || b.contains("SlowDown"))
        };
        if status == 429 || (status == 400 || status == 503) && throttled() {
            RetryAction::retryable_error(ErrorKind::ThrottlingError)
        } else if status >= 500 {
            RetryAction::retryable_error(ErrorKind::ServerError)
        } else {
            RetryAction::NoActionIndicated
        }
    }

    fn name(&self) -> &'static str {
        "ddb-rollover signed calls"
    }
}

/// Signed calls with the SDK configuration the DynamoDB client was built from.
#[derive(Clone, Debug)]
pub struct SignedClient {
    config: SdkConfig,
}

impl SignedClient {
    pub fn new(config: SdkConfig) -> SignedClient {
        SignedClient { config }
    }

    /// An AWS JSON protocol call (`X-Amz-Target: {prefix}.{operation}`): Systems Manager,
    /// EventBridge.
    pub async fn json(
        &self,
        service: Service,
        operation: &'static str,
        input: &serde_json::Value,
    ) -> Result<serde_json::Value, SignedError> {
        let target = service.json_target.expect("a JSON protocol service");
        let request = Request {
            method: "POST",
            path: "/".into(),
            headers: vec![
                ("content-type", service.content_type.into()),
                ("x-amz-target", format!("{target}.{operation}")),
            ],
            body: input.to_string().into_bytes(),
        };
        let answer = self
            .call(service, operation, &self.endpoint(service), request)
            .await?;
        if answer.body.is_empty() {
            return Ok(serde_json::Value::Null);
        }
        serde_json::from_slice(&answer.body).map_err(|e| SignedError {
            operation,
            status: Some(answer.status),
            code: String::new(),
            message: format!("the response is not JSON: {e}"),
        })
    }

    /// An S3 object's bytes; `None` when there is no such key (404).
    pub async fn s3_get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, SignedError> {
        self.s3("GetObject", "GET", bucket, key)
            .await
            .map(|answer| answer.map(|a| a.body))
    }

    /// HeadObject: the object's ETag (unquoted), size and storage class; `None` when there is
    /// no such key (404).
    pub async fn s3_head(&self, bucket: &str, key: &str) -> Result<Option<ObjectHead>, SignedError> {
        let Some(answer) = self.s3("HeadObject", "HEAD", bucket, key).await? else {
            return Ok(None);
        };
        Ok(Some(ObjectHead {
            etag: answer
                .header("etag")
                .unwrap_or_default()
                .trim_matches('"')
                .to_string(),
            size: answer
                .header("content-length")
                .and_then(|n| n.parse().ok())
                .unwrap_or_default(),
            storage_class: answer.header("x-amz-storage-class").map(str::to_owned),
        }))
    }

    /// The keys under `prefix` in `bucket` (ListObjectsV2, every page); empty for a missing
    /// bucket.
    pub async fn s3_list(&self, bucket: &str, prefix: &str) -> Result<Vec<String>, SignedError> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut query = format!("?list-type=2&prefix={}", encode_segment(prefix));
            if let Some(token) = &token {
                query = format!(
                    "?continuation-token={}&list-type=2&prefix={}",
                    encode_segment(token),
                    encode_segment(prefix)
                );
            }
            let Some(answer) = self
                .s3_with_query("ListObjectsV2", "GET", bucket, "", &query)
                .await?
            else {
                return Ok(keys);
            };
            let text = String::from_utf8_lossy(&answer.body);
            keys.extend(xml_elements(&text, "Key"));
            token = xml_elements(&text, "NextContinuationToken").pop();
            if !text.contains("<IsTruncated>true</IsTruncated>") || token.is_none() {
                return Ok(keys);
            }
        }
    }

    async fn s3(
        &self,
        operation: &'static str,
        method: &'static str,
        bucket: &str,
        key: &str,
    ) -> Result<Option<Answer>, SignedError> {
        self.s3_with_query(operation, method, bucket, key, "").await
    }

    async fn s3_with_query(
        &self,
        operation: &'static str,
        method: &'static str,
        bucket: &str,
        key: &str,
        query: &str,
    ) -> Result<Option<Answer>, SignedError> {
        let (endpoint, path) = s3_address(
            &self.endpoint(S3),
            self.custom_endpoint(S3).is_some(),
            bucket,
            key,
        );
        let request = Request {
            method,
            path: format!("{path}{query}"),
            headers: Vec::new(),
            body: Vec::new(),
        };
        match self.call(S3, operation, &endpoint, request).await {
            Ok(answer) => Ok(Some(answer)),
            Err(e) if e.status == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `AWS_ENDPOINT_URL_{SERVICE}`, else the configuration's endpoint (`AWS_ENDPOINT_URL`,
    /// `--endpoint-url`), as the SDK's own clients pick it.
    fn custom_endpoint(&self, service: Service) -> Option<String> {
        std::env::var(format!("AWS_ENDPOINT_URL_{}", service.env_id))
            .ok()
            .filter(|url| !url.is_empty())
            .or_else(|| self.config.endpoint_url().map(str::to_owned))
    }

    fn endpoint(&self, service: Service) -> String {
        self.custom_endpoint(service).unwrap_or_else(|| {
            let region = self.config.region().map(|r| r.as_ref()).unwrap_or("us-east-1");
            regional_endpoint(service, region)
        })
    }

    async fn call(
        &self,
        service: Service,
        operation: &'static str,
        endpoint: &str,
        request: Request,
    ) -> Result<Answer, SignedError> {
        let failed = |message: String| SignedError {
            operation,
            status: None,
            code: String::new(),
            message,
        };
        let credentials = self
            .config
            .credentials_provider()
            .ok_or_else(|| failed("no AWS credentials are configured".into()))?;

        // SigV4 for the service in the configuration's Region. S3 signs the payload's hash in
        // a header and its paths as they are; the JSON services double-encode and normalise.
        let mut signing = Layer::new("signed call");
        signing.store_put(AuthSchemeOptionResolverParams::new(()));
        let mut options = SigningOptions::default();
        let s3 = service == S3;
        options.content_sha256_header = s3;
        options.double_uri_encode = !s3;
        options.normalize_uri_path = !s3;
        signing.store_put(SigV4OperationSigningConfig {
            region: self.config.region().cloned().map(SigningRegion::from),
            name: Some(SigningName::from_static(service.signing_name)),
            signing_options: options,
            ..Default::default()
        });
        let components = RuntimeComponentsBuilder::new("signed call")
            .with_auth_scheme(SigV4AuthScheme::new())
            .with_identity_resolver(SCHEME_ID, SharedIdentityResolver::new(credentials))
            .with_auth_scheme_option_resolver(Some(StaticAuthSchemeOptionResolver::new(vec![SCHEME_ID])))
            .with_identity_cache(Some(IdentityCache::lazy().build()));

        let mut builder = Operation::builder()
            .service_name(service.signing_name)
            .operation_name(operation)
            .endpoint_url(endpoint)
            .standard_retry(&RetryConfig::standard())
            .retry_classifier(RetryThrottlingAndServerErrors)
            .runtime_plugin(
                StaticRuntimePlugin::new()
                    .with_config(signing.freeze())
                    .with_runtime_components(components),
            );
        // The functions pass their rustls client in; without one, the SDK's default client
        // (the CLI's `default-https-client` feature) comes with the orchestrator's defaults.
        if let Some(http_client) = self.config.http_client() {
            builder = builder.http_client(http_client);
        }
        if let Some(sleep) = self.config.sleep_impl() {
            builder = builder.sleep_impl(sleep);
        }
        if let Some(timeouts) = self.config.timeout_config() {
            builder = builder.timeout_config(timeouts.clone());
        }
        let operation_call = builder
            .serializer(|request: Request| {
                let mut http = http_1x::Request::builder()
                    .method(request.method)
                    .uri(request.path);
                for (name, value) in request.headers {
                    http = http.header(name, value);
                }
                let http = http.body(SdkBody::from(request.body))?;
                Ok(HttpRequest::try_from(http)?)
            })
            .deserializer(|response: &HttpResponse| {
                let status = response.status().as_u16();
                let body = response.body().bytes().unwrap_or_default().to_vec();
                if (200..300).contains(&status) {
                    let headers = response
                        .headers()
                        .iter()
                        .map(|(name, value)| (name.to_ascii_lowercase(), value.to_string()))
                        .collect();
                    Ok(Answer {
                        status,
                        body,
                        headers,
                    })
                } else {
                    Err(OrchestratorError::operation(Refused { status, body }))
                }
            })
            .build();
        operation_call.invoke(request).await.map_err(|e| match e {
            SdkError::ServiceError(e) => {
                let refused = e.into_err();
                let (code, message) = error_code(&refused.body);
                SignedError {
                    operation,
                    status: Some(refused.status),
                    code,
                    message,
                }
            }
            other => failed(format!(
                "{}",
                aws_smithy_types::error::display::DisplayErrorContext(other)
            )),
        })
    }
}

/// `https://{prefix}.{region}.amazonaws.com`, with the China partition's DNS suffix in its
/// Regions.
fn regional_endpoint(service: Service, region: &str) -> String {
    let suffix = if region.starts_with("cn-") {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    };
    format!("https://{}.{region}.{suffix}", service.endpoint_prefix)
}

/// The endpoint and path of an S3 object: virtual-hosted style on AWS (`{bucket}.s3...`), path
/// style on a custom endpoint (moto, LocalStack) and for bucket names with dots (whose
/// virtual host the wildcard certificate does not cover). Each key segment is percent-encoded.
fn s3_address(endpoint: &str, custom: bool, bucket: &str, key: &str) -> (String, String) {
    let key: Vec<String> = key.split('/').map(encode_segment).collect();
    let key = key.join("/");
    if custom || bucket.contains('.') {
        (endpoint.to_owned(), format!("/{bucket}/{key}"))
    } else {
        let host = endpoint.replacen("https://", &format!("https://{bucket}."), 1);
        (host, format!("/{key}"))
    }
}

/// RFC 3986 unreserved characters as they are, every other byte as `%XX`.
fn encode_segment(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The text of every `<name>..</name>` of S3's flat XML answers, entities decoded.
fn xml_elements(xml: &str, name: &str) -> Vec<String> {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        found.push(
            after[..end]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&"),
        );
        rest = &after[end + close.len()..];
    }
    found
}

/// `(code, message)` of a JSON error (`{"__type": "ns#Code", "message": ...}`) or S3's XML
/// one (`<Code>..</Code><Message>..</Message>`); empty strings when the body has neither.
fn error_code(body: &[u8]) -> (String, String) {
    let text = String::from_utf8_lossy(body);
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) {
        let code = json["__type"].as_str().unwrap_or_default();
        let code = code.rsplit('#').next().unwrap_or_default().to_owned();
        let message = json["message"]
            .as_str()
            .or(json["Message"].as_str())
            .unwrap_or_default()
            .to_owned();
        return (code, message);
    }
    let element = |name: &str| {
        let open = format!("<{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&format!("</{name}>"))? + start;
        Some(text[start..end].to_owned())
    };
    (
        element("Code").unwrap_or_default(),
        element("Message").unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regional_endpoints_follow_the_partition() {
        assert_eq!(
            regional_endpoint(SSM, "eu-west-1"),
            "https://ssm.eu-west-1.amazonaws.com"
        );
        assert_eq!(
            regional_endpoint(EVENTBRIDGE, "cn-north-1"),
            "https://events.cn-north-1.amazonaws.com.cn"
        );
    }

    #[test]
    fn s3_addresses_are_virtual_hosted_on_aws_and_path_style_elsewhere() {
        let aws = regional_endpoint(S3, "us-east-1");
        assert_eq!(
            s3_address(&aws, false, "archive", "ddb/AWSDynamoDB/01/manifest-summary.json"),
            (
                "https://archive.s3.us-east-1.amazonaws.com".to_owned(),
                "/ddb/AWSDynamoDB/01/manifest-summary.json".to_owned()
            )
        );
        assert_eq!(
            s3_address(&aws, false, "my.archive", "a b+c"),
            (aws.clone(), "/my.archive/a%20b%2Bc".to_owned())
        );
        assert_eq!(
            s3_address("http://127.0.0.1:5000", true, "archive", "k"),
            ("http://127.0.0.1:5000".to_owned(), "/archive/k".to_owned())
        );
    }

    #[test]
    fn error_codes_from_json_and_xml() {
        assert_eq!(
            error_code(br#"{"__type":"com.amazon.coral#ThrottlingException","message":"Rate exceeded"}"#),
            ("ThrottlingException".to_owned(), "Rate exceeded".to_owned())
        );
        assert_eq!(
            error_code(b"<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"),
            ("AccessDenied".to_owned(), "Access Denied".to_owned())
        );
        assert_eq!(error_code(b""), (String::new(), String::new()));
    }
}
