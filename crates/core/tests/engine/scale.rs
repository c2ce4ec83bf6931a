//! An account at the default table quota, in virtual time: 2,500 owned tables plus foreign
//! ones on the in-memory account, with AWS's per-account tag rates turned on (a
//! ListTagsOfResource beyond 10 a second, or a TagResource beyond 5, fails the call) and calls
//! in flight at once. Every call goes through the pacer every run goes through
//! ([`ddb_rollover::Paced`]), which measures and waits on the account's own clock,
//! so minutes of pacing take no wall-clock time.
//!
//! The tables were made by an earlier version, with our family tag: the operator's `init`
//! records them first, reading each table's tags at AWS's 10 a second (over four minutes of
//! virtual time, none of it throttled). Then a catch-up `resize_old` (every table still hot)
//! and a steady-state one end with every table in its phase and nothing failed, each run
//! inside the functions' 300 s timeout of virtual time, and the steady-state run makes exactly
//! the floor of port calls: with no change due and no current table to read the tags of, one
//! listing, one DescribeTable per owned table, the ledger's Query (twice: before the lease and
//! under it) and the lease's PutItem and DeleteItem. How the listing pages on the wire (one
//! ListTables a hundred tables) is the system test's, at the smallest scale that shows it
//! (tests/cli/scale.rs).

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use ddb_rollover::control::{Clock, Tables};
use ddb_rollover::policy::TAG_FAMILY;
use ddb_rollover::policy::{Billing, Capacity};
use ddb_rollover::simulation;
use ddb_rollover::DeferralCause;
use ddb_rollover::Paced;
use ddb_rollover::{init, Enrolment};
use ddb_rollover::{run, ApplyOptions, Operation, Outcome, Policy, RunReport};
use fake_aws::{table_spec, Config, FakeAws};

const OWNED: usize = 2_500;
const FOREIGN: [&str; 3] = [
    "timeseries_backup",
    "timeseries_eu_2018-10-18",
    "timeseries_audit",
];
/// A function's timeout: each run must end inside it.
const TIMEOUT: Duration = Duration::from_secs(300);
/// The time budget the system test gives the CLI (`--time-budget 280s`).
const TIME_BUDGET: Duration = Duration::from_secs(280);

const HOT: Capacity = Capacity {
    read: 300,
    write: 1000,
};

fn instant(date: NaiveDate, time: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&format!("{date}T{time}Z"))
        .unwrap()
        .with_timezone(&Utc)
}

/// One resize_old at `at` through the pacer, inside [`TIME_BUDGET`] of the account's clock:
/// the report and the virtual time it took.
async fn resize_old(paced: &Paced<FakeAws>, policy: &Policy, at: DateTime<Utc>) -> (RunReport, Duration) {
    let fake = paced.inner();
    fake.set_now(at);
    let started = Clock::now(fake);
    let options = ApplyOptions {
        deadline: Some(started + TIME_BUDGET),
        ..ApplyOptions::default()
    };
    let checked = simulation(policy, &[Operation::ResizeOld], at).unwrap();
    let report = run(paced, policy, Operation::ResizeOld, &checked, options)
        .await
        .unwrap();
    (report, Clock::now(fake) - started)
}

/// An account at `now` holding `names`, made by an earlier version with `policy` before the
/// family's ledger (hot, our family tag), with calls in flight at once, as the SDK's are.
fn made_by_an_earlier_version(policy: &Policy, names: &[String], now: DateTime<Utc>) -> FakeAws {
    let fake = FakeAws::new("timeseries", now, Config::default());
    fake.hold_requests(2);
    let made = now - chrono::Duration::days(names.len() as i64);
    for name in names {
        let mut spec = table_spec(name, policy.key.clone(), Billing::Provisioned(HOT));
        spec.tags = BTreeMap::from([(TAG_FAMILY.to_string(), "timeseries".to_string())]);
        fake.seed_table(&spec);
        fake.alter_table(name, |t| t.created_at = made);
    }
    fake
}

/// The rates bite: the same `init` without the pacer, over 50 tables, has tag reads throttled
/// (so the test above passing means the pacer kept to the rates).
#[tokio::test]
async fn without_the_pacer_init_meets_the_fakes_throttling() {
    let policy = Policy::default();
    let first = NaiveDate::from_ymd_opt(2012, 1, 1).unwrap();
    let names: Vec<String> = (0..50)
        .map(|i| format!("timeseries_{}", first + chrono::Duration::days(i)))
        .collect();
    let at = instant(first + chrono::Duration::days(50), "12:00:00");
    let fake = made_by_an_earlier_version(&policy, &names, at);
    fake.aws_rates();
    let checked = simulation(&policy, &[Operation::CreateNew], at).unwrap();
    let report = init(&fake, &policy, &checked, false).await.unwrap();
    let throttled = report
        .tables
        .iter()
        .filter(|l| {
            l.error
                .as_deref()
                .is_some_and(|e| e.contains("ThrottlingException"))
        })
        .count();
    assert!(throttled > 0, "{report:#?}");
    assert!(!report.succeeded());
}

#[tokio::test]
async fn two_thousand_five_hundred_tables_at_awss_rates_catch_up_then_stay_at_the_floor_in_virtual_time() {
    let policy = Policy::default();
    let first = NaiveDate::from_ymd_opt(2012, 1, 1).unwrap();
    let names: Vec<String> = (0..OWNED)
        .map(|i| format!("timeseries_{}", first + chrono::Duration::days(i as i64)))
        .collect();
    let last = first + chrono::Duration::days(OWNED as i64 - 1);
    let fake = made_by_an_earlier_version(&policy, &names, instant(last, "12:00:00"));
    // Someone else's, under the prefix.
    for name in FOREIGN {
        fake.operator()
            .create_table(&table_spec(
                name,
                policy.key.clone(),
                Billing::Provisioned(Capacity { read: 5, write: 5 }),
            ))
            .await
            .unwrap();
    }
    fake.aws_rates();
    let paced = Paced::new(fake.clone(), policy.rates);

    // The operator's `init` records them: each table's tags read at AWS's rate, none throttled.
    let at = instant(last, "12:30:00");
    fake.set_now(at);
    let started = Clock::now(&fake);
    let checked = simulation(&policy, &[Operation::CreateNew], at).unwrap();
    let report = init(&paced, &policy, &checked, false).await.unwrap();
    let init_took = Clock::now(&fake) - started;
    assert!(
        report.succeeded(),
        "{:#?}",
        report.tables.iter().find(|l| l.error.is_some())
    );
    let recorded = report
        .tables
        .iter()
        .filter(|l| l.action == Enrolment::Record)
        .count();
    assert_eq!(recorded, OWNED);
    // Paced at 10 a second after half a second's burst: no faster, or AWS would have throttled.
    let paced_for = Duration::from_millis(100) * (OWNED as u32 - 5);
    assert!(init_took >= paced_for, "init took {init_took:?}");

    // Catch-up: the day after the last table, every table still hot. Each run makes progress,
    // defers only for want of time, and fails nothing, until nothing is left.
    let day_after = last + chrono::Duration::days(1);
    let mut done = 0;
    let mut catch_up_runs = 0;
    let mut catch_up_times = Vec::new();
    loop {
        catch_up_runs += 1;
        let (report, took) = resize_old(&paced, &policy, instant(day_after, "00:15:00")).await;
        catch_up_times.push(took);
        assert!(took < TIMEOUT, "catch-up run {catch_up_runs} took {took:?}");
        assert_eq!(report.summary.failed, 0, "{:#?}", report.summary);
        assert!(
            report.summary.done > 0,
            "catch-up run {catch_up_runs} made no change: {:#?}",
            report.summary
        );
        done += report.summary.done;
        let deferrals: Vec<_> = report
            .tables
            .iter()
            .filter(|line| line.outcome == Outcome::Deferred)
            .map(|line| line.deferral)
            .collect();
        assert!(
            deferrals
                .iter()
                .all(|cause| *cause == Some(DeferralCause::TimeBudget)),
            "{deferrals:?}"
        );
        if deferrals.is_empty() {
            break;
        }
        assert!(
            catch_up_runs < 3,
            "still deferring after {catch_up_runs} runs: {:#?}",
            report.summary
        );
    }
    assert_eq!(done, OWNED);

    // Read back: the newest table is warm, all others cold.
    let state = fake.state();
    for (i, name) in names.iter().enumerate() {
        let expected = if i == OWNED - 1 {
            Capacity { read: 100, write: 1 }
        } else {
            Capacity { read: 1, write: 1 }
        };
        assert_eq!(
            state.tables[name].billing,
            Billing::Provisioned(expected),
            "{name}"
        );
    }

    // Steady state, an hour later: nothing to change, the floor of calls.
    let before = fake.requests().len();
    let (report, steady) = resize_old(&paced, &policy, instant(day_after, "01:15:00")).await;
    assert!(steady < TIMEOUT, "steady state took {steady:?}");
    assert_eq!(report.summary.done, 0, "{:#?}", report.summary);
    assert_eq!(report.summary.failed, 0, "{:#?}", report.summary);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for request in &fake.requests()[before..] {
        *counts.entry(request.operation).or_default() += 1;
    }
    let floor = BTreeMap::from([
        ("ListTables", 1),
        ("DescribeTable", OWNED),
        ("Query", 2),
        ("PutItem", 1),
        ("DeleteItem", 1),
    ]);
    assert_eq!(counts, floor, "the floor, the lease's PutItem and DeleteItem");
    eprintln!(
        "{OWNED} owned + {} foreign tables, AWS's rates, virtual time: init {init_took:?}, catch-up resize_old \
         {catch_up_times:?} in {catch_up_runs} run(s), steady state {steady:?}",
        FOREIGN.len()
    );
}
