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

use crate::plan::deferral::DeferralCause;
use crate::plan::verdict::{Judge, NotOurs, Owner, Verdict};
use crate::policy::limits::{spaced_change_allowed, ON_DEMAND_SWITCH_SPACING, TABLE_CLASS_CHANGE_SPACING};
use crate::policy::naming::{Ownership, TableNaming};
use crate::policy::period::{Calendar, Slot};
use crate::policy::scaling::{DeregisterScaling, RegisterScaling};
use crate::policy::settings::Billing;
use crate::policy::tags::{own_tags, TAG_FAMILY};
use crate::policy::{Phase, Policy};
use crate::table::changes::{
    CapacityChange, ClassChange, DeleteRequest, ExportRequest, SettingChange, TableSpec, TagChange, TtlChange,
};
use crate::table::{ObservedTable, TableStatus};

pub mod deferral;
mod indexes;
mod quota;
mod retention;
mod scaling;
mod scope;
mod upkeep;
pub mod verdict;

pub use quota::{family_tables, quota_warning, QuotaHorizon};
pub use scope::{names_to_describe, reads_for, reads_needed, target_names, Reads, Scope};

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

/// What the run does with one table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Decision {
    Create(TableSpec),
    /// The period's table is being deleted (DELETING): wait until it is gone, within the run's
    /// time, then create it again. Failing that, the run fails: the period has no table.
    Recreate(TableSpec),
    Update(CapacityChange),
    UpdateClass(ClassChange),
    /// Template upkeep.
    Tag(TagChange),
    EnableTtl(TtlChange),
    EnablePointInTimeRecovery {
        name: String,
    },
    Configure(SettingChange),
    /// Retention.
    Export(ExportRequest),
    Delete(DeleteRequest),
    /// Autoscaling phases: register scalable targets with our target-tracking policy.
    RegisterScaling(RegisterScaling),
    /// Leaving an autoscaling phase: remove our policies and scalable targets.
    DeregisterScaling(DeregisterScaling),
    /// Already as the policy wants it.
    Unchanged,
    /// Needs a change that DynamoDB would refuse now; a later run does it.
    Deferred {
        retry_after: Option<DateTime<Utc>>,
        cause: DeferralCause,
    },
    /// Not this operation's concern.
    Skipped,
    /// Has the prefix but is not provably ours: never touched.
    Foreign,
    /// A change the run must make but cannot without an operator (the next period's table
    /// name is held by a table that is not ours): reported as failed.
    Blocked,
}

impl Decision {
    pub fn is_change(&self) -> bool {
        !matches!(
            self,
            Decision::Unchanged
                | Decision::Deferred { .. }
                | Decision::Skipped
                | Decision::Foreign
                | Decision::Blocked
        )
    }

    /// Whether this is an UpdateTable: DynamoDB takes one at a time per table, so a plan holds
    /// at most one per table and defers the rest.
    pub fn updates_table(&self) -> bool {
        matches!(
            self,
            Decision::Update(_) | Decision::UpdateClass(_) | Decision::Configure(_)
        )
    }

    /// The action's name as reports print it.
    pub fn action(&self) -> &'static str {
        match self {
            Decision::Create(_) => "create",
            Decision::Recreate(_) => "recreate",
            Decision::Update(_) => "update",
            Decision::UpdateClass(_) => "update_class",
            Decision::Tag(_) => "tag",
            Decision::EnableTtl(_) => "enable_ttl",
            Decision::EnablePointInTimeRecovery { .. } => "enable_point_in_time_recovery",
            Decision::Configure(_) => "configure",
            Decision::Export(_) => "export",
            Decision::Delete(_) => "delete",
            Decision::RegisterScaling(_) => "register_scaling",
            Decision::DeregisterScaling(_) => "deregister_scaling",
            Decision::Unchanged => "unchanged",
            Decision::Deferred { .. } => "deferred",
            Decision::Skipped => "skipped",
            Decision::Foreign => "foreign",
            Decision::Blocked => "blocked",
        }
    }
}

/// One table's decision and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanItem {
    pub table: String,
    /// The period label, for tables we own.
    pub period: Option<String>,
    /// The period itself (from the table's period tags, else its name): `status` dates the
    /// table's next phase, archive and deletion from it.
    #[serde(skip)]
    pub slot: Option<Slot>,
    /// Periods since the table's period: 0 is current, negative is a pre-built future table.
    pub age: Option<i64>,
    /// Index into the policy's phases that the table's age calls for.
    pub phase: Option<usize>,
    /// TableStatus as observed; `None` when the table does not exist.
    pub status: Option<String>,
    /// Throughput as observed.
    pub billing: Option<Billing>,
    /// The table's ARN, for the executor's own tags; not part of reports.
    #[serde(skip)]
    pub arn: Option<String>,
    /// The one ownership verdict on the table the decision rests on; `None` for a table that
    /// does not exist or was only listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
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
    /// Things an operator should know that are not a table's decision (neighbours under our
    /// name prefix).
    pub warnings: Vec<String>,
}

/// Decides what `operation` does at `now`, given the tables that exist.
///
/// `observed` may hold any tables. Each gets one [`Verdict`] ([`Judge`]), which every action
/// asks: only tables it finds ours are acted on, and only on their parts that are ours; other
/// names with the prefix are reported as foreign (with a warning for another family's), and
/// all others are ignored. Each table gets its main item first (create, capacity, class), then
/// one item per template setting to restore and per retention step.
pub fn plan(policy: &Policy, now: DateTime<Utc>, observed: &[ObservedTable], operation: Operation) -> Plan {
    plan_listed(policy, now, observed, &[], operation)
}

/// [`plan`], where `listed_only` are the names the run listed and did not describe: they count
/// towards the table quota too.
fn plan_listed(
    policy: &Policy,
    now: DateTime<Utc>,
    observed: &[ObservedTable],
    listed_only: &[String],
    operation: Operation,
) -> Plan {
    let naming = policy.naming();
    let calendar = naming.calendar();
    let current = calendar.floor(now);
    let judge = Judge::new(policy);

    let mut owned: Vec<Owned> = Vec::new();
    let mut items = Vec::new();
    let mut not_ours = Vec::new();
    for table in observed {
        let Some(verdict) = judge.verdict(table) else {
            continue;
        };
        match &verdict.owner {
            Owner::Ours { slot, .. } => owned.push(Owned {
                slot: *slot,
                period: table.name[naming.name_prefix().len()..].to_string(),
                table,
                verdict,
            }),
            Owner::NotOurs { why } => {
                not_ours.push((table.name.as_str(), why.clone()));
                items.push(foreign_item(policy, table, verdict));
            }
        }
    }
    owned.sort_by(|a, b| (a.slot, &a.table.name).cmp(&(b.slot, &b.table.name)));

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
    };
    match operation {
        Operation::CreateNew => {
            let target_names: BTreeSet<String> = targets.iter().map(|&s| naming.table_name(s)).collect();
            for &slot in &targets {
                let name = naming.table_name(slot);
                // A table that is not ours holds the name: writes for the period would land
                // in it, and creating ours is impossible. Loud, never "done".
                if let Some(taken) = items.iter_mut().find(|i| i.table == name) {
                    taken.reason = format!(
                        "the {} period's table name is taken by a table that is not this policy's ({}): rename or delete that table, or change the policy's prefix",
                        if slot == current { "current" } else { "upcoming" },
                        taken.reason
                    );
                    taken.decision = Decision::Blocked;
                    continue;
                }
                let existing = owned.iter().find(|o| o.table.name == name);
                let main = ctx.create_new_item(slot, &name, existing);
                let updates_table = main.decision.updates_table();
                let created = matches!(main.decision, Decision::Create(_));
                items.push(main);
                // A table created in an autoscaling phase 0 gets its targets in the same run;
                // a pre-built one gets those it lacks (never the current table: see
                // create_new_item; resize_old looks after it).
                match (existing, policy.hot_phase().autoscaling) {
                    (None, Some(want)) if created => {
                        let change = ctx.register_new(&name, &want);
                        let reason = format!(
                            "phase 0 has {want}: register {} scalable target(s) with a target-tracking policy",
                            change.targets.len()
                        );
                        let period = calendar.label(slot);
                        let decision = Decision::RegisterScaling(change);
                        items.push(ctx.item_for(slot, &name, &period, None, decision, reason));
                    }
                    (Some(existing), Some(_)) if slot != current => {
                        let provisioned = scaling::is_provisioned(existing.table.billing);
                        items.extend(ctx.register_item(existing, provisioned));
                    }
                    _ => {}
                }
                if let Some(existing) = existing {
                    items.extend(ctx.upkeep_items(existing, updates_table));
                }
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
                let updates_table = main.iter().any(|item| item.decision.updates_table());
                items.extend(main);
                items.extend(ctx.upkeep_items(o, updates_table));
                items.extend(steps);
            }
        }
    }
    // Stable: a table's items keep their order (main item first).
    items.sort_by(|a, b| a.table.cmp(&b.table));

    Plan {
        operation,
        at: now,
        prefix: policy.prefix.clone(),
        current_period: calendar.label(current),
        items,
        warnings: neighbour_warnings(&naming, &not_ours)
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
            .chain(retention::kept_warnings(&ctx, &owned))
            .collect(),
    }
}

/// One warning per kind of neighbour under our name prefix: they are never touched, but an
/// operator should know they share the prefix (and the IAM resource pattern `table/{prefix}_*`).
fn neighbour_warnings(naming: &TableNaming, not_ours: &[(&str, NotOurs)]) -> Vec<String> {
    let listed = |names: &[&str]| {
        const SHOWN: usize = 5;
        let mut text = names.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
        if names.len() > SHOWN {
            text.push_str(&format!(" and {} more", names.len() - SHOWN));
        }
        text
    };
    let mut families: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut look_alikes: Vec<&str> = Vec::new();
    for (name, why) in not_ours {
        let name: &str = name;
        match why {
            NotOurs::OtherFamily { family } => families.entry(family).or_default().push(name),
            NotOurs::LookAlike { .. } => look_alikes.push(name),
            NotOurs::UnknownName => {}
        }
    }
    let prefix = naming.name_prefix();
    let mut warnings: Vec<String> = families
        .into_iter()
        .map(|(family, names)| {
            format!(
                "{} table(s) of another ddb-rollover family ({family:?}) share this policy's name prefix {prefix:?}: {}. \
                 They are never touched by this policy; IAM patterns like table/{prefix}* match them too",
                names.len(),
                listed(&names)
            )
        })
        .collect();
    if !look_alikes.is_empty() {
        warnings.push(format!(
            "{} table(s) named like this policy's have another key schema and no ddb-rollover family tag: {}. \
             They are not this policy's and are never touched",
            look_alikes.len(),
            listed(&look_alikes)
        ));
    }
    warnings
}

/// [`plan`] for what a run observed, with a line for each foreign name it only listed.
pub fn plan_run(
    policy: &Policy,
    now: DateTime<Utc>,
    observed: &[ObservedTable],
    listed_only: &[String],
    operation: Operation,
) -> Plan {
    let mut plan = plan_listed(policy, now, observed, listed_only, operation);
    let naming = policy.naming();
    let mut foreign: Vec<PlanItem> = listed_only
        .iter()
        .filter(|name| naming.classify(name) == Ownership::Foreign)
        .map(|name| PlanItem {
            table: name.clone(),
            period: None,
            slot: None,
            age: None,
            phase: None,
            status: None,
            billing: None,
            arn: None,
            verdict: None,
            decision: Decision::Foreign,
            reason: format!(
                "starts with {:?} but the rest is not a period label: not ours, never described or touched",
                naming.name_prefix()
            ),
        })
        .collect();
    if !foreign.is_empty() {
        plan.items.append(&mut foreign);
        plan.items.sort_by(|a, b| a.table.cmp(&b.table));
    }
    plan
}

/// An existing table the policy owns, and the period it holds.
pub(crate) struct Owned<'a> {
    pub slot: Slot,
    /// The label part of the name.
    pub period: String,
    pub table: &'a ObservedTable,
    /// The one ownership verdict every action on the table asks.
    pub verdict: Verdict,
}

pub(crate) struct Context<'a> {
    pub policy: &'a Policy,
    pub now: DateTime<Utc>,
    pub current: Slot,
    /// Age of every slot the plan looks at, computed once by [`ages_from`].
    pub ages: BTreeMap<Slot, i64>,
    pub policy_hash: String,
}

/// The current period and the `premake` periods after it.
fn premake_slots(policy: &Policy, current: Slot) -> Vec<Slot> {
    let count = policy.premake as usize + 1;
    policy.calendar().periods_from(current).take(count).collect()
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
    pub fn age(&self, slot: Slot) -> i64 {
        self.ages[&slot]
    }

    /// The phase a table of `slot` is in now: by its age, except that a table in its write
    /// grace (period end + the policy's grace) is still in phase 0.
    pub fn phase_index(&self, slot: Slot) -> usize {
        if self.in_grace(slot) {
            0
        } else {
            self.policy.phase_index_for_age(self.age(slot))
        }
    }

    /// Whether a past table of `slot` is still in its write grace: it keeps phase 0, and is
    /// neither archived nor deleted.
    pub fn in_grace(&self, slot: Slot) -> bool {
        self.policy.grace_end(slot).is_some_and(|until| self.now < until)
    }

    /// An item for an existing table.
    pub fn item(&self, owned: &Owned, decision: Decision, reason: String) -> PlanItem {
        let mut item = self.item_for(
            owned.slot,
            &owned.table.name,
            &owned.period,
            Some(owned.table),
            decision,
            reason,
        );
        item.verdict = Some(owned.verdict.clone());
        item
    }

    /// An item for `name`, which holds `slot`; `table` as observed, if it exists. No verdict:
    /// [`Self::item`] adds the table's.
    pub(crate) fn item_for(
        &self,
        slot: Slot,
        name: &str,
        period: &str,
        table: Option<&ObservedTable>,
        decision: Decision,
        reason: String,
    ) -> PlanItem {
        let age = self.age(slot);
        PlanItem {
            table: name.to_string(),
            period: Some(period.to_string()),
            slot: Some(slot),
            age: Some(age),
            phase: Some(self.phase_index(slot)),
            status: table.map(|t| t.status.as_str().to_string()),
            billing: table.map(|t| t.billing),
            arn: table.and_then(|t| t.arn.clone()),
            verdict: None,
            decision,
            reason,
        }
    }

    fn create_new_item(&self, slot: Slot, name: &str, existing: Option<&Owned>) -> PlanItem {
        let hot = self.policy.hot_phase();
        let period = self.policy.calendar().label(slot);
        let name = name.to_string();
        let when = if slot == self.current {
            "current"
        } else {
            "upcoming"
        };
        let Some(owned) = existing else {
            let spec = self.table_spec(slot, name.clone());
            return self.item_for(
                slot,
                &name,
                &period,
                None,
                Decision::Create(spec),
                format!(
                    "{when} period's table is missing: create it with phase 0 ({})",
                    hot.billing
                ),
            );
        };
        let table = owned.table;
        let (decision, reason) = match (&table.status, table.billing, hot.billing) {
            // Someone deleted the period's table: it must exist again before the boundary.
            (TableStatus::Deleting, _, _) => (
                Decision::Recreate(self.table_spec(slot, name.clone())),
                format!(
                    "the {when} period's table is being deleted (DELETING): wait until it is gone, then create it again with phase 0 ({})",
                    hot.billing
                ),
            ),
            // Only pre-built tables are raised: a late retry of the 23:45 run, landing after
            // resize_old dialled the then-current table down, must not raise it again.
            (TableStatus::Active, _, _) if slot == self.current => (
                Decision::Unchanged,
                format!(
                    "current period's table exists with {}; create_new raises only pre-built tables",
                    table.billing
                ),
            ),
            (TableStatus::Active, Billing::Provisioned(have), _) if hot.autoscaling.is_some() => (
                Decision::Unchanged,
                format!(
                    "pre-built with {have}; phase 0 has {}: the autoscaler owns its capacity",
                    hot.autoscaling.expect("matched")
                ),
            ),
            (TableStatus::Active, Billing::Provisioned(have), Billing::Provisioned(hot_capacity)) => {
                let raise = self.raise_to_hot(owned, have, hot);
                let left = left_out_note(&raise.left_out);
                match (raise.change, self.unsettled_index(table)) {
                    (None, _) if raise.left_out.is_empty() => (
                        Decision::Unchanged,
                        format!("exists with {have}, at or above phase 0 ({hot_capacity})"),
                    ),
                    (None, _) => (
                        Decision::Skipped,
                        format!("pre-built with {have}; what is this policy's is at or above phase 0 ({hot_capacity}){left}"),
                    ),
                    (Some(_), _) if !owned.verdict.scaling_known() => scaling_not_read(),
                    (Some(_), Some(index)) => (
                        Decision::Deferred {
                            retry_after: None,
                            cause: DeferralCause::IndexBusy,
                        },
                        format!(
                            "pre-built below phase 0, but its index {} is {}: DynamoDB changes throughput once every index is ACTIVE; a later run raises it",
                            index.name,
                            index_state(index)
                        ),
                    ),
                    (Some(change), None) => {
                        let what = if change.changes_table() {
                            format!("pre-built with {have}, below phase 0 ({hot_capacity})")
                        } else {
                            "pre-built with indexes below phase 0".to_string()
                        };
                        (
                            Decision::Update(change),
                            format!("{what}: raise it (create_new never lowers){left}"),
                        )
                    }
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
        self.item(owned, decision, reason)
    }

    /// CreateTable for `slot`: phase 0's billing and class, and the template's settings and
    /// tags (ours included: the family tag is written here and nowhere else, and the table's
    /// period never depends on its name again).
    fn table_spec(&self, slot: Slot, name: String) -> TableSpec {
        let hot = self.policy.hot_phase();
        let template = &self.policy.template;
        let mut tags = template.tags.clone();
        tags.extend(self.own_tags(slot));
        TableSpec {
            name,
            key: self.policy.key.clone(),
            billing: hot.billing,
            global_indexes: self.index_specs(),
            local_indexes: self.policy.local_indexes.clone(),
            table_class: hot.table_class,
            deletion_protection: template.deletion_protection.unwrap_or(false),
            stream: template.stream.flatten(),
            encryption: template.encryption.clone(),
            tags,
        }
    }

    /// The tags ddb-rollover sets on a table of `slot` at creation.
    pub fn own_tags(&self, slot: Slot) -> BTreeMap<String, String> {
        own_tags(
            &self.policy.prefix,
            &self.policy.calendar(),
            slot,
            &self.policy_hash,
        )
    }

    /// resize_old's items for a table, in the order they run: removal of our scalable targets
    /// (leaving an autoscaling phase), the capacity or class change, registration (entering or
    /// staying in one). An unchanged main item is left out when a scaling item says more.
    fn resize_old_items(&self, owned: &Owned) -> Vec<PlanItem> {
        let table = owned.table;
        let age = self.age(owned.slot);
        let mut items = Vec::new();
        if age > 0 {
            items.extend(self.deregister_item(owned));
        }
        let main = self.resize_old_item(owned);
        let provisioned_after = match &main.decision {
            Decision::Update(change) => scaling::is_provisioned(change.to),
            _ => scaling::is_provisioned(table.billing),
        };
        let register = self.register_item(owned, provisioned_after);
        if !(main.decision == Decision::Unchanged && (register.is_some() || !items.is_empty())) {
            items.push(main);
        }
        items.extend(register);
        items
    }

    fn resize_old_item(&self, owned: &Owned) -> PlanItem {
        let (slot, table) = (owned.slot, owned.table);
        let age = self.age(slot);
        if age <= 0 {
            let why = if age == 0 {
                "current period: kept hot by create_new"
            } else {
                "future period: kept hot by create_new"
            };
            return self.item(owned, Decision::Skipped, why.into());
        }
        let phase_index = self.phase_index(slot);
        let want: &Phase = &self.policy.phases[phase_index];
        let phase = match self.policy.grace_end(slot).filter(|until| self.now < *until) {
            Some(until) => format!(
                "phase 0 ({}) in its write grace until {} (period end + grace: late writes; the first resize_old run after lowers it)",
                describe_phase(want),
                until.to_rfc3339()
            ),
            None => format!("phase {phase_index} ({}) for age {age}", describe_phase(want)),
        };

        if table.status != TableStatus::Active {
            return self.item(
                owned,
                Decision::Deferred {
                    retry_after: None,
                    cause: DeferralCause::TableBusy,
                },
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
        // An autoscaling phase leaves a provisioned table's capacity, and its indexes', to the
        // autoscaler; only an on-demand table is switched (to provisioned at the minimums).
        let throughput = match (want.autoscaling, table.billing) {
            (Some(_), Billing::Provisioned(_)) => Ok(ThroughputChange::default()),
            _ => self.phase_change(owned, want),
        };
        let (change, left_out) = match throughput {
            Ok(ThroughputChange { change, left_out }) => (change, left_out),
            // A switch that would touch what is not ours: the class may still follow.
            Err(refused) => (None, vec![refused]),
        };
        let left = left_out_note(&left_out);
        let Some(change) = change else {
            let Some(change) = class_change else {
                if left_out.is_empty() {
                    return self.item(owned, Decision::Unchanged, format!("already at {phase}"));
                }
                return self.item(
                    owned,
                    Decision::Skipped,
                    format!("needs {phase}; what is this policy's is there{left}"),
                );
            };
            if let Err(retry_after) =
                spaced_change_allowed(self.now, table.table_class_updated, TABLE_CLASS_CHANGE_SPACING)
            {
                return self.deferred(
                    owned,
                    retry_after,
                    DeferralCause::ClassChangeSpacing,
                    format!(
                        "needs {phase} but its table class changed recently; at most one change per 15 days"
                    ),
                );
            }
            let reason = format!("table class {} -> {} for {phase}{left}", change.from, change.to);
            return self.item(owned, Decision::UpdateClass(change), reason);
        };
        if !owned.verdict.scaling_known() {
            let (decision, reason) = scaling_not_read();
            return self.item(owned, decision, reason);
        }
        if let Some(index) = self.unsettled_index(table) {
            return self.item(
                owned,
                Decision::Deferred {
                    retry_after: None,
                    cause: DeferralCause::IndexBusy,
                },
                format!(
                    "needs {phase} but its index {} is {}: DynamoDB changes throughput once every index is ACTIVE; a later run retries",
                    index.name,
                    index_state(index)
                ),
            );
        }
        if let Err((retry_after, which)) = self.decrease_budget(table, &change) {
            return self.deferred(
                owned,
                retry_after,
                DeferralCause::DecreaseBudget,
                format!("needs {phase} but DynamoDB's decrease budget is used up: {which}"),
            );
        }
        if change.is_switch_to_on_demand() {
            if let Err(retry_after) =
                spaced_change_allowed(self.now, table.last_switch_to_on_demand, ON_DEMAND_SWITCH_SPACING)
            {
                return self.deferred(
                    owned,
                    retry_after,
                    DeferralCause::OnDemandSwitchSpacing,
                    format!(
                        "needs {phase} but it switched to on-demand recently; at most one switch per 6 hours"
                    ),
                );
            }
        }
        let mut reason = if change.changes_table() {
            format!("{} -> {phase}", table.billing)
        } else {
            format!("indexes -> {phase}")
        };
        if !change.indexes.is_empty() {
            let names: Vec<&str> = change.indexes.iter().map(|i| i.index.as_str()).collect();
            reason.push_str(&format!(", with indexes {}", names.join(", ")));
        }
        reason.push_str(&left);
        if class_change.is_some() {
            reason.push_str("; the table class follows in a later run (one change per UpdateTable)");
        }
        self.item(owned, Decision::Update(change), reason)
    }

    pub fn deferred(
        &self,
        owned: &Owned,
        retry_after: DateTime<Utc>,
        cause: DeferralCause,
        why: String,
    ) -> PlanItem {
        self.item(
            owned,
            Decision::Deferred {
                retry_after: Some(retry_after),
                cause,
            },
            format!("{why}; allowed again at {}", retry_after.to_rfc3339()),
        )
    }
}

/// A table's throughput change limited to the parts that are ours, and the parts left out.
#[derive(Debug, Default)]
pub(crate) struct ThroughputChange {
    pub change: Option<CapacityChange>,
    /// What the change does not touch, and why ("scalable target table/t read (policies: x)").
    pub left_out: Vec<String>,
}

/// "; left as they are (not this policy's): a, b", or nothing.
fn left_out_note(left_out: &[String]) -> String {
    if left_out.is_empty() {
        String::new()
    } else {
        format!("; left as they are (not this policy's): {}", left_out.join(", "))
    }
}

/// A capacity change decided before the scalable targets were read: the run reads them (a
/// first plan asks for them), and only then decides.
fn scaling_not_read() -> (Decision, String) {
    (
        Decision::Deferred {
            retry_after: None,
            cause: DeferralCause::ScalingNotRead,
        },
        "a capacity change is due, but the scalable targets on the table were not read: none is made without knowing whose they are".into(),
    )
}

/// "CREATING", "ACTIVE, backfilling".
fn index_state(index: &crate::table::ObservedIndex) -> String {
    if index.backfilling {
        format!("{}, backfilling", index.status.as_str())
    } else {
        index.status.as_str().to_string()
    }
}

/// "100 RCU / 1 WCU", "on-demand, standard_ia".
fn describe_phase(phase: &Phase) -> String {
    let capacity = match phase.autoscaling {
        Some(autoscaling) => autoscaling.to_string(),
        None => phase.billing.to_string(),
    };
    match phase.table_class {
        Some(class) => format!("{capacity}, {class}"),
        None => capacity,
    }
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
    };
    PlanItem {
        table: table.name.clone(),
        period: None,
        slot: None,
        age: None,
        phase: None,
        status: Some(table.status.as_str().to_string()),
        billing: Some(table.billing),
        arn: None,
        verdict: Some(verdict),
        decision: Decision::Foreign,
        reason,
    }
}
