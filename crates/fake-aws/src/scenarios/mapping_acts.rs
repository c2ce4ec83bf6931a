//! The foreign acts on the family's consumer: someone else's mapping on one of our tables'
//! streams, ours deleted or disabled, the consumer function deleted. Each is counted by outcome
//! (`PROMISES_STATS`), since Lambda refuses some of them.

use crate::MappingAct;

use super::*;

impl<A: Account> Harness<'_, A> {
    /// The latest stream ARN of `table` and the uuid of our mapping on it (a mapping of the
    /// policy's consumer function), from the account's ground truth.
    fn our_mapping(&self, table: &str) -> Option<String> {
        let function = self.policy.stream.lambda.as_ref()?.function.to_string();
        let world = self.account.world();
        let stream_arn = world.tables.get(table)?.stream_arn.clone()?;
        world
            .mappings
            .values()
            .find(|m| m.event_source_arn == stream_arn && m.function_arn == function)
            .map(|m| m.uuid.clone())
    }

    /// One of [`Act::ForeignMapping`], [`Act::DeleteMapping`], [`Act::DisableMapping`] and
    /// [`Act::DeleteConsumer`]; the last three only when the policy names a consumer function.
    pub(super) fn mapping_act(&self, act: &Act) {
        let ours = self.ours();
        let consumer = self.policy.stream.lambda.as_ref().map(|l| l.function.to_string());
        let (name, acts) = match (act, consumer) {
            (Act::ForeignMapping { pick }, _) => {
                let Some(table) = Self::pick(&ours, *pick) else {
                    return;
                };
                let Some(stream_arn) = self
                    .account
                    .world()
                    .tables
                    .get(table)
                    .and_then(|t| t.stream.and(t.stream_arn.clone()))
                else {
                    count("foreign mapping: the table has no stream");
                    return;
                };
                let acts = vec![
                    MappingAct::CreateFunction {
                        function_arn: FOREIGN_CONSUMER.to_string(),
                    },
                    MappingAct::Map {
                        function_arn: FOREIGN_CONSUMER.to_string(),
                        stream_arn,
                    },
                ];
                ("foreign mapping made", acts)
            }
            (Act::DeleteMapping { pick }, Some(_)) => {
                let Some(uuid) = Self::pick(&ours, *pick).and_then(|t| self.our_mapping(t)) else {
                    return;
                };
                ("our mapping deleted", vec![MappingAct::Unmap { uuid }])
            }
            (Act::DisableMapping { pick }, Some(_)) => {
                let Some(uuid) = Self::pick(&ours, *pick).and_then(|t| self.our_mapping(t)) else {
                    return;
                };
                ("our mapping disabled", vec![MappingAct::Disable { uuid }])
            }
            (Act::DeleteConsumer, Some(function_arn)) => (
                "the family's consumer deleted",
                vec![MappingAct::DeleteFunction { function_arn }],
            ),
            (Act::DeleteMapping { .. } | Act::DisableMapping { .. } | Act::DeleteConsumer, None) => return,
            (other, _) => unreachable!("{other:?} is no act on the consumer's mappings"),
        };
        let done = acts
            .iter()
            .try_for_each(|act| self.account.mapping_act(PERSON, act));
        match done {
            Ok(()) => count(name),
            Err(_) => count(format!("{name}: refused")),
        }
    }
}
