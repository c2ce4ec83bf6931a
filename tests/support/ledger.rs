//! The family's ledger (`{prefix}_ledger`) as the system tests meet it on a server: the table
//! its SAM stack makes before any run, read back and told apart from the period tables.
//!
//! A family is the ledger's: the first run of a family that has no table yet makes the ledger
//! table where it is missing (the CLI; a deployed function finds the stack's), and `init` makes
//! it for a family that has tables already. So after a run, every table listing holds the
//! family's ledger beside its period tables; tests that compare the period tables take it out
//! with [`without_ledgers`], which also checks it is there.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{BillingMode, TableDescription};
use ddb_rollover::control::Ledger;
use ddb_rollover::Policy;
use ddb_rollover_aws::dynamodb::DynamoDb;

/// The ledger table of the family `prefix` (core's `TableNaming::ledger_name`).
pub(crate) fn ledger_name(prefix: &str) -> String {
    let policy = Policy {
        prefix: prefix.to_string(),
        ..Policy::default()
    };
    policy.naming().ledger_name()
}

/// `tables` (a server's tables as testkit's readers give them, which leave every family's
/// ledger out: [`testkit::ledgers`] reads those), checked to hold none of the ledgers of the
/// families `prefixes`: the period tables, to compare with what a test expects.
pub(crate) fn without_ledgers<V: std::fmt::Debug>(
    tables: BTreeMap<String, V>,
    prefixes: &[&str],
) -> BTreeMap<String, V> {
    for prefix in prefixes {
        let ledger = ledger_name(prefix);
        assert!(!tables.contains_key(&ledger), "{ledger} among the period tables");
    }
    tables
}

/// [`without_ledgers`] of one family.
pub(crate) fn without_ledger<V: std::fmt::Debug>(
    tables: BTreeMap<String, V>,
    prefix: &str,
) -> BTreeMap<String, V> {
    without_ledgers(tables, &[prefix])
}

/// Makes the family `prefix`'s ledger table before any run, as its SAM stack does
/// (template.yaml's `LedgerTable`): with the engine's own CreateTable of it (`family` and
/// `record` keys, on-demand, deletion protection and our tags where the server keeps them),
/// which `init` and a new family's first run send too. No record is written: the first run
/// starts the ledger (a family with no table yet), or `init` does.
pub(crate) async fn stack_ledger(client: &aws_sdk_dynamodb::Client, prefix: &str) {
    DynamoDb::local(client.clone())
        .create_ledger(&ledger_name(prefix), prefix)
        .await
        .unwrap_or_else(|e| panic!("the stack's ledger {}: {e}", ledger_name(prefix)));
}

/// The ledger table of `prefix` among `tables` ([`testkit::ledgers`], which checks each is keyed
/// by `family` and `record`), checked to be on demand.
pub(crate) fn assert_is_ledger(tables: &BTreeMap<String, TableDescription>, prefix: &str) {
    let ledger = ledger_name(prefix);
    let table = tables
        .get(&ledger)
        .unwrap_or_else(|| panic!("no ledger {ledger}: {:?}", tables.keys().collect::<Vec<_>>()));
    assert_eq!(
        table.billing_mode_summary().and_then(|b| b.billing_mode()),
        Some(&BillingMode::PayPerRequest),
        "{ledger} is on demand"
    );
}

/// `ddb-rollover init --yes` through the engine, as an operator with the account's own
/// credentials (`control`) at `at`: starts the family's ledger (making its table where it is
/// missing) and records each table of the family's names that carries our family tag, the
/// policy's key and a period. How tests whose tables were seeded as an earlier version made
/// them give them to the family, as a user upgrading would. Returns the report; every line
/// must have succeeded (a refusal is not a failure).
pub(crate) async fn init<C: ddb_rollover::control::ControlPlane>(
    control: &C,
    policy: &Policy,
    at: chrono::DateTime<chrono::Utc>,
) -> ddb_rollover::InitReport {
    let clock = ddb_rollover::simulation(policy, &[ddb_rollover::Operation::CreateNew], at)
        .expect("a clock init accepts");
    let report = ddb_rollover::init(control, policy, &clock, false)
        .await
        .unwrap_or_else(|e| panic!("init of {}: {e}", policy.prefix));
    assert!(report.succeeded(), "init of {}: {report:#?}", policy.prefix);
    report
}

/// The names `init`'s report recorded, sorted.
pub(crate) fn recorded_by(report: &ddb_rollover::InitReport) -> Vec<&str> {
    report
        .tables
        .iter()
        .filter(|l| {
            l.action == ddb_rollover::Enrolment::Record && l.outcome == ddb_rollover::LineOutcome::Done
        })
        .map(|l| l.table.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}
