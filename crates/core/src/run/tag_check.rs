//! The tags of a table a run is about to change but judged ours by its name alone, read just
//! before its first change. resize_old reads no tags for a phase change (AWS allows about ten
//! ListTagsOfResource a second per account, and a steady run stays at the floor of calls), so
//! without this a name of our shape that another family's tag claims would be changed wherever
//! no IAM role stands in the way: an operator's CLI runs with the operator's credentials.
//!
//! One paced call per such table, made as the run reaches it, so a catch-up over thousands of
//! tables makes progress within its time budget instead of spending it on reads first.

use std::collections::BTreeMap;

use crate::plan::verdict::{disowned_by_tags, NotOurs};
use crate::plan::{Plan, PlanItem};
use crate::run::control::{ControlPlaneError, ErrorKind, Tables};
use crate::table::ObservedTable;

/// Why the table of `item` is not the family `prefix`'s after all, from its tags read now;
/// `None` when they leave it ours, or when the endpoint has no tagging API (no tag can claim a
/// table there). The caller asks only for [`PlanItem::needs_tags_before_change`] items.
pub(crate) async fn disowned_now<C: Tables>(
    control: &C,
    prefix: &str,
    item: &PlanItem,
) -> Result<Option<NotOurs>, ControlPlaneError> {
    // AWS and every local server give the ARN with DescribeTable; only a test double that
    // leaves it out has none, and no tag can be read or written without it.
    let Some(arn) = &item.arn else {
        return Ok(None);
    };
    match control.list_tags(arn).await {
        Ok(tags) => Ok(disowned_by_tags(prefix, &tags)),
        Err(e) if e.kind == ErrorKind::Unsupported => Ok(None),
        Err(e) => Err(e),
    }
}

/// What a run's report says of a table its tags disowned just before its change (`action`).
pub(crate) fn warning(table: &str, action: &str, why: &NotOurs) -> String {
    format!("{table} was not changed: {why} (its tags, read just before the {action})")
}

/// `plan` as its run will carry it out once the tag reads before its changes are in, from an
/// observation that holds every table's tags (`status`, `plan`): every item of a table those
/// reads disown is foreign, and the run's warning about it is in the plan's.
pub(crate) fn foresee(mut plan: Plan, observed: &[ObservedTable]) -> Plan {
    let mut disowned: BTreeMap<String, NotOurs> = BTreeMap::new();
    for item in plan.items.iter().filter(|item| item.needs_tags_before_change()) {
        if disowned.contains_key(&item.table) {
            continue;
        }
        let tags = observed
            .iter()
            .find(|t| t.name == item.table)
            .and_then(|table| table.tags.as_ref());
        if let Some(why) = tags.and_then(|tags| disowned_by_tags(&plan.prefix, tags)) {
            plan.warnings
                .push(warning(&item.table, item.decision.action(), &why));
            disowned.insert(item.table.clone(), why);
        }
    }
    plan.items = plan
        .items
        .into_iter()
        .map(|item| match disowned.get(&item.table) {
            Some(why) => item.disowned(why.clone()),
            None => item,
        })
        .collect();
    plan
}
