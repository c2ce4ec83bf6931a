//! EventBridge events on the default bus, source `ddb-rollover`: what the functions publish
//! after each run (a table ready, a phase change, archived, deleted) and what `restore`
//! publishes (a table restored), sent with the signed calls ([`crate::aws::signed`]).

use serde_json::{json, Value};

use crate::aws::signed::{SignedClient, SignedError, EVENTBRIDGE};

/// The `source` of every event: what an EventBridge rule matches on, and the only source the
/// functions' roles may put events with.
pub const EVENT_SOURCE: &str = "ddb-rollover";

/// The event detail types.
pub const TABLE_READY: &str = "Table Ready";
pub const PHASE_CHANGED: &str = "Phase Changed";
pub const TABLE_ARCHIVED: &str = "Table Archived";
pub const TABLE_DELETED: &str = "Table Deleted";
pub const TABLE_RESTORED: &str = "Table Restored";

/// PutEvents takes at most 10 entries a call.
const EVENTS_PER_CALL: usize = 10;

/// One event: its detail type and detail.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub detail_type: &'static str,
    pub detail: Value,
}

/// Puts `events` on the default bus, ten a call; returns what failed (a refused call, or each
/// entry PutEvents refused), described for a person. `explain` words a refused call.
pub async fn put_events(
    signed: &SignedClient,
    events: &[Event],
    explain: impl Fn(&SignedError) -> String,
) -> Vec<String> {
    let mut failures = Vec::new();
    for batch in events.chunks(EVENTS_PER_CALL) {
        let entries: Vec<Value> = batch
            .iter()
            .map(|e| {
                json!({
                    "Source": EVENT_SOURCE,
                    "DetailType": e.detail_type,
                    "Detail": e.detail.to_string(),
                })
            })
            .collect();
        match signed
            .json(EVENTBRIDGE, "PutEvents", &json!({"Entries": entries}))
            .await
        {
            Ok(answer) => failures.extend(failed_entries(&answer, batch)),
            Err(e) => failures.push(explain(&e)),
        }
    }
    failures
}

/// The entries PutEvents refused (`FailedEntryCount` > 0: each entry's `ErrorCode`).
fn failed_entries(answer: &Value, batch: &[Event]) -> Vec<String> {
    let empty = Vec::new();
    let results = answer["Entries"].as_array().unwrap_or(&empty);
    batch
        .iter()
        .zip(results)
        .filter_map(|(event, result)| {
            let code = result["ErrorCode"].as_str()?;
            Some(format!(
                "PutEvents {} {}: {code} {}",
                event.detail_type,
                event.detail["table"].as_str().unwrap_or_default(),
                result["ErrorMessage"].as_str().unwrap_or_default()
            ))
        })
        .collect()
}
