//! The account a case plays in ([`Account`]: the fake, or moto behind the proxy) and what one
//! run of ours did there ([`Ran`]).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::ledger::StoredRecord;
use ddb_rollover::policy::ScalableKey;
use ddb_rollover::policy::Slot;
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::{Billing, GlobalIndex};
use ddb_rollover::table::TableSpec;
use ddb_rollover::AdoptReport;
use ddb_rollover::StatusReport;
use ddb_rollover::{Operation, Policy, RunReport};
use fake_aws::World;

use crate::steps::ArchiveAct;

/// The promises checked: all nine, or those `PROMISES_CHECK` lists (comma-separated).
pub fn checks() -> BTreeSet<u8> {
    match std::env::var("PROMISES_CHECK") {
        Ok(list) if !list.trim().is_empty() => {
            list.split(',').filter_map(|s| s.trim().parse().ok()).collect()
        }
        _ => (1..=9).collect(),
    }
}

/// What one of our runs did, from the account's ground truth.
pub struct Ran {
    /// The account just before and just after the run.
    pub before: World,
    /// The account just after the run.
    pub after: World,
    /// Our mutating calls during the run, each with what it did.
    pub calls: Vec<fake_aws::Call>,
    /// What the run reported.
    pub report: RunReport,
    /// `status` from a full observation just before the run.
    pub status: StatusReport,
}

/// An AWS account the scenarios play in: [`fake_aws::FakeAws`] (`promises.rs`), or moto behind
/// the testkit proxy's AWS behaviours (`tests/engine/promises_moto/`). Foreign acts may be refused (by
/// DynamoDB's rules): the harness ignores their errors, as life does.
pub trait Account {
    /// The scenario's clock.
    fn now(&self) -> DateTime<Utc>;
    /// Moves the clock to `t` (never backwards).
    fn set_now(&self, t: DateTime<Utc>);
    /// Moves the clock forward by `by`.
    fn advance(&self, by: Duration);
    /// The account's state with its ground truth: who made each table, target and policy,
    /// which tables the operator adopted.
    fn world(&self) -> World;
    /// One of our runs at the clock's time, through our family's role, with `status` from a
    /// full observation just before it.
    fn our_run(&self, policy: &Policy, operation: Operation) -> Result<Ran, String>;
    /// The nested family's own run, through its role.
    fn sibling_run(&self, sibling: &Policy, operation: Operation);
    /// The operator's real `adopt` of `table` with its own credentials (no role): its report,
    /// and the tables it really wrote our family tag on, which the ground truth now counts
    /// as adopted.
    fn adopt(&self, policy: &Policy, table: &str) -> (Result<AdoptReport, String>, Vec<String>);
    /// `who`'s CreateTable.
    fn create_table(&self, who: &str, spec: &TableSpec) -> Result<(), String>;
    /// `who` tags `table`.
    fn tag(&self, who: &str, table: &str, tags: BTreeMap<String, String>) -> Result<(), String>;
    /// `who` removes the tag `keys` from `table`.
    fn untag(&self, who: &str, table: &str, keys: &[String]) -> Result<(), String>;
    /// The table's throughput (every index's too when `to` is provisioned).
    fn update_capacity(&self, who: &str, table: &str, to: Billing) -> Result<(), String>;
    /// `who` sets the capacity of `table`'s index `index`.
    fn update_index_capacity(&self, who: &str, table: &str, index: &str, to: Billing) -> Result<(), String>;
    /// `who` deletes `table`.
    fn delete_table(&self, who: &str, table: &str) -> Result<(), String>;
    /// `who` adds the index `index` to `table`.
    fn add_index(&self, who: &str, table: &str, index: &GlobalIndex, billing: Billing) -> Result<(), String>;
    /// `who` registers a scalable target with these bounds.
    fn register_target(&self, who: &str, key: &ScalableKey, min: i64, max: i64) -> Result<(), String>;
    /// `StepScaling`, or `TargetTrackingScaling` on the dimension's utilisation at 50%.
    fn put_policy(&self, who: &str, key: &ScalableKey, name: &str, policy_type: &str) -> Result<(), String>;
    /// DeregisterScalableTarget: every policy on the target goes with it.
    fn deregister_target(&self, who: &str, key: &ScalableKey) -> Result<(), String>;
    /// `who` deletes the scaling policy `name` from the target.
    fn delete_policy(&self, who: &str, key: &ScalableKey, name: &str) -> Result<(), String>;
    /// Pre-warms the table (`index` None) or one of its indexes to `to` (UpdateTable).
    fn raise_warm(
        &self,
        who: &str,
        table: &str,
        index: Option<&str>,
        to: WarmThroughput,
    ) -> Result<(), String>;
    /// The application's item writes (BatchWriteItem); an account that does not model items
    /// refuses them.
    fn write_items(&self, who: &str, table: &str, items: &[String]) -> Result<(), String> {
        let _ = (who, table, items);
        Err("this account does not model items".into())
    }
    /// Someone else's unconditional PutResourcePolicy.
    fn put_resource_policy(&self, who: &str, table: &str, document: &str) -> Result<(), String> {
        let _ = (who, table, document);
        Err("this account does not model resource-based policies".into())
    }
    /// Someone else's unconditional DeleteResourcePolicy.
    fn delete_resource_policy(&self, who: &str, table: &str) -> Result<(), String> {
        let _ = (who, table);
        Err("this account does not model resource-based policies".into())
    }
    /// Disables the table's KMS key: INACCESSIBLE_ENCRYPTION_CREDENTIALS, then archived.
    fn disable_key(&self, who: &str, table: &str) -> Result<(), String>;
    /// PutScheduledAction on a registered target.
    fn put_scheduled_action(&self, who: &str, key: &ScalableKey, name: &str) -> Result<(), String>;
    /// `who` deletes the scheduled action `name` from the target.
    fn delete_scheduled_action(&self, who: &str, key: &ScalableKey, name: &str) -> Result<(), String>;
    /// UpdateTable DeletionProtectionEnabled.
    fn set_deletion_protection(&self, who: &str, table: &str, on: bool) -> Result<(), String>;
    /// A Kinesis act: a data stream created or deleted, a table's destination enabled, disabled
    /// or its precision updated (within DynamoDB's rules). Unmodelled by default.
    fn kinesis_act(&self, who: &str, act: &fake_aws::KinesisAct) -> Result<(), String> {
        let _ = (who, act);
        Err("this account does not model Kinesis data streams".into())
    }
    /// A Lambda act: a function created or deleted, an event source mapping made, deleted or
    /// disabled (within Lambda's rules). Unmodelled by default.
    fn mapping_act(&self, who: &str, act: &fake_aws::MappingAct) -> Result<(), String> {
        let _ = (who, act);
        Err("this account does not model Lambda event source mappings".into())
    }
    /// One of our runs for the instant `at`, before the account's clock, which is checked
    /// against that clock as the wall (not a simulation); `status` at `at` with that wall.
    /// `None`: not modelled.
    fn our_run_at(
        &self,
        policy: &Policy,
        operation: Operation,
        at: DateTime<Utc>,
    ) -> Option<Result<Ran, String>> {
        let _ = (policy, operation, at);
        None
    }
    /// A ledger item put unconditionally in the family's ledger by `actor`: someone with rights
    /// on it, or a crashed run of ours ([`fake_aws::Maker::Us`]). Unmodelled by default.
    fn put_record(&self, actor: &fake_aws::Maker, record: &StoredRecord) -> Result<(), String> {
        let _ = (actor, record);
        Err("this account does not model the ledger's items".into())
    }
    /// A ledger item deleted unconditionally by `actor`. Unmodelled by default.
    fn delete_record(&self, actor: &fake_aws::Maker, key: &str) -> Result<(), String> {
        let _ = (actor, key);
        Err("this account does not model the ledger's items".into())
    }
    /// The operator's real `init` (not a dry run): the tables it recorded that our runs did not
    /// make, which the ground truth now counts as the operator's. Unmodelled by default.
    fn init(&self, policy: &Policy) -> Result<Vec<String>, String> {
        let _ = policy;
        Err("this account does not model init".into())
    }
    /// The operator's real `restore` of `slot` (not a dry run): how it ended; a table it
    /// recorded counts as the operator's. Unmodelled by default.
    fn restore(&self, policy: &Policy, slot: Slot) -> Result<String, String> {
        let _ = (policy, slot);
        Err("this account does not model restore".into())
    }
    /// An S3 act on `export` (one of [`World::exports`]) in its bucket. Unmodelled by default.
    fn archive_act(&self, who: &str, export: &fake_aws::Export, act: ArchiveAct) -> Result<(), String> {
        let _ = (who, export, act);
        Err("S3 acts are not modelled in this account".into())
    }
}
