//! Exports as AWS reports and lays them out, where moto does not: AWS's export ARNs
//! (`{table ARN}/export/{id}`; moto's are `…:table/{table ARN}/import/{id}`), an `ExportTime`
//! on every description, and with [`super::Proxy::export_layout`] the manifests of a COMPLETED
//! export written beside moto's data file, as `aws_model::exports` lays an export out.

use std::sync::Mutex;

use aws_model::exports::{self as layout, DataFile, Location};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::HeaderMap;
use hyper::Response;

use super::export_arns;
use super::state::{lock, State};
use super::upstream::Upstream;
use super::wire::{is_dynamodb, whole, Body};
use crate::http::{percent_encode, xml_elements};

/// The request as moto must get it: a DescribeExport names the export by moto's ARN, which the
/// client only ever saw in AWS's form.
pub(super) fn request_for_moto(headers: &HeaderMap, body: Bytes) -> Bytes {
    if is_dynamodb(headers, "DescribeExport") {
        export_arns::rewrite_export_arns(&body, export_arns::moto_export_arn)
    } else {
        body
    }
}

/// The upstream's `reply` to `operation` as AWS would give it: export ARNs in AWS's form, an
/// `ExportTime` on each, and (with [`super::Proxy::export_layout`]) a COMPLETED export's
/// manifests written and named.
pub(super) async fn reply_as_aws(
    upstream: &Upstream,
    state: &Mutex<State>,
    operation: &str,
    reply: Response<Body>,
) -> Response<Body> {
    if !["DescribeExport", "ExportTableToPointInTime", "ListExports"].contains(&operation) {
        return reply;
    }
    let reply = if operation == "DescribeExport" && reply.status().is_success() && lock(state).export_layout {
        lay_out_export(upstream, state, reply).await
    } else {
        reply
    };
    let (parts, body) = reply.into_parts();
    let bytes = whole(body).await;
    let rewritten = export_arns::rewrite_export_arns(&bytes, export_arns::aws_export_arn);
    let stamped = stamp_export_time(state, rewritten);
    Response::from_parts(parts, Full::new(stamped))
}

/// An export's `ExportTime` where moto gives none: when the proxy first saw it, as AWS
/// stamps an export that names no time with the time of its request.
fn stamp_export_time(state: &Mutex<State>, bytes: Bytes) -> Bytes {
    let Ok(mut answer) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return bytes;
    };
    let description = &mut answer["ExportDescription"];
    let Some(arn) = description["ExportArn"].as_str().map(str::to_owned) else {
        return bytes;
    };
    if description.get("ExportTime").is_some() {
        return bytes;
    }
    let at = export_time(state, &arn);
    description["ExportTime"] = (at.timestamp_millis() as f64 / 1000.0).into();
    Bytes::from(answer.to_string())
}

/// The export's `ExportTime` as the proxy gives it: when it first saw the export (AWS ARN).
fn export_time(state: &Mutex<State>, arn: &str) -> chrono::DateTime<chrono::Utc> {
    let now = chrono::Utc::now().timestamp_millis();
    let millis = *lock(state).export_times.entry(arn.to_owned()).or_insert(now);
    chrono::DateTime::from_timestamp_millis(millis).unwrap_or_default()
}

/// [`super::Proxy::export_layout`]: the manifests of a COMPLETED export written once, and its
/// `ExportManifest` added to the reply. A reply it cannot read is passed on as it is.
async fn lay_out_export(upstream: &Upstream, state: &Mutex<State>, reply: Response<Body>) -> Response<Body> {
    let (parts, body) = reply.into_parts();
    let bytes = whole(body).await;
    let pass_on = |bytes: Bytes| Response::from_parts(parts.clone(), Full::new(bytes));
    let Ok(mut answer) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return pass_on(bytes);
    };
    let description = &answer["ExportDescription"];
    let text = |field: &str| description[field].as_str().map(str::to_owned);
    let (Some(arn), Some(bucket)) = (text("ExportArn"), text("S3Bucket")) else {
        return pass_on(bytes);
    };
    if text("ExportStatus").as_deref() != Some("COMPLETED") || description.get("ExportManifest").is_some() {
        return pass_on(bytes);
    }
    let known = lock(state).exports.get(&arn).cloned();
    let directory = match known {
        Some(directory) => directory,
        None => {
            let prefix = text("S3Prefix");
            let items = description["ItemCount"].as_u64().unwrap_or(0);
            match write_manifests(
                upstream,
                state,
                &arn,
                &export_arns::aws_export_arn(&arn),
                &bucket,
                prefix.as_deref(),
                items,
            )
            .await
            {
                Some(directory) => directory,
                None => return pass_on(bytes),
            }
        }
    };
    answer["ExportDescription"]["ExportManifest"] = layout::summary_key(&directory).into();
    pass_on(Bytes::from(answer.to_string()))
}

/// Finds the data file moto wrote for the export (under its prefix, in a folder no earlier
/// export claimed) and writes the manifests beside it; returns the folder.
async fn write_manifests(
    upstream: &Upstream,
    state: &Mutex<State>,
    arn: &str,
    aws_arn: &str,
    bucket: &str,
    prefix: Option<&str>,
    items: u64,
) -> Option<String> {
    let listed = format!("{}/{}/", prefix.unwrap_or(""), layout::FOLDER);
    let path = format!(
        "/{}?list-type=2&prefix={}",
        percent_encode(bucket),
        percent_encode(&listed)
    );
    let reply = upstream
        .send(hyper::Method::GET, &path, &HeaderMap::new(), Bytes::new())
        .await
        .ok()?;
    let listing = reply.into_body().collect().await.ok()?.to_bytes();
    let listing = String::from_utf8_lossy(&listing);
    let keys = xml_elements(&listing, "Key");
    let etags = xml_elements(&listing, "ETag");
    let claimed: Vec<String> = lock(state).exports.values().cloned().collect();
    let data: Vec<(String, String)> = keys
        .into_iter()
        .zip(etags)
        .filter(|(key, _)| layout::export_directory(key).is_some_and(|d| !claimed.iter().any(|c| c == d)))
        .collect();
    let directory = layout::export_directory(&data.first()?.0)?.to_string();
    // moto writes one data file per export, holding every item.
    let files: Vec<(String, String, u64)> = data
        .into_iter()
        .filter(|(key, _)| layout::export_directory(key) == Some(directory.as_str()))
        .enumerate()
        .map(|(n, (key, etag))| (key, etag, if n == 0 { items } else { 0 }))
        .collect();
    let export_time = export_time(state, aws_arn);
    let table_arn = layout::table_arn_of(aws_arn);
    let listed: Vec<DataFile<'_>> = files
        .iter()
        .map(|(key, etag, items)| DataFile {
            key,
            etag,
            items: *items,
        })
        .collect();
    let location = Location { bucket, prefix };
    let manifests = layout::manifests(
        aws_arn,
        table_arn,
        Some(location),
        &directory,
        &listed,
        export_time,
    );
    let started = (layout::started_key(&directory), Vec::new());
    for (key, body) in std::iter::once(started).chain(manifests) {
        let path = format!(
            "/{}/{}",
            percent_encode(bucket),
            percent_encode(&key).replace("%2F", "/")
        );
        let put = upstream
            .send(hyper::Method::PUT, &path, &HeaderMap::new(), Bytes::from(body))
            .await
            .ok()?;
        if !put.status().is_success() {
            return None;
        }
    }
    lock(state).exports.insert(arn.to_string(), directory.clone());
    Some(directory)
}
