//! What one run changed: the calls read off the difference between the state just before and
//! just after it (nothing else acts on the account meanwhile).

use super::*;

/// What our run did: the difference between the state before and after it, as the calls the
/// invariants read (one per effect, at the run's time).
pub(super) fn diff(before: &World, after: &World, at: DateTime<Utc>) -> Vec<Call> {
    let mut effects = Vec::new();
    for (name, old) in &before.tables {
        let Some(new) = after.tables.get(name) else {
            effects.push((
                "DeleteTable",
                Effect::DeletedTable {
                    table: Box::new(old.clone()),
                },
            ));
            continue;
        };
        if old.billing != new.billing {
            effects.push((
                "UpdateTable",
                Effect::TableCapacity {
                    table: name.clone(),
                    from: old.billing,
                    to: new.billing,
                },
            ));
        }
        if old.warm.units != new.warm.units {
            effects.push((
                "UpdateTable",
                Effect::Warm {
                    table: name.clone(),
                    index: None,
                    from: old.warm.units,
                    to: new.warm.units,
                },
            ));
        }
        for gsi in &new.gsis {
            if let Some(was) = old.gsi(&gsi.name).filter(|was| was.warm.units != gsi.warm.units) {
                effects.push((
                    "UpdateTable",
                    Effect::Warm {
                        table: name.clone(),
                        index: Some(gsi.name.clone()),
                        from: was.warm.units,
                        to: gsi.warm.units,
                    },
                ));
            }
            match old.gsi(&gsi.name) {
                None => effects.push((
                    "UpdateTable",
                    Effect::AddedIndex {
                        table: name.clone(),
                        index: gsi.name.clone(),
                    },
                )),
                Some(was) if was.billing != gsi.billing => effects.push((
                    "UpdateTable",
                    Effect::IndexCapacity {
                        table: name.clone(),
                        index: gsi.name.clone(),
                        from: was.billing,
                        to: gsi.billing,
                    },
                )),
                Some(_) => {}
            }
        }
        let settings = [
            (
                old.deletion_protection != new.deletion_protection,
                format!("deletion protection {}", new.deletion_protection),
            ),
            (old.stream != new.stream, format!("stream {:?}", new.stream)),
        ];
        for (_, setting) in settings.into_iter().filter(|(changed, _)| *changed) {
            effects.push((
                "UpdateTable",
                Effect::Setting {
                    table: name.clone(),
                    setting,
                },
            ));
        }
        let written: BTreeMap<String, String> = new
            .tags
            .iter()
            .filter(|(k, v)| old.tags.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !written.is_empty() {
            effects.push((
                "TagResource",
                Effect::Tagged {
                    table: name.clone(),
                    tags: written,
                    before: old.tags.clone(),
                },
            ));
        }
        let removed: Vec<String> = old
            .tags
            .keys()
            .filter(|k| !new.tags.contains_key(*k))
            .cloned()
            .collect();
        if !removed.is_empty() {
            effects.push((
                "UntagResource",
                Effect::Untagged {
                    table: name.clone(),
                    keys: removed,
                },
            ));
        }
        if let (None, Some(attribute)) = (&old.ttl, &new.ttl) {
            effects.push((
                "UpdateTimeToLive",
                Effect::Ttl {
                    table: name.clone(),
                    attribute: attribute.clone(),
                },
            ));
        }
        if !old.pitr && new.pitr {
            effects.push(("UpdateContinuousBackups", Effect::Pitr { table: name.clone() }));
        }
    }
    for name in after.tables.keys().filter(|n| !before.tables.contains_key(*n)) {
        effects.push(("CreateTable", Effect::CreatedTable { table: name.clone() }));
    }
    for (key, old) in &before.targets {
        let Some(new) = after.targets.get(key) else {
            effects.push((
                "DeregisterScalableTarget",
                Effect::DeregisteredTarget {
                    key: key.clone(),
                    maker: old.maker.clone(),
                    policies: old.policies.clone(),
                    scheduled_actions: old.scheduled_actions.clone(),
                },
            ));
            continue;
        };
        for action in &old.scheduled_actions {
            if !new.scheduled_actions.iter().any(|a| a.name == action.name) {
                effects.push((
                    "DeleteScheduledAction",
                    Effect::DeletedScheduledAction {
                        key: key.clone(),
                        action: action.clone(),
                    },
                ));
            }
        }
        if (old.min, old.max) != (new.min, new.max) {
            effects.push((
                "RegisterScalableTarget",
                Effect::RegisteredTarget {
                    key: key.clone(),
                    before: Some((old.min, old.max)),
                    after: (new.min, new.max),
                },
            ));
        }
        for policy in &old.policies {
            match new.policies.iter().find(|p| p.name == policy.name) {
                None => effects.push((
                    "DeleteScalingPolicy",
                    Effect::DeletedPolicy {
                        key: key.clone(),
                        policy: policy.clone(),
                    },
                )),
                Some(now) if (now.target_value, &now.metric) != (policy.target_value, &policy.metric) => {
                    effects.push(put_policy(key, &policy.name, false))
                }
                Some(_) => {}
            }
        }
        for policy in new
            .policies
            .iter()
            .filter(|p| !old.policies.iter().any(|o| o.name == p.name))
        {
            effects.push(put_policy(key, &policy.name, true));
        }
    }
    for (key, new) in after
        .targets
        .iter()
        .filter(|(k, _)| !before.targets.contains_key(*k))
    {
        effects.push((
            "RegisterScalableTarget",
            Effect::RegisteredTarget {
                key: key.clone(),
                before: None,
                after: (new.min, new.max),
            },
        ));
        for policy in &new.policies {
            effects.push(put_policy(key, &policy.name, true));
        }
    }
    effects
        .into_iter()
        .map(|(operation, effect)| Call {
            at,
            actor: Maker::Us,
            role: Some(PREFIX.to_string()),
            operation,
            table: effect.table().to_string(),
            error: None,
            effects: vec![effect],
        })
        .collect()
}

/// The PutScalingPolicy that made (`created`) or changed the policy `name` on `key`.
fn put_policy(key: &ScalableKey, name: &str, created: bool) -> (&'static str, Effect) {
    (
        "PutScalingPolicy",
        Effect::PutPolicy {
            key: key.clone(),
            name: name.to_string(),
            created,
        },
    )
}
