//! Which tables an item write touches, and as which IAM action, the way DynamoDB authorizes
//! it against a table's resource-based policy ([`crate::resource_policy`]): testkit's proxy
//! reads a request on the wire with [`touched`].
//!
//! AWS authorizes TransactWriteItems by the PutItem, UpdateItem and DeleteItem it carries, and
//! PartiQL writes by `PartiQLInsert`, `PartiQLUpdate` and `PartiQLDelete` (DynamoDB Developer
//! Guide, "IAM policies with PartiQL for DynamoDB").

use serde_json::Value;

/// Each `(table, action)` the write `operation` with `body` needs allowed; empty for anything
/// that writes no item.
pub fn touched(operation: &str, body: &Value) -> Vec<(String, &'static str)> {
    let named = |action: &'static str| {
        body["TableName"]
            .as_str()
            .map(|table| vec![(table_name(table), action)])
            .unwrap_or_default()
    };
    match operation {
        "PutItem" => named("dynamodb:PutItem"),
        "UpdateItem" => named("dynamodb:UpdateItem"),
        "DeleteItem" => named("dynamodb:DeleteItem"),
        "BatchWriteItem" => body["RequestItems"]
            .as_object()
            .into_iter()
            .flat_map(|tables| tables.keys())
            .map(|table| (table_name(table), "dynamodb:BatchWriteItem"))
            .collect(),
        "TransactWriteItems" => body["TransactItems"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|item| {
                [
                    ("Put", "dynamodb:PutItem"),
                    ("Update", "dynamodb:UpdateItem"),
                    ("Delete", "dynamodb:DeleteItem"),
                ]
                .into_iter()
                .filter_map(|(kind, action)| {
                    item[kind]["TableName"]
                        .as_str()
                        .map(|table| (table_name(table), action))
                })
            })
            .collect(),
        "ExecuteStatement" => partiql(&body["Statement"]).into_iter().collect(),
        "BatchExecuteStatement" => statements(&body["Statements"]),
        "ExecuteTransaction" => statements(&body["TransactStatements"]),
        _ => Vec::new(),
    }
}

/// The writes among a list of PartiQL statements (`[{"Statement": ...}, ...]`).
fn statements(list: &Value) -> Vec<(String, &'static str)> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| partiql(&s["Statement"]))
        .collect()
}

/// The table and action of one PartiQL write (`INSERT INTO t`, `UPDATE t`, `DELETE FROM t`,
/// the name quoted or not); `None` for a SELECT or anything unreadable.
fn partiql(statement: &Value) -> Option<(String, &'static str)> {
    let words: Vec<&str> = statement.as_str()?.split_whitespace().collect();
    let first = words.first()?.to_ascii_uppercase();
    let (action, at) = match first.as_str() {
        "INSERT" => ("dynamodb:PartiQLInsert", 2),
        "UPDATE" => ("dynamodb:PartiQLUpdate", 1),
        "DELETE" => ("dynamodb:PartiQLDelete", 2),
        _ => return None,
    };
    let table = words.get(at)?.trim_matches('"');
    Some((table_name(table), action))
}

/// The table of a name or ARN (`arn:...:table/{name}`), as requests may give either.
fn table_name(name_or_arn: &str) -> String {
    name_or_arn
        .split_once(":table/")
        .map_or(name_or_arn, |(_, rest)| rest.split('/').next().unwrap_or(rest))
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The `(table, action)` pairs a write names.
    type Named = &'static [(&'static str, &'static str)];

    #[test]
    fn each_item_write_names_its_tables_and_actions() {
        let cases: [(&str, Value, Named); 7] = [
            (
                "PutItem",
                json!({"TableName": "t", "Item": {}}),
                &[("t", "dynamodb:PutItem")],
            ),
            (
                "UpdateItem",
                json!({"TableName": "arn:aws:dynamodb:us-east-1:123456789012:table/t"}),
                &[("t", "dynamodb:UpdateItem")],
            ),
            (
                "BatchWriteItem",
                json!({"RequestItems": {"a": [], "b": []}}),
                &[("a", "dynamodb:BatchWriteItem"), ("b", "dynamodb:BatchWriteItem")],
            ),
            (
                "TransactWriteItems",
                json!({"TransactItems": [
                    {"Put": {"TableName": "a"}},
                    {"ConditionCheck": {"TableName": "c"}},
                    {"Delete": {"TableName": "b"}}
                ]}),
                &[("a", "dynamodb:PutItem"), ("b", "dynamodb:DeleteItem")],
            ),
            (
                "BatchExecuteStatement",
                json!({"Statements": [
                    {"Statement": "INSERT INTO \"t\" VALUE {'pk': 'a'}"},
                    {"Statement": "SELECT * FROM \"t\""},
                    {"Statement": "update t SET x = 1 WHERE pk = 'a'"},
                    {"Statement": "DELETE FROM \"u\" WHERE pk = 'a'"}
                ]}),
                &[
                    ("t", "dynamodb:PartiQLInsert"),
                    ("t", "dynamodb:PartiQLUpdate"),
                    ("u", "dynamodb:PartiQLDelete"),
                ],
            ),
            ("GetItem", json!({"TableName": "t"}), &[]),
            ("ExecuteStatement", json!({"Statement": "SELECT * FROM t"}), &[]),
        ];
        for (operation, request, expected) in cases {
            // A batch names its tables in its map's order: the order is no part of the answer.
            let mut named = touched(operation, &request);
            named.sort();
            let expected: Vec<(String, &str)> = expected
                .iter()
                .map(|&(table, action)| (table.to_owned(), action))
                .collect();
            assert_eq!(named, expected, "{operation}");
        }
    }
}
