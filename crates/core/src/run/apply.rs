//! The executor: observes the tables, asks the planner, carries out its changes with bounded
//! concurrency and classifies every failure into done / deferred / failed.

use chrono::{DateTime, Utc};
use futures::stream::{self, StreamExt};
use futures::FutureExt;

use std::time::{Duration, Instant};

use crate::ledger::{keys, Book, LedgerState, TableState};
use crate::plan::deferral::DeferralCause;
use crate::plan::Scope;
use crate::plan::{operator_warnings, plan_run, Decision, Operation, Plan, PlanItem};
use crate::policy::limits::TABLE_QUOTA_ADVICE;
use crate::policy::tags::{
    deferral_value, export_tag_value, TAG_EXPORT, TAG_FINAL_EXPORT, TAG_LAST_DEFERRAL, TAG_SEALED,
};
use crate::policy::Policy;
use crate::run::clock::CheckedInstant;
use crate::run::control::{ControlPlane, ControlPlaneError, ErrorKind};
use crate::run::ledger::{self, since, Recorder, LEASE_WAIT, LEASE_WITHOUT_DEADLINE};
use crate::run::observe::{observe, run_view, SCALING_UNSUPPORTED};
use crate::run::readiness::{self, Readiness};
use crate::run::report::{Outcome, RunReport, TableLine};
use crate::table::changes::{
    DeleteRequest, ExportRequest, SealRequest, SettingChange, TableSetting, TableSpec, TagChange,
    UnsealRequest,
};
use crate::table::seal::SealRecord;
use crate::table::stream::{DestinationChange, MappingChange};
use crate::table::{ObservedTable, TableStatus};

/// How a run carries out its plan.
#[derive(Clone, Copy, Debug)]
pub struct ApplyOptions {
    /// Plan and report, change nothing.
    pub dry_run: bool,
    /// Control-plane calls in flight at once.
    pub concurrency: usize,
    /// When the run must end (a Lambda function's deadline minus a margin, or `--time-budget`):
    /// changes not started by then are deferred to the next run, so the run still returns
    /// its report.
    pub deadline: Option<Instant>,
    /// How long a create_new run waits at most, within `deadline`, for the tables it created
    /// to become ACTIVE before it reports whether the next table is ready
    /// (`readiness::MAX_WAIT` by default).
    pub readiness_wait: Duration,
    /// A replay (a Lambda event for another instant than now, `"replay": true`): it makes only
    /// what is missing: a change to a table that exists is left to the next scheduled run.
    pub replay: bool,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            dry_run: false,
            concurrency: 8,
            deadline: None,
            readiness_wait: readiness::MAX_WAIT,
            replay: false,
        }
    }
}

/// Observe, plan and apply one operation: what a scheduled run does. `at` is the instant the
/// run decides for, as [`check_clock`](crate::run::clock::check_clock) let it through.
pub async fn run<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    operation: Operation,
    at: &CheckedInstant,
    options: ApplyOptions,
) -> Result<RunReport, ControlPlaneError> {
    let mut reports = run_each(control, policy, &[operation], at, options).await?;
    Ok(reports.pop().expect("one report per operation"))
}

/// Observe once, then plan and apply each operation in turn against that one observation:
/// what `ddb-rollover plan` does for both operations without listing the tables twice. With
/// several operations everything is read once, and each operation plans on what its own run
/// would have read (`run_view`), so `plan` shows exactly what each run will do.
///
/// A run that changes tables first starts the family's ledger when the family has no table
/// yet, then takes its operation's lease: while another run holds it, every change is
/// deferred (overlapping runs never collide), and the lease is given back at the end.
pub async fn run_each<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    operations: &[Operation],
    at: &CheckedInstant,
    options: ApplyOptions,
) -> Result<Vec<RunReport>, ControlPlaneError> {
    for &operation in operations {
        at.assert_covers(policy, operation, options.dry_run);
    }
    let now = at.at();
    // One operation: its floor of calls. Several (`plan`): the operator's full view.
    let scope = match operations {
        [operation] => Scope::Run(*operation, now),
        _ => Scope::Full(now),
    };
    let lease = match (options.dry_run, operations) {
        (false, [operation]) => Some(operation.to_string()),
        _ => None,
    };
    let started = control.now();
    // Waits for another run of the operation at most this long (and half the run's time).
    let wait_until = started
        + options.deadline.map_or(LEASE_WAIT, |deadline| {
            (deadline.saturating_duration_since(started) / 2).min(LEASE_WAIT)
        });
    let mut looked_again = false;
    let (observation, recorder, held) = loop {
        // Boxed: nesting every control-plane future in one type would exceed the compiler's
        // recursion limit when the Lambda binaries lay out their handler's future.
        let mut observation = observe(control, policy, scope, options.concurrency)
            .boxed()
            .await?;
        // Another run made a table between this run's listing and its ledger read: look again
        // (once), at both after it.
        if observation.ledger_ahead_of_listing() && !looked_again {
            looked_again = true;
            continue;
        }
        let clock = at.wall().unwrap_or(now) + since(control, started);
        if !options.dry_run {
            let started = ledger::start_if_new(control, policy, &mut observation, clock)
                .boxed()
                .await?;
            // Another run of a new family got there first: look again (once), at what it made.
            if started == ledger::Started::ByAnother && !looked_again {
                looked_again = true;
                continue;
            }
        }
        observation.book.read_at = Some(clock);
        let recorder = Recorder::new(control, policy, &observation.book, clock);
        let held = match &lease {
            Some(operation) => {
                // Held until the run's deadline (a Lambda function's, inside its timeout), so
                // a crashed run's lease lapses by the time the next run could start.
                let left = options
                    .deadline
                    .map(|deadline| deadline.saturating_duration_since(control.now()))
                    .and_then(|left| chrono::Duration::from_std(left).ok());
                let until = clock + left.unwrap_or(LEASE_WITHOUT_DEADLINE);
                let holder = format!("{operation} at {}", clock.to_rfc3339());
                recorder
                    .lease(operation, &holder, clock, until, &observation.book)
                    .boxed()
                    .await?
            }
            None => None,
        };
        // An overlapping delivery of the same schedule: wait for the other run to finish, then
        // read again and run on what it left, instead of deferring everything to it.
        if let (Some(operation), Some(_)) = (&lease, &held) {
            let wall = at.wall().unwrap_or(now);
            if ledger::wait_for_release(control, policy, operation, wall, started, wait_until)
                .boxed()
                .await?
            {
                continue;
            }
        }
        // Taken: what another run of the operation recorded before it gave the lease back is
        // read now (one Query), so this run's conditional writes rest on it.
        if lease.is_some() && held.is_none() && observation.book.state != LedgerState::Missing {
            let ledger = policy.naming().ledger_name();
            let book = Book::read(control.read_ledger(&ledger, &policy.prefix).boxed().await?);
            // Another run of the operation came and went between this run's look and its
            // lease (it made or deleted tables), or was running while this run looked (its
            // lease was there: what it recorded then may not be what it left): look again,
            // under the lease.
            let overlapped = lease
                .as_deref()
                .is_some_and(|operation| observation.book.leases.contains_key(&keys::lease(operation)));
            if overlapped
                || book.tables != observation.book.tables
                || book.receipts != observation.book.receipts
            {
                observation = observe(control, policy, scope, options.concurrency)
                    .boxed()
                    .await?;
            } else {
                observation.book = book;
            }
            observation.book.read_at = Some(at.wall().unwrap_or(now) + since(control, started));
            let recorder = Recorder::new(control, policy, &observation.book, clock);
            break (observation, recorder, held);
        }
        break (observation, recorder, held);
    };
    let mut reports = Vec::with_capacity(operations.len());
    for &operation in operations {
        let view;
        let (seen, failed_reads) = match scope {
            Scope::Run(..) => (observation.seen(), &observation.unread),
            Scope::Full(_) => {
                view = run_view(policy, operation, now, &observation);
                (view.seen(), &view.unread)
            }
        };
        let mut plan = plan_run(policy, now, &seen, operation);
        if matches!(scope, Scope::Full(_)) {
            plan.warnings = operator_warnings(policy, now, &observation.seen(), &[&plan]);
        }
        if let Some(held) = &held {
            plan = lease_held(plan, held);
        }
        if options.replay {
            plan = replay_plan(plan);
        }
        let mut report = apply_recording(control, &recorder, plan, &observation.unreadable, options)
            .boxed()
            .await;
        // Also while another run holds the lease: that run makes the tables, and this one says
        // whether they are there (a crashed holder's are not: this run fails, and is retried).
        if operation == Operation::CreateNew && !options.dry_run {
            let book = recorder.book_after(&observation.book);
            let ready = next_table_ready(control, policy, now, seen.tables, &book, &report, options)
                .boxed()
                .await;
            report = report.with_readiness(ready);
        }
        // Evidence that could not be read: the run fails, once per read. An operator's view
        // read everything once: each operation fails only on the reads its own run makes.
        let unread: Vec<ControlPlaneError> = failed_reads.iter().map(|f| f.error.clone()).collect();
        report = report.with_unread(&unread);
        // APIs the endpoint lacks: said once per report, not once per table.
        for sentence in &observation.skipped {
            if !report.warnings.contains(sentence) {
                report.warnings.push(sentence.clone());
            }
        }
        reports.push(report);
    }
    if let (Some(operation), None) = (&lease, &held) {
        recorder.release(operation).boxed().await;
    }
    Ok(reports)
}

/// `plan` of a replay: only what is missing is made (a missed period's table, and what a new
/// table gets with it). A change to a table that exists is the next scheduled run's, at its
/// time: from a replay's earlier instant a table looks younger, so its change would take it back
/// to an earlier phase (raise what resize_old dialled down) or undo what a later run did.
fn replay_plan(mut plan: Plan) -> Plan {
    for item in &mut plan.items {
        if item.decision.is_change() && item.facts.status.is_some() {
            item.reason = format!(
                "a replay makes only what is missing; the next scheduled run makes this change at its own time: {}",
                item.reason
            );
            item.decision = Decision::Skipped;
        }
    }
    plan
}

/// `plan` when another run holds the operation's lease: every change deferred to it.
fn lease_held(mut plan: Plan, held: &crate::ledger::Lease) -> Plan {
    for item in &mut plan.items {
        if item.decision.is_change() {
            item.reason = format!(
                "{}; deferred: another run of {} holds the family's lease until {} ({}), and makes the changes",
                item.reason,
                plan.operation,
                held.until.to_rfc3339(),
                held.holder
            );
            item.decision = Decision::Deferred {
                retry_after: Some(held.until),
                cause: DeferralCause::LeaseHeld,
            };
        }
    }
    plan.warnings.push(format!(
        "another {} run holds the family's lease until {} ({}): this run changed nothing",
        plan.operation,
        held.until.to_rfc3339(),
        held.holder
    ));
    plan
}

/// Whether the current and every pre-built table are ready once a create_new run's changes are
/// made: the observation, with the tables the run created as CREATING and those whose warm
/// throughput it raised as warming, then polled until ACTIVE for at most
/// `options.readiness_wait`, never past `options.deadline`. No call when every target was ready
/// when observed.
async fn next_table_ready<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    now: DateTime<Utc>,
    observed: &[ObservedTable],
    book: &Book,
    report: &RunReport,
    options: ApplyOptions,
) -> Readiness {
    let mut ready = readiness::assess(policy, now, observed, book);
    for line in report.lines_with(Outcome::Done) {
        match &line.item.decision {
            Decision::Create(_) | Decision::Recreate(_) => {
                readiness::created(&mut ready, &line.item.facts.table)
            }
            Decision::Configure(SettingChange {
                setting: TableSetting::Warm(_),
                ..
            }) => readiness::warming(&mut ready, &line.item.facts.table),
            Decision::EnableKinesisDestination(_) => readiness::enabling(&mut ready, &line.item.facts.table),
            Decision::CreateEventSourceMapping(_) => {
                readiness::mapping_created(&mut ready, &line.item.facts.table)
            }
            _ => {}
        }
    }
    let ready = ready.recomputed();
    let mut until = control.now() + options.readiness_wait;
    if let Some(deadline) = options.deadline {
        until = until.min(deadline);
    }
    readiness::settle(control, policy, book, ready, until).await
}

/// A scaling step's reason when the endpoint turned out to have no Application Auto Scaling;
/// the report says [`SCALING_UNSUPPORTED`] once.
const NO_SCALING_HERE: &str = "not made: this endpoint has no Application Auto Scaling";

/// Carries out a plan, recording in `policy`'s ledger (read as `book`) what its changes make.
/// Tables that could not be described are reported as failed and get no action, so a transient
/// DescribeTable error never turns into a wrong decision.
pub async fn apply<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    book: &Book,
    plan: Plan,
    unreadable: &[ControlPlaneError],
    options: ApplyOptions,
) -> RunReport {
    let recorder = Recorder::new(control, policy, book, plan.at);
    apply_recording(control, &recorder, plan, unreadable, options).await
}

/// [`apply`], writing to the ledger through `recorder` (one run's, shared by its operations).
async fn apply_recording<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    plan: Plan,
    unreadable: &[ControlPlaneError],
    options: ApplyOptions,
) -> RunReport {
    let Plan {
        operation,
        at,
        prefix,
        current_period,
        items,
        warnings,
    } = plan;
    let (blocked, items): (Vec<_>, Vec<_>) = items
        .into_iter()
        .partition(|item| unreadable.iter().any(|e| e.table == item.facts.table));
    // A table's items run in order (its main change first, a delete after lifting protection);
    // different tables run concurrently.
    let mut by_table: Vec<Vec<PlanItem>> = Vec::new();
    for item in items {
        match by_table.last_mut() {
            Some(group) if group[0].facts.table == item.facts.table => group.push(item),
            _ => by_table.push(vec![item]),
        }
    }
    let lines: Vec<Vec<TableLine>> = stream::iter(by_table)
        .map(|group| apply_table(control, recorder, operation, group, options))
        .buffered(options.concurrency.max(1))
        .collect()
        .await;
    let mut lines: Vec<TableLine> = lines.into_iter().flatten().collect();
    lines.extend(unreadable.iter().map(|error| unreadable_line(error, &blocked)));
    lines.sort_by(|a, b| a.item.facts.table.cmp(&b.item.facts.table));
    // Best effort, and never past the deadline: the report matters more than the tag.
    if !options.dry_run && options.deadline.is_none_or(|d| control.now() < d) {
        record_deferrals(control, &lines, at).await;
    }
    let mut warnings = warnings;
    let unsupported = |line: &TableLine| line.item.reason.ends_with(NO_SCALING_HERE);
    if lines.iter().any(unsupported) && !warnings.iter().any(|w| w == SCALING_UNSUPPORTED) {
        warnings.push(SCALING_UNSUPPORTED.to_string());
    }
    // The warnings are the report's: its reader prints or logs them once (not here as well).
    tracing::info!(%operation, %at, tables = lines.len(), "run finished");
    RunReport::new(operation, at, prefix, current_period, options.dry_run, lines).with_warnings(warnings)
}

/// Carries out one table's items in order (its main change first, a delete after lifting
/// protection): its line for each.
async fn apply_table<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    operation: Operation,
    group: Vec<PlanItem>,
    options: ApplyOptions,
) -> Vec<TableLine> {
    let out_of_time_now = |item: &PlanItem| {
        item.decision.is_change() && !options.dry_run && options.deadline.is_some_and(|d| control.now() >= d)
    };
    let mut lines = Vec::with_capacity(group.len());
    let mut gone = false;
    let mut still_scaled = false;
    let mut not_deleted = false;
    for item in group {
        let line = if gone {
            // The table vanished under an earlier step: no more calls for it.
            TableLine::new(item, Outcome::Gone, None)
        } else if not_deleted {
            // What follows a deletion (deregistering its targets) waits for it.
            TableLine::new(
                item,
                Outcome::Skipped,
                Some("not sent: the table was not deleted".into()),
            )
        } else if still_scaled && matches!(item.decision, Decision::Update(_)) {
            // Our scalable targets are still on it: the autoscaler would undo the change.
            TableLine::deferred(
                item,
                DeferralCause::ScalingStillAttached,
                Some(
                    "waits until this policy's scalable targets are deregistered (the step before did not finish); a later run retries".into(),
                ),
            )
        } else if out_of_time_now(&item) {
            out_of_time(item)
        } else {
            execute(control, recorder, operation, item, options).await
        };
        gone = line.outcome == Outcome::Gone;
        not_deleted |= matches!(line.item.decision, Decision::Delete(_))
            && !matches!(line.outcome, Outcome::Done | Outcome::Planned);
        still_scaled |= matches!(line.item.decision, Decision::DeregisterScaling(_))
            && !matches!(line.outcome, Outcome::Done | Outcome::Planned);
        lines.push(line);
    }
    lines
}

async fn execute<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    operation: Operation,
    mut item: PlanItem,
    options: ApplyOptions,
) -> TableLine {
    let outcome = match (&item.decision, options.dry_run) {
        (Decision::Blocked, _) => Err(ControlPlaneError::failed(
            "plan",
            &item.facts.table,
            item.reason.clone(),
        )),
        (decision, true) if decision.is_change() => Ok(Outcome::Planned),
        (Decision::Unchanged, _) => Ok(Outcome::Unchanged),
        (Decision::Deferred { .. }, _) => Ok(Outcome::Deferred),
        (Decision::Skipped, _) => Ok(Outcome::Skipped),
        (Decision::Foreign, _) => Ok(Outcome::Foreign),
        // A target someone attached a policy or schedule to since the run looked stays
        // registered: the line says so (the next run sees it as theirs).
        (Decision::DeregisterScaling(change), false) => match control.deregister_scaling(change).await {
            Ok(kept) => {
                for sentence in kept {
                    item.reason.push_str(&format!("; {sentence}"));
                }
                Ok(Outcome::Done)
            }
            Err(e) => Err(e),
        },
        (decision, _) => send(control, recorder, &item, decision, options).await,
    };
    let outcome = match (outcome, item.facts.phase) {
        // resize_old dialled the table down: recorded, so no late create_new raises it again.
        (Ok(Outcome::Done), Some(phase))
            if operation == Operation::ResizeOld && phase > 0 && dials_down(&item.decision) =>
        {
            recorder.lowered(&item.facts.table, phase).await.map(|()| Outcome::Done).map_err(|e| {
                e.reworded(|message| {
                    format!("changed, but the family's ledger could not record it ({message}): a late create_new may raise it again")
                })
            })
        }
        (outcome, _) => outcome,
    };
    conclude(operation, item, outcome)
}

/// Whether `decision` moves a table's capacity (its throughput, class, scaling or settings):
/// what resize_old records as having dialled it down.
fn dials_down(decision: &Decision) -> bool {
    matches!(
        decision,
        Decision::Update(_)
            | Decision::UpdateClass(_)
            | Decision::Configure(_)
            | Decision::RegisterScaling(_)
            | Decision::DeregisterScaling(_)
    )
}

/// The line of a step that ended with `outcome`: what each AWS error means for the run.
fn conclude(operation: Operation, item: PlanItem, outcome: Result<Outcome, ControlPlaneError>) -> TableLine {
    // create_new's own tables must exist when it ends: one that vanished is not "gone".
    let must_exist = operation == Operation::CreateNew && item.facts.age.is_some_and(|age| age <= 0);
    match outcome {
        Ok(outcome) => {
            if outcome == Outcome::Done {
                tracing::info!(table = %item.facts.table, action = item.decision.action(), reason = %item.reason, "changed");
            }
            TableLine::new(item, outcome, None)
        }
        // Deleted by another run (or by hand) since this run listed it: nothing left to do.
        Err(e) if e.kind == ErrorKind::NotFound && !must_exist => {
            tracing::info!(table = %item.facts.table, error = %e, "table gone");
            TableLine::new(item, Outcome::Gone, None)
        }
        // Another run made the same change first.
        Err(e) if e.kind == ErrorKind::NoChange => TableLine::new(item, Outcome::Unchanged, None),
        // An endpoint without Application Auto Scaling (DynamoDB Local, dynalite): nothing to
        // register there, and nothing registered to remove; the table keeps its capacity.
        Err(e)
            if e.kind == ErrorKind::Unsupported
                && matches!(
                    item.decision,
                    Decision::RegisterScaling(_) | Decision::DeregisterScaling(_)
                ) =>
        {
            let reason = format!("{}; {NO_SCALING_HERE}", item.reason);
            TableLine::new(PlanItem { reason, ..item }, Outcome::Skipped, None)
        }
        // An endpoint without Lambda (DynamoDB Local, dynalite): no mapping can be made or be
        // there; the observation said so once.
        Err(e)
            if e.kind == ErrorKind::Unsupported
                && matches!(
                    item.decision,
                    Decision::CreateEventSourceMapping(_)
                        | Decision::UpdateEventSourceMapping(_)
                        | Decision::DeleteEventSourceMapping(_)
                ) =>
        {
            let reason = format!("{}; not made: this endpoint has no Lambda", item.reason);
            TableLine::new(PlanItem { reason, ..item }, Outcome::Skipped, None)
        }
        // A period without its table: nothing may wait for a later run. Loud, naming the quota.
        Err(e) if matches!(item.decision, Decision::Create(_) | Decision::Recreate(_)) => {
            let e = if e.kind == ErrorKind::LimitExceeded && !e.message.contains(TABLE_QUOTA_ADVICE) {
                e.reworded(|message| format!("{TABLE_QUOTA_ADVICE} ({message})"))
            } else {
                e
            };
            tracing::error!(table = %item.facts.table, error = %e, "the period's table could not be created");
            TableLine::new(item, Outcome::Failed, Some(e.to_string()))
        }
        // DynamoDB refused for now (busy table, too many operations, decrease budget): a
        // later run does it.
        Err(e)
            if matches!(e.kind, ErrorKind::InUse | ErrorKind::LimitExceeded) && item.decision.is_change() =>
        {
            tracing::warn!(table = %item.facts.table, error = %e, "deferred");
            let cause = if e.kind == ErrorKind::InUse {
                DeferralCause::TableBusy
            } else {
                DeferralCause::LimitExceeded
            };
            TableLine::deferred(item, cause, Some(e.message))
        }
        Err(e) => {
            let e = if e.kind == ErrorKind::NotFound {
                e.reworded(|message| {
                    format!("{message}. The table vanished during the run: the next create_new run creates it again")
                })
            } else {
                e
            };
            tracing::error!(table = %item.facts.table, error = %e, "failed");
            TableLine::new(item, Outcome::Failed, Some(e.to_string()))
        }
    }
}

/// A change the run has no time left for: deferred to the next run, except a period's table,
/// which must not wait (loud, like any other create that did not happen).
fn out_of_time(item: PlanItem) -> TableLine {
    let creates = matches!(item.decision, Decision::Create(_) | Decision::Recreate(_));
    let error = if creates {
        format!(
            "CreateTable {}: not sent, the run's time budget ended first; the next run (a retry) creates it",
            item.facts.table
        )
    } else {
        "the run's time budget ended before this change; the next run makes it".to_string()
    };
    tracing::warn!(table = %item.facts.table, action = item.decision.action(), "out of time");
    if creates {
        TableLine::new(item, Outcome::Failed, Some(error))
    } else {
        TableLine::deferred(item, DeferralCause::TimeBudget, Some(error))
    }
}

/// Makes one change; `Ok` says how it ended (done, or gone when a delete found the table
/// already deleting or deleted).
async fn send<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    item: &PlanItem,
    decision: &Decision,
    options: ApplyOptions,
) -> Result<Outcome, ControlPlaneError> {
    match decision {
        Decision::Create(spec) => create(control, recorder, item, spec).boxed().await,
        Decision::Recreate(spec) => {
            recreate(control, recorder, item, spec, wait_until(control, options))
                .boxed()
                .await
        }
        Decision::Record(record) => recorder.table(record).boxed().await,
        Decision::Update(change) => control.update_capacity(change).await,
        Decision::UpdateClass(change) => control.update_table_class(change).await,
        Decision::Tag(change) => control.tag_table(change).await,
        Decision::EnableTtl(change) => control.enable_ttl(change).await,
        Decision::EnablePointInTimeRecovery { name } => control.enable_point_in_time_recovery(name).await,
        Decision::Configure(change) => control.configure(change).await,
        Decision::Export(request) => export(control, request).await,
        Decision::Seal(request) => seal(control, recorder, request).await,
        Decision::Unseal(request) => unseal(control, recorder, request).await,
        Decision::Delete(request) => return delete(control, recorder, request).boxed().await,
        Decision::EnableKinesisDestination(change) => {
            enable_destination(control, recorder, change, wait_until(control, options)).await
        }
        Decision::CreateEventSourceMapping(change) => {
            create_mapping(control, recorder, change, wait_until(control, options)).await
        }
        // No ledger record: the mapping keeps its UUID, which is what the record holds.
        Decision::UpdateEventSourceMapping(update) => control.update_event_source_mapping(update).await,
        Decision::DeleteEventSourceMapping(removal) => control.delete_event_source_mapping(removal).await,
        Decision::RegisterScaling(change) => {
            let arns = control.register_scaling(change).await?;
            recorder.scaling_policies(&change.name, &arns).await.map_err(|e| {
                e.reworded(|message| {
                    format!("registered, but our scaling policies could not be recorded ({message}): they count as someone else's until they are")
                })
            })
        }
        Decision::DeregisterScaling(change) => control.deregister_scaling(change).await.map(drop),
        Decision::Unchanged
        | Decision::Deferred { .. }
        | Decision::Skipped
        | Decision::Foreign
        | Decision::Blocked => Ok(()),
    }
    .map(|()| Outcome::Done)
}

/// Writes the intent to the family's ledger, creates the table, then records the identity
/// DynamoDB gave it. A name taken meanwhile is not ours: the intent is withdrawn and the
/// period's table is missing, loudly. Without the intent written (no ledger table included),
/// no table is created: it could never be proven ours.
async fn create<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    item: &PlanItem,
    spec: &TableSpec,
) -> Result<(), ControlPlaneError> {
    let slot = item.facts.slot.expect("a created table's item holds its period");
    if !recorder.can_record() {
        return Err(ControlPlaneError::failed(
            "CreateTable",
            &spec.name,
            "not sent: the family's ledger does not exist, so the table could never be proven ours: `ddb-rollover init` (or the stack) makes it",
        ));
    }
    let mut record = recorder.intent(&spec.name, slot, control_clock(recorder));
    recorder.table(&record).await.map_err(|e| {
        e.reworded(|message| {
            format!("CreateTable not sent: the intent could not be written to the ledger ({message})")
        })
    })?;
    match control.create_table(spec).await {
        Ok(identity) => {
            let Some(identity) = identity else {
                // The answer did not say; the next run resolves the intent by DescribeTable.
                return Ok(());
            };
            record.state = TableState::Made { identity };
            recorder.table(&record).await.map_err(|e| {
                e.reworded(|message| {
                    format!("created, but its identity could not be recorded ({message}): the next run records it from its intent")
                })
            })
        }
        Err(e) if e.kind == ErrorKind::AlreadyExists => {
            // Not this run's table: someone made one of this name since the run looked.
            let _ = recorder.forget_table(&spec.name).await;
            Err(ControlPlaneError {
                kind: ErrorKind::Other,
                ..e.reworded(|message| {
                    format!("{message}: a table of this name was made since this run looked, not by this run; it is not this family's (adopt it if it is)")
                })
            })
        }
        Err(e) => {
            // Nothing was made: the intent goes (best effort; an intent alone claims only a
            // table made since, by this name and key).
            let _ = recorder.forget_table(&spec.name).await;
            Err(e)
        }
    }
}

/// The instant an intent is stamped with: the run's wall clock.
fn control_clock<C: ControlPlane>(recorder: &Recorder<'_, C>) -> DateTime<Utc> {
    recorder.clock()
}

/// Waits until the period's table that someone is deleting is gone (DescribeTable at once,
/// then after [`readiness::FIRST_POLL`], the wait doubling up to [`readiness::MAX_POLL`], on
/// the control plane's clock), then creates it again. A table that is no longer DELETING when
/// looked at was made again meanwhile (another run): nothing to do. Still DELETING at `until`:
/// the period has no table, a failure.
async fn recreate<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    item: &PlanItem,
    spec: &TableSpec,
    until: Instant,
) -> Result<(), ControlPlaneError> {
    let started = control.now();
    let mut wait = Duration::ZERO;
    loop {
        match control.describe_table(&spec.name).await {
            Ok(None) => break,
            Err(e) if e.kind == ErrorKind::NotFound => break,
            Ok(Some(table)) if table.status == TableStatus::Deleting => {}
            Ok(Some(_)) => return Ok(()),
            Err(e) => return Err(e),
        }
        let now = control.now();
        if now >= until {
            return Err(ControlPlaneError::failed(
                "CreateTable",
                &spec.name,
                format!(
                    "the period's table was still DELETING after {:.0} s, when the run's wait ended: the period has no table until a create_new run creates it again (run it now, or let the schedule retry)",
                    (now - started).as_secs_f64()
                ),
            ));
        }
        if !wait.is_zero() {
            control.sleep(wait.min(until - now)).await;
        }
        wait = if wait.is_zero() {
            readiness::FIRST_POLL
        } else {
            (wait * 2).min(readiness::MAX_POLL)
        };
    }
    create(control, recorder, item, spec).await
}

/// The end of a run's wait for a table: `options.readiness_wait` from now, never past the
/// run's deadline.
fn wait_until<C: ControlPlane>(control: &C, options: ApplyOptions) -> Instant {
    let until = control.now() + options.readiness_wait;
    options.deadline.map_or(until, |deadline| until.min(deadline))
}

/// Enables the family's Kinesis destination once the table takes updates: DynamoDB refuses
/// EnableKinesisStreamingDestination while a table is CREATING (ResourceInUseException), and
/// the table may have been created by this very run.
async fn enable_destination<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    change: &DestinationChange,
    until: Instant,
) -> Result<(), ControlPlaneError> {
    let operation = "EnableKinesisStreamingDestination";
    let next_run = "DynamoDB enables a destination on an ACTIVE table; the next run enables it";
    active_table(control, &change.name, operation, next_run, until).await?;
    match control.enable_kinesis_destination(change).await {
        Ok(_) => {}
        Err(error) if error.kind == ErrorKind::NotFound => return Err(error),
        // Refused: done all the same when the destination holds the table now (another run,
        // or a retry of this one, enabled it first); else the refusal stands.
        Err(error) => match control.describe_kinesis_destinations(&change.name).await {
            Ok(destinations)
                if destinations
                    .iter()
                    .any(|d| d.is_to(&change.destination) && d.status.holds()) => {}
            _ => return Err(error),
        },
    }
    let stream = change.destination.stream_arn.as_str();
    recorder.enabled(&change.name, stream).await.map_err(|e| {
        e.reworded(|message| {
            format!("enabled, but the destination could not be recorded ({message}): it counts as ours only while the policy names {stream}")
        })
    })
}

/// Waits for the table to be ACTIVE (or UPDATING), then returns it as described: DescribeTable
/// at once, then after [`readiness::FIRST_POLL`], the wait doubling up to
/// [`readiness::MAX_POLL`], on the control plane's clock, like [`recreate`]. A table gone or
/// DELETING is NotFound; one still not ACTIVE at `until` is left for the next run (`next_run`
/// says why; deferred, as busy).
async fn active_table<C: ControlPlane>(
    control: &C,
    name: &str,
    operation: &'static str,
    next_run: &str,
    until: Instant,
) -> Result<ObservedTable, ControlPlaneError> {
    let mut wait = Duration::ZERO;
    loop {
        match control.describe_table(name).await? {
            None => {
                return Err(ControlPlaneError {
                    kind: ErrorKind::NotFound,
                    ..ControlPlaneError::failed(operation, name, "the table does not exist")
                })
            }
            Some(table) if matches!(table.status, TableStatus::Active | TableStatus::Updating) => {
                return Ok(table)
            }
            Some(table) if table.status == TableStatus::Deleting => {
                return Err(ControlPlaneError {
                    kind: ErrorKind::NotFound,
                    ..ControlPlaneError::failed(operation, name, "the table is being deleted")
                })
            }
            Some(table) if control.now() >= until => {
                return Err(ControlPlaneError {
                    kind: ErrorKind::InUse,
                    ..ControlPlaneError::failed(
                        operation,
                        name,
                        format!(
                            "the table was still {} when the run's wait ended: {next_run}",
                            table.status.as_str()
                        ),
                    )
                })
            }
            Some(_) => {}
        }
        if !wait.is_zero() {
            control
                .sleep(wait.min(until.saturating_duration_since(control.now())))
                .await;
        }
        wait = if wait.is_zero() {
            readiness::FIRST_POLL
        } else {
            (wait * 2).min(readiness::MAX_POLL)
        };
    }
}

/// Maps the family's consumer function to the table's stream once the table is ACTIVE (its
/// stream exists from its creation, but Lambda reads it only then): the intent in the ledger
/// first, the UUID Lambda gave after. A mapping of the function on that stream already
/// (ResourceConflictException) is not ours by that alone: the run fails, and a later run takes
/// it for ours only if Lambda modified it since the intent (a retry of this run made it).
async fn create_mapping<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    change: &MappingChange,
    until: Instant,
) -> Result<(), ControlPlaneError> {
    let operation = "CreateEventSourceMapping";
    let table = active_table(control, &change.name, operation, "the next run maps it", until).await?;
    let Some(stream_arn) = table.stream.and(table.stream_arn) else {
        return Err(ControlPlaneError::failed(
            operation,
            &change.name,
            "the table has no DynamoDB stream to map (template.stream turns it on for the tables a run creates; someone turned it off on this one): turn it on, and the next run maps it",
        ));
    };
    recorder.mapping_intended(&change.name).await.map_err(|e| {
        e.reworded(|message| {
            format!("CreateEventSourceMapping not sent: the intent could not be written to the ledger ({message})")
        })
    })?;
    let mapping = control
        .create_event_source_mapping(change, &stream_arn)
        .await
        .map_err(|e| {
            if e.kind != ErrorKind::AlreadyExists {
                return e;
            }
            e.reworded(|message| {
                format!("a mapping of the family's consumer is on its stream already, and the ledger does not record it as ours ({message}): someone else's is never taken over; a later run records it only if this run's retry made it")
            })
        })?;
    recorder.mapped(&change.name, &mapping.uuid).await.map_err(|e| {
        e.reworded(|message| {
            format!("mapped ({}), but the mapping could not be recorded ({message}): a later run records it by the intent", mapping.uuid)
        })
    })
}

/// Starts the export, then records it in the table's tag: later runs find it there, and
/// without it they would start another.
async fn export<C: ControlPlane>(control: &C, request: &ExportRequest) -> Result<(), ControlPlaneError> {
    let export_arn = control.export_table(request).await?;
    let key = if request.after_seal {
        TAG_FINAL_EXPORT
    } else {
        TAG_EXPORT
    };
    let value = export_tag_value(&request.table_arn, &export_arn);
    let record = TagChange::one(&request.name, &request.table_arn, key, value);
    control.tag_table(&record).await.map_err(|e| {
        e.reworded(|message| format!("export {export_arn} started but could not be recorded: {message}"))
    })
}

/// Puts the policy with our seal statement (conditional on the revision read), then records
/// when and the revision put in the seal tag: the final export counts only after it. A policy
/// changed since it was read is refused (PolicyNotFoundException): a later run reads it again.
async fn seal<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    request: &SealRequest,
) -> Result<(), ControlPlaneError> {
    let revision = control
        .put_resource_policy(
            &request.name,
            &request.arn,
            &request.document,
            &request.expected_revision,
        )
        .await?;
    let record = SealRecord {
        at: request.at,
        revision,
    };
    let change = TagChange::one(&request.name, &request.arn, TAG_SEALED, record.tag_value());
    let recorded = match control.tag_table(&change).await {
        Ok(()) => recorder.seal(&request.name, Some(record)).await,
        Err(e) => Err(e),
    };
    recorded.map_err(|e| {
        e.reworded(|message| {
            format!(
                "sealed against writes but the seal could not be recorded ({message}): the next run records it and counts the seal from then"
            )
        })
    })
}

/// Removes our seal statement: the whole policy when it is all ours, else the rest put back;
/// both conditional on the revision read.
async fn unseal<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    request: &UnsealRequest,
) -> Result<(), ControlPlaneError> {
    let lifted = match &request.rest {
        None => {
            control
                .delete_resource_policy(&request.name, &request.arn, &request.expected_revision)
                .await
        }
        Some(rest) => control
            .put_resource_policy(&request.name, &request.arn, rest, &request.expected_revision)
            .await
            .map(|_| ()),
    };
    lifted?;
    recorder.seal(&request.name, None).await
}

/// Lifts deletion protection when the table has it, then deletes. A table another run is
/// already deleting, or has deleted, is gone: the same end state, so not a failure.
async fn delete<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    request: &DeleteRequest,
) -> Result<Outcome, ControlPlaneError> {
    // The receipt first: without it, nothing is deleted.
    let receipt = &request.receipt;
    let key = crate::ledger::keys::receipt(&receipt.name, receipt.identity.created.timestamp_millis());
    recorder.record(&key, receipt).await.map_err(|e| {
        e.reworded(|message| {
            format!("DeleteTable not sent: the receipt could not be written to the ledger ({message})")
        })
    })?;
    let gone_or = |result: Result<(), ControlPlaneError>| async move {
        match result {
            Ok(()) => Ok(None),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(Some(Outcome::Gone)),
            // Busy: deleting already (then gone), or creating or updating (then deferred).
            Err(e) if e.kind == ErrorKind::InUse => match control.describe_table(&request.name).await {
                Ok(None) => Ok(Some(Outcome::Gone)),
                Ok(Some(table)) if table.status == TableStatus::Deleting => Ok(Some(Outcome::Gone)),
                _ => Err(e),
            },
            Err(e) => Err(e),
        }
    };
    if request.lift_deletion_protection {
        let lifted = control
            .configure(&SettingChange {
                name: request.name.clone(),
                setting: TableSetting::DeletionProtection(false),
            })
            .await;
        if let Some(outcome) = gone_or(lifted).await? {
            return Ok(outcome);
        }
    }
    let deleted = control.delete_table(&request.name).await;
    let outcome = gone_or(deleted).await?.unwrap_or(Outcome::Done);
    // The table's record goes with it; its receipt stays (best effort: a record left names a
    // table that is gone, which claims nothing).
    // Nothing for an operator to do: the record names a table that is gone (the receipt is
    // what the ledger keeps of it), so this is a log line only.
    if let Err(error) = recorder.forget_table(&request.name).await {
        tracing::info!(table = %request.name, %error, "the deleted table's record stays in the ledger");
    }
    Ok(outcome)
}

/// Tags each table DynamoDB refused a change for at run time with when and why, so `status`
/// can show the last deferral reason. Best effort: a failed tag only logs.
async fn record_deferrals<C: ControlPlane>(control: &C, lines: &[TableLine], at: DateTime<Utc>) {
    for line in lines {
        let (Outcome::Deferred, Some(error), Some(arn)) = (line.outcome, &line.error, &line.item.arn) else {
            continue;
        };
        let value = deferral_value(at, line.item.decision.action(), error);
        let change = TagChange::one(&line.item.facts.table, arn, TAG_LAST_DEFERRAL, value);
        // The line itself says the change was deferred and why; only `status`'s "last
        // deferred" note is missing until the next deferral: a log line only.
        if let Err(error) = control.tag_table(&change).await {
            tracing::info!(table = %line.item.facts.table, %error, "could not record the deferral");
        }
    }
}

fn unreadable_line(error: &ControlPlaneError, blocked: &[PlanItem]) -> TableLine {
    let item = blocked
        .iter()
        .find(|item| item.facts.table == error.table)
        .cloned()
        .unwrap_or_else(|| PlanItem::unobserved(&error.table, Decision::Skipped, String::new()));
    TableLine::new(
        PlanItem {
            reason: format!("{} failed: nothing decided for this table", error.operation),
            ..item
        },
        Outcome::Failed,
        Some(error.to_string()),
    )
}
