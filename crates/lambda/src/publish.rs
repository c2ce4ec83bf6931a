//! What a run tells writers and other systems, so that no application re-derives periods, time
//! zones and labels: after each create_new run, the current and pre-built tables with their
//! `[start, end)` in UTC and status, in a Systems Manager parameter
//! (`/ddb-rollover/{prefix}/tables`); after each run of either function, an EventBridge event on
//! the default bus (source `ddb-rollover`) for each table created and ACTIVE, moved to another
//! phase, archived or deleted.
//!
//! Both are built from the run's report (pure, unit-tested here) and sent with the SDK's
//! Systems Manager and EventBridge clients (this crate's `ssm` and `eventbridge` features: only
//! create_new publishes the parameter, both functions events); the template's `PublishTables` and `PublishEvents` switch
//! them (`ROLLOVER_PUBLISH_TABLES`, `ROLLOVER_PUBLISH_EVENTS`), and grant `ssm:PutParameter` on
//! that one parameter and `events:PutEvents` for that source only. Dry runs publish nothing.
//!
//! The parameter describes now: the wall clock's current and next periods, `updated_at` the wall
//! clock when it was written; a run for another instant (a replay) leaves it alone (the handler
//! hands no readiness for now to [`tables_document`]). It is written only where it is ours
//! (`crate::parameter`): no parameter under the name, or the version our last write recorded in
//! the family's ledger; anything else is someone else's, reported and never overwritten.

use chrono::{DateTime, Utc};
use ddb_rollover::control::Ledger;
use ddb_rollover::policy::Ownership;
use ddb_rollover::policy::TAG_ARCHIVED;
use ddb_rollover::Decision;
use ddb_rollover::Policy;
use ddb_rollover::Readiness;
use ddb_rollover_aws::sdk::AwsClients;

#[cfg(feature = "eventbridge")]
use crate::explain::explain;
use crate::parameter::put_tables;
pub use crate::parameter::DOCUMENT_KEYS;
use ddb_rollover::{Operation, Outcome, RunReport};
use ddb_rollover_stack::parameters::PUBLISHING;
use serde_json::{json, Value};

/// A Standard-tier parameter holds at most 4 KB: the document keeps the current table and as
/// many pre-built ones as fit, and counts the rest (`omitted`).
pub const MAX_PARAMETER_BYTES: usize = 4096;

pub use ddb_rollover_aws::events::{
    Event, EVENT_SOURCE, PHASE_CHANGED, TABLE_ARCHIVED, TABLE_DELETED, TABLE_READY, TABLE_RESTORED,
};

/// The parameter's name for a policy's prefix.
pub fn parameter_name(prefix: &str) -> String {
    format!("/ddb-rollover/{prefix}/tables")
}

/// Which of the two the stack publishes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Publishing {
    /// The tables parameter, after each create_new run.
    pub tables: bool,
    /// The runs' events.
    pub events: bool,
}

impl Publishing {
    /// `PublishTables`' variable.
    pub const TABLES_VARIABLE: &'static str = PUBLISHING[0].name;
    /// `PublishEvents`' variable.
    pub const EVENTS_VARIABLE: &'static str = PUBLISHING[1].name;

    /// `"true"` turns each on; `"false"`, or no variable (a handler built in code, a local run),
    /// leaves it off. Lenient: the cold start checks the stack's values first
    /// ([`ddb_rollover_stack::environment::check_environment`]), so a function never reads `True` or `1` as off.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Publishing {
        let on = |name: &str| lookup(name).is_some_and(|v| v == "true");
        Publishing {
            tables: on(Self::TABLES_VARIABLE),
            events: on(Self::EVENTS_VARIABLE),
        }
    }

    /// Whether a run publishes anything: the handler skips publishing altogether when not.
    pub fn any(&self) -> bool {
        self.tables || self.events
    }
}

/// Why publishing failed; the run's table actions stand.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("publishing what the run did failed (writers may read stale table names; the next run publishes again): {}", .0.join("; "))]
pub struct PublishError(pub Vec<String>);

/// The parameter's value after a create_new run: `None` for runs that say nothing about the
/// tables writers need (resize_old, dry runs). Every table is `{"table", "start", "end",
/// "status"}`, the current one first; `status` is DynamoDB's (`ACTIVE` is the one to write
/// to), `MISSING`, `NOT_OURS` for a name held by a table this policy does not own, or
/// `KEY_DIFFERS` for a table of ours keyed otherwise (the writers' items do not fit it).
///
/// `updated_at` is `wall`, the wall clock the readiness was assessed at (the report's `at` may
/// be earlier in the period: a retry of a scheduled run).
pub fn tables_document(policy: &Policy, report: &RunReport, wall: DateTime<Utc>) -> Option<String> {
    let readiness = report.next_table_ready.as_ref()?;
    let naming = policy.naming();
    let calendar = naming.calendar();
    let entries: Vec<Value> = readiness
        .tables
        .iter()
        .filter_map(|target| {
            let Ownership::Owned(slot) = naming.classify(&target.table) else {
                return None;
            };
            let status = match (&target.status, target.foreign) {
                (_, true) => "NOT_OURS".to_owned(),
                (Some(_), false) if target.unfit.is_some() => "KEY_DIFFERS".to_owned(),
                (Some(status), false) => status.clone(),
                (None, false) => "MISSING".to_owned(),
            };
            Some(json!({
                "table": target.table,
                "start": slot.start().to_rfc3339(),
                "end": calendar.end(slot).to_rfc3339(),
                "status": status,
            }))
        })
        .collect();
    let document = |shown: usize| {
        json!({
            "prefix": report.prefix,
            "period": policy.period.to_string(),
            "timezone": policy.timezone.name(),
            "updated_at": wall.to_rfc3339(),
            "ready": readiness.ready,
            "tables": entries[..shown],
            "omitted": entries.len() - shown,
        })
        .to_string()
    };
    // The current table always; then as many pre-built ones as the parameter holds.
    let mut shown = entries.len();
    while shown > 1 && document(shown).len() > MAX_PARAMETER_BYTES {
        shown -= 1;
    }
    Some(document(shown))
}

/// The events of a run: what it did, table by table (done lines only; nothing for a dry run).
pub fn events(report: &RunReport) -> Vec<Event> {
    events_with(report, report.next_table_ready.as_ref())
}

/// [`events`] with the run's own readiness, which a replay's report no longer carries (it
/// describes the replayed periods, not now) but its "Table Ready" events still rest on.
pub fn events_with(report: &RunReport, readiness: Option<&Readiness>) -> Vec<Event> {
    if report.dry_run {
        return Vec::new();
    }
    let ready: Vec<&str> = readiness
        .iter()
        .flat_map(|r| &r.tables)
        .filter(|t| t.status.as_deref() == Some("ACTIVE") && t.is_ready())
        .map(|t| t.table.as_str())
        .collect();
    let mut events = Vec::new();
    for line in report.lines_with(Outcome::Done) {
        let item = &line.item;
        let detail_type = match &item.decision {
            Decision::Create(_) | Decision::Recreate(_) if ready.contains(&item.facts.table.as_str()) => {
                TABLE_READY
            }
            Decision::Update(_)
            | Decision::UpdateClass(_)
            | Decision::RegisterScaling(_)
            | Decision::DeregisterScaling(_) => PHASE_CHANGED,
            Decision::Tag(change) if change.tags.contains_key(TAG_ARCHIVED) => TABLE_ARCHIVED,
            Decision::Delete(_) => TABLE_DELETED,
            _ => continue,
        };
        // One event per table and kind: a phase change may take several calls.
        if events
            .iter()
            .any(|e: &Event| e.detail_type == detail_type && e.detail["table"] == item.facts.table.as_str())
        {
            continue;
        }
        events.push(Event {
            detail_type,
            detail: json!({
                "prefix": report.prefix,
                "table": item.facts.table,
                "period": item.facts.period,
                "age": item.facts.age,
                "phase": item.facts.phase,
                "operation": report.operation.as_str(),
                "run_at": report.at.to_rfc3339(),
                "reason": item.reason,
            }),
        });
    }
    events
}

/// A finished run, as [`publish`] sends it.
#[derive(Clone, Copy, Debug)]
pub struct Published<'a> {
    /// The run's report.
    pub report: &'a RunReport,
    /// The run's own readiness, for its events: the report's, or a replay's that the report no
    /// longer carries.
    pub readiness: Option<&'a Readiness>,
    /// The wall clock the run was checked against: the parameter's `updated_at`.
    pub wall: DateTime<Utc>,
}

/// Sends what `publishing` switches on; every failure is named, none stops the other. The
/// parameter's writes are recorded in the family's ledger through `ledger`.
pub async fn publish<L: Ledger>(
    clients: &AwsClients,
    ledger: &L,
    publishing: Publishing,
    policy: &Policy,
    run: Published<'_>,
) -> Result<(), PublishError> {
    let report = run.report;
    let mut failures = Vec::new();
    if publishing.tables && report.operation == Operation::CreateNew {
        if let Some(value) = tables_document(policy, report, run.wall) {
            let name = parameter_name(&policy.prefix);
            failures.extend(put_tables(clients, ledger, policy, &name, &value, run.wall).await);
        }
    }
    if publishing.events {
        failures.extend(put_events(clients, &events_with(report, run.readiness)).await);
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(PublishError(failures))
    }
}

#[cfg(feature = "eventbridge")]
async fn put_events(clients: &AwsClients, events: &[Event]) -> Vec<String> {
    ddb_rollover_aws::events::put_events(&clients.eventbridge, events, explain).await
}

#[cfg(not(feature = "eventbridge"))]
async fn put_events(_: &AwsClients, events: &[Event]) -> Vec<String> {
    if events.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "PutEvents: {} event(s) not sent: this function is built without EventBridge (ddb-rollover-lambda's `eventbridge` feature)",
        events.len()
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};
    use ddb_rollover::{Readiness, TargetTable};

    fn policy(premake: u32) -> Policy {
        Policy::from_toml(&format!("prefix = \"ts\"\npremake = {premake}\n")).unwrap()
    }

    fn target(table: &str, status: Option<&str>) -> TargetTable {
        TargetTable {
            table: table.into(),
            status: status.map(str::to_owned),
            foreign: false,
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

    fn report(operation: Operation, tables: Vec<TargetTable>) -> RunReport {
        let at: DateTime<Utc> = "2018-10-25T23:45:00Z".parse().unwrap();
        let mut report = RunReport::new(operation, at, "ts".into(), "2018-10-25".into(), false, Vec::new());
        report.next_table_ready = Some(Readiness::from_tables(tables));
        report
    }

    /// A table whose warm throughput is still being raised is not ready yet: no `Table Ready`.
    #[test]
    fn a_table_still_pre_warming_is_not_announced_ready() {
        let policy = policy(1);
        let at: DateTime<Utc> = "2018-10-25T23:45:00Z".parse().unwrap();
        let lines = ddb_rollover::plan(&policy, at, &[], Operation::CreateNew)
            .items
            .into_iter()
            .map(|item| ddb_rollover::TableLine::new(item, Outcome::Done, None))
            .collect();
        let mut report = RunReport::new(
            Operation::CreateNew,
            at,
            "ts".into(),
            "2018-10-25".into(),
            false,
            lines,
        );
        let mut warmed = target("ts_2018-10-25", Some("ACTIVE"));
        warmed.warm = Some("ACTIVE".into());
        let mut warming = target("ts_2018-10-26", Some("ACTIVE"));
        warming.warm = Some("UPDATING".into());
        report.next_table_ready = Some(Readiness::from_tables(vec![warmed, warming]));
        let ready: Vec<Value> = events(&report)
            .into_iter()
            .filter(|e| e.detail_type == TABLE_READY)
            .map(|e| e.detail["table"].clone())
            .collect();
        assert_eq!(ready, [json!("ts_2018-10-25")]);
    }

    #[test]
    fn the_parameter_lists_each_table_with_its_period_in_utc() {
        let report = report(
            Operation::CreateNew,
            vec![
                target("ts_2018-10-25", Some("ACTIVE")),
                target("ts_2018-10-26", None),
            ],
        );
        let value: Value =
            serde_json::from_str(&tables_document(&policy(1), &report, report.at).unwrap()).unwrap();
        assert_eq!(value["prefix"], "ts");
        assert_eq!(value["ready"], false);
        assert_eq!(value["omitted"], 0);
        assert_eq!(
            value["tables"],
            json!([
                {"table": "ts_2018-10-25", "start": "2018-10-25T00:00:00+00:00", "end": "2018-10-26T00:00:00+00:00", "status": "ACTIVE"},
                {"table": "ts_2018-10-26", "start": "2018-10-26T00:00:00+00:00", "end": "2018-10-27T00:00:00+00:00", "status": "MISSING"}
            ])
        );
    }

    #[test]
    fn the_parameter_fits_a_standard_parameter_keeping_the_current_table_first() {
        let tables = (0..100)
            .map(|d| {
                let day = chrono::NaiveDate::from_ymd_opt(2018, 10, 25).unwrap() + chrono::Days::new(d);
                target(&format!("ts_{day}"), Some("ACTIVE"))
            })
            .collect();
        let document =
            tables_document(&policy(99), &report(Operation::CreateNew, tables), Utc::now()).unwrap();
        assert!(document.len() <= MAX_PARAMETER_BYTES, "{}", document.len());
        let value: Value = serde_json::from_str(&document).unwrap();
        let shown = value["tables"].as_array().unwrap().len();
        assert!(shown > 10, "{shown}");
        assert_eq!(value["omitted"], 100 - shown);
        assert_eq!(value["tables"][0]["table"], "ts_2018-10-25");
    }

    #[test]
    fn a_resize_old_run_or_a_dry_run_publishes_no_parameter_and_no_event() {
        let mut resize = report(Operation::ResizeOld, vec![]);
        resize.next_table_ready = None;
        assert_eq!(tables_document(&policy(1), &resize, resize.at), None);
        let mut dry = report(
            Operation::CreateNew,
            vec![target("ts_2018-10-25", Some("ACTIVE"))],
        );
        dry.dry_run = true;
        assert!(events(&dry).is_empty());
    }

    #[test]
    fn before_the_ledger_records_it_only_our_own_document_for_this_prefix_is_ours() {
        use crate::parameter::our_previous_write;
        let policy = policy(1);
        let ours = tables_document(
            &policy,
            &report(
                Operation::CreateNew,
                vec![target("ts_2018-10-25", Some("ACTIVE"))],
            ),
            "2018-10-25T23:45:00Z".parse().unwrap(),
        )
        .unwrap();
        assert_eq!(our_previous_write(&policy, "String", &ours), Ok(()));
        let other_family = ours.replace("\"prefix\":\"ts\"", "\"prefix\":\"orders\"");
        for (kind, value, says) in [
            ("SecureString", ours.as_str(), "SecureString"),
            ("StringList", ours.as_str(), "StringList"),
            ("String", "ts_2018-10-25", "not a JSON object"),
            ("String", r#"{"table":"ts_2018-10-25"}"#, "keys"),
            ("String", other_family.as_str(), "orders"),
        ] {
            match our_previous_write(&policy, kind, value) {
                Err(why) => assert!(why.contains(says), "{kind} {value}: {why}"),
                Ok(()) => panic!("{kind} {value}: taken as ours"),
            }
        }
    }

    #[test]
    fn publishing_is_off_unless_each_variable_says_true() {
        assert_eq!(Publishing::from_lookup(|_| None), Publishing::default());
        let both = Publishing::from_lookup(|_| Some("true".into()));
        assert!(both.tables && both.events);
        let only_events = Publishing::from_lookup(|name| {
            Some(
                if name == Publishing::EVENTS_VARIABLE {
                    "true"
                } else {
                    "false"
                }
                .into(),
            )
        });
        assert_eq!(
            only_events,
            Publishing {
                tables: false,
                events: true
            }
        );
    }
}
