//! Observation: list the policy's tables and read what decisions depend on. DescribeTable for
//! every table; tags, TTL, point-in-time recovery and archive exports only when the policy
//! uses them, and only for the tables the run looks after.
//!
//! Those extra reads are optional APIs: an endpoint that does not implement one (DynamoDB
//! Local: ListTagsOfResource, DescribeContinuousBackups, DescribeExport; see
//! [`ErrorKind::Unsupported`]) gets no more calls of it for the rest of the run, every table's
//! field stays `None` (not read: the planner plans nothing that needs it), and the run says so
//! once in [`Observation::skipped`].

use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, Utc};
use futures::stream::{self, StreamExt};

use crate::control::{ControlPlane, ControlPlaneError, ErrorKind};
use crate::observed::{ObservedTable, TableStatus};
use crate::policy::Policy;
use crate::template::{export_arn_from_tag, TAG_ARCHIVED, TAG_EXPORT};

/// The tables a run could see, the ones it could not read, and what it could not ask.
#[derive(Debug, Default)]
pub struct Observation {
    pub tables: Vec<ObservedTable>,
    pub unreadable: Vec<ControlPlaneError>,
    /// One sentence per optional API the endpoint does not implement, naming it and what was
    /// left out for every table; empty against AWS.
    pub skipped: Vec<String>,
}

/// The optional reads, each with what the run leaves out without it.
#[derive(Clone, Copy, Debug)]
enum OptionalRead {
    Tags,
    Ttl,
    PointInTimeRecovery,
    Export,
}

impl OptionalRead {
    const ALL: [OptionalRead; 4] = [
        OptionalRead::Tags,
        OptionalRead::Ttl,
        OptionalRead::PointInTimeRecovery,
        OptionalRead::Export,
    ];

    fn sentence(self) -> &'static str {
        match self {
            OptionalRead::Tags => {
                "ListTagsOfResource is not supported by this endpoint: tags were not read or written \
                 (family and period tags, template tags); tables count as ours by name and key schema"
            }
            OptionalRead::Ttl => {
                "DescribeTimeToLive is not supported by this endpoint: TTL was not read or turned on \
                 (template.ttl_attribute)"
            }
            OptionalRead::PointInTimeRecovery => {
                "DescribeContinuousBackups is not supported by this endpoint: point-in-time recovery \
                 was not read or turned on (template.point_in_time_recovery), so no table is archived"
            }
            OptionalRead::Export => {
                "DescribeExport is not supported by this endpoint: archive exports were not checked, \
                 so no table waiting for its export is deleted"
            }
        }
    }
}

/// Which optional reads the endpoint turned out not to implement during this run.
#[derive(Debug, Default)]
struct Unsupported([AtomicBool; 4]);

impl Unsupported {
    fn has(&self, read: OptionalRead) -> bool {
        self.0[read as usize].load(Ordering::Relaxed)
    }

    /// `Ok(None)` for an Unsupported error, remembered; other results as they are.
    fn check<T>(
        &self,
        read: OptionalRead,
        result: Result<T, ControlPlaneError>,
    ) -> Result<Option<T>, ControlPlaneError> {
        match result {
            Ok(value) => Ok(Some(value)),
            Err(error) if error.kind == ErrorKind::Unsupported => {
                if !self.0[read as usize].swap(true, Ordering::Relaxed) {
                    tracing::info!(%error, "{}", read.sentence());
                }
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    fn sentences(&self) -> Vec<String> {
        OptionalRead::ALL
            .into_iter()
            .filter(|read| self.has(*read))
            .map(|read| read.sentence().to_string())
            .collect()
    }
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
    let unsupported = Unsupported::default();
    let read: Vec<_> = stream::iter(names)
        .map(|name| {
            let full = upcoming.as_ref().is_none_or(|names| names.contains(&name));
            let unsupported = &unsupported;
            async move {
                match read_table(control, policy, &name, full, unsupported).await {
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
    observation.skipped = unsupported.sentences();
    Ok(observation)
}

/// DescribeTable, then (when `full`) the extra reads the policy needs, except those the
/// endpoint turned out not to implement.
async fn read_table<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    name: &str,
    full: bool,
    unsupported: &Unsupported,
) -> Result<Option<ObservedTable>, ControlPlaneError> {
    let Some(mut table) = control.describe_table(name).await? else {
        return Ok(None);
    };
    if !full || table.status == TableStatus::Deleting {
        return Ok(Some(table));
    }
    let arn = table.arn.clone().filter(|_| !unsupported.has(OptionalRead::Tags));
    if let Some(arn) = arn {
        if let Some(tags) = unsupported.check(OptionalRead::Tags, control.list_tags(&arn).await)? {
            let export = tags
                .get(TAG_EXPORT)
                .filter(|_| !tags.contains_key(TAG_ARCHIVED) && policy.archive().is_some())
                .filter(|_| !unsupported.has(OptionalRead::Export))
                .map(|value| export_arn_from_tag(&arn, value));
            if let Some(export_arn) = export {
                // An unreadable export leaves the table's archive state unknown, which only
                // delays its deletion; it must not stop the table's other actions.
                let state = control.describe_export(name, &export_arn).await;
                match unsupported.check(OptionalRead::Export, state) {
                    Ok(state) => table.export = state,
                    Err(error) => tracing::warn!(table = name, %error, "export state unknown"),
                }
            }
            table.tags = Some(tags);
        }
    }
    if policy.template.ttl_attribute.is_some() && !unsupported.has(OptionalRead::Ttl) {
        table.ttl = unsupported.check(OptionalRead::Ttl, control.describe_ttl(name).await)?;
    }
    if policy.wants_point_in_time_recovery() && !unsupported.has(OptionalRead::PointInTimeRecovery) {
        let on = control.describe_point_in_time_recovery(name).await;
        table.point_in_time_recovery = unsupported.check(OptionalRead::PointInTimeRecovery, on)?;
    }
    Ok(Some(table))
}
