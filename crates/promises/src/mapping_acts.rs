//! The foreign acts on the family's consumer: someone else's mapping on one of our tables'
//! streams, ours deleted or disabled, the consumer function deleted. Each is counted by outcome
//! (`PROMISES_STATS`), since Lambda refuses some of them.

use fake_aws::MappingAct;

use crate::account::Account;
use crate::harness::Harness;
use crate::names::{FOREIGN_CONSUMER, PERSON};
use crate::steps::Act;
use crate::tally::count;

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
            (Act::ForeignMapping { pick, our_function }, consumer) => {
                // Our consumer goes where ours is not (deleted by someone, or never made).
                let bare: Vec<String> = ours
                    .iter()
                    .filter(|t| self.our_mapping(t).is_none())
                    .cloned()
                    .collect();
                let among = if *our_function && consumer.is_some() && !bare.is_empty() {
                    &bare
                } else {
                    &ours
                };
                let Some(table) = Self::pick(among, *pick) else {
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
                match consumer.filter(|_| *our_function) {
                    // Lambda refuses a second mapping of one function on one stream: ours goes
                    // first (a later act of this kind maps theirs once it is gone).
                    Some(_) if self.our_mapping(table).is_some() => (
                        "our mapping deleted, to map our consumer as someone else",
                        vec![MappingAct::Unmap {
                            uuid: self.our_mapping(table).expect("just found"),
                        }],
                    ),
                    Some(function_arn) => (
                        "foreign mapping of our consumer made",
                        vec![MappingAct::Map {
                            function_arn,
                            stream_arn,
                        }],
                    ),
                    None => (
                        "foreign mapping made",
                        vec![
                            MappingAct::CreateFunction {
                                function_arn: FOREIGN_CONSUMER.to_string(),
                            },
                            MappingAct::Map {
                                function_arn: FOREIGN_CONSUMER.to_string(),
                                stream_arn,
                            },
                        ],
                    ),
                }
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
