//! The applications' side against moto: items written through the writer come back from the
//! fan-out query exactly, in order, across period tables and shards. Tables are made by the
//! same create_new the Lambda function runs; results are checked against what was written,
//! and against a plain Scan of every table.

use std::collections::BTreeSet;

use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use ddb_rollover::{Operation, Policy};
use ddb_rollover_app::keys::{sort_key, sort_key_time};
use ddb_rollover_app::query::{query, TimeRange};
use ddb_rollover_app::write::{Item, UnwrittenReason};
use ddb_rollover_app::{table_for, tables_between, ItemStream, Layout, Record, Sharding, WriteError, Writer};
use ddb_rollover_aws::dynamodb::DynamoDb;
use testkit::{LocalDynamo, Server};

use crate::support::days::run_at;

const POLICY: &str = r#"
prefix = "fan"
period = "hour"
premake = 1

[key]
partition = { name = "pk", type = "S" }
sort = { name = "sk", type = "S" }
"#;

const SHARDS: u32 = 4;

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 12, 1, 0, 0, 0).unwrap()
}

struct Fixture {
    _server: LocalDynamo,
    client: Client,
    layout: Layout,
    writer: Writer,
}

/// moto with the tables of 00:00 and 01:00 (create_new at 00:00 with premake 1); 02:00 has none.
async fn fixture() -> Fixture {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let policy = Policy::from_toml(POLICY).unwrap();
    let report = run_at(
        &DynamoDb::local(client.clone()),
        &policy,
        Operation::CreateNew,
        start(),
    )
    .await;
    assert!(report.succeeded(), "{report:?}");
    let layout = Layout::new(&policy, Sharding::new(SHARDS).unwrap()).unwrap();
    let writer = Writer::new(client.clone(), layout.clone());
    Fixture {
        _server: server,
        client,
        layout,
        writer,
    }
}

/// Everything an [`ItemStream`] yields, and its missing tables.
async fn drain(f: &Fixture, range: &TimeRange) -> (Vec<Item>, Vec<String>) {
    let mut stream = ItemStream::new(&f.client, &f.layout, range).unwrap();
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item.unwrap());
    }
    (items, stream.missing_tables().to_vec())
}

/// `n` readings per base spread over [00:00, 02:00), with pairs at the same instant.
fn readings(bases: &[&str], n: i64) -> Vec<Record> {
    let mut records = Vec::new();
    for base in bases {
        for i in 0..n {
            // 7200 s / n apart, and every tenth reading shares its instant with the one before.
            let offset = i - i64::from(i % 10 == 9);
            let time = start() + TimeDelta::milliseconds(offset * 7_200_000 / n);
            records.push(
                Record::new(*base, time)
                    .unique(format!("{i:04}"))
                    .attribute("reading", AttributeValue::N(i.to_string())),
            );
        }
    }
    fastrand::shuffle(&mut records);
    records
}

/// [`readings`] of `base` alone, written through the fixture's writer.
async fn write_readings(f: &Fixture, base: &str, n: i64) -> Vec<Record> {
    let records = readings(&[base], n);
    f.writer.write_batch(records.clone()).await.unwrap();
    records
}

/// From 23:00 the day before to 03:00: four hours, of which 23:00 and 02:00 have no table.
fn around_the_tables() -> (DateTime<Utc>, DateTime<Utc>) {
    (start() - TimeDelta::hours(1), start() + TimeDelta::hours(3))
}

/// The sort keys the records of `base` must come back with, oldest first.
fn expected_sort_keys(records: &[Record], base: &str, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<String> {
    let mut keys: Vec<String> = records
        .iter()
        .filter(|r| r.base == base && from <= r.time && r.time < to)
        .map(|r| sort_key(r.time, r.unique.as_deref().unwrap()))
        .collect();
    keys.sort();
    keys
}

fn text(item: &Item, name: &str) -> String {
    item[name].as_s().unwrap().clone()
}

fn sort_keys(items: &[Item]) -> Vec<String> {
    items.iter().map(|item| text(item, "sk")).collect()
}

#[tokio::test]
async fn fan_out_returns_exactly_the_written_items_in_order() {
    let f = fixture().await;
    let records = readings(&["SENSOR#1", "SENSOR#2"], 300);
    let written = f.writer.write_batch(records.clone()).await.unwrap();
    assert_eq!(written.items, 600);
    // 300 items per hour table, 25 per call; moto never leaves items unprocessed.
    assert_eq!((written.requests, written.retries), (24, 0));

    // What DynamoDB holds, by Scan: both hour tables, all four shards of each base.
    let tables = tables_between(f.layout.policy(), start(), start() + TimeDelta::hours(2)).unwrap();
    assert_eq!(tables.len(), 2);
    let mut stored = Vec::new();
    for table in &tables {
        let items = testkit::scan(&f.client, &table.name).await;
        assert!(!items.is_empty(), "{} holds items", table.name);
        for item in &items {
            let (time, _) = ddb_rollover_app::keys::parse_sort_key(&text(item, "sk")).unwrap();
            assert_eq!(table_for(f.layout.policy(), time).unwrap().name, table.name);
        }
        stored.extend(items);
    }
    assert_eq!(stored.len(), 600);
    let shard_keys: BTreeSet<String> = stored.iter().map(|item| text(item, "pk")).collect();
    let all_shards: BTreeSet<String> = ["SENSOR#1", "SENSOR#2"]
        .iter()
        .flat_map(|base| f.layout.sharding().keys(base))
        .collect();
    assert_eq!(shard_keys, all_shards);

    // The whole range, oldest first: exactly SENSOR#1's items, in sort-key order.
    let (from, to) = (start(), start() + TimeDelta::hours(2));
    let whole = query(&f.client, &f.layout, &TimeRange::new("SENSOR#1", from, to))
        .await
        .unwrap();
    assert_eq!(
        sort_keys(&whole.items),
        expected_sort_keys(&records, "SENSOR#1", from, to)
    );
    assert_eq!(whole.items.len(), 300);
    assert!(whole
        .items
        .iter()
        .all(|item| text(item, "pk").starts_with("SENSOR#1#")));
    assert!(whole.missing_tables.is_empty());
    assert_eq!(whole.tables_read, 2);

    // Newest first is the same list reversed; paging by 7 items changes nothing but the calls.
    let paged = TimeRange::new("SENSOR#1", from, to).newest_first().page_size(7);
    let newest = query(&f.client, &f.layout, &paged).await.unwrap();
    let mut reversed = sort_keys(&whole.items);
    reversed.reverse();
    assert_eq!(sort_keys(&newest.items), reversed);
    assert!(newest.requests >= 300 / 7, "paged: {} calls", newest.requests);

    // A window inside both tables: [00:40, 01:20), bounds exclusive at the end.
    let (from, to) = (start() + TimeDelta::minutes(40), start() + TimeDelta::minutes(80));
    let window = query(&f.client, &f.layout, &TimeRange::new("SENSOR#2", from, to))
        .await
        .unwrap();
    let expected = expected_sort_keys(&records, "SENSOR#2", from, to);
    assert!(expected.len() > 50);
    assert_eq!(sort_keys(&window.items), expected);
    assert!(expected
        .iter()
        .all(|k| k.as_str() >= sort_key_time(from).as_str() && k.as_str() < sort_key_time(to).as_str()));
}

#[tokio::test]
async fn a_limit_stops_early_and_missing_tables_are_skipped_and_named() {
    let f = fixture().await;
    let records = write_readings(&f, "SENSOR#9", 120).await;
    let (from, to) = around_the_tables();

    // Newest first over four hours: 02:00 and 23:00 (the day before) have no table.
    let latest = TimeRange::new("SENSOR#9", from, to).newest_first().limit(5);
    let outcome = query(&f.client, &f.layout, &latest).await.unwrap();
    let all = expected_sort_keys(&records, "SENSOR#9", from, to);
    let newest5: Vec<String> = all.iter().rev().take(5).cloned().collect();
    assert_eq!(sort_keys(&outcome.items), newest5);
    assert_eq!(outcome.missing_tables, ["fan_2024-12-01T02"]);
    // 02:00 (missing) and 01:00 (enough items) are read; 00:00 and the day before are not.
    assert_eq!(outcome.tables_read, 2);

    let everything = query(&f.client, &f.layout, &TimeRange::new("SENSOR#9", from, to))
        .await
        .unwrap();
    assert_eq!(sort_keys(&everything.items), all);
    assert_eq!(
        everything.missing_tables,
        ["fan_2024-11-30T23", "fan_2024-12-01T02"]
    );
    assert_eq!(everything.tables_read, 4);
}

#[tokio::test]
async fn calculated_shards_let_a_reader_query_one_shard() {
    let f = fixture().await;
    let records: Vec<Record> = (0..40)
        .map(|i| {
            let device = format!("device-{}", i % 8);
            Record::new("READINGS", start() + TimeDelta::minutes(i))
                .shard_by(&device)
                .attribute("device", AttributeValue::S(device))
        })
        .collect();
    f.writer.write_batch(records).await.unwrap();
    let sharding = f.layout.sharding();
    let shard = sharding.shard_of("device-3");
    let range = TimeRange::new("READINGS", start(), start() + TimeDelta::hours(1)).shard(shard);
    let outcome = query(&f.client, &f.layout, &range).await.unwrap();
    let devices: BTreeSet<String> = outcome.items.iter().map(|item| text(item, "device")).collect();
    assert!(devices.contains("device-3"));
    assert!(
        devices.iter().all(|d| sharding.shard_of(d) == shard),
        "{devices:?}"
    );
    let expected: usize = (0..40)
        .filter(|i| sharding.shard_of(&format!("device-{}", i % 8)) == shard)
        .count();
    assert_eq!(outcome.items.len(), expected);
    assert_eq!(outcome.requests, 1, "one shard of one table");
}

#[tokio::test]
async fn writes_to_a_missing_table_fail_clearly_and_are_counted() {
    let f = fixture().await;
    let at_two = start() + TimeDelta::hours(2) + TimeDelta::minutes(5);
    let err = f.writer.put(Record::new("SENSOR#1", at_two)).await.unwrap_err();
    assert!(
        matches!(&err, WriteError::TableMissing { table, .. } if table == "fan_2024-12-01T02"),
        "{err}"
    );
    assert!(
        err.to_string().contains("fan_2024-12-01T02 does not exist"),
        "{err}"
    );
    assert_eq!(f.writer.missing_table_writes(), 1);

    // A batch over an existing and a missing table: the existing one is written, the rest
    // comes back pinned, and writing it again later (once the table exists) is idempotent.
    let batch: Vec<Record> = (0..30)
        .map(|i| Record::new("SENSOR#1", start() + TimeDelta::minutes(100 + i)))
        .collect();
    let err = f.writer.write_batch(batch).await.unwrap_err();
    let WriteError::Incomplete { written, unwritten } = &err else {
        panic!("{err}");
    };
    // 01:40 to 01:59 is the existing 01:00 table (20 records); 02:00 to 02:09 is missing.
    assert_eq!(*written, 20);
    assert_eq!(unwritten.len(), 1);
    assert_eq!(unwritten[0].table, "fan_2024-12-01T02");
    assert_eq!(unwritten[0].reason, UnwrittenReason::TableMissing);
    assert_eq!(unwritten[0].records.len(), 10);
    assert_eq!(f.writer.missing_table_writes(), 11);
    assert!(
        err.to_string().starts_with("10 of 30 items were not written"),
        "{err}"
    );

    let policy = f.layout.policy();
    run_at(
        &DynamoDb::local(f.client.clone()),
        policy,
        Operation::CreateNew,
        at_two,
    )
    .await;
    let pinned = unwritten[0].records.clone();
    f.writer.write_batch(pinned.clone()).await.unwrap();
    f.writer.write_batch(pinned).await.unwrap();
    assert_eq!(
        testkit::scan(&f.client, "fan_2024-12-01T02").await.len(),
        10,
        "no duplicates"
    );
}

#[tokio::test]
async fn the_stream_yields_what_the_query_returns_reading_lazily() {
    let f = fixture().await;
    let records = write_readings(&f, "SENSOR#5", 200).await;
    let (from, to) = around_the_tables();
    let expected = expected_sort_keys(&records, "SENSOR#5", from, to);
    assert_eq!(expected.len(), 200);

    for range in [
        TimeRange::new("SENSOR#5", from, to),
        TimeRange::new("SENSOR#5", from, to).page_size(3),
        TimeRange::new("SENSOR#5", from, to).newest_first().page_size(10),
        TimeRange::new("SENSOR#5", from, to).newest_first().limit(17),
    ] {
        let (streamed, mut missing) = drain(&f, &range).await;
        missing.sort();
        let queried = query(&f.client, &f.layout, &range).await.unwrap();
        assert_eq!(sort_keys(&streamed), sort_keys(&queried.items), "{range:?}");
        let mut want = expected.clone();
        if range.order == ddb_rollover_app::Order::NewestFirst {
            want.reverse();
        }
        want.truncate(range.limit.unwrap_or(usize::MAX));
        assert_eq!(sort_keys(&streamed), want, "{range:?}");
        let expected_missing: &[&str] = if range.limit.is_some() {
            &["fan_2024-12-01T02"]
        } else {
            &["fan_2024-11-30T23", "fan_2024-12-01T02"]
        };
        assert_eq!(missing, expected_missing, "{range:?}");
    }

    // Three items from pages of 5: one page per shard of the first table, nothing more.
    let range = TimeRange::new("SENSOR#5", start(), to).page_size(5);
    let mut stream = ItemStream::new(&f.client, &f.layout, &range).unwrap();
    for want in &expected[..3] {
        assert_eq!(&text(&stream.next().await.unwrap().unwrap(), "sk"), want);
    }
    assert_eq!(stream.requests(), SHARDS as usize);
}
