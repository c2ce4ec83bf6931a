//! ddb-rollover: one DynamoDB table per time period. This crate is the engine, with no AWS SDK
//! in it: its ports ([`control::ControlPlane`] and the others) are implemented on the SDK's
//! clients in `ddb-rollover-aws`. Lambda lives in `ddb-rollover-lambda`, the applications' side
//! (writes, queries, sizing) in `ddb-rollover-app`.
//!
//! The front door, one name for each thing another crate uses:
//!
//! - here, at the root: the engine's entry points and what they return. [`plan()`] decides,
//!   table by table, what a run does ([`Plan`], [`Decision`], the [`Verdict`] on whose each
//!   table is); [`run()`] observes, plans and applies through a
//!   [`ControlPlane`](control::ControlPlane) at an instant [`check_clock`] checked, and gives
//!   a [`RunReport`]; the operator's views on the same steps are [`status()`], [`adopt()`],
//!   [`restore()`] and [`init()`].
//! - [`policy`]: what the operator asks for, the [`Policy`]'s vocabulary: periods and labels,
//!   table names, settings, indexes, warm throughput, the change stream, autoscaling,
//!   retention, our tags and DynamoDB's limits.
//! - [`table`]: what a table is ([`table::ObservedTable`], as DescribeTable shows it), the
//!   change requests between what is and what should be, an archive's layout, the seal.
//! - [`control`]: the ports a control plane implements (DynamoDB, Application Auto Scaling,
//!   S3's archives, Lambda's mappings, the ledger, the clock) and their errors.
//! - [`ledger`]: the family's own record of what it made, as stored.
//! - [`route`]: the applications' entry: which table holds an instant.
//!
//! Inside, one folder per layer, each using only the ones before it: `policy`, `table`,
//! `ledger`, `plan` (the pure planner), `run` (a run end to end). One run, step by step, and
//! the words the code uses (phase, age, premake, grace, verdict, deferral, seal, ...):
//! `docs/architecture.md`.

pub mod ledger;
mod plan;
pub mod policy;
pub mod route;
mod run;
pub mod table;

pub mod control {
    //! The ports a control plane implements, and their errors: what a run calls, on the SDK's
    //! clients (`ddb-rollover-aws`) or in memory (`fake-aws`). [`ControlPlane`] names them all.

    pub use crate::run::archive::{access_denied, prove, recheck, ArchiveStore, Bucket};
    pub use crate::run::control::{
        Archives, Clock, ControlPlane, ControlPlaneError, ErrorKind, Expect, Ledger, Mappings, Scaling,
        Tables,
    };
}

pub use plan::deferral::DeferralCause;
pub use plan::verdict::{ForeignPart, NoEvidence, Verdict};
pub use plan::{plan, plan_run, Decision, Operation, Plan, PlanItem, Scope, TableFacts};
pub use policy::{Policy, PolicyDocument, PolicyError};
pub use run::adopt::{adopt, AdoptReport, Adoption};
pub use run::apply::{apply, run, run_each, ApplyOptions};
pub use run::clock::{
    check_clock, clock_skew, clock_warning, is_now, same_period, simulation, CheckedInstant, ClockAllowance,
    ClockError,
};
pub use run::init::{init, Enrolment, InitReport};
pub use run::observe::{observe, FailedRead, Observation};
pub use run::operator::{LineOutcome, OperatorLine};
pub use run::pace::Paced;
pub use run::readiness::{Condition, Readiness, TargetTable};
pub use run::report::{Outcome, RunReport, Summary, TableLine, UnreadEvidence};
pub use run::restore::{restore, Restoration, RestoreOptions, RestoreReport};
pub use run::status::{status, NextPhase, NextRun, StatusReport, TableStatusLine, WarmStatus};
