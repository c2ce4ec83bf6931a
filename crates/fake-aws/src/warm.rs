//! Warm throughput as AWS documents it ("Understanding DynamoDB warm throughput"; API
//! Reference: WarmThroughput, TableWarmThroughputDescription,
//! GlobalSecondaryIndexWarmThroughputDescription), for the table and each global index:
//!
//! - a new table or index starts at DynamoDB's values for its billing (on-demand 12,000 read /
//!   4,000 write units per second, provisioned its capacity), or at CreateTable's
//!   `WarmThroughput` when given, which may not be below them (ValidationException);
//! - DynamoDB raises it by itself when provisioned capacity (or the switch to on-demand) asks
//!   for more;
//! - UpdateTable's `WarmThroughput` raises it: UPDATING for [`crate::Config::warm_delay`] of fake
//!   time, then ACTIVE; a lower value on either dimension is a ValidationException
//!   (`aws_model::warm::lowered`, as testkit's proxy refuses it: `mutations::warm`), and a raise does not make the table itself UPDATING ("pre-warm requests ... will not interfere
//!   with any table operations").

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::Billing;
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::table::{ObservedWarm, TableStatus};

/// A table's or an index's warm throughput.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Warm {
    /// Read and write units per second.
    pub units: WarmThroughput,
    /// When the raise in progress ends (UPDATING until then); `None`: ACTIVE.
    pub ready_at: Option<DateTime<Utc>>,
}

impl Warm {
    /// Where a table or index of `billing` starts: `asked` (CreateTable's, UPDATING until
    /// `ready_at`) or DynamoDB's own values. `Err` names the dimension below the floor.
    pub fn at_creation(
        billing: Billing,
        asked: Option<WarmThroughput>,
        ready_at: DateTime<Utc>,
    ) -> Result<Warm, String> {
        let floor = WarmThroughput::floor_for(billing);
        match asked {
            None => Ok(Warm {
                units: floor,
                ready_at: None,
            }),
            Some(asked) if !asked.covers(floor) => Err(format!(
                "One or more parameter values were invalid: Requested WarmThroughput ({asked}) is lower than the initial throughput ({floor})"
            )),
            Some(asked) => Ok(Warm {
                units: asked,
                ready_at: Some(ready_at),
            }),
        }
    }

    /// DynamoDB's own raise when the billing asks for more (provisioned capacity above it, a
    /// switch to on-demand).
    pub fn grow_to(&mut self, billing: Billing) {
        self.units = self.units.raised_to(WarmThroughput::floor_for(billing));
    }

    /// Ends the raise in progress once its time has come.
    pub fn tick(&mut self, now: DateTime<Utc>) {
        if self.ready_at.is_some_and(|at| at <= now) {
            self.ready_at = None;
        }
    }

    /// Whether a raise is in progress (UPDATING).
    pub fn is_updating(&self) -> bool {
        self.ready_at.is_some()
    }

    /// What DescribeTable reports of it.
    pub fn observed(&self) -> ObservedWarm {
        ObservedWarm {
            units: self.units,
            status: if self.is_updating() {
                TableStatus::Updating
            } else {
                TableStatus::Active
            },
        }
    }
}

/// How long a raise takes by default, in fake time.
pub(crate) fn default_delay() -> Duration {
    Duration::seconds(90)
}
