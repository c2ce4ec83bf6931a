//! `restore` end to end on moto: items written through the application crate to a period's
//! table, the table archived and deleted by retention, brought back with the real binary's
//! `restore`, and read back by the fan-out query; the restored table has our tags and its
//! phase's capacity, and retention keeps it until `--keep` has passed, then archives it again
//! and deletes it once that export is proven. Readings written after the archive export and
//! before the seal come back too; a write after the seal is refused. Everything is read back
//! from moto.

use aws_sdk_dynamodb::types::AttributeValue;
use std::path::PathBuf;

use chrono::{DateTime, Duration, NaiveDate, NaiveTime, Utc};
use ddb_rollover::policy::{TAG_ARCHIVED, TAG_SEALED};
use ddb_rollover::Policy;
use ddb_rollover_app::query::TimeRange;
use ddb_rollover_app::{ItemStream, Layout, Record, Sharding, Writer};

use crate::support::days::{at, day_runs};
use crate::support::ArchiveRig;
use aws_sdk_dynamodb::Client;
use ddb_rollover_aws::dynamodb::DynamoDb;
use testkit::{LocalDynamo, ProcessRun};

use super::common::run_cli;

/// The daily family of the engine's restore tests, one file with them.
const POLICY: &str = include_str!("../../crates/core/tests/fixtures/daily_retention.toml");

const TABLE: &str = "back_2018-10-02";

/// The first simulated day: its create_new pre-builds [`TABLE`].
const FIRST: NaiveDate = NaiveDate::from_ymd_opt(2018, 10, 1).unwrap();

/// The start of [`TABLE`]'s period, where the readings are written.
const START: DateTime<Utc> = FIRST.succ_opt().unwrap().and_time(NaiveTime::MIN).and_utc();

/// moto after [`FIRST`]'s runs, with the policy written to a file for the binary (removed when
/// this is dropped) and the application's writer for [`TABLE`].
struct Written {
    server: LocalDynamo,
    client: Client,
    control: DynamoDb,
    policy: Policy,
    policy_file: PathBuf,
    layout: Layout,
    writer: Writer,
}

impl Written {
    /// `test` names the policy file, so tests running at once do not share one.
    async fn first_day(test: &str) -> Self {
        let rig = ArchiveRig::start().await;
        let policy = Policy::from_toml(POLICY).unwrap();
        let policy_file =
            std::env::temp_dir().join(format!("ddb-rollover-{test}-{}.toml", std::process::id()));
        std::fs::write(&policy_file, POLICY).unwrap();
        day_runs(&rig.control, &policy, FIRST).await;
        let layout = Layout::new(&policy, Sharding::new(2).unwrap()).unwrap();
        let writer = Writer::new(rig.client.clone(), layout.clone());
        Self {
            server: rig.server,
            client: rig.client,
            control: rig.control,
            policy,
            policy_file,
            layout,
            writer,
        }
    }

    /// The binary's `restore` of [`TABLE`]'s period at `now`, kept three days, with a JSON report
    /// and `flags` after the command's own.
    fn restore(&self, now: DateTime<Utc>, flags: &[&str]) -> ProcessRun {
        let now = now.to_rfc3339();
        let policy_file = self.policy_file.to_str().unwrap();
        let mut args = vec!["--policy", policy_file, "--at", &now, "--output", "json"];
        args.extend(["restore", "2018-10-02", "--keep", "3d", "--wait", "2m"]);
        args.extend(flags);
        run_cli(self.server.endpoint(), self.server.env(), &args)
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.policy_file);
    }
}

/// Every item of the base `sensor-1` in 10-02, through the fan-out query.
async fn read_back(client: &Client, layout: &Layout) -> (Vec<String>, Vec<String>) {
    let range = TimeRange::new("sensor-1", START, START + Duration::days(1));
    let mut stream = ItemStream::new(client, layout, &range).unwrap();
    let mut values = Vec::new();
    while let Some(item) = stream.next().await {
        let item = item.unwrap();
        values.push(item["reading"].as_s().unwrap().clone());
    }
    (values, stream.missing_tables().to_vec())
}

#[tokio::test]
async fn written_archived_deleted_restored_and_read_back() {
    // 10-01's create_new pre-builds 10-02: 48 readings land in it through the writer.
    let w = Written::first_day("restore").await;
    let written: Vec<String> = (0..48).map(|n| format!("r{n:02}")).collect();
    let records = written
        .iter()
        .enumerate()
        .map(|(n, value)| {
            Record::new("sensor-1", START + Duration::minutes(30 * n as i64))
                .attribute("reading", AttributeValue::S(value.clone()))
        })
        .collect();
    let batch = w.writer.write_batch(records).await.unwrap();
    assert_eq!(batch.items, written.len());
    assert_eq!(read_back(&w.client, &w.layout).await.0, written);

    // Days of both runs until retention archived the table and deleted it. Between the archive
    // export and the seal, two late readings land: the final export after the seal must hold
    // them. Once sealed, DynamoDB refuses every write (the proxy in front of moto enforces the
    // resource-based policy as AWS does).
    let late: Vec<String> = vec!["late-1".into(), "late-2".into()];
    // 23:50 and 23:51 of 10-02, after the last of the 48.
    let late_at = |n: usize| START + Duration::minutes(23 * 60 + 50 + n as i64);
    let mut late_written = false;
    let mut refused_sealed = false;
    let mut day = FIRST + Duration::days(1);
    while testkit::describe_all(&w.client).await.contains_key(TABLE) {
        day_runs(&w.control, &w.policy, day).await;
        day += Duration::days(1);
        assert!(day < FIRST + Duration::days(10), "{TABLE} never deleted");
        let Some(arn) = testkit::describe_all(&w.client)
            .await
            .get(TABLE)
            .and_then(|t| t.table_arn().map(str::to_owned))
        else {
            break;
        };
        let tags = testkit::tags_of(&w.client, &arn).await;
        if tags.contains_key(TAG_ARCHIVED) && !tags.contains_key(TAG_SEALED) && !late_written {
            let records = late
                .iter()
                .enumerate()
                .map(|(n, value)| {
                    Record::new("sensor-1", late_at(n)).attribute("reading", AttributeValue::S(value.clone()))
                })
                .collect();
            assert_eq!(w.writer.write_batch(records).await.unwrap().items, late.len());
            late_written = true;
        }
        if tags.contains_key(TAG_SEALED) && !refused_sealed {
            let refused = w
                .client
                .put_item()
                .table_name(TABLE)
                .item("pk", AttributeValue::S("sensor-1#0".into()))
                .item("sk", AttributeValue::S("after-the-seal".into()))
                .send()
                .await
                .expect_err("a write to a sealed table");
            assert_eq!(
                refused.as_service_error().and_then(|e| e.meta().code()),
                Some("AccessDeniedException"),
                "{refused:?}"
            );
            refused_sealed = true;
        }
    }
    assert!(
        late_written && refused_sealed,
        "late readings written: {late_written}; a write refused under the seal: {refused_sealed}"
    );
    let written: Vec<String> = written.into_iter().chain(late).collect();
    let (values, missing) = read_back(&w.client, &w.layout).await;
    assert!(values.is_empty() && missing == [TABLE], "{values:?} {missing:?}");

    // restore: a dry run first (nothing imported), then --yes, at 12:00 the day after the
    // last runs, kept three days.
    let now = at(day, "12:00:00");
    let restore = |yes: bool| w.restore(now, if yes { &["--yes"] } else { &[] });
    let dry = restore(false);
    assert_eq!(dry.code, 0, "{}\n{}", dry.stdout, dry.stderr);
    let plan: serde_json::Value = serde_json::from_str(&dry.stdout).unwrap();
    assert_eq!(plan["tables"][0]["outcome"], "planned", "{plan:#}");
    assert_eq!(plan["tables"][0]["items"], written.len(), "{plan:#}");
    assert!(
        !testkit::describe_all(&w.client).await.contains_key(TABLE),
        "a dry run imported"
    );

    let queue = crate::support::events::subscribe(w.server.endpoint()).await;
    let done = restore(true);
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    let report: serde_json::Value = serde_json::from_str(&done.stdout).unwrap();
    assert_eq!(report["tables"][0]["outcome"], "done", "{report:#}");
    let events = crate::support::events::received(&queue).await;
    assert_eq!(
        events,
        [("Table Restored".to_string(), TABLE.to_string())],
        "{}",
        done.stderr
    );

    // Read back from moto: the items, our tags, the phase's capacity.
    let (values, missing) = read_back(&w.client, &w.layout).await;
    assert_eq!(values, written);
    assert!(missing.is_empty(), "{missing:?}");
    let description = w.client.describe_table().table_name(TABLE).send().await.unwrap();
    let table = description.table().unwrap();
    let throughput = table.provisioned_throughput().unwrap();
    assert_eq!(
        (
            throughput.read_capacity_units(),
            throughput.write_capacity_units()
        ),
        (Some(5), Some(1)),
        "the capacity of phase 1 (age >= 1)"
    );
    let tags = testkit::tags_of(&w.client, table.table_arn().unwrap()).await;
    assert_eq!(
        tags.get("ddb-rollover:family").map(String::as_str),
        Some("back"),
        "{tags:?}"
    );
    let keep_until = tags.get("ddb-rollover:keep-until").expect("keep-until tag");
    assert_eq!(keep_until, &(now + Duration::days(3)).to_rfc3339());

    // Again: refused, the table exists.
    let again = restore(true);
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert!(again.stdout.contains("the table exists"), "{}", again.stdout);

    // Retention keeps it while --keep runs (it is past delete_after), then archives it again
    // and deletes it once that export is proven.
    let keep_end = now + Duration::days(3);
    let mut deleted_at = None;
    for _ in 0..8 {
        day_runs(&w.control, &w.policy, day).await;
        let resize_at = at(day + Duration::days(1), "00:15:00");
        let there = testkit::describe_all(&w.client).await.contains_key(TABLE);
        if resize_at < keep_end {
            assert!(
                there,
                "{TABLE} deleted at {resize_at}, inside its keep (until {keep_end})"
            );
        } else if !there {
            deleted_at = Some(resize_at);
            break;
        }
        day += Duration::days(1);
    }
    let deleted_at = deleted_at.expect("deleted once the keep ended");
    assert!(deleted_at > keep_end);
    let exports = w
        .server
        .list_objects("archive", &format!("ddb-rollover/{TABLE}/"));
    let manifests = exports
        .iter()
        .filter(|k| k.ends_with("/manifest-summary.json"))
        .count();
    // Each incarnation: its archive export, then its final export after the seal.
    assert_eq!(
        manifests, 4,
        "archived again before the second deletion: {exports:?}"
    );
}

/// Manifests rewritten after the deletion (they now say 4 items where the data file holds 3,
/// consistently): restore trusts the receipt the deletion wrote, not what S3 says now, so the
/// archive is imported as recorded, 3 items, and the table is the family's again. Read back
/// from moto.
#[tokio::test]
async fn manifests_rewritten_after_the_deletion_change_nothing_restored() {
    let w = Written::first_day("short").await;
    let records = (0..3)
        .map(|n| {
            Record::new("sensor-1", START + Duration::minutes(30 * n))
                .attribute("reading", AttributeValue::S(format!("r{n}")))
        })
        .collect();
    w.writer.write_batch(records).await.unwrap();
    let mut day = FIRST + Duration::days(1);
    while testkit::describe_all(&w.client).await.contains_key(TABLE) {
        let report = day_runs(&w.control, &w.policy, day).await;
        day += Duration::days(1);
        let reasons: Vec<&String> = report
            .tables
            .iter()
            .filter(|l| l.item.facts.table == TABLE)
            .map(|l| &l.item.reason)
            .collect();
        assert!(
            day < FIRST + Duration::days(10),
            "{TABLE} never deleted: {reasons:?}"
        );
    }
    // The manifests say 4 items where the data file holds 3.
    let objects = w
        .server
        .list_objects("archive", &format!("ddb-rollover/{TABLE}/"));
    for key in objects
        .iter()
        .filter(|k| k.ends_with("/manifest-summary.json") || k.ends_with("/manifest-files.json"))
    {
        let text = String::from_utf8(w.server.get_object("archive", key)).unwrap();
        w.server.put_object(
            "archive",
            key,
            text.replace("\"itemCount\":3", "\"itemCount\":4").as_bytes(),
        );
    }
    let run = w.restore(at(day, "12:00:00"), &["--yes", "--no-event"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["tables"][0]["outcome"], "done", "{report:#}");
    let items = testkit::scan(&w.client, TABLE).await;
    assert_eq!(items.len(), 3, "{items:?}");
    let description = w.client.describe_table().table_name(TABLE).send().await.unwrap();
    let tags = testkit::tags_of(&w.client, description.table().unwrap().table_arn().unwrap()).await;
    assert_eq!(
        tags.get("ddb-rollover:family").map(String::as_str),
        Some("back"),
        "{tags:?}"
    );
}
