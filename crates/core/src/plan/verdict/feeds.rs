//! Which change feeds on a table are the family's: by what its ledger record holds (a
//! mapping's UUID, a destination's stream), never by a function's or stream's name alone.

use crate::ledger::{Feeds, INTENT_SKEW};
use crate::policy::Policy;
use crate::table::stream::{ObservedDestination, ObservedMapping};

/// Which of a table's change feeds are ours: what its record holds.
pub(super) struct OurFeeds<'a> {
    pub(super) policy: &'a Policy,
    /// `None`: no record, or one written before feeds were recorded.
    pub(super) recorded: Option<&'a Feeds>,
}

impl OurFeeds<'_> {
    /// A destination is ours to the stream the policy names (DynamoDB gives a destination no
    /// identity but the table and the stream, and whoever enabled it, the table's changes reach
    /// the family's stream), or to a stream the record says we enabled it to.
    pub(super) fn destination(&self, destination: &ObservedDestination) -> bool {
        self.policy
            .stream
            .kinesis
            .as_ref()
            .is_some_and(|wanted| destination.is_to(wanted))
            || self
                .recorded
                .is_some_and(|feeds| feeds.destinations.contains(&destination.stream_arn))
    }

    /// A mapping is ours by the UUID recorded when we made it; or, where a run recorded its
    /// intent and not the outcome (a crash in between), the policy's function's mapping Lambda
    /// modified since the intent. A record from before feeds were recorded goes by the
    /// policy's function, as that version did.
    pub(super) fn mapping(&self, mapping: &ObservedMapping) -> bool {
        let to_consumer = self
            .policy
            .stream
            .lambda
            .as_ref()
            .is_some_and(|consumer| mapping.is_to(consumer));
        let Some(feeds) = self.recorded else {
            return to_consumer;
        };
        feeds.mappings.contains(&mapping.uuid)
            || (to_consumer
                && feeds.mapping_intended.is_some_and(|at| {
                    mapping
                        .last_modified
                        .is_some_and(|modified| modified + INTENT_SKEW >= at)
                }))
    }
}
