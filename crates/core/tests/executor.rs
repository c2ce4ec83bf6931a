//! The executor against an in-memory control plane: dry runs, bounded concurrency, and how
//! each kind of failure is reported.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use ddb_rollover::control::{ControlPlane, ControlPlaneError, ErrorKind};
use ddb_rollover::observed::{Billing, ObservedTable};
use ddb_rollover::plan::{CapacityChange, ClassChange, TableSpec};
use ddb_rollover::policy::{Capacity, Policy};
use ddb_rollover::{run, ApplyOptions, Operation, Outcome};

#[derive(Default)]
struct FakeDynamo {
    tables: Mutex<BTreeMap<String, ObservedTable>>,
    /// Calls that fail: (operation, table) -> kind.
    failures: BTreeMap<(&'static str, String), ErrorKind>,
    calls: Mutex<Vec<String>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
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

    /// Records the call, holds it open briefly so concurrency is observable, and fails it if asked.
    async fn call(&self, operation: &'static str, table: &str) -> Result<(), ControlPlaneError> {
        self.calls.lock().unwrap().push(format!("{operation} {table}"));
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(5)).await;
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
            .filter(|c| !c.starts_with("DescribeTable"))
            .cloned()
            .collect()
    }
}

impl ControlPlane for FakeDynamo {
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
        Ok(self.tables.lock().unwrap().get(name).cloned())
    }

    async fn create_table(&self, spec: &TableSpec) -> Result<(), ControlPlaneError> {
        self.call("CreateTable", &spec.name).await?;
        self.tables
            .lock()
            .unwrap()
            .insert(spec.name.clone(), ObservedTable::active(&spec.name, spec.billing));
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
}

const HOT: Capacity = Capacity {
    read: 300,
    write: 1000,
};

fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339).unwrap().with_timezone(&Utc)
}

fn outcomes(report: &ddb_rollover::RunReport) -> Vec<(String, Outcome)> {
    report
        .tables
        .iter()
        .map(|l| (l.item.table.clone(), l.outcome))
        .collect()
}

#[tokio::test]
async fn dry_run_changes_nothing() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT)]);
    let options = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    for operation in [Operation::CreateNew, Operation::ResizeOld] {
        let report = run(
            &fake,
            &Policy::default(),
            operation,
            at("2018-10-25T23:45:00Z"),
            options,
        )
        .await
        .unwrap();
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
        dry_run: false,
        concurrency: 3,
    };
    let report = run(
        &fake,
        &policy,
        Operation::CreateNew,
        at("2018-10-25T23:45:00Z"),
        options,
    )
    .await
    .unwrap();
    assert_eq!(report.summary.done, 21);
    let max = fake.max_in_flight.load(Ordering::SeqCst);
    assert!((2..=3).contains(&max), "max in flight {max}");
}

#[tokio::test]
async fn create_of_an_existing_table_counts_as_done() {
    let fake = FakeDynamo::default().fail("CreateTable", "timeseries_2018-10-26", ErrorKind::AlreadyExists);
    let report = run(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        at("2018-10-25T23:45:00Z"),
        ApplyOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-25".to_string(), Outcome::Done),
            ("timeseries_2018-10-26".to_string(), Outcome::Done),
        ]
    );
    assert!(report.succeeded());
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
    let report = run(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        at("2018-10-26T00:15:00Z"),
        ApplyOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-20".to_string(), Outcome::Deferred),
            ("timeseries_2018-10-21".to_string(), Outcome::Deferred),
            ("timeseries_2018-10-22".to_string(), Outcome::Failed),
            ("timeseries_2018-10-23".to_string(), Outcome::Done),
        ]
    );
    assert!(report.tables[2]
        .error
        .as_deref()
        .unwrap()
        .contains("injected Other"));
    assert!(!report.succeeded());
}

#[tokio::test]
async fn a_table_that_cannot_be_described_gets_no_action() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT), ("timeseries_2018-10-21", HOT)])
        .fail("DescribeTable", "timeseries_2018-10-20", ErrorKind::Other);
    let report = run(
        &fake,
        &Policy::default(),
        Operation::ResizeOld,
        at("2018-10-26T00:15:00Z"),
        ApplyOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        outcomes(&report),
        [
            ("timeseries_2018-10-20".to_string(), Outcome::Failed),
            ("timeseries_2018-10-21".to_string(), Outcome::Done),
        ]
    );
    assert_eq!(fake.mutating_calls(), ["UpdateTable timeseries_2018-10-21"]);
}

#[tokio::test]
async fn report_serializes_with_a_line_per_table() {
    let fake = FakeDynamo::with_tables(&[("timeseries_junk", HOT)]);
    let report = run(
        &fake,
        &Policy::default(),
        Operation::CreateNew,
        at("2018-10-25T23:45:00Z"),
        ApplyOptions::default(),
    )
    .await
    .unwrap();
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
