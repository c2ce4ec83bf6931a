//! Command-line flags. Every flag has a default, so a bare `iot-ingest` runs the whole example.

use chrono::NaiveDate;
use clap::error::ErrorKind;
use clap::{value_parser, CommandFactory, Parser, ValueEnum};

/// How the summary is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Output {
    Text,
    Json,
}

/// Writes one day of IoT sensor readings into ddb-rollover's period tables, then reads one
/// sensor's day back across every table and shard and checks it.
#[derive(Debug, Parser)]
#[command(name = "iot-ingest", version)]
pub(crate) struct Args {
    /// A local server (moto, dynalite, DynamoDB Local) instead of AWS.
    #[arg(long, value_name = "URL")]
    pub endpoint_url: Option<String>,

    /// AWS region; default: the usual chain (AWS_REGION, profile).
    #[arg(long)]
    pub region: Option<String>,

    /// Table name prefix: tables are `{prefix}_{period label}`.
    #[arg(long, default_value = "iot_example")]
    pub prefix: String,

    /// The UTC day whose readings are generated (YYYY-MM-DD).
    #[arg(long, default_value = "2024-12-01")]
    pub day: NaiveDate,

    /// Number of sensors, `SENSOR#0001` to `SENSOR#{sensors}`.
    #[arg(long, default_value_t = 20, value_parser = value_parser!(u32).range(1..=9999))]
    pub sensors: u32,

    /// Seconds between two readings of one sensor.
    #[arg(long, default_value_t = 300, value_parser = value_parser!(u32).range(1..=86_400))]
    pub every_seconds: u32,

    /// Write shards per sensor (the partition key is `SENSOR#0007#{1..shards}`).
    #[arg(long, default_value_t = 4, value_parser = value_parser!(u32).range(1..=1000))]
    pub shards: u32,

    /// Table period: hour, 2h, 3h, 4h, 6h, 8h, 12h, day, ...
    #[arg(long, default_value = "6h")]
    pub period: String,

    /// The sensor whose day is read back and checked.
    #[arg(long, default_value_t = 7)]
    pub sensor: u32,

    /// Consume instead of ingest: read every record of this Kinesis stream (name or ARN), the
    /// one the family's tables stream their changes into, and count the family's changes per
    /// period (`--prefix`, `--period` name the family). Writes nothing.
    #[arg(long, value_name = "STREAM")]
    pub consume: Option<String>,

    /// `json` prints one JSON object.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

impl Args {
    /// Parses the command line; exits 2 (clap's usage error) when `--sensor` is not one of
    /// the generated sensors, before any AWS call.
    pub(crate) fn parse_checked() -> Args {
        let args = Args::parse();
        if !(1..=args.sensors).contains(&args.sensor) {
            Args::command()
                .error(
                    ErrorKind::ValueValidation,
                    format!(
                        "--sensor {} is not a generated sensor: use 1 to {} (--sensors)",
                        args.sensor, args.sensors
                    ),
                )
                .exit();
        }
        args
    }
}
