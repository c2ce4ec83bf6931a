//! What the cases exercised (`PROMISES_STATS=1` prints it after the run).

use std::collections::BTreeMap;

use ddb_rollover::run::report::Outcome;
use fake_aws::Table;

use super::*;

static STATS: std::sync::Mutex<BTreeMap<String, u64>> = std::sync::Mutex::new(BTreeMap::new());

pub fn count(what: impl Into<String>) {
    *STATS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(what.into())
        .or_default() += 1;
}

/// Counts what one of our runs did: each effect by kind, each line by action and outcome.
pub fn count_run(f: &RunFacts<'_>) {
    count(format!("run {}", f.operation));
    for (_, effect) in f.effects() {
        let kind = format!("{effect:?}");
        let kind = kind.split([' ', '{', '(']).next().unwrap_or_default().to_string();
        count(format!("effect {kind}"));
    }
    // Mappings of the consumer left on a stream that is no table's latest (its table deleted by
    // someone, or its stream turned off and on): no run can see them.
    if let Some(consumer) = f.policy.stream.lambda.as_ref() {
        let latest: Vec<&str> = f
            .after
            .tables
            .values()
            .filter_map(|t| t.stream_arn.as_deref())
            .collect();
        let stale = f.after.mappings.values().any(|m| {
            m.function_arn == consumer.function.as_str()
                && m.state.stays()
                && !latest.contains(&m.event_source_arn.as_str())
        });
        if stale {
            count(format!(
                "run {}: a mapping of the consumer left on a stream no table has",
                f.operation
            ));
        }
    }
    for line in &f.report.tables {
        let mut key = format!(
            "line {} {} {}",
            f.operation,
            line.item.decision.action(),
            line.outcome.as_str()
        );
        if let Some(cause) = line.deferral {
            key.push_str(&format!(" ({cause})"));
        }
        if let Some(error) = line.error.as_deref().filter(|_| line.outcome == Outcome::Failed) {
            let short: String = error.chars().take(90).collect();
            key.push_str(&format!(": {short}"));
        }
        count(key);
        // A table the run's read of its tags, just before a change, found not ours.
        if line.outcome == Outcome::Foreign && line.item.reason.starts_with("its tags, read before the") {
            count(format!("line {} left after reading its tags", f.operation));
        }
        // What the verdict rested on: its owner, each foreign part, each missing evidence of a
        // table past delete_after.
        if let Some(verdict) = &line.item.verdict {
            count(format!("verdict {}", verdict.label()));
            for part in &verdict.foreign {
                let kind = match part {
                    ddb_rollover::plan::verdict::ForeignPart::Index { .. } => "index",
                    ddb_rollover::plan::verdict::ForeignPart::Target { .. } => "target",
                    ddb_rollover::plan::verdict::ForeignPart::SharedTarget { .. } => "shared target",
                    ddb_rollover::plan::verdict::ForeignPart::DeletionProtection => "deletion protection",
                    ddb_rollover::plan::verdict::ForeignPart::ResourcePolicy { .. } => "resource policy",
                    ddb_rollover::plan::verdict::ForeignPart::KinesisDestination { .. } => {
                        "kinesis destination"
                    }
                    ddb_rollover::plan::verdict::ForeignPart::EventSourceMapping { .. } => {
                        "event source mapping"
                    }
                };
                count(format!("verdict foreign part: {kind}"));
            }
            if line.item.reason.contains("no positive evidence") {
                for missing in &verdict.not_deletable {
                    count(format!("retention kept: {missing:?}"));
                }
            }
        }
    }
}

/// The statements of `table`'s resource-based policy that are not a seal (a Deny of item
/// writes to everyone under the seal's Sid): someone else's, by Sid.
pub(super) fn foreign_statements(table: &Table) -> Vec<String> {
    let Some(document) = table
        .resource_policy
        .as_ref()
        .and_then(|p| serde_json::from_str::<serde_json::Value>(&p.document).ok())
    else {
        return Vec::new();
    };
    let statements = match &document["Statement"] {
        serde_json::Value::Array(list) => list.clone(),
        one @ serde_json::Value::Object(_) => vec![one.clone()],
        _ => Vec::new(),
    };
    statements
        .iter()
        .filter(|s| {
            !(s["Sid"] == ddb_rollover::table::seal::SEAL_SID
                && s["Effect"] == "Deny"
                && s["Principal"] == "*")
        })
        .map(|s| s["Sid"].as_str().unwrap_or("(no Sid)").to_string())
        .collect()
}

/// What the cases exercised so far, by kind.
pub fn stats() -> BTreeMap<String, u64> {
    STATS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

pub fn print_stats() {
    if std::env::var_os("PROMISES_STATS").is_none() {
        return;
    }
    for (what, n) in STATS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        eprintln!("{n:>9}  {what}");
    }
}
