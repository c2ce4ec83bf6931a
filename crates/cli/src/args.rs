//! Command-line flags, modelled on the AWS CLI's.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use clap::{Parser, Subcommand, ValueEnum};

/// Keep time-series data in DynamoDB as one table per period: pre-build the next tables,
/// dial old ones down, never touch tables that are not ours.
#[derive(Debug, Parser)]
#[command(name = "ddb-rollover", version, about, long_about = None)]
pub struct Cli {
    /// Policy file (TOML, or JSON if it ends in .json). Without it, the JSON in the
    /// ROLLOVER_POLICY environment variable, else the blog's defaults.
    #[arg(long, global = true, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// Table name prefix; overrides the policy's.
    #[arg(long, global = true, value_name = "PREFIX")]
    pub prefix: Option<String>,

    /// The clock: decide as if it were this instant (RFC 3339). Default: now.
    #[arg(long, global = true, value_name = "RFC3339", value_parser = parse_at)]
    pub at: Option<DateTime<Utc>>,

    /// Send DynamoDB calls here instead of AWS (a local server such as moto or dynalite).
    #[arg(long, global = true, value_name = "URL")]
    pub endpoint_url: Option<String>,

    /// AWS region; default from the environment or profile.
    #[arg(long, global = true)]
    pub region: Option<String>,

    /// Named profile from the AWS config files.
    #[arg(long, global = true)]
    pub profile: Option<String>,

    /// How to print results.
    #[arg(long, global = true, value_enum, default_value_t = Output::Table)]
    pub output: Output,

    /// Plan and report, change nothing.
    #[arg(long, global = true)]
    pub dry_run: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Table,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Make sure the current period's table and the next `premake` ones exist (never lowers, never deletes).
    CreateNew,
    /// Move every aged table to the phase its age calls for, within DynamoDB's limits.
    ResizeOld,
    /// Show what create-new and resize-old would do now; change nothing.
    Plan,
    /// Each table of the policy: period, age, phase, status, capacity, and what the next run would do.
    Status,
}

fn parse_at(value: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(value)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("{e}: use RFC 3339, such as 2018-10-25T23:45:00Z"))
}
