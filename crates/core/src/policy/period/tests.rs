//! Periods, labels and their slots, one rule per test, across zones and DST changes.

use super::*;

#[test]
fn fields_reads_exact_shapes_only() {
    assert_eq!(fields("2018-10-25", "####-##-##"), Some([2018, 10, 25]));
    assert_eq!(fields::<3>("2018-1-25", "####-##-##"), None);
    assert_eq!(fields::<3>("2018-10-2x", "####-##-##"), None);
    assert_eq!(fields::<2>("2018-10-25", "####-##-##"), None);
    // Four bytes, but not four ASCII digits.
    assert_eq!(fields::<1>("٢٠", "####"), None);
}

fn calendar(kind: PeriodKind, tz: &str) -> Calendar {
    Calendar::new(kind, tz.parse().unwrap())
}

#[test]
fn shortest_spans_without_offset_changes_are_the_shortest_calendar_lengths() {
    let span = |kind, periods| calendar(kind, "UTC").shortest_span(periods);
    let (hours, days) = (TimeDelta::hours, TimeDelta::days);
    assert_eq!(span(PeriodKind::Day, 0), TimeDelta::zero());
    assert_eq!(span(PeriodKind::Day, 1), hours(24));
    assert_eq!(span(PeriodKind::Day, 2), hours(48));
    assert_eq!(span(PeriodKind::Hours(6), 3), hours(18));
    assert_eq!(span(PeriodKind::Week, 2), days(14));
    // February of 28 days, and the shortest months around it.
    assert_eq!(span(PeriodKind::Month, 1), days(28));
    assert_eq!(span(PeriodKind::Month, 2), days(28 + 31));
    assert_eq!(span(PeriodKind::Month, 12), days(365));
    assert_eq!(span(PeriodKind::Month, 13), days(365 + 28));
    assert_eq!(span(PeriodKind::Quarter, 1), days(28 + 31 + 30));
    assert_eq!(span(PeriodKind::Quarter, 4), days(365));
    assert_eq!(span(PeriodKind::Year, 3), days(3 * 365));
    // Far beyond chrono's range: the longest duration rather than an overflow.
    assert_eq!(span(PeriodKind::Year, u32::MAX), TimeDelta::MAX);
    assert!(calendar(PeriodKind::Year, "Europe/Berlin").shortest_span(u32::MAX) > TimeDelta::zero());
}

#[test]
fn offset_changes_shorten_spans_by_what_the_clocks_skip() {
    let span = |kind, tz, periods| calendar(kind, tz).shortest_span(periods);
    let (hours, minutes, days) = (TimeDelta::hours, TimeDelta::minutes, TimeDelta::days);
    // The spring day has 23 hours.
    assert_eq!(span(PeriodKind::Day, "Europe/Berlin", 1), hours(23));
    assert_eq!(span(PeriodKind::Day, "Europe/Berlin", 2), hours(47));
    assert_eq!(span(PeriodKind::Month, "Europe/Berlin", 1), days(28) - hours(1));
    // Every hour period is an hour (the repeated hour is a period of its own), except where
    // Berlin left local mean time in 1893 and skipped 6 min 32 s ...
    assert_eq!(
        span(PeriodKind::Hours(1), "Europe/Berlin", 2),
        hours(2) - TimeDelta::seconds(392)
    );
    assert_eq!(span(PeriodKind::Hours(1), "Europe/Paris", 2), hours(2));
    // ... but a 2-hour period that the spring change cuts, or that ends at the repeat of
    // its own boundary, lasts one.
    assert_eq!(span(PeriodKind::Hours(2), "Europe/Berlin", 1), hours(1));
    // Havana falls back at 01:00 to 00:00: midnight repeats, and the 12-hour period between
    // its two instants lasts one hour.
    assert_eq!(span(PeriodKind::Hours(12), "America/Havana", 1), hours(1));
    // Lord Howe moves its clocks by half an hour.
    assert_eq!(span(PeriodKind::Hours(1), "Australia/Lord_Howe", 1), minutes(30));
    // Samoa skipped 2011-12-30 entirely: its 29th to its 31st was one day.
    assert_eq!(span(PeriodKind::Day, "Pacific/Apia", 2), hours(24));
}

/// The shortest span of `periods` periods among the periods of `years`, by walking them.
fn walked_shortest_span(calendar: Calendar, years: std::ops::Range<i32>, periods: usize) -> TimeDelta {
    let start = |year| {
        NaiveDate::from_ymd_opt(year, 1, 1)
            .unwrap()
            .and_time(NaiveTime::MIN)
            .and_utc()
    };
    let slots: Vec<Slot> = calendar
        .periods_from(calendar.floor(start(years.start)))
        .take_while(|s| s.start < start(years.end))
        .collect();
    slots
        .windows(periods + 1)
        .map(|w| w[periods].start - w[0].start)
        .min()
        .unwrap()
}

#[test]
fn shortest_spans_are_never_longer_than_walked_ones() {
    for tz in [
        "Europe/Berlin",
        "America/Havana",
        "Australia/Lord_Howe",
        "Antarctica/Troll",
        "Pacific/Apia",
    ] {
        for kind in [
            PeriodKind::Hours(1),
            PeriodKind::Hours(2),
            PeriodKind::Hours(3),
            PeriodKind::Hours(12),
            PeriodKind::Day,
        ] {
            let calendar = calendar(kind, tz);
            for periods in [1, 2, 5] {
                let bound = calendar.shortest_span(periods);
                let walked = walked_shortest_span(calendar, 2011..2012, periods as usize);
                assert!(bound <= walked, "{tz} {kind} x{periods}: {bound} > {walked}");
            }
        }
    }
    // Where nothing else interferes, the bound is what the calendar does.
    let berlin = calendar(PeriodKind::Day, "Europe/Berlin");
    assert_eq!(
        berlin.shortest_span(2),
        walked_shortest_span(berlin, 2018..2020, 2)
    );
}

#[test]
fn zones_change_their_offset_only_from_1800_to_2100() {
    let at = |year, month| {
        NaiveDate::from_ymd_opt(year, month, 1)
            .unwrap()
            .and_time(NaiveTime::MIN)
            .and_utc()
    };
    for tz in chrono_tz::TZ_VARIANTS {
        let offset = |t: DateTime<Utc>| t.with_timezone(&tz).offset().fix().local_minus_utc();
        let first = offset(at(OFFSET_CHANGE_YEARS.start, 1));
        let last = offset(at(OFFSET_CHANGE_YEARS.end, 1));
        for year in [1000, 1500, 1799] {
            for month in [1, 7] {
                assert_eq!(offset(at(year, month)), first, "{tz} in {year}-{month}");
            }
        }
        for year in [2101, 2200, 5000, 9999] {
            for month in [1, 4, 7, 10] {
                assert_eq!(offset(at(year, month)), last, "{tz} in {year}-{month}");
            }
        }
    }
}

#[test]
fn daily_samples_find_every_offset_change() {
    for tz in ["Australia/Lord_Howe", "Pacific/Apia"] {
        let tz: Tz = tz.parse().unwrap();
        let daily = offset_changes(tz);
        assert!(!daily.is_empty(), "{tz}");
        assert_eq!(*daily, *offset_changes_sampled(tz, TimeDelta::hours(1)), "{tz}");
    }
}

#[test]
fn fixed_offset_zones_really_are_fixed() {
    let samples = [-2_000_000_000i64, 0, 1_000_000_000, 2_000_000_000, 4_100_000_000];
    for tz in chrono_tz::TZ_VARIANTS
        .into_iter()
        .filter(|tz| has_fixed_offset(*tz))
    {
        let offsets: Vec<i32> = samples
            .iter()
            .filter_map(|s| DateTime::from_timestamp(*s, 0))
            .map(|t| t.with_timezone(&tz).offset().fix().local_minus_utc())
            .collect();
        assert!(offsets.windows(2).all(|w| w[0] == w[1]), "{tz} is not fixed");
    }
}
