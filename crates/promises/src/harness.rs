//! The [`Harness`]: plays a [`Case`] in an [`Account`], checking the promises after each run of
//! ours.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::ScalableKey;
use ddb_rollover::policy::{AttributeKind, Billing, Capacity, KeyAttribute, KeySchema, OnDemandLimits};
use ddb_rollover::{ApplyOptions, Operation, Policy};
use fake_aws::{Maker, World};

use crate::account::Account;
use crate::converges::resize_old_converges;
use crate::data_loss::{archives_hold_every_write, no_data_loss};
use crate::facts::{nothing_foreign_changed, Invariant, RunFacts};
use crate::ground::ledger_name;
use crate::ground::{is_our_policy, ledger_unsound};
use crate::knobs::Knobs;
use crate::ledger_promises::{ages_hold, ledger_keeps_memory};
use crate::loud::create_new_is_loud;
use crate::names::{OPERATOR, PREFIX};
use crate::policies::PolicySpec;
use crate::stats::count_run;
use crate::status::status_predicts_run;
use crate::steps::{Case, Step};
use crate::tally::count;

/// Plays one case in an account, checking the promises after each of our runs.
pub struct Harness<'a, A: Account> {
    /// The case it plays.
    pub case: &'a Case,
    /// The case's policy.
    pub policy: Policy,
    /// The nested family's policy (the same under `ts_eu`).
    pub sibling: Policy,
    /// The account it plays in.
    pub account: A,
    /// The promises it checks.
    pub checks: BTreeSet<u8>,
    /// The kinds of acts in play.
    pub knobs: Knobs,
    /// The policy our runs use: `policy` until a [`Step::Zone`] changes its time zone.
    runs: RefCell<Policy>,
    /// The policy each table our runs made since a time zone change was made under: the period
    /// it holds (`policy` says it for the others).
    made_under: RefCell<BTreeMap<String, Policy>>,
}

/// The runs' apply options: the executor's defaults, waiting up to 120 s for a table's
/// readiness (a slowed CreateTable takes longer: see `Slowness`).
pub fn options() -> ApplyOptions {
    ApplyOptions {
        readiness_wait: std::time::Duration::from_secs(120),
        ..ApplyOptions::default()
    }
}

/// A key unlike the policy's, for tables that are not the family's.
pub fn other_key() -> KeySchema {
    KeySchema {
        partition: KeyAttribute {
            name: "id".into(),
            kind: AttributeKind::S,
        },
        sort: None,
    }
}

/// On-demand billing without maximums.
pub fn on_demand() -> Billing {
    Billing::OnDemand(OnDemandLimits::default())
}

/// Provisioned billing with these capacities.
pub fn provisioned(read: i64, write: i64) -> Billing {
    Billing::Provisioned(Capacity { read, write })
}

impl<'a, A: Account> Harness<'a, A> {
    /// A harness for `case` in `account`, checking `checks`.
    pub fn new(
        case: &'a Case,
        policy: Policy,
        sibling: Policy,
        account: A,
        checks: BTreeSet<u8>,
        knobs: Knobs,
    ) -> Harness<'a, A> {
        Harness {
            case,
            runs: RefCell::new(policy.clone()),
            made_under: RefCell::default(),
            policy,
            sibling,
            account,
            checks,
            knobs,
        }
    }

    /// The policy our runs use now.
    pub fn runs_policy(&self) -> Policy {
        self.runs.borrow().clone()
    }
}

impl<A: Account> Harness<'_, A> {
    pub(super) fn calendar_boundary(&self, periods: u32) -> DateTime<Utc> {
        let calendar = self.policy.calendar();
        calendar.start_after(calendar.floor(self.account.now()), periods)
    }

    pub(super) fn grace(&self) -> Duration {
        self.policy
            .grace
            .map(|g| Duration::from_std(g).expect("a small grace"))
            .unwrap_or_else(Duration::zero)
    }

    pub(super) fn before_boundary(&self, periods: u32) {
        let mut at = self.calendar_boundary(periods) - Duration::minutes(15);
        if at <= self.account.now() {
            at = self.calendar_boundary(periods + 1) - Duration::minutes(15);
        }
        self.account.set_now(at);
    }

    pub(super) fn after_boundary(&self, periods: u32, past_grace: bool) {
        let grace = if past_grace {
            self.grace()
        } else {
            Duration::zero()
        };
        self.account
            .set_now(self.calendar_boundary(periods) + Duration::minutes(15) + grace);
    }

    /// Our tables (made by our runs), sorted by name.
    pub(super) fn ours(&self) -> Vec<String> {
        self.account
            .world()
            .tables
            .values()
            .filter(|t| t.maker == Maker::Us)
            .map(|t| t.name.clone())
            .collect()
    }

    pub(super) fn pick(list: &[String], pick: usize) -> Option<&String> {
        (!list.is_empty()).then(|| &list[pick % list.len()])
    }
}

impl<A: Account> Harness<'_, A> {
    /// One of our runs, with the promises checked around it.
    pub(super) fn our_run(&self, index: usize, operation: Operation) -> Result<(), String> {
        self.our_run_at(index, operation, None)
    }

    /// One of our runs at the clock's time, or (`at`) for an instant before it, checked against
    /// the clock as the wall; the promises checked around it.
    pub(super) fn our_run_at(
        &self,
        index: usize,
        operation: Operation,
        at: Option<DateTime<Utc>>,
    ) -> Result<(), String> {
        let policy = self.runs_policy();
        let now = self.account.now();
        let step = match at {
            None => format!("step {index} ({operation} at {})", now.to_rfc3339()),
            Some(at) => format!(
                "step {index} ({operation} for {} at {})",
                at.to_rfc3339(),
                now.to_rfc3339()
            ),
        };
        let world = self.account.world();
        let ran = match at {
            None => self.account.our_run(&policy, operation),
            Some(at) => match self.account.our_run_at(&policy, operation, at) {
                Some(ran) => ran,
                None => {
                    count("a run for an earlier instant: not modelled in this account");
                    return Ok(());
                }
            },
        };
        let ran = match ran {
            Ok(ran) => ran,
            Err(e) => return self.refused_to_start(&step, &world, e),
        };
        // The tables this run made hold the periods of the policy it ran under.
        for (_, effect) in ran
            .calls
            .iter()
            .flat_map(|c| c.effects.iter().map(move |e| (c, e)))
        {
            if let fake_aws::Effect::CreatedTable { table } = effect {
                let mut made_under = self.made_under.borrow_mut();
                if policy.hash() == self.policy.hash() {
                    made_under.remove(table);
                } else {
                    made_under.insert(table.clone(), policy.clone());
                }
            }
        }
        let made_under = self.made_under.borrow();
        let facts = RunFacts {
            step,
            policy: &policy,
            truth: &self.policy,
            made_under: &made_under,
            operation,
            now,
            at: at.unwrap_or(now),
            before: &ran.before,
            after: &ran.after,
            calls: &ran.calls,
            report: &ran.report,
            status: &ran.status,
        };
        let invariants: [(u8, &str, Invariant); 7] = [
            (1, "nothing foreign changed", nothing_foreign_changed),
            (2, "no data loss", no_data_loss),
            (3, "create_new is loud", create_new_is_loud),
            (4, "resize_old converges", resize_old_converges),
            (5, "status predicts the run", status_predicts_run),
            (7, "the ledger keeps the family's memory", ledger_keeps_memory),
            (
                8,
                "ages come from the periods, never from the run's instant",
                ages_hold,
            ),
        ];
        count_run(&facts);
        for (number, name, check) in invariants {
            if !self.checks.contains(&number) {
                continue;
            }
            self.kept(&format!("promise {number} ({name}) broken"), &check(&facts))?;
        }
        Ok(())
    }

    /// A run that ended in an error instead of a report: loud, and acceptable only when the
    /// family's ledger could not be rested on (the run may not create the ledger table: the
    /// stack makes it) and the run changed no table and no scalable target.
    fn refused_to_start(&self, step: &str, before: &World, error: String) -> Result<(), String> {
        let Some(unsound) = ledger_unsound(before) else {
            return Err(format!("{step}: {error}"));
        };
        let after = self.account.world();
        let ledger = ledger_name();
        let tables = |w: &World| {
            w.tables
                .iter()
                .filter(|(name, _)| **name != ledger)
                .map(|(name, t)| (name.clone(), t.clone()))
                .collect::<Vec<_>>()
        };
        if tables(before) != tables(&after) || before.targets != after.targets {
            return Err(format!(
                "{step}: the run failed ({error}) on a ledger that could not be rested on ({unsound}), after changing tables or scalable targets"
            ));
        }
        count(format!(
            "a run failed, changing nothing, as {unsound}: {}",
            error.chars().take(50).collect::<String>()
        ));
        Ok(())
    }

    /// `Ok` when there are no `violations`; else the error that says `broken`, lists them and
    /// shows the case's policy.
    fn kept(&self, broken: &str, violations: &[String]) -> Result<(), String> {
        if violations.is_empty() {
            return Ok(());
        }
        Err(format!(
            "{broken}:\n  {}\n--- policy ---\n{}",
            violations.join("\n  "),
            self.case.toml
        ))
    }

    /// Every step of the case in turn; the first broken promise ends it.
    pub fn run_case(&self) -> Result<(), String> {
        if let Some(kinesis) = &self.policy.stream.kinesis {
            let create = fake_aws::KinesisAct::CreateStream {
                stream_arn: kinesis.stream_arn.to_string(),
            };
            if let Err(e) = self.account.kinesis_act(OPERATOR, &create) {
                count(format!("the family's stream not made: {e}"));
            }
        }
        if let Some(lambda) = &self.policy.stream.lambda {
            let create = fake_aws::MappingAct::CreateFunction {
                function_arn: lambda.function.to_string(),
            };
            if let Err(e) = self.account.mapping_act(OPERATOR, &create) {
                count(format!("the family's consumer not made: {e}"));
            }
        }
        for (index, step) in self.case.steps.iter().enumerate() {
            match step {
                Step::Before { periods } => self.before_boundary(*periods),
                Step::After { periods, past_grace } => self.after_boundary(*periods, *past_grace),
                Step::Wait { seconds } => self.account.advance(Duration::seconds(*seconds)),
                Step::CreateNew => self.our_run(index, Operation::CreateNew)?,
                Step::ResizeOld => self.our_run(index, Operation::ResizeOld)?,
                Step::Schedule { cycles } => {
                    for _ in 0..*cycles {
                        self.before_boundary(1);
                        self.our_run(index, Operation::CreateNew)?;
                        self.after_boundary(1, true);
                        self.our_run(index, Operation::ResizeOld)?;
                    }
                }
                Step::Foreign(act) if act.is_ledger_act() => self.ledger_act(act)?,
                Step::Foreign(act) => self.act(act),
                Step::CreateNewAt { behind } => {
                    count(format!(
                        "create_new for an instant {behind} period(s) behind the clock"
                    ));
                    let at = self.behind(*behind);
                    self.our_run_at(index, Operation::CreateNew, Some(at))?
                }
                Step::Zone { timezone } => self.zone(timezone),
            }
            if self.checks.contains(&6) {
                let violations = archives_hold_every_write(&self.policy, &self.account.world());
                let broken =
                    format!("promise 6 (archives hold every accepted write) broken after step {index}");
                self.kept(&broken, &violations)?;
            }
        }
        Ok(())
    }
}

impl<A: Account> Harness<'_, A> {
    /// The instant `behind` periods before the clock (the runs' calendar), as far into its
    /// period as the clock is into the current one (or that period's last minute).
    fn behind(&self, behind: u32) -> DateTime<Utc> {
        let calendar = self.runs_policy().calendar();
        let now = self.account.now();
        let current = calendar.floor(now);
        let mut slot = current;
        for _ in 0..behind {
            slot = calendar.previous(slot);
        }
        let into = now - current.start();
        (slot.start() + into).min(calendar.end(slot) - Duration::minutes(1))
    }

    /// The operator changes the policy's time zone; the tables keep the periods they were
    /// made for (`policy`, the ground truth).
    fn zone(&self, timezone: &'static str) {
        let spec = PolicySpec {
            timezone,
            ..self.case.spec.clone()
        };
        match Policy::from_toml(&spec.toml(PREFIX)) {
            Ok(policy) => {
                count(format!("the runs' time zone changed to {timezone}"));
                *self.runs.borrow_mut() = policy;
            }
            Err(e) => count(format!("time zone {timezone} refused: {e}")),
        }
    }
}

/// Our scalable targets (one of our runs' policies on them), by key.
pub fn our_target_keys(world: &World) -> Vec<ScalableKey> {
    world
        .targets
        .values()
        .filter(|t| t.policies.iter().any(is_our_policy))
        .map(|t| t.key.clone())
        .collect()
}
