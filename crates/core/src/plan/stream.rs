//! The family's change stream in the planner. create_new enables the Kinesis destination to
//! the policy's stream on each table it keeps ready (the current and pre-built ones), a new
//! table right after its creation, so a consumer of the one stream misses no period. The
//! destination to the policy's stream is the positive evidence it is ours; any other is
//! someone else's and is never disabled or changed (see [`crate::plan::verdict`]). A table
//! whose foreign destination holds it still gets the enable: DynamoDB answers whether a table
//! can feed two streams, and a refusal is a loud failure, never a silent gap.
//!
//! The same for the consumer function: create_new maps it to each table's DynamoDB stream, a
//! new table's right after its creation; resize_old removes our mapping once it deletes the
//! table. Only a mapping of the policy's function on the table's stream is ours; any other is
//! someone's consumer, never deleted, and it keeps the table from deletion.
//!
//! Our mapping's settings are the policy's: a batch size or filters someone changed on it are
//! put back by create_new (UpdateEventSourceMapping by its UUID), so a consumer never silently
//! gets fewer records than the policy says. Its state (someone disabled it) and its function
//! (someone re-pointed it) are not settings: the run leaves them, and readiness says so.

use crate::plan::context::{Context, Owned};
use crate::plan::decision::{Decision, PlanItem};
use crate::plan::verdict::{ConsumerState, StreamState};
use crate::policy::period::Slot;
use crate::table::stream::{
    DestinationChange, DestinationStatus, MappingChange, MappingRemoval, MappingUpdate,
};

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
        Some(self.target_item(slot, name, owned, decision, reason))
    }
}

impl Context<'_> {
    /// The item of `decision` on a target table: with the verdict of the table when it exists,
    /// else for the period it is about to hold.
    fn target_item(
        &self,
        slot: Slot,
        name: &str,
        owned: Option<&Owned>,
        decision: Decision,
        reason: String,
    ) -> PlanItem {
        match owned {
            Some(owned) => self.item(owned, decision, reason),
            None => {
                let period = self.policy.naming().calendar().label(slot);
                self.item_for(slot, name, &period, None, decision, reason)
            }
        }
    }

    /// The mappings a table needs, when the policy names a consumer function: for a table this
    /// run creates, one; for one that exists, one when no mapping of the function is on its
    /// stream. A table whose stream someone turned off gets it back from upkeep, as a new
    /// stream: ours on the old one (which reads nothing now) is removed, and the new one mapped.
    /// A mapping of ours that someone disabled is left as it is: readiness says so loudly (an
    /// operator may have paused the consumer; the run never fights that). Ours whose batch size
    /// or filters someone changed gets the policy's back. Ours that someone re-pointed to
    /// another function gets nothing: neither re-pointed back nor a second mapping beside it
    /// (readiness names it).
    pub(super) fn mapping_items(
        &self,
        slot: Slot,
        name: &str,
        owned: Option<&Owned>,
        created: bool,
    ) -> Vec<PlanItem> {
        let Some(consumer) = self.policy.stream.lambda.clone() else {
            return Vec::new();
        };
        let function = consumer.function.to_string();
        let existing = owned.filter(|_| !created);
        let stream_off = existing.is_some_and(|o| o.table.stream.is_none());
        let mut items = Vec::new();
        let reason = match existing.and_then(|o| o.verdict.consumer.as_ref()) {
            None => format!("a new table's stream feeds the family's consumer {function}: map it"),
            Some(ConsumerState::NotRead | ConsumerState::Unsupported | ConsumerState::Repointed { .. }) => {
                return items
            }
            Some(ConsumerState::Ours { uuid, .. }) if !stream_off => {
                items.extend(existing.and_then(|o| self.reset_item(o, uuid)));
                return items;
            }
            Some(ConsumerState::Ours { .. }) => {
                items.extend(existing.and_then(|o| {
                    self.unmap_item(
                        o,
                        "its stream is off, so our mapping on it reads nothing: remove it",
                    )
                }));
                format!("its stream is off (upkeep turns it on again, as a new stream): map the family's consumer {function} to it")
            }
            Some(ConsumerState::Absent) => {
                format!("no mapping feeds its stream to the family's consumer {function}: map it")
            }
        };
        let decision = Decision::CreateEventSourceMapping(MappingChange {
            name: name.to_string(),
            consumer,
        });
        items.push(self.target_item(slot, name, owned, decision, reason));
        items
    }

    /// The update that puts the policy's batch size and filters back on our mapping `uuid`,
    /// when someone changed them. No ledger record follows: the mapping keeps its UUID, which
    /// is what the record holds.
    fn reset_item(&self, owned: &Owned, uuid: &str) -> Option<PlanItem> {
        let consumer = self.policy.stream.lambda.as_ref()?;
        let mapping = owned.table.mappings.iter().flatten().find(|m| m.uuid == uuid)?;
        let drift = mapping.drift_from(consumer);
        if drift.is_empty() {
            return None;
        }
        let update = MappingUpdate {
            name: owned.table.name.clone(),
            uuid: uuid.to_string(),
            function_arn: consumer.function.to_string(),
            batch_size: consumer.batch_size,
            filters: consumer.filters.clone(),
        };
        let reason = format!(
            "our mapping {uuid} to {} has {}: put the policy's settings back",
            consumer.function,
            drift.join("; ")
        );
        Some(self.item(owned, Decision::UpdateEventSourceMapping(update), reason))
    }

    /// Once a table is deleted, the removal of our mapping on its stream (Lambda keeps a
    /// mapping whose stream is gone): only the mapping of the policy's consumer function.
    pub(crate) fn unmap_deleted_item(&self, owned: &Owned) -> Option<PlanItem> {
        self.unmap_item(
            owned,
            "once the table is deleted, remove our mapping from its stream (deleting a table leaves its mappings)",
        )
    }

    /// The removal of our mapping on the table's latest stream, `why`.
    fn unmap_item(&self, owned: &Owned, why: &str) -> Option<PlanItem> {
        let Some(ConsumerState::Ours { uuid, .. }) = &owned.verdict.consumer else {
            return None;
        };
        let consumer = self.policy.stream.lambda.as_ref()?;
        let removal = MappingRemoval {
            name: owned.table.name.clone(),
            uuid: uuid.clone(),
            function_arn: consumer.function.to_string(),
        };
        let reason = format!("{why}: mapping {uuid} to {}", consumer.function);
        Some(self.item(owned, Decision::DeleteEventSourceMapping(removal), reason))
    }
}
