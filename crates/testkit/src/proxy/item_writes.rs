//! [`super::Proxy::resource_policies_enforced`]: an item write refused as DynamoDB refuses it
//! under a table's resource-based policy (moto stores such policies and never enforces them).
//! Which tables a write touches, as which action, and whether the policy denies it are
//! `aws_model`'s rules (`item_writes`, `resource_policy`); this module reads the policies from
//! the upstream.

use aws_model::item_writes::touched;
use aws_model::resource_policy::{denies_to_everyone, explicit_deny};
use hyper::body::Bytes;
use hyper::header::HeaderMap;
use hyper::Response;

use super::upstream::Upstream;
use super::wire::{aws_error, Body};

/// AWS's refusal of an item write that a table's resource-based policy denies to everyone.
/// The policy is read from the upstream. See [`super::Proxy::resource_policies_enforced`].
pub(super) async fn refuse_denied_write(
    upstream: &Upstream,
    headers: &HeaderMap,
    operation: &str,
    request: &Bytes,
) -> Option<Response<Body>> {
    let request = serde_json::from_slice::<serde_json::Value>(request).ok()?;
    for (table, action) in touched(operation, &request) {
        let describe = serde_json::json!({ "TableName": table });
        let Some(described) = answer(upstream, headers, "DescribeTable", &describe).await? else {
            // No such table: the upstream answers for it.
            continue;
        };
        let arn = described["Table"]["TableArn"].as_str()?.to_owned();
        let get_policy = serde_json::json!({ "ResourceArn": arn });
        let Some(policy) = answer(upstream, headers, "GetResourcePolicy", &get_policy).await? else {
            continue;
        };
        let document = policy["Policy"].as_str().unwrap_or_default();
        if denies_to_everyone(document, action) {
            let why = explicit_deny("arn:aws:iam::123456789012:user/testing", action, &arn);
            let message = format!("{why} (emulated by the testkit proxy)");
            return Some(aws_error(400, "AccessDeniedException", &message));
        }
    }
    None
}

/// The upstream's answer to `operation`, parsed: `Some(None)` when it refuses the request
/// (no such table, no policy), `None` when no answer could be read.
async fn answer(
    upstream: &Upstream,
    headers: &HeaderMap,
    operation: &str,
    body: &serde_json::Value,
) -> Option<Option<serde_json::Value>> {
    let (status, answer) = upstream.call(headers, operation, body).await?;
    if !status.is_success() {
        return Some(None);
    }
    serde_json::from_str(&answer).ok().map(Some)
}
