//! Warm throughput: a phase's `warm = { read, write }`, the read and write units per second a
//! table and its global secondary indexes can serve at once. Not to be confused with the
//! phase *named* "warm" in the stack's three-phase default (phase 1): this is DynamoDB's
//! `WarmThroughput`, the on-demand way to "pre-build the next table with high write capacity".
//!
//! What this rests on (DynamoDB Developer Guide, "Understanding DynamoDB warm throughput" and
//! its scenarios; API Reference: WarmThroughput, TableWarmThroughputDescription,
//! GlobalSecondaryIndexWarmThroughputDescription):
//! - every table and global index has a warm throughput; a new on-demand table or index starts
//!   at 12,000 read and 4,000 write units per second, a provisioned one at its provisioned
//!   throughput, and DynamoDB raises it by itself as traffic or provisioned capacity grows;
//! - CreateTable and UpdateTable take `WarmThroughput` for the table and for each index; once
//!   raised it cannot be lowered (a lower value is a ValidationException), and a request below
//!   the starting values above is refused too;
//! - DescribeTable reports it with a status, UPDATING while a raise is carried out, then ACTIVE.
//!
//! One value serves the table and every global index of the policy: the simplest rule, and an
//! index starts from the same defaults as its table.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::policy::limits::MAX_UNITS;
use crate::policy::settings::{Billing, Capacity};

/// A new on-demand table's (and index's) warm read throughput, in read units per second.
pub(crate) const ON_DEMAND_READ: i64 = 12_000;
/// A new on-demand table's (and index's) warm write throughput, in write units per second.
pub(crate) const ON_DEMAND_WRITE: i64 = 4_000;

/// Read and write units per second a table or index serves at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WarmThroughput {
    /// Read units per second.
    pub read: i64,
    /// Write units per second.
    pub write: i64,
}

impl WarmThroughput {
    /// Where a new on-demand table or index starts.
    pub const ON_DEMAND: WarmThroughput = WarmThroughput {
        read: ON_DEMAND_READ,
        write: ON_DEMAND_WRITE,
    };

    /// Whether this is at least `want` on both dimensions.
    pub fn covers(self, want: WarmThroughput) -> bool {
        self.read >= want.read && self.write >= want.write
    }

    /// Each dimension at least `want`'s: what a raise asks for, never lowering either.
    pub fn raised_to(self, want: WarmThroughput) -> WarmThroughput {
        WarmThroughput {
            read: self.read.max(want.read),
            write: self.write.max(want.write),
        }
    }

    /// The least DynamoDB takes for a table (or index) of `billing`: its starting values.
    pub fn floor_for(billing: Billing) -> WarmThroughput {
        match billing {
            Billing::Provisioned(Capacity { read, write }) => WarmThroughput { read, write },
            Billing::OnDemand(_) => WarmThroughput::ON_DEMAND,
        }
    }
}

/// "40000 read / 20000 write units/s".
impl fmt::Display for WarmThroughput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} read / {} write units/s", self.read, self.write)
    }
}

/// `warm = { read, write }` as written: both required (checked by validation, so each missing
/// one is named with the rest).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WarmDocument {
    /// Read units per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<i64>,
    /// Write units per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<i64>,
}

impl From<WarmThroughput> for WarmDocument {
    fn from(warm: WarmThroughput) -> Self {
        WarmDocument {
            read: Some(warm.read),
            write: Some(warm.write),
        }
    }
}

impl WarmDocument {
    /// The warm throughput, or every problem as (field within `warm`, what to change).
    /// `floor` is the least DynamoDB takes for the phase's table and indexes (their starting
    /// values, [`WarmThroughput::floor_for`]), `floor_source` says where it comes from.
    pub fn validate(
        &self,
        floor: WarmThroughput,
        floor_source: &str,
    ) -> Result<WarmThroughput, Vec<(&'static str, String)>> {
        let mut problems = Vec::new();
        let mut check = |field: &'static str, value: Option<i64>, least: i64| match value {
            None => {
                problems.push((
                    field,
                    format!(
                        "required with warm ({field} units per second, {least} or more): give both read and write"
                    ),
                ));
                least
            }
            Some(units) if units < least => {
                problems.push((
                    field,
                    format!(
                        "{units} is below {least}, {floor_source}: DynamoDB refuses a warm throughput below it; use {least} or more, or remove warm"
                    ),
                ));
                least
            }
            Some(units) if units > MAX_UNITS => {
                problems.push((
                    field,
                    format!(
                        "{units} is above {MAX_UNITS}, the most this tool accepts: use {least} to {MAX_UNITS} units per second"
                    ),
                ));
                least
            }
            Some(units) => units,
        };
        let warm = WarmThroughput {
            read: check("read", self.read, floor.read),
            write: check("write", self.write, floor.write),
        };
        if problems.is_empty() {
            Ok(warm)
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::settings::OnDemandLimits;

    #[test]
    fn the_floor_is_where_a_new_table_starts() {
        assert_eq!(
            WarmThroughput::floor_for(Billing::OnDemand(OnDemandLimits::default())),
            WarmThroughput {
                read: 12_000,
                write: 4_000
            }
        );
        let provisioned = Billing::Provisioned(Capacity {
            read: 300,
            write: 1000,
        });
        assert_eq!(
            WarmThroughput::floor_for(provisioned),
            WarmThroughput {
                read: 300,
                write: 1000
            }
        );
    }

    #[test]
    fn every_bad_field_is_named() {
        let floor = WarmThroughput::ON_DEMAND;
        let fields = |doc: WarmDocument| -> Vec<&'static str> {
            doc.validate(floor, "the on-demand default")
                .unwrap_err()
                .into_iter()
                .map(|(field, _)| field)
                .collect()
        };
        assert_eq!(fields(WarmDocument::default()), ["read", "write"]);
        assert_eq!(
            fields(WarmDocument {
                read: Some(11_999),
                write: Some(4_000)
            }),
            ["read"]
        );
        let problems = WarmDocument {
            read: Some(40_000),
            write: Some(-1),
        }
        .validate(floor, "the on-demand default")
        .unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].1.contains("-1 is below 4000"), "{problems:?}");
        let ok = WarmDocument {
            read: Some(40_000),
            write: Some(20_000),
        };
        assert_eq!(
            ok.validate(floor, "x"),
            Ok(WarmThroughput {
                read: 40_000,
                write: 20_000
            })
        );
    }

    #[test]
    fn a_raise_never_lowers_a_dimension() {
        let have = WarmThroughput {
            read: 50_000,
            write: 4_000,
        };
        let want = WarmThroughput {
            read: 40_000,
            write: 20_000,
        };
        assert!(!have.covers(want));
        assert_eq!(
            have.raised_to(want),
            WarmThroughput {
                read: 50_000,
                write: 20_000
            }
        );
        assert!(have.raised_to(want).covers(want));
    }
}
