//! Observation: list the policy's tables and read what decisions depend on, and no more: a
//! run over thousands of tables must stay at the floor of calls (see [`Scope::Run`]), because
//! AWS limits the tag APIs to a few calls a second per account.
//!
//! Those extra reads are optional APIs: an endpoint that does not implement one (DynamoDB
//! Local: ListTagsOfResource, DescribeContinuousBackups, DescribeExport; see
//! [`ErrorKind::Unsupported`]) gets no more calls of it for the rest of the run, every table's
//! field stays `None` (not read: the planner plans nothing that needs it), and the run says so
//! once in [`Observation::skipped`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use futures::stream::{self, StreamExt};

use crate::run::control::{ControlPlane, ControlPlaneError, ErrorKind};
use crate::table::archive::ArchiveProof;
use crate::table::{ArchiveState, ExportState, ExportStatus, ObservedTable, TableStatus};
use chrono::{DateTime, Utc};

use crate::ledger::Book;
use crate::plan::{names_to_describe, reads_for, target_names, Operation, Reads, Scope, Seen};
use crate::policy::scaling::{table_of, ObservedScalableTarget};
use crate::policy::tags::{
    export_arn_from_tag, TAG_ARCHIVED, TAG_EXPORT, TAG_FAMILY, TAG_FINAL_EXPORT, TAG_SEALED,
};
use crate::policy::Policy;

/// The tables a run could see, the ones it could not read, and what it could not ask.
#[derive(Debug, Default)]
pub struct Observation {
    /// The tables DescribeTable answered for, with what else was read of them.
    pub tables: Vec<ObservedTable>,
    /// The tables that could not be read, each with its error.
    pub unreadable: Vec<ControlPlaneError>,
    /// Evidence reads that failed (Kinesis destinations, event source mappings, an export):
    /// the tables they were about are kept (no deletion on evidence not read, no stream ready),
    /// and the run fails once for each such read, naming every table ([`RunReport::with_unread`](crate::RunReport)).
    pub unread: Vec<FailedRead>,
    /// One sentence per optional API the endpoint does not implement, naming it and what was
    /// left out for every table; empty against AWS.
    pub skipped: Vec<String>,
    /// Names listed under the prefix but not described (the scope did not need them).
    pub listed_only: Vec<String>,
    /// Every name ListTables gave under the prefix (the ledger aside), described or not.
    pub listed: Vec<String>,
    /// The scalable targets registered on create_new's table names where no table exists
    /// (read when phase 0 autoscales): deleting a table deregisters nothing, so a table made
    /// again under the name must not be registered over a target that is not ours alone.
    pub vacant_targets: Vec<ObservedScalableTarget>,
    /// The family's ledger, read once (one Query): whose each table is, by the identity AWS
    /// gave it, and what the family did.
    pub book: Book,
}

impl Observation {
    /// Whether the ledger records a table ListTables did not list and no receipt says we
    /// deleted: the ledger is read just after the listing, and another run made a table in
    /// between (or someone else deleted one). A run that decides on such a view would create
    /// the table again over the other run's record: it looks again first.
    pub(crate) fn ledger_ahead_of_listing(&self) -> bool {
        self.book.tables.iter().any(|(name, entry)| {
            !self.listed.contains(name)
                && !self
                    .book
                    .receipts_of(name)
                    .iter()
                    .any(|receipt| Some(&receipt.record.identity) == entry.record.identity())
        })
    }

    /// An observation of just `tables`, with a ledger that records every one of them that
    /// carries `policy`'s family tag, its key and a period ([`Book::enrolling`]).
    pub fn enrolled(policy: &Policy, tables: Vec<ObservedTable>) -> Observation {
        Observation {
            book: Book::enrolling(policy, &tables),
            tables,
            ..Observation::default()
        }
    }

    /// What the planner reads of it.
    pub fn seen(&self) -> Seen<'_> {
        Seen {
            tables: &self.tables,
            listed_only: &self.listed_only,
            vacant_targets: &self.vacant_targets,
            book: &self.book,
        }
    }
}

/// An evidence read that failed: which read, and the error.
#[derive(Clone, Debug)]
pub struct FailedRead {
    read: OptionalRead,
    /// The error, naming the call and the table.
    pub error: ControlPlaneError,
}

impl FailedRead {
    /// Whether a run that makes the reads `want` of the table makes this one: a view of one run
    /// fails only on the reads that run makes.
    fn made_by(&self, want: &Reads) -> bool {
        match self.read {
            OptionalRead::Export => want.tags,
            OptionalRead::ArchiveProof => want.archive_proof,
            OptionalRead::KinesisDestinations => want.destinations,
            OptionalRead::EventSourceMappings => want.mappings,
            OptionalRead::Tags
            | OptionalRead::Ttl
            | OptionalRead::PointInTimeRecovery
            | OptionalRead::ResourcePolicy => true,
        }
    }
}

/// The optional reads, each with what the run leaves out without it.
#[derive(Clone, Copy, Debug)]
enum OptionalRead {
    Tags,
    Ttl,
    PointInTimeRecovery,
    Export,
    ArchiveProof,
    ResourcePolicy,
    KinesisDestinations,
    EventSourceMappings,
}

impl OptionalRead {
    const ALL: [OptionalRead; 8] = [
        OptionalRead::Tags,
        OptionalRead::Ttl,
        OptionalRead::PointInTimeRecovery,
        OptionalRead::Export,
        OptionalRead::ArchiveProof,
        OptionalRead::ResourcePolicy,
        OptionalRead::KinesisDestinations,
        OptionalRead::EventSourceMappings,
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
            OptionalRead::ArchiveProof => {
                "archives could not be checked in S3 (no S3 reader): no archived table is deleted"
            }
            OptionalRead::ResourcePolicy => {
                "GetResourcePolicy is not supported by this endpoint: no table is sealed against \
                 writes before its final export, so no archived table is deleted"
            }
            OptionalRead::KinesisDestinations => {
                "DescribeKinesisStreamingDestination is not supported by this endpoint: no table \
                 streams into the policy's Kinesis data stream here ([stream] kinesis)"
            }
            OptionalRead::EventSourceMappings => {
                "ListEventSourceMappings is not supported by this endpoint (no Lambda here): no \
                 table's stream is mapped to the policy's consumer function ([stream.lambda])"
            }
        }
    }
}

/// Which optional reads the endpoint turned out not to implement during this run: said once
/// (the first array), or only remembered, so no call is made again (the second: a read the
/// policy does not ask for itself, such as the mappings looked for before a deletion); and the
/// evidence reads that failed (the third), which fail the run.
#[derive(Debug, Default)]
struct Unsupported([AtomicBool; 8], [AtomicBool; 8], Mutex<Vec<FailedRead>>);

impl Unsupported {
    /// An evidence read that failed: its table is kept on what was not read, and the run
    /// fails, saying so once for every table it failed on.
    fn failed(&self, read: OptionalRead, error: ControlPlaneError) {
        self.2
            .lock()
            .expect("not poisoned")
            .push(FailedRead { read, error });
    }

    fn take_failed(&self) -> Vec<FailedRead> {
        std::mem::take(&mut *self.2.lock().expect("not poisoned"))
    }

    fn has(&self, read: OptionalRead) -> bool {
        self.said(read) || self.1[read as usize].load(Ordering::Relaxed)
    }

    fn said(&self, read: OptionalRead) -> bool {
        self.0[read as usize].load(Ordering::Relaxed)
    }

    /// Remembers that the endpoint lacks `read`, without saying so.
    fn remember_quietly(&self, read: OptionalRead) {
        self.1[read as usize].store(true, Ordering::Relaxed);
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
            .filter(|read| self.said(*read))
            .map(|read| read.sentence().to_string())
            .collect()
    }
}

/// Lists every table named `{prefix}_...`, describes the ones the scope needs, then reads
/// what their decisions need. Tables that vanish between the calls (ResourceNotFoundException
/// on any read) are dropped, as if never listed; tables that cannot be read are returned as
/// `unreadable`, so no decision is made on half the facts.
pub async fn observe<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    scope: Scope,
    concurrency: usize,
) -> Result<Observation, ControlPlaneError> {
    let naming = policy.naming();
    let ledger = naming.ledger_name();
    let mut names = control.list_table_names(&naming.name_prefix()).await?;
    // The ledger is the family's own record, never one of its period tables.
    names.retain(|name| *name != ledger);
    let book = Book::read(control.read_ledger(&ledger, &policy.prefix).await?);
    let names_seen = names.clone();
    let (described, listed_only) = names_to_describe(policy, scope, names);
    let mut observation = Observation {
        listed_only,
        listed: names_seen.clone(),
        book,
        ..Observation::default()
    };
    let results: Vec<_> = stream::iter(described)
        .map(|name| async move { control.describe_table(&name).await })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let mut tables = Vec::new();
    for result in results {
        match result {
            Ok(Some(table)) => tables.push(table),
            Ok(None) => {}
            Err(e) if e.kind == ErrorKind::NotFound => {}
            Err(error) => observation.unreadable.push(error),
        }
    }
    let reads = reads_for(policy, scope, &tables, &observation.book);
    let unsupported = Unsupported::default();
    let results: Vec<_> = stream::iter(tables)
        .map(|table| {
            let want = reads.get(&table.name).copied().unwrap_or_default();
            let unsupported = &unsupported;
            async move {
                let name = table.name.clone();
                match read_extras(control, policy, table, want, unsupported).await {
                    // Deleted between the listing and one of its reads: gone, not unreadable.
                    Err(e) if e.kind == ErrorKind::NotFound => {
                        tracing::info!(table = %name, "gone during the run's reads");
                        Ok(None)
                    }
                    other => other.map(Some),
                }
            }
        })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    for result in results {
        match result {
            Ok(Some(table)) => observation.tables.push(table),
            Ok(None) => {}
            Err(error) => observation.unreadable.push(error),
        }
    }
    observation.skipped = unsupported.sentences();
    observation.unread = unsupported.take_failed();
    let wants_scaling: Vec<String> = observation
        .tables
        .iter()
        .filter(|t| policy.uses_autoscaling() || reads.get(&t.name).is_some_and(|r| r.scaling))
        .map(|t| t.name.clone())
        .collect();
    let vacant = vacant_names(policy, scope, &names_seen);
    if !wants_scaling.is_empty() || !vacant.is_empty() {
        let strict = matches!(scope, Scope::Run(..));
        read_scaling(control, policy, strict, &wants_scaling, &vacant, &mut observation).await;
    }
    Ok(observation)
}

/// The names create_new would create a table under, in `scope`, that no table holds, when its
/// tables are registered at creation (phase 0 autoscales): their scalable targets are read too.
fn vacant_names(policy: &Policy, scope: Scope, listed: &[String]) -> Vec<String> {
    let now = match scope {
        Scope::Run(Operation::CreateNew, now) | Scope::Full(now) => now,
        Scope::Run(Operation::ResizeOld, _) => return Vec::new(),
    };
    if policy.hot_phase().autoscaling.is_none() {
        return Vec::new();
    }
    target_names(policy, now)
        .into_iter()
        .filter(|name| !listed.contains(name))
        .collect()
}

/// Everything about the named tables only (DescribeTable, tags, TTL, point-in-time recovery,
/// the export, scalable targets, the change feeds: [`Reads::adoption`]): what `adopt` checks,
/// without reading the whole prefix.
pub(crate) async fn observe_tables<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    names: &[String],
) -> Result<Observation, ControlPlaneError> {
    let ledger = policy.naming().ledger_name();
    let mut observation = Observation {
        book: Book::read(control.read_ledger(&ledger, &policy.prefix).await?),
        ..Observation::default()
    };
    let everything = Reads::adoption(policy);
    let unsupported = Unsupported::default();
    for name in names {
        let read = match control.describe_table(name).await {
            Ok(Some(table)) => read_extras(control, policy, table, everything, &unsupported)
                .await
                .map(Some),
            Ok(None) => Ok(None),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        };
        match read {
            Ok(Some(table)) => observation.tables.push(table),
            Ok(None) => {}
            Err(error) => observation.unreadable.push(error),
        }
    }
    observation.skipped = unsupported.sentences();
    observation.unread = unsupported.take_failed();
    let wanted: Vec<String> = observation.tables.iter().map(|t| t.name.clone()).collect();
    if !wanted.is_empty() {
        read_scaling(control, policy, true, &wanted, &[], &mut observation).await;
    }
    Ok(observation)
}

/// The scalable targets on the observed tables and on the `vacant` names (no table: see
/// [`Observation::vacant_targets`]), read once for the whole run (every described table gets
/// them, whichever needed them). An endpoint without Application Auto Scaling has no targets:
/// every table says so (said once when the policy autoscales). Any other failure leaves the
/// tables that needed them and the vacant names unreadable when `strict` (a run: none is
/// resized, registered, deleted or created on half the facts); otherwise (`status`, `plan`) it
/// only warns.
async fn read_scaling<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    strict: bool,
    wanted: &[String],
    vacant: &[String],
    observation: &mut Observation,
) {
    let mut names: Vec<String> = observation.tables.iter().map(|t| t.name.clone()).collect();
    names.extend(vacant.iter().cloned());
    match control.describe_scaling(&names).await {
        Ok(targets) => {
            observation.vacant_targets = targets
                .iter()
                .filter(|t| table_of(&t.key.resource_id).is_some_and(|name| vacant.iter().any(|v| v == name)))
                .cloned()
                .collect();
            for table in &mut observation.tables {
                table.scaling = Some(
                    targets
                        .iter()
                        .filter(|t| table_of(&t.key.resource_id) == Some(table.name.as_str()))
                        .cloned()
                        .collect(),
                );
            }
        }
        Err(error) if error.kind == ErrorKind::Unsupported => {
            for table in &mut observation.tables {
                table.scaling_unsupported = true;
            }
            if policy.uses_autoscaling() {
                tracing::info!(%error, "{SCALING_UNSUPPORTED}");
                observation.skipped.push(SCALING_UNSUPPORTED.to_string());
            }
        }
        Err(error) if !strict => {
            // Said in the report's warnings; the log would say it twice.
            tracing::info!(%error, "scalable targets could not be read");
            observation.skipped.push(format!(
                "the scalable targets could not be read ({error}): capacity changes and deletions are shown deferred; a run reads them again"
            ));
        }
        Err(error) => {
            // Each table's line in the report carries the error.
            tracing::info!(%error, "scalable targets could not be read");
            let (unreadable, readable): (Vec<_>, Vec<_>) = std::mem::take(&mut observation.tables)
                .into_iter()
                .partition(|t| wanted.contains(&t.name));
            observation.tables = readable;
            // A name to create a table under is not created on half the facts either: a
            // target left on it may be someone else's.
            let names = unreadable
                .into_iter()
                .map(|t| t.name)
                .chain(vacant.iter().cloned());
            for table in names {
                observation.unreadable.push(ControlPlaneError {
                    table,
                    ..error.clone()
                });
            }
        }
    }
}

/// What a run says when the endpoint has no Application Auto Scaling.
pub(crate) const SCALING_UNSUPPORTED: &str =
    "Application Auto Scaling is not supported by this endpoint: scalable targets were not \
     read or registered, and tables in autoscaling phases keep their capacity";

/// What a run of `operation` at `now` would observe, made from an observation of everything
/// (`status`, `plan`): the same names described, the others only listed, and the same extra
/// reads, decided by the same planner ([`names_to_describe`], [`reads_for`]), so the operator's
/// view plans exactly what the run will (when nothing changes in between). Mirrors
/// [`observe`] and its reads.
pub(crate) fn run_view(
    policy: &Policy,
    operation: Operation,
    now: DateTime<Utc>,
    observation: &Observation,
) -> Observation {
    let full = &observation.tables;
    let scope = Scope::Run(operation, now);
    let names = full.iter().map(|t| t.name.clone()).collect();
    let (described, listed_only) = names_to_describe(policy, scope, names);
    let find = |name: &str| full.iter().find(|t| t.name == name);
    let bare: Vec<ObservedTable> = described
        .iter()
        .filter_map(|name| find(name))
        .map(ObservedTable::described_only)
        .collect();
    let reads = reads_for(policy, scope, &bare, &observation.book);
    let scaling = policy.uses_autoscaling() || reads.values().any(|r| r.scaling);
    let tables: Vec<ObservedTable> = bare
        .into_iter()
        .map(|mut table| {
            let want = reads.get(&table.name).copied().unwrap_or_default();
            let full = find(&table.name).expect("described from the full observation");
            if table.status != TableStatus::Deleting {
                if want.tags {
                    table.tags = full.tags.clone();
                    table.tags_unsupported = full.tags_unsupported;
                    let export_read = full.tags.as_ref().is_some_and(|tags| {
                        tags.contains_key(TAG_EXPORT)
                            && !tags.contains_key(TAG_ARCHIVED)
                            && policy.archive().is_some()
                    });
                    if export_read {
                        table.export = full.export.clone();
                    }
                }
                if want.archive_proof {
                    table.archive_proof = full.archive_proof.clone();
                }
                if want.tags {
                    // Read in a run when its tags name a final export or a seal, or when it is
                    // due for deletion (`want.resource_policy`).
                    table.final_export = full.final_export.clone();
                    let sealed_tag = full.tags.as_ref().is_some_and(|t| t.contains_key(TAG_SEALED));
                    if sealed_tag || want.resource_policy {
                        table.resource_policy = full.resource_policy.clone();
                        table.resource_policy_unsupported = full.resource_policy_unsupported;
                    }
                }
                if want.ttl {
                    table.ttl = full.ttl.clone();
                }
                if want.point_in_time_recovery {
                    table.point_in_time_recovery = full.point_in_time_recovery;
                }
                if want.destinations {
                    table.destinations = full.destinations.clone();
                    table.destinations_unsupported = full.destinations_unsupported;
                }
                if want.mappings {
                    table.mappings = full.mappings.clone();
                    table.mappings_unsupported = full.mappings_unsupported;
                }
            }
            if scaling {
                table.scaling = full.scaling.clone();
                table.scaling_unsupported = full.scaling_unsupported;
            }
            table
        })
        .collect();
    // The reads this run makes that failed in the full view: the run fails on those alone.
    let unread = observation
        .unread
        .iter()
        .filter(|failed| {
            tables.iter().any(|t| t.name == failed.error.table)
                && failed.made_by(&reads.get(&failed.error.table).copied().unwrap_or_default())
        })
        .cloned()
        .collect();
    Observation {
        tables,
        unreadable: observation.unreadable.clone(),
        unread,
        skipped: observation.skipped.clone(),
        listed_only,
        listed: observation.listed.clone(),
        vacant_targets: observation.vacant_targets.clone(),
        book: observation.book.clone(),
    }
}

/// Reads the state of the export a tag of `table` names into `slot`. An unreadable export
/// leaves the table's archive state unknown, which keeps it from deletion and fails the run
/// ([`Unsupported::failed`]); it stops none of the table's other actions.
async fn read_export<C: ControlPlane>(
    control: &C,
    unsupported: &Unsupported,
    table: &str,
    export_arn: &str,
    slot: &mut Option<ExportState>,
) {
    let state = control.describe_export(table, export_arn).await;
    match unsupported.check(OptionalRead::Export, state) {
        Ok(state) => *slot = state,
        Err(error) => unsupported.failed(OptionalRead::Export, error),
    }
}

/// DescribeTable's answer plus the extra reads `want` asks for, except those the endpoint
/// turned out not to implement.
async fn read_extras<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    mut table: ObservedTable,
    want: Reads,
    unsupported: &Unsupported,
) -> Result<ObservedTable, ControlPlaneError> {
    if table.status == TableStatus::Deleting {
        return Ok(table);
    }
    let name = table.name.clone();
    let name = name.as_str();
    let arn = table
        .arn
        .clone()
        .filter(|_| want.tags && !unsupported.has(OptionalRead::Tags));
    if let Some(arn) = arn {
        let tags = unsupported.check(OptionalRead::Tags, control.list_tags(&arn).await)?;
        table.tags_unsupported = tags.is_none();
        if let Some(tags) = tags {
            // The archive export until the archived tag is set, and the final export.
            let archived = tags.contains_key(TAG_ARCHIVED);
            for (tag, wanted, slot) in [
                (TAG_EXPORT, !archived, &mut table.export),
                (TAG_FINAL_EXPORT, true, &mut table.final_export),
            ] {
                let export_arn = tags
                    .get(tag)
                    .filter(|_| wanted && policy.archive().is_some())
                    .filter(|_| !unsupported.has(OptionalRead::Export))
                    .map(|value| export_arn_from_tag(&arn, value));
                if let Some(export_arn) = export_arn {
                    read_export(control, unsupported, name, &export_arn, slot).await;
                }
            }
            // A table of ours due for deletion (whether archived or not: someone else's
            // statements keep it), and one carrying our seal; only while our family's tag is
            // on it: the role may read no other family's policy.
            let ours = tags
                .get(TAG_FAMILY)
                .is_some_and(|family| *family == policy.prefix);
            let policy_read = ours && (tags.contains_key(TAG_SEALED) || want.resource_policy);
            table.tags = Some(tags);
            if policy_read {
                if unsupported.has(OptionalRead::ResourcePolicy) {
                    table.resource_policy_unsupported = true;
                } else {
                    let read = control.get_resource_policy(name, &arn).await;
                    table.resource_policy = unsupported.check(OptionalRead::ResourcePolicy, read)?;
                    table.resource_policy_unsupported = table.resource_policy.is_none();
                }
            }
            if want.archive_proof && !unsupported.has(OptionalRead::ArchiveProof) {
                table.archive_proof = read_archive_proof(control, policy, &table, &arn, unsupported).await;
            }
        }
    }
    if want.tags && unsupported.has(OptionalRead::Tags) {
        table.tags_unsupported = true;
    }
    // No tagging API (DynamoDB Local): no family tag gates the read, the ledger's record alone
    // makes the table ours; its resource-based policy is read as a table of ours has it read.
    if table.tags_unsupported && want.resource_policy && table.resource_policy.is_none() {
        if let Some(arn) = table.arn.clone() {
            if unsupported.has(OptionalRead::ResourcePolicy) {
                table.resource_policy_unsupported = true;
            } else {
                let read = control.get_resource_policy(name, &arn).await;
                table.resource_policy = unsupported.check(OptionalRead::ResourcePolicy, read)?;
                table.resource_policy_unsupported = table.resource_policy.is_none();
            }
        }
    }
    if want.ttl && !unsupported.has(OptionalRead::Ttl) {
        table.ttl = unsupported.check(OptionalRead::Ttl, control.describe_ttl(name).await)?;
    }
    if want.point_in_time_recovery && !unsupported.has(OptionalRead::PointInTimeRecovery) {
        let on = control.describe_point_in_time_recovery(name).await;
        table.point_in_time_recovery = unsupported.check(OptionalRead::PointInTimeRecovery, on)?;
    }
    if want.destinations {
        read_destinations(control, policy, &mut table, unsupported).await?;
    }
    if want.mappings {
        read_mappings(control, policy, &mut table, unsupported).await?;
    }
    Ok(table)
}

/// The event source mappings on the table's latest stream; none when it has no stream. Like
/// [`read_destinations`]: an endpoint without Lambda is said once when the policy names a
/// consumer function, and a failed read leaves them unread (the table is not deleted, its
/// consumer not ready) and fails the run, stopping none of the table's other actions.
async fn read_mappings<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    table: &mut ObservedTable,
    unsupported: &Unsupported,
) -> Result<(), ControlPlaneError> {
    let Some(stream_arn) = table.stream_arn.clone() else {
        table.mappings = Some(Vec::new());
        return Ok(());
    };
    let read = OptionalRead::EventSourceMappings;
    if unsupported.has(read) {
        table.mappings_unsupported = true;
        return Ok(());
    }
    match control.list_event_source_mappings(&table.name, &stream_arn).await {
        Ok(mappings) => table.mappings = Some(mappings),
        Err(error) if error.kind == ErrorKind::Unsupported => {
            table.mappings_unsupported = true;
            if policy.stream.lambda.is_some() {
                unsupported.check(read, Err::<(), _>(error))?;
            } else {
                // DynamoDB Local answers a Lambda call with a 500, which the SDK retries: once
                // per run is enough.
                unsupported.remember_quietly(read);
            }
        }
        Err(error) => unsupported.failed(read, error),
    }
    Ok(())
}

/// The table's Kinesis destinations. An endpoint without them is said once when the policy
/// names a stream (else quietly: then the read only looks for someone else's destination
/// before a deletion, and none can exist there). A failed read leaves them unread, which keeps
/// the table from deletion and its stream not ready, and fails the run
/// ([`Unsupported::failed`]); it stops none of the table's other actions.
async fn read_destinations<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    table: &mut ObservedTable,
    unsupported: &Unsupported,
) -> Result<(), ControlPlaneError> {
    let read = OptionalRead::KinesisDestinations;
    if unsupported.has(read) {
        table.destinations_unsupported = true;
        return Ok(());
    }
    match control.describe_kinesis_destinations(&table.name).await {
        Ok(destinations) => table.destinations = Some(destinations),
        Err(error) if error.kind == ErrorKind::Unsupported => {
            table.destinations_unsupported = true;
            if policy.stream.kinesis.is_some() {
                unsupported.check(read, Err::<(), _>(error))?;
            } else {
                // moto answers a 500 for it, which the SDK retries: once per run is enough.
                unsupported.remember_quietly(read);
            }
        }
        // Gone since it was described: the run drops it, as for its other reads.
        Err(error) if error.kind == ErrorKind::NotFound => return Err(error),
        Err(error) => unsupported.failed(read, error),
    }
    Ok(())
}

/// The archive's proof of an archived table of ours (family tag) when archiving is on; `None`
/// for any other table, or when the endpoint cannot check S3. An archived tag without an export
/// tag proves nothing.
async fn read_archive_proof<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    table: &ObservedTable,
    arn: &str,
    unsupported: &Unsupported,
) -> Option<ArchiveProof> {
    let archive = policy.archive()?;
    let tags = table.tags.as_ref()?;
    if !tags.contains_key(TAG_FAMILY) {
        return None;
    }
    let bucket_owner = archive.expected_bucket_owner(arn);
    // Once a final export after the seal is recorded, only it can let the table go.
    if let Some(value) = tags.get(TAG_FINAL_EXPORT) {
        let export = export_arn_from_tag(arn, value);
        let completed = table
            .final_export
            .as_ref()
            .is_some_and(|e| e.arn == export && e.status == ExportStatus::Completed);
        if !completed {
            return None;
        }
        return prove_export(control, &table.name, export, bucket_owner, unsupported).await;
    }
    let ArchiveState::Completed { export } = table.archive_state() else {
        return None;
    };
    let Some(export) = export else {
        return Some(ArchiveProof::Unproven {
            export: String::new(),
            reason: format!("it is tagged archived but no export is recorded ({TAG_EXPORT})"),
        });
    };
    let export = export_arn_from_tag(arn, &export);
    prove_export(control, &table.name, export, bucket_owner, unsupported).await
}

/// The archive's proof of `export`, every read expecting `bucket_owner` to own the bucket
/// (unproven without one: nothing to hold S3's answers to); `None` when the endpoint cannot
/// check S3. A read that failed (DescribeExport, or S3's) leaves it unproven and fails the run
/// ([`Unsupported::failed`]); an export DynamoDB no longer knows is only unproven.
async fn prove_export<C: ControlPlane>(
    control: &C,
    table: &str,
    export: String,
    bucket_owner: Option<String>,
    unsupported: &Unsupported,
) -> Option<ArchiveProof> {
    let Some(bucket_owner) = bucket_owner else {
        return Some(ArchiveProof::Unproven {
            export,
            reason: "the table's ARN names no account to expect as the archive bucket's owner: set retention.bucket_owner".into(),
        });
    };
    match unsupported.check(
        OptionalRead::ArchiveProof,
        control.prove_archive(table, &export, &bucket_owner).await,
    ) {
        Ok(proof) => proof,
        Err(error) => {
            let reason = format!("the export could not be read: {error}");
            if error.kind != ErrorKind::NotFound {
                unsupported.failed(OptionalRead::ArchiveProof, error);
            }
            Some(ArchiveProof::Unproven { export, reason })
        }
    }
}
