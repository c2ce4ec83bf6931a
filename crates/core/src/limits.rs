//! DynamoDB's rules on how often a table's provisioned throughput may go down.
//!
//! From the DynamoDB developer guide (service quotas, "Provisioned throughput decreases"): a
//! table's throughput may be decreased up to 4 times at any time in a UTC day, plus once more
//! for every hour in which there was no decrease, for at most 27 a day. DescribeTable reports
//! `NumberOfDecreasesToday` and `LastDecreaseDateTime`; the planner uses them to defer rather
//! than collect a LimitExceededException.

use chrono::{DateTime, Duration, NaiveTime, Utc};

/// Decreases allowed at any time within one UTC day.
pub const FREE_DECREASES_PER_DAY: u32 = 4;

/// Whether a decrease may be sent at `now`; `Err(t)` is the earliest time one will be allowed.
pub fn decrease_allowed(
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
    fn a_decrease_after_now_still_counts() {
        let future = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        assert_eq!(decrease_allowed(at(0, 15), 2, Some(future)), Ok(()));
        assert!(decrease_allowed(at(0, 15), 4, Some(future)).is_err());
    }
}
