//! ddb-rollover: one DynamoDB table per time period. This crate is the engine, with no AWS SDK
//! in it: its ports ([`ControlPlane`] and the others) are implemented on the SDK's clients in
//! `ddb-rollover-aws`. Lambda lives in `ddb-rollover-lambda`, the applications' side (writes,
//! queries, sizing) in `ddb-rollover-app`.
//!
//! Where to start, one folder per layer, each using only the ones before it:
//!
//! 1. [`policy`]: what the operator asks for. The [`Policy`] and its vocabulary: periods and
//!    labels ([`policy::period`]), table names, settings, indexes, autoscaling, retention,
//!    rates, our tags, and DynamoDB's limits.
//! 2. [`table`]: what a table is ([`table::ObservedTable`], as DescribeTable shows it) and the
//!    change requests between what is and what should be ([`table::changes`]).
//! 3. [`plan`](mod@plan): the pure planner. [`plan::verdict`] says whose each table and each
//!    of its parts is (every action asks it); [`plan()`] decides, table by table, what a run
//!    does and what it must read first.
//! 4. [`run`](mod@run): a run end to end: the clock check ([`run::clock`]), observing at the floor of
//!    calls, applying through a [`ControlPlane`], readiness and the [`RunReport`]; and the
//!    operator's views on the same steps (`status`, `adopt`, `restore`).
//!
//! One run, step by step, and the words the code uses (phase, age, premake, grace, verdict,
//! deferral, seal, ...): `docs/architecture.md`.
//!
//! [`route`] is the applications' entry: which table holds an instant.

pub mod ledger;
pub mod plan;
pub mod policy;
pub mod route;
pub mod run;
pub mod table;

pub use plan::deferral::DeferralCause;
pub use plan::{plan, Decision, Operation, Plan, PlanItem, Scope};
pub use policy::{Policy, PolicyDocument, PolicyError};
pub use run::apply::{apply, run, run_each, ApplyOptions};
pub use run::clock::{check_clock, CheckedInstant, ClockAllowance};
pub use run::control::{
    Archives, Clock, ControlPlane, ControlPlaneError, ErrorKind, Mappings, Scaling, Tables,
};
pub use run::observe::{observe, Observation};
pub use run::readiness::Readiness;
pub use run::report::{Outcome, RunReport};
