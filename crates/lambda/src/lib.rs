//! The glue both Lambda functions share: event in, [`RunReport`] out.
//!
//! Thin on purpose: [`event`] decides what a payload means and
//! [`ddb_rollover::run()`] decides everything else; this crate builds the policy and the SDK
//! client once per cold start and turns a run with failed actions into a function error, so
//! EventBridge Scheduler's retries, the dead-letter queue and error alarms see it.
//!
//! What the stack's parameters mean, allow and grant is `ddb_rollover_stack`'s, which the deploy
//! checks call too; the cold start here only asks it for the policy and the grants.

use std::fmt;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub mod event;
#[cfg(any(feature = "ssm", feature = "eventbridge"))]
mod explain;
mod fit;
mod init_error;
pub mod metrics;
mod parameter;
pub mod publish;
#[cfg(test)]
mod report_fixtures;

pub use ddb_rollover_stack::InitError;
pub use fit::{failure_summary, report_chunks, response, MAX_LOG_EVENT_BYTES};
pub use init_error::report_init_error;

use crate::event::{EventError, Invocation, Payload};
use crate::publish::Publishing;
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
use chrono::{DateTime, Utc};
use ddb_rollover::control::ControlPlaneError;
use ddb_rollover::policy::Policy;
use ddb_rollover::Paced;
use ddb_rollover::{ApplyOptions, Operation, Outcome, RunReport};
use ddb_rollover_aws::dynamodb::DynamoDb;
use ddb_rollover_aws::sdk::{AwsClients, SdkSettings};
use ddb_rollover_stack::parameters::StackParameters;
use ddb_rollover_stack::policy_from_env;
use lambda_runtime::{service_fn, Diagnostic, LambdaEvent};

/// One failed table action, as listed in [`HandlerError::ActionsFailed`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedAction {
    /// The table acted on.
    pub table: String,
    /// The call's error, or the plan's reason when there was no call.
    pub error: String,
}

impl fmt::Display for FailedAction {
    /// The error alone when it already names the table (`CreateTable timeseries_...: ...`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.error.contains(&self.table) {
            f.write_str(&self.error)
        } else {
            write!(f, "{}: {}", self.table, self.error)
        }
    }
}

/// Why an invocation is a function error.
#[derive(thiserror::Error)]
pub enum HandlerError {
    /// The payload was refused; nothing was called.
    #[error("bad event, nothing was done: {0}")]
    BadEvent(#[from] EventError),
    /// Listing the tables failed, so nothing was decided or changed.
    #[error(
        "could not list the tables, nothing was changed: {0}. Check the function's network access to \
         DynamoDB, its region, and that its role allows dynamodb:ListTables"
    )]
    ControlPlane(#[from] ControlPlaneError),
    /// Some table actions failed; the others were carried out. The whole report is logged in
    /// parts that each fit one CloudWatch Logs event.
    #[error("{operation}: {}", failure_summary(.report))]
    ActionsFailed {
        /// The function's operation.
        operation: Operation,
        /// Each failed action, in the report's order.
        failed: Vec<FailedAction>,
        /// Boxed: a report is large and the error path should stay cheap to move.
        report: Box<RunReport>,
    },
    /// Every table action succeeded, but the table names or the events could not be published
    /// ([`publish`]): writers reading the parameter may see stale names, so it pages.
    #[error("{operation}: {error}")]
    PublishFailed {
        /// The function's operation.
        operation: Operation,
        /// What could not be published.
        error: publish::PublishError,
        /// The run's report, all of its actions done.
        report: Box<RunReport>,
    },
}

impl HandlerError {
    /// The `errorType` Lambda reports: stable names to filter logs and alarms on.
    pub fn error_type(&self) -> &'static str {
        match self {
            HandlerError::BadEvent(_) => "BadEvent",
            HandlerError::ControlPlane(_) => "ListTablesFailed",
            HandlerError::ActionsFailed { .. } => "ActionsFailed",
            HandlerError::PublishFailed { .. } => "PublishFailed",
        }
    }
}

/// One readable line: the runtime logs a handler's error with `{:?}`, and a derived Debug
/// would dump the whole report (already logged as JSON) in Rust syntax.
impl fmt::Debug for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {self}", self.error_type())
    }
}

impl From<HandlerError> for Diagnostic {
    fn from(error: HandlerError) -> Diagnostic {
        Diagnostic {
            error_type: error.error_type().to_string(),
            error_message: error.to_string(),
        }
    }
}

/// One function's state, built once per cold start and shared by its invocations.
#[derive(Debug)]
pub struct Handler {
    operation: Operation,
    policy: Policy,
    /// DynamoDB with its per-account rate-limited calls paced at the policy's `[rates]`.
    control: Paced<DynamoDb>,
    /// What the stack publishes after each run, and the clients it is sent with.
    publishing: Publishing,
    clients: Option<AwsClients>,
    /// The wall clock, fixed: `None` reads the system's ([`Self::with_wall_clock`]).
    wall_clock: Option<DateTime<Utc>>,
}

impl Handler {
    /// A handler over `client` on a local server (tests, local runs), whose answers may say an
    /// API is not there; the functions start with [`Self::from_env`], which knows the endpoint.
    pub fn new(operation: Operation, policy: Policy, client: aws_sdk_dynamodb::Client) -> Self {
        Handler::with_control(operation, policy, DynamoDb::local(client))
    }

    /// With a control plane built by the caller (e.g. with Application Auto Scaling).
    pub fn with_control(operation: Operation, policy: Policy, control: DynamoDb) -> Self {
        Handler {
            operation,
            control: Paced::new(control, policy.rates),
            policy,
            publishing: Publishing::default(),
            clients: None,
            wall_clock: None,
        }
    }

    /// A wall clock that stands at `wall` for every invocation: tests and simulations that play
    /// runs "now" at chosen instants without waiting for them (the bootstraps read the
    /// system's clock). What counts as now for an event's time, readiness and the published
    /// tables is decided against it.
    pub fn with_wall_clock(self, wall: DateTime<Utc>) -> Self {
        Handler {
            wall_clock: Some(wall),
            ..self
        }
    }

    fn wall(&self) -> DateTime<Utc> {
        self.wall_clock.unwrap_or_else(Utc::now)
    }

    /// Publishing the tables and events after each run ([`publish`]), with these clients.
    pub fn with_publishing(self, publishing: Publishing, clients: AwsClients) -> Self {
        Handler {
            publishing,
            clients: Some(clients),
            ..self
        }
    }

    /// Cold start: the validated policy ([`policy_from_env`]) and an SDK client from the
    /// environment. A bad policy fails here, with the field or variable named, before any AWS
    /// call: a misconfigured function errors on its first invocation instead of acting on a
    /// policy nobody wrote. So does a policy that needs permissions the role was not given
    /// ([`ddb_rollover_stack::grants`]), when the stack's parameters say what it was given.
    pub async fn from_env(operation: Operation) -> Result<Self, InitError> {
        let policy = policy_from_env()?;
        // policy_from_env checked that the stack's variables are all there.
        if let Some(stack) = StackParameters::from_env() {
            stack.grants().check(&policy).map_err(InitError::Grants)?;
        }
        // rustls with ring: the SDK's default TLS (aws-lc) would add about 1 MB to each binary.
        let https = aws_smithy_http_client::Builder::new()
            .tls_provider(Provider::Rustls(CryptoMode::Ring))
            .build_https();
        let settings = SdkSettings {
            http_client: Some(https),
            ..SdkSettings::default()
        };
        let clients = AwsClients::load(settings).await;
        let publishing = Publishing::from_lookup(|name| std::env::var(name).ok());
        Ok(Handler::with_control(operation, policy, clients.control_plane())
            .with_publishing(publishing, clients))
    }

    /// The operation this function runs: an event naming the other one is refused.
    pub fn operation(&self) -> Operation {
        self.operation
    }

    /// The policy the cold start built.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// One invocation: read the payload (a [`Payload`], or JSON read as the runtime reads it),
    /// run the core, return its report. A run with failed actions is an error (deferred ones
    /// are not): Lambda then counts an error, so Scheduler retries, the dead-letter queue and
    /// alarms work.
    pub async fn handle(&self, event: impl Into<Payload>) -> Result<RunReport, HandlerError> {
        self.handle_until(event, None).await
    }

    /// [`Self::handle`] with a deadline: changes not started by then are deferred (a period's
    /// table not created is a failure), so the run returns its report before Lambda's timeout.
    /// Writes the run's metrics to stdout ([`Self::handle_metered`]).
    pub async fn handle_until(
        &self,
        event: impl Into<Payload>,
        deadline: Option<Instant>,
    ) -> Result<RunReport, HandlerError> {
        let (result, metrics) = self.handle_metered(event, deadline).await;
        // Not through tracing: EMF needs `_aws` at the top level of the log event.
        for document in metrics {
            println!("{document}");
        }
        result
    }

    /// [`Self::handle_until`] returning the run's CloudWatch metrics (EMF documents, one per
    /// line; see [`metrics`]) instead of writing them: from the whole report, whether the run
    /// succeeded or some actions failed; `NextTableReady` 0 when create_new could not list the
    /// tables; nothing for a refused event or a dry run.
    pub async fn handle_metered(
        &self,
        event: impl Into<Payload>,
        deadline: Option<Instant>,
    ) -> (Result<RunReport, HandlerError>, Vec<String>) {
        let wall = self.wall();
        let invocation = event.into().invocation(self.operation);
        let speaks_of_now = invocation
            .as_ref()
            .is_ok_and(|invocation| invocation.speaks_of_now(&self.policy, wall));
        let result = match invocation {
            Ok(invocation) => self.run_logged(invocation, wall, deadline).await,
            Err(error) => Err(HandlerError::BadEvent(error)),
        };
        let at = metrics::now_ms();
        let documents = match &result {
            Ok(report) => metrics::run_documents(report, at),
            Err(HandlerError::ActionsFailed { report, .. } | HandlerError::PublishFailed { report, .. }) => {
                metrics::run_documents(report, at)
            }
            // Not ready now: said only by a run for now (a replay says nothing about now).
            Err(HandlerError::ControlPlane(_)) if speaks_of_now => {
                metrics::failed_run_documents(self.operation, &self.policy.prefix, at)
            }
            Err(HandlerError::ControlPlane(_)) => Vec::new(),
            Err(HandlerError::BadEvent(_)) => Vec::new(),
        };
        // The response carries only what happened.
        (result.map(fit::response), documents)
    }

    /// One run, logged: its whole report, or the error with the whole report. A run that does
    /// not speak of now ([`Invocation::speaks_of_now`]: a replay, or an instant across a period
    /// boundary from the wall clock's) reports no readiness and publishes no tables: those
    /// describe the wall clock's current and next periods, which this run did not look at.
    async fn run_logged(
        &self,
        invocation: Invocation,
        wall: DateTime<Utc>,
        deadline: Option<Instant>,
    ) -> Result<RunReport, HandlerError> {
        let at = invocation.checked_now(&self.policy, self.operation, wall)?;
        let clock_warning = invocation.clock_warning(&self.policy, self.operation, wall);
        if let Some(warning) = &clock_warning {
            tracing::warn!(%warning, "clock");
        }
        let options = ApplyOptions {
            dry_run: invocation.dry_run,
            deadline,
            replay: invocation.replay,
            ..ApplyOptions::default()
        };
        let mut report = ddb_rollover::run(&self.control, &self.policy, self.operation, &at, options).await?;
        // The run's own periods' readiness: for its "Table Ready" events only, unless it is now's.
        let readiness = if invocation.speaks_of_now(&self.policy, wall) {
            None
        } else {
            let theirs = report.next_table_ready.take();
            if theirs.is_some() {
                report.warnings.push(format!(
                    "this run acted for period {} ({}), not the wall clock's ({}): it reports no \
                     NextTableReady and publishes no table names; a run for now does",
                    report.current_period,
                    invocation.clock.as_str(),
                    wall.to_rfc3339()
                ));
            }
            theirs
        };
        let s = &report.summary;
        tracing::info!(
            operation = %self.operation,
            at = %report.at,
            clock = invocation.clock.as_str(),
            dry_run = report.dry_run,
            current_period = %report.current_period,
            tables = s.tables,
            done = s.done,
            planned = s.planned,
            unchanged = s.unchanged,
            deferred = s.deferred,
            failed = s.failed,
            failed_tables = s.failed_tables,
            foreign = s.foreign,
            skipped = s.skipped,
            gone = s.gone,
            "summary"
        );
        // Each warning once in the log (the engine logs none), and in the response.
        for warning in &report.warnings {
            tracing::warn!(%warning, "warning");
        }
        // In the report (and the response) first, after the log's warnings.
        if let Some(warning) = clock_warning {
            report.warnings.insert(0, warning);
        }
        // The whole report, in parts that each fit one CloudWatch Logs event; the response
        // carries only what happened.
        let parts = report_chunks(&report);
        let count = parts.len();
        for (index, part) in parts.into_iter().enumerate() {
            if report.succeeded() {
                tracing::info!(part = index + 1, of = count, lines = %part, "run report");
            } else {
                tracing::error!(part = index + 1, of = count, lines = %part, "run report");
            }
        }
        // Published whether or not some actions failed: the parameter tells the tables' state.
        // Boxed: the handler's future is deep enough already (rustc's layout query limit).
        let published = Box::pin(self.publish(&report, readiness.as_ref(), wall)).await;
        if let Err(error) = &published {
            tracing::error!(%error, "publish");
        }
        if report.succeeded() {
            return match published {
                Ok(()) => Ok(report),
                Err(error) => Err(HandlerError::PublishFailed {
                    operation: self.operation,
                    error,
                    report: Box::new(report),
                }),
            };
        }
        let failed = report
            .lines_with(Outcome::Failed)
            .map(|line| FailedAction {
                table: line.item.facts.table.clone(),
                error: line.error.clone().unwrap_or_else(|| line.item.reason.clone()),
            })
            .collect();
        Err(HandlerError::ActionsFailed {
            operation: self.operation,
            failed,
            report: Box::new(report),
        })
    }
}

impl Handler {
    /// The parameter and the events of a finished run, as the stack switched them on:
    /// `readiness` is the run's own when it was not now's (for its events only).
    async fn publish(
        &self,
        report: &RunReport,
        readiness: Option<&ddb_rollover::Readiness>,
        wall: DateTime<Utc>,
    ) -> Result<(), publish::PublishError> {
        match &self.clients {
            Some(clients) if self.publishing.any() && !report.dry_run => {
                let run = publish::Published {
                    report,
                    readiness: readiness.or(report.next_table_ready.as_ref()),
                    wall,
                };
                publish::publish(clients, &self.control, self.publishing, &self.policy, run).await
            }
            _ => Ok(()),
        }
    }
}

/// Time kept back from Lambda's deadline to finish the calls in flight, log the report and
/// return it.
pub const DEADLINE_MARGIN: Duration = Duration::from_secs(20);

/// When a run must stop starting changes: the invocation's deadline (milliseconds since the
/// epoch, from the Runtime API) less [`DEADLINE_MARGIN`], as an `Instant`. `None` when the
/// deadline leaves no more than the margin at the start of the invocation: a timeout that short
/// (Lambda's default 3 s) or a deadline already past (a local emulator's) leaves nothing to
/// budget, so the run goes on and Lambda's own timeout is the limit.
pub fn run_deadline(deadline_ms: u64, wall: SystemTime) -> Option<Instant> {
    let deadline = UNIX_EPOCH + Duration::from_millis(deadline_ms);
    let left = deadline.duration_since(wall).unwrap_or_default();
    (left > DEADLINE_MARGIN).then(|| Instant::now() + (left - DEADLINE_MARGIN))
}

/// What each function's `main` calls: JSON-capable logs (Lambda's LoggingConfig LogFormat),
/// the handler built once, then the runtime loop.
pub async fn serve(operation: Operation) -> Result<(), lambda_runtime::Error> {
    lambda_runtime::tracing::init_default_subscriber();
    let handler = match Handler::from_env(operation).await {
        Ok(handler) => handler,
        Err(error) => {
            tracing::error!(error = %error, "cannot start the {operation} function");
            // Lambda then reports Runtime.InitError with our message, instead of an exit.
            if let Err(report_error) = report_init_error(&error).await {
                tracing::error!(error = %report_error, "could not report the init error to the Runtime API");
            }
            return Err(error.into());
        }
    };
    let handler = &handler;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Payload>| async move {
        let deadline = run_deadline(event.context.deadline, SystemTime::now());
        handler.handle_until(event.payload, deadline).await
    }))
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_stops_starting_changes_a_margin_before_lambdas_deadline() {
        let wall = SystemTime::now();
        let ms = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
        // The template's 300 s: 20 s kept back.
        let long = run_deadline(ms(wall + Duration::from_secs(300)), wall).unwrap() - Instant::now();
        assert!(
            long <= Duration::from_secs(280) && long > Duration::from_secs(279),
            "{long:?}"
        );
        // Lambda's default 3 s, or a deadline already past (an emulator's): no budget.
        assert_eq!(run_deadline(ms(wall + Duration::from_secs(3)), wall), None);
        assert_eq!(run_deadline(ms(wall) - 1_000, wall), None);
        assert_eq!(run_deadline(0, wall), None);
    }
}
