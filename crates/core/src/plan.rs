//! The planner: `plan(policy, now, observed tables, operation)` decides everything a run does.
//!
//! Pure on purpose: no I/O, no clock, no randomness. The same inputs always give the same
//! plan, so a retried scheduled run decides the same thing, and every rule is testable with a
//! fixed clock. Every item carries the reason for its decision, including the reasons for
//! doing nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::limits::{
    decrease_allowed, spaced_change_allowed, ON_DEMAND_SWITCH_SPACING, TABLE_CLASS_CHANGE_SPACING,
};
use crate::naming::Ownership;
use crate::observed::{Billing, ObservedTable, TableClass, TableStatus};
use crate::period::{Calendar, Slot};
use crate::policy::{Capacity, KeySchema, Phase, Policy};

/// The two scheduled jobs of the blog's DailyResize.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Before a boundary: make sure the current and the next `premake` tables exist.
    CreateNew,
    /// After a boundary: move every aged table to the phase its age calls for.
    ResizeOld,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::CreateNew => "create_new",
            Operation::ResizeOld => "resize_old",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Operation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "create_new" | "create-new" => Ok(Operation::CreateNew),
            "resize_old" | "resize-old" => Ok(Operation::ResizeOld),
            other => Err(format!(
                "unknown operation {other:?}: use \"create_new\" or \"resize_old\""
            )),
        }
    }
}

/// Everything CreateTable needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableSpec {
    pub name: String,
    pub key: KeySchema,
    pub billing: Billing,
    /// `None`: DynamoDB's default (Standard).
    pub table_class: Option<TableClass>,
}

/// An UpdateTable that sets the billing mode and throughput.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CapacityChange {
    pub name: String,
    pub from: Billing,
    pub to: Billing,
}

impl CapacityChange {
    /// Whether DynamoDB counts this update against the table's daily decrease budget.
    pub fn is_decrease(&self) -> bool {
        match (self.from, self.to) {
            (Billing::Provisioned(from), Billing::Provisioned(to)) => {
                to.read < from.read || to.write < from.write
            }
            _ => false,
        }
    }

    /// Whether this is a provisioned to on-demand switch, which DynamoDB limits.
    pub fn is_switch_to_on_demand(&self) -> bool {
        matches!(
            (self.from, self.to),
            (Billing::Provisioned(_), Billing::OnDemand(_))
        )
    }
}

/// An UpdateTable that changes the table class; sent on its own, never with a capacity change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClassChange {
    pub name: String,
    pub from: TableClass,
    pub to: TableClass,
}

/// What the run does with one table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Decision {
    Create(TableSpec),
    Update(CapacityChange),
    UpdateClass(ClassChange),
    /// Already as the policy wants it.
    Unchanged,
    /// Needs a change that DynamoDB would refuse now; a later run does it.
    Deferred {
        retry_after: Option<DateTime<Utc>>,
    },
    /// Not this operation's concern.
    Skipped,
    /// Has the prefix but no label we can parse: never touched.
    Foreign,
}

impl Decision {
    pub fn is_change(&self) -> bool {
        matches!(
            self,
            Decision::Create(_) | Decision::Update(_) | Decision::UpdateClass(_)
        )
    }
}

/// One table's decision and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanItem {
    pub table: String,
    /// The period label, for tables we own.
    pub period: Option<String>,
    /// Periods since the table's period: 0 is current, negative is a pre-built future table.
    pub age: Option<i64>,
    /// Index into the policy's phases that the table's age calls for.
    pub phase: Option<usize>,
    /// TableStatus as observed; `None` when the table does not exist.
    pub status: Option<String>,
    /// Throughput as observed.
    pub billing: Option<Billing>,
    pub decision: Decision,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    pub operation: Operation,
    pub at: DateTime<Utc>,
    pub prefix: String,
    pub current_period: String,
    /// Sorted by table name, which for owned tables is time order.
    pub items: Vec<PlanItem>,
}

/// Decides what `operation` does at `now`, given the tables that exist.
///
/// `observed` may hold any tables; only names `{prefix}_{label}` are acted on, names with the
/// prefix and an unparseable rest are reported as foreign, and all others are ignored.
pub fn plan(policy: &Policy, now: DateTime<Utc>, observed: &[ObservedTable], operation: Operation) -> Plan {
    let naming = policy.naming();
    let calendar = naming.calendar();
    let current = calendar.floor(now);

    let mut owned: BTreeMap<Slot, &ObservedTable> = BTreeMap::new();
    let mut items = Vec::new();
    for table in observed {
        match naming.classify(&table.name) {
            Ownership::Owned(slot) => {
                owned.insert(slot, table);
            }
            Ownership::Foreign => items.push(foreign_item(policy, table)),
            Ownership::Unrelated => {}
        }
    }

    let targets = premake_slots(policy, current);
    let ages = ages_from(calendar, current, owned.keys().chain(&targets).copied());
    let ctx = Context {
        policy,
        now,
        current,
        ages,
    };
    match operation {
        Operation::CreateNew => {
            for &slot in &targets {
                items.push(ctx.create_new_item(slot, owned.get(&slot).copied()));
            }
            for (&slot, table) in &owned {
                if !targets.contains(&slot) {
                    let why = if slot < current {
                        "past period: resize_old's concern"
                    } else {
                        "future period beyond premake: left as is until it comes within reach"
                    };
                    items.push(ctx.item(slot, Some(table), Decision::Skipped, why.into()));
                }
            }
        }
        Operation::ResizeOld => {
            for (&slot, table) in &owned {
                items.push(ctx.resize_old_item(slot, table));
            }
        }
    }
    items.sort_by(|a, b| a.table.cmp(&b.table));

    Plan {
        operation,
        at: now,
        prefix: policy.prefix.clone(),
        current_period: calendar.label(current),
        items,
    }
}

struct Context<'a> {
    policy: &'a Policy,
    now: DateTime<Utc>,
    current: Slot,
    /// Age of every slot the plan looks at, computed once by [`ages_from`].
    ages: BTreeMap<Slot, i64>,
}

/// The current period and the `premake` periods after it.
fn premake_slots(policy: &Policy, current: Slot) -> Vec<Slot> {
    let calendar = policy.calendar();
    let mut slots = vec![current];
    for _ in 0..policy.premake {
        let last = *slots.last().expect("starts non-empty");
        slots.push(calendar.next(last));
    }
    slots
}

/// The age of each slot relative to `current`. Hourly periods in a zone with DST are counted by
/// walking, so slots are taken in order outward from `current` and each stretch of time is
/// walked once, not once per table.
fn ages_from(calendar: &Calendar, current: Slot, slots: impl Iterator<Item = Slot>) -> BTreeMap<Slot, i64> {
    let slots: BTreeSet<Slot> = slots.collect();
    let mut ages = BTreeMap::new();
    let (mut nearest, mut age) = (current, 0);
    for &slot in slots.range(..current).rev() {
        age += calendar.periods_between(slot, nearest);
        ages.insert(slot, age);
        nearest = slot;
    }
    let (mut nearest, mut age) = (current, 0);
    for &slot in slots.range(current..) {
        age -= calendar.periods_between(nearest, slot);
        ages.insert(slot, age);
        nearest = slot;
    }
    ages
}

impl Context<'_> {
    fn age(&self, slot: Slot) -> i64 {
        self.ages[&slot]
    }

    fn item(
        &self,
        slot: Slot,
        table: Option<&ObservedTable>,
        decision: Decision,
        reason: String,
    ) -> PlanItem {
        let naming = self.policy.naming();
        let age = self.age(slot);
        PlanItem {
            table: naming.table_name(slot),
            period: Some(naming.calendar().label(slot)),
            age: Some(age),
            phase: Some(self.policy.phase_index_for_age(age)),
            status: table.map(|t| t.status.as_str().to_string()),
            billing: table.map(|t| t.billing),
            decision,
            reason,
        }
    }

    fn create_new_item(&self, slot: Slot, table: Option<&ObservedTable>) -> PlanItem {
        let hot = self.policy.hot_phase();
        let name = self.policy.naming().table_name(slot);
        let Some(table) = table else {
            let when = if slot == self.current {
                "current"
            } else {
                "upcoming"
            };
            let spec = TableSpec {
                name,
                key: self.policy.key.clone(),
                billing: hot.billing,
                table_class: hot.table_class,
            };
            return self.item(
                slot,
                None,
                Decision::Create(spec),
                format!(
                    "{when} period's table is missing: create it with phase 0 ({})",
                    hot.billing
                ),
            );
        };
        let (decision, reason) = match (&table.status, table.billing, hot.billing) {
            // Only pre-built tables are raised: a late retry of the 23:45 run, landing after
            // resize_old dialled the then-current table down, must not raise it again.
            (TableStatus::Active, _, _) if slot == self.current => (
                Decision::Unchanged,
                format!(
                    "current period's table exists with {}; create_new raises only pre-built tables",
                    table.billing
                ),
            ),
            (TableStatus::Active, Billing::Provisioned(have), Billing::Provisioned(hot)) => {
                let want = Capacity {
                    read: have.read.max(hot.read),
                    write: have.write.max(hot.write),
                };
                if want == have {
                    (
                        Decision::Unchanged,
                        format!("exists with {have}, at or above phase 0 ({hot})"),
                    )
                } else {
                    let change = CapacityChange {
                        name,
                        from: table.billing,
                        to: Billing::Provisioned(want),
                    };
                    (
                        Decision::Update(change),
                        format!("pre-built with {have}, below phase 0 ({hot}): raise it (create_new never lowers)"),
                    )
                }
            }
            (TableStatus::Active, have, _) => (
                Decision::Unchanged,
                format!("exists with {have}; create_new raises only provisioned capacity: left as is"),
            ),
            (status, _, _) => (
                Decision::Unchanged,
                format!("exists ({}); left as is", status.as_str()),
            ),
        };
        self.item(slot, Some(table), decision, reason)
    }

    fn resize_old_item(&self, slot: Slot, table: &ObservedTable) -> PlanItem {
        let age = self.age(slot);
        if age <= 0 {
            let why = if age == 0 {
                "current period: kept hot by create_new"
            } else {
                "future period: kept hot by create_new"
            };
            return self.item(slot, Some(table), Decision::Skipped, why.into());
        }
        let phase_index = self.policy.phase_index_for_age(age);
        let want: &Phase = &self.policy.phases[phase_index];
        let phase = format!("phase {phase_index} ({}) for age {age}", describe_phase(want));

        if table.status != TableStatus::Active {
            return self.item(
                slot,
                Some(table),
                Decision::Deferred { retry_after: None },
                format!(
                    "needs {phase} but is {}: DynamoDB updates only ACTIVE tables; a later run retries",
                    table.status.as_str()
                ),
            );
        }
        let class_change = want
            .table_class
            .filter(|class| *class != table.table_class)
            .map(|to| ClassChange {
                name: table.name.clone(),
                from: table.table_class,
                to,
            });
        if table.billing == want.billing {
            let Some(change) = class_change else {
                return self.item(
                    slot,
                    Some(table),
                    Decision::Unchanged,
                    format!("already at {phase}"),
                );
            };
            if let Err(retry_after) =
                spaced_change_allowed(self.now, table.table_class_updated, TABLE_CLASS_CHANGE_SPACING)
            {
                return self.deferred(
                    slot,
                    table,
                    retry_after,
                    format!(
                        "needs {phase} but its table class changed recently; at most one change per 15 days"
                    ),
                );
            }
            let reason = format!("table class {} -> {} for {phase}", change.from, change.to);
            return self.item(slot, Some(table), Decision::UpdateClass(change), reason);
        }
        let change = CapacityChange {
            name: table.name.clone(),
            from: table.billing,
            to: want.billing,
        };
        if change.is_decrease() {
            if let Err(retry_after) = decrease_allowed(self.now, table.decreases_today, table.last_decrease) {
                return self.deferred(
                    slot,
                    table,
                    retry_after,
                    format!(
                        "needs {phase} but DynamoDB's decrease budget is used up ({} decreases today, last at {})",
                        table.decreases_today,
                        table.last_decrease.map(|t| t.to_rfc3339()).unwrap_or_default(),
                    ),
                );
            }
        }
        if change.is_switch_to_on_demand() {
            if let Err(retry_after) =
                spaced_change_allowed(self.now, table.last_switch_to_on_demand, ON_DEMAND_SWITCH_SPACING)
            {
                return self.deferred(
                    slot,
                    table,
                    retry_after,
                    format!(
                        "needs {phase} but it switched to on-demand recently; at most one switch per 6 hours"
                    ),
                );
            }
        }
        let mut reason = format!("{} -> {phase}", table.billing);
        if class_change.is_some() {
            reason.push_str("; the table class follows in a later run (one change per UpdateTable)");
        }
        self.item(slot, Some(table), Decision::Update(change), reason)
    }

    fn deferred(
        &self,
        slot: Slot,
        table: &ObservedTable,
        retry_after: DateTime<Utc>,
        why: String,
    ) -> PlanItem {
        self.item(
            slot,
            Some(table),
            Decision::Deferred {
                retry_after: Some(retry_after),
            },
            format!("{why}; allowed again at {}", retry_after.to_rfc3339()),
        )
    }
}

/// "100 RCU / 1 WCU", "on-demand, standard_ia".
fn describe_phase(phase: &Phase) -> String {
    match phase.table_class {
        Some(class) => format!("{}, {class}", phase.billing),
        None => phase.billing.to_string(),
    }
}

fn foreign_item(policy: &Policy, table: &ObservedTable) -> PlanItem {
    PlanItem {
        table: table.name.clone(),
        period: None,
        age: None,
        phase: None,
        status: Some(table.status.as_str().to_string()),
        billing: Some(table.billing),
        decision: Decision::Foreign,
        reason: format!(
            "starts with {:?} but the rest is not a {} label: not ours, never touched",
            format!("{}_", policy.prefix),
            policy.period
        ),
    }
}
