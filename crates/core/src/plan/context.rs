//! What every rule of the planner reads: the tables it owns ([`Owned`], each with its one
//! verdict), the run's instant, current period and ages ([`Context`]), and the small
//! descriptions the rules share. The rules (`phase`, `indexes`, `upkeep`, `retention`,
//! `seal`, `scaling`, `warm`) extend [`Context`] with their own methods.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use crate::plan::decision::{Decision, PlanItem, TableFacts};
use crate::plan::deferral::DeferralCause;
use crate::plan::verdict::Verdict;
use crate::policy::limits::spaced_change_allowed;
use crate::policy::period::{Calendar, Slot};
use crate::policy::{Phase, Policy};
use crate::table::changes::CapacityChange;
use crate::table::evidence::{ArchiveRecord, PeriodBounds, Receipt};
use crate::table::ObservedTable;

/// An existing table the policy owns, and the period it holds.
pub(crate) struct Owned<'a> {
    pub slot: Slot,
    /// The period the family's ledger recorded for it.
    pub bounds: PeriodBounds,
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
    /// The tables the ledger records resize_old dialled down past phase 0.
    pub lowered: BTreeSet<String>,
}

/// The current period and the `premake` periods after it.
pub(crate) fn premake_slots(policy: &Policy, current: Slot) -> Vec<Slot> {
    let count = policy.premake as usize + 1;
    policy.calendar().periods_from(current).take(count).collect()
}

/// The age of each slot relative to `current`. Hourly periods in a zone with DST are counted by
/// walking, so slots are taken in order outward from `current` and each stretch of time is
/// walked once, not once per table.
pub(crate) fn ages_from(
    calendar: &Calendar,
    current: Slot,
    slots: impl Iterator<Item = Slot>,
) -> BTreeMap<Slot, i64> {
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
    pub(crate) fn age(&self, slot: Slot) -> i64 {
        self.ages[&slot]
    }

    /// Whether create_new raises the existing table `name` of `slot` to phase 0: a pre-built
    /// one, never the current one (a late retry of the 23:45 run, landing after resize_old
    /// dialled it down, must not raise it again), and never one the ledger records resize_old
    /// dialled down (a run for an instant more than a period behind: a replay, a late retry).
    pub(crate) fn raises(&self, slot: Slot, name: &str) -> bool {
        slot != self.current && !self.lowered.contains(name)
    }

    /// The phase a table of `slot` is in now: by its age, except that a table in its write
    /// grace (period end + the policy's grace) is still in phase 0.
    pub(crate) fn phase_index(&self, slot: Slot) -> usize {
        if self.in_grace(slot) {
            0
        } else {
            self.policy.phase_index_for_age(self.age(slot))
        }
    }

    /// Whether a past table of `slot` is still in its write grace: it keeps phase 0, and is
    /// neither archived nor deleted.
    pub(crate) fn in_grace(&self, slot: Slot) -> bool {
        self.policy.grace_end(slot).is_some_and(|until| self.now < until)
    }

    /// What a deletion of `owned` relies on, for the family's ledger: its identity, period and
    /// key, and the proven archive (`None` when retention deletes without archiving). `None`
    /// when DescribeTable did not give its identity (then nothing is deleted).
    pub(crate) fn receipt(&self, owned: &Owned, archive: Option<ArchiveRecord>) -> Option<Receipt> {
        Some(Receipt {
            name: owned.table.name.clone(),
            identity: owned.table.identity()?,
            period: owned.bounds,
            key: owned.table.key.clone()?,
            at: self.now,
            archive,
        })
    }

    /// An item for an existing table.
    pub(crate) fn item(&self, owned: &Owned, decision: Decision, reason: String) -> PlanItem {
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
            facts: TableFacts {
                table: name.to_string(),
                period: Some(period.to_string()),
                slot: Some(slot),
                age: Some(age),
                phase: Some(self.phase_index(slot)),
                status: table.map(|t| t.status.as_str().to_string()),
                billing: table.map(|t| t.billing),
            },
            arn: table.and_then(|t| t.arn.clone()),
            verdict: None,
            decision,
            reason,
        }
    }

    pub(crate) fn deferred(
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

    /// The change deferred when `spacing` has not passed since `last_change` (AWS allows one
    /// such change per `spacing`); `None` when it may go ahead.
    pub(crate) fn too_soon_after(
        &self,
        owned: &Owned,
        last_change: Option<DateTime<Utc>>,
        spacing: Duration,
        cause: DeferralCause,
        why: String,
    ) -> Option<PlanItem> {
        let retry_after = spaced_change_allowed(self.now, last_change, spacing).err()?;
        Some(self.deferred(owned, retry_after, cause, why))
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
pub(crate) fn left_out_note(left_out: &[String]) -> String {
    if left_out.is_empty() {
        String::new()
    } else {
        format!("; left as they are (not this policy's): {}", left_out.join(", "))
    }
}

/// A capacity change decided before the scalable targets were read: the run reads them (a
/// first plan asks for them), and only then decides.
pub(crate) fn scaling_not_read() -> (Decision, String) {
    (
        Decision::Deferred {
            retry_after: None,
            cause: DeferralCause::ScalingNotRead,
        },
        "a capacity change is due, but the scalable targets on the table were not read: none is made without knowing whose they are".into(),
    )
}

/// "CREATING", "ACTIVE, backfilling".
pub(crate) fn index_state(index: &crate::table::ObservedIndex) -> String {
    if index.backfilling {
        format!("{}, backfilling", index.status.as_str())
    } else {
        index.status.as_str().to_string()
    }
}

/// "100 RCU / 1 WCU", "on-demand, standard_ia", "on-demand, warm throughput 40000 read / 20000
/// write units/s".
pub(crate) fn describe_phase(phase: &Phase) -> String {
    let capacity = match phase.autoscaling {
        Some(autoscaling) => autoscaling.to_string(),
        None => phase.billing.to_string(),
    };
    let capacity = match phase.table_class {
        Some(class) => format!("{capacity}, {class}"),
        None => capacity,
    };
    format!("{capacity}{}", warm_suffix(phase))
}

/// ", warm throughput 40000 read / 20000 write units/s" for a phase that asks for it.
pub(crate) fn warm_suffix(phase: &Phase) -> String {
    phase
        .warm
        .map(|warm| format!(", warm throughput {warm}"))
        .unwrap_or_default()
}
