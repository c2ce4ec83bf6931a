//! ddb-rollover: one DynamoDB table per time period. This crate is the engine; Lambda lives in
//! `ddb-rollover-lambda`, the applications' side (writes, queries, sizing) in `ddb-rollover-app`.
//!
//! Every decision lives here: [`period`] turns instants into periods and labels, [`policy`]
//! describes what each table should look like at each age, [`verdict`] says whose each table
//! and each of its parts is (every action asks it), [`plan`](mod@plan) is the pure
//! planner (it also decides what a run reads), [`apply`](mod@apply) observes, plans and executes
//! through a [`control::ControlPlane`], and [`dynamodb`] implements that control plane on
//! `aws_sdk_dynamodb::Client`. [`settings`], [`tags`] and [`changes`] are the shared vocabulary.

pub mod adopt;
pub mod apply;
pub mod autoscaling_sdk;
pub mod blueprint;
pub mod changes;
pub mod clock;
pub mod control;
pub mod deferral;
pub mod dynamodb;
pub mod indexes;
pub mod limits;
pub mod naming;
pub mod observe;
pub mod observed;
pub mod pace;
pub mod period;
pub mod plan;
pub mod policy;
pub mod rates;
pub mod readiness;
pub mod report;
pub mod retention;
pub mod route;
pub mod scaling;
pub mod sdk;
pub mod settings;
pub mod status;
pub mod tags;
pub mod verdict;

pub use apply::{apply, run, run_each, ApplyOptions};
pub use control::{ControlPlane, ControlPlaneError, ErrorKind};
pub use deferral::DeferralCause;
pub use observe::{observe, Observation};
pub use plan::{plan, Decision, Operation, Plan, PlanItem, Scope};
pub use policy::{Policy, PolicyDocument, PolicyError};
pub use readiness::Readiness;
pub use report::{Outcome, RunReport};
