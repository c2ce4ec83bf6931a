//! The foreign acts on the family's change stream: someone else's Kinesis destination on one of
//! our tables, ours disabled or its precision changed, the family's stream deleted. Each is
//! counted by outcome (`PROMISES_STATS`), since DynamoDB refuses many of them.

use ddb_rollover::policy::Precision;

use fake_aws::KinesisAct;

use crate::account::Account;
use crate::harness::Harness;
use crate::names::{FOREIGN_STREAM, MISSING_STREAM, PERSON};
use crate::steps::Act;
use crate::tally::count;

impl<A: Account> Harness<'_, A> {
    /// One of [`Act::ForeignDestination`], [`Act::DisableDestination`],
    /// [`Act::DestinationPrecision`] and [`Act::DeleteFamilyStream`]; the last three only when
    /// the policy names a stream.
    pub(super) fn stream_act(&self, act: &Act) {
        let ours = self.ours();
        let family_stream = self
            .policy
            .stream
            .kinesis
            .as_ref()
            .map(|k| k.stream_arn.to_string());
        let (name, acts) = match (act, family_stream) {
            (Act::ForeignDestination { pick, stream_exists }, _) => {
                let Some(table) = Self::pick(&ours, *pick) else {
                    return;
                };
                let stream_arn = if *stream_exists {
                    FOREIGN_STREAM
                } else {
                    MISSING_STREAM
                };
                let mut acts = Vec::new();
                if *stream_exists {
                    acts.push(KinesisAct::CreateStream {
                        stream_arn: stream_arn.to_string(),
                    });
                }
                acts.push(KinesisAct::Enable {
                    table: table.clone(),
                    stream_arn: stream_arn.to_string(),
                    precision: Precision::Millisecond,
                });
                ("foreign destination enabled", acts)
            }
            (Act::DisableDestination { pick }, Some(stream_arn)) => {
                let Some(table) = Self::pick(&ours, *pick) else {
                    return;
                };
                let act = KinesisAct::Disable {
                    table: table.clone(),
                    stream_arn,
                };
                ("our destination disabled", vec![act])
            }
            (Act::DestinationPrecision { pick }, Some(stream_arn)) => {
                let Some(table) = Self::pick(&ours, *pick) else {
                    return;
                };
                let world = self.account.world();
                let now = world
                    .destinations
                    .get(table)
                    .and_then(|list| list.iter().find(|d| d.stream_arn == stream_arn))
                    .map(|d| d.precision);
                let precision = match now {
                    Some(Precision::Millisecond) => Precision::Microsecond,
                    _ => Precision::Millisecond,
                };
                let act = KinesisAct::UpdatePrecision {
                    table: table.clone(),
                    stream_arn,
                    precision,
                };
                ("our destination's precision updated", vec![act])
            }
            (Act::DeleteFamilyStream, Some(stream_arn)) => (
                "the family's stream deleted",
                vec![KinesisAct::DeleteStream { stream_arn }],
            ),
            (
                Act::DisableDestination { .. } | Act::DestinationPrecision { .. } | Act::DeleteFamilyStream,
                None,
            ) => return,
            (other, _) => unreachable!("{other:?} is no act on the change stream"),
        };
        let done = acts
            .iter()
            .try_for_each(|act| self.account.kinesis_act(PERSON, act));
        match done {
            Ok(()) => count(name),
            Err(_) => count(format!("{name}: refused")),
        }
    }
}
