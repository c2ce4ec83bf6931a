//! Neighbours on one account (moto): two ddb-rollover families whose prefixes nest (`x` and
//! `x_eu`, so `table/x_*` and `x_` match both), both with retention, run 20 simulated days side
//! by side, next to hand-made tables that look like theirs. Every table of one family is read
//! back (DescribeTable and ListTagsOfResource) before and after every run of the other: it is
//! never changed, re-tagged or deleted by it, and each family ends exactly as it would alone.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::Client;
use chrono::{Duration, NaiveDate};
use ddb_rollover::{run_each, ApplyOptions, Operation, Outcome, Policy};
use ddb_rollover_aws::dynamodb::DynamoDb;
use testkit::{LocalDynamo, Server};

use crate::support::days::{assert_succeeded, at, run_at};

const X: &str = r#"
prefix = "x"
premake = 1
[retention]
delete_after = 3
keep_newest = 1
"#;

/// Other capacities and a longer retention, so that one family acting on the other's tables
/// would show in their capacity or existence.
const X_EU: &str = r#"
prefix = "x_eu"
premake = 1
[[phases]]
min_age = 0
read = 50
write = 200
[[phases]]
min_age = 1
read = 20
write = 2
[[phases]]
min_age = 2
read = 2
write = 2
[retention]
delete_after = 5
keep_newest = 1
"#;

const DAYS: i64 = 20;

/// What a reader can see of one table: capacity and every tag.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    capacity: (i64, i64),
    tags: BTreeMap<String, String>,
}

async fn seen(client: &Client, prefix: &str) -> BTreeMap<String, Seen> {
    let mut tables = BTreeMap::new();
    for (name, table) in testkit::describe_all(client).await {
        if !name.starts_with(prefix) {
            continue;
        }
        let tags = testkit::tags_of(client, table.table_arn().expect("arn")).await;
        let capacity = testkit::capacity_of(&table);
        tables.insert(name, Seen { capacity, tags });
    }
    tables
}

/// The `x_eu` family's tables and the hand-made ones, which `x` must never touch; and `x`'s
/// tables, which `x_eu` must never touch (`x_eu_...` names start with `x_`, not the reverse).
async fn not_x(client: &Client) -> BTreeMap<String, Seen> {
    seen(client, "x_eu")
        .await
        .into_iter()
        .chain(seen(client, "x_").await.into_iter().filter(|(n, _)| handmade(n)))
        .collect()
}

async fn not_x_eu(client: &Client) -> BTreeMap<String, Seen> {
    seen(client, "x_")
        .await
        .into_iter()
        .filter(|(name, _)| !name.starts_with("x_eu_") || handmade(name))
        .collect()
}

/// The tables `family` (`x` or `x_eu`) must never touch.
async fn not_theirs(client: &Client, family: &str) -> BTreeMap<String, Seen> {
    match family {
        "x" => not_x(client).await,
        "x_eu" => not_x_eu(client).await,
        other => panic!("no such family in this test: {other}"),
    }
}

const HANDMADE: [&str; 3] = ["x_2018-09-25", "x_eu_2018-09-25", "x_eu_backup"];

fn handmade(name: &str) -> bool {
    HANDMADE.contains(&name)
}

/// The tables a family keeps after resize_old early on `current` (tomorrow's is made at 23:45),
/// with their capacity by age: the
/// same arithmetic a reader would do by hand from the policy.
fn expected(policy: &Policy, current: NaiveDate) -> BTreeMap<String, (i64, i64)> {
    let delete_after = i64::from(policy.retention.as_ref().unwrap().delete_after.unwrap());
    (0..delete_after)
        .map(|age| {
            let day = current - Duration::days(age);
            let capacity = match policy.phase_for_age(age).billing {
                ddb_rollover::policy::Billing::Provisioned(c) => (c.read, c.write),
                other => panic!("{other:?}"),
            };
            (format!("{}_{day}", policy.prefix), capacity)
        })
        .collect()
}

/// A fresh moto (it stops when dropped), a client on it and the control adapter over that
/// client.
async fn moto() -> (LocalDynamo, Client, DynamoDb) {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let control = DynamoDb::local(client.clone());
    (server, client, control)
}

#[tokio::test]
async fn nested_families_with_retention_never_touch_each_other_or_hand_made_tables() {
    let (_server, client, control) = moto().await;
    let x = Policy::from_toml(X).unwrap();
    let x_eu = Policy::from_toml(X_EU).unwrap();
    // Hand-made look-alikes: names that parse for each family, another key schema (id, S),
    // old enough to be past both families' delete_after.
    for name in HANDMADE {
        testkit::create_plain_table(&client, name).await;
    }

    let start = NaiveDate::from_ymd_opt(2018, 10, 1).unwrap();
    // Tables of the families' names before their first runs: the operator starts each ledger
    // (recording none of the look-alikes).
    for policy in [&x, &x_eu] {
        let report = crate::support::ledger::init(&control, policy, at(start, "12:00:00")).await;
        assert!(
            crate::support::ledger::recorded_by(&report).is_empty(),
            "{report:#?}"
        );
    }
    let mut last_day = start;
    for offset in 0..DAYS {
        let day = start + Duration::days(offset);
        let next = day + Duration::days(1);
        for (instant, operation) in [
            (at(day, "23:45:00"), Operation::CreateNew),
            (at(next, "00:15:00"), Operation::ResizeOld),
        ] {
            for policy in [&x, &x_eu] {
                let family = &policy.prefix;
                let before = not_theirs(&client, family).await;
                let report = run_at(&control, policy, operation, instant).await;
                assert_succeeded(&report);
                assert_eq!(
                    not_theirs(&client, family).await,
                    before,
                    "{family}'s {operation} at {instant} changed a table that is not {family}'s"
                );
            }
        }
        last_day = next;
    }

    // Each family ends exactly as it would alone, and the hand-made tables are as made.
    let x_tables: BTreeMap<String, (i64, i64)> = seen(&client, "x_")
        .await
        .into_iter()
        .filter(|(name, _)| !name.starts_with("x_eu") && !handmade(name))
        .map(|(name, seen)| (name, seen.capacity))
        .collect();
    assert_eq!(x_tables, expected(&x, last_day));
    let x_eu_tables: BTreeMap<String, (i64, i64)> = seen(&client, "x_eu_")
        .await
        .into_iter()
        .filter(|(name, _)| !handmade(name))
        .map(|(name, seen)| (name, seen.capacity))
        .collect();
    assert_eq!(x_eu_tables, expected(&x_eu, last_day));
    let all = seen(&client, "x").await;
    for name in HANDMADE {
        assert_eq!(
            all.get(name),
            Some(&Seen {
                capacity: (5, 5),
                tags: BTreeMap::new()
            }),
            "{name}"
        );
    }
    // Every table of both families carries its own family tag.
    for (name, table) in &all {
        if handmade(name) {
            continue;
        }
        let family = if name.starts_with("x_eu_") { "x_eu" } else { "x" };
        assert_eq!(
            table.tags.get("ddb-rollover:family").map(String::as_str),
            Some(family),
            "{name}"
        );
    }

    // What `plan` (both operations, the operator's full view) reports about x's neighbours.
    // Each line is what the scheduled run would decide (it never reads a foreign name's tags:
    // the floor of calls); the sibling's family, which only this view can read, is named in a
    // warning.
    let mut reports = run_each(
        &control,
        &x,
        &[Operation::CreateNew, Operation::ResizeOld],
        &ddb_rollover::simulation(
            &x,
            &[Operation::CreateNew, Operation::ResizeOld],
            at(last_day, "00:20:00"),
        )
        .unwrap(),
        ApplyOptions {
            dry_run: true,
            ..ApplyOptions::default()
        },
    )
    .await
    .unwrap();
    let report = reports.pop().unwrap();
    let reason = |table: &str| {
        let line = report
            .tables
            .iter()
            .find(|l| l.item.facts.table == table)
            .unwrap_or_else(|| panic!("{table} not reported: {report:#?}"));
        assert_eq!(line.outcome, Outcome::Foreign, "{line:?}");
        line.item.reason.clone()
    };
    let sibling = format!("x_eu_{last_day}");
    assert!(
        reason(&sibling).contains("not ours, never described or touched"),
        "{}",
        reason(&sibling)
    );
    assert!(
        reason("x_2018-09-25").contains("id (S)"),
        "{}",
        reason("x_2018-09-25")
    );
    assert!(
        report.warnings.iter().any(|w| w.contains("\"x_eu\"")),
        "{:?}",
        report.warnings
    );
    assert!(
        report.warnings.iter().any(|w| w.contains("x_2018-09-25")),
        "{:?}",
        report.warnings
    );

    // A look-alike holding the next period's name blocks create_new loudly: it is not ours to
    // take over, and the period would have no table of ours.
    let report = run_at(
        &control,
        &x,
        Operation::CreateNew,
        at(NaiveDate::from_ymd_opt(2018, 9, 24).unwrap(), "23:45:00"),
    )
    .await;
    assert!(!report.succeeded());
    let blocked: Vec<&str> = report
        .lines_with(Outcome::Failed)
        .map(|l| l.item.facts.table.as_str())
        .collect();
    assert_eq!(blocked, ["x_2018-09-25"]);
    assert_eq!(
        seen(&client, "x_2018-09-25").await["x_2018-09-25"],
        Seen {
            capacity: (5, 5),
            tags: BTreeMap::new()
        }
    );
}

use super::common;

/// A table made by hand, as `spec` says, with no tags (through the same adapter, so its key,
/// indexes and capacity are exactly the policy's).
async fn hand_made(control: &DynamoDb, policy: &Policy, name: &str) {
    use ddb_rollover::control::Tables;
    let spec = fake_aws::table_spec(name, policy.key.clone(), policy.hot_phase().billing);
    control.create_table(&spec).await.unwrap();
}

/// `adopt`: an operator vouches for tables the family did not make. A dry run unless --yes; it
/// refuses a look-alike (another key) and another family's table, naming why; once adopted, a
/// hand-made table is deleted by retention like the family's own, while one left unadopted is
/// kept (read back from moto).
#[tokio::test]
async fn adopt_tags_only_the_tables_it_can_vouch_for_and_only_with_yes() {
    let (server, client, control) = moto().await;
    let x = Policy::from_toml(X).unwrap();
    let policy = std::env::temp_dir().join(format!("ddb-rollover-adopt-{}.toml", std::process::id()));
    std::fs::write(&policy, X).unwrap();
    let policy = policy.to_str().unwrap().to_owned();
    for name in ["x_2018-10-01", "x_2018-10-02"] {
        hand_made(&control, &x, name).await;
    }
    testkit::create_plain_table(&client, "x_2018-10-03").await;
    hand_made(&control, &x, "x_2018-10-04").await;
    let arn = |name: &str| format!("arn:aws:dynamodb:us-east-1:123456789012:table/{name}");
    common::tag_family(&client, &arn("x_2018-10-04"), "x_eu").await;
    let cli = |args: &[&str]| {
        let mut all = vec![
            "--policy",
            policy.as_str(),
            "--output",
            "json",
            "--at",
            "2018-10-10T10:00:00Z",
        ];
        all.extend_from_slice(args);
        common::run_cli(server.endpoint(), server.env(), &all)
    };
    let outcomes = |run: &testkit::ProcessRun| -> BTreeMap<String, String> {
        run.json()["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["table"].as_str().unwrap().to_owned(),
                    l["outcome"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };

    // Before the family's ledger is started, there is nothing to record into: refused, naming
    // `init`, which the operator runs first (it records none of these: none carries our tag).
    let unstarted = cli(&["adopt", "--yes", "x_2018-10-01"]);
    assert_eq!(unstarted.code, 1, "{}{}", unstarted.stdout, unstarted.stderr);
    assert!(
        unstarted.stdout.contains("ddb-rollover init"),
        "{}",
        unstarted.stdout
    );
    let init = cli(&["init", "--yes"]);
    assert_eq!(init.code, 0, "{}{}", init.stdout, init.stderr);

    // Dry run first: says what it would do, writes nothing, and fails for the refused ones.
    let dry = cli(&["adopt", "x_2018-10-01", "x_2018-10-03", "x_2018-10-04"]);
    assert_eq!(dry.code, 1, "{}{}", dry.stdout, dry.stderr);
    assert_eq!(
        outcomes(&dry),
        BTreeMap::from([
            ("x_2018-10-01".to_owned(), "planned".to_owned()),
            ("x_2018-10-03".to_owned(), "refused".to_owned()),
            ("x_2018-10-04".to_owned(), "refused".to_owned()),
        ])
    );
    let reasons = dry.stdout.clone();
    assert!(
        reasons.contains("its key is id (S)") && reasons.contains("names another family"),
        "{reasons}"
    );
    assert!(testkit::tags_of(&client, &arn("x_2018-10-01")).await.is_empty());

    // With --yes: tagged, read back; the refused ones untouched.
    let done = cli(&["adopt", "--yes", "x_2018-10-01"]);
    assert_eq!(done.code, 0, "{}{}", done.stdout, done.stderr);
    let tags = testkit::tags_of(&client, &arn("x_2018-10-01")).await;
    assert_eq!(tags.get("ddb-rollover:family").map(String::as_str), Some("x"));
    assert!(tags.contains_key("ddb-rollover:adopted") && tags.contains_key("ddb-rollover:period-end"));
    assert_eq!(
        testkit::tags_of(&client, &arn("x_2018-10-04"))
            .await
            .get("ddb-rollover:family")
            .map(String::as_str),
        Some("x_eu")
    );
    // Again: nothing to do.
    assert_eq!(
        outcomes(&cli(&["adopt", "--yes", "x_2018-10-01"]))["x_2018-10-01"],
        "unchanged"
    );

    // Retention deletes the adopted table, keeps the unadopted hand-made one and the refused
    // (the family's own tables of today are the newest it keeps; a table the ledger does not
    // record is not one of them).
    let create = cli(&["create-new"]);
    assert_eq!(create.code, 0, "{}{}", create.stdout, create.stderr);
    let resize = cli(&["resize-old"]);
    assert_eq!(resize.code, 0, "{}{}", resize.stdout, resize.stderr);
    let left = testkit::describe_all(&client).await;
    assert!(
        !left.contains_key("x_2018-10-01"),
        "the adopted table is past delete_after: {}",
        resize.stdout
    );
    for kept in ["x_2018-10-02", "x_2018-10-03", "x_2018-10-04"] {
        assert!(left.contains_key(kept), "{kept} was deleted");
    }
    assert!(
        resize.json()["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("x_2018-10-02")),
        "{}",
        resize.stdout
    );
}
