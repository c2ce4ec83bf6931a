//! Benchmark, not a test: the calls one steady-state `resize-old` makes, by operation, through
//! the testkit proxy behaving as an AWS account (AWS's per-account rates for the tag APIs, 20 ms
//! per call), next to the floor of calls (docs/benchmark.md, "Calls at 2,500 tables"):
//!
//!   floor = ceil(all tables / 100) ListTables + one DescribeTable per owned table
//!           + one ListTagsOfResource for the current table
//!           + one call per change, and its record in the ledger (a PutItem: dialled down)
//!           + one DescribeScalableTargets when anything changes
//!           + the family ledger's Query pages, read before and under the lease
//!           + the lease's PutItem and DeleteItem
//!
//! The tables are made as an earlier version left them, then recorded by `init` (unmeasured).
//!
//! For each size N (owned tables) it starts a fresh moto (scripts/local-ddb.sh, installed
//! first), makes the tables the day before's `create-new` would leave behind, runs the
//! `ddb-rollover` binary once through the proxy, and prints one row. The tables:
//!
//! - `create-new --at D-1T23:45` run on moto directly: yesterday's and today's tables, hot
//!   (300/1000), with ddb-rollover's own tags;
//! - the older N-2 made with the SDK as earlier runs left them: the day before yesterday's warm
//!   (100/1), the rest cold (1/1), with the same tags for their own periods;
//! - `--foreign` tables that are not ours: half another application's (`orders_i`), half
//!   under our prefix with a name that is no period's (`timeseries_archive_i`).
//!
//! The measured run is then the daily steady state at `D 00:15`: yesterday's table hot to warm,
//! the day before's warm to cold, 2 changes, every other table already in its phase. Afterwards
//! every owned table is read back from moto and checked to be in its phase.
//!
//!   cargo run -p testkit --example bench_calls -- [--cli PATH] [--sizes 100,500,2500]
//!       [--foreign 10] [--latency-ms 20] [--date 2018-10-25]
//!
//! `--cli` defaults to target/release/ddb-rollover (`cargo build --release -p
//! ddb-rollover-cli`). scripts/bench.sh runs it.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{
    AttributeDefinition, KeySchemaElement, ProvisionedThroughput, TableDescription, Tag,
};
use aws_sdk_dynamodb::Client;
use testkit::{LocalDynamo, ProcessRun, Proxy, Server, AWS_RATES};

const PREFIX: &str = "timeseries";
const HOT: (i64, i64) = (300, 1000);
const WARM: (i64, i64) = (100, 1);
const COLD: (i64, i64) = (1, 1);
/// CreateTable calls in flight while making the tables.
const CREATE_CONCURRENCY: usize = 8;

struct Options {
    cli: String,
    sizes: Vec<usize>,
    foreign: usize,
    latency: Duration,
    date: Date,
}

fn usage() -> ! {
    eprintln!(
        "usage: bench_calls [--cli PATH] [--sizes 100,500,2500] [--foreign 10] [--latency-ms 20] \
         [--date 2018-10-25]"
    );
    std::process::exit(2)
}

fn options() -> Options {
    let mut options = Options {
        cli: testkit::repo_root()
            .join("target/release/ddb-rollover")
            .to_string_lossy()
            .into_owned(),
        sizes: vec![100, 500, 2500],
        foreign: 10,
        latency: Duration::from_millis(20),
        date: Date::parse("2018-10-25").expect("a date"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--cli" => options.cli = value,
            "--sizes" => {
                options.sizes = value
                    .split(',')
                    .map(|s| s.trim().replace('_', "").parse().unwrap_or_else(|_| usage()))
                    .collect();
                if options.sizes.iter().any(|&n| n < 3) {
                    eprintln!("bench_calls: every size needs at least 3 owned tables");
                    usage();
                }
            }
            "--foreign" => options.foreign = value.parse().unwrap_or_else(|_| usage()),
            "--latency-ms" => {
                options.latency = Duration::from_millis(value.parse().unwrap_or_else(|_| usage()))
            }
            "--date" => options.date = Date::parse(&value).unwrap_or_else(|| usage()),
            _ => usage(),
        }
    }
    options
}

/// One measured run.
struct Row {
    owned: usize,
    all: usize,
    setup: Duration,
    calls: BTreeMap<String, usize>,
    throttled: usize,
    exit: i32,
    changes: u64,
    failed: u64,
    deferred: u64,
    seconds: f64,
    out_of_phase: usize,
}

impl Row {
    fn total(&self) -> usize {
        self.calls.values().sum()
    }

    /// The calls a steady run cannot do without (docs/operations.md, "Calls a run makes"): the
    /// verdict of the current table rests on its family tag; a changed table's tags are read
    /// just before its change (its verdict rested on the name); a capacity change first reads
    /// whether a scalable target owns the capacity.
    ///
    /// Since the family's ledger: a change needs no tag read before it (the ledger's record of
    /// the table's identity is the verdict's evidence) but is recorded after (a PutItem: the
    /// table dialled down, so no late create_new raises it); the run reads the ledger (its Query
    /// pages, twice: before and under the lease, counted as made: they are item reads, not
    /// control-plane calls) and takes and gives back its lease (a PutItem, a DeleteItem).
    fn floor(&self) -> usize {
        let changes = self.changes as usize;
        let ledger_pages = self.calls.get("Query").copied().unwrap_or(2);
        // Each change of a steady resize_old dials a table down: recorded once in the ledger.
        self.all.div_ceil(100) + self.owned + 1 + 2 * changes + usize::from(changes > 0) + ledger_pages + 2
    }
}

#[tokio::main]
async fn main() {
    let options = options();
    if !std::path::Path::new(&options.cli).is_file() {
        eprintln!(
            "bench_calls: no ddb-rollover binary at {} (cargo build --release -p ddb-rollover-cli)",
            options.cli
        );
        std::process::exit(2);
    }
    let rates: Vec<String> = AWS_RATES
        .iter()
        .map(|(op, rate)| format!("{op} {rate}/s"))
        .collect();
    println!(
        "one steady-state `ddb-rollover resize-old --at {}T00:15:00Z` (default policy) through the proxy: \
         AWS's rates ({}), {} ms per call, {} foreign tables",
        options.date,
        rates.join(", "),
        options.latency.as_millis(),
        options.foreign
    );
    println!(
        "floor = ceil(all tables / 100) ListTables + one DescribeTable per owned table + one \
         ListTagsOfResource (the current table) + one call per change and its record in the ledger (a \
         PutItem) + one DescribeScalableTargets when anything changes + the ledger's Query pages (read \
         before and under the lease) + the lease's PutItem and DeleteItem"
    );
    let mut rows = Vec::new();
    for &owned in &options.sizes {
        rows.push(measure(&options, owned).await);
    }
    print_table(&rows);
}

async fn measure(options: &Options, owned: usize) -> Row {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let today = options.date;
    let started = Instant::now();

    // Yesterday's create-new: today's table and yesterday's, hot, with our tags.
    let made = cli(
        options,
        server.endpoint(),
        server.env(),
        &[
            "--output",
            "json",
            "--at",
            &format!("{}T23:45:00Z", today.add_days(-1)),
            "create-new",
        ],
    );
    assert_eq!(made.code, 0, "setup create-new: {}\n{}", made.stdout, made.stderr);
    let template = testkit::describe(&client, &format!("{PREFIX}_{today}")).await;
    let tags = testkit::tags_of(&client, template.table_arn().expect("an ARN")).await;

    // The older tables, as earlier runs left them.
    let semaphore = Arc::new(tokio::sync::Semaphore::new(CREATE_CONCURRENCY));
    let mut creates = tokio::task::JoinSet::new();
    for age in 2..owned as i64 {
        let day = today.add_days(-age);
        let capacity = if age == 2 { WARM } else { COLD };
        let tags: Vec<Tag> = tags
            .iter()
            .map(|(key, value)| {
                Tag::builder()
                    .key(key)
                    .value(shift_date(value, -age))
                    .build()
                    .expect("key and value")
            })
            .collect();
        let (client, template, semaphore) = (client.clone(), template.clone(), Arc::clone(&semaphore));
        creates.spawn(async move {
            let _permit = semaphore.acquire().await.expect("open semaphore");
            create_like(&client, &template, &format!("{PREFIX}_{day}"), capacity, tags).await;
        });
    }
    for i in 0..options.foreign {
        let name = if i % 2 == 0 {
            format!("orders_{i}")
        } else {
            format!("{PREFIX}_archive_{i}")
        };
        let (client, semaphore) = (client.clone(), Arc::clone(&semaphore));
        creates.spawn(async move {
            let _permit = semaphore.acquire().await.expect("open semaphore");
            testkit::create_plain_table(&client, &name).await;
        });
    }
    while let Some(done) = creates.join_next().await {
        done.expect("a create task");
    }
    let all = testkit::table_names(&client).await.len();
    assert_eq!(all, owned + options.foreign, "tables on moto");
    let setup = started.elapsed();
    eprintln!(
        "bench_calls: {owned} owned + {} foreign tables made on moto in {:.1} s; running resize-old",
        options.foreign,
        setup.as_secs_f64()
    );

    // The tables were made the way an earlier version left them: `init` records them in the
    // family's ledger (on moto directly, not measured).
    let init = cli(
        options,
        server.endpoint(),
        server.env(),
        &["--at", &format!("{today}T00:10:00Z"), "init", "--yes"],
    );
    assert_eq!(init.code, 0, "init: {}\n{}", init.stdout, init.stderr);

    // The measured run.
    let proxy = Proxy::start(server.endpoint());
    proxy.aws_rates();
    proxy.latency_per_call(options.latency);
    let started = Instant::now();
    let run = cli(
        options,
        &proxy.endpoint(),
        proxy.env(),
        &[
            "--output",
            "json",
            "--at",
            &format!("{today}T00:15:00Z"),
            "resize-old",
        ],
    );
    let seconds = started.elapsed().as_secs_f64();
    let summary = serde_json::from_str::<serde_json::Value>(&run.stdout)
        .map(|report| report["summary"].clone())
        .unwrap_or_else(|e| {
            panic!(
                "resize-old printed no JSON report ({e}); exit {}\nstdout:\n{}\nstderr:\n{}",
                run.code, run.stdout, run.stderr
            )
        });
    let count = |key: &str| summary[key].as_u64().unwrap_or(0);
    let calls = proxy.counts();
    let throttled = proxy.faulted_counts().values().sum();
    drop(proxy);

    // Every owned table in its phase, read back from moto.
    let mut out_of_phase = 0;
    for age in 0..owned as i64 {
        let want = match age {
            0 => HOT,
            1 => WARM,
            _ => COLD,
        };
        let name = format!("{PREFIX}_{}", today.add_days(-age));
        let table = testkit::describe(&client, &name).await;
        let throughput = table.provisioned_throughput().expect("provisioned");
        let have = (
            throughput.read_capacity_units().unwrap_or(0),
            throughput.write_capacity_units().unwrap_or(0),
        );
        if have != want {
            out_of_phase += 1;
            eprintln!("bench_calls: {name} has {have:?}, its phase is {want:?}");
        }
    }
    let row = Row {
        owned,
        all,
        setup,
        calls,
        throttled,
        exit: run.code,
        changes: count("done"),
        failed: count("failed"),
        deferred: count("deferred"),
        seconds,
        out_of_phase,
    };
    eprintln!(
        "bench_calls: {owned} owned tables: exit {}, {} calls (floor {}) in {seconds:.1} s",
        row.exit,
        row.total(),
        row.floor()
    );
    row
}

fn print_table(rows: &[Row]) {
    let operations: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.calls.keys().map(String::as_str))
        .collect();
    let mut header: Vec<String> = ["owned", "all"].iter().map(|s| s.to_string()).collect();
    header.extend(operations.iter().map(|s| s.to_string()));
    header.extend(
        [
            "total",
            "floor",
            "total/floor",
            "changes",
            "throttled",
            "failed",
            "deferred",
            "exit",
            "in phase",
            "seconds",
            "setup s",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut table = vec![header];
    for row in rows {
        let mut cells = vec![row.owned.to_string(), row.all.to_string()];
        cells.extend(
            operations
                .iter()
                .map(|op| row.calls.get(*op).copied().unwrap_or(0).to_string()),
        );
        cells.extend([
            row.total().to_string(),
            row.floor().to_string(),
            format!("{:.2}", row.total() as f64 / row.floor() as f64),
            row.changes.to_string(),
            row.throttled.to_string(),
            row.failed.to_string(),
            row.deferred.to_string(),
            row.exit.to_string(),
            if row.out_of_phase == 0 {
                "all".to_owned()
            } else {
                format!("{} not", row.out_of_phase)
            },
            format!("{:.1}", row.seconds),
            format!("{:.1}", row.setup.as_secs_f64()),
        ]);
        table.push(cells);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|i| table.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    println!();
    for row in &table {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        println!("{}", line.join("  ").trim_end());
    }
    println!();
    println!(
        "owned/all: owned tables / all tables on the server; the operation columns count every call the \
         proxy received (throttled ones included); total/floor: 1.00 is the floor; changes: actions done; \
         in phase: owned tables read back from moto at their phase's capacity; seconds: the resize-old \
         process, wall clock; setup s: making the tables on moto"
    );
}

fn cli(options: &Options, endpoint: &str, env: Vec<(String, String)>, args: &[&str]) -> ProcessRun {
    ProcessRun::of(
        Command::new(&options.cli)
            .args(["--endpoint-url", endpoint, "--region", testkit::REGION])
            .args(args)
            .envs(env)
            .env_remove("ROLLOVER_POLICY")
            .env_remove("DDB_ROLLOVER_LOG"),
    )
}

/// Creates `name` with `template`'s key schema, `capacity` and `tags`.
async fn create_like(
    client: &Client,
    template: &TableDescription,
    name: &str,
    capacity: (i64, i64),
    tags: Vec<Tag>,
) {
    let attributes: Vec<AttributeDefinition> = template.attribute_definitions().to_vec();
    let key: Vec<KeySchemaElement> = template.key_schema().to_vec();
    client
        .create_table()
        .table_name(name)
        .set_attribute_definitions(Some(attributes))
        .set_key_schema(Some(key))
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(capacity.0)
                .write_capacity_units(capacity.1)
                .build()
                .expect("both units"),
        )
        .set_tags(Some(tags))
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateTable {name}: {e:?}"));
}

/// `value` with a leading `YYYY-MM-DD` moved by `days` (our period tags); any other value as is.
fn shift_date(value: &str, days: i64) -> String {
    match value.get(..10).and_then(Date::parse) {
        Some(date) => format!("{}{}", date.add_days(days), &value[10..]),
        None => value.to_owned(),
    }
}

/// A proleptic Gregorian date, for the few day sums the bench needs (no date crate in testkit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Date {
    /// Days since 1970-01-01.
    days: i64,
}

impl Date {
    fn parse(text: &str) -> Option<Date> {
        let mut parts = text.splitn(3, '-');
        let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
        if text.len() != 10 {
            return None;
        }
        let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return None;
        }
        let date = Date {
            days: days_from_civil(y, m, d),
        };
        (date.civil() == (y, m, d)).then_some(date)
    }

    fn add_days(self, days: i64) -> Date {
        Date {
            days: self.days + days,
        }
    }

    fn civil(self) -> (i64, i64, i64) {
        civil_from_days(self.days)
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (y, m, d) = self.civil();
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

/// Howard Hinnant's `days_from_civil`.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Howard Hinnant's `civil_from_days`.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}
