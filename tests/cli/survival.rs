//! The first promise end to end: what is not ours, or not due yet, survives 20 simulated days of both
//! scheduled runs with retention, on moto (DynamoDB and Application Auto Scaling on one port),
//! through the real binary. Everything is read back from moto (DescribeTable, Scan,
//! ListTagsOfResource, DescribeScalableTargets, DescribeScalingPolicies), never from a report.
//!
//! The policy: daily tables, premake 1, a 2-day write grace, phase 0 left to Application Auto
//! Scaling (5-50 RCU / 5-50 WCU), fixed phases from age 3 (2/2) and 5 (1/1), and retention
//! deleting after 6 periods keeping only the newest table: short enough that every object below
//! would be gone within the 20 days if the engine took it for its own.
//!
//! The objects, each made with the SDK directly (never through our code):
//! - (a) someone's StepScaling policy `someone-elses-step` attached to OUR scalable target (the
//!   read target create_new registered) of `survive_2018-10-02` while that table is in the
//!   autoscaling phase. DeregisterScalableTarget would delete it on AWS; moto leaves the policy
//!   behind, so both the target and the policy on it are checked.
//! - (b) a hand-made table with our exact name for a past day, `survive_2018-09-28`, with the
//!   policy's key schema, three items and no tags: it must keep its items and never get our
//!   family tag (only CreateTable by this policy writes it), so it is never deleted.
//! - (c) someone's scalable target with their target-tracking policy `someone-elses-read`,
//!   registered on `survive_2018-10-03` once it has left the autoscaling phase: the read
//!   capacity it holds is never changed (the write capacity, which no target of theirs holds,
//!   follows the phases: issue 38), the table is never deleted, and the target and policy stay.
//! - (d) the write grace: every table of ours keeps phase 0 (its capacity and our scalable
//!   targets) and exists until its period's end plus the grace.
//!
//! And retention does run: the engine's own plain tables are lowered through the fixed phases
//! and are gone once their period ended more than grace + delete_after (+ one period) ago;
//! none is deleted younger than delete_after.
//!
//! Every check runs after every run, and a failed check does not stop the simulation: the
//! test fails at the end listing each failed check once, with the first run it failed after
//! and how many runs it failed after.

use super::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use aws_sdk_applicationautoscaling::types::ScalableDimension;
use aws_sdk_dynamodb::types::{AttributeValue, ScalarAttributeType};
use chrono::{Duration, NaiveDate};
use common::{run_cli, DEBUG_DUMP};
use ddb_rollover::policy::TAG_FAMILY;

use crate::support::scaling::{put_policy, register_target, Scales};
use testkit::{LocalDynamo, Server};

const PREFIX: &str = "survive";

const POLICY: &str = r#"
prefix = "survive"
period = "day"
premake = 1
grace = "2d"

[key]
partition = { name = "pk", type = "N" }
sort = { name = "sk", type = "N" }

[[phases]]
min_age = 0
autoscaling = { min_read = 5, max_read = 50, min_write = 5, max_write = 50, target = 70 }
[[phases]]
min_age = 3
read = 2
write = 2
[[phases]]
min_age = 5
read = 1
write = 1

[retention]
delete_after = 6
keep_newest = 1
"#;

/// Phase 0's capacity: the autoscaling minimums CreateTable starts at (moto never scales).
const HOT: (i64, i64) = (5, 5);
const GRACE_DAYS: i64 = 2;
const DELETE_AFTER: i64 = 6;
const DAYS: i64 = 20;

const STEP_POLICY: &str = "someone-elses-step";
const FOREIGN_POLICY: &str = "someone-elses-read";
const READ: &str = "dynamodb:table:ReadCapacityUnits";
/// [`READ`], as the SDK names it.
const TABLE_READ: ScalableDimension = ScalableDimension::DynamoDbTableReadCapacityUnits;
const WRITE: &str = "dynamodb:table:WriteCapacityUnits";

fn start() -> NaiveDate {
    NaiveDate::from_ymd_opt(2018, 10, 1).unwrap()
}

fn name(date: NaiveDate) -> String {
    format!("{PREFIX}_{date}")
}

fn hand_made() -> NaiveDate {
    NaiveDate::from_ymd_opt(2018, 9, 28).unwrap()
}

/// (a): under someone's StepScaling policy on our target.
fn under_step_policy() -> NaiveDate {
    start() + Duration::days(1)
}

/// (c): under someone's scalable target.
fn under_foreign_target() -> NaiveDate {
    start() + Duration::days(2)
}

/// The run after which (c)'s table has left the autoscaling phase (age 3: resize-old at
/// its date + 3 days 00:15) and someone registers their target on it.
fn foreign_target_day() -> i64 {
    (under_foreign_target() - start()).num_days() + GRACE_DAYS
}

fn our_policy(dimension: &str) -> String {
    let side = if dimension == READ { "read" } else { "write" };
    format!("ddb-rollover-{PREFIX}-{side}")
}

/// Failed checks: each once, with the run it first failed after and how often it failed.
#[derive(Default)]
struct Violations(BTreeMap<String, (String, usize)>);

impl Violations {
    fn check(&mut self, ok: bool, what: impl Into<String>, after: &str, detail: impl FnOnce() -> String) {
        if ok {
            return;
        }
        let entry = self
            .0
            .entry(what.into())
            .or_insert_with(|| (format!("{after}: {}", detail()), 0));
        entry.1 += 1;
    }

    fn assert_none(&self) {
        if self.0.is_empty() {
            return;
        }
        let lines: Vec<String> = self
            .0
            .iter()
            .map(|(what, (first, count))| {
                format!("- {what}\n    first after {first} (failed after {count} runs)")
            })
            .collect();
        panic!("{} check(s) failed:\n{}", self.0.len(), lines.join("\n"));
    }
}

/// Application Auto Scaling as moto has it now.
#[derive(Debug, Default)]
struct Scaling {
    /// (resource id, dimension) -> (min, max)
    targets: BTreeMap<(String, String), (i32, i32)>,
    /// (resource id, dimension) -> {(policy name, policy type)}
    policies: BTreeMap<(String, String), BTreeSet<(String, String)>>,
}

impl Scaling {
    fn target(&self, table: &str, dimension: &str) -> Option<(i32, i32)> {
        self.targets
            .get(&(format!("table/{table}"), dimension.to_string()))
            .copied()
    }

    fn policies(&self, table: &str, dimension: &str) -> BTreeSet<(String, String)> {
        self.policies
            .get(&(format!("table/{table}"), dimension.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    fn has_policy(&self, table: &str, dimension: &str, policy: &str, kind: &str) -> bool {
        self.policies(table, dimension)
            .contains(&(policy.to_string(), kind.to_string()))
    }

    /// Our target, with our policy, with phase 0's bounds, on both dimensions.
    fn ours_in_phase_0(&self, table: &str) -> bool {
        [READ, WRITE].iter().all(|d| {
            self.target(table, d) == Some((5, 50))
                && self.has_policy(table, d, &our_policy(d), "TargetTrackingScaling")
        })
    }
}

struct Harness {
    server: LocalDynamo,
    dynamodb: aws_sdk_dynamodb::Client,
    scaling: aws_sdk_applicationautoscaling::Client,
    policy: PathBuf,
    violations: Violations,
}

impl Harness {
    async fn start() -> Harness {
        let server = LocalDynamo::start(Server::Moto);
        let dynamodb = server.client().await;
        let scaling = crate::support::autoscaling_client(server.endpoint());
        let dir = std::env::temp_dir().join(format!("ddb-rollover-survival-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let policy = dir.join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap();
        Harness {
            server,
            dynamodb,
            scaling,
            policy,
            violations: Violations::default(),
        }
    }

    /// One scheduled run through the binary; a non-zero exit or a failed table is a violation
    /// (the simulation goes on).
    fn run(&mut self, command: &str, at: &str) {
        let policy = self.policy.to_str().unwrap().to_string();
        let mut args = vec!["--policy", &policy, "--output", "json", "--at", at];
        if command == "resize-old" {
            args.push("--allow-future-clock");
        }
        args.push(command);
        let run = run_cli(self.server.endpoint(), self.server.env(), &args);
        let after = format!("{command} at {at}");
        let failed: Vec<String> = serde_json::from_str::<serde_json::Value>(&run.stdout)
            .ok()
            .and_then(|report| report["tables"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter(|l| l["outcome"] == "failed")
            .map(|l| format!("{} {}: {}", l["table"], l["decision"]["action"], l["error"]))
            .collect();
        self.violations.check(
            !DEBUG_DUMP.iter().any(|dump| run.stdout.contains(dump)),
            format!("{command}'s report shows no SDK debug dump"),
            &after,
            || run.stdout.clone(),
        );
        self.violations.check(
            run.code == 0 && failed.is_empty(),
            format!("{command} exits 0 with no failed table"),
            &after,
            || {
                format!(
                    "exit {}; failed: {failed:?}; stderr: {}",
                    run.code,
                    run.stderr.trim()
                )
            },
        );
    }

    /// Every table on moto with its (RCU, WCU).
    async fn tables(&self) -> BTreeMap<String, (i64, i64)> {
        testkit::capacities(&self.dynamodb).await
    }

    async fn scaling(&self) -> Scaling {
        let targets = crate::support::scaling::targets(&self.scaling).await;
        let policies = crate::support::scaling::policies(&self.scaling).await;
        let mut found = Scaling::default();
        for t in targets {
            found.targets.insert(
                (
                    t.resource_id().to_string(),
                    t.scalable_dimension().as_str().to_string(),
                ),
                (t.min_capacity(), t.max_capacity()),
            );
        }
        for p in policies {
            found
                .policies
                .entry((
                    p.resource_id().to_string(),
                    p.scalable_dimension().as_str().to_string(),
                ))
                .or_default()
                .insert((p.policy_name().to_string(), p.policy_type().as_str().to_string()));
        }
        found
    }

    /// (b): our name, our key, three items, no tags.
    async fn make_hand_made_table(&self) {
        let table = name(hand_made());
        testkit::create_keyed(&self.dynamodb, &table, &["pk", "sk"], ScalarAttributeType::N)
            .provisioned_throughput(testkit::throughput(5, 5))
            .send()
            .await
            .unwrap();
        for i in 0..3 {
            self.dynamodb
                .put_item()
                .table_name(&table)
                .item("pk", AttributeValue::N(i.to_string()))
                .item("sk", AttributeValue::N((i * 10).to_string()))
                .item("reading", AttributeValue::S(format!("by hand {i}")))
                .send()
                .await
                .unwrap();
        }
    }

    /// (a): someone's StepScaling policy on our read target of the table.
    async fn attach_step_policy(&self, table: &str) {
        let resource = format!("table/{table}");
        put_policy(&self.scaling, &resource, TABLE_READ, STEP_POLICY, Scales::Step)
            .send()
            .await
            .unwrap();
    }

    /// (c): someone's scalable target with their target-tracking policy on the table's reads.
    async fn register_foreign_target(&self, table: &str) {
        let resource = format!("table/{table}");
        register_target(&self.scaling, &resource, TABLE_READ, 1, 10)
            .send()
            .await
            .unwrap();
        put_policy(
            &self.scaling,
            &resource,
            TABLE_READ,
            FOREIGN_POLICY,
            Scales::Tracking(60.0),
        )
        .send()
        .await
        .unwrap();
    }

    /// The objects that must survive every run: (a), (b), (c) once made.
    async fn check_survivors(
        &mut self,
        after: &str,
        tables: &BTreeMap<String, (i64, i64)>,
        scaling: &Scaling,
    ) {
        let v = &mut self.violations;

        // (a)
        let a = name(under_step_policy());
        v.check(tables.contains_key(&a), format!("(a) {a} exists"), after, || {
            "deleted".into()
        });
        v.check(
            scaling.target(&a, READ).is_some(),
            format!("(a) the read target of {a}, carrying {STEP_POLICY}, stays registered"),
            after,
            || {
                format!(
                    "deregistered (on AWS that deletes {STEP_POLICY}); its policies: {:?}",
                    scaling.policies(&a, READ)
                )
            },
        );
        v.check(
            scaling.has_policy(&a, READ, STEP_POLICY, "StepScaling"),
            format!("(a) {STEP_POLICY} is still on {a}'s read target"),
            after,
            || format!("policies there: {:?}", scaling.policies(&a, READ)),
        );

        // (b)
        let b = name(hand_made());
        let exists = tables.contains_key(&b);
        v.check(exists, format!("(b) the hand-made {b} exists"), after, || {
            "deleted".into()
        });
        if exists {
            let items = testkit::scan(&self.dynamodb, &b).await.len();
            v.check(items == 3, format!("(b) {b} keeps its 3 items"), after, || {
                format!("{items} items")
            });
            let arn = {
                let out = self
                    .dynamodb
                    .describe_table()
                    .table_name(&b)
                    .send()
                    .await
                    .unwrap();
                out.table().unwrap().table_arn().unwrap().to_string()
            };
            let tags = testkit::tags_of(&self.dynamodb, &arn).await;
            v.check(
                !tags.contains_key(TAG_FAMILY),
                format!("(b) {b} never gets {TAG_FAMILY}"),
                after,
                || format!("tags: {tags:?}"),
            );
        }
    }

    /// (c), once registered: the target and its policy stay, the table stays and its read
    /// capacity, which their target holds, is not changed (its write capacity is ours).
    fn check_foreign_target(
        &mut self,
        after: &str,
        tables: &BTreeMap<String, (i64, i64)>,
        scaling: &Scaling,
        capacity: (i64, i64),
    ) {
        let c = name(under_foreign_target());
        let v = &mut self.violations;
        v.check(tables.contains_key(&c), format!("(c) {c} exists"), after, || {
            "deleted".into()
        });
        v.check(
            scaling.target(&c, READ) == Some((1, 10)),
            format!("(c) someone's read target on {c} stays registered (1-10)"),
            after,
            || format!("{:?}", scaling.target(&c, READ)),
        );
        v.check(
            scaling.has_policy(&c, READ, FOREIGN_POLICY, "TargetTrackingScaling"),
            format!("(c) {FOREIGN_POLICY} stays on {c}'s read target"),
            after,
            || format!("policies there: {:?}", scaling.policies(&c, READ)),
        );
        if let Some(have) = tables.get(&c) {
            v.check(
                have.0 == capacity.0,
                format!("(c) {c}'s read capacity is not changed under someone's read target"),
                after,
                || format!("{have:?}, was {capacity:?}"),
            );
        }
    }

    /// (d) and retention, after the resize-old run on `today` (00:15): every table of ours
    /// within its grace exists in phase 0; out of it, in its fixed phase; none deleted younger
    /// than delete_after. Our plain tables only: (a) and (c) have their own checks.
    fn check_ours(
        &mut self,
        today: NaiveDate,
        tables: &BTreeMap<String, (i64, i64)>,
        scaling: &Scaling,
        made: &BTreeSet<NaiveDate>,
    ) {
        let after = format!("resize-old at {today}T00:15:00Z");
        let v = &mut self.violations;
        for date in made {
            let table = name(*date);
            let age = (today - *date).num_days();
            let have = tables.get(&table);
            let special = *date == under_step_policy() || *date == under_foreign_target();
            if age <= GRACE_DAYS {
                // In its grace: phase 0, whatever the rest says (also (a) and (c)).
                v.check(
                    have.is_some(),
                    format!("(d) a table in its grace is not deleted (age {age})"),
                    &after,
                    || format!("{table} deleted"),
                );
                v.check(
                    have.is_none_or(|c| *c == HOT),
                    format!("(d) a table in its grace keeps phase 0's capacity (age {age})"),
                    &after,
                    || format!("{table}: {have:?}"),
                );
                v.check(
                    scaling.ours_in_phase_0(&table),
                    format!("(d) a table in its grace keeps our scalable targets (age {age})"),
                    &after,
                    || {
                        format!(
                            "{table}: read {:?} {:?}, write {:?} {:?}",
                            scaling.target(&table, READ),
                            scaling.policies(&table, READ),
                            scaling.target(&table, WRITE),
                            scaling.policies(&table, WRITE)
                        )
                    },
                );
                continue;
            }
            if special {
                continue;
            }
            if age < DELETE_AFTER {
                v.check(
                    have.is_some(),
                    format!("ours is not deleted before delete_after (age {age})"),
                    &after,
                    || format!("{table} deleted"),
                );
            }
            let want = if age >= 5 { (1, 1) } else { (2, 2) };
            if let Some(have) = have {
                v.check(
                    *have == want,
                    format!("ours is in its fixed phase after its grace (age {age})"),
                    &after,
                    || format!("{table}: {have:?}, want {want:?}"),
                );
                v.check(
                    scaling.target(&table, READ).is_none() && scaling.target(&table, WRITE).is_none(),
                    format!("ours has no scalable target after its grace (age {age})"),
                    &after,
                    || {
                        format!(
                            "{table}: read {:?}, write {:?}",
                            scaling.target(&table, READ),
                            scaling.target(&table, WRITE)
                        )
                    },
                );
            }
        }
    }
}

#[tokio::test]
async fn foreign_scaling_hand_made_tables_and_graced_tables_survive_twenty_days_on_moto() {
    let mut h = Harness::start().await;
    h.make_hand_made_table().await;
    // A table of the family's names before its first run: the operator starts the ledger
    // (which does not record the hand-made table).
    let policy = h.policy.to_str().unwrap().to_string();
    let init = run_cli(
        h.server.endpoint(),
        h.server.env(),
        &[
            "--policy",
            &policy,
            "--at",
            &format!("{}T12:00:00Z", start()),
            "init",
            "--yes",
        ],
    );
    assert_eq!(init.code, 0, "{}{}", init.stdout, init.stderr);
    let mut made: BTreeSet<NaiveDate> = BTreeSet::new();
    let mut foreign_capacity: Option<(i64, i64)> = None;

    for d in 0..DAYS {
        let date = start() + Duration::days(d);
        let next = date + Duration::days(1);

        let after = format!("create-new at {date}T23:45:00Z");
        h.run("create-new", &format!("{date}T23:45:00Z"));
        made.extend([date, next]);
        if d == 0 {
            // (a): while the table is pre-built in the autoscaling phase, with our target.
            let a = name(under_step_policy());
            let scaling = h.scaling().await;
            assert!(
                scaling.ours_in_phase_0(&a),
                "create_new registered no target of ours on {a} to attach to: {scaling:#?}"
            );
            h.attach_step_policy(&a).await;
        }
        let tables = h.tables().await;
        let scaling = h.scaling().await;
        h.check_survivors(&after, &tables, &scaling).await;
        if let Some(capacity) = foreign_capacity {
            h.check_foreign_target(&after, &tables, &scaling, capacity);
        }

        let after = format!("resize-old at {next}T00:15:00Z");
        h.run("resize-old", &format!("{next}T00:15:00Z"));
        if d == foreign_target_day() {
            // (c): out of the autoscaling phase, our targets gone: someone registers theirs.
            let c = name(under_foreign_target());
            let scaling = h.scaling().await;
            assert!(
                scaling.target(&c, READ).is_none(),
                "{c} still has a read target after leaving the autoscaling phase: {scaling:#?}"
            );
            h.register_foreign_target(&c).await;
            foreign_capacity = Some(
                *h.tables()
                    .await
                    .get(&c)
                    .unwrap_or_else(|| panic!("{c} is gone before someone could register a target on it")),
            );
        }
        let tables = h.tables().await;
        let scaling = h.scaling().await;
        h.check_survivors(&after, &tables, &scaling).await;
        if let Some(capacity) = foreign_capacity {
            h.check_foreign_target(&after, &tables, &scaling, capacity);
        }
        h.check_ours(next, &tables, &scaling, &made);
    }

    // Retention ran: every plain table of ours whose period ended more than grace +
    // delete_after + one period before the last run is gone.
    let last = start() + Duration::days(DAYS);
    let tables = h.tables().await;
    let kept: Vec<String> = made
        .iter()
        .filter(|date| **date != under_step_policy() && **date != under_foreign_target())
        .filter(|date| (last - **date).num_days() > 1 + GRACE_DAYS + DELETE_AFTER)
        .map(|date| name(*date))
        .filter(|table| tables.contains_key(table))
        .collect();
    h.violations.check(
        kept.is_empty(),
        "retention deletes our own tables past grace + delete_after",
        &format!("resize-old at {last}T00:15:00Z"),
        || format!("still there: {kept:?}"),
    );
    h.violations.assert_none();
}
