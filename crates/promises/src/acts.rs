//! The foreign acts of a case, played in the account: hand-made tables, tags, capacity,
//! scaling, seals, S3 objects and Kinesis destinations, by people, other tools and the sibling
//! family.

use std::collections::BTreeMap;

use chrono::Duration;
use ddb_rollover::policy::{AttributeKind, Billing, GlobalIndex, KeyAttribute, LocalIndex, Projection};
use ddb_rollover::policy::{ScalableDimension, ScalableKey};
use ddb_rollover::table::{IndexSpec, TableSpec};
use fake_aws::FAMILY_TAG;

use crate::account::Account;
use crate::ground::{our_policy_name, Ground};
use crate::harness::{on_demand, other_key, our_target_keys, provisioned, Harness};
use crate::names::{PERSON, PREFIX, SIBLING};
use crate::steps::{pre_warmed, Act, GsiKind, NameKind, TagKind};
use crate::tally::count;

impl<A: Account> Harness<'_, A> {
    pub(super) fn hand_made(&self, act: &Act) -> TableSpec {
        let Act::HandMade {
            at,
            name,
            our_key,
            gsi,
            lsi,
            tags,
            on_demand: od,
        } = act
        else {
            unreachable!()
        };
        let calendar = self.policy.calendar();
        let current = calendar.floor(self.account.now());
        let mut slot = current;
        for _ in 0..at.unsigned_abs() {
            slot = if *at < 0 {
                calendar.previous(slot)
            } else {
                calendar.next(slot)
            };
        }
        let label = calendar.label(slot);
        let name = match name {
            NameKind::Exact => format!("{PREFIX}_{label}"),
            NameKind::Suffixed => format!("{PREFIX}_{label}_old"),
            NameKind::Nested => format!("{SIBLING}_{label}"),
        };
        let key = if *our_key {
            self.policy.key.clone()
        } else {
            other_key()
        };
        let billing = if *od && self.knobs.on("hand_made_on_demand") {
            on_demand()
        } else {
            provisioned(5, 5)
        };
        let policy_index = self.policy.indexes.first();
        let index = match (gsi, policy_index) {
            (GsiKind::Policy, Some(i)) => Some(i.clone()),
            (GsiKind::SameNameOtherKey, Some(i)) => Some(GlobalIndex {
                name: i.name.clone(),
                key: other_key(),
                projection: Projection::All,
            }),
            (GsiKind::Extra, _) | (GsiKind::Policy | GsiKind::SameNameOtherKey, None)
                if !matches!(gsi, GsiKind::None) && self.knobs.on("hand_made_extra_gsi") =>
            {
                Some(GlobalIndex {
                    name: "ops_index".into(),
                    key: other_key(),
                    projection: Projection::KeysOnly,
                })
            }
            _ => None,
        };
        let local = match (lsi, &key.sort) {
            (true, Some(_)) => self.policy.local_indexes.first().cloned().or_else(|| {
                Some(LocalIndex {
                    name: "ops_local".into(),
                    sort: KeyAttribute {
                        name: "other".into(),
                        kind: AttributeKind::S,
                    },
                    projection: Projection::All,
                })
            }),
            _ => None,
        };
        let tags = match tags {
            TagKind::None => BTreeMap::new(),
            TagKind::User => BTreeMap::from([("team".to_string(), "ops".to_string())]),
            TagKind::OtherFamily => BTreeMap::from([(FAMILY_TAG.to_string(), SIBLING.to_string())]),
        };
        TableSpec {
            name,
            key,
            billing,
            global_indexes: index
                .into_iter()
                .map(|index| IndexSpec { index, billing })
                .collect(),
            local_indexes: local.into_iter().collect(),
            table_class: None,
            deletion_protection: false,
            stream: None,
            encryption: None,
            tags,
            warm: None,
        }
    }

    /// The first global index of `table` when `index` (`None` when not, or when it has none).
    fn first_index(&self, table: &str, index: bool) -> Option<String> {
        if !index {
            return None;
        }
        let world = self.account.world();
        let first = world.tables.get(table)?.gsis.first()?;
        Some(first.name.clone())
    }

    /// The scalable key a target or scheduled-action `act` names: one dimension (read or write)
    /// of the picked table of `ours`, or of its first index when `index` (the table's own when
    /// it has none); `None`: no table.
    fn picked_key(&self, ours: &[String], act: &Act) -> Option<ScalableKey> {
        let (Act::Target {
            pick, index, read, ..
        }
        | Act::ScheduledAction {
            pick, index, read, ..
        }) = act
        else {
            unreachable!("{act:?} names no scalable target")
        };
        let table = Self::pick(ours, *pick)?;
        let gsi = self.first_index(table, *index);
        let dimension = match (gsi.is_some(), *read) {
            (false, true) => ScalableDimension::TableRead,
            (false, false) => ScalableDimension::TableWrite,
            (true, true) => ScalableDimension::IndexRead,
            (true, false) => ScalableDimension::IndexWrite,
        };
        Some(fake_aws::key_for(table, gsi.as_deref(), dimension))
    }

    /// A foreign act; refusals by DynamoDB are part of life and ignored.
    pub(super) fn act(&self, act: &Act) {
        let account = &self.account;
        let ours = self.ours();
        match act {
            Act::HandMade { .. } => {
                let _ = account.create_table(PERSON, &self.hand_made(act));
            }
            Act::Restored { ago, on_demand: od } => {
                let calendar = self.policy.calendar();
                let mut slot = calendar.floor(account.now());
                for _ in 0..*ago {
                    slot = calendar.previous(slot);
                }
                let billing = if *od && self.knobs.on("hand_made_on_demand") {
                    on_demand()
                } else {
                    provisioned(7, 7)
                };
                let name = format!("{PREFIX}_{}", calendar.label(slot));
                let spec = TableSpec {
                    global_indexes: self
                        .policy
                        .indexes
                        .iter()
                        .map(|index| IndexSpec {
                            index: index.clone(),
                            billing,
                        })
                        .collect(),
                    local_indexes: self.policy.local_indexes.clone(),
                    ..fake_aws::table_spec(&name, self.policy.key.clone(), billing)
                };
                let _ = account.create_table(PERSON, &spec);
            }
            Act::Sibling(operation) => {
                account.sibling_run(&self.sibling, *operation);
            }
            Act::TagOtherFamily { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let tags = BTreeMap::from([(FAMILY_TAG.to_string(), SIBLING.to_string())]);
                    let _ = account.tag(PERSON, name, tags);
                }
            }
            Act::UntagFamily { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let _ = account.untag(PERSON, name, &[FAMILY_TAG.to_string()]);
                }
            }
            Act::Capacity { pick, to } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let to = to.map_or_else(on_demand, |(r, w)| provisioned(r, w));
                    let _ = account.update_capacity(PERSON, name, to);
                }
            }
            Act::Delete { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let _ = account.delete_table(PERSON, name);
                }
            }
            Act::DeleteNewest => {
                if let Some(name) = ours.last() {
                    let _ = account.delete_table(PERSON, name);
                }
            }
            Act::Target { policy, .. } => {
                let Some(key) = self.picked_key(&ours, act) else {
                    return;
                };
                if account.register_target(PERSON, &key, 1, 10).is_ok() && *policy {
                    let _ = account.put_policy(PERSON, &key, "ops-target-tracking", "TargetTrackingScaling");
                }
            }
            Act::StepPolicy { pick } => {
                let keys = our_target_keys(&account.world());
                if !keys.is_empty() {
                    let key = &keys[pick % keys.len()];
                    let _ = account.put_policy(PERSON, key, "ops-step-scaling", "StepScaling");
                }
            }
            Act::AddIndex { pick, like_policy } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let index = match (like_policy, self.policy.indexes.first()) {
                    (true, Some(i)) => GlobalIndex {
                        name: i.name.clone(),
                        key: other_key(),
                        projection: Projection::All,
                    },
                    (true, None) => return,
                    (false, _) => GlobalIndex {
                        name: "ops_index".into(),
                        key: other_key(),
                        projection: Projection::KeysOnly,
                    },
                };
                let billing = match account.world().tables.get(name).map(|t| t.billing) {
                    Some(Billing::OnDemand(_)) => on_demand(),
                    _ => provisioned(5, 5),
                };
                let _ = account.add_index(PERSON, name, &index, billing);
            }
            Act::DropScaling { pick, deregister } => {
                let keys = our_target_keys(&account.world());
                if keys.is_empty() {
                    return;
                }
                let key = &keys[pick % keys.len()];
                if *deregister {
                    let _ = account.deregister_target(PERSON, key);
                } else {
                    let _ = account.delete_policy(PERSON, key, &our_policy_name(key.dimension));
                }
            }
            Act::SpendDecreases { pick, index } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                // One increase (free), then decreases one unit at a time: the capacity stays
                // above what it was, so a phase change that lowers it meets a spent budget.
                for step in 0..=fake_aws::FREE_DECREASES + 1 {
                    let world = account.world();
                    let lowered = (|| {
                        let table = world.tables.get(name)?;
                        let gsi = table.gsis.first().filter(|_| *index);
                        let billing = gsi.map_or(table.billing, |g| g.billing);
                        let Billing::Provisioned(c) = billing else {
                            return None;
                        };
                        let read = if step == 0 { c.read + 100 } else { c.read - 1 };
                        Some((gsi.map(|g| g.name.clone()), provisioned(read, c.write)))
                    })();
                    let Some((gsi, to)) = lowered else {
                        return;
                    };
                    let done = match gsi {
                        Some(gsi) => account.update_index_capacity(PERSON, name, &gsi, to),
                        None => account.update_capacity(PERSON, name, to),
                    };
                    if done.is_err() {
                        return;
                    }
                    account.advance(Duration::seconds(15));
                }
            }
            Act::DisableKey { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let _ = account.disable_key(PERSON, name);
                }
            }
            Act::Archive { pick, act } => {
                let world = account.world();
                let done: Vec<&fake_aws::Export> = world
                    .exports
                    .values()
                    .filter(|e| e.status == ddb_rollover::table::ExportStatus::Completed)
                    .collect();
                if done.is_empty() {
                    return;
                }
                match account.archive_act(PERSON, done[*pick % done.len()], *act) {
                    Ok(()) => count(format!("archive act {act:?}")),
                    Err(_) => count(format!("archive act {act:?} refused")),
                }
            }
            Act::PreWarm { pick, index, high } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let gsi = self.first_index(name, *index);
                let _ = account.raise_warm(PERSON, name, gsi.as_deref(), pre_warmed(*high));
            }
            Act::WriteItems { pick, n } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let stamp = account.now().timestamp_millis();
                let items: Vec<String> = (0..*n).map(|i| format!("{name}#{stamp}#{i}")).collect();
                match account.write_items(PERSON, name, &items) {
                    Ok(()) => count("item writes accepted"),
                    Err(e) if e.contains("AccessDeniedException") => count("item writes refused by a seal"),
                    Err(_) => count("item writes refused"),
                }
            }
            Act::ResourcePolicy { pick } => {
                let Some(name) = Self::pick(&ours, *pick) else {
                    return;
                };
                let theirs = serde_json::json!({
                    "Sid": "TheirReaders",
                    "Effect": "Allow",
                    "Principal": {"AWS": "arn:aws:iam::123456789012:role/readers"},
                    "Action": "dynamodb:GetItem",
                    "Resource": fake_aws::TABLE_ARN_PREFIX.to_string() + name,
                });
                let _ = match pick % 4 {
                    0 => account.put_resource_policy(
                        PERSON,
                        name,
                        &serde_json::json!({"Version": "2012-10-17", "Statement": [theirs]}).to_string(),
                    ),
                    1 => {
                        let current = account
                            .world()
                            .tables
                            .get(name)
                            .and_then(|t| t.resource_policy.as_ref())
                            .and_then(|p| serde_json::from_str::<serde_json::Value>(&p.document).ok());
                        let mut document = current
                            .unwrap_or_else(|| serde_json::json!({"Version": "2012-10-17", "Statement": []}));
                        if let Some(list) = document["Statement"].as_array_mut() {
                            list.push(theirs);
                        }
                        account.put_resource_policy(PERSON, name, &document.to_string())
                    }
                    2 => account.delete_resource_policy(PERSON, name),
                    _ => {
                        let impostor = serde_json::json!({
                            "Sid": ddb_rollover::table::SEAL_SID,
                            "Effect": "Allow",
                            "Principal": "*",
                            "Action": "dynamodb:PutItem",
                            "Resource": fake_aws::TABLE_ARN_PREFIX.to_string() + name,
                        });
                        account.put_resource_policy(
                            PERSON,
                            name,
                            &serde_json::json!({"Version": "2012-10-17", "Statement": [impostor]})
                                .to_string(),
                        )
                    }
                };
            }
            Act::TagPeriod { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let tags = BTreeMap::from([
                        (
                            "ddb-rollover:period-start".to_string(),
                            "2001-01-01T00:00:00+00:00".to_string(),
                        ),
                        (
                            "ddb-rollover:period-end".to_string(),
                            "2001-01-02T00:00:00+00:00".to_string(),
                        ),
                    ]);
                    let _ = account.tag(PERSON, name, tags);
                }
            }
            Act::ScheduledAction { delete, .. } => {
                let Some(key) = self.picked_key(&ours, act) else {
                    return;
                };
                let world = account.world();
                if *delete {
                    for action in world
                        .targets
                        .get(&key)
                        .into_iter()
                        .flat_map(|t| &t.scheduled_actions)
                    {
                        let _ = account.delete_scheduled_action(PERSON, &key, &action.name);
                    }
                    return;
                }
                let registered =
                    world.targets.contains_key(&key) || account.register_target(PERSON, &key, 1, 10).is_ok();
                if registered {
                    let _ = account.put_scheduled_action(PERSON, &key, "ops-nightly");
                }
            }
            Act::ForeignDestination { .. }
            | Act::DisableDestination { .. }
            | Act::DestinationPrecision { .. }
            | Act::DeleteFamilyStream => self.stream_act(act),
            Act::ForeignMapping { .. }
            | Act::DeleteMapping { .. }
            | Act::DisableMapping { .. }
            | Act::DeleteConsumer => self.mapping_act(act),
            Act::LedgerDelete { .. }
            | Act::LedgerEdit { .. }
            | Act::DeleteLedger { .. }
            | Act::CrashedLease { .. }
            | Act::CrashedIntent { .. }
            | Act::Recreate { .. }
            | Act::NamedLikeOurs { .. }
            | Act::Init
            | Act::Restore { .. } => unreachable!("{act:?} is played by ledger_act"),
            Act::DeletionProtection { pick } => {
                if let Some(name) = Self::pick(&ours, *pick) {
                    let _ = account.set_deletion_protection(PERSON, name, true);
                }
            }
            Act::Adopt { pick, claimable } => {
                // The operator names a table under our prefix that our runs did not make; the
                // real `adopt`, with the operator's own credentials, decides whether to tag it.
                let world = account.world();
                let candidates: Vec<String> = {
                    let w = &world;
                    let g = Ground {
                        policy: &self.policy,
                        world: w,
                    };
                    let any: Vec<String> = w
                        .tables
                        .values()
                        .filter(|t| t.name.starts_with(&format!("{PREFIX}_")) && !g.provably_ours(t))
                        .map(|t| t.name.clone())
                        .collect();
                    let by_name: Vec<String> = w
                        .tables
                        .values()
                        .filter(|t| g.claimable_by_name(t))
                        .map(|t| t.name.clone())
                        .collect();
                    if *claimable && !by_name.is_empty() {
                        by_name
                    } else {
                        any
                    }
                };
                let Some(name) = Self::pick(&candidates, *pick) else {
                    return;
                };
                let (report, tagged) = account.adopt(&self.policy, name);
                if let Ok(report) = &report {
                    for line in &report.tables {
                        match &line.action {
                            ddb_rollover::Adoption::Refused { reasons } => {
                                for reason in reasons {
                                    let short: String = reason.chars().take(60).collect();
                                    count(format!("adopt refused: {short}"));
                                }
                            }
                            _ => count(format!("adopt {}", line.outcome.as_str())),
                        }
                    }
                }
                if let Ok(report) = report {
                    let done: Vec<&str> = report
                        .tables
                        .iter()
                        .filter(|l| l.outcome == ddb_rollover::LineOutcome::Done)
                        .map(|l| l.table.as_str())
                        .collect();
                    assert_eq!(
                        done, tagged,
                        "adopt reported {done:?} done but tagged {tagged:?}: {report:?}"
                    );
                }
            }
        }
    }
}
