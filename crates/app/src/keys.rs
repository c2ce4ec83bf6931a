//! Time-series key values: granularity keys, composite keys, sortable ISO 8601 sort keys and
//! TTL timestamps. All are plain strings and numbers, so any language can build the same keys.

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use chrono_tz::Tz;

/// What separates the parts of a composite key, as in `SENSOR#123#2024-12-01-14`.
pub const KEY_SEPARATOR: char = '#';

/// How coarse a time bucket key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granularity {
    /// `2024-12-01-14`
    Hour,
    /// `2024-12-01`
    Day,
    /// `2024-12`
    Month,
}

impl Granularity {
    /// The bucket of `t` in UTC.
    pub fn key(self, t: DateTime<Utc>) -> String {
        self.key_in(t, chrono_tz::UTC)
    }

    /// The bucket of `t` on the wall clock of `tz` (a repeated DST hour shares one key).
    pub fn key_in(self, t: DateTime<Utc>, tz: Tz) -> String {
        let format = match self {
            Granularity::Hour => "%Y-%m-%d-%H",
            Granularity::Day => "%Y-%m-%d",
            Granularity::Month => "%Y-%m",
        };
        t.with_timezone(&tz).format(format).to_string()
    }
}

/// Why a key cannot be built or read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    /// A key part that cannot go into a composite key.
    #[error("key part {index} ({part:?}) {problem}")]
    Part {
        /// The part's position, from 0.
        index: usize,
        /// The part as given.
        part: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    #[error(
        "sort key {0:?} does not start with an RFC 3339 UTC time such as 2024-12-01T14:03:05.000000000Z"
    )]
    /// A sort key that does not start with an RFC 3339 UTC time.
    SortKey(String),
}

/// Joins parts with `#`: `composite_key(&["SENSOR", "123", "2024-12-01-14"])` is
/// `SENSOR#123#2024-12-01-14`. Parts must be non-empty and free of `#`, so the key splits back
/// into exactly the same parts.
pub fn composite_key(parts: &[&str]) -> Result<String, KeyError> {
    for (index, part) in parts.iter().enumerate() {
        let problem = if part.is_empty() {
            "is empty"
        } else if part.contains(KEY_SEPARATOR) {
            "contains '#', the separator"
        } else {
            continue;
        };
        return Err(KeyError::Part {
            index,
            part: part.to_string(),
            problem,
        });
    }
    Ok(parts.join(&KEY_SEPARATOR.to_string()))
}

/// The time part of a sort key: RFC 3339 in UTC with nine fractional digits, a fixed width so
/// that string order (DynamoDB's order for S keys) is time order. Also the bound for ranges.
pub fn sort_key_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// A sort key for an item at `t`: `2024-12-01T14:03:05.123456789Z#<unique>`. The suffix keeps
/// two items of the same instant (and base key) from overwriting each other.
pub fn sort_key(t: DateTime<Utc>, unique: &str) -> String {
    format!("{}{KEY_SEPARATOR}{unique}", sort_key_time(t))
}

/// A random suffix for [`sort_key`]: 16 hex digits, so collisions within one instant are
/// practically impossible.
pub fn unique_suffix() -> String {
    format!("{:016x}", fastrand::u64(..))
}

/// The instant and suffix of a sort key made by [`sort_key`].
pub fn parse_sort_key(key: &str) -> Result<(DateTime<Utc>, &str), KeyError> {
    let (time, unique) = key.split_once(KEY_SEPARATOR).unwrap_or((key, ""));
    let t = DateTime::parse_from_rfc3339(time)
        .map_err(|_| KeyError::SortKey(key.to_string()))?
        .with_timezone(&Utc);
    Ok((t, unique))
}

/// A TTL attribute value: the epoch second at which DynamoDB may delete an item written at
/// `t` that should live for `keep`. (TTL reads a Number of seconds, not milliseconds.)
pub fn ttl_epoch_seconds(t: DateTime<Utc>, keep: TimeDelta) -> i64 {
    (t + keep).timestamp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 12, 1, 14, 3, 5).unwrap() + TimeDelta::microseconds(123_456)
    }

    #[test]
    fn granularity_keys() {
        assert_eq!(Granularity::Hour.key(t()), "2024-12-01-14");
        assert_eq!(Granularity::Day.key(t()), "2024-12-01");
        assert_eq!(Granularity::Month.key(t()), "2024-12");
        // 14:03 UTC is 09:03 in New York, and 23:30 UTC on 30 November is already December in Tokyo.
        assert_eq!(
            Granularity::Hour.key_in(t(), chrono_tz::America::New_York),
            "2024-12-01-09"
        );
        let late = Utc.with_ymd_and_hms(2024, 11, 30, 23, 30, 0).unwrap();
        assert_eq!(Granularity::Month.key_in(late, chrono_tz::Asia::Tokyo), "2024-12");
    }

    #[test]
    fn composite_keys_round_trip() {
        let hour = Granularity::Hour.key(t());
        let key = composite_key(&["SENSOR", "123", &hour]).unwrap();
        assert_eq!(key, "SENSOR#123#2024-12-01-14");
        assert_eq!(
            key.split(KEY_SEPARATOR).collect::<Vec<_>>(),
            ["SENSOR", "123", &hour]
        );
        let err = composite_key(&["SENSOR", "1#2"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "key part 1 (\"1#2\") contains '#', the separator"
        );
        assert!(composite_key(&["", "x"])
            .unwrap_err()
            .to_string()
            .contains("is empty"));
    }

    #[test]
    fn sort_keys_sort_in_time_order_and_parse_back() {
        let key = sort_key(t(), "a1");
        assert_eq!(key, "2024-12-01T14:03:05.123456000Z#a1");
        assert_eq!(parse_sort_key(&key).unwrap(), (t(), "a1"));
        let times = [
            t() - TimeDelta::days(400),
            t() - TimeDelta::nanoseconds(1),
            t(),
            t() + TimeDelta::nanoseconds(1),
            t() + TimeDelta::seconds(10),
            t() + TimeDelta::days(3000),
        ];
        let keys: Vec<String> = times.iter().map(|&t| sort_key(t, &unique_suffix())).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(sorted, keys, "string order is time order");
        // A range bound sorts below every key at that instant and above every earlier one.
        assert!(sort_key_time(t()) < keys[2] && keys[1] < sort_key_time(t()));
        assert!(parse_sort_key("yesterday#1").is_err());
    }

    #[test]
    fn unique_suffixes_differ() {
        let suffixes: std::collections::HashSet<String> = (0..1000).map(|_| unique_suffix()).collect();
        assert_eq!(suffixes.len(), 1000);
        assert!(suffixes.iter().all(|s| s.len() == 16));
    }

    #[test]
    fn ttl_is_epoch_seconds() {
        assert_eq!(
            ttl_epoch_seconds(t(), TimeDelta::days(30)),
            t().timestamp() + 30 * 86_400
        );
        assert_eq!(
            ttl_epoch_seconds(
                Utc.with_ymd_and_hms(1970, 1, 2, 0, 0, 0).unwrap(),
                TimeDelta::zero()
            ),
            86_400
        );
    }
}
