//! Reading a plan in the planner tests.

use ddb_rollover::PlanItem;

/// `item`'s reason mentions each of `words`; a failure shows the whole reason.
pub(crate) fn assert_reason_mentions(item: &PlanItem, words: &[&str]) {
    for word in words {
        assert!(item.reason.contains(word), "{word:?} not in: {}", item.reason);
    }
}
