//! The real `iot-ingest` binary against a fresh moto server. What it wrote is read back with
//! Scan, DescribeTimeToLive and ListTables, never taken from the program's JSON alone.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::Command;

use aws_sdk_dynamodb::types::{AttributeValue, TimeToLiveStatus};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use serde_json::Value;
use testkit::{LocalDynamo, ProcessRun, Server};

use crate::support::ledger::without_ledger;

const PREFIX: &str = "iot_test";
const DAY: &str = "2024-12-01";
const SENSORS: usize = 8;
const EVERY_SECONDS: usize = 600;
const SHARDS: usize = 4;
const SENSOR: &str = "SENSOR#0007";
const HOURS_PER_TABLE: i64 = 6;

type Item = HashMap<String, AttributeValue>;

struct Run {
    code: i32,
    json: Value,
    stderr: String,
}

/// Runs the binary with small sizes against `server`, JSON output.
fn ingest(server: &LocalDynamo) -> Run {
    let run = ProcessRun::of(
        Command::new(crate::support::binaries::iot_ingest())
            .args([
                "--endpoint-url",
                server.endpoint(),
                "--region",
                "us-east-1",
                "--output",
                "json",
            ])
            .args([
                "--prefix", PREFIX, "--day", DAY, "--period", "6h", "--sensor", "7",
            ])
            .args(["--sensors", &SENSORS.to_string()])
            .args(["--every-seconds", &EVERY_SECONDS.to_string()])
            .args(["--shards", &SHARDS.to_string()])
            .envs(server.env()),
    );
    Run {
        code: run.code,
        json: run.json(),
        stderr: run.stderr,
    }
}

/// Every item of every table on the server but the family's ledger (which the example's
/// create_new run starts: it must be there), by table name.
async fn scan_all(client: &Client) -> BTreeMap<String, Vec<Item>> {
    let mut all = BTreeMap::new();
    for name in without_ledger(testkit::describe_all(client).await, PREFIX).into_keys() {
        let items = testkit::scan(client, &name).await;
        all.insert(name, items);
    }
    all
}

fn text<'a>(item: &'a Item, name: &str) -> &'a str {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .unwrap_or_else(|| panic!("{name} is not a string in {item:?}"))
}

/// The instant at the front of a sort key `2024-12-01T06:10:00.000000000Z#00037`.
fn sort_key_time(sk: &str) -> DateTime<Utc> {
    let time = sk.split('#').next().unwrap_or(sk);
    DateTime::parse_from_rfc3339(time)
        .unwrap_or_else(|e| panic!("sort key {sk}: {e}"))
        .with_timezone(&Utc)
}

/// `[start, end)` of a 6-hour table named `iot_test_2024-12-01T06`, from its name alone.
fn period_of(table: &str) -> (DateTime<Utc>, DateTime<Utc>) {
    let label = table
        .strip_prefix(&format!("{PREFIX}_"))
        .unwrap_or_else(|| panic!("{table} lacks the prefix"));
    let (date, hour) = label
        .split_once('T')
        .unwrap_or_else(|| panic!("{label} is not an hour label"));
    let date: NaiveDate = date.parse().unwrap_or_else(|e| panic!("{label}: {e}"));
    let hour: u32 = hour.parse().unwrap_or_else(|e| panic!("{label}: {e}"));
    let start = date.and_hms_opt(hour, 0, 0).expect("valid hour").and_utc();
    (start, start + TimeDelta::hours(HOURS_PER_TABLE))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

#[tokio::test]
async fn a_day_is_written_across_tables_and_shards_and_read_back() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;

    let first = ingest(&server);
    assert_eq!(
        first.code, 0,
        "first run failed: {}\nstderr: {}",
        first.json, first.stderr
    );
    let report = &first.json;
    assert_eq!(report["verified"], Value::Bool(true), "{report}");

    // The tables it names are exactly the ones on the server, each with TTL on expires_at.
    let contents = scan_all(&client).await;
    let names: Vec<String> = contents.keys().cloned().collect();
    assert_eq!(strings(&report["tables"]), names);
    for name in &names {
        let ttl = client
            .describe_time_to_live()
            .table_name(name)
            .send()
            .await
            .unwrap_or_else(|e| panic!("DescribeTimeToLive {name}: {e:?}"));
        let ttl = ttl.time_to_live_description().expect("a TTL description");
        assert_eq!(
            ttl.time_to_live_status(),
            Some(&TimeToLiveStatus::Enabled),
            "{name}"
        );
        assert_eq!(ttl.attribute_name(), Some("expires_at"), "{name}");
    }

    // Every reading of every sensor, each in the table of its period, with a 30-day TTL.
    let readings_per_day = 86_400usize.div_ceil(EVERY_SECONDS);
    let total: usize = contents.values().map(Vec::len).sum();
    assert_eq!(total, SENSORS * readings_per_day);
    assert_eq!(report["written"], Value::from(total));
    let used = contents.values().filter(|items| !items.is_empty()).count();
    assert!(used >= 2, "the day's items sit in {used} table(s)");
    let mut sensor_keys = Vec::new();
    let mut sensor_shards = BTreeSet::new();
    for (table, items) in &contents {
        let (start, end) = period_of(table);
        for item in items {
            let sk = text(item, "sk");
            let t = sort_key_time(sk);
            assert!(start <= t && t < end, "{sk} in {table}");
            let expires: i64 = item["expires_at"]
                .as_n()
                .expect("a number")
                .parse()
                .expect("an integer");
            assert_eq!(expires, (t + TimeDelta::days(30)).timestamp(), "{sk}");
            let pk = text(item, "pk");
            if pk.rsplit_once('#').is_some_and(|(base, _)| base == SENSOR) {
                sensor_keys.push(sk.to_string());
                sensor_shards.insert(pk.to_string());
            }
        }
    }

    // The sensor's items: what the program says it read, in the order it says.
    let all_shards: BTreeSet<String> = (1..=SHARDS).map(|n| format!("{SENSOR}#{n}")).collect();
    assert_eq!(sensor_shards, all_shards);
    sensor_keys.sort();
    assert_eq!(sensor_keys.len(), readings_per_day);
    assert!(sensor_keys.windows(2).all(|w| w[0] < w[1]), "duplicate sort keys");
    assert_eq!(report["sensor"], SENSOR);
    assert_eq!(report["read"], Value::from(sensor_keys.len()));
    assert_eq!(
        report["first_sort_key"].as_str(),
        sensor_keys.first().map(String::as_str)
    );
    assert_eq!(
        report["last_sort_key"].as_str(),
        sensor_keys.last().map(String::as_str)
    );
    let newest: Vec<String> = sensor_keys.iter().rev().take(5).cloned().collect();
    assert_eq!(strings(&report["latest"]), newest);
    assert_eq!(report["shards"], Value::from(SHARDS));
    assert!(report["write_requests"].as_u64().unwrap() >= total.div_ceil(25) as u64);
    assert!(report["read_requests"].as_u64().unwrap() >= (used * SHARDS) as u64);
    assert_eq!(strings(&report["missing_tables"]), Vec::<String>::new());

    // A second run creates nothing and rewrites the same items: no duplicates.
    let second = ingest(&server);
    assert_eq!(
        second.code, 0,
        "second run failed: {}\nstderr: {}",
        second.json, second.stderr
    );
    assert_eq!(second.json["tables_created"], Value::from(0));
    assert_eq!(second.json["verified"], Value::Bool(true));
    let again = scan_all(&client).await;
    assert_eq!(
        again.keys().collect::<Vec<_>>(),
        contents.keys().collect::<Vec<_>>()
    );
    assert_eq!(again.values().map(Vec::len).sum::<usize>(), total);

    // An item the program did not write makes its check fail, with exit code 1.
    let stray_time = sort_key_time(&sensor_keys[0]) + TimeDelta::seconds(1);
    let stray_sk = format!(
        "{}#stray",
        stray_time.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
    );
    client
        .put_item()
        .table_name(&names[0])
        .item("pk", AttributeValue::S(format!("{SENSOR}#2")))
        .item("sk", AttributeValue::S(stray_sk))
        .send()
        .await
        .expect("PutItem");
    let third = ingest(&server);
    assert_eq!(third.code, 1, "{}", third.json);
    assert_eq!(third.json["verified"], Value::Bool(false));
    assert_eq!(third.json["read"], Value::from(readings_per_day + 1));
    assert!(third.stderr.contains("check failed"), "{}", third.stderr);
}
