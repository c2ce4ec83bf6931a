//! Promise 2: no data lost: nothing deleted that was not provably ours and archived, and
//! every accepted write is in a live table or an export.

use chrono::Duration;
use ddb_rollover::Policy;
use fake_aws::{Effect, Maker, Table, World, FAMILY_TAG};

use crate::facts::RunFacts;
use crate::ground::foreign_statements;
use crate::ground::{label_slot, ledger_unsound, same_lsis};
use crate::names::PREFIX;
use crate::tally::count;

/// Promise 2: no table was deleted unless it was provably ours, had the policy's key and local
/// indexes, nothing foreign claimed it, it was old enough and its write grace had ended.
pub fn no_data_loss(f: &RunFacts<'_>) -> Vec<String> {
    let g = f.ground();
    let mut out = Vec::new();
    // Never on less evidence than before: a ledger that cannot be rested on deletes nothing.
    let unsound = ledger_unsound(f.before);
    for (call, effect) in f.effects() {
        let Effect::DeletedTable { table } = effect else {
            continue;
        };
        let name = &table.name;
        count(format!(
            "promise 2: deleted a table {}",
            if table.adopted {
                "adopted"
            } else if table.maker.is_us() {
                "we made"
            } else {
                "NOT OURS"
            }
        ));
        // The table as the run found it (the snapshot in the effect is the same table at the call).
        let t = f.before.tables.get(name).unwrap_or(table);
        let mut why = Vec::new();
        if let Some(unsound) = &unsound {
            why.push(format!("the run's ledger could not be rested on: {unsound}"));
        }
        if !g.provably_ours(t) {
            if g.claimed_beyond_reach(t, true) {
                count("promise 2: tolerated: deleted a table someone made with our family tag, which the ledger claims");
            } else {
                why.push(format!(
                    "it was not provably ours (made by {:?}, not adopted)",
                    t.maker
                ));
            }
        }
        if t.family() != Some(PREFIX) {
            why.push(format!(
                "it did not carry our family tag (its {FAMILY_TAG} was {:?})",
                t.family()
            ));
        }
        if t.key != f.policy.key {
            why.push(format!("its key {} is not the policy's {}", t.key, f.policy.key));
        }
        if !same_lsis(t, f.policy) {
            why.push(format!(
                "its local indexes {:?} are not the policy's {:?}",
                t.lsis.iter().map(|l| &l.name).collect::<Vec<_>>(),
                f.policy.local_indexes.iter().map(|l| &l.name).collect::<Vec<_>>()
            ));
        }
        if let Some(claim) = g.foreign_claims(t) {
            why.push(format!("something foreign claimed it: {claim}"));
        }
        // Lifted just before the delete: the protection as the run found it.
        if let Some(protection) = f.before.tables.get(name).and_then(|b| g.foreign_protection(b)) {
            if !why.iter().any(|w| w.contains(&protection)) {
                why.push(format!("its {protection}"));
            }
        }
        // Someone else's change feed from it, ended with it.
        let wanted = f.policy.stream.kinesis.as_ref().map(|k| k.stream_arn.as_str());
        for destination in f.before.destinations.get(name).into_iter().flatten() {
            if destination.status.holds() && Some(destination.stream_arn.as_str()) != wanted {
                why.push(format!(
                    "it fed someone else's Kinesis stream {} ({}), ended with it",
                    destination.stream_arn,
                    destination.status.as_str()
                ));
            }
        }
        // Someone else's consumer reading its stream, ended with it.
        let consumer = f.policy.stream.lambda.as_ref().map(|l| l.function.as_str());
        if let Some(stream_arn) = t.stream_arn.as_deref() {
            count("promise 2: a deleted table's mappings judged");
            for mapping in f.before.mappings.values().filter(|m| {
                m.event_source_arn == stream_arn
                    && m.state.stays()
                    && Some(m.function_arn.as_str()) != consumer
            }) {
                why.push(format!(
                    "someone else's Lambda mapping {} of {} ({}) read its stream, ended with it",
                    mapping.uuid,
                    mapping.function_arn,
                    mapping.state.as_str()
                ));
            }
        }
        why.extend(archive_cannot_last(f.policy, f.before, t));
        for sid in foreign_statements(t) {
            why.push(format!(
                "its resource-based policy held someone else's statement {sid}, destroyed with it"
            ));
        }
        for gsi in &t.gsis {
            let theirs = match f.policy.indexes.iter().find(|i| i.name == gsi.name) {
                None => true,
                Some(want) => want.key != gsi.key || want.projection != gsi.projection,
            };
            if theirs {
                why.push(format!(
                    "it carried the foreign GSI {} (made by {:?}), destroyed with it",
                    gsi.name, gsi.maker
                ));
            }
        }
        // Ages by the period the table holds: the policy it was made under.
        let calendar = f.truth_of(name).calendar();
        match label_slot(f.truth_of(name), name) {
            None => why.push("its name is not a period label of the policy".into()),
            Some(slot) => {
                let age = calendar.periods_between(slot, calendar.floor(f.now));
                match f.policy.retention.as_ref().and_then(|r| r.delete_after) {
                    None => why.push("the policy deletes nothing (no retention.delete_after)".into()),
                    Some(after) if age < i64::from(after) => {
                        why.push(format!("its age {age} is below delete_after {after}"))
                    }
                    _ => {}
                }
                let grace = f
                    .policy
                    .grace
                    .map(|g| Duration::from_std(g).expect("a small grace"))
                    .unwrap_or_else(Duration::zero);
                let end = calendar.end(slot) + grace;
                if call.at < end {
                    why.push(format!(
                        "the clock ({}) was before its period end + grace ({})",
                        call.at.to_rfc3339(),
                        end.to_rfc3339()
                    ));
                }
            }
        }
        if !why.is_empty() {
            out.push(format!(
                "{}: DeleteTable {name}: data lost, because {}",
                f.step,
                why.join("; ")
            ));
        }
    }
    out
}

/// What made the archive a deletion of `t` relied on (its final export, else its archive
/// export, by its tags) unable to outlive it in `world` (as the run found it): a bucket owned by
/// another account than the one the policy expects (`retention.bucket_owner`, else the
/// account's), or an object of the export under a lifecycle Expiration rule.
fn archive_cannot_last(policy: &Policy, world: &World, t: &Table) -> Vec<String> {
    use ddb_rollover::policy::{export_arn_from_tag, TAG_EXPORT, TAG_FINAL_EXPORT};
    let Some(archive) = policy.archive() else {
        return Vec::new();
    };
    let relied = t
        .tags
        .get(TAG_FINAL_EXPORT)
        .or_else(|| t.tags.get(TAG_EXPORT))
        .and_then(|value| world.exports.get(&export_arn_from_tag(&t.arn, value)));
    let Some(export) = relied else {
        return Vec::new();
    };
    count("promise 2: a deleted table's archive judged for owner and expiry");
    let bucket = world.bucket(&export.bucket);
    let expected = archive.bucket_owner.as_deref().unwrap_or(fake_aws::ACCOUNT_ID);
    let mut why = Vec::new();
    if bucket.owner != expected {
        why.push(format!(
            "its archive {} was in bucket {} of account {}, not of {expected}",
            export.arn, export.bucket, bucket.owner
        ));
    }
    let keys = [export.manifest_key(), export.files_key()]
        .into_iter()
        .chain(export.files.iter().map(|(key, _)| key.clone()));
    for key in keys {
        if let Some(expiration) = bucket.expiration(&key, world.now) {
            why.push(format!(
                "its archive's s3://{}/{key} was to expire ({expiration})",
                export.bucket
            ));
        }
    }
    why
}

/// Promise 6, with archiving on: every table our runs deleted holds, when deleted, exactly the
/// items of the export its deletion relied on (the final export after the seal, else the
/// archive export: the tags it carried), and every item write DynamoDB accepted is in a table
/// that was not deleted by us, or in such an export.
pub fn archives_hold_every_write(policy: &Policy, world: &World) -> Vec<String> {
    use ddb_rollover::policy::{export_arn_from_tag, TAG_EXPORT, TAG_FINAL_EXPORT};
    if policy.archive().is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    // Every incarnation of a table: gone, deleting, live.
    let all: Vec<&Table> = world.gone.iter().chain(world.tables.values()).collect();
    let deleted_by_us = |t: &Table| t.deleted_by.as_ref().is_some_and(Maker::is_us);
    let relied = |t: &Table| {
        let tags = &t.tags;
        let value = tags.get(TAG_FINAL_EXPORT).or_else(|| tags.get(TAG_EXPORT))?;
        world.exports.get(&export_arn_from_tag(&t.arn, value))
    };
    for t in all.iter().filter(|t| deleted_by_us(t)) {
        count("promise 6: a table we deleted");
        match relied(t) {
            None => out.push(format!("{} was deleted with no export recorded on it", t.name)),
            Some(export) if export.items != t.items => {
                let lost: Vec<&String> = t.items.difference(&export.items).collect();
                out.push(format!(
                    "{} was deleted holding {} item(s) but the export it relied on ({}, as of {}) holds {}: lost {lost:?}",
                    t.name,
                    t.items.len(),
                    export.arn,
                    export.export_time.to_rfc3339(),
                    export.items.len()
                ));
            }
            Some(_) => count("promise 6: deleted with an archive of every item"),
        }
    }
    for write in &world.writes {
        let holders: Vec<&&Table> = all
            .iter()
            .filter(|t| t.name == write.table && t.items.contains(&write.item))
            .collect();
        let kept = holders
            .iter()
            .any(|t| !deleted_by_us(t) || relied(t).is_some_and(|e| e.items.contains(&write.item)));
        if !kept {
            out.push(format!(
                "the write of {} to {} at {} was accepted, but neither a table nor the archive of a table we deleted holds it",
                write.item,
                write.table,
                write.at.to_rfc3339()
            ));
        }
    }
    out
}
