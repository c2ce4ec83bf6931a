//! Application Auto Scaling's DeregisterScalableTarget deleting the target's scaling policies
//! and scheduled actions, as AWS does (`aws_model::scaling`) and moto does not: what
//! [`super::Proxy::deregister_deletes_policies`] adds after the upstream's answer.

use aws_model::scaling::{on_target, Attached, DELETED_WITH_TARGET};
use hyper::body::Bytes;
use hyper::header::HeaderMap;
use hyper::Response;

use super::upstream::Upstream;
use super::wire::{aws_error, Body, TARGET};

/// A scalable target, as a DeregisterScalableTarget names it.
struct TargetOf {
    namespace: String,
    resource: String,
    dimension: String,
}

/// What AWS's DeregisterScalableTarget does and moto's does not: deletes every scaling
/// policy and every scheduled action on the target (DescribeScalingPolicies, then
/// DeleteScalingPolicy each; DescribeScheduledActions, then DeleteScheduledAction each; on
/// the upstream, not recorded) before the client gets `reply`. See
/// [`super::Proxy::deregister_deletes_policies`].
pub(super) async fn delete_target_policies(
    upstream: &Upstream,
    headers: &HeaderMap,
    request: &Bytes,
    reply: Response<Body>,
) -> Response<Body> {
    let Ok(request) = serde_json::from_slice::<serde_json::Value>(request) else {
        return reply;
    };
    let field = |name: &str| request.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let (Some(namespace), Some(resource), Some(dimension)) = (
        field("ServiceNamespace"),
        field("ResourceId"),
        field("ScalableDimension"),
    ) else {
        return reply;
    };
    let target = TargetOf {
        namespace,
        resource,
        dimension,
    };
    let mut failure = None;
    for attached in DELETED_WITH_TARGET {
        failure = delete_attached(upstream, headers, &target, attached).await;
        if failure.is_some() {
            break;
        }
    }
    match failure {
        None => reply,
        Some(failure) => aws_error(
            500,
            "InternalServerError",
            &format!(
                "testkit proxy: DeregisterScalableTarget {} {} succeeded but what was attached to it could not be deleted: {failure}",
                target.resource, target.dimension
            ),
        ),
    }
}

/// Deletes every `attached` object on `target` on the upstream; the failure, if any.
async fn delete_attached(
    upstream: &Upstream,
    headers: &HeaderMap,
    target: &TargetOf,
    attached: Attached,
) -> Option<String> {
    let operation = |operation: &str| {
        let service = headers
            .get(TARGET)
            .and_then(|v| v.to_str().ok())
            .and_then(|t| t.rsplit_once('.'))
            .map_or("AnyScaleFrontendService", |(service, _)| service);
        format!("{service}.{operation}")
    };
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut body = serde_json::json!({
            "ServiceNamespace": target.namespace,
            "ResourceId": target.resource,
            "ScalableDimension": target.dimension,
        });
        if let Some(token) = &token {
            body["NextToken"] = serde_json::Value::from(token.clone());
        }
        let describe = attached.describe;
        let page = match upstream.call_as(headers, &operation(describe), &body).await {
            Some((status, page)) if status.is_success() => page,
            Some((status, page)) => return Some(format!("{describe}: HTTP {status}: {page}")),
            None => return Some(format!("{describe}: no answer")),
        };
        let Ok(page) = serde_json::from_str::<serde_json::Value>(&page) else {
            return Some(format!("{describe}: not JSON: {page}"));
        };
        // moto matches resource ids by substring: keep only what is on the target.
        for object in page[attached.list].as_array().into_iter().flatten() {
            let on = |field: &str| object[field].as_str().unwrap_or_default();
            if on_target(
                on("ResourceId"),
                on("ScalableDimension"),
                &target.resource,
                &target.dimension,
            ) {
                if let Some(name) = object[attached.name].as_str() {
                    names.push(name.to_owned());
                }
            }
        }
        match page["NextToken"].as_str() {
            Some(next) if !next.is_empty() => token = Some(next.to_owned()),
            _ => break,
        }
    }
    for name in &names {
        let mut body = serde_json::json!({
            "ServiceNamespace": target.namespace,
            "ResourceId": target.resource,
            "ScalableDimension": target.dimension,
        });
        body[attached.name] = serde_json::Value::from(name.clone());
        let delete = attached.delete;
        match upstream.call_as(headers, &operation(delete), &body).await {
            Some((status, _)) if status.is_success() => {}
            Some((status, answer)) => return Some(format!("{delete} {name}: HTTP {status}: {answer}")),
            None => return Some(format!("{delete} {name}: no answer")),
        }
    }
    None
}
