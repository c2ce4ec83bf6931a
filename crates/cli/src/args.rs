//! Command-line flags, modelled on the AWS CLI's.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};

/// Keep time-series data in DynamoDB as one table per period: pre-build the next tables,
/// dial old ones down, never touch tables that are not ours.
#[derive(Debug, Parser)]
#[command(name = "ddb-rollover", version, about, long_about = None)]
pub(crate) struct Cli {
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

    /// Let resize-old decide for an instant in a later period than the wall clock's (for
    /// simulations). Without it such an --at is refused: it would dial live tables down.
    #[arg(long, global = true)]
    pub allow_future_clock: bool,

    /// How long the run may take (90s, 5m, ...): changes not started by then are deferred to
    /// the next run (a period's table not created is a failure). Default: no limit.
    // Hyphen values reach parse_duration, which names the flag and refuses `-5s` as negative
    // (otherwise clap takes `-5s` for flags and names neither).
    #[arg(
        long,
        global = true,
        value_name = "DURATION",
        value_parser = parse_time_budget,
        allow_hyphen_values = true
    )]
    pub time_budget: Option<Duration>,

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
pub(crate) enum Output {
    Table,
    Json,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Make sure the current period's table and the next `premake` ones exist (never lowers, never deletes).
    CreateNew,
    /// Move every aged table to the phase its age calls for, within DynamoDB's limits.
    ResizeOld,
    /// Show what create-new and resize-old would do now; change nothing.
    Plan,
    /// Each table of the policy: period, age, phase, status, capacity, and what the next run would do.
    Status,
    /// Start the family's ledger where tables of the family exist already (made before the
    /// ledger): records each one carrying this family's tag, the policy's key and a period, by
    /// the identity DynamoDB shows now, and names the others. Creates the ledger table where it
    /// is missing. A dry run unless --yes.
    Init(InitArgs),
    /// Vouch for tables this family did not create (made by hand, or made again under a name
    /// of ours) so the runs manage them and retention may delete them: checks each, records it
    /// in the family's ledger by the identity it has now, and tags it. A dry run unless --yes.
    Adopt(AdoptArgs),
    /// Bring archived periods back: import each period's newest proven export into its table,
    /// then tag it ours and keep it for --keep. A dry run unless --yes. CLI only.
    Restore(RestoreArgs),
    /// Which table holds a time (--at, default now), or every table of a range; needs no AWS access.
    Route(RouteArgs),
    /// Size a table with AWS's method: period, shards, WCU and partitions. Needs no AWS access.
    Capacity(CapacityArgs),
}

/// Whether `init` writes.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// Create the ledger and write the records. Without it, init only shows what it would do.
    #[arg(long)]
    pub yes: bool,
}

/// The tables to adopt.
#[derive(Debug, Args)]
pub(crate) struct AdoptArgs {
    /// Table names, each `{prefix}_{label}` (or carrying our period tags) with the policy's key.
    #[arg(required = true, value_name = "TABLE")]
    pub tables: Vec<String>,

    /// Write the records and tags. Without it, adopt only shows what it would write (a dry run).
    #[arg(long)]
    pub yes: bool,
}

/// The periods to restore: labels, or a range of them.
#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// Period labels as in table names (2018-10-20, 2018-W42, 2018-10-20T06, ...).
    #[arg(
        value_name = "LABEL",
        required_unless_present = "from",
        conflicts_with = "from"
    )]
    pub labels: Vec<String>,

    /// First period of a range (a label), with --to.
    #[arg(long, value_name = "LABEL", requires = "to")]
    pub from: Option<String>,

    /// Last period of the range (a label, included), with --from.
    #[arg(long, value_name = "LABEL", requires = "from")]
    pub to: Option<String>,

    /// How long retention keeps the restored tables before it may archive and delete them
    /// again (7d, 12h, ...; 1h to 36500d).
    #[arg(long, value_name = "DURATION", value_parser = parse_keep, allow_hyphen_values = true)]
    pub keep: Duration,

    /// How long to wait for each import to complete (then the table is left importing; 0s to
    /// 7d).
    #[arg(long, value_name = "DURATION", value_parser = parse_wait, default_value = "1h", allow_hyphen_values = true)]
    pub wait: Duration,

    /// Import. Without it, restore only shows what it would import (a dry run).
    #[arg(long)]
    pub yes: bool,

    /// Put no `Table Restored` event on the default EventBridge bus.
    #[arg(long)]
    pub no_event: bool,
}

/// A time range `[from, to)`; without one, the table holding `--at` (or now).
#[derive(Debug, Args)]
pub(crate) struct RouteArgs {
    /// Start of the range (RFC 3339), inclusive.
    #[arg(long, value_name = "RFC3339", value_parser = parse_at, requires = "to")]
    pub from: Option<DateTime<Utc>>,

    /// End of the range (RFC 3339), exclusive.
    #[arg(long, value_name = "RFC3339", value_parser = parse_at, requires = "from")]
    pub to: Option<DateTime<Utc>>,
}

/// One of three questions: a steady write rate, a bulk load, or a throughput's partitions.
#[derive(Debug, Args)]
#[command(next_help_heading = "Sizing", group(
    ArgGroup::new("mode")
        .required(true)
        .multiple(true)
        .args(["events_per_sec", "items", "read_units", "write_units"])
))]
pub(crate) struct CapacityArgs {
    /// Size of one item in bytes (1 to 409600).
    #[arg(
        long,
        value_name = "BYTES",
        required_unless_present_any = ["read_units", "write_units"],
        conflicts_with_all = ["read_units", "write_units"]
    )]
    pub item_bytes: Option<u64>,

    /// Average items written per second.
    #[arg(
        long,
        value_name = "RATE",
        allow_negative_numbers = true,
        conflicts_with_all = ["items", "within", "read_units", "write_units"]
    )]
    pub events_per_sec: Option<f64>,

    /// Busiest items per second; sets the WCU and shards. Default: the average.
    #[arg(
        long,
        value_name = "RATE",
        allow_negative_numbers = true,
        requires = "events_per_sec",
        conflicts_with_all = ["items", "within", "read_units", "write_units"]
    )]
    pub peak_events_per_sec: Option<f64>,

    /// Bulk load: how many items to write (with --within).
    #[arg(long, value_name = "N", requires = "within", conflicts_with_all = ["read_units", "write_units"])]
    pub items: Option<u64>,

    /// Bulk load: how long the load may take: 90s, 30m, 3h, 1d, or combined such as 1h30m.
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = parse_duration,
        allow_hyphen_values = true,
        requires = "items",
        conflicts_with_all = ["read_units", "write_units"]
    )]
    pub within: Option<Duration>,

    /// Provisioned read units, to count partitions.
    #[arg(long, value_name = "RCU")]
    pub read_units: Option<u64>,

    /// Provisioned write units, to count partitions.
    #[arg(long, value_name = "WCU")]
    pub write_units: Option<u64>,
}

fn parse_at(value: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(value)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("{e}: use RFC 3339, such as 2018-10-25T23:45:00Z"))
}

/// `--time-budget`: 1s to 24h (a run that may start nothing, or one whose deadline is past any
/// clock, is no budget).
fn parse_time_budget(value: &str) -> Result<Duration, String> {
    parse_duration_within(value, TIME_BUDGET, "a run's time budget")
}

/// `--keep`: 1h to 36500d (100 years: the keep-until date is one chrono and the tags can hold).
/// A shorter keep hands the restored table back to retention before anyone could read it.
fn parse_keep(value: &str) -> Result<Duration, String> {
    parse_duration_within(value, KEEP, "how long retention keeps a restored table")
}

/// `--wait`: 0s (do not wait) to 7d.
fn parse_wait(value: &str) -> Result<Duration, String> {
    parse_duration_within(value, WAIT, "how long restore waits for each import")
}

const HOUR: u64 = 3_600;
const DAY: u64 = 24 * HOUR;

/// What `--time-budget` allows: (least, most, as said).
const TIME_BUDGET: (Duration, Duration, &str) =
    (Duration::from_secs(1), Duration::from_secs(DAY), "1s to 24h");
/// What `--keep` allows.
const KEEP: (Duration, Duration, &str) = (
    Duration::from_secs(HOUR),
    Duration::from_secs(36_500 * DAY),
    "1h to 36500d",
);
/// What `--wait` allows.
const WAIT: (Duration, Duration, &str) = (Duration::ZERO, Duration::from_secs(7 * DAY), "0s to 7d");

/// A duration ([`parse_duration`]) within `(least, most, said)`; `what` says what it is.
fn parse_duration_within(
    value: &str,
    (least, most, said): (Duration, Duration, &str),
    what: &str,
) -> Result<Duration, String> {
    let duration = parse_duration(value)?;
    if duration < least || duration > most {
        return Err(format!("{value:?} is out of range: {what} must be {said}"));
    }
    Ok(duration)
}

/// Durations such as `90s`, `30m`, `3h`, `1d` or `1h30m` (humantime's syntax). clap prefixes
/// the flag to the message.
fn parse_duration(value: &str) -> Result<Duration, String> {
    let example = "such as 90s, 30m, 3h, 1d or 1h30m";
    if value.starts_with("--") {
        return Err(format!(
            "{value:?} is the next flag, not a duration: give this flag a duration, {example}"
        ));
    }
    if value.starts_with('-') {
        return Err(format!(
            "{value:?} is negative: durations cannot be negative; use a positive one, {example}"
        ));
    }
    humantime::parse_duration(value).map_err(|e| {
        format!(
            "{value:?} is not a duration ({e}): use a number and a unit, such as 90s, 30m, 3h, 1d or 1h30m"
        )
    })
}
