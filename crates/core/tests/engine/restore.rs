//! `restore` against the in-memory account (`crates/fake-aws`, whose exports leave AWS's
//! manifests in its S3): what it refuses before any change, and a period archived, deleted and
//! brought back with our tags, its phase's capacity and its keep. The end-to-end run through
//! the binary, the application crate and moto is the system test `cli::restore`.

use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use ddb_rollover::policy::settings::{Billing, Capacity};
use ddb_rollover::policy::tags::{TAG_FAMILY, TAG_KEEP_UNTIL};
use ddb_rollover::run::clock::simulation;
use ddb_rollover::run::restore::{restore, Restoration, RestoreOptions, RestoreReport};
use ddb_rollover::{run, ApplyOptions, Operation, Policy};
use fake_aws::{Config, FakeAws};

const POLICY: &str = r#"
prefix = "back"
period = "day"
premake = 1

[[phases]]
min_age = 0
read = 20
write = 50

[[phases]]
min_age = 1
read = 5
write = 1

[retention]
archive_after = 1
delete_after = 3
keep_newest = 2
bucket = "archive"
"#;

fn at(day: NaiveDate, time: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&format!("{day}T{time}Z"))
        .unwrap()
        .with_timezone(&Utc)
}

fn day(n: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2018, 10, n).unwrap()
}

/// Both scheduled runs of `d`, on the fake's clock.
async fn day_runs(fake: &FakeAws, policy: &Policy, d: NaiveDate) {
    for (operation, when) in [
        (Operation::CreateNew, at(d, "23:45:00")),
        (Operation::ResizeOld, at(d + Duration::days(1), "00:15:00")),
    ] {
        fake.set_now(when);
        let report = run(
            fake,
            policy,
            operation,
            &simulation(policy, &[operation], when).unwrap(),
            ApplyOptions::default(),
        )
        .await
        .unwrap();
        assert!(report.succeeded(), "{report:#?}");
    }
}

async fn restore_at(
    fake: &FakeAws,
    policy: &Policy,
    when: DateTime<Utc>,
    label: &str,
    dry_run: bool,
) -> RestoreReport {
    fake.set_now(when);
    let slot = policy.calendar().parse(label).unwrap();
    let options = RestoreOptions {
        keep: Duration::days(3),
        dry_run,
        wait: StdDuration::from_secs(3600),
    };
    restore(
        &fake.operator(),
        policy,
        &simulation(policy, &[Operation::CreateNew], when).unwrap(),
        &[slot],
        options,
    )
    .await
    .unwrap()
}

fn reasons(report: &RestoreReport) -> String {
    match &report.tables[0].restoration {
        Restoration::Refused { reasons } => reasons.join("; "),
        other => panic!("not refused: {other:?}"),
    }
}

#[tokio::test]
async fn refusals_come_before_any_change() {
    let policy = Policy::from_toml(POLICY).unwrap();
    let fake = FakeAws::new("back", at(day(1), "00:00:00"), Config::default());
    day_runs(&fake, &policy, day(1)).await;
    let before = fake.state().tables.len();
    // The current period, a period with a table, a period never archived.
    let now = at(day(2), "12:00:00");
    let current = restore_at(&fake, &policy, now, "2018-10-02", false).await;
    assert!(reasons(&current).contains("current and future"), "{current:#?}");
    let exists = restore_at(&fake, &policy, now, "2018-10-01", false).await;
    assert!(reasons(&exists).contains("the table exists"), "{exists:#?}");
    let never = restore_at(&fake, &policy, now, "2018-09-01", false).await;
    assert!(
        reasons(&never).contains("no export under s3://archive/ddb-rollover/back_2018-09-01/"),
        "{never:#?}"
    );
    // Without archiving there is nothing to restore from.
    let plain = Policy::from_toml("prefix = \"back\"\nperiod = \"day\"\n").unwrap();
    let none = restore_at(&fake, &plain, now, "2018-09-01", false).await;
    assert!(reasons(&none).contains("archives nothing"), "{none:#?}");
    assert!(!none.succeeded());
    assert_eq!(
        fake.state().tables.len(),
        before,
        "a refused restore created a table"
    );
}

#[tokio::test]
async fn an_archived_and_deleted_period_comes_back_ours_and_kept() {
    let policy = Policy::from_toml(POLICY).unwrap();
    let fake = FakeAws::new("back", at(day(1), "00:00:00"), Config::default());
    let mut d = day(1);
    while d < day(2) || fake.state().tables.contains_key("back_2018-10-02") {
        day_runs(&fake, &policy, d).await;
        d += Duration::days(1);
        assert!(d < day(12), "back_2018-10-02 never deleted");
    }
    let now = at(d, "12:00:00");
    let dry = restore_at(&fake, &policy, now, "2018-10-02", true).await;
    assert_eq!(dry.tables[0].outcome, "planned", "{dry:#?}");
    assert!(
        !fake.state().tables.contains_key("back_2018-10-02"),
        "a dry run imported"
    );

    let done = restore_at(&fake, &policy, now, "2018-10-02", false).await;
    assert_eq!(done.tables[0].outcome, "done", "{done:#?}");
    let state = fake.state();
    let table = &state.tables["back_2018-10-02"];
    assert_eq!(
        table.billing,
        Billing::Provisioned(Capacity { read: 5, write: 1 })
    );
    assert_eq!(table.tags.get(TAG_FAMILY).map(String::as_str), Some("back"));
    let keep_until = table.tags.get(TAG_KEEP_UNTIL).expect("keep-until");
    assert_eq!(keep_until, &(done.at + Duration::days(3)).to_rfc3339());

    // Kept while the keep runs, though past delete_after; archived again and deleted after.
    for _ in 0..2 {
        day_runs(&fake, &policy, d).await;
        d += Duration::days(1);
        assert!(
            fake.state().tables.contains_key("back_2018-10-02"),
            "deleted inside its keep"
        );
    }
    for _ in 0..5 {
        day_runs(&fake, &policy, d).await;
        d += Duration::days(1);
    }
    assert!(
        !fake.state().tables.contains_key("back_2018-10-02"),
        "kept past its keep"
    );
    let exports = fake
        .state()
        .exports
        .values()
        .filter(|e| e.table == "back_2018-10-02")
        .count();
    // Each incarnation: its archive export, then its final export after the seal.
    assert_eq!(exports, 4, "exported again before the second deletion");
}
