//! The family's change stream in the planner: create_new enables the Kinesis destination to
//! the policy's stream on each table it keeps ready (the current and pre-built ones), a new
//! table right after its creation, so a consumer of the one stream misses no period. The
//! destination to the policy's stream is the positive evidence it is ours; any other is
//! someone else's and is never disabled or changed (see [`crate::plan::verdict`]). A table
//! whose foreign destination holds it still gets the enable: DynamoDB answers whether a table
//! can feed two streams, and a refusal is a loud failure, never a silent gap.

use crate::plan::context::{Context, Owned};
use crate::plan::decision::{Decision, PlanItem};
use crate::plan::verdict::StreamState;
use crate::policy::period::Slot;
use crate::table::stream::{DestinationChange, DestinationStatus};

impl Context<'_> {
    /// The enable a table needs, when the policy names a stream: for a table this run creates
    /// (`created`: none exists, or `owned` is being deleted and made again), always; for one
    /// that exists, when no destination of ours is enabling or streaming (none, disabled by
    /// someone, or ENABLE_FAILED before). The item carries the verdict of the table's main item.
    pub(super) fn stream_item(
        &self,
        slot: Slot,
        name: &str,
        owned: Option<&Owned>,
        created: bool,
    ) -> Option<PlanItem> {
        let destination = self.policy.stream.kinesis.clone()?;
        let stream = destination.stream_arn.to_string();
        let state = owned.filter(|_| !created).and_then(|o| o.verdict.stream.as_ref());
        let reason = match state {
            None => format!("a new table streams its changes into the family's Kinesis stream {stream}: enable it"),
            Some(StreamState::NotRead | StreamState::Unsupported) => return None,
            Some(StreamState::Ours { status, .. }) if status.holds() => return None,
            Some(StreamState::Ours {
                status: DestinationStatus::EnableFailed,
                description,
            }) => format!(
                "its destination to the family's Kinesis stream {stream} is ENABLE_FAILED ({}): enable it again",
                description.as_deref().unwrap_or("DynamoDB gave no reason")
            ),
            Some(StreamState::Ours { status, .. }) => format!(
                "its destination to the family's Kinesis stream {stream} is {}: enable it again",
                status.as_str()
            ),
            Some(StreamState::Absent) => {
                format!("its changes do not reach the family's Kinesis stream {stream}: enable the destination")
            }
        };
        let decision = Decision::EnableKinesisDestination(DestinationChange {
            name: name.to_string(),
            destination,
        });
        Some(match owned {
            Some(owned) => self.item(owned, decision, reason),
            None => {
                let period = self.policy.naming().calendar().label(slot);
                self.item_for(slot, name, &period, None, decision, reason)
            }
        })
    }
}
