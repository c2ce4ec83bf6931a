//! Template upkeep: the settings of the policy's `[template]` that an existing table has lost
//! or never had (tags, TTL, point-in-time recovery, deletion protection, stream, encryption,
//! and the policy's indexes on current and pre-built tables), each restored by its own action.

use std::collections::BTreeMap;

use crate::plan::context::{Context, Owned};
use crate::plan::decision::{Decision, PlanItem};
use crate::plan::deferral::DeferralCause;
use crate::plan::verdict::{ForeignPart, Reading};
use crate::policy::settings::Encryption;
use crate::policy::tags::{TAG_FAMILY, TAG_POLICY_HASH};
use crate::policy::Policy;
use crate::table::changes::{on_off, SettingChange, TableSetting, TagChange, TtlChange};
use crate::table::{ObservedEncryption, ObservedTable, TableStatus};

impl Context<'_> {
    /// One item per template setting the table lacks. Only ACTIVE tables: DynamoDB refuses
    /// these calls on tables being created, updated or deleted, and a later run comes back.
    /// `table_update_planned`: the table's main item is already an UpdateTable, so settings
    /// that need one wait for a later run.
    pub(crate) fn upkeep_items(&self, owned: &Owned, table_update_planned: bool) -> Vec<PlanItem> {
        let table = owned.table;
        if table.status != TableStatus::Active {
            return Vec::new();
        }
        let mut items = Vec::new();
        if let Some(item) = self.tag_item(owned) {
            items.push(item);
        }
        if let Some(item) = self.ttl_item(owned) {
            items.push(item);
        }
        if self.policy.wants_point_in_time_recovery() && table.point_in_time_recovery == Some(false) {
            let why = if self.policy.archive().is_some() {
                "point-in-time recovery is off; the template wants it, and archive exports need it"
            } else {
                "point-in-time recovery is off; the template wants it"
            };
            items.push(self.item(
                owned,
                Decision::EnablePointInTimeRecovery {
                    name: table.name.clone(),
                },
                why.into(),
            ));
        }
        let mut update_planned = table_update_planned;
        for (setting, why) in self.missing_settings(owned) {
            if let Some(veto) = stream_off_veto(owned, &setting) {
                items.push(self.item(owned, Decision::Skipped, format!("{why}: not turned off, {veto}")));
                continue;
            }
            let change = SettingChange {
                name: table.name.clone(),
                setting,
            };
            if update_planned {
                items.push(self.item(
                    owned,
                    Decision::Deferred {
                        retry_after: None,
                        cause: DeferralCause::OneUpdateAtATime,
                    },
                    format!(
                        "{why}: {} waits for a later run (DynamoDB applies one table update at a time)",
                        change.setting
                    ),
                ));
            } else {
                let reason = format!("{why}: set {}", change.setting);
                items.push(self.item(owned, Decision::Configure(change), reason));
                update_planned = true;
            }
        }
        items.extend(self.index_notes(owned));
        items
    }

    /// The user's tags that are missing or differ, and our own period and policy tags when
    /// missing (never rewritten; for people and IAM conditions: the ledger records the period). The family tag itself is written only by CreateTable and
    /// `adopt`: never onto a table that exists, whoever made it.
    fn tag_item(&self, owned: &Owned) -> Option<PlanItem> {
        let have = owned.table.tags.as_ref()?;
        let arn = owned.table.arn.clone()?;
        let mut want: BTreeMap<String, String> = self
            .policy
            .template
            .tags
            .iter()
            .filter(|(key, value)| have.get(*key) != Some(*value))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (key, value) in self.own_tags(owned.slot) {
            if key != TAG_FAMILY && !have.contains_key(&key) {
                want.insert(key, value);
            }
        }
        if want.is_empty() {
            return None;
        }
        let keys: Vec<&str> = want.keys().map(String::as_str).collect();
        let reason = if keys == [TAG_POLICY_HASH] {
            "tag the policy hash".to_string()
        } else {
            format!("tags missing or changed: {}", keys.join(", "))
        };
        let change = TagChange {
            name: owned.table.name.clone(),
            arn,
            tags: want,
        };
        Some(self.item(owned, Decision::Tag(change), reason))
    }

    fn ttl_item(&self, owned: &Owned) -> Option<PlanItem> {
        let attribute = self.policy.template.ttl_attribute.as_ref()?;
        let ttl = owned.table.ttl.as_ref()?;
        if ttl.is_on_with(attribute) {
            return None;
        }
        let (decision, reason) = match (ttl.status.as_str(), &ttl.attribute) {
            (_, Some(other)) if ttl.is_on() => (
                Decision::Unchanged,
                format!(
                    "TTL is on with attribute {other:?}, the template says {attribute:?}: not changed automatically, since switching means turning TTL off first (stop expiring items) for up to an hour"
                ),
            ),
            ("DISABLING", _) => (
                Decision::Deferred {
                    retry_after: None,
                    cause: DeferralCause::TtlDisabling,
                },
                format!("TTL is being turned off; turn on with {attribute:?} in a later run"),
            ),
            _ => (
                Decision::EnableTtl(TtlChange {
                    name: owned.table.name.clone(),
                    attribute: attribute.clone(),
                }),
                format!("TTL is off: turn it on with attribute {attribute:?}"),
            ),
        };
        Some(self.item(owned, decision, reason))
    }

    /// Settings changed by UpdateTable, in the order they are restored, with why.
    fn missing_settings(&self, owned: &Owned) -> Vec<(TableSetting, String)> {
        let table = owned.table;
        let template = &self.policy.template;
        let mut settings = Vec::new();
        // Only ever turned on: a protection the policy does not ask for is someone else's
        // (the verdict's foreign part), never turned off.
        if template.deletion_protection == Some(true) && !table.deletion_protection {
            settings.push((
                TableSetting::DeletionProtection(true),
                format!("deletion protection is {}", on_off(table.deletion_protection)),
            ));
        }
        if let (Some(step), Some(want)) = (stream_step(self.policy, table), template.stream) {
            let have = table.stream.map_or("off", |v| v.as_policy_str());
            let want = want.map_or("off", |v| v.as_policy_str());
            settings.push((step, format!("stream is {have}, the template says {want}")));
        }
        if let Some(want) = &template.encryption {
            let matches = match (want, &table.encryption) {
                (Encryption::AwsOwned, ObservedEncryption::AwsOwned) => true,
                // DescribeTable does not tell the AWS managed key from a customer's by ARN.
                (Encryption::AwsManaged, ObservedEncryption::Kms { .. }) => true,
                (Encryption::CustomerManaged { kms_key }, ObservedEncryption::Kms { key_arn }) => {
                    kms_key.starts_with("alias/")
                        || key_arn
                            .as_deref()
                            .is_none_or(|arn| arn == kms_key || arn.ends_with(&format!("/{kms_key}")))
                }
                _ => false,
            };
            if !matches {
                settings.push((
                    TableSetting::Encryption(want.clone()),
                    format!("encryption differs from the template's {want}"),
                ));
            }
        }
        settings.extend(self.missing_indexes(owned));
        settings
    }
}

/// The stream change the template asks of `table`, if any. A stream's view cannot change in
/// place: the first step turns it off, a later run turns it on with the template's view.
fn stream_step(policy: &Policy, table: &ObservedTable) -> Option<TableSetting> {
    let want = policy.template.stream?;
    if table.stream == want {
        return None;
    }
    Some(if table.stream.is_some() && want.is_some() {
        TableSetting::Stream(None)
    } else {
        TableSetting::Stream(want)
    })
}

/// Whether the template's next step on `table` turns its stream off: what the event source
/// mappings on the stream must be read for, since someone else's would lose its feed.
pub(crate) fn turns_stream_off(policy: &Policy, table: &ObservedTable) -> bool {
    stream_step(policy, table) == Some(TableSetting::Stream(None))
}

/// Why `setting` may not be made: turning the stream off while someone else's Lambda event
/// source mapping reads it would end their consumer's feed (a foreign part vetoes it, as it
/// vetoes a deletion), and with the mappings unread there is no evidence none does. On a
/// server without Lambda (dynalite, DynamoDB Local) none can.
fn stream_off_veto(owned: &Owned, setting: &TableSetting) -> Option<String> {
    if *setting != TableSetting::Stream(None) {
        return None;
    }
    let verdict = &owned.verdict;
    let theirs: Vec<String> = verdict
        .foreign
        .iter()
        .filter_map(|part| match part {
            ForeignPart::EventSourceMapping {
                uuid, function_arn, ..
            } => Some(format!("{uuid} to {function_arn}")),
            _ => None,
        })
        .collect();
    if !theirs.is_empty() {
        return Some(format!(
            "since someone else's Lambda event source mapping reads it ({}): turning it off would end their consumer's feed",
            theirs.join(", ")
        ));
    }
    (verdict.seen.mappings == Reading::NotRead)
        .then(|| "since the event source mappings on it were not read this run (no evidence none is someone else's)".to_string())
}
