//! The planner: `plan(policy, now, observed tables, operation)` decides everything a run does.
//!
//! Pure on purpose: no I/O, no clock, no randomness. The same inputs always give the same
//! plan, so a retried scheduled run decides the same thing, and every rule is testable with a
//! fixed clock. Every item carries the reason for its decision, including the reasons for
//! doing nothing.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use crate::ledger::{Book, TableState};
use crate::plan::verdict::{ConsumerState, Judge, NotOurs, OwnedBy, Owner, Verdict};
use crate::policy::naming::{Ownership, TableNaming};
use crate::policy::scaling::ObservedScalableTarget;
use crate::policy::tags::TAG_FAMILY;
use crate::policy::Policy;
use crate::table::{ObservedTable, TableStatus};

mod context;
mod decision;
pub(crate) mod deferral;
mod indexes;
mod phase;
mod quota;
pub(crate) mod restore;
mod retention;
mod scaling;
mod scope;
mod seal;
mod stream;
mod upkeep;
pub(crate) mod verdict;
mod warm;
mod warnings;

use context::{ages_from, premake_slots, Context, Owned};

pub use decision::{Decision, Operation, Plan, PlanItem, TableFacts};
use quota::{family_tables, quota_warning, QuotaHorizon};
pub use scope::Scope;
pub(crate) use scope::{names_to_describe, reads_for};
pub(crate) use scope::{target_names, Reads};
use warnings::{named_like_ours, neighbour_warnings, retagged_warning};

/// Decides what `operation` does at `now`, given the tables that exist, as if the family's
/// ledger recorded every one of them that carries its family tag, its key and a period
/// ([`Book::enrolling`]): the planner's rules on their own. A run plans with [`plan_run`], on
/// the ledger it read.
///
/// `observed` may hold any tables. Each gets one [`Verdict`] (`Judge`), which every action
/// asks: only tables it finds ours are acted on, and only on their parts that are ours; other
/// names with the prefix are reported as foreign (with a warning for another family's), and
/// all others are ignored. Each table gets its main item first (create, capacity, class), then
/// one item per template setting to restore and per retention step.
pub fn plan(policy: &Policy, now: DateTime<Utc>, observed: &[ObservedTable], operation: Operation) -> Plan {
    let book = Book::enrolling(policy, observed);
    let seen = Seen {
        tables: observed,
        listed_only: &[],
        vacant_targets: &[],
        book: &book,
    };
    plan_run(policy, now, &seen, operation)
}

/// What a run saw, as the planner reads it: the tables it described, the names it only listed
/// (they count towards the table quota too), the scalable targets registered on names whose
/// table does not exist (deleting a table deregisters nothing: a table created under such a
/// name is not registered over one that is not ours alone), and the family's ledger.
#[derive(Clone, Copy, Debug)]
pub struct Seen<'a> {
    /// The tables described.
    pub tables: &'a [ObservedTable],
    /// The names only listed.
    pub listed_only: &'a [String],
    /// The scalable targets on names without a table.
    pub vacant_targets: &'a [ObservedScalableTarget],
    /// The family's ledger.
    pub book: &'a Book,
}

/// [`plan`] for what a run saw.
pub fn plan_run(policy: &Policy, now: DateTime<Utc>, seen: &Seen<'_>, operation: Operation) -> Plan {
    let Seen {
        tables: observed,
        listed_only,
        vacant_targets,
        book,
    } = *seen;
    let naming = policy.naming();
    let calendar = naming.calendar();
    let current = calendar.floor(now);
    let judge = Judge::new(policy, book);

    let mut owned: Vec<Owned> = Vec::new();
    let mut items = Vec::new();
    for table in observed {
        let Some(verdict) = judge.verdict(table) else {
            continue;
        };
        match &verdict.owner {
            Owner::Ours { slot, period, .. } => owned.push(Owned {
                slot: *slot,
                bounds: *period,
                period: table.name[naming.name_prefix().len()..].to_string(),
                table,
                verdict,
            }),
            Owner::NotOurs { .. } => items.push(foreign_item(policy, table, verdict)),
        }
    }
    owned.sort_by(|a, b| (a.slot, &a.table.name).cmp(&(b.slot, &b.table.name)));
    items.extend(ledger_items(
        policy,
        now,
        &naming,
        book,
        &owned,
        observed,
        listed_only,
    ));

    let targets = premake_slots(policy, current);
    let ages = ages_from(
        calendar,
        current,
        owned.iter().map(|o| o.slot).chain(targets.iter().copied()),
    );
    let ctx = Context {
        policy,
        now,
        current,
        ages,
        policy_hash: policy.hash(),
        lowered: book
            .tables
            .values()
            .filter(|entry| entry.record.lowered.is_some_and(|phase| phase > 0))
            .map(|entry| entry.record.name.clone())
            .collect(),
    };
    match operation {
        Operation::CreateNew => {
            let target_names: BTreeSet<String> = targets.iter().map(|&s| naming.table_name(s)).collect();
            for &slot in &targets {
                let name = naming.table_name(slot);
                // A table that is not ours holds the name: writes for the period would land
                // in it, and creating ours is impossible. Loud, never "done".
                // (The ledger's own items name tables of ours.)
                let taken = items
                    .iter_mut()
                    .find(|i| i.facts.table == name && !matches!(i.decision, Decision::Record(_)));
                if let Some(taken) = taken {
                    taken.reason = format!(
                        "the {} period's table name is taken by a table that is not this policy's ({}): rename or delete that table, or change the policy's prefix",
                        if slot == current { "current" } else { "upcoming" },
                        taken.reason
                    );
                    taken.decision = Decision::Blocked;
                    continue;
                }
                let existing = owned.iter().find(|o| o.table.name == name);
                // Deleted by retention: only `restore`, naming the receipt, brings it back. An
                // empty table for the period would be archived again in place of the data.
                if let (None, Some(receipt)) = (existing, book.receipts_of(&name).last()) {
                    let reason = format!(
                        "the {} period's table was deleted by retention at {} (receipt {} in the family's ledger{}): create_new never makes a deleted period's table again; `ddb-rollover restore` brings it back",
                        if slot == current { "current" } else { "upcoming" },
                        receipt.record.at.to_rfc3339(),
                        receipt.key,
                        receipt
                            .record
                            .archive
                            .as_ref()
                            .map(|a| format!(", archived by {}", a.export_arn))
                            .unwrap_or_default()
                    );
                    let period = calendar.label(slot);
                    items.push(ctx.item_for(slot, &name, &period, None, Decision::Blocked, reason));
                    continue;
                }
                let main = ctx.create_new_item(slot, &name, existing);
                let mut updates_table = main.decision.updates_table();
                let created = matches!(main.decision, Decision::Create(_));
                // Made again after someone deleted it: a new table, with no destination and a
                // new stream.
                let rebuilt = matches!(main.decision, Decision::Recreate(_));
                items.push(main);
                items.extend(ctx.stream_item(slot, &name, existing, created || rebuilt));
                // A table created in an autoscaling phase 0 gets its targets in the same run;
                // a pre-built one gets those it lacks (never the current table: see
                // create_new_item; resize_old looks after it).
                match (existing, policy.hot_phase().autoscaling) {
                    (None, Some(want)) if created => {
                        // A table of ours someone deleted may have left our targets on the name.
                        let recorded = book
                            .table(&name)
                            .map(|entry| entry.record.scaling_policies.as_slice())
                            .unwrap_or_default();
                        let (decision, reason) = ctx.register_new(&name, &want, vacant_targets, recorded);
                        let period = calendar.label(slot);
                        items.push(ctx.item_for(slot, &name, &period, None, decision, reason));
                    }
                    (Some(existing), Some(_)) if ctx.raises(slot, &name) => {
                        let provisioned = scaling::is_provisioned(existing.table.billing);
                        items.extend(ctx.register_item(existing, provisioned));
                    }
                    _ => {}
                }
                if let Some(existing) = existing {
                    // A pre-built table is raised to phase 0's warm throughput; the current one
                    // is left as is, like its capacity (see create_new_item).
                    let rebuilt = existing.table.status == TableStatus::Deleting;
                    if ctx.raises(slot, &name) && !rebuilt {
                        if let Some(item) = ctx.warm_item(existing, ctx.phase_index(slot), updates_table) {
                            updates_table |= item.decision.updates_table();
                            items.push(item);
                        }
                    }
                    items.extend(ctx.upkeep_items(existing, updates_table));
                }
                // Last: a table's stream exists once the table is created, or once upkeep above
                // turned the template's stream on. The deleted table's mapping of ours is left on
                // its old stream: removed, then the new table's stream gets its own.
                items.extend(
                    existing
                        .filter(|_| rebuilt)
                        .and_then(|e| ctx.unmap_deleted_item(e)),
                );
                items.extend(ctx.mapping_items(slot, &name, existing, created || rebuilt));
            }
            for o in owned.iter().filter(|o| !target_names.contains(&o.table.name)) {
                let why = if o.slot < current {
                    "past period: resize_old's concern"
                } else {
                    "future period beyond premake: left as is until it comes within reach"
                };
                items.push(ctx.item(o, Decision::Skipped, why.into()));
            }
        }
        Operation::ResizeOld => {
            let mut retention = ctx.retention_items(&owned);
            for o in &owned {
                let steps = retention.remove(&o.table.name).unwrap_or_default();
                if steps.iter().any(|s| matches!(s.decision, Decision::Delete(_))) {
                    items.extend(steps);
                    continue;
                }
                let main = ctx.resize_old_items(o);
                let mut updates_table = main.iter().any(|item| item.decision.updates_table());
                items.extend(main);
                if ctx.age(o.slot) > 0 {
                    if let Some(item) = ctx.warm_item(o, ctx.phase_index(o.slot), updates_table) {
                        updates_table |= item.decision.updates_table();
                        items.push(item);
                    }
                }
                items.extend(ctx.upkeep_items(o, updates_table));
                items.extend(steps);
            }
        }
    }
    items.extend(listed_only.iter().filter_map(|name| {
        let reason = if !named_like_ours(&naming, name) {
            format!(
                "starts with {:?} but the rest is not a period label: not ours, never described or touched",
                naming.name_prefix()
            )
        } else if book.table(name).is_none() {
            // create_new lists every table but its own: one named like ours that the ledger
            // does not record is not ours, whatever a description would add.
            "named like this policy's tables, but the family's ledger does not record it: not ours, never described or touched".to_string()
        } else {
            // Recorded: one of ours this run does not look at (resize_old's concern).
            return None;
        };
        Some(PlanItem::unobserved(name, Decision::Foreign, reason))
    }));
    // Stable: a table's items keep their order (main item first).
    items.sort_by(|a, b| a.facts.table.cmp(&b.facts.table));

    Plan {
        operation,
        at: now,
        prefix: policy.prefix.clone(),
        current_period: calendar.label(current),
        warnings: neighbour_warnings(&naming, &items)
            .into_iter()
            .chain(quota_warning(
                policy,
                now,
                family_tables(
                    &naming,
                    observed
                        .iter()
                        .map(|t| t.name.as_str())
                        .chain(listed_only.iter().map(String::as_str)),
                ),
                QuotaHorizon::NextYear,
            ))
            .chain(scaling::foreign_scaling_warning(&owned))
            .chain(retagged_warning(policy, &owned))
            .chain(retention::kept_warnings(&ctx, &owned))
            .collect(),
        items,
    }
}

/// What an operator's view (`status`, `plan`: `observed` read in full) warns of: the
/// neighbours under the prefix as the full view knows them (it reads every table's tags, so
/// another family's are named as such), the runs' own other warnings (`runs`, each planned on
/// what its run reads), and the table quota. A table is named in one warning: the runs' own
/// neighbour warnings, from what they read, would name the same tables again, maybe as
/// something else ("not in the ledger" for another family's), so they are left to the full
/// view's. Each warning said once.
pub(crate) fn operator_warnings(
    policy: &Policy,
    now: DateTime<Utc>,
    seen: &Seen<'_>,
    runs: &[&Plan],
) -> Vec<String> {
    let naming = policy.naming();
    let full = plan_run(policy, now, seen, Operation::ResizeOld);
    // Where an operator plans, the table quota is said however far away it is.
    let tables = family_tables(&naming, seen.tables.iter().map(|t| t.name.as_str()));
    let quota = quota_warning(policy, now, tables, QuotaHorizon::Ever);
    let runs_own = runs.iter().flat_map(|run| {
        let neighbours = neighbour_warnings(&naming, &run.items);
        run.warnings.iter().filter(move |w| !neighbours.contains(w))
    });
    let mut warnings: Vec<String> = Vec::new();
    for warning in full.warnings.iter().chain(runs_own).cloned().chain(quota) {
        if !warnings.contains(&warning) {
            warnings.push(warning);
        }
    }
    warnings
}

fn foreign_item(policy: &Policy, table: &ObservedTable, verdict: Verdict) -> PlanItem {
    let prefix = format!("{}_", policy.prefix);
    let Owner::NotOurs { why } = &verdict.owner else {
        unreachable!("a foreign item is for a table that is not ours")
    };
    let reason = match why {
        NotOurs::OtherFamily { family } => format!(
            "its {TAG_FAMILY} tag says it belongs to the family {family:?}, not {:?}: another policy's table, never touched",
            policy.prefix
        ),
        NotOurs::UnknownName => format!(
            "starts with {prefix:?} but the rest is not a {} label and no {TAG_FAMILY} tag claims it: not ours, never touched",
            policy.period
        ),
        NotOurs::LookAlike { have } => format!(
            "named like this policy's tables but its key is {}, the policy's is {}, and no {TAG_FAMILY} tag claims it: not ours, never touched",
            have,
            policy.key
        ),
        NotOurs::ShortImport { .. } | NotOurs::NotRecorded | NotOurs::MadeAgain { .. } => {
            format!("{why}: not ours, never touched")
        }
    };
    PlanItem {
        facts: TableFacts {
            status: Some(table.status.as_str().to_string()),
            billing: Some(table.billing),
            ..TableFacts::named(&table.name)
        },
        verdict: Some(verdict),
        ..PlanItem::unobserved(&table.name, Decision::Foreign, reason)
    }
}

/// The ledger's own lines: a failed one when the ledger cannot be rested on while tables of the
/// family exist (said once per run, not once per table), and a record for each table whose
/// intent a crashed run left and DynamoDB now shows made.
/// How long after its intent a run of ours has surely ended (a Lambda function's longest
/// timeout, 15 minutes): an intent older than that was left by a run that crashed.
const INTENT_OUTLIVED: chrono::Duration = chrono::Duration::minutes(15);

fn ledger_items(
    policy: &Policy,
    now: DateTime<Utc>,
    naming: &TableNaming,
    book: &Book,
    owned: &[Owned],
    observed: &[ObservedTable],
    listed_only: &[String],
) -> Vec<PlanItem> {
    let mut items = Vec::new();
    let ledger = naming.ledger_name();
    let family_exists = observed
        .iter()
        .map(|t| t.name.as_str())
        .chain(listed_only.iter().map(String::as_str))
        .any(|name| {
            matches!(naming.classify(name), Ownership::Owned(_)) || naming.is_label_of_any_period(name)
        });
    if let Some(problem) = book.problem(&ledger) {
        if family_exists || !book.unreadable.is_empty() {
            items.push(PlanItem::unobserved(&ledger, Decision::Blocked, problem));
        }
    }
    for o in owned {
        let Some(entry) = book.table(&o.table.name) else {
            continue;
        };
        let mut record = entry.record.clone();
        let mut settled = Vec::new();
        // A run that wrote an intent may still be running (a create_new beside this run): it
        // records its own outcome. Only a run that cannot still be alive has crashed.
        let outlived = |at: DateTime<Utc>| book.read_at.unwrap_or(now) >= at + INTENT_OUTLIVED;
        if let (
            Owner::Ours {
                by: OwnedBy::Intent, ..
            },
            TableState::Intended { at },
            Some(identity),
        ) = (&o.verdict.owner, &entry.record.state, o.table.identity())
        {
            if outlived(*at) {
                record.state = TableState::Made { identity };
                settled.push(format!(
                    "a run wrote its intent for the table (policy {}) and did not live to record the outcome; the table DynamoDB shows was created since, with the recorded key",
                    policy.hash()
                ));
            }
        }
        if let (Some(feeds), Some(ConsumerState::Ours { uuid, .. })) =
            (record.feeds.as_mut(), &o.verdict.consumer)
        {
            if feeds.mapping_intended.is_some_and(outlived) && !feeds.mappings.contains(uuid) {
                feeds.mappings.push(uuid.clone());
                feeds.mapping_intended = None;
                settled.push(format!(
                    "a run wrote its intent to map the family's consumer and did not live to record the mapping; Lambda shows mapping {uuid} of that function, modified since"
                ));
            }
        }
        if settled.is_empty() {
            continue;
        }
        items.push(PlanItem {
            verdict: Some(o.verdict.clone()),
            ..PlanItem::unobserved(
                &o.table.name,
                Decision::Record(record),
                format!(
                    "record in the family's ledger what AWS shows: {}",
                    settled.join("; ")
                ),
            )
        });
    }
    items
}
