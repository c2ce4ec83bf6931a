//! The planner tests' plans at the two scheduled runs around midnight UTC of 2018-10-25/26,
//! and reading them.

use ddb_rollover::table::ObservedTable;
use ddb_rollover::{plan, Operation, Plan, PlanItem, Policy};

use super::at;

/// create_new's plan under `policy` at 23:45 on 2018-10-25.
pub(crate) fn create_new(policy: &Policy, tables: &[ObservedTable]) -> Plan {
    plan(policy, at("2018-10-25T23:45:00Z"), tables, Operation::CreateNew)
}

/// resize_old's plan under `policy` at 00:15 on 2018-10-26.
pub(crate) fn resize_old(policy: &Policy, tables: &[ObservedTable]) -> Plan {
    plan(policy, at("2018-10-26T00:15:00Z"), tables, Operation::ResizeOld)
}

/// `item`'s reason mentions each of `words`; a failure shows the whole reason.
pub(crate) fn assert_reason_mentions(item: &PlanItem, words: &[&str]) {
    for word in words {
        assert!(item.reason.contains(word), "{word:?} not in: {}", item.reason);
    }
}
