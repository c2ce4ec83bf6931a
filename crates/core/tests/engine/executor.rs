//! The executor against an in-memory control plane: dry runs, bounded concurrency, and how
//! each kind of failure is reported.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use ddb_rollover::plan::deferral::DeferralCause;
use ddb_rollover::plan::Decision;
use ddb_rollover::policy::scaling::{
    policy_name, DeregisterScaling, ObservedScalableTarget, ObservedScalingPolicy, RegisterScaling,
    ScalableDimension, ScalableKey, TargetValue,
};
use ddb_rollover::policy::settings::Billing;
use ddb_rollover::policy::settings::Capacity;
use ddb_rollover::policy::tags::TAG_FAMILY;
use ddb_rollover::policy::Policy;
use ddb_rollover::run::control::{Archives, Clock, ControlPlaneError, ErrorKind, Scaling, Tables};
use ddb_rollover::table::archive::ArchiveProof;
use ddb_rollover::table::changes::{
    CapacityChange, ClassChange, ExportRequest, SettingChange, TableSetting, TableSpec, TagChange, TtlChange,
};
use ddb_rollover::table::{ExportState, ExportStatus, ObservedTable, TableStatus, TtlState};
use ddb_rollover::{run, ApplyOptions, Operation, Outcome};

#[derive(Default)]
struct FakeDynamo {
    tables: Mutex<BTreeMap<String, ObservedTable>>,
    /// Calls that fail: (operation, table) -> kind.
    failures: BTreeMap<(&'static str, String), ErrorKind>,
    calls: Mutex<Vec<String>>,
    exports: Mutex<BTreeMap<String, ExportState>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// DescribeTable calls a created table stays CREATING for (0: ACTIVE at once).
    creating_for: usize,
    /// The tables still CREATING, with the DescribeTable calls left until ACTIVE.
    creating: Mutex<BTreeMap<String, usize>>,
    /// The tables DELETING, with the DescribeTable calls left until they are gone.
    deleting: Mutex<BTreeMap<String, usize>>,
    /// The fake's own clock: the instant it starts at (its first reading), and each wait since.
    epoch: OnceLock<Instant>,
    slept: Mutex<Vec<Duration>>,
}

impl FakeDynamo {
    fn with_tables(names: &[(&str, Capacity)]) -> Self {
        let fake = FakeDynamo::default();
        for (name, capacity) in names {
            fake.tables.lock().unwrap().insert(
                name.to_string(),
                ObservedTable::active(name, Billing::Provisioned(*capacity)),
            );
        }
        fake
    }

    fn fail(mut self, operation: &'static str, table: &str, kind: ErrorKind) -> Self {
        self.failures.insert((operation, table.to_string()), kind);
        self
    }

    /// Records the call, holds it open while the other calls in flight are polled (yielding,
    /// never sleeping) so concurrency is observable, and fails it if asked.
    async fn call(&self, operation: &'static str, table: &str) -> Result<(), ControlPlaneError> {
        self.calls.lock().unwrap().push(format!("{operation} {table}"));
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        for _ in 0..CALL_YIELDS {
            tokio::task::yield_now().await;
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        match self.failures.get(&(operation, table.to_string())) {
            Some(kind) => Err(ControlPlaneError {
                kind: *kind,
                operation,
                table: table.to_string(),
                message: format!("injected {kind:?}"),
            }),
            None => Ok(()),
        }
    }

    fn mutating_calls(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| !c.starts_with("Describe") && !c.starts_with("ListTags"))
            .cloned()
            .collect()
    }

    fn with_table<T>(&self, name: &str, f: impl FnOnce(&mut ObservedTable) -> T) -> Option<T> {
        self.tables.lock().unwrap().get_mut(name).map(f)
    }
}

/// How many times a call lets the other calls in flight run before it answers.
const CALL_YIELDS: usize = 8;

fn name_of(arn: &str) -> &str {
    arn.rsplit_once(":table/").map_or(arn, |(_, name)| name)
}

impl Tables for FakeDynamo {
    async fn list_table_names(&self, prefix: &str) -> Result<Vec<String>, ControlPlaneError> {
        Ok(self
            .tables
            .lock()
            .unwrap()
            .keys()
            .filter(|n| n.starts_with(prefix))
            .cloned()
            .collect())
    }

    async fn describe_table(&self, name: &str) -> Result<Option<ObservedTable>, ControlPlaneError> {
        self.call("DescribeTable", name).await?;
        let mut creating = self.creating.lock().unwrap();
        let mut deleting = self.deleting.lock().unwrap();
        let mut tables = self.tables.lock().unwrap();
        if let Some(left) = deleting.get_mut(name) {
            *left = left.saturating_sub(1);
            if *left == 0 {
                deleting.remove(name);
                tables.remove(name);
            }
        }
        if let Some(left) = creating.get_mut(name) {
            *left = left.saturating_sub(1);
            if *left == 0 {
                creating.remove(name);
                if let Some(table) = tables.get_mut(name) {
                    table.status = TableStatus::Active;
                }
            }
        }
        // DescribeTable's part only: tags, TTL, backups and targets have their own calls.
        Ok(tables.get(name).map(ObservedTable::described_only))
    }

    async fn create_table(&self, spec: &TableSpec) -> Result<(), ControlPlaneError> {
        let called = self.call("CreateTable", &spec.name).await;
        let mut table = ObservedTable::active(&spec.name, spec.billing);
        if let Err(e) = called {
            // Another run created it first: it exists, and this call says so.
            if e.kind == ErrorKind::AlreadyExists {
                self.tables.lock().unwrap().insert(spec.name.clone(), table);
            }
            return Err(e);
        }
        if self.creating_for > 0 {
            table.status = TableStatus::Creating;
            self.creating
                .lock()
                .unwrap()
                .insert(spec.name.clone(), self.creating_for);
        }
        self.tables.lock().unwrap().insert(spec.name.clone(), table);
        Ok(())
    }

    async fn update_table_class(&self, change: &ClassChange) -> Result<(), ControlPlaneError> {
        self.call("UpdateTable", &change.name).await?;
        if let Some(table) = self.tables.lock().unwrap().get_mut(&change.name) {
            table.table_class = change.to;
        }
        Ok(())
    }

    async fn update_capacity(&self, change: &CapacityChange) -> Result<(), ControlPlaneError> {
        self.call("UpdateTable", &change.name).await?;
        if let Some(table) = self.tables.lock().unwrap().get_mut(&change.name) {
            table.billing = change.to;
        }
        Ok(())
    }

    async fn list_tags(&self, arn: &str) -> Result<BTreeMap<String, String>, ControlPlaneError> {
        self.call("ListTagsOfResource", name_of(arn)).await?;
        Ok(self
            .with_table(name_of(arn), |t| t.tags.clone().unwrap_or_default())
            .unwrap_or_default())
    }

    async fn describe_ttl(&self, name: &str) -> Result<TtlState, ControlPlaneError> {
        self.call("DescribeTimeToLive", name).await?;
        let disabled = TtlState {
            status: "DISABLED".into(),
            attribute: None,
        };
        Ok(self
            .with_table(name, |t| t.ttl.clone())
            .flatten()
            .unwrap_or(disabled))
    }

    async fn describe_point_in_time_recovery(&self, name: &str) -> Result<bool, ControlPlaneError> {
        self.call("DescribeContinuousBackups", name).await?;
        Ok(self
            .with_table(name, |t| t.point_in_time_recovery.unwrap_or(false))
            .unwrap_or(false))
    }

    async fn describe_export(&self, table: &str, arn: &str) -> Result<ExportState, ControlPlaneError> {
        self.call("DescribeExport", table).await?;
        Ok(self.exports.lock().unwrap()[arn].clone())
    }

    async fn tag_table(&self, change: &TagChange) -> Result<(), ControlPlaneError> {
        self.call("TagResource", &change.name).await?;
        self.with_table(&change.name, |t| {
            t.tags
                .get_or_insert_with(BTreeMap::new)
                .extend(change.tags.clone())
        });
        Ok(())
    }

    async fn enable_ttl(&self, change: &TtlChange) -> Result<(), ControlPlaneError> {
        self.call("UpdateTimeToLive", &change.name).await?;
        self.with_table(&change.name, |t| {
            t.ttl = Some(TtlState {
                status: "ENABLED".into(),
                attribute: Some(change.attribute.clone()),
            })
        });
        Ok(())
    }

    async fn enable_point_in_time_recovery(&self, name: &str) -> Result<(), ControlPlaneError> {
        self.call("UpdateContinuousBackups", name).await?;
        self.with_table(name, |t| t.point_in_time_recovery = Some(true));
        Ok(())
    }

    async fn configure(&self, change: &SettingChange) -> Result<(), ControlPlaneError> {
        self.call("UpdateTable", &change.name).await?;
        self.with_table(&change.name, |t| match &change.setting {
            TableSetting::DeletionProtection(on) => t.deletion_protection = *on,
            TableSetting::Stream(stream) => t.stream = *stream,
            TableSetting::Encryption(_) | TableSetting::AddIndex(_) | TableSetting::Warm(_) => {}
        });
        Ok(())
    }

    async fn export_table(&self, request: &ExportRequest) -> Result<String, ControlPlaneError> {
        self.call("ExportTableToPointInTime", &request.name).await?;
        let mut exports = self.exports.lock().unwrap();
        let arn = format!("{}/export/{}", request.table_arn, exports.len());
        let state = ExportState {
            arn: arn.clone(),
            status: ExportStatus::Completed,
            export_time: None,
            end_time: None,
            failure: None,
        };
        exports.insert(arn.clone(), state);
        Ok(arn)
    }

    async fn delete_table(&self, name: &str) -> Result<(), ControlPlaneError> {
        self.call("DeleteTable", name).await?;
        let mut tables = self.tables.lock().unwrap();
        if tables.get(name).is_some_and(|t| t.deletion_protection) {
            return Err(ControlPlaneError {
                kind: ErrorKind::Other,
                operation: "DeleteTable",
                table: name.to_string(),
                message: "protected".into(),
            });
        }
        tables.remove(name);
        Ok(())
    }
}

impl Clock for FakeDynamo {
    fn now(&self) -> std::time::Instant {
        *self.epoch.get_or_init(Instant::now) + self.slept.lock().unwrap().iter().sum::<Duration>()
    }

    /// Waits move the fake's own clock, never the wall clock.
    async fn sleep(&self, duration: Duration) {
        self.slept.lock().unwrap().push(duration);
    }
}

impl Archives for FakeDynamo {
    /// Every completed export's files are in this fake's S3.
    async fn prove_archive(&self, table: &str, export: &str) -> Result<ArchiveProof, ControlPlaneError> {
        let exports = self.exports.lock().unwrap();
        let completed = exports
            .get(export)
            .is_some_and(|e| e.status == ExportStatus::Completed);
        Ok(if completed {
            ArchiveProof::Proven {
                export: export.to_string(),
                bucket: "my-archive".into(),
                manifest: format!("ddb-rollover/{table}/AWSDynamoDB/1/manifest-summary.json"),
                items: 0,
                files: 1,
            }
        } else {
            ArchiveProof::Unproven {
                export: export.to_string(),
                reason: "no such completed export".into(),
            }
        })
    }
}

impl Scaling for FakeDynamo {
    async fn describe_scaling(
        &self,
        tables: &[String],
    ) -> Result<Vec<ObservedScalableTarget>, ControlPlaneError> {
        self.call("DescribeScalableTargets", "").await?;
        let known = self.tables.lock().unwrap();
        Ok(tables
            .iter()
            .filter_map(|name| known.get(name))
            .flat_map(|t| t.scaling.clone().unwrap_or_default())
            .collect())
    }

    async fn register_scaling(&self, change: &RegisterScaling) -> Result<(), ControlPlaneError> {
        self.call("RegisterScalableTarget", &change.name).await
    }

    async fn deregister_scaling(&self, change: &DeregisterScaling) -> Result<(), ControlPlaneError> {
        self.call("DeregisterScalableTarget", &change.name).await?;
        self.with_table(&change.name, |t| t.scaling = Some(Vec::new()));
        Ok(())
    }
}

const HOT: Capacity = Capacity {
    read: 300,
    write: 1000,
};

fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339).unwrap().with_timezone(&Utc)
}

/// Each table's main item (its first): template upkeep items follow it.
fn outcomes(report: &ddb_rollover::RunReport) -> Vec<(String, Outcome)> {
    let mut main: Vec<(String, Outcome)> = report
        .tables
        .iter()
        .map(|l| (l.item.table.clone(), l.outcome))
        .collect();
    main.dedup_by(|b, a| a.0 == b.0);
    main
}

/// One run of `operation` under `policy` on `fake`, at the simulated instant `at` (RFC 3339).
async fn run_at(
    fake: &FakeDynamo,
    policy: &Policy,
    operation: Operation,
    at: &str,
    options: ApplyOptions,
) -> ddb_rollover::RunReport {
    let now = simulated(policy, operation, self::at(at));
    run(fake, policy, operation, &now, options).await.unwrap()
}

/// A simulation's instant (`allow_future_clock`), as the engine's entries take it.
fn simulated(policy: &Policy, operation: Operation, at: DateTime<Utc>) -> ddb_rollover::CheckedInstant {
    ddb_rollover::run::clock::simulation(policy, &[operation], at).expect("a labelled instant")
}

#[tokio::test]
async fn dry_run_changes_nothing() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT)]);
    let options = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    for operation in [Operation::CreateNew, Operation::ResizeOld] {
        let report = run_at(
            &fake,
            &Policy::default(),
            operation,
            "2018-10-25T23:45:00Z",
            options,
        )
        .await;
        assert!(report.dry_run);
        assert!(report.summary.planned >= 1, "{report:#?}");
        assert_eq!(report.summary.done, 0);
    }
    assert_eq!(fake.mutating_calls(), Vec::<String>::new());
}

#[tokio::test]
async fn concurrency_is_bounded() {
    let policy = Policy::from_toml("premake = 20").unwrap();
    let fake = FakeDynamo::default();
    let options = ApplyOptions {
        concurrency: 3,
        ..ApplyOptions::default()
    };
    let report = run_at(
        &fake,
        &policy,
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        options,
    )
    .await;
    assert_eq!(report.summary.done, 21);
    let max = fake.max_in_flight.load(Ordering::SeqCst);
    assert!((2..=3).contains(&max), "max in flight {max}");
}

#[tokio::test]
async fn create_of_an_existing_table_counts_as_done() {
    let fake = FakeDynamo::default().fail("CreateTable", "timeseries_2018-10-26", ErrorKind::AlreadyExists);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-25".to_string(), Outcome::Done),
            ("timeseries_2018-10-26".to_string(), Outcome::Done),
        ]
    );
    assert!(report.succeeded());
}

/// The account's table quota (or its 500 operations in progress) refuses the next period's
/// table: writes would fail at the boundary, so the run fails, naming the quota and what to do.
/// A busy answer fails it just the same: only a table that exists and is CREATING is on its way.
#[tokio::test]
async fn a_refused_create_of_the_next_periods_table_fails_the_run_naming_the_quota() {
    for kind in [ErrorKind::LimitExceeded, ErrorKind::InUse, ErrorKind::Other] {
        let fake = FakeDynamo::default().fail("CreateTable", "timeseries_2018-10-26", kind);
        let report = run_at(
            &fake,
            &Policy::default(),
            Operation::CreateNew,
            "2018-10-25T23:45:00Z",
            ApplyOptions::default(),
        )
        .await;
        assert!(!report.succeeded(), "{kind:?}");
        assert_eq!(
            outcomes(&report),
            [
                ("timeseries_2018-10-25".to_string(), Outcome::Done),
                ("timeseries_2018-10-26".to_string(), Outcome::Failed),
            ]
        );
        let error = report.tables[1].error.clone().unwrap();
        assert_eq!(
            error.contains("2,500 tables per Region") && error.contains("retention.delete_after"),
            kind == ErrorKind::LimitExceeded,
            "{error}"
        );
    }
}

/// Out of time: changes not started by the deadline are deferred (no call is sent), except a
/// period's table, whose missing create fails the run.
#[tokio::test]
async fn past_the_deadline_changes_are_deferred_and_a_missing_periods_table_fails() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT), ("timeseries_2018-10-21", HOT)]);
    let past = Some(fake.now());
    let options = ApplyOptions {
        deadline: past,
        ..ApplyOptions::default()
    };
    let resize = run_at(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        options,
    )
    .await;
    assert!(resize.succeeded());
    // Both tables' capacity changes (no template: no tags read, no tag upkeep).
    assert_eq!(resize.summary.deferred, 2, "{resize:#?}");
    assert!(resize.tables[0].error.as_deref().unwrap().contains("time budget"));
    assert_eq!(resize.tables[0].deferral, Some(DeferralCause::TimeBudget));
    let create = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        options,
    )
    .await;
    assert!(!create.succeeded());
    assert_eq!(create.summary.failed, 2, "{create:#?}");
    // No time left to wait, and nothing created: the next table is not ready.
    let ready = create.next_table_ready.as_ref().unwrap();
    assert!(!ready.ready);
    assert_eq!(ready.missing, ["timeseries_2018-10-25", "timeseries_2018-10-26"]);
    assert!(fake.mutating_calls().is_empty(), "{:?}", fake.mutating_calls());

    // With time left, the same runs go ahead.
    let options = ApplyOptions {
        deadline: Some(fake.now() + Duration::from_secs(60)),
        ..ApplyOptions::default()
    };
    let resize = run_at(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        options,
    )
    .await;
    assert_eq!(resize.summary.done, 2, "{resize:#?}");
}

#[tokio::test]
async fn busy_or_limited_updates_are_deferred_and_others_fail_without_stopping_the_run() {
    let fake = FakeDynamo::with_tables(&[
        ("timeseries_2018-10-20", HOT),
        ("timeseries_2018-10-21", HOT),
        ("timeseries_2018-10-22", HOT),
        ("timeseries_2018-10-23", HOT),
    ])
    .fail("UpdateTable", "timeseries_2018-10-20", ErrorKind::InUse)
    .fail("UpdateTable", "timeseries_2018-10-21", ErrorKind::LimitExceeded)
    .fail("UpdateTable", "timeseries_2018-10-22", ErrorKind::Other);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-20".to_string(), Outcome::Deferred),
            ("timeseries_2018-10-21".to_string(), Outcome::Deferred),
            ("timeseries_2018-10-22".to_string(), Outcome::Failed),
            ("timeseries_2018-10-23".to_string(), Outcome::Done),
        ]
    );
    let failed = report.lines_with(Outcome::Failed).next().unwrap();
    assert!(failed.error.as_deref().unwrap().contains("injected Other"));
    // A runtime refusal has no deferred decision: the line says why.
    let causes: Vec<_> = report.tables.iter().map(|l| l.deferral).collect();
    assert_eq!(
        causes,
        [
            Some(DeferralCause::TableBusy),
            Some(DeferralCause::LimitExceeded),
            None,
            None
        ]
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["tables"][0]["deferral"], "table_busy");
    assert_eq!(json["tables"][0]["decision"]["action"], "update");
    assert!(json["tables"][3].get("deferral").is_none(), "skipped when none");
    assert!(
        json.get("next_table_ready").is_none(),
        "resize_old says nothing of it"
    );
    assert!(!report.succeeded());
    // Refusals at run time are recorded on the table for `status`.
    let deferral = fake
        .with_table("timeseries_2018-10-20", |t| t.tags.clone().unwrap_or_default())
        .unwrap()
        .remove("ddb-rollover:last-deferral")
        .expect("the deferral is tagged");
    assert!(
        deferral.starts_with("2018-10-26T00:15:00+00:00 update: injected"),
        "{deferral}"
    );
}

#[tokio::test]
async fn a_table_that_cannot_be_described_gets_no_action() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT), ("timeseries_2018-10-21", HOT)])
        .fail("DescribeTable", "timeseries_2018-10-20", ErrorKind::Other);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-20".to_string(), Outcome::Failed),
            ("timeseries_2018-10-21".to_string(), Outcome::Done),
        ]
    );
    let calls = fake.mutating_calls();
    assert!(
        calls.iter().all(|c| c.ends_with("timeseries_2018-10-21")),
        "{calls:?}"
    );
    assert!(calls.contains(&"UpdateTable timeseries_2018-10-21".to_string()));
}

#[tokio::test]
async fn report_serializes_with_a_line_per_table() {
    let fake = FakeDynamo::with_tables(&[("timeseries_junk", HOT)]);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["operation"], "create_new");
    assert_eq!(json["summary"]["done"], 2);
    assert_eq!(json["summary"]["foreign"], 1);
    let lines = json["tables"].as_array().unwrap();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["table"], "timeseries_2018-10-25");
    assert_eq!(lines[0]["decision"]["action"], "create");
    assert_eq!(lines[0]["outcome"], "done");
    assert_eq!(lines[2]["outcome"], "foreign");
}

/// A policy that archives after 2 days and deletes after 4, one deletion per run.
fn retention_policy(extra: &str) -> Policy {
    Policy::from_toml(&format!(
        "[retention]\narchive_after = 2\nbucket = \"archive\"\ndelete_after = 4\nmax_deletes_per_run = 1\nkeep_newest = 2\n{extra}"
    ))
    .unwrap()
}

fn old_tables(days: std::ops::RangeInclusive<u32>) -> FakeDynamo {
    let names: Vec<String> = days.map(|d| format!("timeseries_2018-10-{d:02}")).collect();
    let fake = FakeDynamo::with_tables(&names.iter().map(|n| (n.as_str(), HOT)).collect::<Vec<_>>());
    for name in &names {
        // Made by this family: our family tag, the policy's key (as DescribeTable gives it).
        fake.with_table(name, |t| {
            t.key = Some(Policy::default().key);
            t.tags = Some(BTreeMap::from([(
                TAG_FAMILY.to_string(),
                "timeseries".to_string(),
            )]));
            t.point_in_time_recovery = Some(true);
        });
    }
    fake
}

#[tokio::test]
async fn a_failed_export_or_delete_blocks_neither_other_tables_nor_create_new() {
    // On 10-26: 10-20 and 10-21 are due for deletion (age 6, 5) but not archived; 10-22 (age 4)
    // too; 10-23 (age 3) and 10-24 (age 2) are due for archiving.
    let fake = old_tables(20..=24).fail(
        "ExportTableToPointInTime",
        "timeseries_2018-10-20",
        ErrorKind::Other,
    );
    let policy = retention_policy("");
    let now = at("2018-10-26T00:15:00Z");
    let report = run(
        &fake,
        &policy,
        Operation::ResizeOld,
        &simulated(&policy, Operation::ResizeOld, now),
        ApplyOptions::default(),
    )
    .await
    .unwrap();
    let exports: Vec<(String, Outcome)> = report
        .tables
        .iter()
        .filter(|l| l.item.decision.action() == "export")
        .map(|l| (l.item.table.clone(), l.outcome))
        .collect();
    assert_eq!(
        exports,
        [
            ("timeseries_2018-10-20".to_string(), Outcome::Failed),
            ("timeseries_2018-10-21".to_string(), Outcome::Done),
            ("timeseries_2018-10-22".to_string(), Outcome::Done),
            ("timeseries_2018-10-23".to_string(), Outcome::Done),
            ("timeseries_2018-10-24".to_string(), Outcome::Done),
        ]
    );
    // Nothing was deleted before its export completed.
    assert!(!fake.mutating_calls().iter().any(|c| c.starts_with("DeleteTable")));
    assert_eq!(report.summary.failed, 1);

    let created = run_at(
        &fake,
        &policy,
        Operation::CreateNew,
        "2018-10-26T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert!(created.succeeded(), "{created:?}");
    assert!(fake.tables.lock().unwrap().contains_key("timeseries_2018-10-27"));

    // The next run records the completed exports; 10-20 is exported again. This control plane
    // has no resource-based policies: no table is sealed against writes, so no archived table
    // is deleted, each saying why.
    let report = run_at(
        &fake,
        &policy,
        Operation::ResizeOld,
        "2018-10-27T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    let deleted: Vec<&str> = report
        .lines_with(Outcome::Done)
        .filter(|l| l.item.decision.action() == "delete")
        .map(|l| l.item.table.as_str())
        .collect();
    assert!(deleted.is_empty(), "{deleted:?}");
    for table in ["timeseries_2018-10-21", "timeseries_2018-10-22"] {
        let kept = report
            .tables
            .iter()
            .find(|l| l.item.table == table && l.outcome == Outcome::Deferred)
            .unwrap_or_else(|| panic!("{table} is kept: {report:#?}"));
        assert!(
            kept.item.reason.contains("cannot be sealed"),
            "{}",
            kept.item.reason
        );
    }
}

#[tokio::test]
async fn deletion_protection_is_lifted_right_before_the_delete_and_the_newest_are_kept() {
    let fake = old_tables(10..=25);
    for day in 10..=25 {
        fake.with_table(&format!("timeseries_2018-10-{day:02}"), |t| {
            t.deletion_protection = true;
            t.tags = Some(BTreeMap::from([
                ("ddb-rollover:archived".to_string(), "x".to_string()),
                ("ddb-rollover:family".to_string(), "timeseries".to_string()),
            ]));
        });
    }
    let policy = Policy::from_toml(
        "[template]\ndeletion_protection = true\n[retention]\ndelete_after = 2\nkeep_newest = 14\nmax_deletes_per_run = 5",
    )
    .unwrap();
    run_at(
        &fake,
        &policy,
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    let calls = fake.mutating_calls();
    let deletes = calls.iter().filter(|c| c.starts_with("DeleteTable")).count();
    // 16 tables, the newest 14 kept: only 10-10 and 10-11 go, each unprotected just before
    // (the other tables' UpdateTable calls are their capacity changes).
    assert_eq!(deletes, 2);
    for day in ["10-10", "10-11"] {
        let table_calls: Vec<&String> = calls.iter().filter(|c| c.ends_with(day)).collect();
        assert_eq!(
            table_calls,
            [
                &format!("UpdateTable timeseries_2018-{day}"),
                &format!("DeleteTable timeseries_2018-{day}")
            ]
        );
    }
}

/// A table registered by the autoscaling policy below (read side only is enough).
fn autoscaled(name: &str, capacity: Capacity) -> ObservedTable {
    let mut table = ObservedTable::active(name, Billing::Provisioned(capacity));
    let dimension = ScalableDimension::TableRead;
    table.scaling = Some(vec![ObservedScalableTarget {
        key: ScalableKey {
            resource_id: format!("table/{name}"),
            dimension,
        },
        min: 5,
        max: 500,
        policies: vec![ObservedScalingPolicy {
            name: policy_name("timeseries", dimension),
            policy_type: "TargetTrackingScaling".into(),
            metric: Some(dimension.metric().into()),
            target_value: Some(TargetValue(70.0)),
        }],
        scheduled_actions: Vec::new(),
    }]);
    table
}

#[tokio::test]
async fn a_capacity_change_waits_until_the_scalable_targets_are_gone() {
    let policy = Policy::from_toml(
        "[[phases]]\nmin_age = 0\nautoscaling = { min_read = 5, max_read = 500, min_write = 5, max_write = 500 }\n\
         [[phases]]\nmin_age = 1\nread = 1\nwrite = 1",
    )
    .unwrap();
    let table = "timeseries_2018-10-24";
    for (kind, outcome) in [
        (ErrorKind::Other, Outcome::Failed),
        (ErrorKind::InUse, Outcome::Deferred),
    ] {
        let fake = FakeDynamo::default().fail("DeregisterScalableTarget", table, kind);
        fake.tables
            .lock()
            .unwrap()
            .insert(table.into(), autoscaled(table, HOT));
        let report = run_at(
            &fake,
            &policy,
            Operation::ResizeOld,
            "2018-10-26T00:15:00Z",
            ApplyOptions::default(),
        )
        .await;
        let lines: Vec<_> = report
            .tables
            .iter()
            .map(|l| (l.item.decision.action(), l.outcome))
            .collect();
        assert_eq!(
            lines,
            [("deregister_scaling", outcome), ("update", Outcome::Deferred)]
        );
        assert_eq!(
            report.tables[1].deferral,
            Some(DeferralCause::ScalingStillAttached)
        );
        // No UpdateTable (the deferral is recorded in the table's tag, as any other).
        let calls: Vec<String> = fake
            .mutating_calls()
            .into_iter()
            .filter(|c| !c.starts_with("TagResource"))
            .collect();
        assert_eq!(calls, [format!("DeregisterScalableTarget {table}")]);
    }
    // Once deregistered, the same run goes on to the capacity change.
    let fake = FakeDynamo::default();
    fake.tables
        .lock()
        .unwrap()
        .insert(table.into(), autoscaled(table, HOT));
    let report = run_at(
        &fake,
        &policy,
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert_eq!(report.summary.done, 2, "{:#?}", report.tables);
    assert_eq!(
        fake.mutating_calls(),
        [
            format!("DeregisterScalableTarget {table}"),
            format!("UpdateTable {table}")
        ]
    );
}

fn describe_calls(fake: &FakeDynamo) -> usize {
    fake.calls
        .lock()
        .unwrap()
        .iter()
        .filter(|c| c.starts_with("DescribeTable"))
        .count()
}

/// Tables a create_new run just made are CREATING: the run polls them until ACTIVE before it
/// says whether the next table is ready; tables already ACTIVE cost no call.
#[tokio::test]
async fn create_new_waits_for_the_tables_it_created_then_reports_them_ready() {
    let fake = FakeDynamo {
        creating_for: 2,
        ..FakeDynamo::default()
    };
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    let ready = report.next_table_ready.clone().unwrap();
    assert!(ready.ready, "{ready:#?}");
    assert_eq!(ready.tables.len(), 2);
    assert!(ready.tables.iter().all(|t| t.status.as_deref() == Some("ACTIVE")));
    // Polled at once (CREATING), then after 0.5 s on the control plane's clock (ACTIVE): two
    // polls each, one wait.
    assert_eq!(describe_calls(&fake), 4);
    assert_eq!(*fake.slept.lock().unwrap(), [Duration::from_millis(500)]);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["next_table_ready"]["ready"], true);

    // Both exist and are ACTIVE: the observation's DescribeTable calls and no more.
    let before = describe_calls(&fake);
    let again = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:50:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert!(again.next_table_ready.unwrap().ready);
    assert_eq!(describe_calls(&fake) - before, 2);

    // Dry runs say nothing.
    let dry = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:50:00Z",
        ApplyOptions {
            dry_run: true,
            ..ApplyOptions::default()
        },
    )
    .await;
    assert_eq!(dry.next_table_ready, None);
}

/// A table still CREATING when the wait ends is not ready; the wait ends at the run's deadline.
#[tokio::test]
async fn a_table_still_creating_when_the_wait_ends_is_not_ready() {
    let fake = FakeDynamo {
        creating_for: usize::MAX,
        ..FakeDynamo::default()
    };
    let started = std::time::Instant::now();
    let options = ApplyOptions {
        readiness_wait: Duration::from_secs(3),
        deadline: Some(fake.now() + Duration::from_millis(2500)),
        ..ApplyOptions::default()
    };
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        options,
    )
    .await;
    // Waited 0.5 s, 1 s, then what was left of the budget, on the control plane's clock (the
    // deadline is read on it too); the wall clock barely moved, however loaded the machine.
    let waited: Duration = fake.slept.lock().unwrap().iter().sum();
    assert_eq!(
        *fake.slept.lock().unwrap(),
        [
            Duration::from_millis(500),
            Duration::from_millis(1000),
            Duration::from_millis(1000)
        ]
    );
    assert_eq!(waited, Duration::from_millis(2500));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(report.succeeded(), "created, not failed");
    let ready = report.next_table_ready.unwrap();
    assert!(!ready.ready);
    assert_eq!(
        ready.not_active,
        ["timeseries_2018-10-25", "timeseries_2018-10-26"]
    );
    assert!(ready.missing.is_empty());
    assert_eq!(
        ready.line(),
        "NOT READY: timeseries_2018-10-25 CREATING, timeseries_2018-10-26 CREATING"
    );
}

/// The next period's name held by a table that is not the policy's: blocked, and not ready.
#[tokio::test]
async fn a_foreign_table_holding_the_next_name_is_not_ready() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-25", HOT)]);
    let mut foreign = ObservedTable::active("timeseries_2018-10-26", Billing::Provisioned(HOT));
    foreign.tags = Some(BTreeMap::from([(
        "ddb-rollover:family".to_string(),
        "other".to_string(),
    )]));
    fake.tables.lock().unwrap().insert(foreign.name.clone(), foreign);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    let ready = report.next_table_ready.unwrap();
    assert!(!ready.ready, "{ready:#?}");
    assert_eq!(ready.not_active, ["timeseries_2018-10-26"]);
    assert!(ready.tables[1].foreign);
}

/// Finding (issue 18): with the pre-built table DELETING (someone deleted it), create_new said
/// NOT READY and exited 0, leaving the period without a table until the next day's run. Now the
/// run waits (on the control plane's clock) until the table is gone, creates it again, and is
/// ready.
#[tokio::test]
async fn a_deleted_pre_built_table_is_created_again_once_it_is_gone() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-25", HOT), ("timeseries_2018-10-26", HOT)]);
    fake.with_table("timeseries_2018-10-26", |t| t.status = TableStatus::Deleting);
    // Gone at the third DescribeTable: the observation's, then two polls.
    fake.deleting
        .lock()
        .unwrap()
        .insert("timeseries_2018-10-26".into(), 3);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    let line = report
        .tables
        .iter()
        .find(|l| l.item.table == "timeseries_2018-10-26")
        .unwrap();
    assert_eq!(line.item.decision.action(), "recreate");
    assert_eq!(line.outcome, Outcome::Done, "{line:#?}");
    assert!(report.succeeded(), "{report:#?}");
    assert!(report.next_table_ready.as_ref().unwrap().ready);
    // Read back from the fake: the table exists again, ACTIVE.
    let table = fake.with_table("timeseries_2018-10-26", |t| t.status.clone());
    assert_eq!(table, Some(TableStatus::Active));
    assert!(fake
        .mutating_calls()
        .contains(&"CreateTable timeseries_2018-10-26".to_string()));
}

/// A period's table still DELETING when the run's wait ends, or missing at the end of the run,
/// fails the run: exit 1 from the CLI, a function error from Lambda, NextTableReady 0.
#[tokio::test]
async fn a_period_table_still_deleting_or_missing_at_the_end_fails_the_run() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-25", HOT), ("timeseries_2018-10-26", HOT)]);
    fake.with_table("timeseries_2018-10-26", |t| t.status = TableStatus::Deleting);
    fake.deleting
        .lock()
        .unwrap()
        .insert("timeseries_2018-10-26".into(), usize::MAX);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions {
            readiness_wait: Duration::from_secs(30),
            ..ApplyOptions::default()
        },
    )
    .await;
    assert!(!report.succeeded(), "{report:#?}");
    let line = report
        .tables
        .iter()
        .find(|l| l.item.table == "timeseries_2018-10-26")
        .unwrap();
    assert_eq!(line.outcome, Outcome::Failed);
    assert!(
        line.error
            .as_deref()
            .unwrap_or_default()
            .contains("still DELETING"),
        "{line:#?}"
    );
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(!ready.ready);
    assert_eq!(ready.not_active, ["timeseries_2018-10-26"]);
    let waited: Duration = fake.slept.lock().unwrap().iter().sum();
    assert!(waited <= Duration::from_secs(30), "{waited:?}");

    // A table created by the run and deleted (by someone else) before its end: missing at the
    // end, so the run fails although every call it made succeeded.
    let fake = FakeDynamo {
        creating_for: 1,
        ..FakeDynamo::default()
    };
    fake.deleting
        .lock()
        .unwrap()
        .insert("timeseries_2018-10-26".into(), 1);
    let report = run_at(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        "2018-10-25T23:45:00Z",
        ApplyOptions::default(),
    )
    .await;
    assert!(!report.succeeded(), "{report:#?}");
    let lost: Vec<_> = report
        .lines_with(Outcome::Failed)
        .map(|l| l.item.table.as_str())
        .collect();
    assert_eq!(lost, ["timeseries_2018-10-26"], "{report:#?}");
    assert_eq!(
        report.next_table_ready.unwrap().missing,
        ["timeseries_2018-10-26"]
    );
}

/// The changes `status` predicts for `operation`, per table (main item, then the other steps),
/// and the changes a run's report lines carry.
fn predicted(
    status: &ddb_rollover::run::status::StatusReport,
    operation: Operation,
) -> BTreeMap<String, Vec<&'static str>> {
    status
        .tables
        .iter()
        .map(|line| {
            let main = match operation {
                Operation::CreateNew => &line.create_new,
                Operation::ResizeOld => &line.resize_old,
            };
            let actions: Vec<&'static str> = main
                .iter()
                .map(|n| &n.decision)
                .chain(
                    line.other_changes
                        .iter()
                        .filter(|c| c.operation == operation)
                        .map(|c| &c.decision),
                )
                .filter(|d| d.is_change() || matches!(d, Decision::Blocked))
                .map(Decision::action)
                .collect();
            (line.table.clone(), actions)
        })
        .filter(|(_, actions)| !actions.is_empty())
        .collect()
}

fn made(report: &ddb_rollover::RunReport) -> BTreeMap<String, Vec<&'static str>> {
    let mut made: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for line in report
        .tables
        .iter()
        .filter(|l| l.item.decision.is_change() || matches!(l.item.decision, Decision::Blocked))
    {
        made.entry(line.item.table.clone())
            .or_default()
            .push(line.item.decision.action());
    }
    made
}

/// Finding (issue 18): a table named `{prefix}_{label}` that carries another family's tag was
/// "another family's, never touched" in status, while create_new raised one and resize_old
/// lowered another (the runs read no tags for names of our shape). Now create_new reads the
/// tags of the tables writers use, so it refuses the pre-built one loudly, and status plans
/// each operation on what its run reads: it predicts resize_old's change exactly, with the
/// same verdict, and warns that on AWS the role refuses it.
#[tokio::test]
async fn status_predicts_each_run_exactly_and_names_what_only_it_can_see() {
    let fake = FakeDynamo::with_tables(&[
        ("timeseries_2018-10-20", HOT),
        ("timeseries_2018-10-24", Capacity { read: 1, write: 1 }),
        ("timeseries_2018-10-25", HOT),
        ("timeseries_2018-10-26", Capacity { read: 1, write: 1 }),
    ]);
    let other_family = BTreeMap::from([(TAG_FAMILY.to_string(), "timeseries_eu".to_string())]);
    let ours = BTreeMap::from([(TAG_FAMILY.to_string(), "timeseries".to_string())]);
    for (name, tags) in [
        ("timeseries_2018-10-20", &other_family),
        ("timeseries_2018-10-24", &ours),
        ("timeseries_2018-10-25", &ours),
        ("timeseries_2018-10-26", &other_family),
    ] {
        fake.with_table(name, |t| {
            t.key = Some(Policy::default().key);
            t.tags = Some(tags.clone());
        });
    }
    let policy = Policy::default();
    for (operation, now) in [
        (Operation::CreateNew, at("2018-10-25T23:45:00Z")),
        (Operation::ResizeOld, at("2018-10-26T00:15:00Z")),
    ] {
        let observation = ddb_rollover::observe(&fake, &policy, ddb_rollover::Scope::Full, 4)
            .await
            .unwrap();
        let status = ddb_rollover::run::status::status(&policy, now, &observation.tables);
        let report = run(
            &fake,
            &policy,
            operation,
            &simulated(&policy, operation, now),
            ApplyOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(
            predicted(&status, operation),
            made(&report),
            "{operation}: {status:#?}"
        );
        // The same verdict, line by line.
        for line in &report.tables {
            let Some(status_line) = status.tables.iter().find(|l| l.table == line.item.table) else {
                continue;
            };
            let next = match operation {
                Operation::CreateNew => &status_line.create_new,
                Operation::ResizeOld => &status_line.resize_old,
            };
            assert_eq!(
                next.as_ref().and_then(|n| n.verdict.as_ref()),
                line.item.verdict.as_ref(),
                "{operation} {}",
                line.item.table
            );
        }
        match operation {
            Operation::CreateNew => {
                // The pre-built table carries another family's tag: blocked, the run fails.
                assert_eq!(made(&report)["timeseries_2018-10-26"], ["blocked"]);
                assert!(!report.succeeded());
            }
            Operation::ResizeOld => {
                // 10-20 is lowered by a run that reads no tags for it; status says so, and why
                // it would fail on AWS.
                assert_eq!(made(&report)["timeseries_2018-10-20"], ["update"]);
                assert!(
                    status.warnings.iter().any(|w| w
                        .starts_with("timeseries_2018-10-20: its tags make it not ours")
                        && w.contains("aws:ResourceTag")),
                    "{:#?}",
                    status.warnings
                );
            }
        }
    }
}

/// The pacing wrapper the CLI and the functions run through passes the archive and import
/// calls on (a default method left in place would answer Unsupported and keep every archived
/// table forever).
#[tokio::test]
async fn pacing_passes_the_archive_calls_on() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT)]);
    let arn = fake
        .export_table(&ExportRequest {
            name: "timeseries_2018-10-20".into(),
            table_arn: "arn:aws:dynamodb:us-east-1:123456789012:table/timeseries_2018-10-20".into(),
            bucket: "my-archive".into(),
            prefix: "ddb-rollover/timeseries_2018-10-20/".into(),
            after_seal: false,
        })
        .await
        .unwrap();
    let paced = ddb_rollover::run::pace::Paced::new(fake, Default::default());
    let proof = paced.prove_archive("timeseries_2018-10-20", &arn).await.unwrap();
    assert!(proof.is_proven(), "{proof:?}");
    let error = paced.find_archives("t", "b", "p/").await.unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Unsupported,
        "the fake's own answer, passed on"
    );
}
