//! `adopt`: an operator vouches for tables this family did not create (made by hand, or by a
//! version before the ledger), so the runs manage them, and retention may delete them, like the
//! ones it created. Runs never adopt: only CreateTable, `init` (on our family tag) and this
//! command put a table in the family's ledger.
//!
//! Each named table is checked against its [verdict](crate::plan::verdict) first: it must be
//! named as one of the policy's periods, keyed and locally indexed as the policy says, not
//! another family's and not being deleted. Then the ledger records it with the identity
//! DynamoDB shows now (so a table made again under the name later is not ours), and, where
//! the endpoint keeps tags, it gets our family tag, its period tags, the policy hash and
//! `ddb-rollover:adopted`. Dry run first: nothing is written unless asked. Parts of it that are
//! not the policy's (a global index, a scalable target, a scaling policy or scheduled action, a
//! deletion protection the policy does not ask for, someone's resource-based policy statement,
//! Kinesis destination or event source mapping) stay someone else's: the report names each,
//! and retention does not delete the table while one is there.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::ledger::{
    bounds_of, feeds_named_ours, Book, Feeds, LedgerState, Origin, PeriodBounds, TableIdentity, TableRecord,
    TableState,
};
use crate::plan::verdict::{same_local_indexes, Judge, NotOurs, Owner};
use crate::plan::Operation;
use crate::policy::naming::Ownership;
use crate::policy::tags::{own_tags, TAG_ADOPTED, TAG_FAMILY};
use crate::policy::Policy;
use crate::run::clock::CheckedInstant;
use crate::run::control::{ControlPlane, ControlPlaneError};
use crate::run::ledger::Recorder;
use crate::run::observe::observe_tables;
use crate::run::operator::{LineOutcome, OperatorLine};
use crate::table::changes::TagChange;
use crate::table::{ObservedTable, TableStatus};

/// What `adopt` does with one named table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Adoption {
    /// Checked: the family's ledger records it with this identity and period, and these tags
    /// make it this family's for people and IAM (none where the endpoint keeps no tags).
    Record {
        /// The identity DynamoDB shows now.
        identity: TableIdentity,
        /// The period it holds, by its name.
        period: PeriodBounds,
        /// Our tags to add, by key.
        tags: BTreeMap<String, String>,
        /// The change feeds on it now that the policy names (its destination to the family's
        /// stream, the mappings of the family's consumer function, by UUID): recorded as ours
        /// with it, so each is named here, for the operator to vouch for before `--yes`.
        #[serde(skip_serializing_if = "feeds_empty")]
        feeds: Feeds,
    },
    /// The ledger records it already, with the identity it shows.
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
pub(crate) type AdoptionLine = OperatorLine<Adoption>;

/// What `adopt` did with each table it was given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
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
/// full: tags and scalable targets) and the family's ledger.
pub(crate) fn plan_adoption(
    policy: &Policy,
    now: DateTime<Utc>,
    observed: &[ObservedTable],
    book: &Book,
    names: &[String],
) -> Vec<(String, Adoption, Vec<String>)> {
    let judge = Judge::new(policy, book);
    names
        .iter()
        .map(|name| {
            let prefix = policy.naming().name_prefix();
            if !name.starts_with(&prefix) {
                let reason = format!("its name does not start with {prefix:?}");
                return (name.clone(), refused(vec![reason]), Vec::new());
            }
            let verdict = observed
                .iter()
                .find(|t| &t.name == name)
                .and_then(|table| Some((table, judge.verdict(table)?)));
            let Some((table, verdict)) = verdict else {
                return (name.clone(), refused(vec!["no such table".into()]), Vec::new());
            };
            let notes: Vec<String> = verdict
                .foreign
                .iter()
                .map(|part| {
                    format!("{part}: stays someone else's, untouched; retention will not delete this table while it is there")
                })
                .collect();
            let family_tag_lost = table
                .tags
                .as_ref()
                .is_some_and(|tags| tags.get(TAG_FAMILY) != Some(&policy.prefix));
            let adoption = match &verdict.owner {
                // Ours by its identity, but not keyed as the policy is now (made under another
                // key, or the policy's key changed since): the writers' items do not fit it, and
                // adopting it again vouches for nothing.
                Owner::Ours { .. } if key_problem(policy, table).is_some() => {
                    refused(key_problem(policy, table).into_iter().collect())
                }
                // Ours by its identity, its family tag gone or another's: tagged again.
                Owner::Ours { .. } if family_tag_lost => candidate(policy, now, table),
                Owner::Ours { .. } => Adoption::AlreadyOurs,
                Owner::NotOurs {
                    why: NotOurs::NotRecorded | NotOurs::MadeAgain { .. } | NotOurs::LookAlike { .. },
                } => candidate(policy, now, table),
                Owner::NotOurs { why } => refused(vec![format!(
                    "not this policy's table: {why}; adopt takes only tables named and keyed like the policy's"
                )]),
            };
            (name.clone(), adoption, notes)
        })
        .collect()
}

/// Why `table`'s key schema is not the policy's, if it is not.
fn key_problem(policy: &Policy, table: &ObservedTable) -> Option<String> {
    match &table.key {
        Some(key) if *key == policy.key => None,
        Some(key) => Some(format!(
            "its key is {key}, not the policy's ({}): the writers' items do not fit it",
            policy.key
        )),
        None => Some("DescribeTable did not give its key".into()),
    }
}

fn refused(reasons: Vec<String>) -> Adoption {
    Adoption::Refused { reasons }
}

/// What adopting `table`, which nobody recorded, takes; or every reason it may not be adopted.
fn candidate(policy: &Policy, now: DateTime<Utc>, table: &ObservedTable) -> Adoption {
    let naming = policy.naming();
    let mut reasons = Vec::new();
    let slot = match naming.classify(&table.name) {
        Ownership::Owned(slot) => Some(slot),
        _ => {
            reasons.push(format!("its name is not a {} label of the policy", policy.period));
            None
        }
    };
    reasons.extend(key_problem(policy, table));
    if !same_local_indexes(table, &policy.local_indexes) {
        reasons.push("its local secondary indexes are not the policy's".into());
    }
    if table.status == TableStatus::Deleting {
        reasons.push("it is being deleted".into());
    }
    if table.tags.is_none() && !table.tags_unsupported {
        reasons.push("its tags could not be read".into());
    }
    let identity = table.identity();
    if identity.is_none() {
        reasons.push("DescribeTable did not give its ARN and creation time, which the ledger records".into());
    }
    let (Some(slot), Some(identity), true) = (slot, identity, reasons.is_empty()) else {
        return refused(reasons);
    };
    let calendar = policy.calendar();
    let tags = match &table.tags {
        Some(have) => {
            let mut tags: BTreeMap<String, String> =
                own_tags(&policy.prefix, &calendar, slot, &policy.hash())
                    .into_iter()
                    .filter(|(key, _)| !have.contains_key(key) || key == TAG_FAMILY)
                    .collect();
            tags.insert(TAG_ADOPTED.to_string(), now.to_rfc3339());
            tags
        }
        // No tagging API (DynamoDB Local): the ledger alone.
        None => BTreeMap::new(),
    };
    Adoption::Record {
        identity,
        period: bounds_of(&calendar, slot),
        tags,
        feeds: feeds_named_ours(policy, table),
    }
}

fn feeds_empty(feeds: &Feeds) -> bool {
    feeds.destinations.is_empty() && feeds.mappings.is_empty()
}

/// Reads the named tables in full, decides, and (unless `dry_run`) records and tags the ones
/// that pass: the ledger's record first (the evidence), then the tags (for people and IAM).
pub async fn adopt<C: ControlPlane>(
    control: &C,
    policy: &Policy,
    at: &CheckedInstant,
    names: &[String],
    dry_run: bool,
) -> Result<AdoptReport, ControlPlaneError> {
    // Adopting writes records dated by the clock: checked as create_new's is.
    at.assert_covers(policy, Operation::CreateNew, dry_run);
    let now = at.at();
    let observation = observe_tables(control, policy, names).await?;
    let recorder = Recorder::new(control, policy, &observation.book, at.wall().unwrap_or(now));
    let mut tables = Vec::new();
    // Nothing to record into: the ledger is started by `init` (or a new family's first run).
    let unstarted = !matches!(observation.book.state, LedgerState::Started(_));
    for (name, adoption, notes) in plan_adoption(policy, now, &observation.tables, &observation.book, names) {
        let adoption = match adoption {
            Adoption::Record { .. } if unstarted => Adoption::Refused {
                reasons: vec![format!(
                    "the family's ledger {} is not started: run `ddb-rollover init` first (it records the tables carrying this family's tag; adopt then vouches for others)",
                    policy.naming().ledger_name()
                )],
            },
            adoption => adoption,
        };
        let unreadable = observation.unreadable.iter().find(|e| e.table == name);
        let (outcome, error) = match (&adoption, unreadable) {
            (_, Some(error)) => (LineOutcome::Failed, Some(error.to_string())),
            (Adoption::Refused { .. }, None) => (LineOutcome::Refused, None),
            (Adoption::AlreadyOurs, None) => (LineOutcome::Unchanged, None),
            (Adoption::Record { .. }, None) if dry_run => (LineOutcome::Planned, None),
            (
                Adoption::Record {
                    identity,
                    period,
                    tags,
                    feeds,
                },
                None,
            ) => {
                // The operator vouches for the table, and with it for the feeds the policy
                // names that are on it now: each named in the line (`feeds`).
                let feeds = feeds.clone();
                let adopted = Adopted {
                    name: &name,
                    identity,
                    period,
                    feeds,
                };
                match record(control, &recorder, policy, adopted, tags, now).await {
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

/// What the ledger records of a table an operator adopts.
struct Adopted<'a> {
    name: &'a str,
    identity: &'a TableIdentity,
    period: &'a PeriodBounds,
    feeds: Feeds,
}

/// The ledger's record of an adopted table, then its tags.
async fn record<C: ControlPlane>(
    control: &C,
    recorder: &Recorder<'_, C>,
    policy: &Policy,
    adopted: Adopted<'_>,
    tags: &BTreeMap<String, String>,
    now: DateTime<Utc>,
) -> Result<(), ControlPlaneError> {
    let Adopted {
        name,
        identity,
        period,
        feeds,
    } = adopted;
    let record = TableRecord {
        name: name.to_string(),
        state: TableState::Made {
            identity: identity.clone(),
        },
        origin: Origin::Adopted { at: now },
        period: *period,
        key: policy.key.clone(),
        policy_hash: policy.hash(),
        scaling_policies: Vec::new(),
        seal: None,
        lowered: None,
        feeds: Some(feeds),
    };
    recorder.table(&record).await?;
    if tags.is_empty() {
        return Ok(());
    }
    let change = TagChange {
        name: name.to_string(),
        arn: identity.arn.clone(),
        tags: tags.clone(),
    };
    control.tag_table(&change).await
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
        let recorded: Vec<ObservedTable> = tables
            .iter()
            .filter(|t| {
                t.tags
                    .as_ref()
                    .is_some_and(|tags| tags.get(TAG_FAMILY).is_some_and(|f| f == "ts"))
            })
            .cloned()
            .collect();
        plan_adoption(
            &policy(),
            now,
            tables,
            &Book::enrolling(&policy(), &recorded),
            &names,
        )
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
        let Adoption::Record { tags, .. } = &decided[0].1 else {
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
        let Adoption::Record { tags, .. } = &decide(&[older], &["ts_2018-10-20"])[0].1 else {
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
                arn: Some(format!(
                    "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1:policyName/{}",
                    "theirs"
                )),
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
        assert!(
            matches!(decided[2].1, Adoption::Record { .. }),
            "{:?}",
            decided[2].1
        );
        // No tagging API (DynamoDB Local): recorded in the ledger alone, no tags.
        assert!(
            matches!(&decided[3].1, Adoption::Record { tags, .. } if tags.is_empty()),
            "{:?}",
            decided[3].1
        );
        assert!(reasons(&decided[4].1).contains("being deleted"));
        assert_eq!(decided[5].1, Adoption::AlreadyOurs);
        assert_eq!(reasons(&decided[6].1), "no such table");
        assert!(reasons(&decided[7].1).contains("does not start with \"ts_\""));
    }

    /// Issue 38: a table the ledger records as ours (it carries our family tag) but keyed
    /// otherwise than the policy (made before the policy's key changed) was answered "already
    /// ours" (unchanged). Refused, naming both keys.
    #[test]
    fn a_table_of_ours_on_another_key_is_refused_naming_the_keys() {
        let other_key = KeySchema {
            partition: KeyAttribute {
                name: "id".into(),
                kind: AttributeKind::S,
            },
            sort: None,
        };
        let mut table = hand_made("ts_2018-10-19");
        table.key = Some(other_key.clone());
        table.tags = Some(BTreeMap::from([(TAG_FAMILY.to_string(), "ts".to_string())]));
        // The ledger recorded it when the policy's key was `id`.
        let earlier =
            Policy::from_toml("prefix = \"ts\"\n[key]\npartition = { name = \"id\", type = \"S\" }\n")
                .unwrap();
        assert_eq!(earlier.key, other_key);
        let book = Book::enrolling(&earlier, std::slice::from_ref(&table));
        assert!(book.table("ts_2018-10-19").is_some(), "{book:?}");
        let now = chrono::DateTime::parse_from_rfc3339("2018-10-26T10:00:00Z")
            .unwrap()
            .to_utc();
        let decided = plan_adoption(&policy(), now, &[table], &book, &["ts_2018-10-19".to_string()]);
        let reasons = reasons(&decided[0].1);
        assert!(
            reasons.contains("its key is id (S), not the policy's (pk (N), sk (N))"),
            "{reasons}"
        );
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
        let decided = plan_adoption(
            &policy(),
            now,
            &[table],
            &Book::default(),
            &["ts_2018-10-23".to_string()],
        );
        let (_, adoption, notes) = &decided[0];
        assert!(matches!(adoption, Adoption::Record { .. }), "{adoption:?}");
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
