//! Which table holds time `t`: the planner's own naming, so applications and the Lambda
//! functions can never disagree about where an item lives.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::policy::naming::TableNaming;
use crate::policy::period::Slot;
use crate::policy::Policy;

/// One period's table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PeriodTable {
    /// The table name, `{prefix}_{label}`, exactly as create_new names it.
    pub name: String,
    /// The period label, such as `2024-12-01`.
    pub label: String,
    /// First instant of the period.
    pub start: DateTime<Utc>,
    /// First instant after the period.
    pub end: DateTime<Utc>,
    /// The period itself.
    #[serde(skip)]
    pub slot: Slot,
}

impl PeriodTable {
    /// Whether `t` falls in the period.
    pub fn contains(&self, t: DateTime<Utc>) -> bool {
        self.start <= t && t < self.end
    }
}

/// Why an instant or a time range has no tables.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum RouteError {
    /// An instant outside the years period labels can hold.
    #[error("{field} is {value}: tables exist only for instants in the years 1000 to 9999")]
    OutOfRange {
        /// Which argument held it.
        field: &'static str,
        /// The instant.
        value: DateTime<Utc>,
    },
    /// A range holding more tables than any account can: DynamoDB's table quota goes no
    /// higher than [`MAX_ROUTE_TABLES`].
    #[error(
        "from ({from}) to ({to}) spans more than {MAX_ROUTE_TABLES} tables of this policy's period ({period}): \
         no account holds that many tables (Service Quotas raise the table quota to {MAX_ROUTE_TABLES} at most); give a shorter range"
    )]
    TooMany {
        /// The range's start.
        from: DateTime<Utc>,
        /// The range's end.
        to: DateTime<Utc>,
        /// The policy's period.
        period: String,
    },
    /// A range whose start is after its end.
    #[error("from ({from}) is after to ({to}): a time range needs from <= to")]
    Reversed {
        /// The range's start.
        from: DateTime<Utc>,
        /// The range's end.
        to: DateTime<Utc>,
    },
}

/// The table that holds items stamped `t`.
pub fn table_for(policy: &Policy, t: DateTime<Utc>) -> Result<PeriodTable, RouteError> {
    let naming = policy.naming();
    let slot = labelled_floor(&naming, "t", t)?;
    Ok(period_table(&naming, slot))
}

/// The most tables a range may span: an account holds at most 10,000 tables (the highest table
/// quota Service Quotas grants), so a longer range names tables that cannot all exist, and
/// listing millennia of hours would run without bound.
pub const MAX_ROUTE_TABLES: usize = 10_000;

/// Every table holding part of `[from, to)`, oldest first. Empty when `from == to`. At most
/// [`MAX_ROUTE_TABLES`]: a longer range is refused.
pub fn tables_between(
    policy: &Policy,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<PeriodTable>, RouteError> {
    let naming = policy.naming();
    let first = labelled_floor(&naming, "from", from)?;
    labelled_floor(&naming, "to", to)?;
    if from > to {
        return Err(RouteError::Reversed { from, to });
    }
    if from == to {
        return Ok(Vec::new());
    }
    let tables: Vec<PeriodTable> = naming
        .calendar()
        .periods_from(first)
        .take_while(|slot| slot.start() < to)
        .take(MAX_ROUTE_TABLES + 1)
        .map(|slot| period_table(&naming, slot))
        .collect();
    if tables.len() > MAX_ROUTE_TABLES {
        return Err(RouteError::TooMany {
            from,
            to,
            period: policy.period.to_string(),
        });
    }
    Ok(tables)
}

fn period_table(naming: &TableNaming, slot: Slot) -> PeriodTable {
    let calendar = naming.calendar();
    PeriodTable {
        name: naming.table_name(slot),
        label: calendar.label(slot),
        start: slot.start(),
        end: calendar.end(slot),
        slot,
    }
}

/// The period holding `value`, refused when its label would not have a four-digit year.
fn labelled_floor(
    naming: &TableNaming,
    field: &'static str,
    value: DateTime<Utc>,
) -> Result<Slot, RouteError> {
    naming
        .calendar()
        .labelled_floor(value)
        .ok_or(RouteError::OutOfRange { field, value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::naming::Ownership;
    use chrono::TimeZone;

    fn policy(text: &str) -> Policy {
        Policy::from_toml(text).unwrap()
    }

    fn utc(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, d, h, min, 0).unwrap()
    }

    #[test]
    fn the_table_for_an_instant_is_the_one_the_planner_names() {
        let policy = policy("prefix = \"iot\"\nperiod = \"day\"\ntimezone = \"Europe/Berlin\"");
        // 23:30 UTC on 1 December is already 2 December in Berlin.
        let table = table_for(&policy, utc(2024, 12, 1, 23, 30)).unwrap();
        assert_eq!(table.name, "iot_2024-12-02");
        assert_eq!(table.start, utc(2024, 12, 1, 23, 0));
        assert_eq!(table.end, utc(2024, 12, 2, 23, 0));
        assert!(table.contains(utc(2024, 12, 1, 23, 30)));
        assert_eq!(
            policy.naming().classify(&table.name),
            Ownership::Owned(table.slot),
            "the planner owns the routed name"
        );
    }

    #[test]
    fn a_range_lists_every_overlapping_table_in_order() {
        let policy = policy("prefix = \"m\"\nperiod = \"6h\"");
        let tables = tables_between(&policy, utc(2024, 12, 1, 5, 0), utc(2024, 12, 1, 12, 0)).unwrap();
        let names: Vec<_> = tables.iter().map(|t| t.name.as_str()).collect();
        // [05:00, 12:00) touches 00-06 and 06-12 but not 12-18: the end is exclusive.
        assert_eq!(names, ["m_2024-12-01T00", "m_2024-12-01T06"]);
        assert!(
            tables_between(&policy, utc(2024, 12, 1, 5, 0), utc(2024, 12, 1, 5, 0))
                .unwrap()
                .is_empty()
        );
        for pair in tables.windows(2) {
            assert_eq!(pair[0].end, pair[1].start, "periods tile the range");
        }
    }

    #[test]
    fn a_repeated_dst_hour_gets_its_own_table() {
        let policy = policy("prefix = \"h\"\nperiod = \"hour\"\ntimezone = \"Europe/Berlin\"");
        // 2024-10-27: 02:00-03:00 happens twice in Berlin (00:00 and 01:00 UTC).
        let tables = tables_between(&policy, utc(2024, 10, 27, 0, 0), utc(2024, 10, 27, 2, 0)).unwrap();
        let names: Vec<_> = tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["h_2024-10-27T02", "h_2024-10-27T02.2"]);
        assert_eq!(
            table_for(&policy, utc(2024, 10, 27, 1, 59)).unwrap().name,
            "h_2024-10-27T02.2"
        );
    }

    #[test]
    fn bad_ranges_are_named() {
        let policy = Policy::default();
        let err = tables_between(&policy, utc(2024, 12, 2, 0, 0), utc(2024, 12, 1, 0, 0)).unwrap_err();
        assert!(matches!(err, RouteError::Reversed { .. }), "{err}");
        let far = Utc.with_ymd_and_hms(10_000, 1, 1, 0, 0, 0).unwrap();
        let err = table_for(&policy, far).unwrap_err();
        assert!(err.to_string().starts_with("t is +10000"), "{err}");
        assert!(tables_between(&policy, utc(2024, 1, 1, 0, 0), far)
            .unwrap_err()
            .to_string()
            .starts_with("to is"));
    }

    /// Issue 38: millennia of hourly periods were listed without bound. Refused past the
    /// 10,000 tables no account can exceed; a range of exactly that many is answered.
    #[test]
    fn a_range_of_more_tables_than_an_account_holds_is_refused() {
        let hourly = policy("prefix = \"h\"\nperiod = \"hour\"");
        let err = tables_between(&hourly, utc(1000, 1, 1, 0, 0), utc(9999, 12, 31, 0, 0)).unwrap_err();
        assert!(matches!(err, RouteError::TooMany { .. }), "{err}");
        assert!(err.to_string().contains("more than 10000 tables"), "{err}");
        let start = utc(2024, 1, 1, 0, 0);
        let most = start + chrono::Duration::hours(MAX_ROUTE_TABLES as i64);
        assert_eq!(
            tables_between(&hourly, start, most).unwrap().len(),
            MAX_ROUTE_TABLES
        );
        assert!(tables_between(&hourly, start, most + chrono::Duration::hours(1)).is_err());
    }
}
