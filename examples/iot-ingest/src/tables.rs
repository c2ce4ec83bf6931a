//! The policy and the day's tables, made by the same `create_new` the Lambda function runs, so
//! the example writes to exactly the tables production would have pre-built.

use std::error::Error;
use std::time::Duration;

use aws_sdk_dynamodb::client::Waiters;
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};
use ddb_rollover::{
    check_clock, ApplyOptions, ClockAllowance, Decision, Operation, Outcome, Policy, RunReport,
};
use ddb_rollover_app::{tables_between, PeriodTable};
use ddb_rollover_aws::dynamodb::DynamoDb;
use ddb_rollover_aws::Server;

/// The attribute DynamoDB's TTL reads (epoch seconds).
pub(crate) const TTL_ATTRIBUTE: &str = "expires_at";

/// How long to wait for a new table to become ACTIVE (real AWS takes seconds).
const ACTIVE_TIMEOUT: Duration = Duration::from_secs(300);

/// The policy as TOML: string keys (the shard key and `time#suffix` sort keys need them),
/// and on-demand billing, so an idle example table costs storage only and a run of a few
/// thousand writes costs under a cent.
pub(crate) fn policy_toml(prefix: &str, period: &str, premake: usize) -> String {
    // A JSON string is a valid TOML basic string: quotes in user input cannot break the document.
    let quote = |s: &str| serde_json::Value::from(s).to_string();
    format!(
        r#"prefix = {prefix}
period = {period}
timezone = "UTC"
premake = {premake}

[key]
partition = {{ name = "pk", type = "S" }}
sort = {{ name = "sk", type = "S" }}

[[phases]]
min_age = 0
billing = "on_demand"

[template]
ttl_attribute = "{TTL_ATTRIBUTE}"
"#,
        prefix = quote(prefix),
        period = quote(period),
    )
}

/// The policy whose `premake` covers `[start, end)`: create_new at `start` then builds the
/// table of every period of the day.
pub(crate) fn policy_for_day(
    prefix: &str,
    period: &str,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<Policy, Box<dyn Error>> {
    let probe = Policy::from_toml(&policy_toml(prefix, period, 0))?;
    let periods = tables_between(&probe, start, end)?.len();
    Ok(Policy::from_toml(&policy_toml(
        prefix,
        period,
        periods.saturating_sub(1),
    ))?)
}

/// What making the tables did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ensured {
    /// Tables CreateTable made in this run (0 on a rerun).
    pub created: usize,
}

/// Creates the day's tables if missing, waits until they are ACTIVE, then runs create_new once
/// more: DynamoDB cannot set TTL at CreateTable, so the template's TTL comes from a second run.
pub(crate) async fn ensure(
    client: &Client,
    server: Server,
    policy: &Policy,
    day_start: DateTime<Utc>,
    tables: &[PeriodTable],
) -> Result<Ensured, Box<dyn Error>> {
    let control = DynamoDb::new(client.clone()).on(server);
    let first = create_new(&control, policy, day_start).await?;
    for table in tables {
        client
            .wait_until_table_exists()
            .table_name(&table.name)
            .wait(ACTIVE_TIMEOUT)
            .await
            .map_err(|e| format!("waiting for {} to become ACTIVE: {e}", table.name))?;
    }
    create_new(&control, policy, day_start).await?;
    let created = first
        .lines_with(Outcome::Done)
        .filter(|line| matches!(line.item.decision, Decision::Create(_)))
        .count();
    Ok(Ensured { created })
}

async fn create_new(
    control: &DynamoDb,
    policy: &Policy,
    at: DateTime<Utc>,
) -> Result<RunReport, Box<dyn Error>> {
    // create_new may build ahead of the wall clock, never for an instant without labels.
    let at = check_clock(
        policy,
        &[Operation::CreateNew],
        at,
        Utc::now(),
        ClockAllowance::default(),
    )?;
    let report = ddb_rollover::run(
        control,
        policy,
        Operation::CreateNew,
        &at,
        ApplyOptions::default(),
    )
    .await?;
    if !report.succeeded() {
        let failures: Vec<String> = report
            .lines_with(Outcome::Failed)
            .map(|line| {
                format!(
                    "{}: {}",
                    line.item.facts.table,
                    line.error.as_deref().unwrap_or(&line.item.reason)
                )
            })
            .collect();
        return Err(format!("create_new failed: {}", failures.join("; ")).into());
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeDelta, TimeZone};

    #[test]
    fn premake_covers_every_period_of_the_day() {
        let start = Utc.with_ymd_and_hms(2024, 12, 1, 0, 0, 0).unwrap();
        let end = start + TimeDelta::days(1);
        for period in ["hour", "6h", "8h", "day"] {
            let policy = policy_for_day("iot", period, start, end).unwrap();
            let tables = tables_between(&policy, start, end).unwrap();
            assert_eq!(policy.premake as usize + 1, tables.len(), "{period}");
            assert_eq!(policy.template.ttl_attribute.as_deref(), Some(TTL_ATTRIBUTE));
        }
    }

    #[test]
    fn bad_input_is_reported_by_the_policy_not_mangled() {
        let start = Utc.with_ymd_and_hms(2024, 12, 1, 0, 0, 0).unwrap();
        let end = start + TimeDelta::days(1);
        assert!(policy_for_day("iot\"\nprefix = \"x", "6h", start, end).is_err());
        assert!(policy_for_day("iot", "5h", start, end).is_err());
    }
}
