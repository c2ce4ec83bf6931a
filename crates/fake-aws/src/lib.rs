//! An in-memory AWS account for the engine's tests: DynamoDB, Application Auto Scaling, the S3
//! its exports write to and a clock of its own.
//!
//! [`FakeAws`] implements the engine's four control-plane ports ([`ddb_rollover::control::Tables`],
//! [`ddb_rollover::control::Scaling`], [`ddb_rollover::control::Archives`], [`ddb_rollover::control::Clock`], together
//! [`ddb_rollover::control::ControlPlane`]) and models what AWS documents,
//! independently of the engine's planner (it never asks the engine's limits or decision helpers
//! what to do):
//!
//! - its own clock, moved by the harness ([`FakeAws::set_now`], [`FakeAws::advance`]) and by
//!   [`Clock::sleep`](ddb_rollover::control::Clock::sleep), which returns at once; `Clock::now` reads it (an
//!   `Instant` that moves with the fake time), so a run's waits (readiness, a DELETING table
//!   recreated) and its time budget are measured on it, never on the wall clock;
//! - table and index status: CREATING, UPDATING and DELETING end after [`Config`]'s delays of
//!   fake time; a table being deleted is listed and described as DELETING, then is gone;
//! - DynamoDB's errors, as the SDK adapter classifies them: CreateTable on an existing name
//!   (`AlreadyExists`), any update of a table that is not ACTIVE (`InUse`), an UpdateTable whose
//!   throughput will not change (`NoChange`), a missing table (`NotFound`; DescribeTable answers
//!   `Ok(None)`);
//! - warm throughput for each table and GSI ([`warm`]): CreateTable's or DynamoDB's starting
//!   values, raised by UpdateTable (UPDATING for [`Config::warm_delay`], then ACTIVE), a lower
//!   value refused with a ValidationException (`aws_model::warm::LOWER_WARM`);
//! - the decrease budget of each table and each GSI (4 decreases a UTC day at any time, then one
//!   more whenever there was none in the past hour, 27 at most), provisioned-to-on-demand
//!   switches (4 in any rolling 24 hours) and table class changes (2 in any trailing 30 days):
//!   `LimitExceeded` beyond;
//! - Application Auto Scaling: scalable targets by (resource id, dimension) with their policies
//!   and scheduled actions (PutScheduledAction needs a registered target);
//!   DeregisterScalableTarget deletes every policy and every scheduled action on the target,
//!   whoever made them ([`FakeAws::foreign_deregister_target`]); the engine's
//!   [`Scaling::deregister_scaling`](ddb_rollover::control::Scaling::deregister_scaling) is modelled as the SDK adapter implements it
//!   (`autoscaling_sdk::deregister`): our policy is deleted from each target, and the target
//!   deregistered only when the change asks for it and no policy and no scheduled action is left
//!   on it once ours is deleted; deleting a
//!   table leaves its targets (DynamoDB Developer Guide: "When you manually remove a table or
//!   global table replica, you do not automatically remove any associated scalable targets,
//!   scaling policies, or CloudWatch alarms"); registering a target whose resource's capacity is
//!   outside the new bounds brings it within them, as the autoscaler does;
//! - Kinesis Data Streams destinations ([`Destination`]): the account's Kinesis
//!   data streams by ARN, EnableKinesisStreamingDestination (one destination a table holds at a
//!   time; ENABLING for [`Config::destination_delay`], then ACTIVE, or ENABLE_FAILED when the
//!   stream is missing) and DescribeKinesisStreamingDestination, through the role's IAM;
//! - Lambda event source mappings on the tables' DynamoDB streams ([`Mapping`]): each table's
//!   latest stream ARN, the account's functions, CreateEventSourceMapping (Creating for
//!   [`Config::mapping_delay`], then Enabled; the function and the stream must exist, one
//!   mapping of a function on a stream), DeleteEventSourceMapping and ListEventSourceMappings,
//!   through the role's IAM; deleting a table leaves its mappings;
//! - the IAM role `template.yaml` gives the functions of one family (the prefix the fake is
//!   built for), decided by the template's own statements (create_new's and resize_old's
//!   together, every optional grant on) through `aws_model`'s evaluator (`aws_model::family_role::FamilyRole`):
//!   e.g. tables reachable only under `table/{prefix}_*`, CreateTable only with the family tag
//!   in its tags, DeleteTable only of a table carrying it, no change to another family's table,
//!   item calls only on the family's ledger `{prefix}_ledger` and no change to any ledger table.
//!   A refusal is `ErrorKind::Other` with an AccessDeniedException message. Application Auto
//!   Scaling checks that the caller may describe and update the target's table before
//!   registering a target or putting a policy.
//!
//! Besides the control plane, the fake keeps ground truth for invariants: who made each table,
//! index, target and policy ([`Maker`]), whether the operator adopted a table, and a log of every
//! mutating call with the objects it touched ([`Call`], [`Effect`]). Foreign acts (people,
//! other tools, another family's runs) go through [`FakeAws::acting_as`] (another family's
//! role) or the `foreign_*` methods, which bypass IAM. The operator (`ddb-rollover adopt` with
//! an administrator's credentials) goes through [`FakeAws::operator`]: the same control plane
//! without the role's IAM; the harness records which tables an adoption really tagged
//! ([`FakeAws::mark_adopted`]).
//!
//! Simplifications, each on the safe side for the engine: no account-wide quotas (table count,
//! operations in flight), no throttling but of the tag calls once a test turns AWS's rates on
//! ([`FakeAws::aws_rates`]), no TTL change spacing, and the autoscaler's own capacity
//! changes happen only when a target is registered (there is no traffic).
//!
//! For hand-written tests of a run (the executor's): a starting state set outside any API
//! ([`FakeAws::seed_table`], [`FakeAws::alter_table`], [`FakeAws::seed_target`]), failures
//! injected into our calls ([`FakeAws::fail`], [`FakeAws::fail_times`]) and foreign acts right
//! before or after one of them ([`FakeAws::around`]), and every request made through the ports
//! observed ([`FakeAws::requests`], [`FakeAws::waits`], [`FakeAws::max_in_flight`]).
//!
//! Its modules, from the ground up: what the account holds (`maker`, `objects`, `s3`,
//! `budgets`, `warm`, `destinations`, `mappings`: data and the transitions the clock ends),
//! the log of calls (`log`) and what a test injects (`injection`), the account itself
//! ([`World`], with its clock), the errors, the handle ([`FakeAws`], `account`), then what
//! acts on it: the role's IAM (`iam`, the role being `aws_model::family_role`'s, which testkit's
//! proxy asks too), the changes our calls and the foreign acts share (`mutations`), the
//! foreign acts (`foreign`), a test's seeds (`seed`, `specs`) and hooks (`hooks`), and one
//! module a port (`ports`). The AWS rules it shares with testkit's proxy are `aws_model`'s.

mod account;
mod budgets;
mod destinations;
mod errors;
mod foreign;
mod hooks;
mod iam;
mod injection;
mod log;
mod maker;
mod mappings;
mod mutations;
mod objects;
mod ports;
mod rates;
mod s3;
mod seed;
mod specs;
mod warm;
mod world;

#[cfg(test)]
mod tests;

pub use account::{FakeAws, STACK};
pub use budgets::{
    Decreases, CLASS_CHANGES_PER_30_DAYS, FREE_DECREASES, MAX_DECREASES, ON_DEMAND_SWITCHES_PER_DAY,
};
pub use destinations::{Destination, KinesisAct};
pub use injection::Around;
pub use log::{Call, Effect, Request};
pub use maker::Maker;
pub use mappings::{table_of_stream, Mapping, MappingAct, FUNCTION_GONE, MAPPING_ARN_PREFIX};
pub use objects::{
    key_for, Export, Gsi, Import, LedgerWrite, ScalingPolicy, ScheduledAction, Status, Table, TablePolicy,
    Target, Write, FAMILY_TAG, KEY_LOSS_UNTIL_ARCHIVING, TABLE_ARN_PREFIX,
};
pub use s3::{data_file, Bucket, ExpirationRule, S3Object, ACCOUNT_ID};
pub use specs::{ledger_spec, table_spec};
pub use warm::Warm;
pub use world::{Config, World};
