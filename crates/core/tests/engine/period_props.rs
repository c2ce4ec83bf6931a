//! Properties of period arithmetic and labels in zones with awkward DST rules, plus the
//! examples from the design notes.

use chrono::{DateTime, Datelike, NaiveDate, Offset, TimeDelta, TimeZone, Utc};
use chrono_tz::Tz;
use ddb_rollover::policy::{Calendar, LabelError, PeriodKind, Slot};
use proptest::prelude::*;

const KINDS: [PeriodKind; 10] = [
    PeriodKind::Hours(1),
    PeriodKind::Hours(2),
    PeriodKind::Hours(3),
    PeriodKind::Hours(6),
    PeriodKind::Hours(12),
    PeriodKind::Day,
    PeriodKind::Week,
    PeriodKind::Month,
    PeriodKind::Quarter,
    PeriodKind::Year,
];

/// UTC, two ordinary DST zones, a half-hour offset, and a half-hour DST shift.
const ZONES: [Tz; 5] = [
    chrono_tz::UTC,
    chrono_tz::Europe::Berlin,
    chrono_tz::America::New_York,
    chrono_tz::Asia::Kolkata,
    chrono_tz::Australia::Lord_Howe,
];

/// 1970-01-01 to 2200-01-01.
const SECONDS_1970_TO_2200: i64 = 7_258_118_400;

fn utc(s: &str) -> DateTime<Utc> {
    s.parse().expect("test timestamp")
}

fn local(tz: Tz, y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
    let t = tz.with_ymd_and_hms(y, m, d, h, min, 0).earliest();
    t.expect("test wall time exists").to_utc()
}

fn offset(tz: Tz, t: DateTime<Utc>) -> i32 {
    t.with_timezone(&tz).offset().fix().local_minus_utc()
}

/// The first offset change of `tz` within about a year after `t`, to the second.
fn next_offset_change(tz: Tz, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let day = TimeDelta::days(1);
    let mut lo = t;
    let start = offset(tz, t);
    let mut hi = (1..=400).map(|d| t + day * d).find(|u| offset(tz, *u) != start)?;
    while hi - lo > TimeDelta::seconds(1) {
        let mid = lo + (hi - lo) / 2;
        if offset(tz, mid) == start {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}

fn local_new_year(tz: Tz, t: DateTime<Utc>) -> DateTime<Utc> {
    let year = t.with_timezone(&tz).year();
    local(tz, year, 1, 1, 0, 0)
}

fn calendar() -> impl Strategy<Value = Calendar> {
    (
        prop::sample::select(KINDS.to_vec()),
        prop::sample::select(ZONES.to_vec()),
    )
        .prop_map(|(kind, tz)| Calendar::new(kind, tz))
}

/// A calendar and an instant in 1970..2200, two times in three within hours of a DST change or
/// a local new year, where period arithmetic is most likely to go wrong.
fn calendar_and_instant() -> impl Strategy<Value = (Calendar, DateTime<Utc>)> {
    (
        calendar(),
        0..SECONDS_1970_TO_2200,
        0u8..3,
        -4 * 3600i64..4 * 3600,
        prop_oneof![Just(0u32), 0u32..1_000_000_000],
    )
        .prop_map(|(cal, secs, anchor, jitter, nanos)| {
            let t = DateTime::from_timestamp(secs, 0).expect("in range");
            let t = match anchor {
                0 => t,
                1 => next_offset_change(cal.tz(), t).unwrap_or(t),
                _ => local_new_year(cal.tz(), t),
            };
            let t = t + TimeDelta::seconds(jitter) + TimeDelta::nanoseconds(i64::from(nanos));
            (cal, t)
        })
}

fn is_table_safe(label: &str) -> bool {
    label
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

fn slots(cal: &Calendar, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Slot> {
    let mut slot = cal.floor(from);
    let mut out = Vec::new();
    while slot.start() < to {
        out.push(slot);
        slot = cal.next(slot);
    }
    out
}

fn labels(cal: &Calendar, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<String> {
    slots(cal, from, to).into_iter().map(|s| cal.label(s)).collect()
}

/// The hourly tables' labels of the day `y`-`m`-`d` in `tz`, from its midnight to the next.
fn hourly_labels_of_day(tz: Tz, y: i32, m: u32, d: u32) -> Vec<String> {
    let cal = Calendar::new(PeriodKind::Hours(1), tz);
    labels(&cal, local(tz, y, m, d, 0, 0), local(tz, y, m, d + 1, 0, 0))
}

proptest! {
    // The recorded cases (common::RECORDED_SEED); fresh ones: scripts/long-run.sh.
    #![proptest_config(crate::common::recorded(256))]

    #[test]
    fn floor_contains_the_instant((cal, t) in calendar_and_instant()) {
        let slot = cal.floor(t);
        let next = cal.next(slot);
        prop_assert!(slot.start() <= t, "{slot:?} starts after {t}");
        prop_assert!(t < next.start(), "{next:?} starts at or before {t}");
        prop_assert_eq!(cal.end(slot), next.start());
    }

    #[test]
    fn next_and_previous_are_inverse((cal, t) in calendar_and_instant()) {
        let slot = cal.floor(t);
        let next = cal.next(slot);
        let previous = cal.previous(slot);
        prop_assert!(previous < slot && slot < next);
        prop_assert_eq!(cal.floor(next.start()), next);
        prop_assert_eq!(cal.floor(slot.start()), slot);
        prop_assert_eq!(cal.previous(next), slot);
        prop_assert_eq!(cal.next(previous), slot);
    }

    #[test]
    fn labels_round_trip_and_are_table_safe((cal, t) in calendar_and_instant()) {
        let slot = cal.floor(t);
        for s in [cal.previous(slot), slot, cal.next(slot)] {
            let label = cal.label(s);
            prop_assert!(is_table_safe(&label), "{label:?}");
            prop_assert_eq!(cal.parse(&label), Ok(s), "label {}", label);
        }
    }

    #[test]
    fn labels_sort_in_time_order(
        (cal, t) in calendar_and_instant(),
        delta in -3 * 366 * 86_400i64..3 * 366 * 86_400,
    ) {
        let (a, b) = (cal.floor(t), cal.floor(t + TimeDelta::seconds(delta)));
        prop_assert_eq!(cal.label(a).cmp(&cal.label(b)), a.cmp(&b));
        let (previous, next) = (cal.previous(a), cal.next(a));
        prop_assert!(cal.label(previous) < cal.label(a));
        prop_assert!(cal.label(a) < cal.label(next));
    }

    #[test]
    fn periods_between_counts_next_steps((cal, t) in calendar_and_instant(), k in 0i64..40) {
        let from = cal.floor(t);
        let mut to = from;
        for _ in 0..k {
            to = cal.next(to);
        }
        prop_assert_eq!(cal.periods_between(from, to), k);
        prop_assert_eq!(cal.periods_between(to, from), -k);
    }

    /// Mutated labels and arbitrary text: no panic, and only canonical labels parse.
    #[test]
    fn parse_accepts_only_canonical_labels(
        (cal, t) in calendar_and_instant(),
        at in any::<prop::sample::Index>(),
        edit in 0u8..4,
        c in prop_oneof![Just('0'), Just('1'), Just('2'), Just('.'), Just('-'), any::<char>()],
        noise in "\\PC{0,16}",
    ) {
        let mut label: Vec<char> = cal.label(cal.floor(t)).chars().collect();
        let i = at.index(label.len());
        match edit {
            0 => label[i] = c,
            1 => label.insert(i, c),
            2 => { label.remove(i); }
            _ => label.extend(['.', '2']),
        }
        let mutated: String = label.into_iter().collect();
        for text in [mutated, noise] {
            if let Ok(slot) = cal.parse(&text) {
                prop_assert_eq!(cal.label(slot), text);
            }
        }
    }
}

#[test]
fn berlin_fall_back_day_has_25_hourly_tables() {
    let tz = chrono_tz::Europe::Berlin;
    let day = hourly_labels_of_day(tz, 2018, 10, 28);
    assert_eq!(day.len(), 25);
    assert!(day.windows(2).all(|w| w[0] < w[1]), "{day:?}");
    assert_eq!(day[2..5], ["2018-10-28T02", "2018-10-28T02.2", "2018-10-28T03"]);
    assert_eq!(
        Calendar::new(PeriodKind::Hours(1), tz)
            .parse("2018-10-28T02.2")
            .map(|s| s.start()),
        Ok(utc("2018-10-28T01:00:00Z"))
    );
}

#[test]
fn new_york_dst_days_have_23_and_25_hourly_tables() {
    let tz = chrono_tz::America::New_York;
    let spring = hourly_labels_of_day(tz, 2018, 3, 11);
    assert_eq!(spring.len(), 23);
    assert!(!spring.iter().any(|l| l.ends_with("T02")), "{spring:?}");
    let fall = hourly_labels_of_day(tz, 2018, 11, 4);
    assert_eq!(fall.len(), 25);
    assert!(fall.contains(&"2018-11-04T01.2".to_string()), "{fall:?}");
}

#[test]
fn spring_forward_boundary_moves_to_the_end_of_the_gap() {
    let tz = chrono_tz::Europe::Berlin;
    let two_hourly = Calendar::new(PeriodKind::Hours(2), tz);
    let slot = two_hourly.floor(utc("2018-03-25T01:30:00Z"));
    assert_eq!(slot.start(), utc("2018-03-25T01:00:00Z"));
    assert_eq!(two_hourly.label(slot), "2018-03-25T02");
    assert_eq!(two_hourly.end(slot), utc("2018-03-25T02:00:00Z"));

    let hourly = Calendar::new(PeriodKind::Hours(1), tz);
    assert_eq!(hourly.label(slot), "2018-03-25T03");
    assert!(matches!(
        hourly.parse("2018-03-25T02"),
        Err(LabelError::NoSuchPeriod { .. })
    ));
}

#[test]
fn lord_howe_half_hour_shifts() {
    let tz = chrono_tz::Australia::Lord_Howe;
    let cal = Calendar::new(PeriodKind::Hours(1), tz);
    // 2018-10-07 02:00 +10:30 jumps to 02:30 +11.
    let gap = cal.parse("2018-10-07T02").expect("gap-mapped hour");
    assert_eq!(gap.start(), utc("2018-10-06T15:30:00Z"));
    assert_eq!(cal.end(gap), utc("2018-10-06T16:00:00Z"));
    // 2018-04-01 02:00 +11 falls back to 01:30 +10:30: hour 01 lasts 90 minutes.
    let long = cal.parse("2018-04-01T01").expect("hour before the fall-back");
    assert_eq!(cal.end(long) - long.start(), TimeDelta::minutes(90));
}

#[test]
fn example_labels() {
    let at = utc("2018-10-25T23:45:00Z");
    let day = Calendar::new(PeriodKind::Day, chrono_tz::UTC);
    assert_eq!(day.label(day.floor(at)), "2018-10-25");
    assert_eq!(day.label(day.next(day.floor(at))), "2018-10-26");

    let week = Calendar::new(PeriodKind::Week, chrono_tz::UTC);
    assert_eq!(week.label(week.floor(utc("2018-12-31T12:00:00Z"))), "2019-W01");
    assert_eq!(week.label(week.floor(at)), "2018-W43");

    let in_kolkata = |kind| {
        let cal = Calendar::new(kind, chrono_tz::Asia::Kolkata);
        cal.label(cal.floor(at))
    };
    assert_eq!(in_kolkata(PeriodKind::Hours(1)), "2018-10-26T05");
    assert_eq!(in_kolkata(PeriodKind::Hours(6)), "2018-10-26T00");
    assert_eq!(in_kolkata(PeriodKind::Month), "2018-10");
    assert_eq!(in_kolkata(PeriodKind::Quarter), "2018-Q4");
    assert_eq!(in_kolkata(PeriodKind::Year), "2018");
}

#[test]
fn parse_is_strict() {
    let malformed =
        |cal: &Calendar, label: &str| matches!(cal.parse(label), Err(LabelError::Malformed { .. }));
    let no_such =
        |cal: &Calendar, label: &str| matches!(cal.parse(label), Err(LabelError::NoSuchPeriod { .. }));
    let day = Calendar::new(PeriodKind::Day, chrono_tz::UTC);
    for label in [
        "2018-1-5",
        "2018-10-25 ",
        "2018-10-25T13",
        "2018-10",
        "0999-10-25",
        "2018-02-30",
        "+2018-10-25",
        "",
    ] {
        assert!(malformed(&day, label), "{label:?}");
    }
    assert!(malformed(
        &Calendar::new(PeriodKind::Quarter, chrono_tz::UTC),
        "2018-Q5"
    ));
    assert!(malformed(
        &Calendar::new(PeriodKind::Week, chrono_tz::UTC),
        "2018-W53"
    ));
    assert!(malformed(
        &Calendar::new(PeriodKind::Hours(1), chrono_tz::UTC),
        "2018-10-25T24"
    ));

    let two_hourly = Calendar::new(PeriodKind::Hours(2), chrono_tz::Europe::Berlin);
    assert!(no_such(&two_hourly, "2018-10-25T13"));
    assert!(no_such(&two_hourly, "2018-10-25T12.2"));
    assert!(two_hourly.parse("2018-10-28T02.2").is_ok());
    // Pacific/Apia skipped 2011-12-30 entirely.
    let apia = Calendar::new(PeriodKind::Day, chrono_tz::Pacific::Apia);
    assert!(no_such(&apia, "2011-12-30"));
    assert_eq!(
        day.parse("2018-1-5").map_err(|e| e.to_string()),
        Err(
            "period label \"2018-1-5\" is malformed: expected YYYY-MM-DD with a year from 1000 to 9999"
                .to_string()
        )
    );
}

#[test]
fn periods_between_examples() {
    let tz = chrono_tz::Europe::Berlin;
    let between = |kind, from: DateTime<Utc>, to: DateTime<Utc>| {
        let cal = Calendar::new(kind, tz);
        cal.periods_between(cal.floor(from), cal.floor(to))
    };
    let (oct28, oct29) = (local(tz, 2018, 10, 28, 0, 0), local(tz, 2018, 10, 29, 0, 0));
    assert_eq!(between(PeriodKind::Hours(1), oct28, oct29), 25);
    assert_eq!(between(PeriodKind::Hours(1), oct29, oct28), -25);
    assert_eq!(between(PeriodKind::Hours(12), oct28, oct29), 2);
    let (jan, next_jan) = (local(tz, 2018, 1, 1, 0, 0), local(tz, 2019, 1, 1, 0, 0));
    assert_eq!(between(PeriodKind::Day, jan, next_jan), 365);
    assert_eq!(between(PeriodKind::Week, jan, next_jan), 52);
    assert_eq!(between(PeriodKind::Month, oct28, next_jan), 3);
    assert_eq!(between(PeriodKind::Quarter, jan, oct28), 3);
    assert_eq!(between(PeriodKind::Year, next_jan, jan), -1);

    let utc_hourly = Calendar::new(PeriodKind::Hours(1), chrono_tz::UTC);
    let (y2000, y2001) = (utc("2000-01-01T00:00:00Z"), utc("2001-01-01T00:00:00Z"));
    assert_eq!(
        utc_hourly.periods_between(utc_hourly.floor(y2000), utc_hourly.floor(y2001)),
        366 * 24
    );
}

#[test]
fn period_kind_names() {
    for kind in PeriodKind::ALL {
        assert_eq!(kind.to_string().parse(), Ok(kind));
        let json = serde_json::to_string(&kind).expect("serializes");
        assert_eq!(serde_json::from_str::<PeriodKind>(&json).ok(), Some(kind));
    }
    assert_eq!("1h".parse(), Ok(PeriodKind::Hours(1)));
    assert_eq!(PeriodKind::Hours(1).to_string(), "hour");
    assert_eq!(
        serde_json::to_string(&PeriodKind::Hours(6)).ok(),
        Some("\"6h\"".into())
    );
    assert_eq!(
        "5h".parse::<PeriodKind>(),
        Err("unknown period \"5h\": use one of hour, 2h, 3h, 4h, 6h, 8h, 12h, day, week, month, quarter, year".to_string())
    );
    assert!(serde_json::from_str::<PeriodKind>("\"Day\"").is_err());
}

#[test]
#[should_panic(expected = "hours must divide a day")]
fn calendar_rejects_hours_that_do_not_divide_a_day() {
    Calendar::new(PeriodKind::Hours(5), chrono_tz::UTC);
}

#[test]
fn kinds_cover_local_dates_not_utc_dates() {
    // 2018-12-31T23:30Z is already 2019 in Berlin.
    let tz = chrono_tz::Europe::Berlin;
    let year = Calendar::new(PeriodKind::Year, tz);
    let slot = year.floor(utc("2018-12-31T23:30:00Z"));
    assert_eq!(year.label(slot), "2019");
    assert_eq!(slot.start(), utc("2018-12-31T23:00:00Z"));
    let new_year = NaiveDate::from_ymd_opt(2019, 1, 1).expect("date");
    assert_eq!(slot.start().with_timezone(&tz).date_naive(), new_year);
}
