//! DynamoDB's JSON protocol as the proxy reads and writes it: which operation and table a
//! request names, AWS-shaped error replies, and the headers a proxy must not pass on. Below
//! every other part of the proxy; uses none of them.

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};

/// The JSON protocol's error type prefix, as DynamoDB writes it in `__type`.
const ERROR_PREFIX: &str = "com.amazonaws.dynamodb.v20120810#";
/// The JSON protocol's content type (DynamoDB's `x-amz-json-1.0`).
pub(super) const AMZ_JSON: &str = "application/x-amz-json-1.0";
/// The header that names the operation: `DynamoDB_20120810.<Operation>`.
pub(super) const TARGET: &str = "x-amz-target";

/// Every reply the proxy gives is read whole first.
pub(super) type Body = Full<Bytes>;

/// The bytes of a body already read whole (collecting a [`Body`] cannot fail).
pub(super) async fn whole(body: Body) -> Bytes {
    match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    }
}

/// An error reply as DynamoDB writes it: status, `x-amzn-ErrorType`, and a JSON body with
/// `__type` and `message`.
pub(super) fn aws_error(status: u16, error_type: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({
        "__type": format!("{ERROR_PREFIX}{error_type}"),
        "message": message,
    })
    .to_string();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(AMZ_JSON));
    if let Ok(value) = HeaderValue::from_str(error_type) {
        headers.insert("x-amzn-errortype", value);
    }
    headers.insert(
        "x-amzn-requestid",
        HeaderValue::from_static("testkit-proxy-injected-fault"),
    );
    response
}

/// `headers` without the hop-by-hop ones (RFC 9110 7.6.1), including any the `Connection`
/// header names.
pub(super) fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    const HOP_BY_HOP: [&str; 8] = [
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    ];
    let named: Vec<HeaderName> = headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    let mut out = headers.clone();
    for name in HOP_BY_HOP.iter().map(|n| HeaderName::from_static(n)).chain(named) {
        out.remove(name);
    }
    out
}

/// The operation from `X-Amz-Target: DynamoDB_20120810.<Operation>`, or `""`.
pub(super) fn operation_of(headers: &HeaderMap) -> String {
    let target = headers.get(TARGET).and_then(|v| v.to_str().ok()).unwrap_or("");
    target.rsplit_once('.').map_or(target, |(_, op)| op).to_owned()
}

/// Whether the request is DynamoDB's `operation` (`X-Amz-Target: DynamoDB_20120810.<operation>`),
/// not another service's of the same name on the same endpoint (moto serves them all on one).
pub(super) fn is_dynamodb(headers: &HeaderMap, operation: &str) -> bool {
    headers
        .get(TARGET)
        .and_then(|v| v.to_str().ok())
        .and_then(|target| target.strip_prefix("DynamoDB_20120810."))
        == Some(operation)
}

/// The body's `TableName`, else the table in its `ResourceArn` or `TableArn`
/// (`arn:aws:dynamodb:REGION:ACCOUNT:table/NAME[/stream/...]`).
pub(super) fn table_of(body: &[u8]) -> Option<String> {
    let json: serde_json::Value = serde_json::from_slice(body).ok()?;
    if let Some(name) = json.get("TableName").and_then(|v| v.as_str()) {
        return Some(name.to_owned());
    }
    ["ResourceArn", "TableArn"]
        .iter()
        .filter_map(|key| json.get(key).and_then(|v| v.as_str()))
        .find_map(table_of_arn)
}

pub(super) fn table_of_arn(arn: &str) -> Option<String> {
    let (_, rest) = arn.split_once(":table/")?;
    let name = rest.split('/').next()?;
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_from_name_or_arn() {
        assert_eq!(table_of(br#"{"TableName":"t_1"}"#).as_deref(), Some("t_1"));
        let arn = br#"{"ResourceArn":"arn:aws:dynamodb:us-east-1:123456789012:table/t_2"}"#;
        assert_eq!(table_of(arn).as_deref(), Some("t_2"));
        let stream = br#"{"TableArn":"arn:aws:dynamodb:us-east-1:1:table/t_3/stream/2024"}"#;
        assert_eq!(table_of(stream).as_deref(), Some("t_3"));
        assert_eq!(table_of(br#"{"Limit":10}"#), None);
        assert_eq!(table_of(b"not json"), None);
        assert_eq!(table_of_arn("arn:aws:s3:::bucket"), None);
    }

    #[test]
    fn operation_from_target() {
        let mut headers = HeaderMap::new();
        assert_eq!(operation_of(&headers), "");
        headers.insert(TARGET, HeaderValue::from_static("DynamoDB_20120810.ListTables"));
        assert_eq!(operation_of(&headers), "ListTables");
    }

    #[test]
    fn only_dynamodb_targets_are_dynamodb() {
        let mut headers = HeaderMap::new();
        assert!(!is_dynamodb(&headers, "UpdateTable"));
        headers.insert(TARGET, HeaderValue::from_static("DynamoDB_20120810.UpdateTable"));
        assert!(is_dynamodb(&headers, "UpdateTable"));
        assert!(!is_dynamodb(&headers, "CreateTable"));
        headers.insert(
            TARGET,
            HeaderValue::from_static("AnyScaleFrontendService.UpdateTable"),
        );
        assert!(!is_dynamodb(&headers, "UpdateTable"));
    }

    #[test]
    fn hop_by_hop_headers_are_dropped() {
        let mut headers = HeaderMap::new();
        headers.insert("connection", HeaderValue::from_static("keep-alive, x-private"));
        headers.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        headers.insert("x-private", HeaderValue::from_static("1"));
        headers.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        headers.insert("authorization", HeaderValue::from_static("AWS4-HMAC-SHA256 ..."));
        headers.insert(TARGET, HeaderValue::from_static("DynamoDB_20120810.ListTables"));
        let kept = end_to_end(&headers);
        let mut names: Vec<&str> = kept.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["authorization", TARGET]);
    }
}
