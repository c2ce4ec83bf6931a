//! Observation: list the policy's tables and read what decisions depend on. DescribeTable for
//! every table; tags, TTL, point-in-time recovery and archive exports only when the policy
//! uses them, and only for the tables the run looks after.

use chrono::{DateTime, Utc};
use futures::stream::{self, StreamExt};

use crate::control::{ControlPlane, ControlPlaneError, ErrorKind};
use crate::observed::{ObservedTable, TableStatus};
use crate::policy::Policy;
use crate::template::{export_arn_from_tag, TAG_ARCHIVED, TAG_EXPORT};

/// The tables a run could see, and the ones it could not read.
#[derive(Debug, Default)]
pub struct Observation {
    pub tables: Vec<ObservedTable>,
    pub unreadable: Vec<ControlPlaneError>,
}

/// Which tables get more than DescribeTable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// create_new: the current and pre-built tables at this instant.
    Upcoming(DateTime<Utc>),
    /// resize_old and status: every table.
    All,
}

/// Lists every table named `{prefix}_...` and describes each. Tables that vanish between the
/// calls (ResourceNotFoundException on any read) are dropped, as if never listed; tables that cannot be read are returned as `unreadable`, so no decision
/// is made on half the facts.
pub async fn observe<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    scope: Scope,
    concurrency: usize,
) -> Result<Observation, ControlPlaneError> {
    let names = control.list_table_names(&policy.naming().name_prefix()).await?;
    let upcoming: Option<Vec<String>> = match scope {
        Scope::All => None,
        Scope::Upcoming(now) => {
            let calendar = policy.calendar();
            let mut slot = calendar.floor(now);
            let mut names = vec![policy.naming().table_name(slot)];
            for _ in 0..policy.premake {
                slot = calendar.next(slot);
                names.push(policy.naming().table_name(slot));
            }
            Some(names)
        }
    };
    let read: Vec<_> = stream::iter(names)
        .map(|name| {
            let full = upcoming.as_ref().is_none_or(|names| names.contains(&name));
            async move {
                match read_table(control, policy, &name, full).await {
                    // Deleted between the listing and one of its reads: gone, not unreadable.
                    Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
                    other => other,
                }
            }
        })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let mut observation = Observation::default();
    for result in read {
        match result {
            Ok(Some(table)) => observation.tables.push(table),
            Ok(None) => {}
            Err(error) => observation.unreadable.push(error),
        }
    }
    Ok(observation)
}

/// DescribeTable, then (when `full`) the extra reads the policy needs.
async fn read_table<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    name: &str,
    full: bool,
) -> Result<Option<ObservedTable>, ControlPlaneError> {
    let Some(mut table) = control.describe_table(name).await? else {
        return Ok(None);
    };
    if !full || table.status == TableStatus::Deleting {
        return Ok(Some(table));
    }
    if let Some(arn) = table.arn.clone() {
        let tags = control.list_tags(&arn).await?;
        let export = tags
            .get(TAG_EXPORT)
            .filter(|_| !tags.contains_key(TAG_ARCHIVED) && policy.archive().is_some())
            .map(|value| export_arn_from_tag(&arn, value));
        if let Some(export_arn) = export {
            // An unreadable export leaves the table's archive state unknown, which only
            // delays its deletion; it must not stop the table's other actions.
            match control.describe_export(name, &export_arn).await {
                Ok(state) => table.export = Some(state),
                Err(error) => tracing::warn!(table = name, %error, "export state unknown"),
            }
        }
        table.tags = Some(tags);
    }
    if policy.template.ttl_attribute.is_some() {
        table.ttl = Some(control.describe_ttl(name).await?);
    }
    if policy.wants_point_in_time_recovery() {
        table.point_in_time_recovery = Some(control.describe_point_in_time_recovery(name).await?);
    }
    Ok(Some(table))
}
