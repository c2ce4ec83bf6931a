//! `adopt`: an operator vouches for tables this family did not create (made by hand, or by a
//! version before the family tag), so retention may delete them like the ones it created.
//! Runs never adopt: only CreateTable and this command write the family tag.
//!
//! Each named table is checked against its [verdict](crate::verdict) first: it must be ours by
//! name (or by our period tags), keyed and locally indexed as the policy says, with nothing
//! foreign on it (another family's tag, scalable targets or scaling policies that are not
//! ours), and its tags must be readable. Then it gets our family tag, its period tags, the
//! policy hash and `ddb-rollover:adopted`. Dry run first: nothing is written unless asked.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::changes::TagChange;
use crate::control::{ControlPlane, ControlPlaneError};
use crate::observe::observe_tables;
use crate::policy::Policy;
use crate::tags::{own_tags, TAG_ADOPTED};
use crate::verdict::{ForeignPart, Judge, NoEvidence, OwnedBy, Owner};

/// What `adopt` does with one named table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Adoption {
    /// Checked: these tags make it this family's.
    Tag { tags: BTreeMap<String, String> },
    /// Already carries our family tag.
    AlreadyOurs,
    /// Not adopted, for these reasons.
    Refused { reasons: Vec<String> },
}

/// One table's adoption and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AdoptionLine {
    pub table: String,
    #[serde(flatten)]
    pub adoption: Adoption,
    /// `planned` (dry run), `done`, `unchanged`, `refused` or `failed`.
    pub outcome: &'static str,
    /// Parts of the table that stay foreign after adoption (indexes that are not the
    /// policy's): no action touches them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AdoptReport {
    pub at: DateTime<Utc>,
    pub prefix: String,
    pub dry_run: bool,
    pub tables: Vec<AdoptionLine>,
}

impl AdoptReport {
    /// Every named table is ours now (or would be, in a dry run).
    pub fn succeeded(&self) -> bool {
        self.tables
            .iter()
            .all(|line| matches!(line.outcome, "planned" | "done" | "unchanged"))
    }
}

/// Decides, for each of `names`, whether it may be adopted, from `observed` (each table read in
/// full: tags and scalable targets).
pub fn plan_adoption(
    policy: &Policy,
    now: DateTime<Utc>,
    observed: &[crate::observed::ObservedTable],
    names: &[String],
) -> Vec<(String, Adoption, Vec<String>)> {
    let judge = Judge::new(policy);
    let calendar = policy.calendar();
    names
        .iter()
        .map(|name| {
            let refused = |reason: String| Adoption::Refused { reasons: vec![reason] };
            let Some(table) = observed.iter().find(|t| &t.name == name) else {
                return (name.clone(), refused("no such table".into()), Vec::new());
            };
            let Some(verdict) = judge.verdict(table) else {
                let reason = format!("its name does not start with {:?}", policy.naming().name_prefix());
                return (name.clone(), refused(reason), Vec::new());
            };
            let notes: Vec<String> = verdict
                .foreign
                .iter()
                .filter(|part| matches!(part, ForeignPart::Index { .. }))
                .map(|part| format!("{part}: stays foreign, untouched"))
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
                        .filter(|missing| **missing != NoEvidence::NoFamilyTag)
                        .map(ToString::to_string)
                        .chain(
                            (table.status == crate::observed::TableStatus::Deleting)
                                .then(|| "it is being deleted".to_string()),
                        )
                        .collect();
                    if reasons.is_empty() {
                        let have = table.tags.clone().unwrap_or_default();
                        let mut tags: BTreeMap<String, String> = own_tags(&policy.prefix, &calendar, *slot, &policy.hash())
                            .into_iter()
                            .filter(|(key, _)| !have.contains_key(key) || key == crate::tags::TAG_FAMILY)
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
    now: DateTime<Utc>,
    names: &[String],
    dry_run: bool,
) -> Result<AdoptReport, ControlPlaneError> {
    let observation = observe_tables(control, policy, names).await?;
    let mut tables = Vec::new();
    for (name, adoption, notes) in plan_adoption(policy, now, &observation.tables, names) {
        let unreadable = observation.unreadable.iter().find(|e| e.table == name);
        let (outcome, error) = match (&adoption, unreadable) {
            (_, Some(error)) => ("failed", Some(error.to_string())),
            (Adoption::Refused { .. }, None) => ("refused", None),
            (Adoption::AlreadyOurs, None) => ("unchanged", None),
            (Adoption::Tag { .. }, None) if dry_run => ("planned", None),
            (Adoption::Tag { tags }, None) => {
                let table = observation.tables.iter().find(|t| t.name == name);
                let change = TagChange {
                    name: name.clone(),
                    arn: table.and_then(|t| t.arn.clone()).unwrap_or_default(),
                    tags: tags.clone(),
                };
                match control.tag_table(&change).await {
                    Ok(()) => ("done", None),
                    Err(e) => ("failed", Some(e.to_string())),
                }
            }
        };
        tables.push(AdoptionLine {
            table: name,
            adoption,
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
