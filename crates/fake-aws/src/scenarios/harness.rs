//! The [`Harness`]: plays a [`Case`] in an [`Account`], checking the promises after each run of
//! ours.

use std::collections::BTreeSet;

use crate::{Maker, World};
use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::scaling::ScalableKey;
use ddb_rollover::policy::settings::{
    AttributeKind, Billing, Capacity, KeyAttribute, KeySchema, OnDemandLimits,
};
use ddb_rollover::{ApplyOptions, Operation, Policy};

use super::*;

/// Plays one case in an account, checking the promises after each of our runs.
pub struct Harness<'a, A: Account> {
    pub case: &'a Case,
    pub policy: Policy,
    pub sibling: Policy,
    pub account: A,
    pub checks: BTreeSet<u8>,
    pub knobs: Knobs,
}

pub fn options() -> ApplyOptions {
    ApplyOptions {
        readiness_wait: std::time::Duration::from_secs(120),
        ..ApplyOptions::default()
    }
}

pub fn other_key() -> KeySchema {
    KeySchema {
        partition: KeyAttribute {
            name: "id".into(),
            kind: AttributeKind::S,
        },
        sort: None,
    }
}

pub fn on_demand() -> Billing {
    Billing::OnDemand(OnDemandLimits::default())
}

pub fn provisioned(read: i64, write: i64) -> Billing {
    Billing::Provisioned(Capacity { read, write })
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
        let now = self.account.now();
        let step = format!("step {index} ({operation} at {})", now.to_rfc3339());
        let ran = self
            .account
            .our_run(&self.policy, operation)
            .map_err(|e| format!("{step}: {e}"))?;
        let facts = RunFacts {
            step,
            policy: &self.policy,
            operation,
            now,
            before: &ran.before,
            after: &ran.after,
            calls: &ran.calls,
            report: &ran.report,
            status: &ran.status,
        };
        let invariants: [(u8, &str, Invariant); 5] = [
            (1, "nothing foreign changed", nothing_foreign_changed),
            (2, "no data loss", no_data_loss),
            (3, "create_new is loud", create_new_is_loud),
            (4, "resize_old converges", resize_old_converges),
            (5, "status predicts the run", status_predicts_run),
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
            let create = crate::KinesisAct::CreateStream {
                stream_arn: kinesis.stream_arn.to_string(),
            };
            if let Err(e) = self.account.kinesis_act(OPERATOR, &create) {
                count(format!("the family's stream not made: {e}"));
            }
        }
        if let Some(lambda) = &self.policy.stream.lambda {
            let create = crate::MappingAct::CreateFunction {
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
                Step::Foreign(act) => self.act(act),
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

/// Our scalable targets (one of our policies on them), by key.
pub fn our_target_keys(world: &World) -> Vec<ScalableKey> {
    world
        .targets
        .values()
        .filter(|t| t.policies.iter().any(|p| is_our_policy_name(&p.name)))
        .map(|t| t.key.clone())
        .collect()
}
