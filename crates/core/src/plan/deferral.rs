//! Why a change waits for a later run: one name per cause, shared by the planner (a deferred
//! decision), the executor (a refusal at run time) and the reports and metrics built on them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a change that is due was not made by this run. Serialized in snake_case; the names are
/// the `Reason` dimension of the Lambda functions' `Deferrals` metric, so they are stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeferralCause {
    /// The table is not ACTIVE (CREATING, UPDATING, ...), or DynamoDB refused the call because
    /// the table was busy (ResourceInUseException).
    TableBusy,
    /// A global secondary index of the table is not ACTIVE (CREATING, backfilling, UPDATING):
    /// DynamoDB changes the table's throughput once every index is.
    IndexBusy,
    /// DynamoDB allows one table class change per table every 15 days.
    ClassChangeSpacing,
    /// DynamoDB's daily budget of capacity decreases is used up.
    DecreaseBudget,
    /// DynamoDB allows one switch to on-demand per table every 6 hours.
    OnDemandSwitchSpacing,
    /// The table's main change is an UpdateTable already: DynamoDB applies one table update at
    /// a time, so this setting waits.
    OneUpdateAtATime,
    /// TTL is being turned off; it can be turned on again once that ends.
    TtlDisabling,
    /// A capacity change is due but the scalable targets on the table were not read (a first
    /// plan, before the run reads them): no capacity change is made without knowing whose they
    /// are.
    ScalingNotRead,
    /// Due for deletion but this run's budget of deletions (`max_deletes_per_run`) is used.
    DeleteBudget,
    /// Due for archiving but point-in-time recovery is off: this run turns it on first.
    PointInTimeRecoveryOff,
    /// DynamoDB refused the call with LimitExceededException (too many concurrent control-plane
    /// operations, or a quota).
    LimitExceeded,
    /// The run's time budget (the Lambda deadline or `--time-budget`) ended first.
    TimeBudget,
    /// Leaving an autoscaling phase: this policy's scalable targets are still on the table
    /// (their removal failed or waits), and the autoscaler would undo a capacity change.
    ScalingStillAttached,
    /// Due for deletion but its archive is not proven: the export's manifest or a data file it
    /// lists is missing from S3, the item counts disagree, or S3 was not read.
    ArchiveUnproven,
    /// The warm throughput of the table or one of its indexes is being raised (UPDATING): the
    /// next raise waits until DynamoDB reports it ACTIVE.
    WarmUpdating,
    /// Another run of the same operation holds the family's lease (a redelivered schedule, a
    /// console test): it makes the changes, this run makes none.
    LeaseHeld,
}

impl DeferralCause {
    /// Every cause.
    pub const ALL: [DeferralCause; 16] = [
        DeferralCause::TableBusy,
        DeferralCause::IndexBusy,
        DeferralCause::ClassChangeSpacing,
        DeferralCause::DecreaseBudget,
        DeferralCause::OnDemandSwitchSpacing,
        DeferralCause::OneUpdateAtATime,
        DeferralCause::TtlDisabling,
        DeferralCause::ScalingNotRead,
        DeferralCause::DeleteBudget,
        DeferralCause::PointInTimeRecoveryOff,
        DeferralCause::LimitExceeded,
        DeferralCause::TimeBudget,
        DeferralCause::ScalingStillAttached,
        DeferralCause::ArchiveUnproven,
        DeferralCause::WarmUpdating,
        DeferralCause::LeaseHeld,
    ];

    /// The snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            DeferralCause::TableBusy => "table_busy",
            DeferralCause::IndexBusy => "index_busy",
            DeferralCause::ClassChangeSpacing => "class_change_spacing",
            DeferralCause::DecreaseBudget => "decrease_budget",
            DeferralCause::OnDemandSwitchSpacing => "on_demand_switch_spacing",
            DeferralCause::OneUpdateAtATime => "one_update_at_a_time",
            DeferralCause::TtlDisabling => "ttl_disabling",
            DeferralCause::ScalingNotRead => "scaling_not_read",
            DeferralCause::DeleteBudget => "delete_budget",
            DeferralCause::PointInTimeRecoveryOff => "point_in_time_recovery_off",
            DeferralCause::LimitExceeded => "limit_exceeded",
            DeferralCause::TimeBudget => "time_budget",
            DeferralCause::ScalingStillAttached => "scaling_still_attached",
            DeferralCause::ArchiveUnproven => "archive_unproven",
            DeferralCause::WarmUpdating => "warm_updating",
            DeferralCause::LeaseHeld => "lease_held",
        }
    }
}

impl fmt::Display for DeferralCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialized_ones() {
        for cause in DeferralCause::ALL {
            assert_eq!(
                serde_json::to_value(cause).unwrap(),
                serde_json::Value::String(cause.as_str().into())
            );
            let back: DeferralCause = serde_json::from_value(serde_json::to_value(cause).unwrap()).unwrap();
            assert_eq!(back, cause);
        }
    }
}
