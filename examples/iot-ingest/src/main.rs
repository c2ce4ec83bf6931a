//! `iot-ingest`: one day of IoT sensor readings through ddb-rollover's application helpers.
//!
//! It makes the day's period tables with the same `create_new` the Lambda function runs,
//! batch-writes every sensor's readings (routed to the period's table, spread over shards, with
//! a TTL), then reads one sensor's day back across every table and shard and checks it.
//! Exit code 0 when every check passed, 1 when a check failed or a call or write did not
//! complete, 2 for bad flags or a policy they make invalid (before any AWS call).
//!
//! With `--consume STREAM` it is the other side instead: it reads the Kinesis stream the
//! family's tables stream into and counts each period's changes (exit 1 when a record is not a
//! DynamoDB change record or a call failed).

mod args;
mod check;
mod consume;
mod ingest;
mod readings;
mod summary;
mod tables;
mod tally;

use std::error::Error;
use std::process::ExitCode;

use chrono::{DateTime, NaiveTime, TimeDelta, Utc};
use ddb_rollover::Policy;
use ddb_rollover_app::{tables_between, ChangeDecoder, Layout, PeriodTable, Sharding, Writer};
use ddb_rollover_aws::sdk::{AwsClients, SdkSettings};
use ddb_rollover_aws::Server;

use args::{Args, Output};
use readings::Reading;
use summary::Summary;
use tally::Tally;

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse_checked();
    let setup = match Setup::new(&args) {
        Ok(setup) => setup,
        Err(e) => {
            eprintln!("iot-ingest: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(stream) = &args.consume {
        return consume(&args, &setup, stream).await;
    }
    match run(&args, setup).await {
        Ok(summary) => {
            match args.output {
                Output::Text => println!("{}", summary.text()),
                Output::Json => println!("{}", summary.json()),
            }
            for problem in &summary.problems {
                eprintln!("iot-ingest: check failed: {problem}");
            }
            if summary.verified() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("iot-ingest: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Everything derived from the flags alone, so bad input is refused (exit 2) before any AWS call.
struct Setup {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    policy: Policy,
    layout: Layout,
    tables: Vec<PeriodTable>,
}

impl Setup {
    fn new(args: &Args) -> Result<Setup, Box<dyn Error>> {
        let start = args.day.and_time(NaiveTime::MIN).and_utc();
        let end = start + TimeDelta::days(1);
        let policy = tables::policy_for_day(&args.prefix, &args.period, start, end)?;
        let layout = Layout::new(&policy, Sharding::new(args.shards)?)?;
        let tables = tables_between(&policy, start, end)?;
        Ok(Setup {
            start,
            end,
            policy,
            layout,
            tables,
        })
    }
}

async fn run(args: &Args, setup: Setup) -> Result<Summary, Box<dyn Error>> {
    let Setup {
        start,
        end,
        policy,
        layout,
        tables: day_tables,
    } = setup;
    let (client, server) = client(args).await;

    let ensured = tables::ensure(&client, server, &policy, start, &day_tables).await?;

    let readings = readings::day(args.sensors, start, end, args.every_seconds);
    let writer = Writer::new(client.clone(), layout.clone());
    let written = ingest::write(&writer, &readings).await?;

    let base = readings::sensor_key(args.sensor);
    let expected: Vec<String> = readings
        .iter()
        .filter(|r| r.sensor == args.sensor)
        .map(Reading::sort_key)
        .collect();
    let read = ingest::read(&client, &layout, &base, start, end).await?;

    let mut problems = Vec::new();
    if written.batch.items != readings.len() {
        problems.push(format!(
            "wrote {} of {} readings",
            written.batch.items,
            readings.len()
        ));
    }
    problems.extend(check::day(&read.day, &expected, start, end));
    problems.extend(check::latest(&read.latest, &read.day, ingest::LATEST));
    let shard_keys = layout.sharding().keys(&base);
    if let Some(pk) = read.partitions.iter().find(|pk| !shard_keys.contains(pk)) {
        problems.push(format!(
            "item with partition key {pk:?}, not a shard key of {base}"
        ));
    }
    if !read.missing_tables.is_empty() {
        problems.push(format!("tables missing: {}", read.missing_tables.join(", ")));
    }

    Ok(Summary {
        day: args.day.to_string(),
        period: args.period.clone(),
        sensors: args.sensors,
        every_seconds: args.every_seconds,
        tables: day_tables.into_iter().map(|t| t.name).collect(),
        tables_created: ensured.created,
        shards: args.shards,
        written: written.batch.items,
        write_requests: written.batch.requests,
        write_retries: written.batch.retries,
        missing_table_writes: writer.missing_table_writes(),
        sensor: base,
        read: read.day.len(),
        read_requests: read.requests,
        first_sort_key: read.day.first().cloned(),
        last_sort_key: read.day.last().cloned(),
        latest: read.latest,
        missing_tables: read.missing_tables,
        write_time: written.time,
        read_time: read.time,
        problems,
    })
}

/// The consumer: counts the family's changes per period on its one Kinesis stream.
async fn consume(args: &Args, setup: &Setup, stream: &str) -> ExitCode {
    let client = consume::client(args).await;
    let read = match consume::read_all(&client, &consume::StreamId::parse(stream)).await {
        Ok(read) => read,
        Err(e) => {
            eprintln!("iot-ingest: reading {stream}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let decoder = ChangeDecoder::new(&setup.policy);
    let tally = Tally {
        shards: read.shards,
        get_records_calls: read.get_records_calls,
        ..Tally::of(&decoder, read.records.iter().map(Vec::as_slice))
    };
    match args.output {
        Output::Text => println!("{}", tally.text()),
        Output::Json => println!("{}", tally.json()),
    }
    for problem in &tally.malformed {
        eprintln!("iot-ingest: not a change record: {problem}");
    }
    if tally.malformed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// An SDK client from the usual chain (credentials, profile), with the flags on top: the one
/// set-up the CLI and the functions use too.
async fn client(args: &Args) -> (aws_sdk_dynamodb::Client, Server) {
    let settings = SdkSettings {
        region: args.region.clone(),
        endpoint_url: args.endpoint_url.clone(),
        ..SdkSettings::default()
    };
    let clients = AwsClients::load(settings).await;
    (clients.dynamodb, clients.server)
}
