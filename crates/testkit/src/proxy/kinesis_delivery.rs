//! Item writes carried into a table's Kinesis data stream, as DynamoDB does for a table with an
//! ACTIVE destination (`kinesis_destinations`): each item a PutItem, UpdateItem, DeleteItem,
//! BatchWriteItem or TransactWriteItems changes becomes one record (`kinesis_records`) put with
//! Kinesis PutRecords into the stream on the upstream (moto serves Kinesis on its DynamoDB port),
//! before the client gets the write's answer, so a test reads them at once.
//!
//! The images are read with the proxy's own GetItem (ConsistentRead) before and after the write,
//! with item writes to such tables carried one at a time, so no other write through the proxy
//! comes between the two reads. A write that fails, or changes nothing, puts no record. PartiQL
//! writes are not carried. The proxy's Kinesis calls are DynamoDB's own on AWS (its service
//! role's, not the caller's): they go to the upstream directly, never through
//! [`super::Proxy::family_role`].

use std::collections::BTreeMap;
use std::sync::Mutex;

use hyper::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use hyper::Response;
use serde_json::{json, Value};

use super::kinesis_records::Precision;
use super::kinesis_records::{partition_key, Change};
use super::kinesis_requests::Refusal;
use super::state::{lock, State};
use super::upstream::Upstream;
use super::wire::{table_of_arn, Body};

/// Kinesis's JSON 1.1 target prefix.
pub(super) const KINESIS: &str = "Kinesis_20131202";
/// Kinesis's content type.
const AMZ_JSON_1_1: &str = "application/x-amz-json-1.1";
/// PutRecords takes at most this many records a call.
const PUT_RECORDS_MAX: usize = 500;
/// The Region when the client's signature names none.
const DEFAULT_REGION: &str = "us-east-1";

/// The client's headers made Kinesis's: its signature's credential scope names `kinesis` (moto
/// picks the service by it) and the content type is JSON 1.1.
pub(super) fn kinesis_headers(headers: &HeaderMap) -> HeaderMap {
    let mut headers = headers.clone();
    if let Some((region, service)) = scope(&headers) {
        let auth = headers[AUTHORIZATION].to_str().unwrap_or_default().replacen(
            &format!("/{region}/{service}/aws4_request"),
            &format!("/{region}/kinesis/aws4_request"),
            1,
        );
        if let Ok(value) = HeaderValue::from_str(&auth) {
            headers.insert(AUTHORIZATION, value);
        }
    }
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(AMZ_JSON_1_1));
    headers
}

/// The Region and service of a SigV4 `Authorization` header's credential scope
/// (`Credential=KEY/DATE/REGION/SERVICE/aws4_request`).
fn scope(headers: &HeaderMap) -> Option<(String, String)> {
    let auth = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let credential = auth.split("Credential=").nth(1)?.split([',', ' ']).next()?;
    let parts: Vec<&str> = credential.split('/').collect();
    match parts.as_slice() {
        [.., region, service, "aws4_request"] => Some(((*region).to_owned(), (*service).to_owned())),
        _ => None,
    }
}

/// One item a write names: its table and either its key or the whole item (a put).
struct Named {
    table: String,
    key: Option<Value>,
    item: Option<Value>,
}

/// The items an item write names; empty for anything else.
fn named_items(operation: &str, body: &Value) -> Vec<Named> {
    let table = |v: &Value| {
        let name = v.as_str().unwrap_or_default();
        table_of_arn(name).unwrap_or_else(|| name.to_owned())
    };
    let one = |v: &Value, put: bool| Named {
        table: table(&v["TableName"]),
        key: (!put).then(|| v["Key"].clone()),
        item: put.then(|| v["Item"].clone()),
    };
    match operation {
        "PutItem" => vec![one(body, true)],
        "UpdateItem" | "DeleteItem" => vec![one(body, false)],
        "BatchWriteItem" => body["RequestItems"]
            .as_object()
            .into_iter()
            .flatten()
            .flat_map(|(name, requests)| {
                requests
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(move |request| Named {
                        table: table(&Value::from(name.as_str())),
                        key: request.get("DeleteRequest").map(|d| d["Key"].clone()),
                        item: request.get("PutRequest").map(|p| p["Item"].clone()),
                    })
            })
            .collect(),
        "TransactWriteItems" => body["TransactItems"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                if let Some(put) = entry.get("Put") {
                    Some(one(put, true))
                } else {
                    ["Update", "Delete"]
                        .iter()
                        .find_map(|kind| entry.get(*kind))
                        .map(|v| one(v, false))
                }
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// An item watched across a write: where its records go and how it was before.
struct Watched {
    stream: String,
    precision: Precision,
    change: Change,
}

/// The items of one write to tables with an ACTIVE destination, read before the write; items
/// writes are held back until it is [`Capture::deliver`]ed or dropped.
pub(super) struct Capture<'a> {
    _one_at_a_time: tokio::sync::MutexGuard<'a, ()>,
    watched: Vec<Watched>,
}

/// Reads, before an item write is forwarded, each item it names on a table whose destination
/// is ACTIVE; `Ok(None)` when there is none (nothing to carry), `Err` (an HTTP 500 naming the
/// failure) when the upstream could not be read: the write is then not forwarded.
pub(super) async fn watch<'a>(
    upstream: &Upstream,
    state: &Mutex<State>,
    one_at_a_time: &'a tokio::sync::Mutex<()>,
    headers: &HeaderMap,
    operation: &str,
    body: &[u8],
) -> Result<Option<Capture<'a>>, Refusal> {
    let Ok(request) = serde_json::from_slice::<Value>(body) else {
        return Ok(None);
    };
    let named = named_items(operation, &request);
    let delivering = |table: &str| lock(state).kinesis_destinations.as_ref()?.delivering(table);
    if !named.iter().any(|n| delivering(&n.table).is_some()) {
        return Ok(None);
    }
    let guard = one_at_a_time.lock().await;
    let mut key_schemas: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut watched = Vec::new();
    for item in named {
        // Read again under the lock: a write carried meanwhile may have been a Disable's.
        let Some((stream, precision)) = delivering(&item.table) else {
            continue;
        };
        let key = match (item.key, item.item) {
            (Some(key), _) => key,
            (None, Some(item_value)) => {
                if !key_schemas.contains_key(&item.table) {
                    let names = key_names(upstream, headers, &item.table).await?;
                    key_schemas.insert(item.table.clone(), names);
                }
                let names = &key_schemas[&item.table];
                Value::from(
                    names
                        .iter()
                        .filter_map(|n| Some((n.clone(), item_value.get(n)?.clone())))
                        .collect::<serde_json::Map<_, _>>(),
                )
            }
            (None, None) => continue,
        };
        let old = read_item(upstream, headers, &item.table, &key).await?;
        watched.push(Watched {
            stream,
            precision,
            change: Change {
                table: item.table,
                keys: key,
                old,
                new: None,
            },
        });
    }
    Ok(Some(Capture {
        _one_at_a_time: guard,
        watched,
    }))
}

impl Capture<'_> {
    /// After the write succeeded: reads each item again and puts one record per changed item
    /// into its stream, then gives `reply` back. A stream that no longer exists takes no
    /// records (dropped; the destination stays ACTIVE, see `kinesis_destinations`); any other
    /// failure replaces `reply` with an HTTP 500 naming it, so no test passes on records
    /// silently lost.
    pub(super) async fn deliver(
        self,
        upstream: &Upstream,
        headers: &HeaderMap,
        reply: Response<Body>,
    ) -> Response<Body> {
        let region = scope(headers).map_or_else(|| DEFAULT_REGION.to_owned(), |(region, _)| region);
        let mut by_stream: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for mut watched in self.watched {
            let table = watched.change.table.clone();
            watched.change.new = match read_item(upstream, headers, &table, &watched.change.keys).await {
                Ok(new) => new,
                Err(failure) => return failure.reply(),
            };
            let micros = chrono::Utc::now().timestamp_micros();
            let Some(record) = watched.change.record(&region, watched.precision, micros) else {
                continue;
            };
            by_stream.entry(watched.stream).or_default().push(json!({
                "Data": aws_smithy_types::base64::encode(record.to_string()),
                "PartitionKey": partition_key(&watched.change.keys),
            }));
        }
        for (stream, records) in by_stream {
            for chunk in records.chunks(PUT_RECORDS_MAX) {
                if let Some(failure) = put_records(upstream, headers, &stream, chunk).await {
                    return Refusal::internal(failure).reply();
                }
            }
        }
        reply
    }
}

/// Kinesis PutRecords of `records` into `stream` on the upstream: `None` when put (or the stream
/// is gone), else why not.
async fn put_records(
    upstream: &Upstream,
    headers: &HeaderMap,
    stream: &str,
    records: &[Value],
) -> Option<String> {
    let body = json!({ "StreamARN": stream, "Records": records });
    let target = format!("{KINESIS}.PutRecords");
    let failure = match upstream.call_as(&kinesis_headers(headers), &target, &body).await {
        Some((status, answer)) if status.is_success() => {
            let answer: Value = serde_json::from_str(&answer).unwrap_or_default();
            match answer["FailedRecordCount"].as_u64() {
                Some(0) => return None,
                _ => format!("PutRecords into {stream} did not put every record: {answer}"),
            }
        }
        Some((_, answer)) if answer.contains("ResourceNotFoundException") => return None,
        Some((status, answer)) => format!("PutRecords into {stream}: {status} {answer}"),
        None => format!("PutRecords into {stream}: no answer"),
    };
    Some(format!("testkit proxy: {failure} (on {})", upstream.endpoint()))
}

/// The names of `table`'s key attributes (DescribeTable on the upstream).
async fn key_names(upstream: &Upstream, headers: &HeaderMap, table: &str) -> Result<Vec<String>, Refusal> {
    let described = upstream
        .call(headers, "DescribeTable", &json!({ "TableName": table }))
        .await
        .filter(|(status, _)| status.is_success())
        .and_then(|(_, answer)| serde_json::from_str::<Value>(&answer).ok());
    let names: Option<Vec<String>> = described.as_ref().and_then(|d| {
        d["Table"]["KeySchema"]
            .as_array()?
            .iter()
            .map(|k| k["AttributeName"].as_str().map(str::to_owned))
            .collect()
    });
    names.ok_or_else(|| {
        Refusal::internal(format!(
            "testkit proxy: reading {table}'s key schema on {} failed",
            upstream.endpoint()
        ))
    })
}

/// The item `key` of `table` as the upstream has it now (GetItem, ConsistentRead): `None` when
/// absent.
async fn read_item(
    upstream: &Upstream,
    headers: &HeaderMap,
    table: &str,
    key: &Value,
) -> Result<Option<Value>, Refusal> {
    let body = json!({ "TableName": table, "Key": key, "ConsistentRead": true });
    match upstream.call(headers, "GetItem", &body).await {
        Some((status, answer)) if status.is_success() => {
            let answer: Value = serde_json::from_str(&answer).unwrap_or_default();
            Ok(answer.get("Item").cloned())
        }
        other => {
            let why = other.map_or_else(
                || "no answer".to_owned(),
                |(status, answer)| format!("{status} {answer}"),
            );
            Err(Refusal::internal(format!(
                "testkit proxy: GetItem on {table} for its Kinesis record: {why}"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_scope_is_made_kinesis() {
        let mut headers = HeaderMap::new();
        headers.insert(
            AUTHORIZATION,
            HeaderValue::from_static("AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"),
        );
        assert_eq!(scope(&headers), Some(("eu-west-1".into(), "dynamodb".into())));
        let kinesis = kinesis_headers(&headers);
        assert!(kinesis[AUTHORIZATION]
            .to_str()
            .unwrap()
            .contains("/eu-west-1/kinesis/aws4_request,"));
        assert_eq!(kinesis[CONTENT_TYPE], AMZ_JSON_1_1);
    }

    #[test]
    fn each_item_write_names_its_items() {
        let arn = "arn:aws:dynamodb:us-east-1:123456789012:table/a";
        let batch = json!({"RequestItems": {"a": [
            {"PutRequest": {"Item": {"pk": {"S": "1"}}}},
            {"DeleteRequest": {"Key": {"pk": {"S": "2"}}}}
        ]}});
        let transaction = json!({"TransactItems": [
            {"ConditionCheck": {"TableName": "a", "Key": {"pk": {"S": "0"}}}},
            {"Put": {"TableName": arn, "Item": {"pk": {"S": "1"}}}},
            {"Update": {"TableName": "b", "Key": {"pk": {"S": "2"}}}},
            {"Delete": {"TableName": "b", "Key": {"pk": {"S": "3"}}}}
        ]});
        let summary = |operation: &str, body: &Value| -> Vec<(String, bool)> {
            named_items(operation, body)
                .into_iter()
                .map(|n| (n.table, n.item.is_some()))
                .collect()
        };
        let s = |t: &str, put: bool| (t.to_owned(), put);
        assert_eq!(summary("BatchWriteItem", &batch), [s("a", true), s("a", false)]);
        assert_eq!(
            summary("TransactWriteItems", &transaction),
            [s("a", true), s("b", false), s("b", false)]
        );
        assert_eq!(
            summary("PutItem", &json!({"TableName": arn, "Item": {}})),
            [s("a", true)]
        );
        assert!(summary("GetItem", &json!({"TableName": "a"})).is_empty());
    }
}
