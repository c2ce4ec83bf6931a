//! An UpdateTable's attribute definitions added to the table's, as AWS keeps them, where moto
//! replaces the table's with the request's: what
//! [`super::Proxy::attribute_definitions_at_update_table`] does before forwarding.

use hyper::body::Bytes;
use hyper::header::HeaderMap;
use hyper::Response;

use super::upstream::Upstream;
use super::wire::{aws_error, Body};
/// What AWS does with an UpdateTable's `AttributeDefinitions` and moto does not: adds them
/// to the table's current ones (DescribeTable on the upstream, not recorded). Returns the
/// body to forward, or the reply to give the client instead. See
/// [`super::Proxy::attribute_definitions_at_update_table`].
pub(super) async fn with_table_definitions(
    upstream: &Upstream,
    headers: &HeaderMap,
    request: Bytes,
) -> Result<Bytes, Response<Body>> {
    let Ok(mut update) = serde_json::from_slice::<serde_json::Value>(&request) else {
        return Ok(request);
    };
    let requested = match update.get("AttributeDefinitions").and_then(|d| d.as_array()) {
        Some(requested) if !requested.is_empty() => requested.clone(),
        _ => return Ok(request),
    };
    let Some(table) = update.get("TableName").cloned() else {
        return Ok(request);
    };
    let failure = |why: String| {
        let message = format!(
            "testkit proxy: UpdateTable not forwarded: the table's attribute definitions could not be read: {why}"
        );
        aws_error(500, "InternalServerError", &message)
    };
    let describe = serde_json::json!({ "TableName": table });
    let current = match upstream.call(headers, "DescribeTable", &describe).await {
        None => return Err(failure("DescribeTable: no answer".into())),
        // No such table (or no table name it accepts): the upstream answers the UpdateTable.
        Some((status, _)) if status.is_client_error() => return Ok(request),
        Some((status, reply)) if !status.is_success() => {
            return Err(failure(format!("DescribeTable: HTTP {status}: {reply}")))
        }
        Some((_, reply)) => {
            let described = serde_json::from_str::<serde_json::Value>(&reply).ok();
            match described
                .as_ref()
                .and_then(|d| d["Table"]["AttributeDefinitions"].as_array())
            {
                Some(current) => current.clone(),
                None => {
                    return Err(failure(format!(
                        "DescribeTable: no Table.AttributeDefinitions in {reply}"
                    )))
                }
            }
        }
    };
    update["AttributeDefinitions"] =
        serde_json::Value::Array(merge_attribute_definitions(&current, &requested));
    Ok(Bytes::from(update.to_string()))
}

/// The table's attribute definitions with an UpdateTable's added, as AWS keeps them: each of
/// `current` in its order, replaced by the one of `requested` with the same `AttributeName`
/// if any, then the rest of `requested` in its order.
fn merge_attribute_definitions(
    current: &[serde_json::Value],
    requested: &[serde_json::Value],
) -> Vec<serde_json::Value> {
    let name = |definition: &serde_json::Value| definition["AttributeName"].as_str().map(str::to_owned);
    let mut merged: Vec<serde_json::Value> = current
        .iter()
        .map(|kept| {
            requested
                .iter()
                .find(|new| name(new).is_some() && name(new) == name(kept))
                .unwrap_or(kept)
                .clone()
        })
        .collect();
    for new in requested {
        if !merged
            .iter()
            .any(|kept| name(kept).is_some() && name(kept) == name(new))
        {
            merged.push(new.clone());
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_definitions_merge_with_the_request_winning() {
        let def =
            |name: &str, kind: &str| serde_json::json!({ "AttributeName": name, "AttributeType": kind });
        let current = [def("pk", "S"), def("sk", "N"), def("device", "S")];
        let requested = [def("status", "S"), def("sk", "S")];
        assert_eq!(
            merge_attribute_definitions(&current, &requested),
            [
                def("pk", "S"),
                def("sk", "S"),
                def("device", "S"),
                def("status", "S")
            ]
        );
        assert_eq!(merge_attribute_definitions(&[], &requested), requested);
        assert_eq!(merge_attribute_definitions(&current, &[]), current);
    }
}
