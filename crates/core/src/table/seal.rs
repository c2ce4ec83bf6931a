//! The seal against item writes: one statement of ours in a table's resource-based policy that
//! denies every item write to every principal, put before the final export a deletion relies
//! on, so no write DynamoDB accepts can land after that export.
//!
//! A table has at most one resource-based policy. Someone else's is merged (their statements
//! kept as they are), never replaced, and every write of it names the revision it was read at
//! (`ExpectedRevisionId`, `NO_POLICY` when there was none), so a concurrent change is refused
//! rather than overwritten.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use serde_json::{json, Value};

/// The `Sid` of our statement: the only statement ddb-rollover ever writes or removes.
pub const SEAL_SID: &str = "DdbRolloverSealAgainstItemWrites";

/// `ExpectedRevisionId` for "attach only if the table has no policy yet".
pub const NO_POLICY: &str = "NO_POLICY";

/// The item writes the seal denies: the item APIs (TransactWriteItems is authorized by the
/// PutItem, UpdateItem and DeleteItem it carries) and PartiQL's writes (ExecuteStatement,
/// BatchExecuteStatement and ExecuteTransaction are authorized by these).
pub(crate) const SEALED_ACTIONS: [&str; 7] = [
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:PartiQLInsert",
    "dynamodb:PartiQLUpdate",
    "dynamodb:PartiQLDelete",
];

/// How long after the seal the final export's ExportTime must be. AWS applies a resource-based
/// policy eventually ("it will take some time to apply the policy to all requests") and names
/// no bound; GetResourcePolicy is consistent after "a few seconds". The final export is also
/// started only by a run after the one that sealed, which reads our statement back first.
pub const SETTLE: Duration = Duration::minutes(15);

/// DynamoDB's limit on a resource-based policy document, whitespace included.
pub(crate) const MAX_POLICY_BYTES: usize = 20 * 1024;

/// A table's resource-based policy as GetResourcePolicy reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ResourcePolicy {
    /// The policy document; `None` when the table has none (PolicyNotFoundException).
    pub document: Option<String>,
    /// The policy's revision ID, which a conditional put or delete names; `None` when there is no policy.
    pub revision: Option<String>,
}

/// Why a policy cannot be sealed or unsealed by merging.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// The policy is not a JSON policy document; the parser's error.
    #[error("its resource-based policy is not a JSON policy document ({0}): nothing is merged into it")]
    NotJson(String),
    #[error(
        "its resource-based policy with our statement would be {0} bytes, over DynamoDB's {MAX_POLICY_BYTES}"
    )]
    /// The policy with our statement would be over DynamoDB's size limit; its size in bytes.
    TooLarge(usize),
    /// Someone else's statement has our seal statement's Sid.
    #[error("its resource-based policy has someone else's statement under our Sid {SEAL_SID}: nothing is merged into it")]
    SidTaken,
}

impl ResourcePolicy {
    /// The revision a conditional write of this policy names.
    pub fn expected_revision(&self) -> String {
        match (&self.document, &self.revision) {
            (Some(_), Some(revision)) => revision.clone(),
            _ => NO_POLICY.to_string(),
        }
    }

    /// Whether our statement, exactly as we write it, is in it.
    pub(crate) fn is_sealed(&self) -> bool {
        self.statements()
            .is_ok_and(|statements| statements.iter().any(is_ours))
    }

    /// Someone else's statements in it, by Sid (or position): every statement that is not
    /// exactly ours, a statement that only borrows our Sid included. A policy that is not a
    /// JSON policy document is someone else's whole.
    pub fn foreign_statements(&self) -> Vec<String> {
        match self.statements() {
            Ok(statements) => statements
                .iter()
                .enumerate()
                .filter(|(_, s)| !is_ours(s))
                .map(|(n, s)| match s.get("Sid").and_then(Value::as_str) {
                    Some(sid) => sid.to_string(),
                    None => format!("statement {}", n + 1),
                })
                .collect(),
            Err(error) => vec![error.to_string()],
        }
    }

    /// The policy with our statement added (on `table_arn`), everyone else's kept.
    pub fn with_seal(&self, table_arn: &str) -> Result<String, SealError> {
        let statements = self.statements()?;
        // Sids are unique in a policy: a statement of someone else's under ours cannot be
        // replaced (it is theirs) nor joined.
        if statements.iter().any(|s| has_our_sid(s) && !is_ours(s)) {
            return Err(SealError::SidTaken);
        }
        let mut statements: Vec<Value> = statements.into_iter().filter(|s| !is_ours(s)).collect();
        statements.push(seal_statement(table_arn));
        let document = self.rebuilt(statements)?.to_string();
        if document.len() > MAX_POLICY_BYTES {
            return Err(SealError::TooLarge(document.len()));
        }
        Ok(document)
    }

    /// The policy without our statement; `None` when nothing else is in it (then the policy
    /// is deleted rather than put back empty).
    pub(crate) fn without_seal(&self) -> Result<Option<String>, SealError> {
        let rest: Vec<Value> = self.statements()?.into_iter().filter(|s| !is_ours(s)).collect();
        if rest.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.rebuilt(rest)?.to_string()))
    }

    fn parsed(&self) -> Result<Option<Value>, SealError> {
        self.document
            .as_deref()
            .map(|d| serde_json::from_str::<Value>(d).map_err(|e| SealError::NotJson(e.to_string())))
            .transpose()
    }

    fn statements(&self) -> Result<Vec<Value>, SealError> {
        let Some(document) = self.parsed()? else {
            return Ok(Vec::new());
        };
        match document.get("Statement") {
            None => Ok(Vec::new()),
            Some(Value::Array(list)) => Ok(list.clone()),
            Some(one @ Value::Object(_)) => Ok(vec![one.clone()]),
            Some(_) => Err(SealError::NotJson(
                "Statement is neither an object nor a list".into(),
            )),
        }
    }

    /// The document with `statements`, every other top-level field (Version, Id) kept.
    fn rebuilt(&self, statements: Vec<Value>) -> Result<Value, SealError> {
        let mut document = match self.parsed()? {
            Some(Value::Object(map)) => Value::Object(map),
            Some(_) => return Err(SealError::NotJson("the document is not an object".into())),
            None => json!({ "Version": "2012-10-17" }),
        };
        document["Statement"] = Value::Array(statements);
        Ok(document)
    }
}

fn has_our_sid(statement: &Value) -> bool {
    statement.get("Sid").and_then(Value::as_str) == Some(SEAL_SID)
}

/// Our statement exactly as [`seal_statement`] writes it (on whatever table it names): our Sid
/// alone proves nothing, anyone may write a statement under it.
fn is_ours(statement: &Value) -> bool {
    has_our_sid(statement)
        && statement
            .get("Resource")
            .and_then(Value::as_str)
            .is_some_and(|resource| *statement == seal_statement(resource))
}

/// Our statement: deny every item write on the table to every principal.
pub(crate) fn seal_statement(table_arn: &str) -> Value {
    json!({
        "Sid": SEAL_SID,
        "Effect": "Deny",
        "Principal": "*",
        "Action": SEALED_ACTIONS,
        "Resource": table_arn,
    })
}

/// When the table was sealed and the policy revision the seal put: what the family's ledger
/// records (and the seal tag says, for people).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SealRecord {
    /// When the table was sealed.
    pub at: DateTime<Utc>,
    /// The policy revision the seal put.
    pub revision: String,
}

impl SealRecord {
    /// `{RFC 3339} {revision}`: only characters a tag value may hold.
    pub fn tag_value(&self) -> String {
        format!("{} {}", self.at.to_rfc3339(), self.revision)
    }

    /// The record in a seal tag's value; `None` when the value is not one.
    pub fn from_tag(value: &str) -> Option<SealRecord> {
        let (at, revision) = value.split_once(' ')?;
        let at = DateTime::parse_from_rfc3339(at).ok()?.with_timezone(&Utc);
        Some(SealRecord {
            at,
            revision: revision.to_string(),
        })
    }

    /// The earliest ExportTime an export may have to count as the final export after this seal.
    pub(crate) fn settled_at(&self) -> DateTime<Utc> {
        self.at + SETTLE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARN: &str = "arn:aws:dynamodb:us-east-1:123456789012:table/ts_2024_01_01";

    #[test]
    fn a_seal_on_no_policy_is_our_statement_alone_and_unsealing_deletes_it() {
        let none = ResourcePolicy::default();
        assert_eq!(none.expected_revision(), NO_POLICY);
        assert!(!none.is_sealed());
        let sealed = ResourcePolicy {
            document: Some(none.with_seal(ARN).unwrap()),
            revision: Some("1".into()),
        };
        assert!(sealed.is_sealed());
        assert!(aws_model::resource_policy::denies_to_everyone(
            sealed.document.as_deref().unwrap(),
            "dynamodb:PutItem"
        ));
        assert!(!aws_model::resource_policy::denies_to_everyone(
            sealed.document.as_deref().unwrap(),
            "dynamodb:GetItem"
        ));
        assert_eq!(sealed.without_seal().unwrap(), None);
        assert_eq!(sealed.expected_revision(), "1");
    }

    #[test]
    fn someone_elses_statements_are_kept_through_seal_and_unseal() {
        let theirs = r#"{"Version":"2012-10-17","Id":"theirs","Statement":{"Sid":"ReadOnly","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:role/reader"},"Action":"dynamodb:GetItem","Resource":"*"}}"#;
        let policy = ResourcePolicy {
            document: Some(theirs.into()),
            revision: Some("7".into()),
        };
        let sealed = ResourcePolicy {
            document: Some(policy.with_seal(ARN).unwrap()),
            revision: Some("8".into()),
        };
        assert!(sealed.is_sealed());
        let rest: Value = serde_json::from_str(&sealed.without_seal().unwrap().unwrap()).unwrap();
        let original: Value = serde_json::from_str(theirs).unwrap();
        assert_eq!(rest["Id"], original["Id"]);
        assert_eq!(rest["Statement"], json!([original["Statement"].clone()]));
    }

    /// Someone's statement under our Sid (an Allow here) is not a seal: the table is not
    /// sealed, cannot be sealed by merging, unsealing leaves it, and it is someone else's.
    #[test]
    fn our_sid_on_someone_elses_statement_is_not_our_seal() {
        let impostor = json!({"Version": "2012-10-17", "Statement": [
            {"Sid": SEAL_SID, "Effect": "Allow", "Principal": "*", "Action": SEALED_ACTIONS, "Resource": ARN},
            {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:role/w"}, "Action": "dynamodb:PutItem", "Resource": ARN}
        ]})
        .to_string();
        let policy = ResourcePolicy {
            document: Some(impostor),
            revision: Some("3".into()),
        };
        assert!(!policy.is_sealed());
        assert_eq!(policy.with_seal(ARN), Err(SealError::SidTaken));
        assert_eq!(
            policy.foreign_statements(),
            [SEAL_SID.to_string(), "statement 2".to_string()]
        );
        let unsealed: Value = serde_json::from_str(&policy.without_seal().unwrap().unwrap()).unwrap();
        assert_eq!(unsealed["Statement"].as_array().unwrap().len(), 2);
        // Ours exactly, beside theirs: only theirs is foreign.
        let sealed = ResourcePolicy {
            document: Some(ResourcePolicy::default().with_seal(ARN).unwrap()),
            revision: Some("1".into()),
        };
        assert!(sealed.is_sealed() && sealed.foreign_statements().is_empty());
    }

    #[test]
    fn a_policy_that_is_not_json_is_never_merged() {
        let policy = ResourcePolicy {
            document: Some("not json".into()),
            revision: Some("1".into()),
        };
        assert!(matches!(policy.with_seal(ARN), Err(SealError::NotJson(_))));
    }

    #[test]
    fn the_seal_tag_round_trips() {
        let record = SealRecord {
            at: DateTime::parse_from_rfc3339("2024-01-05T00:15:00+00:00")
                .unwrap()
                .with_timezone(&Utc),
            revision: "1709841168699".into(),
        };
        let value = record.tag_value();
        assert!(value.chars().all(crate::policy::tags::is_tag_char));
        assert_eq!(SealRecord::from_tag(&value), Some(record));
    }
}
