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
//!   (`aws_model::warm::lowered`, as testkit's proxy refuses it), and a raise does not make the table itself UPDATING ("pre-warm requests ... will not interfere
//!   with any table operations").

use chrono::{DateTime, Duration, Utc};
use ddb_rollover::policy::settings::Billing;
use ddb_rollover::policy::warm::WarmThroughput;
use ddb_rollover::run::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::table::changes::WarmRaise;
use ddb_rollover::table::{ObservedWarm, TableStatus};

use aws_model::warm::{lowered, Part, Units};

use crate::errors::{error, validation};
use crate::{Effect, FakeAws, World};

/// A warm throughput in `aws_model`'s units, which decide whether a raise lowers it.
fn units(warm: WarmThroughput) -> Units {
    Units {
        read: warm.read,
        write: warm.write,
    }
}

/// A table's or an index's warm throughput.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Warm {
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

    pub fn tick(&mut self, now: DateTime<Utc>) {
        if self.ready_at.is_some_and(|at| at <= now) {
            self.ready_at = None;
        }
    }

    pub fn is_updating(&self) -> bool {
        self.ready_at.is_some()
    }

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

/// How long a raise takes by default, in fake time.
pub fn default_delay() -> Duration {
    Duration::seconds(90)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, FakeAws, FAMILY_TAG};
    use chrono::TimeZone;
    use ddb_rollover::policy::settings::{Capacity, OnDemandLimits};
    use ddb_rollover::run::control::Tables;
    use ddb_rollover::table::changes::{CapacityChange, SettingChange, TableSetting, TableSpec, WarmPart};
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
            ..crate::table_spec("ts_a", crate::tests::key(), billing)
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
