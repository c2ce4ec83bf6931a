//! A table's resource-based policy as DynamoDB enforces it on item writes (the seal: a `Deny`
//! of the item writes to every principal), which moto stores and never enforces: fake-aws's
//! item writes and testkit's proxy refuse a write with [`denies_to_everyone`] and
//! [`explicit_deny`]'s words.

use serde_json::Value;

/// Whether `document` denies `action` to every principal (a `Deny` statement with principal
/// `*` whose actions match it, `dynamodb:*` included): how AWS refuses an item write under a
/// seal, for fake-aws and testkit's proxy.
pub fn denies_to_everyone(document: &str, action: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(document) else {
        return false;
    };
    let statements = match value.get("Statement") {
        Some(Value::Array(list)) => list.clone(),
        Some(one @ Value::Object(_)) => vec![one.clone()],
        _ => return false,
    };
    let matches = |pattern: &str| {
        pattern == "*"
            || pattern.eq_ignore_ascii_case(action)
            || pattern.strip_suffix('*').is_some_and(|stem| {
                action
                    .to_ascii_lowercase()
                    .starts_with(&stem.to_ascii_lowercase())
            })
    };
    statements.iter().any(|s| {
        let deny = s.get("Effect").and_then(Value::as_str) == Some("Deny");
        let everyone = match s.get("Principal") {
            Some(Value::String(p)) => p == "*",
            Some(Value::Object(map)) => map.get("AWS").and_then(Value::as_str) == Some("*"),
            _ => false,
        };
        let action_matches = match s.get("Action") {
            Some(Value::String(a)) => matches(a),
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).any(matches),
            _ => false,
        };
        deny && everyone && action_matches
    })
}

/// AccessDeniedException's message (without the code) for `action` by `principal` (an ARN) on
/// `resource`, refused by an explicit deny in the resource's policy.
pub fn explicit_deny(principal: &str, action: &str, resource: &str) -> String {
    format!(
        "User: {principal} is not authorized to perform: {action} on resource: {resource} with an explicit deny in a resource-based policy"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deny_to_everyone_matches_actions_by_name_or_wildcard() {
        let seal = r#"{"Statement":[{"Effect":"Deny","Principal":"*","Action":["dynamodb:PutItem","dynamodb:Batch*"],"Resource":"*"}]}"#;
        assert!(denies_to_everyone(seal, "dynamodb:PutItem"));
        assert!(denies_to_everyone(seal, "dynamodb:batchwriteitem"));
        assert!(!denies_to_everyone(seal, "dynamodb:GetItem"));
        let one = r#"{"Statement":{"Effect":"Deny","Principal":{"AWS":"*"},"Action":"*"}}"#;
        assert!(denies_to_everyone(one, "dynamodb:DeleteItem"));
        let someone =
            r#"{"Statement":{"Effect":"Deny","Principal":{"AWS":"arn:aws:iam::1:role/r"},"Action":"*"}}"#;
        assert!(!denies_to_everyone(someone, "dynamodb:PutItem"));
        let allow = r#"{"Statement":{"Effect":"Allow","Principal":"*","Action":"*"}}"#;
        assert!(!denies_to_everyone(allow, "dynamodb:PutItem"));
        assert!(!denies_to_everyone("not json", "dynamodb:PutItem"));
    }
}
