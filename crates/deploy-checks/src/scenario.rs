//! A function's schedule run the way EventBridge Scheduler delivers it: the `Input` string with
//! `<aws.scheduler.scheduled-time>` filled in, parsed as the Lambda runtime would, handed to
//! `ddb_rollover_lambda::Handler::handle` of the function's own operation.

use ddb_rollover::{Operation, RunReport};
use ddb_rollover_aws::dynamodb::DynamoDb;
use ddb_rollover_lambda::{Handler, HandlerError};

use crate::template::{Function, Schedule, SCHEDULED_TIME_PLACEHOLDER};

/// The blog's day: `create_new` at 23:45 before the boundary, `resize_old` at 00:15 after it.
pub const CREATE_AT: &str = "2018-10-25T23:45:00Z";
/// resize_old's run, after the boundary.
pub const RESIZE_AT: &str = "2018-10-26T00:15:00Z";

/// When the scenario runs each operation's schedule.
pub fn scheduled_time(operation: Operation) -> &'static str {
    match operation {
        Operation::CreateNew => CREATE_AT,
        Operation::ResizeOld => RESIZE_AT,
    }
}

/// The event Scheduler would send for `schedule` firing at `at`.
pub fn scheduler_event(schedule: &Schedule, at: &str) -> serde_json::Value {
    let input = schedule.input.replace(SCHEDULED_TIME_PLACEHOLDER, at);
    serde_json::from_str(&input).unwrap_or_else(|e| {
        panic!(
            "schedule {}: Input is not JSON once filled in ({e}): {input}",
            schedule.event
        )
    })
}

/// The function's handler as its binary builds it: its own operation, the policy from its
/// environment, `control` for DynamoDB (the binary's has Application Auto Scaling and S3 for
/// archive proofs; a scenario gives what it exercises).
pub fn handler(function: &Function, control: DynamoDb) -> Handler {
    let operation = function.operation().unwrap_or_else(|| {
        panic!(
            "{}: binary {} serves no known operation",
            function.logical_id, function.binary
        )
    });
    let policy = function
        .policy()
        .unwrap_or_else(|e| panic!("{}: its environment makes no policy: {e}", function.logical_id));
    Handler::with_control(operation, policy, control)
}

/// Runs one schedule of `function` at its scenario time.
pub async fn run_schedule(
    function: &Function,
    schedule: &Schedule,
    control: DynamoDb,
) -> Result<RunReport, HandlerError> {
    let operation = function.operation().expect("a function with an operation");
    run_schedule_at(function, schedule, control, scheduled_time(operation)).await
}

/// Runs one schedule of `function` as Scheduler would fire it at `at` (RFC 3339): how a
/// scenario walks several days.
pub async fn run_schedule_at(
    function: &Function,
    schedule: &Schedule,
    control: DynamoDb,
    at: &str,
) -> Result<RunReport, HandlerError> {
    let event = scheduler_event(schedule, at);
    // The schedule fires at its time: the wall clock then is the scheduled time.
    let wall = at
        .parse()
        .unwrap_or_else(|e| panic!("{at} is no RFC 3339 time: {e}"));
    handler(function, control)
        .with_wall_clock(wall)
        .handle(event)
        .await
}

/// Day `day` (0 = the blog's 2018-10-25) of the scenario, at `operation`'s time of day:
/// create_new at 23:45 that day, resize_old at 00:15 the next.
pub fn scheduled_time_on_day(operation: Operation, day: u32) -> String {
    let first: chrono::DateTime<chrono::Utc> = scheduled_time(operation)
        .parse()
        .expect("CREATE_AT and RESIZE_AT are RFC 3339");
    (first + chrono::Duration::days(i64::from(day))).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Functions ordered as a day runs them: every `create_new` before every `resize_old`.
pub fn in_day_order(mut functions: Vec<Function>) -> Vec<Function> {
    functions.sort_by_key(|f| match f.operation() {
        Some(Operation::CreateNew) => 0,
        Some(Operation::ResizeOld) => 1,
        None => 2,
    });
    functions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_step_from_the_blogs_day() {
        assert_eq!(scheduled_time_on_day(Operation::CreateNew, 0), CREATE_AT);
        assert_eq!(scheduled_time_on_day(Operation::ResizeOld, 0), RESIZE_AT);
        assert_eq!(
            scheduled_time_on_day(Operation::CreateNew, 7),
            "2018-11-01T23:45:00Z"
        );
        assert_eq!(
            scheduled_time_on_day(Operation::ResizeOld, 6),
            "2018-11-01T00:15:00Z"
        );
    }
}
