//! Periods: which table an instant belongs to, and what that table is called.
//!
//! A [`Calendar`] pairs a [`PeriodKind`] with an IANA time zone. Periods start at *nominal*
//! boundaries, which are wall-clock times in that zone (local midnight, `hh:00` with
//! `hh % n == 0`, ...). A nominal boundary becomes an instant like this:
//!
//! - if the wall time falls in a DST gap, the period starts at the first instant after the gap;
//! - if it happens twice, day-and-longer periods start at the earlier instant, while hour periods
//!   start at *both*, so the repeated hour gets a table of its own (`2018-10-28T02.2`).
//!
//! A [`Slot`] is identified by its start instant and its label is derived from the start's wall
//! time, so labels are unique, `parse(label(s)) == Ok(s)`, and labels sort in time order. (The one
//! exception: a fall-back longer than one period, like Antarctica/Troll's two hours, repeats
//! several hourly labels; those repeats are unique but sort out of time order.)
//!
//! Instants are supported in the years 1000 to 9999, where labels have four-digit years.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};

use chrono::{
    DateTime, Datelike, Days, LocalResult, Months, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeDelta,
    TimeZone, Timelike, Utc, Weekday,
};
use chrono_tz::{GapInfo, Tz};
use serde::{Deserialize, Serialize};

/// How long one table's period is.
///
/// Serialized as its name (`"hour"`, `"6h"`, `"day"`, ...) so policy files stay readable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PeriodKind {
    /// `n` hours, where `n` divides a day: 1, 2, 3, 4, 6, 8 or 12.
    Hours(u8),
    /// One calendar day.
    Day,
    /// ISO week, Monday to Sunday.
    Week,
    /// One calendar month.
    Month,
    /// Three calendar months, from January, April, July or October.
    Quarter,
    /// One calendar year.
    Year,
}

impl PeriodKind {
    /// Every valid kind, shortest first.
    pub const ALL: [PeriodKind; 12] = [
        PeriodKind::Hours(1),
        PeriodKind::Hours(2),
        PeriodKind::Hours(3),
        PeriodKind::Hours(4),
        PeriodKind::Hours(6),
        PeriodKind::Hours(8),
        PeriodKind::Hours(12),
        PeriodKind::Day,
        PeriodKind::Week,
        PeriodKind::Month,
        PeriodKind::Quarter,
        PeriodKind::Year,
    ];
}

impl fmt::Display for PeriodKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeriodKind::Hours(1) => f.write_str("hour"),
            PeriodKind::Hours(n) => write!(f, "{n}h"),
            PeriodKind::Day => f.write_str("day"),
            PeriodKind::Week => f.write_str("week"),
            PeriodKind::Month => f.write_str("month"),
            PeriodKind::Quarter => f.write_str("quarter"),
            PeriodKind::Year => f.write_str("year"),
        }
    }
}

impl FromStr for PeriodKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "1h" {
            return Ok(PeriodKind::Hours(1));
        }
        PeriodKind::ALL
            .into_iter()
            .find(|kind| kind.to_string() == s)
            .ok_or_else(|| {
                let allowed: Vec<String> = PeriodKind::ALL.iter().map(ToString::to_string).collect();
                format!("unknown period {s:?}: use one of {}", allowed.join(", "))
            })
    }
}

impl TryFrom<String> for PeriodKind {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<PeriodKind> for String {
    fn from(kind: PeriodKind) -> String {
        kind.to_string()
    }
}

/// One period instance. Ordering is time order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    start: DateTime<Utc>,
}

impl Slot {
    /// The first instant of the period.
    pub fn start(&self) -> DateTime<Utc> {
        self.start
    }
}

/// Why a table-name label is not a period of a calendar.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum LabelError {
    /// The label does not have the shape the period kind's labels have.
    #[error("period label {label:?} is malformed: expected {expected} with a year from 1000 to 9999")]
    Malformed {
        /// The label as found.
        label: String,
        /// The shape the period kind's labels have.
        expected: &'static str,
    },
    /// Well formed, but no period has this label: the hour is not a boundary or falls in a DST
    /// gap, `.2` marks an hour that does not repeat, or the date was skipped by the zone.
    #[error("no period is labelled {label:?} in this calendar")]
    NoSuchPeriod {
        /// The label as found.
        label: String,
    },
}

/// A period kind in an IANA time zone: all period arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Calendar {
    kind: PeriodKind,
    tz: Tz,
}

impl Calendar {
    /// # Panics
    ///
    /// If `kind` is `Hours(n)` with `n` not in 1, 2, 3, 4, 6, 8, 12. Parsing a [`PeriodKind`]
    /// never produces such a kind.
    pub fn new(kind: PeriodKind, tz: Tz) -> Self {
        assert!(
            PeriodKind::ALL.contains(&kind),
            "invalid period {kind:?}: hours must divide a day (1, 2, 3, 4, 6, 8 or 12)"
        );
        Calendar { kind, tz }
    }

    /// The period kind.
    pub fn kind(&self) -> PeriodKind {
        self.kind
    }

    /// The time zone periods start and end in.
    pub fn tz(&self) -> Tz {
        self.tz
    }

    /// The period containing `t`, if it has a label this calendar can read back: instants
    /// outside [`LABEL_YEARS`] have none, so no table name may be made or aged from them.
    pub(crate) fn labelled_floor(&self, t: DateTime<Utc>) -> Option<Slot> {
        self.try_floor(t).filter(|&s| self.is_labelled(s))
    }

    /// Whether `label(s)` reads back as `s` (false outside [`LABEL_YEARS`]).
    pub(crate) fn is_labelled(&self, s: Slot) -> bool {
        (LABEL_YEARS.start() - 1..=LABEL_YEARS.end() + 1).contains(&s.start.year())
            && self.parse(&self.label(s)) == Ok(s)
    }

    /// The period containing `t`.
    pub fn floor(&self, t: DateTime<Utc>) -> Slot {
        self.try_floor(t).expect(OUT_OF_RANGE)
    }

    /// The period right after `s`.
    pub fn next(&self, s: Slot) -> Slot {
        self.try_next(s).expect(OUT_OF_RANGE)
    }

    /// The period right before `s`.
    pub fn previous(&self, s: Slot) -> Slot {
        // Boundaries are whole seconds, so the period containing the instant just before `s`
        // is the one ending at `s`.
        let before = s.start.checked_sub_signed(TimeDelta::nanoseconds(1));
        before.and_then(|t| self.try_floor(t)).expect(OUT_OF_RANGE)
    }

    /// `from`, then every period after it, in time order: the one way to step through
    /// periods (pre-built tables, ages, due dates, time ranges). Ends where chrono's range ends.
    pub fn periods_from(&self, from: Slot) -> Periods {
        Periods {
            calendar: *self,
            next: Some(from),
        }
    }

    /// The start of the period `n` periods after `s`: when a table of `s` turns `n` old.
    pub fn start_after(&self, s: Slot, n: u32) -> DateTime<Utc> {
        self.periods_from(s).nth(n as usize).expect(OUT_OF_RANGE).start
    }

    /// The first instant after `s`.
    pub fn end(&self, s: Slot) -> DateTime<Utc> {
        self.next(s).start
    }

    /// The table-name suffix of `s`: it sorts in time order and uses only `[a-zA-Z0-9_.-]`.
    pub fn label(&self, s: Slot) -> String {
        let wall = self.wall(s.start);
        let nominal = self.nominal_floor(wall);
        let (year, month, day) = (nominal.year(), nominal.month(), nominal.day());
        match self.kind {
            PeriodKind::Hours(_) => {
                let repeat = match self.tz.from_local_datetime(&wall) {
                    LocalResult::Ambiguous(a, b) if a.max(b).to_utc() == s.start => ".2",
                    _ => "",
                };
                let hour = nominal.hour();
                format!("{year:04}-{month:02}-{day:02}T{hour:02}{repeat}")
            }
            PeriodKind::Day => format!("{year:04}-{month:02}-{day:02}"),
            PeriodKind::Week => {
                let week = nominal.iso_week();
                format!("{:04}-W{:02}", week.year(), week.week())
            }
            PeriodKind::Month => format!("{year:04}-{month:02}"),
            PeriodKind::Quarter => format!("{year:04}-Q{}", (month - 1) / 3 + 1),
            PeriodKind::Year => format!("{year:04}"),
        }
    }

    /// The period whose [`label`](Self::label) is exactly `label`.
    pub fn parse(&self, label: &str) -> Result<Slot, LabelError> {
        let (nominal, repeat) = self.parse_nominal(label).ok_or(LabelError::Malformed {
            label: label.to_string(),
            expected: self.label_format(),
        })?;
        let no_such = || LabelError::NoSuchPeriod {
            label: label.to_string(),
        };
        let [first, second] = self.instants(nominal);
        let start = if repeat { second } else { first }.ok_or_else(no_such)?;
        let slot = Slot { start };
        // Anything but the canonical label (an hour that is not a boundary, one inside a DST
        // gap, a date the zone skipped) names some other period or none.
        if self.label(slot) == label {
            Ok(slot)
        } else {
            Err(no_such())
        }
    }

    /// Number of periods from `from` to `to` ([`next`](Self::next) steps); negative when `to`
    /// is earlier.
    ///
    /// Day and longer periods are counted on the local calendar, so a date that a zone skipped
    /// entirely (Pacific/Apia, 2011-12-30) still counts as a day.
    pub fn periods_between(&self, from: Slot, to: Slot) -> i64 {
        let a = self.nominal_floor(self.wall(from.start));
        let b = self.nominal_floor(self.wall(to.start));
        let days = (b.date() - a.date()).num_days();
        let months = i64::from(b.year() - a.year()) * 12 + i64::from(b.month()) - i64::from(a.month());
        match self.kind {
            PeriodKind::Hours(n) => self.hours_between(n, from, to),
            PeriodKind::Day => days,
            PeriodKind::Week => days / 7,
            PeriodKind::Month => months,
            PeriodKind::Quarter => months / 3,
            PeriodKind::Year => months / 12,
        }
    }

    /// Hour periods vary in length across DST changes, so count them by walking, except in
    /// zones that never change offset.
    fn hours_between(&self, n: u8, from: Slot, to: Slot) -> i64 {
        if to < from {
            return -self.hours_between(n, to, from);
        }
        if has_fixed_offset(self.tz) {
            return (to.start - from.start).num_seconds() / (i64::from(n) * 3600);
        }
        self.periods_from(from).take_while(|slot| *slot < to).count() as i64
    }

    /// A lower bound on how long `periods` consecutive periods last in this calendar: the
    /// shortest span of that many periods anywhere in its zone, where DST and other offset
    /// changes shorten some of them (a 23-hour day, two 6-hour periods of 11 hours). Exact in
    /// zones with a fixed offset; elsewhere conservative (every offset change that could fall
    /// into the span is assumed to shorten it).
    ///
    /// Day and longer periods are counted on the local calendar, as ages are (see
    /// [`periods_between`](Self::periods_between)): their shortest local length (February of
    /// 28 days, years of 365), less the offset increases within that span. Hour periods are
    /// counted as the periods they are, each shortened by what the offset changes near it took.
    pub(crate) fn shortest_span(&self, periods: u32) -> TimeDelta {
        if periods == 0 {
            return TimeDelta::zero();
        }
        let (shortest, longest) = self.nominal_spans(periods);
        // Every change whose effect could reach into a span of `periods` periods.
        let window = longest.checked_add(&TimeDelta::days(2)).unwrap_or(TimeDelta::MAX);
        let costs: Vec<(DateTime<Utc>, TimeDelta)> = offset_changes(self.tz)
            .iter()
            .map(|&change| (change.at, self.shortening(change)))
            .filter(|(_, cost)| *cost > TimeDelta::zero())
            .collect();
        let (mut lost, mut in_window, mut first) = (TimeDelta::zero(), TimeDelta::zero(), 0);
        for &(at, cost) in &costs {
            in_window += cost;
            while at
                .checked_sub_signed(window)
                .is_some_and(|start| costs[first].0 < start)
            {
                in_window -= costs[first].1;
                first += 1;
            }
            lost = lost.max(in_window);
        }
        (shortest - lost).max(TimeDelta::zero())
    }

    /// The shortest and longest wall-clock length of `periods` periods, offset changes aside.
    fn nominal_spans(&self, periods: u32) -> (TimeDelta, TimeDelta) {
        let periods = i64::from(periods);
        let days = |days: i64| saturating_seconds(days.saturating_mul(86_400));
        let months = |months: i64, february: i64| {
            let lengths = [31, february, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
            let (years, rest) = (months / 12, (months % 12) as usize);
            let sums = (0..12).map(|first| (0..rest).map(|i| lengths[(first + i) % 12]).sum::<i64>());
            let year: i64 = lengths.iter().sum();
            (
                years * year + sums.clone().min().unwrap_or(0),
                years * year + sums.max().unwrap_or(0),
            )
        };
        match self.kind {
            PeriodKind::Hours(n) => {
                let span = saturating_seconds(periods.saturating_mul(i64::from(n) * 3600));
                (span, span)
            }
            PeriodKind::Day => (days(periods), days(periods)),
            PeriodKind::Week => (days(periods * 7), days(periods * 7)),
            PeriodKind::Month | PeriodKind::Quarter => {
                let count = if self.kind == PeriodKind::Month {
                    periods
                } else {
                    periods * 3
                };
                (days(months(count, 28).0), days(months(count, 29).1))
            }
            PeriodKind::Year => (days(periods * 365), days(periods * 366)),
        }
    }

    /// How much `change` can shorten a span of periods. For day and longer periods, which
    /// start at their local midnight, an offset increase (clocks forward) shortens the span by
    /// the increase, a decrease only lengthens it. Hour periods (a repeated hour or boundary
    /// gets its own) are measured around the change: the most that consecutive periods near
    /// it fall short of `n` hours each.
    fn shortening(&self, change: OffsetChange) -> TimeDelta {
        let shift = TimeDelta::seconds(i64::from(change.after - change.before));
        let PeriodKind::Hours(n) = self.kind else {
            return shift.max(TimeDelta::zero());
        };
        let length = TimeDelta::hours(i64::from(n));
        let reach = length + shift.abs() + TimeDelta::hours(1);
        // Conservative where the periods cannot be walked (at the ends of chrono's range).
        let conservative = length.max(shift.abs());
        let (Some(from), Some(until)) = (
            change
                .at
                .checked_sub_signed(reach)
                .and_then(|t| self.try_floor(t)),
            change.at.checked_add_signed(reach),
        ) else {
            return conservative;
        };
        let (mut most, mut run) = (TimeDelta::zero(), TimeDelta::zero());
        for slot in self.periods_from(from).take_while(|slot| slot.start <= until) {
            let Some(next) = self.try_next(slot) else {
                return conservative;
            };
            // Kadane: the largest total shortfall of consecutive periods.
            run = (run + length - (next.start - slot.start)).max(TimeDelta::zero());
            most = most.max(run);
        }
        most
    }

    fn try_floor(&self, t: DateTime<Utc>) -> Option<Slot> {
        // The clock reaches (or jumps over) the nominal boundary before it shows `t`'s wall
        // time, so that boundary has an instant at or before `t`.
        let mut nominal = self.nominal_floor(self.wall(t));
        let mut slot = loop {
            let mut instants = self.instants(nominal).into_iter().flatten();
            if let Some(start) = instants.rfind(|c| *c <= t) {
                break Slot { start };
            }
            nominal = self.nominal_floor(nominal.checked_sub_signed(TimeDelta::seconds(1))?);
        };
        // After a fall-back, later boundaries may also be at or before `t`.
        loop {
            let next = self.try_next(slot)?;
            if next.start > t {
                return Some(slot);
            }
            slot = next;
        }
    }

    fn try_next(&self, s: Slot) -> Option<Slot> {
        let wall = self.wall(s.start);
        let base = self.nominal_floor(wall);
        let after = |c: &DateTime<Utc>| *c > s.start;

        // The clock runs forward from `s` to the next nominal boundary (or jumps over it).
        // First instants grow with the nominal boundary, so the first one found is the earliest.
        let mut nominal = base;
        let mut next = loop {
            if let Some(first) = self.instants(nominal)[0].filter(after) {
                break first;
            }
            nominal = self.nominal_succ(nominal)?;
        };

        // When `wall` is repeated by a fall-back, the second instants of hour boundaries near it
        // may come first; they lie within one fold (the offset change) of `wall`.
        if let (PeriodKind::Hours(_), LocalResult::Ambiguous(a, b)) =
            (self.kind, self.tz.from_local_datetime(&wall))
        {
            let fold = a.offset().fix().local_minus_utc() - b.offset().fix().local_minus_utc();
            let fold = TimeDelta::seconds(i64::from(fold.abs()));
            let mut nominal = self.nominal_floor(wall.checked_sub_signed(fold)?);
            let last = self.nominal_floor(wall.checked_add_signed(fold)?);
            while nominal <= last {
                if let Some(second) = self.instants(nominal)[1].filter(after) {
                    next = next.min(second);
                }
                nominal = self.nominal_succ(nominal)?;
            }
        }
        Some(Slot { start: next })
    }

    fn wall(&self, t: DateTime<Utc>) -> NaiveDateTime {
        t.with_timezone(&self.tz).naive_local()
    }

    /// The last nominal boundary at or before wall time `wall`.
    fn nominal_floor(&self, wall: NaiveDateTime) -> NaiveDateTime {
        let date = wall.date();
        let start = match self.kind {
            PeriodKind::Hours(n) => {
                let hour = wall.hour() - wall.hour() % u32::from(n);
                return date.and_time(NaiveTime::MIN) + TimeDelta::hours(i64::from(hour));
            }
            PeriodKind::Day => date,
            PeriodKind::Week => {
                let since_monday = Days::new(u64::from(date.weekday().num_days_from_monday()));
                date.checked_sub_days(since_monday).unwrap_or(NaiveDate::MIN)
            }
            PeriodKind::Month => date.with_day(1).unwrap_or(date),
            PeriodKind::Quarter => {
                let month = date.month0() / 3 * 3 + 1;
                NaiveDate::from_ymd_opt(date.year(), month, 1).unwrap_or(date)
            }
            PeriodKind::Year => NaiveDate::from_ymd_opt(date.year(), 1, 1).unwrap_or(date),
        };
        start.and_time(NaiveTime::MIN)
    }

    /// The nominal boundary after `nominal`, which must be one.
    fn nominal_succ(&self, nominal: NaiveDateTime) -> Option<NaiveDateTime> {
        match self.kind {
            PeriodKind::Hours(n) => nominal.checked_add_signed(TimeDelta::hours(i64::from(n))),
            PeriodKind::Day => nominal.checked_add_days(Days::new(1)),
            PeriodKind::Week => nominal.checked_add_days(Days::new(7)),
            PeriodKind::Month => nominal.checked_add_months(Months::new(1)),
            PeriodKind::Quarter => nominal.checked_add_months(Months::new(3)),
            PeriodKind::Year => nominal.checked_add_months(Months::new(12)),
        }
    }

    /// The period starts for nominal boundary `nominal`, earliest first: the instants the clock
    /// shows it (only the earliest for day and longer periods), or the first instant after the
    /// gap that swallows it.
    fn instants(&self, nominal: NaiveDateTime) -> [Option<DateTime<Utc>>; 2] {
        let [first, second] = match self.tz.from_local_datetime(&nominal) {
            LocalResult::Single(a) => [Some(a), None],
            LocalResult::Ambiguous(a, b) => [Some(a.min(b)), Some(a.max(b))],
            LocalResult::None => [GapInfo::new(&nominal, &self.tz).and_then(|gap| gap.end), None],
        }
        .map(|t| t.map(|t| t.to_utc()));
        match self.kind {
            PeriodKind::Hours(_) => [first, second],
            _ => [first, None],
        }
    }

    /// Reads a label's nominal boundary and whether it names the repeat of an hour; `None`
    /// unless the label has exactly the shape [`label`](Self::label) produces.
    fn parse_nominal(&self, label: &str) -> Option<(NaiveDateTime, bool)> {
        let year = |y: u32| i32::try_from(y).ok().filter(|y| LABEL_YEARS.contains(y));
        let midnight = |d: NaiveDate| d.and_time(NaiveTime::MIN);
        let nominal = match self.kind {
            PeriodKind::Hours(_) => {
                let (body, repeat) = match label.strip_suffix(".2") {
                    Some(body) => (body, true),
                    None => (label, false),
                };
                let [y, m, d, h] = fields(body, "####-##-##T##")?;
                let time = NaiveTime::from_hms_opt(h, 0, 0)?;
                let date = NaiveDate::from_ymd_opt(year(y)?, m, d)?;
                return Some((date.and_time(time), repeat));
            }
            PeriodKind::Day => {
                let [y, m, d] = fields(label, "####-##-##")?;
                NaiveDate::from_ymd_opt(year(y)?, m, d)?
            }
            PeriodKind::Week => {
                let [y, w] = fields(label, "####-W##")?;
                NaiveDate::from_isoywd_opt(year(y)?, w, Weekday::Mon)?
            }
            PeriodKind::Month => {
                let [y, m] = fields(label, "####-##")?;
                NaiveDate::from_ymd_opt(year(y)?, m, 1)?
            }
            PeriodKind::Quarter => {
                let [y, q] = fields(label, "####-Q#")?;
                let month = q.checked_sub(1)? * 3 + 1;
                NaiveDate::from_ymd_opt(year(y)?, month, 1)?
            }
            PeriodKind::Year => {
                let [y] = fields(label, "####")?;
                NaiveDate::from_ymd_opt(year(y)?, 1, 1)?
            }
        };
        Some((midnight(nominal), false))
    }

    fn label_format(&self) -> &'static str {
        match self.kind {
            PeriodKind::Hours(_) => "YYYY-MM-DDTHH (or YYYY-MM-DDTHH.2 for a repeated hour)",
            PeriodKind::Day => "YYYY-MM-DD",
            PeriodKind::Week => "YYYY-Www (ISO week)",
            PeriodKind::Month => "YYYY-MM",
            PeriodKind::Quarter => "YYYY-Qn",
            PeriodKind::Year => "YYYY",
        }
    }
}

/// Consecutive periods of one calendar ([`Calendar::periods_from`]).
#[derive(Clone, Debug)]
pub struct Periods {
    calendar: Calendar,
    next: Option<Slot>,
}

impl Iterator for Periods {
    type Item = Slot;

    fn next(&mut self) -> Option<Slot> {
        let slot = self.next?;
        self.next = self.calendar.try_next(slot);
        Some(slot)
    }
}

/// The years whose periods have labels: four digits, so labels sort in time order.
pub(crate) const LABEL_YEARS: std::ops::RangeInclusive<i32> = 1000..=9999;

const OUT_OF_RANGE: &str = "instant outside the range chrono can represent";

/// `seconds` as a duration, or the longest one chrono has.
fn saturating_seconds(seconds: i64) -> TimeDelta {
    TimeDelta::try_seconds(seconds).unwrap_or(TimeDelta::MAX)
}

/// The years in which zones change their offset: chrono-tz has local mean time before its
/// first transition and repeats no rule after its last, in 2100 (a test checks both).
const OFFSET_CHANGE_YEARS: std::ops::Range<i32> = 1800..2101;

/// One change of a zone's UTC offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OffsetChange {
    at: DateTime<Utc>,
    /// Seconds east of UTC before and after.
    before: i32,
    after: i32,
}

/// Every change of `tz`'s UTC offset, in time order. chrono-tz keeps its transitions to
/// itself, so they are found by sampling the offset daily over [`OFFSET_CHANGE_YEARS`] and
/// narrowing each change down to the second (a test checks hourly samples find no more);
/// once per zone and process.
fn offset_changes(tz: Tz) -> Arc<[OffsetChange]> {
    static FOUND: OnceLock<Mutex<HashMap<Tz, Arc<[OffsetChange]>>>> = OnceLock::new();
    let found = FOUND.get_or_init(Mutex::default);
    if let Some(changes) = found.lock().unwrap_or_else(|e| e.into_inner()).get(&tz) {
        return Arc::clone(changes);
    }
    let changes: Arc<[OffsetChange]> = offset_changes_sampled(tz, TimeDelta::days(1)).into();
    found
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(tz, Arc::clone(&changes));
    changes
}

fn offset_changes_sampled(tz: Tz, step: TimeDelta) -> Vec<OffsetChange> {
    if has_fixed_offset(tz) {
        return Vec::new();
    }
    let offset = |t: DateTime<Utc>| t.with_timezone(&tz).offset().fix().local_minus_utc();
    let year_start = |year: i32| {
        NaiveDate::from_ymd_opt(year, 1, 1)
            .expect("a year chrono supports")
            .and_time(NaiveTime::MIN)
            .and_utc()
    };
    let end = year_start(OFFSET_CHANGE_YEARS.end);
    let mut changes = Vec::new();
    let mut t = year_start(OFFSET_CHANGE_YEARS.start);
    let mut current = offset(t);
    while t < end {
        let next = t + step;
        if offset(next) == current {
            t = next;
            continue;
        }
        // The first second in (t, next] with another offset (offsets change on whole seconds).
        let (mut low, mut high) = (t.timestamp(), next.timestamp());
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if offset(DateTime::from_timestamp(middle, 0).expect("between two instants")) == current {
                low = middle;
            } else {
                high = middle;
            }
        }
        let high = DateTime::from_timestamp(high, 0).expect("an instant sampled above");
        let after = offset(high);
        changes.push(OffsetChange {
            at: high,
            before: current,
            after,
        });
        current = after;
        t = high;
    }
    changes
}

/// Zones whose offset never changes, where hour periods all last exactly `n` hours.
fn has_fixed_offset(tz: Tz) -> bool {
    let name = tz.name();
    name.starts_with("Etc/")
        || matches!(
            name,
            "UTC" | "UCT" | "GMT" | "GMT0" | "GMT+0" | "GMT-0" | "Greenwich" | "Universal" | "Zulu"
        )
}

/// Reads the numbers of `text` laid out as `template`, where each `#` is one ASCII digit and
/// everything else must match exactly; `None` for any other shape.
fn fields<const N: usize>(text: &str, template: &str) -> Option<[u32; N]> {
    if text.len() != template.len() {
        return None;
    }
    let mut values = [0u32; N];
    let mut count = 0;
    let mut in_field = false;
    for (c, t) in text.bytes().zip(template.bytes()) {
        if t == b'#' {
            if !c.is_ascii_digit() {
                return None;
            }
            let value = values.get_mut(count)?;
            *value = *value * 10 + u32::from(c - b'0');
            in_field = true;
        } else {
            if c != t {
                return None;
            }
            if in_field {
                count += 1;
                in_field = false;
            }
        }
    }
    if in_field {
        count += 1;
    }
    (count == N).then_some(values)
}

#[cfg(test)]
mod tests;
