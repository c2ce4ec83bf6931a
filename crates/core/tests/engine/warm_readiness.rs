//! Warm throughput end to end over the in-memory account ([`fake_aws::FakeAws`], its raises
//! UPDATING for `warm_delay` of fake time): create_new's next-table readiness waits for the warm
//! throughput to be ACTIVE, on the control plane's clock, and says so when it is not; a raise of
//! a pre-built table is waited for too; `status` shows what is wanted and what is reported.

use crate::common::at;
use crate::common::fake_runs::create_new;
use crate::common::policies::{policy_of, BY_DEVICE, WARM_HOT_PHASE, WARM_WANT as WANT};
use chrono::Duration;
use ddb_rollover::control::Tables;
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::status;
use ddb_rollover::table::TableStatus;
use ddb_rollover::{observe, Outcome, Policy, RunReport, Scope};
use fake_aws::{Config, FakeAws};

/// The `by_device` index and an on-demand hot phase pre-warmed to [`WANT`].
fn warm_policy() -> Policy {
    policy_of(&[BY_DEVICE, WARM_HOT_PHASE])
}

fn fake(warm_delay: Duration) -> FakeAws {
    let config = Config {
        create_delay: Duration::seconds(20),
        warm_delay,
        ..Config::default()
    };
    FakeAws::new("timeseries", at("2018-10-25T23:45:00Z"), config)
}

/// The warm throughput DynamoDB reports for the table and its index: (units, status) each.
fn reported(fake: &FakeAws, table: &str) -> Vec<(WarmThroughput, TableStatus)> {
    let t = futures::executor::block_on(fake.describe_table(table))
        .unwrap()
        .expect("the table exists");
    std::iter::once(t.warm.unwrap())
        .chain(t.global_indexes.iter().map(|i| i.warm.clone().unwrap()))
        .map(|w| (w.units, w.status))
        .collect()
}

/// The first create_new of the [`warm_policy`] over a fresh [`fake`] whose warm raises take
/// `warm_delay`: the account, the run's report, and how long the run waited on the fake clock.
fn first_create_new(warm_delay: Duration) -> (FakeAws, RunReport, Duration) {
    let fake = fake(warm_delay);
    let started = fake.now();
    let report = create_new(&fake, &warm_policy());
    let waited = fake.now() - started;
    (fake, report, waited)
}

#[test]
fn create_new_waits_on_the_fake_clock_until_the_warm_throughput_is_active() {
    let (fake, report, waited) = first_create_new(Duration::seconds(60));
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(ready.ready, "{}", ready.line());
    // CREATING for 20 s, then the warm throughput UPDATING for 60 s: the polls waited both out,
    // on the fake's clock (no wall-clock wait), and not much longer (polls double up to 10 s).
    assert!(
        waited >= Duration::seconds(80) && waited <= Duration::seconds(95),
        "{waited}"
    );
    for table in ["timeseries_2018-10-25", "timeseries_2018-10-26"] {
        assert_eq!(
            reported(&fake, table),
            [(WANT, TableStatus::Active), (WANT, TableStatus::Active)],
            "{table}"
        );
    }
    // All ready: the next run makes no call to wait for anything.
    let before = fake.now();
    let again = create_new(&fake, &warm_policy());
    assert!(again.next_table_ready.unwrap().ready);
    assert_eq!(fake.now(), before, "no wait when everything is ready");
}

#[test]
fn a_warm_throughput_still_updating_when_the_wait_ends_is_not_ready() {
    let (fake, report, waited) = first_create_new(Duration::minutes(10));
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(!ready.ready);
    assert_eq!(
        ready.not_active,
        ["timeseries_2018-10-25", "timeseries_2018-10-26"]
    );
    assert_eq!(
        ready.line(),
        "NOT READY: timeseries_2018-10-25 ACTIVE, warm throughput UPDATING, timeseries_2018-10-26 ACTIVE, warm throughput UPDATING"
    );
    // The run waited its 120 s, then said so: nothing failed, the tables are there.
    assert_eq!(waited, Duration::seconds(120));
    assert!(report.succeeded(), "{report:#?}");
    assert_eq!(
        reported(&fake, "timeseries_2018-10-26"),
        [(WANT, TableStatus::Updating), (WANT, TableStatus::Updating)]
    );
    let json = serde_json::to_value(ready).unwrap();
    assert_eq!(json["tables"][1]["warm"], "UPDATING");
}

#[test]
fn a_raise_of_a_pre_built_table_is_waited_for_and_status_shows_it() {
    let fake = fake(Duration::seconds(45));
    // The tables were built before the policy asked for warm throughput.
    let plain = policy_of(&[
        BY_DEVICE,
        &WARM_HOT_PHASE.replace("warm = { read = 40000, write = 20000 }", ""),
    ]);
    assert!(create_new(&fake, &plain).next_table_ready.unwrap().ready);
    let policy = warm_policy();

    // status first: what is wanted and what DynamoDB reports, and the raise the run will make.
    let now = fake.now();
    let observed = futures::executor::block_on(observe(&fake, &policy, Scope::Full(now), 4)).unwrap();
    let report = status(&policy, now, &observed);
    let json = serde_json::to_value(&report).unwrap();
    let pre_built = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == "timeseries_2018-10-26")
        .unwrap();
    assert_eq!(
        pre_built["warm"],
        serde_json::json!({
            "wanted": {"read": 40000, "write": 20000},
            "table": {"read": 12000, "write": 4000, "status": "ACTIVE"},
            "indexes": {"by_device": {"read": 12000, "write": 4000, "status": "ACTIVE"}},
        })
    );
    assert_eq!(pre_built["create_new"]["decision"]["action"], "unchanged");
    let other = &pre_built["other_changes"][0];
    assert_eq!(other["decision"]["action"], "configure", "{pre_built:#}");
    assert!(
        other["reason"]
            .as_str()
            .unwrap()
            .starts_with("warm throughput below phase 0's (40000 read / 20000 write units/s): raise table"),
        "{other:#}"
    );

    let started = fake.now();
    let report = create_new(&fake, &policy);
    let raised: Vec<&str> = report
        .tables
        .iter()
        .filter(|l| l.item.decision.action() == "configure" && l.outcome == Outcome::Done)
        .map(|l| l.item.facts.table.as_str())
        .collect();
    assert_eq!(raised, ["timeseries_2018-10-26"], "only the pre-built table");
    assert!(report.next_table_ready.unwrap().ready);
    assert!(
        fake.now() - started >= Duration::seconds(45),
        "the raise was waited for"
    );
    assert_eq!(
        reported(&fake, "timeseries_2018-10-26"),
        [(WANT, TableStatus::Active), (WANT, TableStatus::Active)]
    );
    // The current table is left as it is, like its capacity.
    let default = WarmThroughput::ON_DEMAND;
    assert_eq!(
        reported(&fake, "timeseries_2018-10-25"),
        [(default, TableStatus::Active), (default, TableStatus::Active)]
    );
}
