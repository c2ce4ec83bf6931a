//! DynamoDB's budgets on changes to a table: provisioned-throughput decreases (4 a UTC day, then
//! one an hour, 27 at most), switches to on-demand and table class changes.

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::Billing;

/// Decreases allowed at any time in a UTC day, and at most in one.
pub const FREE_DECREASES: usize = 4;
/// The most decreases a table or index may have in one UTC day.
pub const MAX_DECREASES: usize = 27;
/// Provisioned-to-on-demand switches allowed in any rolling 24 hours.
pub const ON_DEMAND_SWITCHES_PER_DAY: usize = 4;
/// Table class changes allowed in any trailing 30 days.
pub const CLASS_CHANGES_PER_30_DAYS: usize = 2;

/// The provisioned-throughput decreases of a table or an index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decreases {
    /// When each decrease of the current UTC day happened.
    pub at: Vec<DateTime<Utc>>,
}

impl Decreases {
    fn on_day_of(&self, now: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        self.at
            .iter()
            .copied()
            .filter(|t| t.date_naive() == now.date_naive())
            .collect()
    }

    /// NumberOfDecreasesToday.
    pub fn today(&self, now: DateTime<Utc>) -> u32 {
        self.on_day_of(now).len() as u32
    }

    /// LastDecreaseDateTime.
    pub fn last(&self) -> Option<DateTime<Utc>> {
        self.at.iter().max().copied()
    }

    /// Whether DynamoDB takes one more decrease at `now`: 4 at any time in a UTC day, then one
    /// whenever there was none in the past hour, 27 at most.
    pub fn allowed(&self, now: DateTime<Utc>) -> bool {
        let today = self.on_day_of(now);
        if today.len() < FREE_DECREASES {
            return true;
        }
        today.len() < MAX_DECREASES && today.iter().all(|t| now - *t >= Duration::hours(1))
    }
}

pub(crate) fn lowers(from: Billing, to: Billing) -> bool {
    match (from, to) {
        (Billing::Provisioned(a), Billing::Provisioned(b)) => b.read < a.read || b.write < a.write,
        _ => false,
    }
}

/// How many of `times` fall in the `window` before `now` (a rolling budget's count).
pub(crate) fn within(times: &[DateTime<Utc>], now: DateTime<Utc>, window: Duration) -> usize {
    times.iter().filter(|t| now - **t < window).count()
}
