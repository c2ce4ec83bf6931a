//! The executor tests' in-memory control plane: a table map with injected failures, CREATING
//! and DELETING for a number of describes, the calls in flight, and its own clock moved only by
//! its waits.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use ddb_rollover::policy::scaling::{DeregisterScaling, ObservedScalableTarget, RegisterScaling};
use ddb_rollover::policy::settings::Billing;
use ddb_rollover::policy::settings::Capacity;
use ddb_rollover::run::control::{Archives, Clock, ControlPlaneError, ErrorKind, Scaling, Tables};
use ddb_rollover::table::archive::ArchiveProof;
use ddb_rollover::table::changes::{
    CapacityChange, ClassChange, ExportRequest, SettingChange, TableSetting, TableSpec, TagChange, TtlChange,
};
use ddb_rollover::table::{ExportState, ExportStatus, ObservedTable, TableStatus, TtlState};

#[derive(Default)]
pub(super) struct FakeDynamo {
    pub(super) tables: Mutex<BTreeMap<String, ObservedTable>>,
    /// Calls that fail: (operation, table) -> kind.
    pub(super) failures: BTreeMap<(&'static str, String), ErrorKind>,
    pub(super) calls: Mutex<Vec<String>>,
    pub(super) exports: Mutex<BTreeMap<String, ExportState>>,
    pub(super) in_flight: AtomicUsize,
    pub(super) max_in_flight: AtomicUsize,
    /// DescribeTable calls a created table stays CREATING for (0: ACTIVE at once).
    pub(super) creating_for: usize,
    /// The tables still CREATING, with the DescribeTable calls left until ACTIVE.
    pub(super) creating: Mutex<BTreeMap<String, usize>>,
    /// The tables DELETING, with the DescribeTable calls left until they are gone.
    pub(super) deleting: Mutex<BTreeMap<String, usize>>,
    /// The fake's own clock: the instant it starts at (its first reading), and each wait since.
    pub(super) epoch: OnceLock<Instant>,
    pub(super) slept: Mutex<Vec<Duration>>,
}

impl FakeDynamo {
    pub(super) fn with_tables(names: &[(&str, Capacity)]) -> Self {
        let fake = FakeDynamo::default();
        for (name, capacity) in names {
            fake.tables.lock().unwrap().insert(
                name.to_string(),
                ObservedTable::active(name, Billing::Provisioned(*capacity)),
            );
        }
        fake
    }

    pub(super) fn fail(mut self, operation: &'static str, table: &str, kind: ErrorKind) -> Self {
        self.failures.insert((operation, table.to_string()), kind);
        self
    }

    /// Records the call, holds it open while the other calls in flight are polled (yielding,
    /// never sleeping) so concurrency is observable, and fails it if asked.
    pub(super) async fn call(&self, operation: &'static str, table: &str) -> Result<(), ControlPlaneError> {
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

    pub(super) fn mutating_calls(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| !c.starts_with("Describe") && !c.starts_with("ListTags"))
            .cloned()
            .collect()
    }

    pub(super) fn with_table<T>(&self, name: &str, f: impl FnOnce(&mut ObservedTable) -> T) -> Option<T> {
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
