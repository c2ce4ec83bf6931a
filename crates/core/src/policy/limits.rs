//! DynamoDB's rules on how often a table's provisioned throughput may go down, and on how
//! many tables an account may have.
//!
//! From the DynamoDB developer guide (service quotas, "Provisioned throughput decreases"): a
//! table's throughput may be decreased up to 4 times at any time in a UTC day, plus once more
//! for every hour in which there was no decrease, for at most 27 a day. DescribeTable reports
//! `NumberOfDecreasesToday` and `LastDecreaseDateTime`; the planner uses them to defer rather
//! than collect a LimitExceededException.

use chrono::{DateTime, Duration, NaiveTime, Utc};

/// Tables per account and Region by default (Service Quotas can raise it, to 10,000 at most
/// per account). CreateTable past it: LimitExceededException.
pub(crate) const DEFAULT_TABLE_QUOTA: u64 = 2_500;

/// What to do when CreateTable is refused for the account's limits: first in the message, so
/// it survives when an error is cut short (the Lambda error shows 300 characters a table).
pub const TABLE_QUOTA_ADVICE: &str =
    "the account's table quota (2,500 tables per Region by default) or its 500 \
     table operations in progress is reached: set retention.delete_after, delete unneeded tables, \
     or ask AWS for a higher quota (Service Quotas, DynamoDB)";

/// The most units a policy may give any throughput: provisioned read / write capacity (table,
/// index, override), on-demand maximums, autoscaling bounds and warm throughput. DynamoDB's
/// default table-level quota is 40,000 read and 40,000 write units (Service Quotas raises it
/// on request); a million leaves room for raised quotas, and keeps every sum and product of
/// units the planner forms far inside `i64`.
pub(crate) const MAX_UNITS: i64 = 1_000_000;

/// The most periods any age in a policy may name (`phases[].min_age`,
/// `retention.archive_after`, `delete_after`, `keep_newest`): a family holds at most one table
/// a period and an account at most 10,000 tables, so a larger age could never be reached, and
/// 100,000 years from now is still a date.
pub(crate) const MAX_AGE_PERIODS: i64 = 100_000;

/// Decreases allowed at any time within one UTC day.
pub(crate) const FREE_DECREASES_PER_DAY: u32 = 4;

/// Whether a decrease may be sent at `now`; `Err(t)` is the earliest time one will be allowed.
pub(crate) fn decrease_allowed(
    now: DateTime<Utc>,
    decreases_today: u32,
    last_decrease: Option<DateTime<Utc>>,
) -> Result<(), DateTime<Utc>> {
    let Some(last) = last_decrease else {
        return Ok(());
    };
    // The count resets at midnight UTC. A last decrease later than `now` (a simulated clock, or
    // skew) still counts: the server's count is the truth.
    let same_day = last.date_naive() >= now.date_naive();
    if !same_day || decreases_today < FREE_DECREASES_PER_DAY {
        return Ok(());
    }
    let hour_after_last = last + Duration::hours(1);
    if now >= hour_after_last {
        return Ok(());
    }
    let next_midnight = (now.date_naive() + Duration::days(1))
        .and_time(NaiveTime::MIN)
        .and_utc();
    Err(hour_after_last.min(next_midnight))
}

/// Provisioned to on-demand switches: DynamoDB allows 4 per table in a rolling 24 hours
/// ("Considerations when switching capacity modes"); on-demand to provisioned at any time.
/// DescribeTable reports only the last switch (BillingModeSummary), so the planner allows one
/// switch every 6 hours, which can never exceed 4 in any 24 hours.
pub(crate) const ON_DEMAND_SWITCH_SPACING: Duration = Duration::hours(6);

/// Table class changes: DynamoDB limits how often a table's class may change in a trailing
/// 30 days (2, per the developer guide as we read it). DescribeTable reports only the last
/// change (TableClassSummary), so the planner allows one change every 15 days, which can never
/// exceed 2 in any 30 days.
pub(crate) const TABLE_CLASS_CHANGE_SPACING: Duration = Duration::days(15);

/// Whether a change limited to one per `spacing` may be sent at `now`; `Err(t)` is when it may.
pub(crate) fn spaced_change_allowed(
    now: DateTime<Utc>,
    last_change: Option<DateTime<Utc>>,
    spacing: Duration,
) -> Result<(), DateTime<Utc>> {
    match last_change {
        Some(last) if now < last + spacing => Err(last + spacing),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2018, 10, 26, h, m, 0).unwrap()
    }

    #[test]
    fn a_table_never_decreased_may_decrease() {
        assert_eq!(decrease_allowed(at(0, 15), 0, None), Ok(()));
    }

    #[test]
    fn four_per_day_at_any_time() {
        for n in 0..4 {
            assert_eq!(decrease_allowed(at(0, 15), n, Some(at(0, 10))), Ok(()));
        }
    }

    #[test]
    fn after_four_one_per_hour_without_a_decrease() {
        assert_eq!(decrease_allowed(at(0, 15), 4, Some(at(0, 10))), Err(at(1, 10)));
        assert_eq!(decrease_allowed(at(1, 10), 4, Some(at(0, 10))), Ok(()));
        assert_eq!(decrease_allowed(at(9, 0), 26, Some(at(8, 30))), Err(at(9, 30)));
    }

    #[test]
    fn the_count_resets_at_midnight_utc() {
        let yesterday = Utc.with_ymd_and_hms(2018, 10, 25, 23, 50, 0).unwrap();
        assert_eq!(decrease_allowed(at(0, 15), 27, Some(yesterday)), Ok(()));
        // Late in the day the wait is cut short by midnight.
        let late = Utc.with_ymd_and_hms(2018, 10, 26, 23, 30, 0).unwrap();
        let now = Utc.with_ymd_and_hms(2018, 10, 26, 23, 40, 0).unwrap();
        assert_eq!(
            decrease_allowed(now, 10, Some(late)),
            Err(Utc.with_ymd_and_hms(2018, 10, 27, 0, 0, 0).unwrap())
        );
    }

    #[test]
    fn spaced_changes() {
        assert_eq!(
            spaced_change_allowed(at(0, 15), None, ON_DEMAND_SWITCH_SPACING),
            Ok(())
        );
        assert_eq!(
            spaced_change_allowed(at(6, 0), Some(at(0, 15)), ON_DEMAND_SWITCH_SPACING),
            Err(at(6, 15))
        );
        assert_eq!(
            spaced_change_allowed(at(6, 15), Some(at(0, 15)), ON_DEMAND_SWITCH_SPACING),
            Ok(())
        );
        let two_weeks_ago = at(0, 15) - Duration::days(14);
        assert_eq!(
            spaced_change_allowed(at(0, 15), Some(two_weeks_ago), TABLE_CLASS_CHANGE_SPACING),
            Err(at(0, 15) + Duration::days(1))
        );
    }

    #[test]
    fn a_decrease_after_now_still_counts() {
        let future = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        assert_eq!(decrease_allowed(at(0, 15), 2, Some(future)), Ok(()));
        assert!(decrease_allowed(at(0, 15), 4, Some(future)).is_err());
    }
}
