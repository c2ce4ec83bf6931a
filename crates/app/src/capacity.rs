//! Sizing a time-series table the way AWS's guidance does: how soon the data fills one
//! partition (that picks the period), how many write shards and WCU the peak needs, and how many
//! partitions a throughput implies. Pure arithmetic; `ddb-rollover capacity` prints it.

use std::time::Duration;

use serde::{Serialize, Serializer};

use ddb_rollover::policy::PeriodKind;

/// Write units one partition serves, per the DynamoDB developer guide ("Best practices for
/// designing and using partition keys effectively": 1,000 write units per second a partition).
pub const PARTITION_WRITE_UNITS: u64 = 1_000;

/// Read units one partition serves (same page: 3,000 read units per second a partition).
pub const PARTITION_READ_UNITS: u64 = 3_000;

/// Data one partition holds: "about 10 GB" (developer guide, "Partitions and data
/// distribution"). Read as 10^10 bytes, not 10 GiB: it is the conservative reading, since the
/// partition fills sooner, so the suggested period is never too long.
pub const PARTITION_BYTES: u64 = 10_000_000_000;

/// One WCU is one write per second of an item up to 1 KB (developer guide, "Read/write
/// capacity mode"); larger items take one WCU per started KB.
pub const WRITE_UNIT_BYTES: u64 = 1_024;

/// The largest item DynamoDB stores, 400 KB (developer guide, "Service quotas": item size).
pub const MAX_ITEM_BYTES: u64 = 409_600;

/// The most items a second any rate may be (`--events-per-sec`, `--peak-events-per-sec`, and a
/// bulk load's `--items` / `--within`): a billion, far past any table DynamoDB serves, and small
/// enough that every unit count the method forms is exact in a `u64` (it never saturates into a
/// wrong answer).
pub const MAX_EVENTS_PER_SEC: f64 = 1e9;

/// The most units `--read-units` and `--write-units` may each be: a billion, far past any
/// table's throughput quota.
pub const MAX_CAPACITY_UNITS: u64 = 1_000_000_000;

/// What `--within` allows: 1 second to 36,500 days (100 years).
pub const WITHIN: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(36_500 * 86_400));

/// Relative slack for floating-point noise: rates such as 1e10 / 86,400 s cannot be written
/// exactly, and a period must not lose to a rounding error of its own boundary.
const FLOAT_NOISE: f64 = 1e-12;

/// A steady write load: the average rate fills storage, the peak rate sets capacity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WriteLoad {
    /// The size of one item, in bytes.
    pub item_bytes: u64,
    /// The average rate, in items written per second.
    pub events_per_sec: f64,
    /// The busiest rate; `None` means the average.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_events_per_sec: Option<f64>,
}

/// A bulk load: `items` written within `within`, at an even rate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BulkLoad {
    /// The size of one item, in bytes.
    pub item_bytes: u64,
    /// How many items to write.
    pub items: u64,
    /// How long the load may take.
    #[serde(rename = "within_seconds", serialize_with = "seconds")]
    pub within: Duration,
}

impl BulkLoad {
    /// The even rate that loads every item in time.
    pub fn events_per_sec(&self) -> f64 {
        self.items as f64 / self.within.as_secs_f64()
    }
}

/// Provisioned throughput, for the partition count alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Throughput {
    /// Provisioned read capacity units.
    pub read_units: u64,
    /// Provisioned write capacity units.
    pub write_units: u64,
}

/// What a table for a write load needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableSizing {
    /// Hours until one table's data fills a 10 GB partition, at the average rate.
    pub hours_to_fill_partition: f64,
    /// The longest period whose table cannot outgrow one partition ("hour" at the least).
    pub period: PeriodKind,
    /// WCU one write of an item costs: one per started KB.
    pub write_units_per_item: u64,
    /// Partition-key shards the peak needs, each partition taking 1,000 WCU.
    pub shards: u64,
    /// WCU for the current period's table: the peak rate times the units per item.
    pub write_capacity: u64,
    /// Partitions that capacity occupies (reads are negligible while a table is written).
    pub partitions: u64,
    /// What the operator should know about the sizing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// An input the method cannot size; the message names the CLI flag and what it accepts.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CapacityError {
    /// `--item-bytes` is 0 or over 400 KB.
    #[error("--item-bytes must be 1 to {MAX_ITEM_BYTES} (DynamoDB's 400 KB item limit), got {0}")]
    ItemBytes(u64),
    /// `--events-per-sec` is not a finite number above 0 and at most [`MAX_EVENTS_PER_SEC`].
    #[error("--events-per-sec must be a finite number above 0 and at most {MAX_EVENTS_PER_SEC:e} (a billion a second, past any DynamoDB table), got {0}")]
    EventsPerSec(f64),
    /// `--peak-events-per-sec` is not a finite number at most [`MAX_EVENTS_PER_SEC`].
    #[error("--peak-events-per-sec must be a finite number at most {MAX_EVENTS_PER_SEC:e} (a billion a second, past any DynamoDB table), got {0}")]
    PeakEventsPerSec(f64),
    /// The peak rate is below the average.
    #[error("--peak-events-per-sec ({peak}) is below --events-per-sec ({average})")]
    PeakBelowAverage {
        /// The peak rate, in events per second.
        peak: f64,
        /// The average rate, in events per second.
        average: f64,
    },
    /// Both read and write units are 0.
    #[error("--read-units and --write-units are both 0: give the throughput to count partitions for")]
    NoThroughput,
    /// `--read-units` or `--write-units` is over [`MAX_CAPACITY_UNITS`].
    #[error("{flag} must be at most {MAX_CAPACITY_UNITS} (a billion units, past any table's throughput quota), got {units}")]
    TooManyUnits {
        /// `--read-units` or `--write-units`.
        flag: &'static str,
        /// What was given.
        units: u64,
    },
    /// A bulk load's even rate is over [`MAX_EVENTS_PER_SEC`].
    #[error("--items {items} within --within {within_seconds} s is {rate:e} items a second: at most {MAX_EVENTS_PER_SEC:e} (a billion a second, past any DynamoDB table); give fewer items or a longer --within")]
    BulkRate {
        /// `--items`.
        items: u64,
        /// `--within`, in seconds.
        within_seconds: f64,
        /// The even rate they make.
        rate: f64,
    },
    /// `--items` is 0.
    #[error("--items must be at least 1, got 0")]
    NoItems,
    /// `--within` is under 1 second or over 36,500 days.
    #[error("--within must be 1s to 36500d (100 years), got {0:?}")]
    Within(Duration),
}

/// WCU one write of an item costs: one per started KB.
pub fn write_units_per_item(item_bytes: u64) -> u64 {
    item_bytes.div_ceil(WRITE_UNIT_BYTES)
}

/// Hours until `events_per_sec` items of `item_bytes` fill one partition's 10 GB.
pub fn hours_to_fill_partition(events_per_sec: f64, item_bytes: u64) -> f64 {
    PARTITION_BYTES as f64 / (events_per_sec * item_bytes as f64) / 3600.0
}

/// The longest a period of `kind` can last, in hours: 31-day months, 92-day quarters
/// (July to September), 366-day years. Days count 24 hours; the 25-hour day of a DST
/// fall-back is 4% longer, well inside the gap between 10^10 bytes and 10 GiB.
pub fn longest_hours(kind: PeriodKind) -> u32 {
    match kind {
        PeriodKind::Hours(n) => u32::from(n),
        PeriodKind::Day => 24,
        PeriodKind::Week => 7 * 24,
        PeriodKind::Month => 31 * 24,
        PeriodKind::Quarter => 92 * 24,
        PeriodKind::Year => 366 * 24,
    }
}

/// The longest period that ends before its table fills a partition; `None` when even an hour
/// is too long.
pub fn longest_period_within(hours_to_fill: f64) -> Option<PeriodKind> {
    PeriodKind::ALL
        .into_iter()
        .rev()
        .find(|&kind| f64::from(longest_hours(kind)) <= hours_to_fill * (1.0 + FLOAT_NOISE))
}

/// Partitions a table's throughput occupies: `ceil(RCU / 3,000 + WCU / 1,000)`, at least 1
/// (the formula of AWS's partition guidance). Integer arithmetic, so exact.
pub fn partitions(throughput: Throughput) -> u64 {
    let units = u128::from(throughput.read_units)
        + u128::from(throughput.write_units) * u128::from(PARTITION_READ_UNITS / PARTITION_WRITE_UNITS);
    let partitions = units.div_ceil(u128::from(PARTITION_READ_UNITS)).max(1);
    u64::try_from(partitions).unwrap_or(u64::MAX)
}

/// Shards that spread `write_capacity` so no partition key takes more than one partition's
/// 1,000 WCU; at least 1.
pub fn write_shards(write_capacity: u64) -> u64 {
    write_capacity.div_ceil(PARTITION_WRITE_UNITS).max(1)
}

/// Sizes the table for a steady write load.
pub fn size_write_load(load: &WriteLoad) -> Result<TableSizing, CapacityError> {
    check_item_bytes(load.item_bytes)?;
    let average = load.events_per_sec;
    if !(average.is_finite() && average > 0.0 && average <= MAX_EVENTS_PER_SEC) {
        return Err(CapacityError::EventsPerSec(average));
    }
    let peak = load.peak_events_per_sec.unwrap_or(average);
    if !(peak.is_finite() && peak <= MAX_EVENTS_PER_SEC) {
        return Err(CapacityError::PeakEventsPerSec(peak));
    }
    if peak < average {
        return Err(CapacityError::PeakBelowAverage { peak, average });
    }
    Ok(size(load.item_bytes, average, peak))
}

/// Sizes the table for a bulk load, whose peak is its even rate.
pub fn size_bulk_load(load: &BulkLoad) -> Result<TableSizing, CapacityError> {
    check_item_bytes(load.item_bytes)?;
    if load.items == 0 {
        return Err(CapacityError::NoItems);
    }
    if load.within < WITHIN.0 || load.within > WITHIN.1 {
        return Err(CapacityError::Within(load.within));
    }
    let rate = load.events_per_sec();
    if rate > MAX_EVENTS_PER_SEC {
        return Err(CapacityError::BulkRate {
            items: load.items,
            within_seconds: load.within.as_secs_f64(),
            rate,
        });
    }
    Ok(size(load.item_bytes, rate, rate))
}

/// Counts the partitions for a throughput, refusing an empty one.
pub fn partitions_for(throughput: Throughput) -> Result<u64, CapacityError> {
    if throughput.read_units == 0 && throughput.write_units == 0 {
        return Err(CapacityError::NoThroughput);
    }
    for (flag, units) in [
        ("--read-units", throughput.read_units),
        ("--write-units", throughput.write_units),
    ] {
        if units > MAX_CAPACITY_UNITS {
            return Err(CapacityError::TooManyUnits { flag, units });
        }
    }
    Ok(partitions(throughput))
}

fn check_item_bytes(item_bytes: u64) -> Result<(), CapacityError> {
    if (1..=MAX_ITEM_BYTES).contains(&item_bytes) {
        Ok(())
    } else {
        Err(CapacityError::ItemBytes(item_bytes))
    }
}

/// The method on validated inputs: the average fills storage, the peak needs capacity.
fn size(item_bytes: u64, average: f64, peak: f64) -> TableSizing {
    let hours_to_fill_partition = hours_to_fill_partition(average, item_bytes);
    let write_units_per_item = write_units_per_item(item_bytes);
    let write_capacity = whole_units(peak * write_units_per_item as f64);
    let shards = write_shards(write_capacity);
    let mut warnings = Vec::new();
    let period = longest_period_within(hours_to_fill_partition).unwrap_or_else(|| {
        warnings.push(format!(
            "at this rate one 10 GB partition fills in {}, so even an hourly table (the shortest \
             period) takes in {} partitions of data each hour: expect DynamoDB to split it, \
             spread the writes over at least {shards} shards, and keep hourly tables only as long \
             as they are needed",
            fill_time(hours_to_fill_partition),
            whole_units(1.0 / hours_to_fill_partition)
        ));
        PeriodKind::Hours(1)
    });
    TableSizing {
        hours_to_fill_partition,
        period,
        write_units_per_item,
        shards,
        write_capacity,
        partitions: partitions(Throughput {
            read_units: 0,
            write_units: write_capacity,
        }),
        warnings,
    }
}

/// Rounds capacity up to whole units, but a value within float noise of a whole number is that
/// number: 1.09 × 100 computes as 109.00000000000001 and needs 109 units, not 110.
fn whole_units(value: f64) -> u64 {
    let nearest = value.round();
    if (value - nearest).abs() <= nearest * FLOAT_NOISE {
        nearest as u64
    } else {
        value.ceil() as u64
    }
}

/// A fill time under an hour, in the unit an operator reads at a glance.
fn fill_time(hours: f64) -> String {
    let seconds = hours * 3600.0;
    if seconds >= 60.0 {
        format!("{:.0} minutes", seconds / 60.0)
    } else if seconds >= 1.0 {
        format!("{seconds:.0} seconds")
    } else {
        "under a second".to_string()
    }
}

fn seconds<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steady(item_bytes: u64, events_per_sec: f64, peak: Option<f64>) -> TableSizing {
        size_write_load(&WriteLoad {
            item_bytes,
            events_per_sec,
            peak_events_per_sec: peak,
        })
        .unwrap()
    }

    fn bulk(item_bytes: u64, items: u64, within: Duration) -> TableSizing {
        size_bulk_load(&BulkLoad {
            item_bytes,
            items,
            within,
        })
        .unwrap()
    }

    /// The events/s of `item_bytes` items that fill one partition in exactly `hours`.
    fn rate_filling_in(hours: f64, item_bytes: u64) -> f64 {
        PARTITION_BYTES as f64 / (hours * 3600.0) / item_bytes as f64
    }

    #[test]
    fn guidance_600_events_of_180_bytes_fill_a_partition_in_about_a_day() {
        let sizing = steady(180, 600.0, None);
        assert!(
            (25.5..=27.5).contains(&sizing.hours_to_fill_partition),
            "{}",
            sizing.hours_to_fill_partition
        );
        assert_eq!(sizing.period, PeriodKind::Day);
        assert_eq!(sizing.write_units_per_item, 1);
        assert!(sizing.warnings.is_empty());
    }

    #[test]
    fn guidance_peak_of_6000_needs_six_shards() {
        let sizing = steady(180, 5_000.0, Some(6_000.0));
        assert_eq!(sizing.shards, 6);
        assert_eq!(sizing.write_capacity, 6_000);
    }

    #[test]
    fn guidance_partition_counts() {
        let count = |read_units, write_units| {
            partitions_for(Throughput {
                read_units,
                write_units,
            })
            .unwrap()
        };
        assert_eq!(count(1_000, 500), 1);
        assert_eq!(count(1_000, 1_000), 2);
        assert_eq!(count(5_000, 2_000), 4);
        assert_eq!(count(3_000, 0), 1);
        assert_eq!(count(3_001, 0), 2);
        let nothing = Throughput {
            read_units: 0,
            write_units: 0,
        };
        assert_eq!(partitions(nothing), 1, "a table has at least one partition");
    }

    #[test]
    fn guidance_bulk_load_of_20_million_items() {
        // The guidance says "about 11 partitions" for half an hour because it rounds the rate
        // to 11,000 WCU first; the formula on the unrounded 11,112 WCU gives 12, and capacity
        // is never rounded down.
        for (window, write_capacity, partitions) in [
            (Duration::from_secs(30 * 60), 10_900..=11_200, 12),
            (Duration::from_secs(3 * 3600), 1_800..=1_950, 2),
        ] {
            let load = bulk(1024, 20_000_000, window);
            assert!(
                write_capacity.contains(&load.write_capacity),
                "{window:?}: {}",
                load.write_capacity
            );
            assert_eq!(load.partitions, partitions, "{window:?}");
        }
    }

    #[test]
    fn a_write_unit_covers_one_kilobyte() {
        assert_eq!(write_units_per_item(1), 1);
        assert_eq!(write_units_per_item(1024), 1);
        assert_eq!(write_units_per_item(1025), 2);
        assert_eq!(write_units_per_item(MAX_ITEM_BYTES), 400);
    }

    #[test]
    fn each_period_is_chosen_from_its_longest_length_and_not_a_moment_before() {
        for (i, kind) in PeriodKind::ALL.into_iter().enumerate() {
            let hours = f64::from(longest_hours(kind));
            let sizing = steady(180, rate_filling_in(hours, 180), None);
            assert_eq!(sizing.period, kind, "filling in exactly {hours} h");
            let shorter = steady(180, rate_filling_in(hours * 0.999, 180), None);
            let expected = i
                .checked_sub(1)
                .map(|j| PeriodKind::ALL[j])
                .unwrap_or(PeriodKind::Hours(1));
            assert_eq!(shorter.period, expected, "filling in just under {hours} h");
        }
    }

    #[test]
    fn a_day_boundary_picks_day_and_just_under_picks_12h() {
        assert_eq!(
            steady(180, rate_filling_in(24.0, 180), None).period,
            PeriodKind::Day
        );
        assert_eq!(
            steady(180, rate_filling_in(23.9, 180), None).period,
            PeriodKind::Hours(12)
        );
    }

    #[test]
    fn a_partition_filling_within_the_hour_still_gets_hourly_tables_with_a_warning() {
        let sizing = steady(MAX_ITEM_BYTES, 1_000_000.0, None);
        assert!(sizing.hours_to_fill_partition < 1.0);
        assert_eq!(sizing.period, PeriodKind::Hours(1));
        assert_eq!(sizing.warnings.len(), 1, "{:?}", sizing.warnings);
        assert!(sizing.warnings[0].contains("hourly"), "{}", sizing.warnings[0]);
        assert!(sizing.warnings[0].contains(&format!("{} shards", sizing.shards)));
        let per_hour = (1.0 / sizing.hours_to_fill_partition).ceil();
        assert!(sizing.warnings[0].contains(&format!("takes in {per_hour} partitions")));

        let just_an_hour = steady(180, rate_filling_in(1.0, 180), None);
        assert_eq!(just_an_hour.period, PeriodKind::Hours(1));
        assert!(just_an_hour.warnings.is_empty());
    }

    #[test]
    fn a_slow_rate_still_needs_one_shard_and_one_partition() {
        let sizing = steady(100, 0.01, None);
        assert_eq!(sizing.write_capacity, 1);
        assert_eq!(sizing.shards, 1);
        assert_eq!(sizing.partitions, 1);
        assert_eq!(sizing.period, PeriodKind::Year);
    }

    #[test]
    fn capacity_follows_the_peak_and_the_period_follows_the_average() {
        let calm = steady(2048, 100.0, None);
        let spiky = steady(2048, 100.0, Some(900.0));
        assert_eq!(calm.hours_to_fill_partition, spiky.hours_to_fill_partition);
        assert_eq!(calm.period, spiky.period);
        assert_eq!(calm.write_capacity, 200);
        assert_eq!(spiky.write_capacity, 1_800);
        assert_eq!(spiky.shards, 2);
    }

    #[test]
    fn float_noise_does_not_add_a_unit() {
        // 1.09 events/s of 100 KB items: 1.09 * 100 is 109.00000000000001 in f64.
        assert_eq!(steady(100 * 1024, 1.09, None).write_capacity, 109);
        assert_eq!(steady(100 * 1024, 1.091, None).write_capacity, 110);
    }

    #[test]
    fn invalid_inputs_name_their_flag() {
        let load = |item_bytes, events_per_sec, peak_events_per_sec| {
            size_write_load(&WriteLoad {
                item_bytes,
                events_per_sec,
                peak_events_per_sec,
            })
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            load(0, 600.0, None),
            "--item-bytes must be 1 to 409600 (DynamoDB's 400 KB item limit), got 0"
        );
        assert!(load(MAX_ITEM_BYTES + 1, 600.0, None).starts_with("--item-bytes"));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(load(180, bad, None).starts_with("--events-per-sec"), "{bad}");
        }
        assert_eq!(
            load(180, 600.0, Some(500.0)),
            "--peak-events-per-sec (500) is below --events-per-sec (600)"
        );
        assert!(load(180, 600.0, Some(f64::INFINITY)).starts_with("--peak-events-per-sec"));

        let bulk_error = |items, within| {
            size_bulk_load(&BulkLoad {
                item_bytes: 1024,
                items,
                within,
            })
            .unwrap_err()
        };
        assert_eq!(bulk_error(0, Duration::from_secs(60)), CapacityError::NoItems);
        assert_eq!(
            bulk_error(10, Duration::ZERO),
            CapacityError::Within(Duration::ZERO)
        );
        assert_eq!(
            partitions_for(Throughput {
                read_units: 0,
                write_units: 0
            }),
            Err(CapacityError::NoThroughput)
        );
    }

    /// Issue 38: every count and duration is bounded, so no answer saturates into a wrong one
    /// (u64::MAX items within 1 ns was "18446744073709551615 partitions").
    #[test]
    fn counts_and_durations_past_any_table_are_refused_naming_the_flag() {
        let load = |events_per_sec, peak_events_per_sec| {
            size_write_load(&WriteLoad {
                item_bytes: 1000,
                events_per_sec,
                peak_events_per_sec,
            })
            .map_err(|e| e.to_string())
        };
        assert!(load(1e300, None).unwrap_err().starts_with("--events-per-sec"));
        assert!(load(10.0, Some(1e300))
            .unwrap_err()
            .starts_with("--peak-events-per-sec"));
        assert!(load(MAX_EVENTS_PER_SEC, None).is_ok());
        let bulk = |items, within| {
            size_bulk_load(&BulkLoad {
                item_bytes: 1000,
                items,
                within,
            })
            .map_err(|e| e.to_string())
        };
        assert!(bulk(u64::MAX, Duration::from_secs(1))
            .unwrap_err()
            .starts_with("--items"));
        assert!(bulk(1, Duration::from_nanos(1))
            .unwrap_err()
            .starts_with("--within"));
        assert!(bulk(1, Duration::from_secs(99_999_999_999 * 86_400))
            .unwrap_err()
            .starts_with("--within"));
        let units = |read_units, write_units| {
            partitions_for(Throughput {
                read_units,
                write_units,
            })
            .map_err(|e| e.to_string())
        };
        assert!(units(u64::MAX, 1).unwrap_err().starts_with("--read-units"));
        assert!(units(1, u64::MAX).unwrap_err().starts_with("--write-units"));
        assert!(units(MAX_CAPACITY_UNITS, MAX_CAPACITY_UNITS).is_ok());
    }

    #[test]
    fn sizing_serializes_with_the_documented_keys() {
        let json = serde_json::to_value(steady(180, 600.0, None)).unwrap();
        let mut keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut expected = vec![
            "hours_to_fill_partition",
            "period",
            "write_units_per_item",
            "shards",
            "write_capacity",
            "partitions",
        ];
        expected.sort_unstable();
        assert_eq!(keys, expected);
        assert_eq!(json["period"], "day");
    }
}
