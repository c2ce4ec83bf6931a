//! One run's facts ([`RunFacts`]), and promise 1: nothing foreign was changed or deleted.

use aws_model::warm::LOWER_WARM;
use chrono::{DateTime, Utc};
use ddb_rollover::{Operation, Policy, RunReport};
use fake_aws::{Effect, World, FAMILY_TAG};

use crate::ground::{is_our_policy, is_our_policy_name, target_is_ours, Ground};
use crate::tally::count;

/// One promise's check: its violations, each a sentence naming the step, the table and the facts.
pub type Invariant = fn(&RunFacts<'_>) -> Vec<String>;

/// What one run of ours did, for the promises: the account before and after, our calls, the report, and the `status` computed just before.
pub struct RunFacts<'a> {
    /// The step that ran it, as the case prints it.
    pub step: String,
    /// The policy the run used.
    pub policy: &'a Policy,
    /// The policy of the case: the runs' until the operator changed the time zone.
    pub truth: &'a Policy,
    /// The policy each table our runs made was made under, by name, where it is not `truth`:
    /// the ground truth of the period a table holds (see [`RunFacts::truth_of`]).
    pub made_under: &'a std::collections::BTreeMap<String, Policy>,
    /// create_new or resize_old.
    pub operation: Operation,
    /// The account's clock when the run started: the wall clock.
    pub now: DateTime<Utc>,
    /// The instant the run decided for: `now`, or earlier for a late run or a past instant.
    pub at: DateTime<Utc>,
    /// The account just before the run.
    pub before: &'a World,
    /// The account just after the run.
    pub after: &'a World,
    /// Our calls during the run.
    pub calls: &'a [fake_aws::Call],
    /// What the run reported.
    pub report: &'a RunReport,
    /// `status` from a full observation just before the run.
    pub status: &'a ddb_rollover::StatusReport,
}

impl RunFacts<'_> {
    /// The policy the table `name` was made under, whose calendar says which period it holds.
    pub fn truth_of(&self, name: &str) -> &Policy {
        self.made_under.get(name).unwrap_or(self.truth)
    }

    /// The ground truth of the account after the run.
    pub fn ground(&self) -> Ground<'_> {
        Ground {
            policy: self.policy,
            world: self.before,
        }
    }

    /// Each effect of our calls, with its call.
    pub fn effects(&self) -> impl Iterator<Item = (&fake_aws::Call, &Effect)> {
        self.calls
            .iter()
            .flat_map(|c| c.effects.iter().map(move |e| (c, e)))
    }

    /// The report's lines about `table`, for a failure's message.
    pub fn lines_of(&self, table: &str) -> String {
        self.report
            .tables
            .iter()
            .filter(|l| l.item.facts.table == table)
            .map(|l| {
                format!(
                    "[{} {}{}: {}]",
                    l.item.decision.action(),
                    l.outcome.as_str(),
                    l.error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default(),
                    l.item.reason
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Promise 1: nothing foreign was changed or deleted by our runs.
pub fn nothing_foreign_changed(f: &RunFacts<'_>) -> Vec<String> {
    let g = f.ground();
    let mut out = Vec::new();
    let mut say = |what: String| out.push(format!("{}: {what}", f.step));
    for (call, effect) in f.effects() {
        let name = effect.table();
        let before = f.before.tables.get(name);
        let mut foreign = before.and_then(|t| g.foreign_table(t));
        // Claimed by the ledger beyond the engine's reach (a forged record, an impersonation):
        // tolerated, and counted (see `Ground::claimed_beyond_reach`).
        let deleted = matches!(effect, Effect::DeletedTable { .. });
        if foreign.is_some() && before.is_some_and(|t| g.claimed_beyond_reach(t, deleted)) {
            count("promise 1: tolerated: a change to a foreign table the ledger claims beyond reach");
            foreign = None;
        }
        let op = call.operation;
        match effect {
            Effect::CreatedTable { .. } => {}
            Effect::DeletedTable { .. } => {
                if let Some(t) = before.filter(|t| g.claimable_by_name(t)) {
                    say(format!(
                        "{op} deleted {name}, a table claimable by name but not provably ours (made by {:?}, key {}, tags {:?})",
                        t.maker, t.key, t.tags
                    ));
                } else if let Some(why) = &foreign {
                    say(format!("{op} deleted {name}, which is foreign: {why}"));
                }
            }
            Effect::TableCapacity { from, to, .. }
            | Effect::AutoscalerCapacity {
                index: None,
                from,
                to,
                ..
            } => {
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} changed the capacity of {name} ({from} -> {to}), which is foreign: {why}"
                    ));
                }
                for (dimension, why) in g.claims_changed(&format!("table/{name}"), *from, *to) {
                    say(format!(
                        "{op} changed the {dimension} capacity of {name} ({from} -> {to}) under {why}"
                    ));
                }
            }
            Effect::IndexCapacity { index, from, to, .. }
            | Effect::AutoscalerCapacity {
                index: Some(index),
                from,
                to,
                ..
            } => {
                if let Some(why) = &foreign {
                    say(format!("{op} changed index {index} of {name} ({from} -> {to}), and the table is foreign: {why}"));
                }
                if let Some(why) = g.foreign_gsi(name, index) {
                    say(format!(
                        "{op} changed the throughput of a foreign GSI of {name} ({from} -> {to}): {why}"
                    ));
                }
                let resource = format!("table/{name}/index/{index}");
                for (dimension, why) in g.claims_changed(&resource, *from, *to) {
                    say(format!(
                        "{op} changed the {dimension} capacity of index {index} of {name} ({from} -> {to}) under {why}"
                    ));
                }
            }
            Effect::Tagged {
                tags, before: had, ..
            } => {
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} tagged {name} with {tags:?}, which is foreign: {why}"
                    ));
                }
                if let Some(family) = tags.get(FAMILY_TAG) {
                    if had.get(FAMILY_TAG) != Some(family) {
                        let whose = before.map_or("?".into(), |t| {
                            format!("made by {:?}, adopted {}, key {}", t.maker, t.adopted, t.key)
                        });
                        say(format!(
                            "{op} wrote {FAMILY_TAG} = {family:?} onto the existing table {name} ({whose}; its tags were {had:?}): only CreateTable may write it"
                        ));
                    }
                }
            }
            Effect::Warm { index, from, to, .. } => {
                let part = index
                    .as_ref()
                    .map_or("the table".to_string(), |i| format!("index {i}"));
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} raised the warm throughput of {part} of {name} ({from} -> {to}), and the table is foreign: {why}"
                    ));
                }
                if let Some(why) = index.as_ref().and_then(|i| g.foreign_gsi(name, i)) {
                    say(format!(
                        "{op} raised the warm throughput of a foreign GSI of {name} ({from} -> {to}): {why}"
                    ));
                }
            }
            Effect::Setting { setting, .. }
                if setting == "deletion protection off"
                    && before.and_then(|t| g.foreign_protection(t)).is_some() =>
            {
                let why = before.and_then(|t| g.foreign_protection(t)).unwrap_or_default();
                say(format!(
                    "{op} turned off the deletion protection of {name}: {why}"
                ));
            }
            // The change stream: our runs enable the policy's stream's destination on tables of
            // ours, and never disable, change or delete anything of Kinesis.
            Effect::EnabledDestination { stream_arn, .. } => {
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} enabled a Kinesis destination on {name}, which is foreign: {why}"
                    ));
                }
                let wanted = f.policy.stream.kinesis.as_ref().map(|k| k.stream_arn.as_str());
                if wanted != Some(stream_arn.as_str()) {
                    say(format!(
                        "{op} enabled a destination of {name} to {stream_arn}, not the policy's stream ({wanted:?})"
                    ));
                }
            }
            Effect::DisabledDestination { stream_arn, .. } => {
                say(format!(
                    "{op} disabled the destination of {name} to {stream_arn}: runs never disable one"
                ));
            }
            Effect::DestinationPrecision { stream_arn, .. } => {
                say(format!(
                    "{op} changed the destination of {name} to {stream_arn}: runs never change one"
                ));
            }
            Effect::DeletedKinesisStream { stream_arn, .. } => {
                say(format!("{op} deleted the Kinesis stream {stream_arn}"));
            }
            // The consumer: our runs map only the policy's function, only on the latest stream
            // of a table of ours, and delete only a mapping of it on a stream of a table of
            // ours; they never disable a mapping or delete a function.
            Effect::CreatedMapping {
                uuid,
                function_arn,
                stream_arn,
                ..
            } => {
                count("promise 1: a mapping we made judged");
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} mapped {function_arn} ({uuid}) to the stream of {name}, which is foreign: {why}"
                    ));
                }
                let wanted = f.policy.stream.lambda.as_ref().map(|l| l.function.as_str());
                if wanted != Some(function_arn.as_str()) {
                    say(format!(
                        "{op} mapped {function_arn} to the stream of {name}, not the policy's consumer ({wanted:?})"
                    ));
                }
                let after = f.after.tables.get(name);
                if before.is_none() && !after.is_some_and(|t| t.maker.is_us()) {
                    say(format!(
                        "{op} mapped {function_arn} to the stream of {name}, a table the run neither found nor made"
                    ));
                }
                let latest = after.and_then(|t| t.stream_arn.as_deref());
                if latest != Some(stream_arn.as_str()) {
                    say(format!(
                        "{op} mapped {function_arn} to {stream_arn}, not the latest stream of {name} ({latest:?})"
                    ));
                }
            }
            Effect::DeletedMapping {
                uuid,
                function_arn,
                stream_arn,
                maker,
                ..
            } => {
                count(format!(
                    "promise 1: a mapping we deleted judged (made by {})",
                    if maker.is_us() { "us" } else { "someone else" }
                ));
                let wanted = f.policy.stream.lambda.as_ref().map(|l| l.function.as_str());
                if wanted != Some(function_arn.as_str()) {
                    say(format!(
                        "{op} deleted the mapping {uuid} of {function_arn} (made by {maker:?}) on the stream of {name}: not the policy's consumer ({wanted:?}), someone else's"
                    ));
                }
                match before {
                    None => say(format!(
                        "{op} deleted the mapping {uuid} on {stream_arn}, the stream of {name}, a table the run did not find"
                    )),
                    Some(t) => {
                        if let Some(why) = &foreign {
                            say(format!(
                                "{op} deleted the mapping {uuid} on the stream of {name}, which is foreign: {why}"
                            ));
                        }
                        if t.stream_arn.as_deref() != Some(stream_arn.as_str()) {
                            say(format!(
                                "{op} deleted the mapping {uuid} on {stream_arn}, not the latest stream of {name} ({:?}): not provably ours",
                                t.stream_arn
                            ));
                        }
                    }
                }
            }
            Effect::DisabledMapping {
                uuid, function_arn, ..
            } => {
                say(format!(
                    "{op} disabled the mapping {uuid} of {function_arn} on the stream of {name}: runs never disable one"
                ));
            }
            Effect::UpdatedMapping {
                uuid,
                function_arn,
                maker,
                ..
            } => {
                count("promise 1: a mapping we updated judged".to_string());
                let wanted = f.policy.stream.lambda.as_ref().map(|l| l.function.as_str());
                if wanted != Some(function_arn.as_str()) || !maker.is_us() {
                    say(format!(
                        "{op} updated the mapping {uuid} of {function_arn} (made by {maker:?}) on the stream of {name}: only ours, of the policy's consumer ({wanted:?}), is ever updated"
                    ));
                }
            }
            Effect::DeletedFunction { function_arn, .. } => {
                say(format!("{op} deleted the Lambda function {function_arn}"));
            }
            Effect::TableClass { .. }
            | Effect::Setting { .. }
            | Effect::AddedIndex { .. }
            | Effect::Ttl { .. }
            | Effect::Pitr { .. }
            | Effect::Untagged { .. }
            | Effect::Exported { .. } => {
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} changed {name} ({effect:?}), which is foreign: {why}"
                    ));
                }
            }
            Effect::RegisteredTarget {
                key,
                before: bounds,
                after,
            } => {
                if let Some(target) = f.before.targets.get(key) {
                    if let Some(why) = g.claim_on(&key.resource_id, key.dimension.is_read()) {
                        say(format!(
                            "{op} registered over the scalable target {key} (made by {:?}, bounds {bounds:?} -> {after:?}), which is not ours alone: {why}",
                            target.maker
                        ));
                    }
                }
                if let Some(why) = &foreign {
                    say(format!(
                        "{op} registered a scalable target {key} on {name}, which is foreign: {why}"
                    ));
                }
                if let Some((_, index)) = key.resource_id.split_once("/index/") {
                    if let Some(why) = g.foreign_gsi(name, index) {
                        say(format!(
                            "{op} registered a scalable target {key} on a foreign GSI: {why}"
                        ));
                    }
                }
            }
            Effect::PutScheduledAction {
                key, name: action, ..
            } => {
                say(format!(
                    "{op} put the scheduled action {action:?} on {key}: we never make one"
                ));
            }
            Effect::DeletedScheduledAction { key, action } => {
                say(format!(
                    "{op} deleted the scheduled action {:?} on {key} (made by {:?})",
                    action.name, action.maker
                ));
            }
            Effect::PutPolicy {
                key, name: policy, ..
            } => {
                if !is_our_policy_name(policy) {
                    say(format!(
                        "{op} put the policy {policy:?} on {key}, which is not ours"
                    ));
                }
                // PutScalingPolicy of an existing name replaces that policy: never someone's
                // named like ours.
                let replaced = f
                    .before
                    .targets
                    .get(key)
                    .and_then(|t| t.policies.iter().find(|p| p.name == *policy));
                if let Some(theirs) = replaced.filter(|p| !p.maker.is_us()) {
                    say(format!(
                        "{op} put the policy {policy:?} on {key} over someone else's of that name (made by {:?})",
                        theirs.maker
                    ));
                }
            }
            Effect::DeletedPolicy { key, policy } => {
                if !is_our_policy(policy) {
                    say(format!(
                        "{op} deleted the foreign {} policy {:?} on {key} (made by {:?})",
                        policy.policy_type, policy.name, policy.maker
                    ));
                }
            }
            Effect::DeregisteredTarget {
                key,
                maker,
                policies,
                scheduled_actions,
            } => {
                for a in scheduled_actions {
                    say(format!(
                        "{op} deregistered the scalable target {key}, which carried the scheduled action {:?} (made by {:?}): DeregisterScalableTarget deleted it",
                        a.name, a.maker
                    ));
                }
                for p in policies.iter().filter(|p| !is_our_policy(p)) {
                    say(format!(
                        "{op} deregistered the scalable target {key}, which carried the foreign {} policy {:?} (made by {:?}): DeregisterScalableTarget deleted it",
                        p.policy_type, p.name, p.maker
                    ));
                }
                if let Some(target) = f.before.targets.get(key).filter(|t| !target_is_ours(t)) {
                    say(format!(
                        "{op} deregistered the foreign scalable target {key} (made by {:?} / {maker:?})",
                        target.maker
                    ));
                }
            }
        }
    }
    // DynamoDB refuses a lower warm throughput: no run of ours may ask for one.
    for call in f.calls {
        if let Some((_, message)) = call.error.as_ref().filter(|(_, m)| m.contains(LOWER_WARM)) {
            say(format!(
                "{} {} asked to lower a warm throughput: {message}",
                call.operation, call.table
            ));
        }
    }
    // The plan itself: leaving an autoscaling phase never asks to deregister a target that
    // carries someone else's policy (the adapter would refuse it, the decision must not ask it).
    for line in &f.report.tables {
        let ddb_rollover::Decision::DeregisterScaling(change) = &line.item.decision else {
            continue;
        };
        for removal in change.targets.iter().filter(|r| r.deregister_target) {
            let Some(target) = f.before.targets.get(&removal.key) else {
                continue;
            };
            let theirs: Vec<&str> = target
                .policies
                .iter()
                .filter(|p| !is_our_policy(p))
                .map(|p| p.name.as_str())
                .collect();
            if !theirs.is_empty() || !target_is_ours(target) {
                out.push(format!(
                    "{}: {} planned to deregister the scalable target {} (made by {:?}), which carries the policies {theirs:?} that are not ours",
                    f.step, line.item.facts.table, removal.key, target.maker
                ));
            }
        }
    }
    out
}
