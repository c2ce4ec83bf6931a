//! The IAM role `template.yaml` gives one family's functions, which no local server enforces:
//! what [`super::Proxy::family_role`] refuses, and why, in AWS's words. A hand-written reading
//! of the template's statements, kept in this one module so that asking the template's own
//! evaluator instead changes one file.

use std::collections::BTreeMap;

use hyper::body::Bytes;
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE};

use super::upstream::Upstream;
use super::wire::{table_of, AMZ_JSON, TARGET};

/// The tag `template.yaml`'s IAM conditions check.
const FAMILY_TAG: &str = "ddb-rollover:family";

/// Why the role of the family `prefix` refuses this request, if it does (see
/// [`super::Proxy::family_role`]).
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
    let table = match service {
        "AnyScaleFrontendService" => match operation {
            "RegisterScalableTarget" | "PutScalingPolicy" => json["ResourceId"]
                .as_str()
                .and_then(|id| id.strip_prefix("table/"))
                .map(|rest| rest.split('/').next().unwrap_or(rest).to_owned()),
            _ => None,
        },
        service if service.starts_with("DynamoDB_") => table_of(body),
        _ => None,
    };
    let table = table?;
    let action = match service {
        "AnyScaleFrontendService" => format!("application-autoscaling:{operation}"),
        _ => format!("dynamodb:{operation}"),
    };
    let deny = |why: String| {
        Some(format!(
            "User: arn:aws:sts::123456789012:assumed-role/ddb-rollover-{prefix}/function is not authorized to \
             perform: {action} on resource: table/{table} because no identity-based policy allows the {action} \
             action ({why}; emulated by the testkit proxy)"
        ))
    };
    if !table.starts_with(&format!("{prefix}_")) {
        return deny(format!("outside table/{prefix}_*"));
    }
    let family_in = |tags: &serde_json::Value| {
        tags.as_array()
            .into_iter()
            .flatten()
            .find(|tag| tag["Key"] == FAMILY_TAG)
            .and_then(|tag| tag["Value"].as_str().map(str::to_owned))
    };
    match operation {
        "CreateTable" => match family_in(&json["Tags"]) {
            Some(family) if family == prefix => None,
            other => deny(format!("aws:RequestTag/{FAMILY_TAG} is {other:?}")),
        },
        "UntagResource" => deny("UntagResource is not granted".to_owned()),
        "UpdateTable"
        | "UpdateTimeToLive"
        | "UpdateContinuousBackups"
        | "ExportTableToPointInTime"
        | "TagResource"
        | "DeleteTable"
        | "RegisterScalableTarget"
        | "PutScalingPolicy" => {
            if operation == "TagResource" {
                if let Some(family) = family_in(&json["Tags"]).filter(|f| f != prefix) {
                    return deny(format!("aws:RequestTag/{FAMILY_TAG} is {family:?}"));
                }
            }
            // A table that does not exist: the upstream answers for it.
            let tags = upstream_tags(upstream, headers, &table).await?;
            let family = tags.get(FAMILY_TAG);
            match (operation, family) {
                ("DeleteTable", Some(family)) if family == prefix => None,
                ("DeleteTable", other) => deny(format!("aws:ResourceTag/{FAMILY_TAG} is {other:?}")),
                (_, Some(family)) if family != prefix => {
                    deny(format!("aws:ResourceTag/{FAMILY_TAG} is {family:?}"))
                }
                _ => None,
            }
        }
        _ => None,
    }
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
        for tag in page["Tags"].as_array().into_iter().flatten() {
            if let (Some(key), Some(value)) = (tag["Key"].as_str(), tag["Value"].as_str()) {
                tags.insert(key.to_owned(), value.to_owned());
            }
        }
        match page["NextToken"].as_str() {
            Some(next) if !next.is_empty() => token = Some(next.to_owned()),
            _ => return Some(tags),
        }
    }
}
