//! Whether the tables writers need are there: the current period's table and every pre-built one
//! (create_new's targets, [`target_names`]) exist, are this policy's, and serve reads and writes.
//!
//! One derivation for every reader: a create_new run reports it once its changes are made
//! (waiting a bounded time for the tables it just created, `settle`), the Lambda functions
//! turn it into the `NextTableReady` metric, and `status` prints it as its health line from
//! what it observed (no waiting).
//!
//! When phase 0 asks for warm throughput, a table is ready only once DynamoDB reports the warm
//! throughput of the table and of the policy's indexes on it ACTIVE: a pre-warmed table still
//! UPDATING cannot take the traffic it is pre-warmed for yet. Where the endpoint does not report
//! warm throughput (dynalite, DynamoDB Local) nothing is waited for.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::ledger::Book;
use crate::plan::target_names;
use crate::plan::verdict::{ConsumerState, Judge, NoEvidence, StreamState, Verdict};
use crate::policy::Policy;
use crate::run::control::{ControlPlane, ErrorKind};
use crate::table::stream::{DestinationStatus, MappingState};
use crate::table::{ObservedTable, TableStatus, Writes};

/// The first wait between two DescribeTable polls of a table still CREATING.
pub(crate) const FIRST_POLL: Duration = Duration::from_millis(500);
/// The longest wait between two polls (the wait doubles each time up to this).
pub(crate) const MAX_POLL: Duration = Duration::from_secs(10);
/// How long a create_new run waits at most for the tables it created to become ACTIVE.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(120);

/// One of the tables writers need now or next.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TargetTable {
    /// The table's name.
    pub table: String,
    /// TableStatus as last seen; `None` when the table does not exist.
    pub status: Option<String>,
    /// A table that is not this policy's holds the name.
    #[serde(skip_serializing_if = "is_false")]
    pub foreign: bool,
    /// Why a table of the policy's cannot take the writers' items (its key is not the
    /// policy's); `None` when nothing is wrong with it besides its status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfit: Option<String>,
    /// Between runs (`status`): the furthest pre-built table, which the next create_new run
    /// builds shortly before the boundary; until then its absence is expected.
    #[serde(skip_serializing_if = "is_false")]
    pub built_by_next_run: bool,
    /// The status of its warm throughput when phase 0 asks for some: ACTIVE when the table's
    /// and every policy index's are, else the first that is not (UPDATING); `None` when the
    /// phase asks for none or the endpoint does not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm: Option<String>,
    /// When the policy names a Kinesis stream: the status of the table's destination to it
    /// (ENABLING, ACTIVE, UPDATING, ENABLE_FAILED, DISABLING), `NONE` without one, `UNKNOWN`
    /// when it could not be read; `None` when the policy names no stream or the endpoint has no
    /// destinations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// What DynamoDB says about the destination (ENABLE_FAILED's reason), or why it is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_detail: Option<String>,
    /// When the policy names a consumer function: the state of the table's mapping to it
    /// (Creating, Enabling, Enabled, Updating, Disabling, Disabled), `NONE` without one,
    /// `UNKNOWN` when the mappings could not be read; `None` when the policy names no consumer
    /// or the endpoint has no Lambda.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<String>,
    /// What Lambda says about the mapping (its state's reason, its last result), or why it is
    /// unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_detail: Option<String>,
    /// Why the last poll of a table the run waited for could not read it (DescribeTable's
    /// error): its status is the one seen before; `None` when the last poll read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_error: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Where one target table stands for its writers: the one classification behind a create_new
/// run's readiness and failure, the `NextTableReady` metric and `status`'s health line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// Ours, the policy's key, taking writes (ACTIVE or UPDATING), its warm throughput ACTIVE
    /// when phase 0 asks for some.
    Ready,
    /// Ours and on its way without anyone acting: CREATING, or taking writes while its warm
    /// throughput is still being raised. Not ready; a run that ends so does not fail.
    Settling,
    /// Missing between runs, as expected: the next create_new run builds it.
    Due,
    /// No table holds the name.
    Missing,
    /// Cannot take the writers' items and will not unless someone acts (the text says why):
    /// not ours, a status that takes no writes (DELETING, ARCHIVING, ARCHIVED,
    /// INACCESSIBLE_ENCRYPTION_CREDENTIALS, ...), or another key.
    Unusable(String),
}

impl TargetTable {
    /// The table's [`Condition`]: its owner first, then its status
    /// ([`TableStatus::writes`]), its key, its warm throughput.
    pub fn condition(&self) -> Condition {
        if self.foreign {
            return Condition::Unusable("taken by a table that is not this policy's".into());
        }
        let Some(status) = &self.status else {
            return if self.built_by_next_run {
                Condition::Due
            } else {
                Condition::Missing
            };
        };
        match TableStatus::from_wire(status).writes() {
            Writes::Refused(why) => Condition::Unusable(format!("{status}: {why}")),
            _ if self.unfit.is_some() => Condition::Unusable(format!(
                "{status}, but {}",
                self.unfit.as_deref().unwrap_or_default()
            )),
            Writes::Soon => Condition::Settling,
            Writes::Taken if self.warm.as_deref().is_some_and(|warm| warm != "ACTIVE") => Condition::Settling,
            Writes::Taken => {
                let detail =
                    |detail: &Option<String>| detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
                let kinesis = match self.stream.as_deref() {
                    None | Some("ACTIVE" | "UPDATING") => Condition::Ready,
                    Some("ENABLING") => Condition::Settling,
                    Some(other) => {
                        return Condition::Unusable(format!(
                            "{status}, but its changes do not reach the family's Kinesis stream (destination {other}{})",
                            detail(&self.stream_detail)
                        ))
                    }
                };
                match self.consumer.as_deref() {
                    None | Some("Enabled" | "Updating") => kinesis,
                    Some("Creating" | "Enabling") => Condition::Settling,
                    Some(other) => Condition::Unusable(format!(
                        "{status}, but its stream does not feed the family's consumer function (mapping {other}{})",
                        detail(&self.consumer_detail)
                    )),
                }
            }
        }
    }

    /// Exists, is ours, takes writes, and its warm throughput, when phase 0 asks for it, is
    /// ACTIVE.
    pub fn is_ready(&self) -> bool {
        self.condition() == Condition::Ready
    }

    /// Ready, or not due yet (missing, and built by the next create_new run).
    fn is_fine(&self) -> bool {
        matches!(self.condition(), Condition::Ready | Condition::Due)
    }

    /// Missing, or unable to take writes unless someone acts: the period will have no table
    /// of ours to write to. A create_new run that ends so fails.
    pub(crate) fn is_lost(&self) -> bool {
        matches!(self.condition(), Condition::Missing | Condition::Unusable(_))
    }

    /// Exists and is ours but not usable yet, and may become so without another run.
    fn is_settling(&self) -> bool {
        self.condition() == Condition::Settling
    }

    /// Whether the table would take its writers' items but its changes do not reach the
    /// family's Kinesis stream or its consumer function.
    pub(crate) fn stream_is_the_trouble(&self) -> bool {
        matches!(self.condition(), Condition::Unusable(_))
            && self
                .status
                .as_deref()
                .is_some_and(|s| TableStatus::from_wire(s).writes() == Writes::Taken)
            && self.unfit.is_none()
            && (self.stream.is_some() || self.consumer.is_some())
    }

    /// Whether the Kinesis destination (not the mapping) is what keeps the table from ready.
    pub(crate) fn kinesis_is_the_trouble(&self) -> bool {
        self.stream_is_the_trouble()
            && self
                .stream
                .as_deref()
                .is_some_and(|s| !matches!(s, "ACTIVE" | "UPDATING" | "ENABLING"))
    }

    /// What is wrong with a lost table, and what to do, for a failed run's error.
    pub(crate) fn trouble(&self) -> String {
        if self.stream_is_the_trouble() {
            let Condition::Unusable(why) = self.condition() else {
                unreachable!("checked above")
            };
            return format!(
                "{} is {why} when the run ends: a consumer of the stream would miss its period's changes; fix the cause (the stream missing, Kinesis refusing, someone else's destination; the consumer function missing or its mapping disabled), then run create_new again",
                self.table
            );
        }
        match self.condition() {
            Condition::Unusable(why) if self.status.as_deref() == Some("DELETING") => format!(
                "{} is {why} when the run ends: writers of its period have no table; run create_new again once it is gone, or find who deletes it",
                self.table
            ),
            Condition::Unusable(why) => format!(
                "{} cannot take writes when the run ends ({why}): writers of its period have no table of this policy's; fix or remove that table, then run create_new again",
                self.table
            ),
            _ => format!(
                "{} is missing when the run ends: writers of its period have no table; run create_new again, or find who deletes it",
                self.table
            ),
        }
    }

    /// "timeseries_2018-10-26 ACTIVE", "timeseries_2018-10-26 missing", ...
    fn describe(&self) -> String {
        match self.condition() {
            Condition::Unusable(why) => format!("{} {why}", self.table),
            Condition::Due => format!("{} due from the next create_new run", self.table),
            Condition::Missing => format!("{} missing", self.table),
            Condition::Ready | Condition::Settling => {
                let status = self.status.as_deref().unwrap_or_default();
                let mut text = format!("{} {status}", self.table);
                if let Some(warm) = self.warm.as_deref().filter(|warm| *warm != "ACTIVE") {
                    text.push_str(&format!(", warm throughput {warm}"));
                }
                if let Some(stream) = self
                    .stream
                    .as_deref()
                    .filter(|s| !matches!(*s, "ACTIVE" | "UPDATING"))
                {
                    text.push_str(&format!(", Kinesis destination {stream}"));
                }
                if let Some(consumer) = self
                    .consumer
                    .as_deref()
                    .filter(|c| !matches!(*c, "Enabled" | "Updating"))
                {
                    text.push_str(&format!(", consumer mapping {consumer}"));
                }
                if let Some(error) = &self.poll_error {
                    text.push_str(&format!(" (as last seen: polling it failed: {error})"));
                }
                text
            }
        }
    }
}

/// Whether the current period's table and every pre-built one are ready.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Readiness {
    /// Whether every table is ready: none missing, none not ready.
    pub ready: bool,
    /// The current period's table first, then the pre-built ones in period order.
    pub tables: Vec<TargetTable>,
    /// The names with no table.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The names whose table is not ready (not ACTIVE, its warm throughput not ACTIVE, or not
    /// this policy's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_active: Vec<String>,
}

impl Readiness {
    /// The readiness of `tables`, listing the missing and the not ready.
    pub fn from_tables(tables: Vec<TargetTable>) -> Readiness {
        let missing = tables
            .iter()
            .filter(|t| t.condition() == Condition::Missing)
            .map(|t| t.table.clone())
            .collect();
        let not_active = tables
            .iter()
            .filter(|t| matches!(t.condition(), Condition::Settling | Condition::Unusable(_)))
            .map(|t| t.table.clone())
            .collect();
        Readiness {
            ready: tables.iter().all(TargetTable::is_fine),
            tables,
            missing,
            not_active,
        }
    }

    /// The health line `status` prints, without its `health: ` label:
    /// `next table ready (timeseries_2018-10-25 ACTIVE, timeseries_2018-10-26 ACTIVE)` or
    /// `NOT READY: timeseries_2018-10-26 missing`.
    pub fn line(&self) -> String {
        if self.ready {
            let tables: Vec<String> = self.tables.iter().map(TargetTable::describe).collect();
            format!("next table ready ({})", tables.join(", "))
        } else {
            let tables: Vec<String> = self
                .tables
                .iter()
                .filter(|t| !t.is_fine())
                .map(TargetTable::describe)
                .collect();
            format!("NOT READY: {}", tables.join(", "))
        }
    }

    /// The tables a create_new run must not end with: missing, or unable to take writes
    /// ([`Condition::Unusable`]).
    pub fn lost(&self) -> impl Iterator<Item = &TargetTable> {
        self.tables.iter().filter(|t| t.is_lost())
    }

    /// The table's entry, to update after a change or a poll.
    pub fn table_mut(&mut self, name: &str) -> Option<&mut TargetTable> {
        self.tables.iter_mut().find(|t| t.table == name)
    }

    /// The same tables with their lists and verdict derived again (after changing a status).
    pub(crate) fn recomputed(self) -> Readiness {
        Readiness::from_tables(self.tables)
    }
}

/// The readiness `observed` shows at `now` between runs (`status`): as [`assess`], except that
/// the furthest pre-built table may be missing, since the next create_new run builds it before
/// its period is within reach (with `premake = 0`, the current table must exist).
pub(crate) fn assess_between_runs(
    policy: &Policy,
    now: DateTime<Utc>,
    observed: &[ObservedTable],
    book: &Book,
) -> Readiness {
    let mut readiness = assess(policy, now, observed, book);
    if policy.premake > 0 {
        if let Some(last) = readiness.tables.last_mut() {
            last.built_by_next_run = true;
        }
    }
    readiness.recomputed()
}

/// The readiness `observed` shows at `now`: no calls, no waiting.
pub(crate) fn assess(
    policy: &Policy,
    now: DateTime<Utc>,
    observed: &[ObservedTable],
    book: &Book,
) -> Readiness {
    let judge = Judge::new(policy, book);
    let tables = target_names(policy, now)
        .into_iter()
        .map(|name| {
            target(
                policy,
                &judge,
                name.clone(),
                observed.iter().find(|t| t.name == name),
            )
        })
        .collect();
    Readiness::from_tables(tables)
}

/// One target as `table` (the table named `name`, if it exists) shows it.
fn target(policy: &Policy, judge: &Judge, name: String, table: Option<&ObservedTable>) -> TargetTable {
    let verdict = table.and_then(|t| judge.verdict(t));
    // Ours by its family tag, yet keyed otherwise: the writers' items do not fit it.
    let unfit = verdict.as_ref().filter(|v| v.is_ours()).and_then(|v| {
        v.not_deletable.iter().find_map(|missing| match missing {
            NoEvidence::KeyDiffers { have: Some(have) } => Some(format!(
                "its key is {have}, not the policy's {}: the writers' items do not fit it",
                policy.key
            )),
            _ => None,
        })
    });
    let (stream, stream_detail) = verdict
        .as_ref()
        .filter(|v| v.is_ours())
        .and_then(|v| stream_status(v.stream.as_ref()?))
        .unzip();
    let stream_off = table.is_some_and(|t| t.stream.is_none());
    let (consumer, consumer_detail) = verdict
        .as_ref()
        .filter(|v| v.is_ours())
        .and_then(|v| consumer_status(v.consumer.as_ref()?, stream_off))
        .unzip();
    TargetTable {
        status: table.map(|t| t.status.as_str().to_string()),
        foreign: table.is_some() && !verdict.as_ref().is_some_and(Verdict::is_ours),
        unfit,
        warm: table
            .filter(|_| policy.hot_phase().warm.is_some())
            .and_then(|t| warm_status(t, verdict.as_ref()?)),
        stream,
        stream_detail: stream_detail.flatten(),
        consumer,
        consumer_detail: consumer_detail.flatten(),
        table: name,
        built_by_next_run: false,
        poll_error: None,
    }
}

/// The STREAM status of a table of ours and what DynamoDB says about it; `None` when the
/// endpoint has no destinations.
fn stream_status(state: &StreamState) -> Option<(String, Option<String>)> {
    Some(match state {
        StreamState::Unsupported => return None,
        StreamState::NotRead => (
            "UNKNOWN".into(),
            Some("its Kinesis destinations could not be read".into()),
        ),
        StreamState::Absent => (
            "NONE".into(),
            Some("no destination to the policy's stream".into()),
        ),
        StreamState::Ours { status, description } => (status.as_str().to_string(), description.clone()),
    })
}

/// The CONSUMER state of a table of ours and what Lambda says about it; `None` when the
/// endpoint has no Lambda. A table whose stream is off feeds no mapping, whatever is left on it.
fn consumer_status(state: &ConsumerState, stream_off: bool) -> Option<(String, Option<String>)> {
    Some(match state {
        ConsumerState::Unsupported => return None,
        _ if stream_off => ("NONE".into(), Some("its DynamoDB stream is off".into())),
        ConsumerState::NotRead => (
            "UNKNOWN".into(),
            Some("the event source mappings on its stream could not be read".into()),
        ),
        ConsumerState::Absent => (
            "NONE".into(),
            Some("no mapping of the policy's consumer function on its stream".into()),
        ),
        ConsumerState::Ours { state, reason, .. } => (state.as_str().to_string(), reason.clone()),
        ConsumerState::Repointed {
            uuid,
            function_arn,
            state,
        } => (
            "REPOINTED".into(),
            Some(repointed_detail(uuid, function_arn, state)),
        ),
    })
}

/// What readiness and `status` say of our mapping someone re-pointed: the run leaves it, so
/// someone must act.
pub(crate) fn repointed_detail(uuid: &str, function_arn: &str, state: &MappingState) -> String {
    format!(
        "our mapping {uuid} now invokes {function_arn} ({}), not the policy's consumer: someone re-pointed it, and runs never point it back; point it back, or delete it and create_new maps the consumer again",
        state.as_str()
    )
}

/// The status of the warm throughput of `table` and of the policy's indexes on it: the first
/// that is not ACTIVE, else ACTIVE; `None` when none is reported.
fn warm_status(table: &ObservedTable, verdict: &Verdict) -> Option<String> {
    let parts = verdict.warm_parts(table);
    let (_, first) = parts
        .iter()
        .find(|(_, warm)| !warm.is_active())
        .or(parts.first())?;
    Some(first.status.as_str().to_string())
}

/// Polls the tables still CREATING, or serving with their warm throughput still UPDATING
/// (DescribeTable: at once, then after `FIRST_POLL`, the wait doubling up to `MAX_POLL`: a
/// table DynamoDB creates is ACTIVE within seconds, so a few polls each) until none is, or until
/// `until`. No call when none is. A table still settling at `until` stays not ready; a failed
/// poll leaves the table as it was.
pub(crate) async fn settle<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    book: &Book,
    readiness: Readiness,
    until: Instant,
) -> Readiness {
    let judge = Judge::new(policy, book);
    let mut readiness = readiness;
    let mut wait = Duration::ZERO;
    loop {
        let settling: Vec<String> = readiness
            .tables
            .iter()
            .filter(|t| t.is_settling())
            .map(|t| t.table.clone())
            .collect();
        let now = control.now();
        if settling.is_empty() || now >= until {
            break;
        }
        if !wait.is_zero() {
            control.sleep(wait.min(until - now)).await;
        }
        wait = if wait.is_zero() {
            FIRST_POLL
        } else {
            (wait * 2).min(MAX_POLL)
        };
        for name in settling {
            match poll(control, policy, &name).await {
                Ok(found) => {
                    if let Some(entry) = readiness.table_mut(&name) {
                        let seen = target(policy, &judge, name.clone(), found.as_ref());
                        // Judged again on what the poll found: a table this run made is ours
                        // by the identity it recorded, whatever held the name before.
                        entry.foreign = seen.foreign;
                        entry.unfit = seen.unfit;
                        entry.status = seen.status;
                        entry.warm = seen.warm;
                        entry.stream = seen.stream;
                        entry.stream_detail = seen.stream_detail;
                        entry.consumer = seen.consumer;
                        entry.consumer_detail = seen.consumer_detail;
                        entry.poll_error = None;
                    }
                }
                // Said in the readiness the report carries (its health line), not only logged.
                Err(error) => {
                    if let Some(entry) = readiness.table_mut(&name) {
                        entry.poll_error = Some(error.to_string());
                    }
                }
            }
        }
        readiness = readiness.recomputed();
    }
    if !readiness.ready {
        tracing::warn!(health = %readiness.line(), "the next period's tables are not ready");
    }
    readiness
}

/// One poll of a settling table: DescribeTable, its Kinesis destinations when the policy names
/// a stream, and the mappings on its stream when it names a consumer function (an endpoint
/// without them leaves the table as not feeding anything).
async fn poll<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    name: &str,
) -> Result<Option<ObservedTable>, crate::run::control::ControlPlaneError> {
    let Some(mut table) = control.describe_table(name).await? else {
        return Ok(None);
    };
    if policy.stream.kinesis.is_some() && table.status != TableStatus::Deleting {
        match control.describe_kinesis_destinations(name).await {
            Ok(destinations) => table.destinations = Some(destinations),
            Err(error) if error.kind == ErrorKind::Unsupported => table.destinations_unsupported = true,
            Err(error) => return Err(error),
        }
    }
    if policy.stream.lambda.is_some() && table.status != TableStatus::Deleting {
        match table.stream_arn.clone() {
            None => table.mappings = Some(Vec::new()),
            Some(stream_arn) => match control.list_event_source_mappings(name, &stream_arn).await {
                Ok(mappings) => table.mappings = Some(mappings),
                Err(error) if error.kind == ErrorKind::Unsupported => table.mappings_unsupported = true,
                Err(error) => return Err(error),
            },
        }
    }
    Ok(Some(table))
}

/// Marks the destination of `name` as just enabled by this run: ENABLING until a poll says
/// otherwise.
pub(crate) fn enabling(readiness: &mut Readiness, name: &str) {
    if let Some(entry) = readiness.table_mut(name) {
        entry.stream = Some(DestinationStatus::Enabling.as_str().to_string());
        entry.stream_detail = None;
    }
}

/// Marks the consumer mapping of `name` as just created by this run: Creating until a poll
/// says otherwise.
pub(crate) fn mapping_created(readiness: &mut Readiness, name: &str) {
    if let Some(entry) = readiness.table_mut(name) {
        entry.consumer = Some(MappingState::Creating.as_str().to_string());
        entry.consumer_detail = None;
    }
}

/// Marks `name` as just created (or created again after its deletion) by this run: CREATING
/// until a poll says otherwise.
pub(crate) fn created(readiness: &mut Readiness, name: &str) {
    if let Some(entry) = readiness.table_mut(name) {
        if entry.status.is_none() || entry.status.as_deref() == Some(TableStatus::Deleting.as_str()) {
            entry.status = Some(TableStatus::Creating.as_str().to_string());
            // This run's table, not the one it replaced: the polls judge it by the identity
            // the run recorded.
            entry.foreign = false;
            entry.unfit = None;
        }
    }
}

/// Marks the warm throughput of `name` as just raised by this run: UPDATING until a poll says
/// otherwise (a table whose warm throughput is not reported has no entry to mark).
pub(crate) fn warming(readiness: &mut Readiness, name: &str) {
    if let Some(entry) = readiness.table_mut(name) {
        if entry.warm.is_some() {
            entry.warm = Some(TableStatus::Updating.as_str().to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str, status: Option<&str>, foreign: bool) -> TargetTable {
        TargetTable {
            table: name.into(),
            status: status.map(String::from),
            foreign,
            unfit: None,
            built_by_next_run: false,
            warm: None,
            stream: None,
            stream_detail: None,
            consumer: None,
            consumer_detail: None,
            poll_error: None,
        }
    }

    #[test]
    fn ready_only_when_every_target_is_ours_and_serving() {
        let ready = Readiness::from_tables(vec![
            target("t_1", Some("ACTIVE"), false),
            target("t_2", Some("UPDATING"), false),
        ]);
        assert!(ready.ready);
        assert_eq!(ready.line(), "next table ready (t_1 ACTIVE, t_2 UPDATING)");
        let not = Readiness::from_tables(vec![
            target("t_1", Some("ACTIVE"), false),
            target("t_2", None, false),
            target("t_3", Some("CREATING"), false),
            target("t_4", Some("ACTIVE"), true),
        ]);
        assert!(!not.ready);
        assert_eq!(not.missing, ["t_2"]);
        assert_eq!(not.not_active, ["t_3", "t_4"]);
        assert_eq!(
            not.line(),
            "NOT READY: t_2 missing, t_3 CREATING, t_4 taken by a table that is not this policy's"
        );
        // Between runs the furthest pre-built table may be missing; never a foreign one.
        let mut tables = vec![target("t_1", Some("ACTIVE"), false), target("t_2", None, false)];
        tables[1].built_by_next_run = true;
        let between = Readiness::from_tables(tables.clone());
        assert!(between.ready);
        assert!(between.missing.is_empty());
        assert_eq!(
            between.line(),
            "next table ready (t_1 ACTIVE, t_2 due from the next create_new run)"
        );
        tables[1].foreign = true;
        tables[1].status = Some("ACTIVE".into());
        assert!(!Readiness::from_tables(tables).ready);
        let json = serde_json::to_value(&not).unwrap();
        assert_eq!(
            json["tables"][1],
            serde_json::json!({"table": "t_2", "status": null})
        );
        assert_eq!(json["tables"][3]["foreign"], true);
    }
}
