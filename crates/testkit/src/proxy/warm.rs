//! Warm throughput as AWS treats it, where the local servers do not: moto reports a raise
//! ACTIVE at once and takes a lower value (AWS: "Once increased, warm throughput values can't
//! be decreased"; a raise is UPDATING, then ACTIVE). What
//! [`super::Proxy::warm_never_lowered`] and [`super::Proxy::warm_updating_answers`] do.

use serde_json::Value;
use std::sync::Mutex;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::HeaderMap;
use hyper::Response;

use aws_model::warm::{Part, Units};

use super::state::{lock, State};
use super::upstream::Upstream;
use super::wire::{aws_error, whole, Body};

/// The first part of an UpdateTable (`request`) whose `WarmThroughput` asks less than the table
/// (`described`, DescribeTable's reply) has on a dimension, said as AWS's refusal would
/// (`aws_model::warm::lowered`); `None` when nothing is lowered (or nothing asked).
fn lowering(request: &Value, described: &Value) -> Option<String> {
    let table = &described["Table"];
    let mut asked: Vec<(Option<&str>, &Value, &Value)> = Vec::new();
    if request.get("WarmThroughput").is_some() {
        asked.push((None, &request["WarmThroughput"], &table["WarmThroughput"]));
    }
    for update in request["GlobalSecondaryIndexUpdates"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let update = &update["Update"];
        let (Some(name), Some(_)) = (update["IndexName"].as_str(), update.get("WarmThroughput")) else {
            continue;
        };
        let have = table["GlobalSecondaryIndexes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|index| index["IndexName"] == name)
            .map_or(&Value::Null, |index| &index["WarmThroughput"]);
        asked.push((Some(name), &update["WarmThroughput"], have));
    }
    asked.into_iter().find_map(|(part, want, have)| {
        // A dimension the request or the table does not give is not compared.
        let dimension = |name: &str| match (want[name].as_i64(), have[name].as_i64()) {
            (Some(want), Some(have)) => (want, have),
            _ => (0, 0),
        };
        let (read, write) = (dimension("ReadUnitsPerSecond"), dimension("WriteUnitsPerSecond"));
        let part = part.map_or(Part::Table, Part::Index);
        let want = Units {
            read: read.0,
            write: write.0,
        };
        let have = Units {
            read: read.1,
            write: write.1,
        };
        aws_model::warm::lowered(part, want, have)
    })
}

/// Marks the warm throughput of a DescribeTable reply (the table's and every index's) UPDATING;
/// `false` when the reply reports none, and is left as it is.
fn mark_updating(reply: &mut Value) -> bool {
    let table = &mut reply["Table"];
    if table.get("WarmThroughput").is_none() {
        return false;
    }
    table["WarmThroughput"]["Status"] = Value::from("UPDATING");
    for index in table["GlobalSecondaryIndexes"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        if index.get("WarmThroughput").is_some() {
            index["WarmThroughput"]["Status"] = Value::from("UPDATING");
        }
    }
    true
}

/// AWS's refusal of an UpdateTable that lowers a warm throughput, if `request` is one. See
/// [`super::Proxy::warm_never_lowered`].
pub(super) async fn refuse_lower_warm(
    upstream: &Upstream,
    headers: &HeaderMap,
    request: &Bytes,
) -> Option<Response<Body>> {
    let update = serde_json::from_slice::<serde_json::Value>(request).ok()?;
    let asks_warm = update.get("WarmThroughput").is_some()
        || update["GlobalSecondaryIndexUpdates"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|u| u["Update"].get("WarmThroughput").is_some());
    if !asks_warm {
        return None;
    }
    let describe = serde_json::json!({ "TableName": update.get("TableName")? });
    let (status, reply) = upstream.call(headers, "DescribeTable", &describe).await?;
    if !status.is_success() {
        return None;
    }
    let described = serde_json::from_str::<serde_json::Value>(&reply).ok()?;
    let why = lowering(&update, &described)?;
    Some(aws_error(400, "ValidationException", &why))
}

/// `reply` (a successful DescribeTable of `table`) with its warm throughput UPDATING while
/// the table has had fewer than `n` such answers. See [`super::Proxy::warm_updating_answers`].
pub(super) async fn report_updating(
    state: &Mutex<State>,
    table: &str,
    n: usize,
    reply: Response<Body>,
) -> Response<Body> {
    if lock(state).warm_answers.get(table).copied().unwrap_or(0) >= n {
        return reply;
    }
    let (parts, body) = reply.into_parts();
    let body = whole(body).await;
    let Ok(mut described) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return Response::from_parts(parts, Full::new(body));
    };
    if !mark_updating(&mut described) {
        return Response::from_parts(parts, Full::new(body));
    }
    *lock(state).warm_answers.entry(table.to_owned()).or_insert(0) += 1;
    Response::from_parts(parts, Full::new(Bytes::from(described.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn described() -> Value {
        json!({"Table": {
            "WarmThroughput": {"ReadUnitsPerSecond": 40000, "WriteUnitsPerSecond": 20000, "Status": "ACTIVE"},
            "GlobalSecondaryIndexes": [{"IndexName": "by_device",
                "WarmThroughput": {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}}]
        }})
    }

    #[test]
    fn a_lower_value_on_any_part_is_named() {
        let raise = json!({"TableName": "t",
            "WarmThroughput": {"ReadUnitsPerSecond": 40000, "WriteUnitsPerSecond": 30000},
            "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "by_device",
                "WarmThroughput": {"ReadUnitsPerSecond": 40000, "WriteUnitsPerSecond": 20000}}}]});
        assert_eq!(lowering(&raise, &described()), None);
        let lower_table = json!({"TableName": "t",
            "WarmThroughput": {"ReadUnitsPerSecond": 30000, "WriteUnitsPerSecond": 30000}});
        let why = lowering(&lower_table, &described()).unwrap();
        assert!(
            why.contains("ReadUnitsPerSecond for WarmThroughput for table"),
            "{why}"
        );
        let lower_index = json!({"TableName": "t",
            "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "by_device",
                "WarmThroughput": {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 3999}}}]});
        let why = lowering(&lower_index, &described()).unwrap();
        assert!(
            why.contains("WriteUnitsPerSecond for WarmThroughput for index by_device"),
            "{why}"
        );
        // Not a warm throughput update: nothing to compare.
        let capacity = json!({"TableName": "t", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}});
        assert_eq!(lowering(&capacity, &described()), None);
    }

    #[test]
    fn updating_marks_the_table_and_each_index() {
        let mut reply = described();
        assert!(mark_updating(&mut reply));
        assert_eq!(reply["Table"]["WarmThroughput"]["Status"], "UPDATING");
        assert_eq!(
            reply["Table"]["GlobalSecondaryIndexes"][0]["WarmThroughput"]["Status"],
            "UPDATING"
        );
        assert_eq!(reply["Table"]["WarmThroughput"]["ReadUnitsPerSecond"], 40000);
        let mut without = json!({"Table": {"TableName": "t"}});
        assert!(!mark_updating(&mut without));
        assert_eq!(without, json!({"Table": {"TableName": "t"}}));
    }
}
