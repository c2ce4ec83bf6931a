//! Promise 4: resize_old converges: each table of ours ends in the phase its age calls for.

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::Billing;
use ddb_rollover::policy::Slot;
use ddb_rollover::policy::{ScalableDimension, ScalableKey};
use ddb_rollover::DeferralCause;
use ddb_rollover::Outcome;
use ddb_rollover::{Operation, Policy};
use fake_aws::{Effect, Status, Table};

use crate::facts::RunFacts;
use crate::ground::{is_our_policy, label_slot, ledger_items, ledger_unsound, our_policy_name};
use crate::loud::confirm_deferral;
use crate::tally::count;

/// The parts of `table` (the table, its GSIs) with less warm throughput than `phase` asks for.
pub fn warm_differences(f: &RunFacts<'_>, table: &Table, phase: usize) -> Vec<String> {
    let Some(want) = f.policy.phases[phase].warm else {
        return Vec::new();
    };
    let mut below = Vec::new();
    if !table.warm.units.covers(want) {
        below.push(format!(
            "its warm throughput is {}, the phase's {want}",
            table.warm.units
        ));
    }
    for gsi in table.gsis.iter().filter(|g| !g.warm.units.covers(want)) {
        below.push(format!(
            "index {}'s warm throughput is {}, the phase's {want}",
            gsi.name, gsi.warm.units
        ));
    }
    below
}

/// How the table differs from `phase` in the fake, as (capacity problems, class problems).
pub fn phase_differences(f: &RunFacts<'_>, table: &Table, phase: usize) -> (Vec<String>, Vec<String>) {
    let want = &f.policy.phases[phase];
    let mut capacity = Vec::new();
    match want.autoscaling {
        Some(a) => {
            if !matches!(table.billing, Billing::Provisioned(_)) {
                capacity.push(format!(
                    "it is {}, an autoscaling phase needs provisioned",
                    table.billing
                ));
            }
            let mut resources = vec![(format!("table/{}", table.name), false)];
            resources.extend(
                table
                    .gsis
                    .iter()
                    .map(|g| (format!("table/{}/index/{}", table.name, g.name), true)),
            );
            for (resource_id, index) in resources {
                let dims = if index {
                    [ScalableDimension::IndexRead, ScalableDimension::IndexWrite]
                } else {
                    [ScalableDimension::TableRead, ScalableDimension::TableWrite]
                };
                for dimension in dims {
                    let key = ScalableKey {
                        resource_id: resource_id.clone(),
                        dimension,
                    };
                    let bounds = if dimension.is_read() {
                        (a.min_read, a.max_read)
                    } else {
                        (a.min_write, a.max_write)
                    };
                    match f.after.targets.get(&key) {
                        None => capacity.push(format!("no scalable target {key}")),
                        Some(t) => {
                            if (t.min, t.max) != bounds {
                                capacity.push(format!(
                                    "target {key} has bounds {:?}, the phase {bounds:?}",
                                    (t.min, t.max)
                                ));
                            }
                            let ours = t.policies.iter().any(|p| {
                                p.name == our_policy_name(dimension)
                                    && p.maker.is_us()
                                    && p.policy_type == "TargetTrackingScaling"
                                    && p.metric.as_deref() == Some(dimension.metric())
                                    && p.target_value == Some(f64::from(a.target))
                            });
                            if !ours {
                                capacity.push(format!(
                                    "target {key} lacks our target-tracking policy at {}%",
                                    a.target
                                ));
                            }
                        }
                    }
                }
            }
        }
        None => {
            if table.billing != want.billing {
                capacity.push(format!("it is {}, the phase {}", table.billing, want.billing));
            }
            for gsi in &table.gsis {
                let index_want = want.billing_of_index(&gsi.name);
                if gsi.billing != index_want {
                    capacity.push(format!(
                        "index {} is {}, the phase {index_want}",
                        gsi.name, gsi.billing
                    ));
                }
            }
            for t in f.after.targets_on(&table.name) {
                if t.policies.iter().any(is_our_policy) {
                    capacity.push(format!("our scaling policy is still on {}", t.key));
                }
            }
        }
    }
    let mut class = Vec::new();
    if let Some(c) = want.table_class.filter(|c| *c != table.class) {
        class.push(format!("its class is {}, the phase {c}", table.class));
    }
    (capacity, class)
}

/// The phase the fake's clock calls for: phase 0 inside the write grace, else by age.
pub fn phase_for(policy: &Policy, slot: Slot, now: DateTime<Utc>) -> (i64, usize) {
    let calendar = policy.calendar();
    let age = calendar.periods_between(slot, calendar.floor(now));
    if let Some(grace) = policy.grace {
        if now < calendar.end(slot) + Duration::from_std(grace).expect("a small grace") {
            return (age, 0);
        }
    }
    let phase = policy
        .phases
        .iter()
        .rposition(|p| i64::from(p.min_age) <= age)
        .unwrap_or(0);
    (age, phase)
}

/// Promise 4: after a resize_old run, every table that is provably ours (made by our
/// CreateTable or adopted), was ACTIVE, has the policy's key, and whose parts are all the
/// policy's (no foreign GSI, no foreign or shared scalable target, no other family's tag) and
/// is at least one period old has the phase its age (and grace) calls for, unless its line is
/// deferred for a documented cause the fake confirms.
pub fn resize_old_converges(f: &RunFacts<'_>) -> Vec<String> {
    if f.operation != Operation::ResizeOld {
        return Vec::new();
    }
    let g = f.ground();
    let mut out = deleted_tables_unmapped(f);
    // The phases by age of the policy the tables were made under: a run under another time
    // zone ages them by the periods recorded (promise 8 checks that), not by this calendar.
    if f.policy.hash() != f.truth.hash() {
        count("promise 4: not checked, the runs' time zone changed");
        return out;
    }
    // The engine leaves alone what the ledger does not hold as the family wrote it: nothing to
    // converge on a ledger that cannot be rested on, or while another run holds the lease.
    if let Some(why) = ledger_unsound(f.before) {
        count(format!("promise 4: not checked, {why}"));
        return out;
    }
    let lease = format!("lease#{}", f.operation);
    let held = ledger_items(f.before)
        .and_then(|items| items.get(&lease).and_then(|i| i.expires))
        .is_some_and(|expires| expires > f.now.timestamp());
    if held {
        count("promise 4: not checked, another run holds the lease");
        return out;
    }
    for before in f.before.tables.values() {
        if !g.provably_ours(before)
            || before.key != f.policy.key
            || before.status != Status::Active
            || g.foreign_on(before).is_some()
        {
            continue;
        }
        if !g.recorded_as_written(before) {
            count("promise 4: not checked, the ledger no longer records the table as we wrote it");
            continue;
        }
        let Some(slot) = label_slot(f.policy, &before.name) else {
            continue;
        };
        let (age, phase) = phase_for(f.policy, slot, f.now);
        if age < 1 {
            continue;
        }
        let Some(after) = f
            .after
            .tables
            .get(&before.name)
            .filter(|t| t.status != Status::Deleting)
        else {
            continue;
        };
        count("promise 4: tables checked");
        let (capacity, class) = phase_differences(f, after, phase);
        let warm = warm_differences(f, after, phase);
        if capacity.is_empty() && class.is_empty() && warm.is_empty() {
            continue;
        }
        count("promise 4: tables not in their phase");
        let deferrals: Vec<DeferralCause> = f
            .report
            .tables
            .iter()
            .filter(|l| l.item.facts.table == before.name && l.outcome == Outcome::Deferred)
            .filter_map(|l| l.deferral)
            .collect();
        let confirmed: Vec<Result<(), String>> =
            deferrals.iter().map(|c| confirm_deferral(f, after, *c)).collect();
        let excused = confirmed.iter().any(Result::is_ok);
        for (cause, confirmed) in deferrals.iter().zip(&confirmed) {
            if confirmed.is_ok() {
                let actions: Vec<&str> = f
                    .report
                    .tables
                    .iter()
                    .filter(|l| l.item.facts.table == before.name && l.deferral == Some(*cause))
                    .map(|l| l.item.decision.action())
                    .collect();
                count(format!("promise 4: excused by {cause} on {actions:?}"));
            }
        }
        let updated = f.effects().any(|(_, e)| {
            e.table() == before.name
                && matches!(
                    e,
                    Effect::TableCapacity { .. }
                        | Effect::IndexCapacity { .. }
                        | Effect::Setting { .. }
                        | Effect::AddedIndex { .. }
                )
        });
        // A warm throughput raise is an UpdateTable of its own: it waits for any other.
        let updated_at_all = updated
            || f.effects()
                .any(|(_, e)| e.table() == before.name && matches!(e, Effect::TableClass { .. }));
        let mut problems = Vec::new();
        if !capacity.is_empty() && !excused {
            problems.extend(capacity);
        }
        if !class.is_empty() && !excused && !updated {
            problems.extend(class);
        }
        if !warm.is_empty() && !excused && !updated_at_all {
            problems.extend(warm);
        }
        if problems.is_empty() {
            continue;
        }
        let unconfirmed: Vec<String> = confirmed.into_iter().filter_map(Result::err).collect();
        out.push(format!(
            "{}: {} (age {age}) should be in phase {phase} but {}{}; its lines: {}",
            f.step,
            before.name,
            problems.join(", "),
            if unconfirmed.is_empty() {
                String::new()
            } else {
                format!(" (and {})", unconfirmed.join("; "))
            },
            f.lines_of(&before.name)
        ));
    }
    out
}

/// After a run that deleted a table and reported no failure, no mapping of the policy's
/// consumer function is left on the table's stream (Deleting counts as gone): Lambda keeps a
/// mapping whose stream is gone, and only the run knows it is ours.
pub fn deleted_tables_unmapped(f: &RunFacts<'_>) -> Vec<String> {
    let Some(consumer) = f.policy.stream.lambda.as_ref().map(|l| l.function.as_str()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (_, effect) in f.effects() {
        let Effect::DeletedTable { table } = effect else {
            continue;
        };
        let found = f.before.tables.get(&table.name).unwrap_or(table);
        let Some(stream_arn) = found.stream_arn.as_deref() else {
            continue;
        };
        let left: Vec<String> = f
            .after
            .mappings
            .values()
            .filter(|m| m.event_source_arn == stream_arn && m.function_arn == consumer && m.state.stays())
            .map(|m| format!("{} ({})", m.uuid, m.state.as_str()))
            .collect();
        if left.is_empty() {
            count("promise 4: a deleted table's mapping removed (or none)");
            continue;
        }
        if !f.report.succeeded() {
            count("promise 4: a deleted table's mapping left, the run failed");
            continue;
        }
        out.push(format!(
            "{}: the run deleted {} and reported success, but our mapping(s) {left:?} still read its stream {stream_arn}; its lines: {}",
            f.step,
            table.name,
            f.lines_of(&table.name)
        ));
    }
    out
}
