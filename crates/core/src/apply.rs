//! The executor: observes the tables, asks the planner, carries out its changes with bounded
//! concurrency and classifies every failure into done / deferred / failed.

use chrono::{DateTime, Utc};
use futures::stream::{self, StreamExt};

use crate::control::{ControlPlane, ControlPlaneError, ErrorKind};
use crate::observed::ObservedTable;
use crate::plan::{plan, Decision, Operation, Plan, PlanItem};
use crate::policy::Policy;
use crate::report::{Outcome, RunReport, TableLine};

#[derive(Clone, Copy, Debug)]
pub struct ApplyOptions {
    /// Plan and report, change nothing.
    pub dry_run: bool,
    /// Control-plane calls in flight at once.
    pub concurrency: usize,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            dry_run: false,
            concurrency: 8,
        }
    }
}

/// The tables a run could see, and the ones it could not describe.
#[derive(Debug, Default)]
pub struct Observation {
    pub tables: Vec<ObservedTable>,
    pub unreadable: Vec<ControlPlaneError>,
}

/// Lists every table named `{prefix}_...` and describes each. Tables that vanish between the
/// two calls are dropped; tables that cannot be described are returned as `unreadable`.
pub async fn observe<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    concurrency: usize,
) -> Result<Observation, ControlPlaneError> {
    let names = control.list_table_names(&policy.naming().name_prefix()).await?;
    let described: Vec<_> = stream::iter(names)
        .map(|name| async move { control.describe_table(&name).await })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let mut observation = Observation::default();
    for result in described {
        match result {
            Ok(Some(table)) => observation.tables.push(table),
            Ok(None) => {}
            Err(error) => observation.unreadable.push(error),
        }
    }
    Ok(observation)
}

/// Observe, plan and apply one operation: what a scheduled run does.
pub async fn run<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    operation: Operation,
    now: DateTime<Utc>,
    options: ApplyOptions,
) -> Result<RunReport, ControlPlaneError> {
    let mut reports = run_each(control, policy, &[operation], now, options).await?;
    Ok(reports.pop().expect("one report per operation"))
}

/// Observe once, then plan and apply each operation in turn against that one observation:
/// what `ddb-rollover plan` does for both operations without listing the tables twice.
pub async fn run_each<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    operations: &[Operation],
    now: DateTime<Utc>,
    options: ApplyOptions,
) -> Result<Vec<RunReport>, ControlPlaneError> {
    let observation = observe(control, policy, options.concurrency).await?;
    let mut reports = Vec::with_capacity(operations.len());
    for &operation in operations {
        let plan = plan(policy, now, &observation.tables, operation);
        reports.push(apply(control, plan, &observation.unreadable, options).await);
    }
    Ok(reports)
}

/// Carries out a plan. Tables that could not be described are reported as failed and get no
/// action, so a transient DescribeTable error never turns into a wrong decision.
pub async fn apply<C: ControlPlane>(
    control: &C,
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
    } = plan;
    let (blocked, items): (Vec<_>, Vec<_>) = items
        .into_iter()
        .partition(|item| unreadable.iter().any(|e| e.table == item.table));
    let mut lines: Vec<TableLine> = stream::iter(items)
        .map(|item| execute(control, item, options.dry_run))
        .buffered(options.concurrency.max(1))
        .collect()
        .await;
    lines.extend(unreadable.iter().map(|error| unreadable_line(error, &blocked)));
    lines.sort_by(|a, b| a.item.table.cmp(&b.item.table));
    tracing::info!(%operation, %at, tables = lines.len(), "run finished");
    RunReport::new(operation, at, prefix, current_period, options.dry_run, lines)
}

async fn execute<C: ControlPlane>(control: &C, item: PlanItem, dry_run: bool) -> TableLine {
    let result = match (&item.decision, dry_run) {
        (Decision::Create(_) | Decision::Update(_) | Decision::UpdateClass(_), true) => Ok(Outcome::Planned),
        (Decision::Create(spec), false) => match control.create_table(spec).await {
            Ok(()) => Ok(Outcome::Done),
            // A concurrent run, or a retry of this one, created it first.
            Err(e) if e.kind == ErrorKind::AlreadyExists => Ok(Outcome::Done),
            Err(e) => Err(e),
        },
        (Decision::Update(_) | Decision::UpdateClass(_), false) => {
            let sent = match &item.decision {
                Decision::Update(change) => control.update_capacity(change).await,
                Decision::UpdateClass(change) => control.update_table_class(change).await,
                _ => unreachable!("matched above"),
            };
            match sent {
                Ok(()) => Ok(Outcome::Done),
                Err(e) if matches!(e.kind, ErrorKind::InUse | ErrorKind::LimitExceeded) => {
                    tracing::warn!(table = %item.table, error = %e, "deferred");
                    return TableLine {
                        item,
                        outcome: Outcome::Deferred,
                        error: Some(e.message),
                    };
                }
                Err(e) => Err(e),
            }
        }
        (Decision::Unchanged, _) => Ok(Outcome::Unchanged),
        (Decision::Deferred { .. }, _) => Ok(Outcome::Deferred),
        (Decision::Skipped, _) => Ok(Outcome::Skipped),
        (Decision::Foreign, _) => Ok(Outcome::Foreign),
    };
    match result {
        Ok(outcome) => {
            if outcome == Outcome::Done {
                tracing::info!(table = %item.table, reason = %item.reason, "changed");
            }
            TableLine {
                item,
                outcome,
                error: None,
            }
        }
        Err(e) => {
            tracing::error!(table = %item.table, error = %e, "failed");
            TableLine {
                item,
                outcome: Outcome::Failed,
                error: Some(e.to_string()),
            }
        }
    }
}

fn unreadable_line(error: &ControlPlaneError, blocked: &[PlanItem]) -> TableLine {
    let item = blocked
        .iter()
        .find(|item| item.table == error.table)
        .cloned()
        .unwrap_or_else(|| PlanItem {
            table: error.table.clone(),
            period: None,
            age: None,
            phase: None,
            status: None,
            billing: None,
            decision: Decision::Skipped,
            reason: String::new(),
        });
    TableLine {
        item: PlanItem {
            reason: "DescribeTable failed: nothing decided for this table".into(),
            ..item
        },
        outcome: Outcome::Failed,
        error: Some(error.to_string()),
    }
}
