//! S3 reads as AWS answers them where moto 5.2 does not: a request whose
//! `x-amz-expected-bucket-owner` names another account than the bucket's owner is refused with
//! 403 AccessDenied (moto ignores the header), and a GetObject or HeadObject of an object that an
//! Enabled lifecycle Expiration rule covers answers `x-amz-expiration` (moto stores the rules
//! but never says so). The bucket's owner is moto's account unless a test gave the bucket to
//! another ([`super::Proxy::bucket_owner`]).

use chrono::{DateTime, Days, NaiveTime, Utc};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use hyper::{Method, Response, StatusCode, Uri};

use super::state::State;
use super::upstream::Upstream;
use super::wire::Body;
use crate::http::{percent_encode, xml_elements};

/// The account moto serves every request of the test credentials as.
pub const MOTO_ACCOUNT: &str = "123456789012";

/// The header S3 compares with the bucket's owner (every SDK's `ExpectedBucketOwner`).
const EXPECTED_OWNER: &str = "x-amz-expected-bucket-owner";

/// Query parameters a plain GetObject or HeadObject may carry; any other names a subresource
/// (`?tagging`, `?acl`, ...), which is another operation.
const OBJECT_READ_PARAMS: [&str; 3] = ["x-id", "versionId", "partNumber"];

/// A path-style S3 request: its bucket, and whether it reads an object (GetObject, HeadObject).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct S3Request {
    pub(super) bucket: String,
    pub(super) key: String,
    pub(super) object_read: bool,
}

/// The S3 request `method uri` is, when it is one: signed for S3 (credential scope `/s3/`), or
/// carrying the expected owner (no other service takes it).
pub(super) fn s3_request(method: &Method, uri: &Uri, headers: &HeaderMap) -> Option<S3Request> {
    let signed_for_s3 = headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("/s3/aws4_request"));
    if !signed_for_s3 && !headers.contains_key(EXPECTED_OWNER) {
        return None;
    }
    let path = uri.path().strip_prefix('/')?;
    let (bucket, key) = path.split_once('/').unwrap_or((path, ""));
    if bucket.is_empty() {
        return None;
    }
    let plain = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .all(|param| {
            let name = param.split_once('=').map_or(param, |(name, _)| name);
            OBJECT_READ_PARAMS.contains(&name) || name.starts_with("response-")
        });
    Some(S3Request {
        bucket: percent_decode(bucket),
        key: percent_decode(key),
        object_read: (method == Method::GET || method == Method::HEAD) && !key.is_empty() && plain,
    })
}

/// S3's 403 for an expected owner that is not the bucket's (S3 API Reference, every request's
/// `x-amz-expected-bucket-owner`: "the request fails with the HTTP status code 403 Forbidden
/// (access denied)"); `None` when the header is absent or names the owner.
pub(super) fn owner_refusal(
    state: &State,
    headers: &HeaderMap,
    method: &Method,
    request: &S3Request,
) -> Option<Response<Body>> {
    let expected = headers.get(EXPECTED_OWNER)?.to_str().ok()?;
    let owner = state
        .bucket_owners
        .get(&request.bucket)
        .map_or(MOTO_ACCOUNT, String::as_str);
    if expected == owner {
        return None;
    }
    // A HEAD reply has no body: the SDK sees only the status.
    let body = if method == Method::HEAD {
        Bytes::new()
    } else {
        Bytes::from_static(
            b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>",
        )
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = StatusCode::FORBIDDEN;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/xml"));
    Some(response)
}

/// The object read's successful `reply` with `x-amz-expiration` added when an Enabled
/// Expiration rule of the bucket's lifecycle configuration (read from the upstream, not
/// recorded) covers the key: the earliest such expiry, as S3 gives it. Rules that filter by
/// tag or size are not modelled (not applied); a configuration that cannot be read is none.
pub(super) async fn with_expiration(
    upstream: &Upstream,
    request: &S3Request,
    reply: Response<Body>,
) -> Response<Body> {
    if !reply.status().is_success() || reply.headers().contains_key("x-amz-expiration") {
        return reply;
    }
    let path = format!("/{}?lifecycle", percent_encode(&request.bucket));
    let Ok(lifecycle) = upstream
        .send(Method::GET, &path, &HeaderMap::new(), Bytes::new())
        .await
    else {
        return reply;
    };
    if !lifecycle.status().is_success() {
        return reply;
    }
    let xml = String::from_utf8_lossy(&super::wire::whole(lifecycle.into_body()).await).into_owned();
    let modified = reply
        .headers()
        .get("last-modified")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| DateTime::parse_from_rfc2822(v).ok())
        .map_or_else(Utc::now, |t| t.with_timezone(&Utc));
    let Some((expiry, rule)) = expiry(&xml, &request.key, modified) else {
        return reply;
    };
    let value = format!(
        "expiry-date=\"{}\", rule-id=\"{}\"",
        expiry.format("%a, %d %b %Y %H:%M:%S GMT"),
        percent_encode(&rule)
    );
    let (mut parts, body) = reply.into_parts();
    if let Ok(value) = HeaderValue::from_str(&value) {
        parts.headers.insert("x-amz-expiration", value);
    }
    Response::from_parts(parts, body)
}

/// The earliest expiry, and its rule's id, among the Enabled Expiration rules of the lifecycle
/// configuration `xml` whose prefix covers `key`, for an object last modified at `modified`.
/// A rule's `Days` count from the object's creation, rounded up to the next midnight UTC; its
/// `Date` is the day itself (S3 User Guide, "Lifecycle configuration elements", Expiration).
fn expiry(xml: &str, key: &str, modified: DateTime<Utc>) -> Option<(DateTime<Utc>, String)> {
    xml_elements(xml, "Rule")
        .iter()
        .filter(|rule| xml_elements(rule, "Status").first().map(String::as_str) == Some("Enabled"))
        .filter(|rule| !rule.contains("<Tag>") && !rule.contains("<ObjectSize"))
        .filter(|rule| {
            xml_elements(rule, "Prefix")
                .first()
                .is_none_or(|prefix| key.starts_with(prefix.as_str()))
        })
        .filter_map(|rule| {
            let expiration = xml_elements(rule, "Expiration").into_iter().next()?;
            let at = match xml_elements(&expiration, "Days").first() {
                Some(days) => {
                    let days: u64 = days.trim().parse().ok()?;
                    let day = (modified + Days::new(days)).date_naive() + Days::new(1);
                    day.and_time(NaiveTime::MIN).and_utc()
                }
                None => {
                    let date = xml_elements(&expiration, "Date").into_iter().next()?;
                    DateTime::parse_from_rfc3339(date.trim())
                        .ok()?
                        .with_timezone(&Utc)
                }
            };
            let id = xml_elements(rule, "ID").into_iter().next().unwrap_or_default();
            Some((at, id))
        })
        .min()
}

/// `%XX` sequences decoded (a path's key as S3 reads it).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    const LIFECYCLE: &str = "<LifecycleConfiguration>\
        <Rule><ID>off</ID><Filter><Prefix>a/</Prefix></Filter><Status>Disabled</Status><Expiration><Days>1</Days></Expiration></Rule>\
        <Rule><ID>tagged</ID><Filter><And><Prefix>a/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>\
        <Rule><ID>archive rule</ID><Filter><Prefix>a/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>\
        <Rule><ID>dated</ID><Prefix>b/</Prefix><Status>Enabled</Status><Expiration><Date>2030-01-01T00:00:00.000Z</Date></Expiration></Rule>\
        <Rule><ID>moves</ID><Filter><Prefix>c/</Prefix></Filter><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>\
        </LifecycleConfiguration>";

    /// S3 User Guide's example: created 10:30 on 2014-01-15, three days: 2014-01-19 00:00 UTC.
    #[test]
    fn days_count_from_creation_to_the_next_midnight() {
        let created = at("2014-01-15T10:30:00Z");
        let archive = (at("2014-01-19T00:00:00Z"), "archive rule".to_owned());
        assert_eq!(expiry(LIFECYCLE, "a/x", created), Some(archive));
        let dated = (at("2030-01-01T00:00:00Z"), "dated".to_owned());
        assert_eq!(expiry(LIFECYCLE, "b/x", created), Some(dated));
        assert_eq!(expiry(LIFECYCLE, "c/x", created), None);
        assert_eq!(expiry(LIFECYCLE, "other", created), None);
    }

    #[test]
    fn object_reads_are_told_from_other_s3_requests() {
        let mut headers = HeaderMap::new();
        let uri = |text: &str| text.parse::<Uri>().unwrap();
        assert_eq!(s3_request(&Method::GET, &uri("/b/k"), &headers), None);
        headers.insert(
            hyper::header::AUTHORIZATION,
            HeaderValue::from_static("AWS4-HMAC-SHA256 Credential=x/20200101/us-east-1/s3/aws4_request"),
        );
        let read = s3_request(&Method::GET, &uri("/b/p%2Fk%20l?x-id=GetObject"), &headers).unwrap();
        assert_eq!(
            (read.bucket.as_str(), read.key.as_str(), read.object_read),
            ("b", "p/k l", true)
        );
        assert!(
            !s3_request(&Method::GET, &uri("/b/k?tagging"), &headers)
                .unwrap()
                .object_read
        );
        assert!(
            !s3_request(&Method::GET, &uri("/b?list-type=2"), &headers)
                .unwrap()
                .object_read
        );
        assert!(
            !s3_request(&Method::PUT, &uri("/b/k"), &headers)
                .unwrap()
                .object_read
        );
    }

    #[test]
    fn only_another_expected_owner_is_refused() {
        let mut state = State::default();
        let request = S3Request {
            bucket: "b".into(),
            key: "k".into(),
            object_read: true,
        };
        let mut headers = HeaderMap::new();
        assert!(owner_refusal(&state, &headers, &Method::GET, &request).is_none());
        headers.insert(EXPECTED_OWNER, HeaderValue::from_static(MOTO_ACCOUNT));
        assert!(owner_refusal(&state, &headers, &Method::GET, &request).is_none());
        state.bucket_owners.insert("b".into(), "210987654321".into());
        let refused = owner_refusal(&state, &headers, &Method::HEAD, &request).unwrap();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    }
}
