//! EventBridge events on the default bus, source `ddb-rollover`: what the functions publish
//! after each run (a table ready, a phase change, archived, deleted) and what `restore`
//! publishes (a table restored). The events are pure; sending them needs the `eventbridge`
//! feature (`aws-sdk-eventbridge`).

use serde_json::Value;

#[cfg(feature = "eventbridge")]
use crate::call_error::CallError;

/// The `source` of every event: what an EventBridge rule matches on, and the only source the
/// functions' roles may put events with.
pub const EVENT_SOURCE: &str = "ddb-rollover";

/// The event detail types.
pub const TABLE_READY: &str = "Table Ready";
/// A table moved to another phase: its capacity, class or autoscaling changed.
pub const PHASE_CHANGED: &str = "Phase Changed";
/// A table's archive export completed and the archived tag was set.
pub const TABLE_ARCHIVED: &str = "Table Archived";
/// Retention deleted a table.
pub const TABLE_DELETED: &str = "Table Deleted";
/// `restore` imported a table from its archive.
pub const TABLE_RESTORED: &str = "Table Restored";

/// PutEvents takes at most 10 entries a call.
#[cfg(feature = "eventbridge")]
const EVENTS_PER_CALL: usize = 10;

/// One event: its detail type and detail.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// One of the detail type constants above.
    pub detail_type: &'static str,
    /// The event's detail, a JSON object.
    pub detail: Value,
}

/// Puts `events` on the default bus, ten a call; returns what failed (a refused call, or each
/// entry PutEvents refused), described for a person. `explain` words a refused call.
#[cfg(feature = "eventbridge")]
pub async fn put_events(
    client: &aws_sdk_eventbridge::Client,
    events: &[Event],
    explain: impl Fn(&CallError) -> String,
) -> Vec<String> {
    use aws_sdk_eventbridge::types::PutEventsRequestEntry;
    let mut failures = Vec::new();
    for batch in events.chunks(EVENTS_PER_CALL) {
        let entries = batch
            .iter()
            .map(|e| {
                PutEventsRequestEntry::builder()
                    .source(EVENT_SOURCE)
                    .detail_type(e.detail_type)
                    .detail(e.detail.to_string())
                    .build()
            })
            .collect();
        match client.put_events().set_entries(Some(entries)).send().await {
            Ok(answer) => failures.extend(failed_entries(answer.entries(), batch)),
            Err(e) => failures.push(explain(&CallError::from_sdk("PutEvents", &e))),
        }
    }
    failures
}

/// The entries PutEvents refused (`FailedEntryCount` > 0: each entry's `ErrorCode`).
#[cfg(feature = "eventbridge")]
fn failed_entries(
    results: &[aws_sdk_eventbridge::types::PutEventsResultEntry],
    batch: &[Event],
) -> Vec<String> {
    batch
        .iter()
        .zip(results)
        .filter_map(|(event, result)| {
            let code = result.error_code()?;
            Some(format!(
                "PutEvents {} {}: {code} {}",
                event.detail_type,
                event.detail["table"].as_str().unwrap_or_default(),
                result.error_message().unwrap_or_default()
            ))
        })
        .collect()
}
