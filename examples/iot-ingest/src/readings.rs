//! One day of synthetic sensor readings, and the records the writer turns them into.
//!
//! Everything is deterministic (seeded values, fixed sort key suffixes, calculated shards), so
//! a rerun writes the very same items instead of duplicates, and the read-back check knows
//! exactly which keys to expect.

use std::f64::consts::TAU;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Datelike, TimeDelta, Timelike, Utc};
use ddb_rollover_app::keys::{composite_key, sort_key, ttl_epoch_seconds};
use ddb_rollover_app::Record;

/// How long DynamoDB keeps a reading (TTL), counted from the reading's time.
pub(crate) const KEEP: TimeDelta = TimeDelta::days(30);

/// One measurement of one sensor.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reading {
    pub sensor: u32,
    /// Position in the sensor's day: the sort key suffix, unique per sensor and instant.
    pub seq: u32,
    pub time: DateTime<Utc>,
    pub celsius: f64,
    pub humidity: f64,
}

/// The logical partition key of a sensor, `SENSOR#0007`; the writer appends the shard.
pub(crate) fn sensor_key(sensor: u32) -> String {
    composite_key(&["SENSOR", &format!("{sensor:04}")]).expect("both parts are non-empty and free of '#'")
}

/// Reading times of one day: `start`, `start + every`, ... before `end`.
pub(crate) fn times(start: DateTime<Utc>, end: DateTime<Utc>, every_seconds: u32) -> Vec<DateTime<Utc>> {
    let step = TimeDelta::seconds(i64::from(every_seconds.max(1)));
    std::iter::successors(Some(start), |t| Some(*t + step))
        .take_while(|t| *t < end)
        .collect()
}

/// Every sensor's readings in `[start, end)`, in time order (then sensor order), as a
/// gateway would deliver them.
pub(crate) fn day(
    sensors: u32,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    every_seconds: u32,
) -> Vec<Reading> {
    let times = times(start, end, every_seconds);
    let mut per_sensor: Vec<Vec<Reading>> = (1..=sensors).map(|s| sensor_day(s, &times)).collect();
    let mut all = Vec::with_capacity(times.len() * per_sensor.len());
    for seq in 0..times.len() {
        for readings in &mut per_sensor {
            all.push(readings[seq].clone());
        }
    }
    all
}

/// One sensor's readings at `times`: a daily temperature curve peaking mid-afternoon around a
/// per-sensor base, with a little seeded noise.
fn sensor_day(sensor: u32, times: &[DateTime<Utc>]) -> Vec<Reading> {
    let day_number = times.first().map_or(0, |t| t.num_days_from_ce());
    let mut rng = fastrand::Rng::with_seed(u64::from(sensor) << 32 | u64::from(day_number as u32));
    let base = 16.0 + rng.f64() * 8.0;
    let dryness = 40.0 + rng.f64() * 20.0;
    times
        .iter()
        .enumerate()
        .map(|(seq, &time)| {
            let day_fraction = f64::from(time.num_seconds_from_midnight()) / 86_400.0;
            let curve = (TAU * (day_fraction - 0.375)).sin();
            Reading {
                sensor,
                seq: seq as u32,
                time,
                celsius: round2(base + 4.0 * curve + (rng.f64() - 0.5) * 0.6),
                humidity: round2((dryness - 12.0 * curve + (rng.f64() - 0.5) * 2.0).clamp(0.0, 100.0)),
            }
        })
        .collect()
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl Reading {
    pub(crate) fn unique(&self) -> String {
        format!("{:05}", self.seq)
    }

    /// The sort key the writer gives this reading.
    pub(crate) fn sort_key(&self) -> String {
        sort_key(self.time, &self.unique())
    }

    /// The record to write. The shard is calculated from the reading's own identity: spread as
    /// evenly as random shards (readers still query every shard), but the same on a rerun.
    pub(crate) fn record(&self) -> Record {
        let base = sensor_key(self.sensor);
        Record::new(&base, self.time)
            .shard_by(format!("{base}/{}", self.seq))
            .unique(self.unique())
            .attribute("celsius", AttributeValue::N(format!("{:.2}", self.celsius)))
            .attribute("humidity", AttributeValue::N(format!("{:.2}", self.humidity)))
            .expires_at(ttl_epoch_seconds(self.time, KEEP))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn start() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 12, 1, 0, 0, 0).unwrap()
    }

    #[test]
    fn a_day_has_every_sensor_at_every_step_inside_the_day() {
        let end = start() + TimeDelta::days(1);
        let readings = day(3, start(), end, 7_000);
        let steps = 86_400_u32.div_ceil(7_000) as usize;
        assert_eq!(readings.len(), 3 * steps);
        assert!(readings.iter().all(|r| start() <= r.time && r.time < end));
        for sensor in 1..=3 {
            let times: Vec<_> = readings
                .iter()
                .filter(|r| r.sensor == sensor)
                .map(|r| r.time)
                .collect();
            assert_eq!(times.len(), steps);
            assert!(times.windows(2).all(|w| w[1] - w[0] == TimeDelta::seconds(7_000)));
        }
    }

    #[test]
    fn readings_are_reproducible_and_differ_between_sensors() {
        let end = start() + TimeDelta::days(1);
        assert_eq!(day(2, start(), end, 3_600), day(2, start(), end, 3_600));
        let readings = day(2, start(), end, 3_600);
        let series = |sensor| {
            readings
                .iter()
                .filter(|r| r.sensor == sensor)
                .map(|r| r.celsius)
                .collect::<Vec<_>>()
        };
        assert_ne!(series(1), series(2));
        assert!(day(2, start(), end, 3_600)
            .iter()
            .all(|r| (-50.0..60.0).contains(&r.celsius) && (0.0..=100.0).contains(&r.humidity)));
    }

    #[test]
    fn records_carry_the_key_parts_and_ttl() {
        let reading = &day(8, start(), start() + TimeDelta::hours(1), 600)[6];
        let record = reading.record();
        assert_eq!(record.base, format!("SENSOR#{:04}", reading.sensor));
        assert_eq!(record.time, reading.time);
        assert_eq!(record.expires_at, Some((reading.time + KEEP).timestamp()));
        assert!(reading
            .sort_key()
            .ends_with(&format!("#{}", record.unique.unwrap())));
    }
}
