//! Promise 7: the ledger keeps the family's memory (an intent resolves only to a table our
//! CreateTable made, a period retention deleted is never made again, a held lease means no
//! change); promise 8: ages come from the periods the tables hold, never from the run's instant
//! or time zone; promise 9: `restore` brings back exactly the archive the deletion relied on.
//! Each judged from the fake's ground truth: who made each table, who wrote each ledger item.

use ddb_rollover::ledger::TableRecord;
use ddb_rollover::policy::Billing;
use ddb_rollover::policy::{export_arn_from_tag, TAG_EXPORT, TAG_FINAL_EXPORT};
use ddb_rollover::Operation;
use fake_aws::{Effect, LedgerWrite, Maker, World};

use crate::facts::RunFacts;
use crate::ground::ledger_name;
use crate::ground::{forged_identity, impersonates};
use crate::ground::{label_slot, ledger_items, table_with_identity};
use crate::tally::count;

/// The ledger writes our run made.
fn run_writes<'w>(f: &'w RunFacts<'_>) -> impl Iterator<Item = &'w LedgerWrite> {
    f.after.ledger_writes[f.before.ledger_writes.len()..]
        .iter()
        .filter(|w| w.actor.is_us() && w.ledger == ledger_name())
}

/// Promise 7: the ledger keeps the family's memory.
/// - Every table our run recorded as made names a table our CreateTable made (or the operator
///   adopted, enrolled or restored): an intent a crashed run left resolves only to a table our
///   CreateTable made. Tolerated, and said: an identity someone else's edit of the ledger put
///   there first (the ledger is the trust root), and a table someone made with our family tag
///   (no less evidence than before the ledger).
/// - A period whose table a run of ours deleted is never created again by create_new, unless
///   the receipt that deletion wrote is no longer in the ledger as written (deleted, edited,
///   made unreadable, or the ledger table deleted): the receipt is the family's only memory of
///   it. Every deletion of ours rests on a receipt the run wrote before its DeleteTable.
/// - A run while another run's lease of its operation is held changes nothing.
pub fn ledger_keeps_memory(f: &RunFacts<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let mut say = |what: String| out.push(format!("{}: {what}", f.step));
    for write in run_writes(f) {
        let Some(record) = write
            .record
            .as_ref()
            .filter(|_| write.key.starts_with("table#"))
            .and_then(|r| serde_json::from_str::<TableRecord>(&r.body).ok())
        else {
            continue;
        };
        let Some(identity) = record.identity() else {
            continue;
        };
        count("promise 7: a table record we wrote judged");
        match table_with_identity(f.after, identity) {
            Some(t) if t.maker.is_us() || t.adopted => {}
            Some(t) if forged_identity(f.after, &record.name, identity) => {
                count(format!(
                    "promise 7: tolerated: a run carried forward a forged record of a table made by {:?}",
                    t.maker
                ));
            }
            Some(t) if impersonates(t) => {
                count("promise 7: tolerated: a record of a table someone made with our family tag");
            }
            Some(t) => say(format!(
                "the run recorded {} as made by this family ({:?}), but it was made by {:?} (family tag {:?}), not by our CreateTable",
                record.name,
                record.origin,
                t.maker,
                t.family()
            )),
            None if forged_identity(f.after, &record.name, identity) => {}
            None => say(format!(
                "the run recorded {} with the identity {} created {}, which no table ever had",
                record.name,
                identity.arn,
                identity.created.to_rfc3339()
            )),
        }
    }
    let before_items = ledger_items(f.before);
    for (call, effect) in f.effects() {
        match effect {
            Effect::CreatedTable { table } => {
                let deleted_by_us = f
                    .before
                    .gone
                    .iter()
                    .chain(
                        f.before
                            .tables
                            .values()
                            .filter(|t| t.status == fake_aws::Status::Deleting),
                    )
                    .any(|t| t.name == *table && t.deleted_by.as_ref().is_some_and(Maker::is_us));
                if !deleted_by_us {
                    continue;
                }
                count("promise 7: create_new made a table of a period we deleted");
                let prefix = format!("receipt#{table}#");
                let receipts: Vec<&LedgerWrite> = f
                    .before
                    .ledger_writes
                    .iter()
                    .filter(|w| w.actor.is_us() && w.key.starts_with(&prefix) && w.record.is_some())
                    .collect();
                let kept = |w: &LedgerWrite| {
                    before_items
                        .as_ref()
                        .and_then(|items| items.get(&w.key))
                        .is_some_and(|item| Some(item) == w.record.as_ref())
                };
                if receipts.iter().all(|w| kept(w)) {
                    say(format!(
                        "{} created {table}, whose table a run of ours deleted, and the ledger still holds the receipts {:?} as written",
                        call.operation,
                        receipts.iter().map(|w| w.key.as_str()).collect::<Vec<_>>()
                    ));
                } else {
                    count("promise 7: tolerated: a deleted period made again after its receipt was lost");
                }
            }
            Effect::DeletedTable { table } if table.name != ledger_name() => {
                let receipt = format!(
                    "receipt#{}#{:013}",
                    table.name,
                    table.created_at.timestamp_millis()
                );
                // Where the ledger's writes are not logged (a real server: moto), the ledger as
                // read after the run holds the receipt of the table's name.
                let written = if f.after.ledger_writes.is_empty() {
                    let name = format!("receipt#{}#", table.name);
                    f.after
                        .tables
                        .get(&ledger_name())
                        .is_some_and(|l| l.records.keys().any(|(_, key)| key.starts_with(&name)))
                } else {
                    run_writes(f).any(|w| w.key == receipt && w.record.is_some() && w.at <= call.at)
                };
                if !written {
                    say(format!(
                        "DeleteTable {} without its receipt {receipt} written first by the run",
                        table.name
                    ));
                }
            }
            _ => {}
        }
    }
    let lease = format!("lease#{}", f.operation);
    let held = before_items
        .as_ref()
        .and_then(|items| items.get(&lease))
        .and_then(|item| item.expires)
        .is_some_and(|expires| expires > f.now.timestamp());
    if held {
        count(format!("promise 7: a run while {lease} is held"));
        let changes: Vec<String> = f
            .calls
            .iter()
            .filter(|c| c.succeeded() && (!c.effects.is_empty() || c.table != ledger_name()))
            .map(|c| format!("{} {}", c.operation, c.table))
            .collect();
        let writes: Vec<&str> = run_writes(f)
            // Starting a new family's ledger comes before the lease (there is none to take).
            .filter(|w| w.key != lease && w.key != "meta")
            .map(|w| w.key.as_str())
            .collect();
        if !changes.is_empty() || !writes.is_empty() {
            say(format!(
                "another run held {lease} until after {}, yet the run made the changes {changes:?} and wrote {writes:?}",
                f.now.to_rfc3339()
            ));
        }
    }
    out
}

/// Whether `to` gives more throughput than `from` in some dimension (on-demand is more than
/// any provisioned capacity).
fn raised(from: Billing, to: Billing) -> bool {
    match (from, to) {
        (Billing::Provisioned(a), Billing::Provisioned(b)) => b.read > a.read || b.write > a.write,
        (Billing::Provisioned(_), Billing::OnDemand(_)) => true,
        _ => false,
    }
}

/// Promise 8: ages come from the periods the tables hold (the ground truth: the policy they
/// were made under, whatever the run's time zone), never from the run's instant:
/// - create_new never raises the throughput (capacity, warm throughput) of a table whose period
///   began before the wall clock's (a late run, a past instant);
/// - no run sets a table whose period and write grace have not ended (by the wall clock) to
///   anything but phase 0's throughput, or raises it (when phase 0 is not autoscaling).
pub fn ages_hold(f: &RunFacts<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let hot = &f.policy.phases[0];
    for (call, effect) in f.effects() {
        let name = effect.table();
        // The period the table holds: the policy it was made under.
        let truth = f.truth_of(name);
        let calendar = truth.calendar();
        let wall = calendar.floor(f.now);
        let Some(slot) = label_slot(truth, name) else {
            continue;
        };
        let ours = f
            .before
            .tables
            .get(name)
            .is_some_and(|t| t.maker.is_us() || t.adopted);
        let aged = slot < wall;
        let grace = truth
            .grace
            .map(|g| chrono::Duration::from_std(g).expect("a small grace"))
            .unwrap_or_else(chrono::Duration::zero);
        let live = f.now < calendar.end(slot) + grace;
        // (raises, the throughput set when it is the table's capacity, what changed)
        let what = match effect {
            Effect::TableCapacity { from, to, .. } => {
                Some((raised(*from, *to), Some(*to), format!("{from} -> {to}")))
            }
            Effect::IndexCapacity { from, to, .. } => {
                Some((raised(*from, *to), None, format!("{from} -> {to}")))
            }
            Effect::Warm { from, to, .. } => Some((true, None, format!("warm {from} -> {to}"))),
            _ => None,
        };
        let Some((raise, to, change)) = what else {
            continue;
        };
        if f.operation == Operation::CreateNew && aged && raise {
            count("promise 8: create_new raised an aged table");
            out.push(format!(
                "{}: {} raised {name} ({change}), whose period {} began before the wall clock's ({}); the run was for {}",
                f.step,
                call.operation,
                calendar.label(slot),
                calendar.label(wall),
                f.at.to_rfc3339()
            ));
        }
        let Some(to) = to else {
            continue;
        };
        if ours && live && !raise && hot.autoscaling.is_none() {
            count("promise 8: a live table's capacity changed");
            if to != hot.billing {
                out.push(format!(
                    "{}: {} set {name} ({change}) while its period {} and write grace had not ended: not phase 0's {}",
                    f.step,
                    call.operation,
                    calendar.label(slot),
                    hot.billing
                ));
            }
        }
    }
    out
}

/// Promise 9: a `restore` of the period `name` that imported anything imported exactly the data
/// files of the export the deletion relied on (the export the deleted table's tags name, as
/// promise 6 reads them), from that export's bucket and `data/` prefix, as the export wrote
/// them: nothing written in S3 after it (an overwritten, deleted or cold file, another table's
/// export, a file list pointed elsewhere) is ever imported.
pub fn restore_brings_back_the_receipts_archive(before: &World, after: &World, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let imports: Vec<&fake_aws::Import> = after
        .imports
        .iter()
        .filter(|(arn, import)| import.table == name && !before.imports.contains_key(*arn))
        .map(|(_, import)| import)
        .collect();
    if imports.is_empty() {
        count("promise 9: restore imported nothing");
        return out;
    }
    let deleted = before
        .gone
        .iter()
        .rev()
        .find(|t| t.name == name && t.deleted_by.as_ref().is_some_and(Maker::is_us));
    let relied = deleted.and_then(|t| {
        let value = t.tags.get(TAG_FINAL_EXPORT).or_else(|| t.tags.get(TAG_EXPORT))?;
        before.exports.get(&export_arn_from_tag(&t.arn, value))
    });
    let Some(export) = relied else {
        out.push(format!(
            "restore imported into {name}, but no deletion of ours relied on an export of it"
        ));
        return out;
    };
    count("promise 9: restore imported, judged");
    let data = format!("{}/data/", export.directory);
    let written: Vec<(String, fake_aws::S3Object)> = export
        .objects()
        .into_iter()
        .filter(|(key, _)| key.starts_with(&data))
        .collect();
    for import in imports {
        if import.bucket != export.bucket || import.data_prefix != data {
            out.push(format!(
                "restore of {name} imported s3://{}/{}, not the archive its deletion relied on (s3://{}/{data}, export {})",
                import.bucket, import.data_prefix, export.bucket, export.arn
            ));
            continue;
        }
        let found: Vec<(String, fake_aws::S3Object)> = before
            .s3
            .iter()
            .filter(|((bucket, key), _)| *bucket == import.bucket && key.starts_with(&import.data_prefix))
            .map(|((_, key), object)| (key.clone(), object.clone()))
            .collect();
        if found != written {
            out.push(format!(
                "restore of {name} imported s3://{}/{}, which no longer holds what export {} wrote there (it holds {:?}, the export wrote {:?})",
                import.bucket,
                import.data_prefix,
                export.arn,
                found.iter().map(|(k, o)| (k, o.etag(), &o.storage_class)).collect::<Vec<_>>(),
                written.iter().map(|(k, o)| (k, o.etag())).collect::<Vec<_>>()
            ));
        }
    }
    out
}
