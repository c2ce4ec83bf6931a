//! A daily family with archiving and retention, run day by day on the in-memory account's
//! clock: the fixture of the restore and ledger tests.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use ddb_rollover::simulation;
use ddb_rollover::{run, ApplyOptions, Operation, Policy, RunReport};
use fake_aws::{Config, FakeAws};

/// The family's policy, one file with the CLI's restore system test.
pub(crate) const POLICY: &str = include_str!("../../fixtures/daily_retention.toml");

pub(crate) fn at(day: NaiveDate, time: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&format!("{day}T{time}Z"))
        .unwrap()
        .with_timezone(&Utc)
}

pub(crate) fn day(n: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2018, 10, n).unwrap()
}

pub(crate) fn policy() -> Policy {
    Policy::from_toml(POLICY).unwrap()
}

/// An account with no tables yet, its clock at the start of 10-01.
pub(crate) fn account() -> FakeAws {
    FakeAws::new("back", at(day(1), "00:00:00"), Config::default())
}

/// Both scheduled runs of `d`, on the fake's clock.
pub(crate) async fn day_runs(fake: &FakeAws, policy: &Policy, d: NaiveDate) {
    one_run(fake, policy, Operation::CreateNew, at(d, "23:45:00")).await;
    resize_old_after(fake, policy, d).await;
}

/// resize_old at 00:15 the day after `d`, on the fake's clock.
pub(crate) async fn resize_old_after(fake: &FakeAws, policy: &Policy, d: NaiveDate) {
    one_run(
        fake,
        policy,
        Operation::ResizeOld,
        at(d + Duration::days(1), "00:15:00"),
    )
    .await;
}

/// One scheduled run at `when`, on the fake's clock; it must succeed.
pub(crate) async fn one_run(fake: &FakeAws, policy: &Policy, operation: Operation, when: DateTime<Utc>) {
    let report = run_at(fake, policy, operation, when).await;
    assert!(report.succeeded(), "{report:#?}");
}

/// One scheduled run at `when`, on the fake's clock, as it went.
pub(crate) async fn run_at(
    fake: &FakeAws,
    policy: &Policy,
    operation: Operation,
    when: DateTime<Utc>,
) -> RunReport {
    fake.set_now(when);
    run(
        fake,
        policy,
        operation,
        &simulation(policy, &[operation], when).unwrap(),
        ApplyOptions::default(),
    )
    .await
    .unwrap()
}

/// The [`policy`] run on a fresh [`account`] day by day from 10-01 until retention deleted
/// `back_2018-10-02`: the policy, the account and the next day.
pub(crate) async fn archived_and_deleted() -> (Policy, FakeAws, NaiveDate) {
    let policy = policy();
    let fake = account();
    let mut d = day(1);
    while d < day(2) || fake.state().tables.contains_key(TABLE) {
        day_runs(&fake, &policy, d).await;
        d += Duration::days(1);
        assert!(d < day(12), "{TABLE} never deleted");
    }
    (policy, fake, d)
}

pub(crate) const TABLE: &str = "back_2018-10-02";
