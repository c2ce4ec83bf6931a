//! Warm throughput's changes ([`crate::warm`] holds what a table's is): an UpdateTable that
//! raises it, every part checked before any is raised, and CreateTable's refusal of one below
//! DynamoDB's starting values.

use aws_model::warm::{lowered, Part, Units};
use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::table::WarmRaise;

use crate::account::FakeAws;
use crate::errors::{error, validation};
use crate::log::Effect;
use crate::world::World;

/// A warm throughput in `aws_model`'s units, which decide whether a raise lowers it.
fn units(warm: WarmThroughput) -> Units {
    Units {
        read: warm.read,
        write: warm.write,
    }
}

/// An UpdateTable of warm throughput: every part checked before any is raised.
pub(crate) fn raise(
    world: &mut World,
    name: &str,
    raise: &WarmRaise,
    effects: &mut Vec<Effect>,
) -> Result<(), ControlPlaneError> {
    const OP: &str = "UpdateTable";
    let ready_at = world.now + world.config.warm_delay;
    let table = FakeAws::active_table_mut(world, OP, name)?;
    for part in &raise.parts {
        let have = match &part.index {
            None => table.warm.units,
            Some(index) => match table.gsi(index) {
                Some(gsi) => gsi.warm.units,
                None => {
                    return Err(validation(
                        OP,
                        name,
                        format!("One or more parameter values were invalid: index {index} does not exist"),
                    ))
                }
            },
        };
        let part_of = part.index.as_deref().map_or(Part::Table, Part::Index);
        if let Some(why) = lowered(part_of, units(part.to), units(have)) {
            return Err(validation(OP, name, why));
        }
    }
    for part in &raise.parts {
        let warm = match &part.index {
            None => &mut table.warm,
            Some(index) => {
                &mut table
                    .gsis
                    .iter_mut()
                    .find(|g| g.name == *index)
                    .expect("checked")
                    .warm
            }
        };
        if warm.units == part.to {
            continue;
        }
        effects.push(Effect::Warm {
            table: name.to_string(),
            index: part.index.clone(),
            from: warm.units,
            to: part.to,
        });
        warm.units = part.to;
        warm.ready_at = Some(ready_at);
    }
    Ok(())
}

/// CreateTable's refusal of a warm throughput below the starting values.
pub(crate) fn refused_at_creation(name: &str, message: String) -> ControlPlaneError {
    error(
        ErrorKind::Other,
        "CreateTable",
        name,
        format!("ValidationException: {message}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::FakeAws;
    use crate::objects::FAMILY_TAG;
    use crate::warm::default_delay;
    use crate::world::Config;
    use chrono::{Duration, TimeZone, Utc};
    use ddb_rollover::control::Tables;
    use ddb_rollover::policy::Billing;
    use ddb_rollover::policy::{Capacity, OnDemandLimits};
    use ddb_rollover::table::TableStatus;
    use ddb_rollover::table::{CapacityChange, SettingChange, TableSetting, TableSpec, WarmPart};
    use futures::executor::block_on;
    use std::collections::BTreeMap;

    const WANT: WarmThroughput = WarmThroughput {
        read: 40_000,
        write: 20_000,
    };

    fn spec(billing: Billing, warm: Option<WarmThroughput>) -> TableSpec {
        TableSpec {
            tags: BTreeMap::from([(FAMILY_TAG.to_string(), "ts".to_string())]),
            warm,
            ..crate::specs::table_spec("ts_a", crate::tests::key(), billing)
        }
    }

    fn fake() -> FakeAws {
        let start = Utc.with_ymd_and_hms(2024, 3, 30, 0, 0, 0).unwrap();
        FakeAws::new("ts", start, Config::default())
    }

    fn observed(fake: &FakeAws) -> (WarmThroughput, TableStatus, TableStatus) {
        let t = block_on(fake.describe_table("ts_a")).unwrap().unwrap();
        let warm = t.warm.unwrap();
        (warm.units, warm.status, t.status)
    }

    fn raise(to: WarmThroughput) -> SettingChange {
        SettingChange {
            name: "ts_a".into(),
            setting: TableSetting::Warm(WarmRaise {
                parts: vec![WarmPart {
                    index: None,
                    from: WarmThroughput::ON_DEMAND,
                    to,
                }],
            }),
        }
    }

    #[test]
    fn creation_starts_at_dynamodbs_values_or_asks_more_never_less() {
        let on_demand = Billing::OnDemand(OnDemandLimits::default());
        let fake = fake();
        let low = WarmThroughput {
            read: 11_999,
            write: 4_000,
        };
        let refused = block_on(fake.create_table(&spec(on_demand, Some(low)))).unwrap_err();
        assert!(refused.message.starts_with("ValidationException"), "{refused}");
        assert!(block_on(fake.describe_table("ts_a")).unwrap().is_none());
        block_on(fake.create_table(&spec(on_demand, Some(WANT)))).unwrap();
        fake.advance(Duration::seconds(20));
        // ACTIVE table, its pre-warming still going on; then ACTIVE.
        assert_eq!(
            observed(&fake),
            (WANT, TableStatus::Updating, TableStatus::Active)
        );
        fake.advance(default_delay());
        assert_eq!(observed(&fake), (WANT, TableStatus::Active, TableStatus::Active));

        // Provisioned: its capacity, and DynamoDB's own raise with the capacity.
        let provisioned = Billing::Provisioned(Capacity {
            read: 300,
            write: 1000,
        });
        let fake = self::fake();
        block_on(fake.create_table(&spec(provisioned, None))).unwrap();
        fake.advance(Duration::seconds(20));
        let floor = WarmThroughput {
            read: 300,
            write: 1000,
        };
        assert_eq!(observed(&fake), (floor, TableStatus::Active, TableStatus::Active));
        let more = Billing::Provisioned(Capacity {
            read: 5000,
            write: 1000,
        });
        block_on(fake.update_capacity(&CapacityChange {
            name: "ts_a".into(),
            from: provisioned,
            to: more,
            indexes: Vec::new(),
        }))
        .unwrap();
        let grown = WarmThroughput {
            read: 5000,
            write: 1000,
        };
        assert_eq!(observed(&fake).0, grown);
    }

    #[test]
    fn a_raise_is_updating_then_active_and_a_lower_value_is_refused() {
        let fake = fake();
        block_on(fake.create_table(&spec(Billing::OnDemand(OnDemandLimits::default()), None))).unwrap();
        // Not while the table is CREATING.
        assert_eq!(
            block_on(fake.configure(&raise(WANT))).unwrap_err().kind,
            ErrorKind::InUse
        );
        fake.advance(Duration::seconds(20));
        block_on(fake.configure(&raise(WANT))).unwrap();
        // The raise does not make the table itself UPDATING.
        assert_eq!(
            observed(&fake),
            (WANT, TableStatus::Updating, TableStatus::Active)
        );
        fake.advance(default_delay());
        assert_eq!(observed(&fake), (WANT, TableStatus::Active, TableStatus::Active));
        let lower = WarmThroughput {
            read: 50_000,
            write: 19_999,
        };
        let refused = block_on(fake.configure(&raise(lower))).unwrap_err();
        assert!(refused.message.contains(aws_model::warm::LOWER_WARM), "{refused}");
        assert_eq!(observed(&fake).0, WANT, "nothing changed");
        // The log shows the one raise, with what it changed.
        let raised: Vec<Effect> = fake
            .snapshot()
            .log
            .into_iter()
            .flat_map(|c| c.effects)
            .filter(|e| matches!(e, Effect::Warm { .. }))
            .collect();
        assert_eq!(
            raised,
            [Effect::Warm {
                table: "ts_a".into(),
                index: None,
                from: WarmThroughput::ON_DEMAND,
                to: WANT,
            }]
        );
    }
}
