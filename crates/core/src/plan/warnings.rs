//! The plan's warnings: what a run or an operator's view says beside its items, each from the
//! plan's own items or what it saw, so every run and view words them alike.

use std::collections::{BTreeMap, BTreeSet};

use super::context::Owned;
use super::decision::{Decision, PlanItem};
use crate::plan::verdict::{NotOurs, Owner};
use crate::policy::naming::{Ownership, TableNaming};
use crate::policy::tags::TAG_FAMILY;
use crate::policy::Policy;

/// The one rule for neighbours under our name prefix, from a plan's own items (so every run
/// and view says them from what it decided on): each table that is not ours is named in one
/// warning, once. Another family's, when its tags were read (the operator's views read every
/// table's), in that family's warning; every other table named like ours (not in the ledger,
/// made again under the name, keyed otherwise, or only listed by a run that does not describe
/// it, as create_new lists every table but its own) in one warning, which both runs say alike.
/// A name that is no period label at all is only a foreign line. They are never touched, but an
/// operator should know they share the prefix (and the IAM resource pattern `table/{prefix}_*`).
pub(crate) fn neighbour_warnings(naming: &TableNaming, items: &[PlanItem]) -> Vec<String> {
    let listed = |names: &[&str]| {
        const SHOWN: usize = 5;
        let mut text = names.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
        if names.len() > SHOWN {
            text.push_str(&format!(" and {} more", names.len() - SHOWN));
        }
        text
    };
    let mut families: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut unproven: BTreeSet<&str> = BTreeSet::new();
    for item in items {
        let name = item.facts.table.as_str();
        match item.verdict.as_ref().map(|v| &v.owner) {
            Some(Owner::NotOurs { why }) => match why {
                NotOurs::OtherFamily { family } => {
                    families.entry(family).or_default().insert(name);
                }
                NotOurs::LookAlike { .. } | NotOurs::NotRecorded | NotOurs::MadeAgain { .. } => {
                    unproven.insert(name);
                }
                NotOurs::UnknownName | NotOurs::ShortImport { .. } => {}
            },
            None if item.decision == Decision::Foreign && named_like_ours(naming, name) => {
                unproven.insert(name);
            }
            _ => {}
        }
    }
    let unproven: Vec<&str> = unproven.into_iter().collect();
    let prefix = naming.name_prefix();
    let mut warnings: Vec<String> = families
        .into_iter()
        .map(|(family, names)| {
            let names: Vec<&str> = names.into_iter().collect();
            format!(
                "{} table(s) of another ddb-rollover family ({family:?}) share this policy's name prefix {prefix:?}: {}. \
                 They are never touched by this policy; IAM patterns like table/{prefix}* match them too",
                names.len(),
                listed(&names)
            )
        })
        .collect();
    if !unproven.is_empty() {
        warnings.push(format!(
            "{} table(s) named like this policy's are not this family's (not in the family's ledger, made again under the name, or keyed otherwise): {}. \
             They are never touched; `ddb-rollover status` says whose each is, `ddb-rollover adopt` records one an operator vouches for (`ddb-rollover init` records those carrying this family's tag)",
            unproven.len(),
            listed(&unproven)
        ));
    }
    warnings
}

/// One warning naming the tables the ledger records as ours whose tags, where read, name
/// another family: ours by identity, but the functions' roles decide changes by that tag (the
/// change is refused, loudly) and retention never deletes without our family tag.
pub(super) fn retagged_warning(policy: &Policy, owned: &[Owned]) -> Option<String> {
    let retagged: Vec<String> = owned
        .iter()
        .filter_map(|o| {
            let family = o.table.tags.as_ref()?.get(TAG_FAMILY)?;
            (*family != policy.prefix).then(|| format!("{} ({family:?})", o.table.name))
        })
        .collect();
    if retagged.is_empty() {
        return None;
    }
    Some(format!(
        "{} table(s) the family's ledger records as its own carry another family's {TAG_FAMILY} tag: {}. \
         Still this family's by the identity recorded when it made them, but the functions' roles refuse changes to them \
         (their IAM decides by that tag) and retention never deletes them; put this family's tag back (ddb-rollover adopt)",
        retagged.len(),
        retagged.join(", ")
    ))
}

/// Whether `name` is named like one of the family's tables: `{prefix}_{label}` for a label of
/// the policy's period, or of any period kind (a table made under an earlier `period`).
pub(super) fn named_like_ours(naming: &TableNaming, name: &str) -> bool {
    matches!(naming.classify(name), Ownership::Owned(_)) || naming.is_label_of_any_period(name)
}
