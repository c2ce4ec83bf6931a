//! `adopt`: an operator vouches for tables this family did not create (made by hand, or by a
//! version before the family tag), so retention may delete them like the ones it created.
//! Runs never adopt: only CreateTable and this command write the family tag.
//!
//! Each named table is checked against its [verdict](crate::plan::verdict) first: it must be ours by
//! name (or by our period tags), keyed and locally indexed as the policy says, not another
//! family's, and its tags must be readable. Then it gets our family tag, its period tags, the
//! policy hash and `ddb-rollover:adopted`. Dry run first: nothing is written unless asked.
//! Parts of it that are not the policy's (a global index, a scalable target, a scaling policy
//! or scheduled action, a deletion protection the policy does not ask for) stay someone
//! else's: the report names each, and retention does not delete the table while one is there.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::plan::verdict::{Judge, NoEvidence, OwnedBy, Owner};
use crate::plan::Operation;
use crate::policy::tags::{own_tags, TAG_ADOPTED};
use crate::policy::Policy;
use crate::run::clock::CheckedInstant;
use crate::run::control::{ControlPlane, ControlPlaneError};
use crate::run::observe::observe_tables;
use crate::run::operator::{LineOutcome, OperatorLine};
use crate::table::changes::TagChange;

/// What `adopt` does with one named table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Adoption {
    /// Checked: these tags make it this family's.
    Tag {
        /// Our tags to add, by key.
        tags: BTreeMap<String, String>,
    },
    /// Already carries our family tag.
    AlreadyOurs,
    /// Not adopted, for these reasons.
    Refused {
        /// Why, one sentence each.
        reasons: Vec<String>,
    },
}

/// One table's adoption and how it ended. Its notes are the parts of the table that stay
/// foreign after adoption (the verdict's foreign parts): no action touches them, and retention
/// does not delete the table while one is there.
pub type AdoptionLine = OperatorLine<Adoption>;

/// What `adopt` did with each table it was given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AdoptReport {
    /// When the adoption ran.
    pub at: DateTime<Utc>,
    /// The policy's table-name prefix.
    pub prefix: String,
    /// Whether the adoption only planned, changing nothing.
    pub dry_run: bool,
    /// One line per table named.
    pub tables: Vec<AdoptionLine>,
}

impl AdoptReport {
    /// Every named table is ours now (or would be, in a dry run).
    pub fn succeeded(&self) -> bool {
        self.tables.iter().all(|line| line.outcome.succeeded())
    }
}

/// Decides, for each of `names`, whether it may be adopted, from `observed` (each table read in
/// full: tags and scalable targets).
pub(crate) fn plan_adoption(
    policy: &Policy,
    now: DateTime<Utc>,
    observed: &[crate::table::ObservedTable],
    names: &[String],
) -> Vec<(String, Adoption, Vec<String>)> {
    let judge = Judge::new(policy);
    let calendar = policy.calendar();
    names
        .iter()
        .map(|name| {
            let refused = |reason: String| Adoption::Refused { reasons: vec![reason] };
            let prefix = policy.naming().name_prefix();
            if !name.starts_with(&prefix) {
                let reason = format!("its name does not start with {prefix:?}");
                return (name.clone(), refused(reason), Vec::new());
            }
            let verdict = observed
                .iter()
                .find(|t| &t.name == name)
                .and_then(|table| Some((table, judge.verdict(table)?)));
            let Some((table, verdict)) = verdict else {
                return (name.clone(), refused("no such table".into()), Vec::new());
            };
            let notes: Vec<String> = verdict
                .foreign
                .iter()
                .map(|part| {
                    format!("{part}: stays someone else's, untouched; retention will not delete this table while it is there")
                })
                .collect();
            let adoption = match &verdict.owner {
                Owner::NotOurs { why } => refused(format!(
                    "not this policy's table: {why}; adopt takes only tables named and keyed like the policy's"
                )),
                Owner::Ours {
                    by: OwnedBy::FamilyTag | OwnedBy::Adopted,
                    ..
                } => Adoption::AlreadyOurs,
                Owner::Ours { slot, .. } => {
                    let reasons: Vec<String> = verdict
                        .not_deletable
                        .iter()
                        // The family tag is what adoption writes; a foreign part is noted, and
                        // vetoes deletion for as long as it is there.
                        .filter(|missing| {
                            !matches!(
                                missing,
                                NoEvidence::NoFamilyTag
                                    | NoEvidence::ForeignIndexes
                                    | NoEvidence::ForeignScaling
                                    | NoEvidence::ForeignDeletionProtection
                                    | NoEvidence::ForeignResourcePolicy
                                    | NoEvidence::ForeignKinesisDestination
                                    | NoEvidence::ForeignEventSourceMapping
                                    // Read once the table is ours and due for deletion.
                                    | NoEvidence::ResourcePolicyNotRead
                                    | NoEvidence::DestinationsNotRead
                                    | NoEvidence::MappingsNotRead
                            )
                        })
                        .map(ToString::to_string)
                        .chain(
                            (table.status == crate::table::TableStatus::Deleting)
                                .then(|| "it is being deleted".to_string()),
                        )
                        .collect();
                    if reasons.is_empty() {
                        let have = table.tags.clone().unwrap_or_default();
                        let mut tags: BTreeMap<String, String> = own_tags(&policy.prefix, &calendar, *slot, &policy.hash())
                            .into_iter()
                            .filter(|(key, _)| !have.contains_key(key) || key == crate::policy::tags::TAG_FAMILY)
                            .collect();
                        tags.insert(TAG_ADOPTED.to_string(), now.to_rfc3339());
                        Adoption::Tag { tags }
                    } else {
                        Adoption::Refused { reasons }
                    }
                }
            };
            (name.clone(), adoption, notes)
        })
        .collect()
}

/// Reads the named tables in full, decides, and (unless `dry_run`) tags the ones that pass.
pub async fn adopt<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    at: &CheckedInstant,
    names: &[String],
    dry_run: bool,
) -> Result<AdoptReport, ControlPlaneError> {
    // Adopting writes tags dated by the clock: checked as create_new's is.
    at.assert_covers(policy, Operation::CreateNew, dry_run);
    let now = at.at();
    let observation = observe_tables(control, policy, names).await?;
    let mut tables = Vec::new();
    for (name, adoption, notes) in plan_adoption(policy, now, &observation.tables, names) {
        let unreadable = observation.unreadable.iter().find(|e| e.table == name);
        let (outcome, error) = match (&adoption, unreadable) {
            (_, Some(error)) => (LineOutcome::Failed, Some(error.to_string())),
            (Adoption::Refused { .. }, None) => (LineOutcome::Refused, None),
            (Adoption::AlreadyOurs, None) => (LineOutcome::Unchanged, None),
            (Adoption::Tag { .. }, None) if dry_run => (LineOutcome::Planned, None),
            (Adoption::Tag { tags }, None) => {
                let table = observation.tables.iter().find(|t| t.name == name);
                let change = TagChange {
                    name: name.clone(),
                    arn: table.and_then(|t| t.arn.clone()).unwrap_or_default(),
                    tags: tags.clone(),
                };
                match control.tag_table(&change).await {
                    Ok(()) => (LineOutcome::Done, None),
                    Err(e) => (LineOutcome::Failed, Some(e.to_string())),
                }
            }
        };
        tables.push(AdoptionLine {
            table: name,
            action: adoption,
            outcome,
            notes,
            error,
        });
    }
    Ok(AdoptReport {
        at: now,
        prefix: policy.prefix.clone(),
        dry_run,
        tables,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::scaling::{
        ObservedScalableTarget, ObservedScalingPolicy, ScalableDimension, ScalableKey,
    };
    use crate::policy::settings::{AttributeKind, Billing, Capacity, KeyAttribute, KeySchema};
    use crate::policy::tags::{TAG_FAMILY, TAG_PERIOD_END, TAG_PERIOD_START, TAG_POLICY_HASH};
    use crate::table::{ObservedTable, TableStatus};

    fn policy() -> Policy {
        Policy::from_toml("prefix = \"ts\"\n[retention]\ndelete_after = 3\n").unwrap()
    }

    /// A hand-made table with the policy's name and key, read in full (tags: none).
    fn hand_made(name: &str) -> ObservedTable {
        let mut table = ObservedTable::active(name, Billing::Provisioned(Capacity { read: 1, write: 1 }));
        table.key = Some(policy().key);
        table.tags = Some(BTreeMap::new());
        table
    }

    fn decide(tables: &[ObservedTable], names: &[&str]) -> Vec<(String, Adoption)> {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let now = chrono::DateTime::parse_from_rfc3339("2018-10-26T10:00:00Z")
            .unwrap()
            .to_utc();
        plan_adoption(&policy(), now, tables, &names)
            .into_iter()
            .map(|(name, adoption, _)| (name, adoption))
            .collect()
    }

    fn reasons(adoption: &Adoption) -> String {
        match adoption {
            Adoption::Refused { reasons } => reasons.join("; "),
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_hand_made_table_named_and_keyed_like_ours_gets_the_family_and_its_period() {
        let decided = decide(&[hand_made("ts_2018-10-20")], &["ts_2018-10-20"]);
        let Adoption::Tag { tags } = &decided[0].1 else {
            panic!("{decided:#?}")
        };
        assert_eq!(tags[TAG_FAMILY], "ts");
        assert_eq!(tags[TAG_PERIOD_START], "2018-10-20T00:00:00+00:00");
        assert_eq!(tags[TAG_PERIOD_END], "2018-10-21T00:00:00+00:00");
        assert_eq!(tags[TAG_POLICY_HASH], policy().hash());
        assert_eq!(tags[TAG_ADOPTED], "2018-10-26T10:00:00+00:00");
        // Period tags it already carries (an older version's) are kept as they are.
        let mut older = hand_made("ts_2018-10-20");
        older.tags = Some(BTreeMap::from([(TAG_PERIOD_START.to_string(), "x".to_string())]));
        let Adoption::Tag { tags } = &decide(&[older], &["ts_2018-10-20"])[0].1 else {
            panic!()
        };
        assert!(!tags.contains_key(TAG_PERIOD_START));
    }

    #[test]
    fn what_adopt_refuses_and_why() {
        let mut look_alike = hand_made("ts_2018-10-21");
        look_alike.key = Some(KeySchema {
            partition: KeyAttribute {
                name: "id".into(),
                kind: AttributeKind::S,
            },
            sort: None,
        });
        let mut other_family = hand_made("ts_2018-10-22");
        other_family.tags = Some(BTreeMap::from([(TAG_FAMILY.to_string(), "ts_eu".to_string())]));
        let mut under_target = hand_made("ts_2018-10-23");
        under_target.scaling = Some(vec![ObservedScalableTarget {
            key: ScalableKey {
                resource_id: "table/ts_2018-10-23".into(),
                dimension: ScalableDimension::TableRead,
            },
            min: 1,
            max: 5,
            policies: vec![ObservedScalingPolicy {
                name: "theirs".into(),
                policy_type: "StepScaling".into(),
                metric: None,
                target_value: None,
            }],
            scheduled_actions: Vec::new(),
        }]);
        let mut no_tags = hand_made("ts_2018-10-24");
        no_tags.tags = None;
        no_tags.tags_unsupported = true;
        let mut deleting = hand_made("ts_2018-10-25");
        deleting.status = TableStatus::Deleting;
        let mut ours = hand_made("ts_2018-10-19");
        ours.tags = Some(BTreeMap::from([(TAG_FAMILY.to_string(), "ts".to_string())]));
        let tables = [look_alike, other_family, under_target, no_tags, deleting, ours];
        let decided = decide(
            &tables,
            &[
                "ts_2018-10-21",
                "ts_2018-10-22",
                "ts_2018-10-23",
                "ts_2018-10-24",
                "ts_2018-10-25",
                "ts_2018-10-19",
                "ts_2018-10-18",
                "other_2018-10-18",
            ],
        );
        assert!(reasons(&decided[0].1).contains("its key is id (S)"));
        assert!(reasons(&decided[1].1).contains("\"ts_eu\""));
        assert!(matches!(decided[2].1, Adoption::Tag { .. }), "{:?}", decided[2].1);
        assert!(reasons(&decided[3].1).contains("cannot read tags"));
        assert!(reasons(&decided[4].1).contains("being deleted"));
        assert_eq!(decided[5].1, Adoption::AlreadyOurs);
        assert_eq!(reasons(&decided[6].1), "no such table");
        assert!(reasons(&decided[7].1).contains("does not start with \"ts_\""));
    }

    #[test]
    fn adopt_says_each_foreign_part_keeps_the_table_from_retention() {
        let mut table = hand_made("ts_2018-10-23");
        table.deletion_protection = true;
        table.global_indexes.push(crate::table::ObservedIndex {
            name: "by_hand".into(),
            status: TableStatus::Active,
            backfilling: false,
            billing: Billing::Provisioned(Capacity { read: 1, write: 1 }),
            decreases_today: 0,
            last_decrease: None,
            key: None,
            projection: None,
            warm: None,
        });
        table.scaling = Some(vec![ObservedScalableTarget {
            key: ScalableKey {
                resource_id: "table/ts_2018-10-23".into(),
                dimension: ScalableDimension::TableRead,
            },
            min: 1,
            max: 5,
            policies: Vec::new(),
            scheduled_actions: vec!["nightly".into()],
        }]);
        let now = chrono::DateTime::parse_from_rfc3339("2018-10-26T10:00:00Z")
            .unwrap()
            .to_utc();
        let decided = plan_adoption(&policy(), now, &[table], &["ts_2018-10-23".to_string()]);
        let (_, adoption, notes) = &decided[0];
        assert!(matches!(adoption, Adoption::Tag { .. }), "{adoption:?}");
        assert_eq!(notes.len(), 3, "{notes:#?}");
        for (note, part) in notes.iter().zip([
            "index by_hand",
            "scheduled actions: nightly",
            "deletion protection",
        ]) {
            assert!(note.contains(part), "{note}");
            assert!(note.contains("retention will not delete this table"), "{note}");
        }
    }
}
