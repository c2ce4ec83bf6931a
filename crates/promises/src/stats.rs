//! What one of our runs exercised, counted in the tally ([`crate::tally`]).

use ddb_rollover::Outcome;

use crate::facts::RunFacts;
use crate::tally::count;

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
                    ddb_rollover::ForeignPart::Index { .. } => "index",
                    ddb_rollover::ForeignPart::Target { .. } => "target",
                    ddb_rollover::ForeignPart::SharedTarget { .. } => "shared target",
                    ddb_rollover::ForeignPart::DeletionProtection => "deletion protection",
                    ddb_rollover::ForeignPart::ResourcePolicy { .. } => "resource policy",
                    ddb_rollover::ForeignPart::KinesisDestination { .. } => "kinesis destination",
                    ddb_rollover::ForeignPart::EventSourceMapping { .. } => "event source mapping",
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

//END
