//! The IAM role `template.yaml` gives one family's functions, which no local server enforces:
//! what [`super::Proxy::family_role`] refuses, in AWS's words. The template's own statements
//! decide (`aws_model`'s [`FamilyRole`], as in fake-aws); this module only turns a request on
//! the wire into the evaluator's: its action, resource, the table's tags and the tags it writes.

use std::collections::BTreeMap;

use aws_model::family_role::{scalable_target_arn, table_actions_checked_by_autoscaling, FamilyRole};
use aws_model::iam::Request;
use aws_model::stack::table_arn;
use hyper::body::Bytes;
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE};

use super::upstream::Upstream;
use super::wire::{table_of, AMZ_JSON, TARGET};

/// Why the role of the family `prefix` refuses this request, if it does (see
/// [`super::Proxy::family_role`]). Requests to other services than DynamoDB and Application
/// Auto Scaling, and DynamoDB requests that name no table, are not evaluated.
pub(super) async fn refusal(
    upstream: &Upstream,
    headers: &HeaderMap,
    operation: &str,
    body: &Bytes,
    prefix: &str,
) -> Option<String> {
    let service = headers
        .get(TARGET)
        .and_then(|v| v.to_str().ok())
        .and_then(|t| t.split_once('.'))
        .map_or("", |(service, _)| service);
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let role = FamilyRole::of(prefix);
    let refused = |request: Request| {
        role.refusal(&request)
            .map(|why| format!("{why} (emulated by the testkit proxy)"))
    };
    if service == "AnyScaleFrontendService" {
        let table = json["ResourceId"]
            .as_str()
            .and_then(|id| id.strip_prefix("table/"))
            .map(|rest| rest.split('/').next().unwrap_or(rest).to_owned());
        let target = scalable_target_arn(table.as_deref().unwrap_or("*"));
        let namespace = json["ServiceNamespace"].as_str().unwrap_or_default();
        let request = Request::new(&format!("application-autoscaling:{operation}"), &target)
            .with_context("application-autoscaling:service-namespace", namespace);
        if let Some(why) = refused(request) {
            return Some(why);
        }
        let checked = table_actions_checked_by_autoscaling(operation);
        let table = table.filter(|_| !checked.is_empty())?;
        for &action in checked {
            if let Some(why) = refused(table_request(upstream, headers, &role, action, &table).await?) {
                return Some(why);
            }
        }
        return None;
    }
    if !service.starts_with("DynamoDB_") {
        return None;
    }
    let table = table_of(body)?;
    let action = format!("dynamodb:{operation}");
    let mut request = table_request(upstream, headers, &role, &action, &table).await?;
    // DynamoDB evaluates aws:RequestTag on these two only.
    if matches!(operation, "CreateTable" | "TagResource") {
        request = request.with_request_tags(tags_in(&json["Tags"]));
    }
    refused(request)
}

/// `action` on `table`, with the table's tags when the role's decision may depend on them;
/// `None` when they are needed and the table cannot be read (it does not exist: the upstream
/// answers for it).
async fn table_request(
    upstream: &Upstream,
    headers: &HeaderMap,
    role: &FamilyRole,
    action: &str,
    table: &str,
) -> Option<Request> {
    let request = Request::new(action, &table_arn(table));
    if !role.reads_resource_tags(action) {
        return Some(request);
    }
    let tags = upstream_tags(upstream, headers, table).await?;
    Some(request.with_resource_tags(tags))
}

/// A request's `Tags` (`[{"Key": .., "Value": ..}]`) as a map.
fn tags_in(tags: &serde_json::Value) -> BTreeMap<String, String> {
    tags.as_array()
        .into_iter()
        .flatten()
        .filter_map(|tag| Some((tag["Key"].as_str()?.to_owned(), tag["Value"].as_str()?.to_owned())))
        .collect()
}

/// The tags of `table` on the upstream (DescribeTable for its ARN, ListTagsOfResource every
/// page), with DynamoDB requests however the client's request was signed; `None` when the
/// table does not exist or cannot be read.
async fn upstream_tags(
    upstream: &Upstream,
    headers: &HeaderMap,
    table: &str,
) -> Option<BTreeMap<String, String>> {
    let mut headers = headers.clone();
    if let Some(auth) = headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        // moto picks the service from the signature's credential scope.
        let auth = auth.replace("/application-autoscaling/aws4_request", "/dynamodb/aws4_request");
        if let Ok(value) = HeaderValue::from_str(&auth) {
            headers.insert(hyper::header::AUTHORIZATION, value);
        }
    }
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(AMZ_JSON));
    let described = upstream
        .call(
            &headers,
            "DescribeTable",
            &serde_json::json!({ "TableName": table }),
        )
        .await?;
    if !described.0.is_success() {
        return None;
    }
    let described: serde_json::Value = serde_json::from_str(&described.1).ok()?;
    let arn = described["Table"]["TableArn"].as_str()?.to_owned();
    let mut tags = BTreeMap::new();
    let mut token: Option<String> = None;
    loop {
        let mut body = serde_json::json!({ "ResourceArn": arn });
        if let Some(token) = &token {
            body["NextToken"] = serde_json::Value::from(token.clone());
        }
        let (status, page) = upstream.call(&headers, "ListTagsOfResource", &body).await?;
        if !status.is_success() {
            return None;
        }
        let page: serde_json::Value = serde_json::from_str(&page).ok()?;
        tags.extend(tags_in(&page["Tags"]));
        match page["NextToken"].as_str() {
            Some(next) if !next.is_empty() => token = Some(next.to_owned()),
            _ => return Some(tags),
        }
    }
}
