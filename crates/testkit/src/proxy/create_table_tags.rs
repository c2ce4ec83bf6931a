//! The tags given to CreateTable applied as AWS applies them, where dynalite drops them: what
//! [`super::Proxy::tags_at_create_table`] adds after the upstream's answer.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::HeaderMap;
use hyper::Response;

use super::upstream::Upstream;
use super::wire::{aws_error, whole, Body};

/// What AWS does with CreateTable's `Tags` and dynalite does not: applies them to the table
/// just created (TagResource on the upstream, not recorded) before the client gets `reply`.
/// See [`super::Proxy::tags_at_create_table`].
pub(super) async fn apply_create_table_tags(
    upstream: &Upstream,
    headers: &HeaderMap,
    request: &Bytes,
    reply: Response<Body>,
) -> Response<Body> {
    let tags = serde_json::from_slice::<serde_json::Value>(request)
        .ok()
        .and_then(|body| body.get("Tags").cloned())
        .filter(|tags| tags.as_array().is_some_and(|tags| !tags.is_empty()));
    let Some(tags) = tags else {
        return reply;
    };
    let (parts, body) = reply.into_parts();
    let body = whole(body).await;
    let arn = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|reply| reply["TableDescription"]["TableArn"].as_str().map(str::to_owned));
    let failure = match arn {
        None => Some("its reply names no TableDescription.TableArn".to_owned()),
        Some(arn) => {
            let request = serde_json::json!({ "ResourceArn": arn, "Tags": tags });
            match upstream.call(headers, "TagResource", &request).await {
                Some((status, _)) if status.is_success() => None,
                Some((status, reply)) => Some(format!("TagResource {arn}: HTTP {status}: {reply}")),
                None => Some(format!("TagResource {arn}: no answer")),
            }
        }
    };
    match failure {
        None => Response::from_parts(parts, Full::new(body)),
        Some(failure) => aws_error(
            500,
            "InternalServerError",
            &format!("testkit proxy: CreateTable succeeded but its Tags could not be applied: {failure}"),
        ),
    }
}
