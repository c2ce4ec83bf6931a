//! The family's ledger (issue 37) as the stack provides it: its name, the calls the functions
//! make on it, and the table actions no function may make on any ledger under its prefix.

use aws_model::iam::{tags, Tags};
use ddb_rollover::policy::TAG_FAMILY;

/// The ledger of the family `prefix`: `{prefix}_ledger`. The engine derives the name from the
/// prefix (core's `TableNaming::ledger_name` on the `ledger` branch; call that here once it is
/// merged) instead of reading it from the environment, so the template's `LedgerTable` must
/// follow this rule: the checks hold it to it.
pub fn ledger_name(prefix: &str) -> String {
    format!("{prefix}_ledger")
}

/// The tag that marks a table as a ledger, beside the family tag.
pub const TAG_LEDGER: &str = "ddb-rollover:ledger";

/// The tags the stack gives the ledger of `prefix`.
pub fn ledger_tags(prefix: &str) -> Tags {
    tags(&[(TAG_FAMILY, prefix), (TAG_LEDGER, "true")])
}

/// What both functions send on their own ledger (LEDGER-SPEC, "Calls the functions make on the
/// ledger"): the one Query a run reads it with (a missing ledger answers ResourceNotFound), the
/// conditional writes of records, intents, outcomes and the lease, and the lease's release.
pub const LEDGER_ACTIONS: [&str; 3] = ["dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem"];

/// The table actions explicitly denied to both roles on their ledger and on every ledger of a
/// family nested in theirs: every changing table action either role is granted on
/// `table/{prefix}_*`, and the spec's others (UntagResource).
pub const LEDGER_DENIED: [&str; 11] = [
    "dynamodb:CreateTable",
    "dynamodb:UpdateTable",
    "dynamodb:UpdateTimeToLive",
    "dynamodb:UpdateContinuousBackups",
    "dynamodb:EnableKinesisStreamingDestination",
    "dynamodb:ExportTableToPointInTime",
    "dynamodb:PutResourcePolicy",
    "dynamodb:DeleteResourcePolicy",
    "dynamodb:TagResource",
    "dynamodb:UntagResource",
    "dynamodb:DeleteTable",
];

/// Item actions no function needs on a ledger: never granted.
pub const UNUSED_ITEM_ACTIONS: [&str; 12] = [
    "dynamodb:GetItem",
    "dynamodb:UpdateItem",
    "dynamodb:Scan",
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:TransactGetItems",
    "dynamodb:TransactWriteItems",
    "dynamodb:ConditionCheckItem",
    "dynamodb:PartiQLSelect",
    "dynamodb:PartiQLInsert",
    "dynamodb:PartiQLUpdate",
    "dynamodb:PartiQLDelete",
];

/// Whether an action changes what it names: anything but `Describe*`, `List*` and `Get*`.
pub fn is_write(action: &str) -> bool {
    let name = action.split_once(':').map_or(action, |(_, name)| name);
    !["Describe", "List", "Get"]
        .iter()
        .any(|read| name.starts_with(read))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_is_named_by_the_prefix_outside_the_period_grammar() {
        assert_eq!(ledger_name("timeseries"), "timeseries_ledger");
        assert_eq!(ledger_name("ts_eu"), "ts_eu_ledger");
        let naming = ddb_rollover::Policy::default().naming();
        assert!(!matches!(
            naming.classify(&ledger_name(naming.prefix())),
            ddb_rollover::policy::Ownership::Owned(_)
        ));
    }

    #[test]
    fn the_denied_actions_all_change_and_none_is_a_call_the_functions_make() {
        for action in LEDGER_DENIED {
            assert!(is_write(action), "{action}");
            assert!(!LEDGER_ACTIONS.contains(&action), "{action}");
        }
        assert!(!is_write("dynamodb:GetResourcePolicy") && !is_write("dynamodb:ListTagsOfResource"));
        assert!(is_write("dynamodb:PutItem") && is_write("dynamodb:DeleteItem"));
    }
}
