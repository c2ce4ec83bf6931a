//! The read-back checks. Pure functions over sort keys, so each rule is unit-tested with
//! deliberately broken input; every problem found is described, none stops the others.

use chrono::{DateTime, Utc};
use ddb_rollover_app::keys::parse_sort_key;

/// Problems with one sensor's day as read: `read` must be exactly `written` (the sort keys the
/// program wrote for the sensor, in time order), strictly increasing, every time in `[start, end)`.
pub(crate) fn day(
    read: &[String],
    written: &[String],
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Vec<String> {
    let mut problems = Vec::new();
    if read.len() != written.len() {
        problems.push(format!("read {} items, wrote {}", read.len(), written.len()));
    }
    if let Some(pair) = read.windows(2).find(|pair| pair[0] >= pair[1]) {
        problems.push(format!(
            "sort keys not strictly increasing: {} then {}",
            pair[0], pair[1]
        ));
    }
    for key in read {
        match parse_sort_key(key) {
            Ok((t, _)) if start <= t && t < end => {}
            Ok((t, _)) => problems.push(format!("{key}: time {t} is outside [{start}, {end})")),
            Err(e) => problems.push(e.to_string()),
        }
    }
    if let Some((r, w)) = read.iter().zip(written).find(|(r, w)| r != w) {
        problems.push(format!("read {r} where {w} was written"));
    }
    problems
}

/// Problems with the newest-first read: it must be the last `min(n, day)` keys of the day, newest first.
pub(crate) fn latest(latest: &[String], day: &[String], n: usize) -> Vec<String> {
    let expected: Vec<&String> = day.iter().rev().take(n).collect();
    let got: Vec<&String> = latest.iter().collect();
    if got == expected {
        Vec::new()
    } else {
        vec![format!(
            "latest {n} newest first are {got:?}, but the day's last {n} reversed are {expected:?}"
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeDelta, TimeZone};
    use ddb_rollover_app::keys::sort_key;

    fn start() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 12, 1, 0, 0, 0).unwrap()
    }

    fn end() -> DateTime<Utc> {
        start() + TimeDelta::days(1)
    }

    /// Sort keys at the given minutes after the day's start.
    fn keys(minutes: &[i64]) -> Vec<String> {
        minutes
            .iter()
            .map(|&m| sort_key(start() + TimeDelta::minutes(m), "x"))
            .collect()
    }

    #[test]
    fn a_faithful_read_passes() {
        let written = keys(&[0, 5, 10, 1435]);
        assert!(day(&written, &written, start(), end()).is_empty());
        assert!(latest(&keys(&[1435, 10]), &written, 2).is_empty());
        assert!(
            latest(&keys(&[1435, 10, 5, 0]), &written, 5).is_empty(),
            "fewer than n"
        );
    }

    #[test]
    fn each_broken_rule_is_reported() {
        let written = keys(&[0, 5, 10]);
        let only = |read: &[String], what: &str| {
            let problems = day(read, &written, start(), end());
            assert!(problems.iter().any(|p| p.contains(what)), "{what}: {problems:?}");
        };
        only(&keys(&[0, 5]), "read 2 items, wrote 3");
        only(&keys(&[0, 10, 5]), "not strictly increasing");
        only(&keys(&[0, 5, 5]), "not strictly increasing");
        only(&keys(&[0, 5, 1440]), "outside");
        only(&keys(&[-1, 5, 10]), "outside");
        only(&keys(&[0, 6, 10]), "where");
        only(
            &["garbage".to_string(), written[1].clone(), written[2].clone()],
            "does not start with",
        );
        assert!(!latest(&keys(&[10, 5]), &written, 3).is_empty(), "too few");
        assert!(
            !latest(&keys(&[0, 5, 10]), &written, 3).is_empty(),
            "oldest first"
        );
    }
}
