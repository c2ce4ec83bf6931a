//! Promise 3: create_new is loud when the next table is not ready; and the deferral causes
//! the runs report, confirmed against the fake.

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::DeferralCause;
use ddb_rollover::{Operation, Policy};
use fake_aws::{Status, Table};

use crate::facts::RunFacts;
use crate::ground::{is_our_policy, Ground};
use crate::names::PREFIX;
use crate::tally::count;

/// The names of the current and pre-built tables at `now`.
pub fn target_names(policy: &Policy, now: DateTime<Utc>) -> Vec<String> {
    let calendar = policy.calendar();
    calendar
        .periods_from(calendar.floor(now))
        .take(policy.premake as usize + 1)
        .map(|slot| format!("{PREFIX}_{}", calendar.label(slot)))
        .collect()
}

/// Promise 3: a create_new run whose end state has the current or a pre-built table missing,
/// DELETING, or in a status that takes no writes (its KMS key lost, archived) reports failure, and says the next table is not ready; and one that says the next
/// table is ready, when phase 0 asks for warm throughput, ended with the warm throughput of each
/// such table and of the policy's indexes on it ACTIVE, when the policy names a Kinesis
/// stream, each such table's destination to it ACTIVE (or UPDATING), and when it names a
/// consumer function, a mapping of it on each such table's latest stream Enabled (or Updating).
pub fn create_new_is_loud(f: &RunFacts<'_>) -> Vec<String> {
    if f.operation != Operation::CreateNew {
        return Vec::new();
    }
    let mut out = Vec::new();
    let said_ready = f.report.next_table_ready.as_ref().is_some_and(|r| r.ready);
    if said_ready && f.policy.hot_phase().warm.is_some() {
        let g = Ground {
            policy: f.policy,
            world: f.after,
        };
        for name in target_names(f.policy, f.at) {
            let Some(table) = f.after.tables.get(&name) else {
                continue;
            };
            let mut updating: Vec<String> = Vec::new();
            if table.warm.is_updating() {
                updating.push("the table".into());
            }
            for gsi in table
                .gsis
                .iter()
                .filter(|gsi| gsi.warm.is_updating() && g.foreign_gsi(&name, &gsi.name).is_none())
            {
                updating.push(format!("index {}", gsi.name));
            }
            count("promise 3: ready with warm throughput checked");
            if !updating.is_empty() {
                out.push(format!(
                    "{}: create_new said the next table is ready, but the warm throughput of {} of {name} is still UPDATING; its lines: {}",
                    f.step,
                    updating.join(", "),
                    f.lines_of(&name)
                ));
            }
        }
    }
    if let Some(wanted) = f.policy.stream.kinesis.as_ref().filter(|_| said_ready) {
        for name in target_names(f.policy, f.at) {
            let streaming = f
                .after
                .destinations
                .get(&name)
                .into_iter()
                .flatten()
                .any(|d| d.stream_arn == wanted.stream_arn.as_str() && d.status.streams());
            count("promise 3: ready with the change stream checked");
            if f.after.tables.contains_key(&name) && !streaming {
                out.push(format!(
                    "{}: create_new said the next table is ready, but {name} does not stream into the policy's Kinesis stream (its destinations: {:?}); its lines: {}",
                    f.step,
                    f.after.destinations.get(&name),
                    f.lines_of(&name)
                ));
            }
        }
    }
    if let Some(consumer) = f.policy.stream.lambda.as_ref().filter(|_| said_ready) {
        let function = consumer.function.as_str();
        for name in target_names(f.policy, f.at) {
            let Some(table) = f.after.tables.get(&name) else {
                continue;
            };
            let mappings: Vec<&fake_aws::Mapping> = f
                .after
                .mappings
                .values()
                .filter(|m| Some(m.event_source_arn.as_str()) == table.stream_arn.as_deref())
                .collect();
            let reading = mappings
                .iter()
                .any(|m| m.function_arn == function && m.state.reads());
            count("promise 3: ready with the consumer's mapping checked");
            if !reading {
                out.push(format!(
                    "{}: create_new said the next table is ready, but no Enabled mapping of the policy's consumer reads the stream of {name} ({:?}; its mappings: {:?}); its lines: {}",
                    f.step,
                    table.stream_arn,
                    mappings
                        .iter()
                        .map(|m| format!("{} {}", m.function_arn, m.state.as_str()))
                        .collect::<Vec<_>>(),
                    f.lines_of(&name)
                ));
            }
        }
    }
    for name in target_names(f.policy, f.at) {
        let state = match f.after.tables.get(&name) {
            None => "missing",
            Some(t) if t.status == Status::Deleting => "DELETING",
            Some(t) if t.status == Status::InaccessibleEncryptionCredentials => {
                "INACCESSIBLE_ENCRYPTION_CREDENTIALS"
            }
            Some(t) if t.status == Status::Archiving => "ARCHIVING",
            Some(t) if t.status == Status::Archived => "ARCHIVED",
            Some(_) => continue,
        };
        count(format!("promise 3: create_new ended with a table {state}"));
        let ready = f.report.next_table_ready.as_ref().map(|r| r.ready);
        if f.report.succeeded() || ready != Some(false) {
            out.push(format!(
                "{}: create_new ended with {name} {state}, yet the report {} and next_table_ready.ready is {ready:?}; its lines: {}",
                f.step,
                if f.report.succeeded() { "succeeded" } else { "failed" },
                f.lines_of(&name)
            ));
        }
    }
    out
}

/// What the fake says about a documented deferral cause on `table` after the run: `Ok` when
/// it confirms the cause, `Err` with the facts when it does not.
pub fn confirm_deferral(f: &RunFacts<'_>, table: &Table, cause: DeferralCause) -> Result<(), String> {
    let now = f.now;
    let budget_spent = || {
        let mut spent: Vec<String> = Vec::new();
        if !table.decreases.allowed(now) {
            spent.push(format!("table ({} today)", table.decreases.today(now)));
        }
        for gsi in table.gsis.iter().filter(|g| !g.decreases.allowed(now)) {
            spent.push(format!("index {} ({} today)", gsi.name, gsi.decreases.today(now)));
        }
        spent
    };
    match cause {
        DeferralCause::DecreaseBudget => {
            let spent = budget_spent();
            if spent.is_empty() {
                Err(format!(
                    "deferred for decrease_budget, but the fake's budgets allow a decrease (table: {} today, last {:?})",
                    table.decreases.today(now),
                    table.decreases.last()
                ))
            } else {
                Ok(())
            }
        }
        DeferralCause::LimitExceeded => {
            let switches = table
                .on_demand_switches
                .iter()
                .filter(|t| now - **t < Duration::hours(24))
                .count();
            if budget_spent().is_empty() && switches < fake_aws::ON_DEMAND_SWITCHES_PER_DAY {
                Err("deferred for limit_exceeded, but no budget of the fake is spent".into())
            } else {
                Ok(())
            }
        }
        DeferralCause::OnDemandSwitchSpacing => {
            if table
                .on_demand_switches
                .iter()
                .any(|t| now - *t < Duration::hours(6))
            {
                Ok(())
            } else {
                Err(format!(
                    "deferred for on_demand_switch_spacing, but its switches were at {:?}",
                    table.on_demand_switches
                ))
            }
        }
        DeferralCause::ClassChangeSpacing => {
            if table.class_changes.iter().any(|t| now - *t < Duration::days(15)) {
                Ok(())
            } else {
                Err(format!(
                    "deferred for class_change_spacing, but its class changes were at {:?}",
                    table.class_changes
                ))
            }
        }
        DeferralCause::TableBusy => {
            if table.status != Status::Active {
                Ok(())
            } else {
                Err("deferred for table_busy, but it is ACTIVE".into())
            }
        }
        DeferralCause::IndexBusy => {
            if table.gsis.iter().any(|g| g.status != Status::Active) {
                Ok(())
            } else {
                Err("deferred for index_busy, but every index is ACTIVE".into())
            }
        }
        DeferralCause::WarmUpdating => {
            if table.warm.is_updating() || table.gsis.iter().any(|g| g.warm.is_updating()) {
                Ok(())
            } else {
                Err("deferred for warm_updating, but no warm throughput of it is UPDATING".into())
            }
        }
        DeferralCause::ScalingStillAttached => {
            let ours = f
                .after
                .targets_on(&table.name)
                .into_iter()
                .any(|t| t.policies.iter().any(is_our_policy));
            if ours {
                Ok(())
            } else {
                Err("deferred for scaling_still_attached, but no policy of ours is on it".into())
            }
        }
        other => Err(format!("deferred for {other}, which does not hold back a phase")),
    }
}
