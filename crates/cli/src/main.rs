//! `ddb-rollover`: the operator's command line over the core library. It parses flags, builds
//! one SDK client, calls the core and prints its report; it decides nothing itself. `capacity`
//! and `route` are arithmetic and answer before any AWS configuration is read.

mod args;
mod capacity;
mod render;

use std::process::ExitCode;
use std::time::Instant;

use chrono::Utc;
use clap::Parser;
use ddb_rollover::route;
use ddb_rollover::Paced;
use ddb_rollover::{check_clock, clock_warning, CheckedInstant, ClockAllowance, ClockError};
use ddb_rollover::{
    observe, run_each, status, ApplyOptions, Operation, Policy, PolicyDocument, PolicyError, Scope,
};
use ddb_rollover_aws::dynamodb::DynamoDb;
use ddb_rollover_aws::sdk::{AwsClients, SdkSettings};

use args::{Cli, Command, Output, RestoreArgs, RouteArgs};
use ddb_rollover::policy::Slot;
use ddb_rollover::LineOutcome;
use ddb_rollover::{Restoration, RestoreOptions, RestoreReport};
use ddb_rollover_aws::events::{put_events, Event, TABLE_RESTORED};

/// Exit codes: 0 nothing failed, 1 an action or AWS call failed, 2 bad input (before any AWS call).
const EXIT_FAILED: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;

/// The variable that turns logs on (`info`, `ddb_rollover=debug`, ...: an `EnvFilter`).
const LOG_ENV: &str = "DDB_ROLLOVER_LOG";

#[tokio::main]
async fn main() -> ExitCode {
    logs();
    let cli = Cli::parse();
    // Sizing is arithmetic: it runs before any policy or AWS configuration is read.
    if let Command::Capacity(args) = &cli.command {
        return match capacity::report(args, cli.output) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::from(EXIT_BAD_INPUT)
            }
        };
    }
    let policy = match load_policy(&cli) {
        Ok(policy) => policy,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let wall = Utc::now();
    let now = cli.at.unwrap_or(wall);
    // Routing is the policy's arithmetic too: no AWS call.
    if let Command::Route(args) = &cli.command {
        return route(args, &policy, now, cli.output);
    }
    // Restore's periods are the policy's labels: checked before any AWS call.
    if let Command::Restore(args) = &cli.command {
        if let Err(error) = restore_slots(args, &policy) {
            eprintln!("error: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    }
    let at = match check_clock_for(&cli, &policy, now, wall) {
        Ok(at) => at,
        Err(error) if matches!(cli.command, Command::Restore(_)) => {
            eprintln!("error: --at {error} (restore is checked as resize_old is: it restores only past periods and dates the tables' keep-until by this clock)");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
        Err(error) => {
            eprintln!("error: --at {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    // create_new far ahead is allowed, and said before it runs; a dry run or `plan` previews
    // exactly that run, so it is said there too (that is where it can still be reconsidered).
    if matches!(cli.command, Command::CreateNew | Command::Plan) {
        if let Some(warning) = clock_warning(&policy, Operation::CreateNew, now, wall) {
            eprintln!("warning: --at {warning}");
        }
    }
    let (control, events) = control_plane(&cli).await;
    let control = Paced::new(control, policy.rates);
    let options = ApplyOptions {
        dry_run: cli.dry_run,
        deadline: cli.time_budget.map(|budget| Instant::now() + budget),
        ..ApplyOptions::default()
    };
    match execute(&cli, &policy, &control, &events, &at, options).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(EXIT_FAILED),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Log lines on stderr only when asked for with [`LOG_ENV`]: without it the output is the
/// report and its `warning:` / `error:` lines, which carry everything a user must see (the
/// AWS SDK's own warnings, such as a credentials provider that did not answer, included: the
/// error they lead to says it).
fn logs() {
    let Some(value) = std::env::var_os(LOG_ENV) else {
        return;
    };
    match tracing_subscriber::EnvFilter::try_from_env(LOG_ENV) {
        Ok(filter) => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            // Colour only on a terminal: piped into a file or CI log, escapes would garble lines.
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        Err(error) => eprintln!(
            "warning: {LOG_ENV}={} is not a log filter ({error}): no logs; use a level such as info or debug",
            value.to_string_lossy()
        ),
    }
}

/// Runs the subcommand and prints its result; `Ok(false)` when an action failed.
async fn execute(
    cli: &Cli,
    policy: &Policy,
    control: &Paced<DynamoDb>,
    events: &aws_sdk_eventbridge::Client,
    at: &CheckedInstant,
    options: ApplyOptions,
) -> Result<bool, ddb_rollover::control::ControlPlaneError> {
    let operations: &[Operation] = match &cli.command {
        Command::CreateNew => &[Operation::CreateNew],
        Command::ResizeOld => &[Operation::ResizeOld],
        Command::Plan => &[Operation::CreateNew, Operation::ResizeOld],
        Command::Status => {
            let mut observation = observe(control, policy, Scope::Full(at.at()), options.concurrency).await?;
            observation.book.read_at = at.wall();
            let mut report = status(policy, at.at(), &observation);
            report.warnings.extend(observation.skipped.iter().cloned());
            match cli.output {
                Output::Json => println!("{}", serde_json::to_string_pretty(&report).expect("serializable")),
                Output::Table => print!("{}", render::status_report(&report)),
            }
            for error in &observation.unreadable {
                eprintln!("warning: {error}");
            }
            // A read that failed is a failure: the run would fail on it too.
            for read in &report.unread {
                eprintln!("warning: {read}");
            }
            // Exactly the run: 1 when a run would fail (a blocked line or an evidence read that
            // failed), when the tables writers need are not ready (create_new's NextTableReady
            // would be 0), or a table could not be read.
            return Ok(observation.unreadable.is_empty() && report.succeeded());
        }
        Command::Init(args) => {
            let dry_run = options.dry_run || !args.yes;
            let report = ddb_rollover::init(control, policy, at, dry_run).await?;
            match cli.output {
                Output::Json => println!("{}", serde_json::to_string_pretty(&report).expect("serializable")),
                Output::Table => print!("{}", render::init_report(&report)),
            }
            return Ok(report.succeeded());
        }
        Command::Adopt(args) => {
            let dry_run = options.dry_run || !args.yes;
            let report = ddb_rollover::adopt(control, policy, at, &args.tables, dry_run).await?;
            match cli.output {
                Output::Json => println!("{}", serde_json::to_string_pretty(&report).expect("serializable")),
                Output::Table => print!("{}", render::adopt_report(&report)),
            }
            return Ok(report.succeeded());
        }
        Command::Restore(args) => {
            let slots = match restore_slots(args, policy) {
                Ok(slots) => slots,
                Err(error) => unreachable!("labels are checked before any AWS client is built: {error}"),
            };
            let options = RestoreOptions {
                keep: chrono::Duration::from_std(args.keep).unwrap_or(chrono::Duration::MAX),
                dry_run: options.dry_run || !args.yes,
                wait: args.wait,
            };
            let report = ddb_rollover::restore(control, policy, at, &slots, options).await?;
            if !args.no_event {
                publish_restored(events, &report).await;
            }
            match cli.output {
                Output::Json => println!("{}", serde_json::to_string_pretty(&report).expect("serializable")),
                Output::Table => print!("{}", render::restore_report(&report)),
            }
            return Ok(report.succeeded());
        }
        Command::Capacity(_) | Command::Route(_) => {
            unreachable!("capacity and route are answered before any AWS client is built")
        }
    };
    let options = ApplyOptions {
        dry_run: options.dry_run || matches!(cli.command, Command::Plan),
        ..options
    };
    let reports = run_each(control, policy, operations, at, options).await?;
    match (cli.output, reports.as_slice()) {
        (Output::Json, [report]) => {
            println!("{}", serde_json::to_string_pretty(report).expect("serializable"))
        }
        (Output::Json, reports) => {
            let by_operation: serde_json::Map<String, serde_json::Value> = reports
                .iter()
                .map(|r| {
                    (
                        r.operation.to_string(),
                        serde_json::to_value(r).expect("serializable"),
                    )
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&by_operation).expect("serializable")
            );
        }
        (Output::Table, reports) => {
            // `plan`'s two reports share the operator's warnings: each is printed once.
            let mut said: Vec<String> = Vec::new();
            let text: Vec<String> = reports
                .iter()
                .map(|report| {
                    let mut report = report.clone();
                    report.warnings.retain(|w| !said.contains(w));
                    said.extend(report.warnings.iter().cloned());
                    render::run_report(&report)
                })
                .collect();
            print!("{}", text.join("\n"));
        }
    }
    Ok(reports.iter().all(|r| r.succeeded()))
}

/// Prints the tables holding `[from, to)`, or the one holding `now`.
fn route(args: &RouteArgs, policy: &Policy, now: chrono::DateTime<Utc>, output: Output) -> ExitCode {
    let tables = match (args.from, args.to) {
        (Some(from), Some(to)) => route::tables_between(policy, from, to),
        _ => route::table_for(policy, now).map(|table| vec![table]),
    };
    match tables {
        Ok(tables) => {
            match output {
                Output::Json => println!("{}", serde_json::to_string_pretty(&tables).expect("serializable")),
                Output::Table => print!("{}", render::period_tables(&tables)),
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

/// The clock every operation the command runs will decide for, refused before any AWS call
/// when it could hurt live tables (see [`ddb_rollover::check_clock`]).
fn check_clock_for(
    cli: &Cli,
    policy: &Policy,
    now: chrono::DateTime<Utc>,
    wall: chrono::DateTime<Utc>,
) -> Result<CheckedInstant, ClockError> {
    let (operations, changes): (&[Operation], bool) = match &cli.command {
        // Starting the ledger and adopting write records and tags dated by the clock: checked
        // as create_new's is.
        Command::CreateNew | Command::Init(_) | Command::Adopt(_) => (&[Operation::CreateNew], true),
        // Restoring dates its records and keep-until by the clock, and brings back only past
        // periods (resize_old's): an instant in a later period than the wall clock's would date
        // the keep past it, and could take a live period for a past one. Checked as both runs'
        // are; without --yes it is a dry run.
        Command::Restore(args) => (&[Operation::CreateNew, Operation::ResizeOld], args.yes),
        Command::ResizeOld => (&[Operation::ResizeOld], true),
        _ => (&[Operation::CreateNew, Operation::ResizeOld], false),
    };
    let allowance = ClockAllowance {
        dry_run: cli.dry_run || !changes,
        allow_future_clock: cli.allow_future_clock,
    };
    check_clock(policy, operations, now, wall, allowance)
}

/// Most periods one `restore` takes: each is an ImportTable, and an account runs at most 50
/// imports at once.
const MAX_RESTORE_PERIODS: usize = 50;

/// The periods `restore` names, or every bad label and what a label of this policy looks like.
fn restore_slots(args: &RestoreArgs, policy: &Policy) -> Result<Vec<Slot>, String> {
    let calendar = policy.calendar();
    let example = calendar.label(calendar.floor(Utc::now()));
    let mut problems = Vec::new();
    let mut parse = |flag: &str, label: &str| match calendar.parse(label) {
        Ok(slot) => Some(slot),
        Err(e) => {
            problems.push(format!(
                "{flag}{label:?}: {e} (a label of this policy looks like {example:?})"
            ));
            None
        }
    };
    let slots: Vec<Slot> = match (&args.from, &args.to) {
        (Some(from), Some(to)) => {
            let (from, to) = (parse("--from ", from), parse("--to ", to));
            match (from, to) {
                (Some(from), Some(to)) if from <= to => calendar
                    .periods_from(from)
                    .take_while(|slot| *slot <= to)
                    .take(MAX_RESTORE_PERIODS + 1)
                    .collect(),
                (Some(_), Some(_)) => {
                    problems.push("--to is before --from: give the earlier period first".into());
                    Vec::new()
                }
                _ => Vec::new(),
            }
        }
        _ => args.labels.iter().filter_map(|label| parse("", label)).collect(),
    };
    if slots.len() > MAX_RESTORE_PERIODS {
        problems.push(format!(
            "more than {MAX_RESTORE_PERIODS} periods: restore at most {MAX_RESTORE_PERIODS} at a time (DynamoDB runs 50 imports at once per account)"
        ));
    }
    if problems.is_empty() {
        Ok(slots)
    } else {
        Err(problems.join("; "))
    }
}

/// `--policy FILE`, else `$ROLLOVER_POLICY` (JSON), else the defaults; then `--prefix`.
fn load_policy(cli: &Cli) -> Result<Policy, PolicyError> {
    let mut document = match &cli.policy {
        Some(path) => PolicyDocument::load(path)?,
        None => PolicyDocument::from_env()?.unwrap_or_default(),
    };
    if let Some(prefix) = &cli.prefix {
        document.prefix = Some(prefix.clone());
    }
    document.validate()
}

/// DynamoDB, with Application Auto Scaling and S3 from the same configuration (endpoint,
/// region, credentials), with the SDK's default HTTPS client; and EventBridge, for restore's
/// events.
async fn control_plane(cli: &Cli) -> (DynamoDb, aws_sdk_eventbridge::Client) {
    let settings = SdkSettings {
        region: cli.region.clone(),
        profile: cli.profile.clone(),
        endpoint_url: cli.endpoint_url.clone(),
        http_client: None,
    };
    let clients = AwsClients::load(settings).await;
    (clients.control_plane(), clients.eventbridge.clone())
}

/// A `Table Restored` event on the default bus for each restored table (source
/// `ddb-rollover`, as the functions' events), so subscribers learn of it as of the tables the
/// functions make; what could not be put is a warning (the operator's credentials may not
/// allow events:PutEvents), never a failure of the restore.
async fn publish_restored(client: &aws_sdk_eventbridge::Client, report: &RestoreReport) {
    let events: Vec<Event> = report
        .tables
        .iter()
        .filter(|line| line.outcome == LineOutcome::Done)
        .filter_map(|line| match &line.action.restoration {
            Restoration::Import {
                export, items, phase, ..
            } => Some(Event {
                detail_type: TABLE_RESTORED,
                detail: serde_json::json!({
                    "prefix": report.prefix,
                    "table": line.table,
                    "period": line.action.period,
                    "phase": phase,
                    "export": export,
                    "items": items,
                    "keep_until": report.keep_until.to_rfc3339(),
                    "restored_at": report.at.to_rfc3339(),
                }),
            }),
            Restoration::Refused { .. } => None,
        })
        .collect();
    for failure in put_events(client, &events, |e| e.to_string()).await {
        eprintln!("warning: the Table Restored event was not published: {failure}");
    }
}
