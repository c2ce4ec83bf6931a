//! The one ownership verdict: for each listed table, whose the table is, which of its parts are
//! not the policy's (global indexes, scalable targets, the scaling policies and scheduled
//! actions on them, a deletion protection the policy did not ask for), and whether retention
//! has positive evidence to delete it. A run computes it once per table
//! ([`Judge::verdict`]); every action of the planner asks it and nothing else, and the reports
//! and `status` print it.
//!
//! A name prefix alone never makes a table ours: a sibling family whose prefix nests in ours
//! (`ts_eu` under `ts`) shares it, and anyone can create a table named like ours.
//!
//! - A family tag naming another prefix makes the table another family's, whatever its name.
//! - Our family tag (written at CreateTable, or by an operator's `adopt`) makes it ours.
//! - `{prefix}_{label}` for the policy's period with the policy's key makes it ours by name:
//!   the runs manage it (the function's role refuses their writes to a table tagged for another
//!   family), but retention never deletes it without the family tag.
//! - Period tags on a name that is a label of some period: a table from a version before the
//!   family tag; managed, not deleted until adopted.
//! - A global index is the policy's only when its name, key schema and projection are; a
//!   scalable target is ours only when every policy on it is ours and no scheduled action is on
//!   it (we never create one); deletion protection is ours only when the policy's template asks
//!   for it. Anything else on a table is foreign, removes exactly the actions that would touch
//!   it, and keeps retention from deleting the table (deleting it would destroy the part, or
//!   override whoever protected it).

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;

use crate::policy::naming::{Ownership, TableNaming};
use crate::policy::period::Slot;
use crate::policy::scaling::{policy_name, resource_id, ScalableKey};
use crate::policy::settings::{KeySchema, LocalIndex, Projection};
use crate::policy::tags::{tagged_slot, TAG_ADOPTED, TAG_FAMILY, TAG_SHORT_IMPORT};
use crate::policy::Policy;
use crate::table::{ObservedTable, ObservedWarm};

/// Everything a run may do with one table, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    #[serde(flatten)]
    pub owner: Owner,
    /// The table's parts that are not the policy's: no action touches them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub foreign: Vec<ForeignPart>,
    /// Our own scalable targets on the table (every policy on them is ours, and no scheduled
    /// action is on them).
    #[serde(skip)]
    pub our_targets: Vec<ScalableKey>,
    /// Why retention may not delete the table; empty: positive evidence that it may.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_deletable: Vec<NoEvidence>,
    /// What the verdict could read: tags and scalable targets.
    #[serde(skip)]
    pub seen: Seen,
}

/// Whose the table is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "owner", rename_all = "snake_case")]
pub enum Owner {
    /// The policy manages the table, which holds `slot`.
    Ours {
        #[serde(skip)]
        slot: Slot,
        by: OwnedBy,
    },
    /// Starts with our name prefix but is not provably ours: reported, never touched.
    NotOurs { why: NotOurs },
}

/// The evidence that a table is ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnedBy {
    /// Our family tag, written when this family created it.
    FamilyTag,
    /// Our family tag, written by an operator's `adopt`.
    Adopted,
    /// `{prefix}_{label}` with the policy's key; the run did not read its tags.
    Name,
    /// `{prefix}_{label}` with the policy's key; its tags carry no family tag (hand-made, or
    /// made by a version before the tag).
    NameWithoutFamilyTag,
    /// Period tags from a version before the family tag, on `{prefix}_{label of some period}`.
    PeriodTags,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NotOurs {
    /// Another ddb-rollover family's table: its family tag names another prefix.
    OtherFamily { family: String },
    /// The rest of the name is not a label of our period, and no tag of ours claims it.
    UnknownName,
    /// The name is ours but the key schema is not, and no family tag claims it: a hand-made
    /// look-alike.
    LookAlike { have: KeySchema },
    /// `restore` imported it short of its archive: an operator looks into it before anything
    /// treats it as the period's table.
    ShortImport { why: String },
}

/// A part of a table that is not the policy's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "part", rename_all = "snake_case")]
pub enum ForeignPart {
    /// A global secondary index whose name, key schema or projection is not the policy's.
    Index { name: String, why: String },
    /// A scalable target without this policy's scaling policy.
    Target {
        key: ScalableKey,
        policies: Vec<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        scheduled_actions: Vec<String>,
    },
    /// One of our scalable targets that also carries policies that are not ours, or scheduled
    /// actions: ours is removed when the phase ends, the target never deregistered (that would
    /// delete theirs).
    SharedTarget {
        key: ScalableKey,
        policies: Vec<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        scheduled_actions: Vec<String>,
    },
    /// Deletion protection is on and the policy's template does not ask for it: someone turned
    /// it on to keep the table. Never turned off.
    DeletionProtection,
    /// Statements in the table's resource-based policy that are not our seal (by Sid, or
    /// position): someone else's. Never changed; DeleteTable would destroy them.
    ResourcePolicy { statements: Vec<String> },
}

/// A missing piece of the positive evidence retention needs to delete a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "missing", rename_all = "snake_case")]
pub enum NoEvidence {
    /// Not ours at all.
    NotOurs,
    /// Its tags were not read by this run.
    TagsNotRead,
    /// The endpoint has no tagging API and `retention.delete_without_tagging_api` is off.
    NoTaggingApi,
    /// Ours by name or period tags only: never created (or adopted) by this family.
    NoFamilyTag,
    /// Its key schema is not the policy's (or DescribeTable did not give it).
    KeyDiffers { have: Option<KeySchema> },
    /// Its local secondary indexes are not the policy's.
    LocalIndexesDiffer,
    /// Global secondary indexes that are not the policy's are on it: deleting the table would
    /// destroy them.
    ForeignIndexes,
    /// Scalable targets this policy did not create, policies that are not ours, or scheduled
    /// actions are on it.
    ForeignScaling,
    /// Deletion protection that the policy did not ask for is on.
    ForeignDeletionProtection,
    /// Someone else's statements are in its resource-based policy.
    ForeignResourcePolicy,
    /// The scalable targets on it could not be read this run.
    ScalingNotRead,
    /// Its resource-based policy was not read this run.
    ResourcePolicyNotRead,
}

/// What the verdict rests on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    pub tags: Reading,
    pub scaling: Reading,
    pub resource_policy: Reading,
}

/// Whether one of the optional reads was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reading {
    #[default]
    NotRead,
    /// The endpoint does not implement the API (DynamoDB Local's tags, Application Auto
    /// Scaling on DynamoDB Local and dynalite): nothing of that kind can exist there.
    Unsupported,
    Read,
}

/// Whose a scalable target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetOwner {
    /// No target is registered for the key (or targets were not read: see [`Verdict::seen`]).
    Absent,
    /// Every policy on it is ours.
    Ours,
    /// Ours and someone else's policies.
    Shared,
    /// No policy of ours.
    Foreign,
}

impl Verdict {
    pub fn is_ours(&self) -> bool {
        matches!(self.owner, Owner::Ours { .. })
    }

    /// The period the table holds, when it is ours.
    pub fn slot(&self) -> Option<Slot> {
        match self.owner {
            Owner::Ours { slot, .. } => Some(slot),
            Owner::NotOurs { .. } => None,
        }
    }

    /// Whether the global secondary index `name` is the policy's (its name, key schema and
    /// projection are).
    pub fn index_is_ours(&self, name: &str) -> bool {
        !self
            .foreign
            .iter()
            .any(|part| matches!(part, ForeignPart::Index { name: n, .. } if n == name))
    }

    /// Whose the scalable target `key` is.
    pub fn target(&self, key: &ScalableKey) -> TargetOwner {
        if self.our_targets.contains(key) {
            return TargetOwner::Ours;
        }
        self.foreign
            .iter()
            .find_map(|part| match part {
                ForeignPart::Target { key: k, .. } if k == key => Some(TargetOwner::Foreign),
                ForeignPart::SharedTarget { key: k, .. } if k == key => Some(TargetOwner::Shared),
                _ => None,
            })
            .unwrap_or(TargetOwner::Absent)
    }

    /// The targets and shared targets on one resource (`table/NAME` or its index's), which
    /// hold its throughput: a change to it would fight them.
    pub fn claims_on(&self, resource: &str) -> Vec<&ForeignPart> {
        self.foreign
            .iter()
            .filter(|part| match part {
                ForeignPart::Target { key, .. } | ForeignPart::SharedTarget { key, .. } => {
                    key.resource_id == resource
                }
                ForeignPart::Index { .. }
                | ForeignPart::DeletionProtection
                | ForeignPart::ResourcePolicy { .. } => false,
            })
            .collect()
    }

    /// Whether the throughput of the table itself is ours to change.
    pub fn table_capacity_is_ours(&self, table: &str) -> bool {
        self.claims_on(&resource_id(table, None)).is_empty()
    }

    /// Whether the throughput of the index `name` is ours to change.
    pub fn index_capacity_is_ours(&self, table: &str, name: &str) -> bool {
        self.index_is_ours(name) && self.claims_on(&resource_id(table, Some(name))).is_empty()
    }

    /// The warm throughput DescribeTable reports for the parts of `table` that are ours: the
    /// table's (`None`), then each of the policy's indexes' (by name). A part that reports none
    /// is left out. Warm throughput holds no capacity, so scalable targets do not claim it.
    pub fn warm_parts<'t>(&self, table: &'t ObservedTable) -> Vec<(Option<&'t str>, &'t ObservedWarm)> {
        let indexes = table
            .global_indexes
            .iter()
            .filter(|index| self.index_is_ours(&index.name))
            .filter_map(|index| Some((Some(index.name.as_str()), index.warm.as_ref()?)));
        table
            .warm
            .as_ref()
            .map(|warm| (None, warm))
            .into_iter()
            .chain(indexes)
            .collect()
    }

    /// Whether a change that touches every part of the table (a billing mode switch) is ours to
    /// make: no foreign index or scalable target is on it (a deletion protection someone set
    /// holds no throughput).
    pub fn whole_table_is_ours(&self) -> bool {
        self.is_ours()
            && self.foreign.iter().all(|part| {
                matches!(
                    part,
                    ForeignPart::DeletionProtection | ForeignPart::ResourcePolicy { .. }
                )
            })
    }

    /// Whether deletion protection is someone else's setting (on, and the policy does not ask
    /// for it): never turned off, by upkeep or before a deletion.
    pub fn protection_is_foreign(&self) -> bool {
        self.foreign.contains(&ForeignPart::DeletionProtection)
    }

    /// Whether the scalable targets were known when the verdict was made (read, or impossible on
    /// this endpoint).
    pub fn scaling_known(&self) -> bool {
        self.seen.scaling != Reading::NotRead
    }

    /// The short form reports print: `ours (family tag)`, `not ours (family "ts_eu")`, with the
    /// number of foreign parts.
    pub fn label(&self) -> String {
        let owner = match &self.owner {
            Owner::Ours { by, .. } => format!("ours ({by})"),
            Owner::NotOurs { why } => format!("not ours ({})", why.short()),
        };
        match self.foreign.len() {
            0 => owner,
            n => format!("{owner}, {n} foreign part(s)"),
        }
    }
}

impl fmt::Display for OwnedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OwnedBy::FamilyTag => "family tag",
            OwnedBy::Adopted => "adopted",
            OwnedBy::Name => "name, tags not read",
            OwnedBy::NameWithoutFamilyTag => "name, no family tag",
            OwnedBy::PeriodTags => "period tags, no family tag",
        })
    }
}

impl NotOurs {
    fn short(&self) -> String {
        match self {
            NotOurs::OtherFamily { family } => format!("family {family:?}"),
            NotOurs::UnknownName => "name".into(),
            NotOurs::LookAlike { .. } => "key".into(),
            NotOurs::ShortImport { .. } => "short import".into(),
        }
    }
}

impl fmt::Display for NotOurs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotOurs::OtherFamily { family } => {
                write!(f, "its {TAG_FAMILY} tag names another family, {family:?}")
            }
            NotOurs::UnknownName => {
                f.write_str("its name is not a label of the policy's period and no tag of ours claims it")
            }
            NotOurs::LookAlike { have } => write!(
                f,
                "its key is {have}, not the policy's, and no family tag claims it"
            ),
            NotOurs::ShortImport { why } => write!(
                f,
                "restore imported it short of its archive ({why}): look into it, delete it and restore again"
            ),
        }
    }
}

impl fmt::Display for ForeignPart {
    /// "index by_site (key differs)", "scalable target table/t read (policies: theirs)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ForeignPart::Index { name, why } => write!(f, "index {name} ({why})"),
            ForeignPart::Target {
                key,
                policies,
                scheduled_actions,
            } => {
                let theirs = attached(policies, scheduled_actions);
                if theirs.is_empty() {
                    write!(f, "scalable target {key} (no policy of ours)")
                } else {
                    write!(f, "scalable target {key} ({theirs})")
                }
            }
            ForeignPart::SharedTarget {
                key,
                policies,
                scheduled_actions,
            } => write!(
                f,
                "scalable target {key} (ours, and also {})",
                attached(policies, scheduled_actions)
            ),
            ForeignPart::DeletionProtection => {
                f.write_str("deletion protection (on, and the policy's template does not ask for it)")
            }
            ForeignPart::ResourcePolicy { statements } => write!(
                f,
                "resource-based policy statements that are not our seal ({})",
                statements.join(", ")
            ),
        }
    }
}

/// "policies: a, b; scheduled actions: c", leaving out an empty list.
fn attached(policies: &[String], scheduled_actions: &[String]) -> String {
    let mut parts = Vec::new();
    if !policies.is_empty() {
        parts.push(format!("policies: {}", policies.join(", ")));
    }
    if !scheduled_actions.is_empty() {
        parts.push(format!("scheduled actions: {}", scheduled_actions.join(", ")));
    }
    parts.join("; ")
}

impl fmt::Display for NoEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoEvidence::NotOurs => f.write_str("it is not this policy's"),
            NoEvidence::TagsNotRead => f.write_str("its tags were not read"),
            NoEvidence::NoTaggingApi => f.write_str(
                "the endpoint cannot read tags, so no family tag proves the table ours (retention.delete_without_tagging_api allows it on such endpoints)",
            ),
            NoEvidence::NoFamilyTag => write!(
                f,
                "it carries no {TAG_FAMILY} tag: this family did not create it (ddb-rollover adopt tags a table an operator vouches for)"
            ),
            NoEvidence::KeyDiffers { have: Some(have) } => write!(f, "its key is {have}, not the policy's"),
            NoEvidence::KeyDiffers { have: None } => f.write_str("its key schema is unknown"),
            NoEvidence::LocalIndexesDiffer => f.write_str("its local secondary indexes are not the policy's"),
            NoEvidence::ForeignIndexes => f.write_str(
                "global secondary indexes that are not this policy's are on it (deleting the table would destroy them)",
            ),
            NoEvidence::ForeignScaling => f.write_str(
                "scalable targets, scaling policies or scheduled actions that are not this policy's are on it",
            ),
            NoEvidence::ForeignDeletionProtection => f.write_str(
                "deletion protection is on and the policy's template does not ask for it: someone protected it",
            ),
            NoEvidence::ScalingNotRead => f.write_str("its scalable targets could not be read this run"),
            NoEvidence::ForeignResourcePolicy => f.write_str(
                "someone else's statements are in its resource-based policy (deleting the table would destroy them)",
            ),
            NoEvidence::ResourcePolicyNotRead => f.write_str("its resource-based policy was not read this run"),
        }
    }
}

/// Computes verdicts for one policy.
pub struct Judge<'a> {
    policy: &'a Policy,
    naming: TableNaming,
}

impl<'a> Judge<'a> {
    pub fn new(policy: &'a Policy) -> Judge<'a> {
        Judge {
            policy,
            naming: policy.naming(),
        }
    }

    /// The verdict on `table`; `None` when its name does not start with `{prefix}_` (not ours
    /// to mention).
    pub fn verdict(&self, table: &ObservedTable) -> Option<Verdict> {
        let by_name = self.naming.classify(&table.name);
        if by_name == Ownership::Unrelated {
            return None;
        }
        let seen = Seen {
            tags: reading(table.tags.is_some(), table.tags_unsupported),
            scaling: reading(table.scaling.is_some(), table.scaling_unsupported),
            resource_policy: reading(table.resource_policy.is_some(), table.resource_policy_unsupported),
        };
        let owner = self.owner(table, by_name);
        let (foreign, our_targets) = self.parts(table);
        let not_deletable = self.deletion(table, &owner, &foreign, seen);
        Some(Verdict {
            owner,
            foreign,
            our_targets,
            not_deletable,
            seen,
        })
    }

    fn owner(&self, table: &ObservedTable, by_name: Ownership) -> Owner {
        let not_ours = |why| Owner::NotOurs { why };
        let tags = table.tags.as_ref();
        let family = tags.and_then(|tags| tags.get(TAG_FAMILY));
        if let Some(why) = tags.and_then(|tags| tags.get(TAG_SHORT_IMPORT)) {
            return not_ours(NotOurs::ShortImport { why: why.clone() });
        }
        if let Some(family) = family.filter(|f| *f != self.naming.prefix()) {
            return not_ours(NotOurs::OtherFamily {
                family: family.clone(),
            });
        }
        let tagged = tags.and_then(|tags| tagged_slot(self.naming.calendar(), tags));
        let name_slot = match by_name {
            Ownership::Owned(slot) => Some(slot),
            _ => None,
        };
        let (slot, by) = if family.is_some() {
            // Placed by its period tags (a table made under another period or zone), else by
            // its name; when both place it, by the later of the two: tags anyone may rewrite
            // never make a table older than its name says (an older age dials down and deletes).
            let Some(slot) = tagged.max(name_slot) else {
                return not_ours(NotOurs::UnknownName);
            };
            let adopted = tags.is_some_and(|tags| tags.contains_key(TAG_ADOPTED));
            (
                slot,
                if adopted {
                    OwnedBy::Adopted
                } else {
                    OwnedBy::FamilyTag
                },
            )
        } else if let Some(slot) = name_slot {
            let by = if tags.is_some() {
                OwnedBy::NameWithoutFamilyTag
            } else {
                OwnedBy::Name
            };
            (tagged.map_or(slot, |tagged| tagged.max(slot)), by)
        } else if let Some(slot) = tagged.filter(|_| self.naming.is_label_of_any_period(&table.name)) {
            (slot, OwnedBy::PeriodTags)
        } else {
            return not_ours(NotOurs::UnknownName);
        };
        match &table.key {
            // A hand-made look-alike: named like ours, keyed otherwise, and no tag of ours.
            Some(have) if *have != self.policy.key && family.is_none() => {
                not_ours(NotOurs::LookAlike { have: have.clone() })
            }
            _ => Owner::Ours { slot, by },
        }
    }

    /// The foreign parts of the table, and our own scalable targets on it.
    fn parts(&self, table: &ObservedTable) -> (Vec<ForeignPart>, Vec<ScalableKey>) {
        let mut foreign = Vec::new();
        for index in &table.global_indexes {
            let why = match self.policy.indexes.iter().find(|want| want.name == index.name) {
                None => Some("not in the policy".to_string()),
                Some(want) => match (&index.key, &index.projection) {
                    (Some(key), _) if *key != want.key => {
                        Some(format!("its key is {key}, the policy's is {}", want.key))
                    }
                    (None, _) => Some("DescribeTable did not give its key".into()),
                    (_, Some(projection)) if !same_projection(projection, &want.projection) => Some(format!(
                        "it projects {projection}, the policy's projects {}",
                        want.projection
                    )),
                    (_, None) => Some("DescribeTable did not give its projection".into()),
                    _ => None,
                },
            };
            if let Some(why) = why {
                foreign.push(ForeignPart::Index {
                    name: index.name.clone(),
                    why,
                });
            }
        }
        let mut ours = Vec::new();
        let prefix = &self.policy.prefix;
        for target in table.scaling.iter().flatten() {
            let (mine, theirs): (Vec<&str>, Vec<&str>) = target
                .policies
                .iter()
                .map(|p| p.name.as_str())
                .partition(|name| *name == policy_name(prefix, target.key.dimension));
            let theirs: Vec<String> = theirs.into_iter().map(str::to_string).collect();
            let scheduled_actions = target.scheduled_actions.clone();
            match (mine.is_empty(), theirs.is_empty() && scheduled_actions.is_empty()) {
                (false, true) => ours.push(target.key.clone()),
                (false, false) => foreign.push(ForeignPart::SharedTarget {
                    key: target.key.clone(),
                    policies: theirs,
                    scheduled_actions,
                }),
                (true, _) => foreign.push(ForeignPart::Target {
                    key: target.key.clone(),
                    policies: theirs,
                    scheduled_actions,
                }),
            }
        }
        if table.deletion_protection && self.policy.template.deletion_protection != Some(true) {
            foreign.push(ForeignPart::DeletionProtection);
        }
        if let Some(policy) = &table.resource_policy {
            let statements = policy.foreign_statements();
            if !statements.is_empty() {
                foreign.push(ForeignPart::ResourcePolicy { statements });
            }
        }
        (foreign, ours)
    }

    /// Every piece of positive evidence retention needs and the table lacks.
    fn deletion(
        &self,
        table: &ObservedTable,
        owner: &Owner,
        foreign: &[ForeignPart],
        seen: Seen,
    ) -> Vec<NoEvidence> {
        let Owner::Ours { by, .. } = owner else {
            return vec![NoEvidence::NotOurs];
        };
        let mut missing = Vec::new();
        let opted_in = self
            .policy
            .retention
            .as_ref()
            .is_some_and(|r| r.delete_without_tagging_api);
        match (seen.tags, by) {
            (_, OwnedBy::FamilyTag | OwnedBy::Adopted) => {}
            (Reading::NotRead, _) => missing.push(NoEvidence::TagsNotRead),
            (Reading::Unsupported, OwnedBy::Name) if opted_in => {}
            (Reading::Unsupported, _) => missing.push(NoEvidence::NoTaggingApi),
            (Reading::Read, _) => missing.push(NoEvidence::NoFamilyTag),
        }
        if table.key.as_ref() != Some(&self.policy.key) {
            missing.push(NoEvidence::KeyDiffers {
                have: table.key.clone(),
            });
        }
        if !same_local_indexes(table, &self.policy.local_indexes) {
            missing.push(NoEvidence::LocalIndexesDiffer);
        }
        let any = |f: fn(&ForeignPart) -> bool| foreign.iter().any(f);
        if any(|part| matches!(part, ForeignPart::Index { .. })) {
            missing.push(NoEvidence::ForeignIndexes);
        }
        if any(|part| {
            matches!(
                part,
                ForeignPart::Target { .. } | ForeignPart::SharedTarget { .. }
            )
        }) {
            missing.push(NoEvidence::ForeignScaling);
        }
        if any(|part| matches!(part, ForeignPart::DeletionProtection)) {
            missing.push(NoEvidence::ForeignDeletionProtection);
        }
        if any(|part| matches!(part, ForeignPart::ResourcePolicy { .. })) {
            missing.push(NoEvidence::ForeignResourcePolicy);
        }
        if seen.scaling == Reading::NotRead {
            missing.push(NoEvidence::ScalingNotRead);
        }
        if seen.resource_policy == Reading::NotRead {
            missing.push(NoEvidence::ResourcePolicyNotRead);
        }
        missing
    }
}

fn reading(read: bool, unsupported: bool) -> Reading {
    match (read, unsupported) {
        (true, _) => Reading::Read,
        (false, true) => Reading::Unsupported,
        (false, false) => Reading::NotRead,
    }
}

/// Projections compare as sets of attributes: DynamoDB does not promise their order.
fn same_projection(have: &Projection, want: &Projection) -> bool {
    match (have, want) {
        (Projection::Include(have), Projection::Include(want)) => {
            have.iter().collect::<BTreeSet<_>>() == want.iter().collect::<BTreeSet<_>>()
        }
        _ => have == want,
    }
}

/// Whether the table's local secondary indexes are exactly the policy's (name, key, projection).
fn same_local_indexes(table: &ObservedTable, want: &[LocalIndex]) -> bool {
    table.local_indexes.len() == want.len()
        && want.iter().all(|want| {
            table.local_indexes.iter().any(|have| {
                have.name == want.name
                    && have.key.as_ref().and_then(|k| k.sort.as_ref()) == Some(&want.sort)
                    && have
                        .projection
                        .as_ref()
                        .is_some_and(|p| same_projection(p, &want.projection))
            })
        })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::policy::scaling::{ObservedScalableTarget, ObservedScalingPolicy, ScalableDimension};
    use crate::policy::settings::{AttributeKind, Billing, Capacity, KeyAttribute};
    use crate::policy::tags::{TAG_PERIOD_END, TAG_PERIOD_START};
    use crate::table::{ObservedIndex, ObservedLocalIndex, TableStatus};

    const POLICY: &str = r#"
prefix = "ts"
[key]
partition = { name = "pk", type = "S" }
sort = { name = "sk", type = "S" }
[[indexes]]
name = "by_site"
partition = { name = "site", type = "S" }
[[local_indexes]]
name = "by_time"
sort = { name = "t", type = "N" }
[retention]
delete_after = 3
"#;

    fn policy() -> Policy {
        Policy::from_toml(POLICY).unwrap()
    }

    fn string(name: &str) -> KeyAttribute {
        KeyAttribute {
            name: name.into(),
            kind: AttributeKind::S,
        }
    }

    /// A table exactly as the policy makes it, as a run reads it: key, indexes, scalable targets
    /// (none), and `tags` (None: not read).
    fn table(name: &str, tags: Option<&[(&str, &str)]>) -> ObservedTable {
        let policy = policy();
        let mut table = ObservedTable::active(name, Billing::Provisioned(Capacity { read: 1, write: 1 }));
        table.key = Some(policy.key.clone());
        table.global_indexes = vec![ObservedIndex {
            name: "by_site".into(),
            status: TableStatus::Active,
            backfilling: false,
            billing: Billing::Provisioned(Capacity { read: 1, write: 1 }),
            decreases_today: 0,
            last_decrease: None,
            key: Some(policy.indexes[0].key.clone()),
            projection: Some(Projection::All),
            warm: None,
        }];
        table.local_indexes = vec![ObservedLocalIndex {
            name: "by_time".into(),
            key: Some(KeySchema {
                partition: string("pk"),
                sort: Some(policy.local_indexes[0].sort.clone()),
            }),
            projection: Some(Projection::All),
        }];
        table.tags = tags.map(|tags| {
            tags.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        });
        // Read, and none: the tests below play someone else's statements where they mean to.
        table.resource_policy = Some(crate::table::seal::ResourcePolicy::default());
        table
    }

    fn verdict(table: &ObservedTable) -> Option<Verdict> {
        Judge::new(&policy()).verdict(table)
    }

    fn period_tags(family: Option<&str>) -> Vec<(&str, &str)> {
        let mut tags = vec![
            (TAG_PERIOD_START, "2018-10-18T00:00:00+00:00"),
            (TAG_PERIOD_END, "2018-10-19T00:00:00+00:00"),
        ];
        tags.extend(family.map(|f| (TAG_FAMILY, f)));
        tags
    }

    fn owned_by(verdict: &Verdict) -> Option<OwnedBy> {
        match verdict.owner {
            Owner::Ours { by, .. } => Some(by),
            Owner::NotOurs { .. } => None,
        }
    }

    #[test]
    fn the_owner_follows_the_family_tag_then_the_name_and_key() {
        let family = [(TAG_FAMILY, "ts")];
        let made = verdict(&table("ts_2018-10-18", Some(&family))).unwrap();
        assert_eq!(owned_by(&made), Some(OwnedBy::FamilyTag));
        assert!(made.not_deletable.is_empty(), "{made:#?}");
        assert_eq!(made.label(), "ours (family tag)");

        let adopted = verdict(&table(
            "ts_2018-10-18",
            Some(&[(TAG_FAMILY, "ts"), (TAG_ADOPTED, "x")]),
        ))
        .unwrap();
        assert_eq!(owned_by(&adopted), Some(OwnedBy::Adopted));

        let unread = verdict(&table("ts_2018-10-18", None)).unwrap();
        assert_eq!(owned_by(&unread), Some(OwnedBy::Name));
        assert_eq!(unread.not_deletable, [NoEvidence::TagsNotRead]);

        let untagged = verdict(&table("ts_2018-10-18", Some(&[]))).unwrap();
        assert_eq!(owned_by(&untagged), Some(OwnedBy::NameWithoutFamilyTag));
        assert_eq!(untagged.not_deletable, [NoEvidence::NoFamilyTag]);

        // Another family's tag wins over any name; a sibling's name is not ours without tags.
        for name in ["ts_2018-10-18", "ts_eu_2018-10-18"] {
            let other = verdict(&table(name, Some(&[(TAG_FAMILY, "ts_eu")]))).unwrap();
            assert_eq!(
                other.owner,
                Owner::NotOurs {
                    why: NotOurs::OtherFamily {
                        family: "ts_eu".into()
                    }
                }
            );
            assert_eq!(other.not_deletable, [NoEvidence::NotOurs]);
        }
        assert_eq!(
            verdict(&table("ts_eu_2018-10-18", None)).unwrap().owner,
            Owner::NotOurs {
                why: NotOurs::UnknownName
            }
        );
        assert!(verdict(&table("other_2018-10-18", None)).is_none());
    }

    #[test]
    fn period_tags_place_tables_of_another_period_setting() {
        let monthly = verdict(&table("ts_2018-10", Some(&period_tags(Some("ts"))))).unwrap();
        assert_eq!(owned_by(&monthly), Some(OwnedBy::FamilyTag));
        // Before the family tag: period tags on a name of some period's label; never deleted.
        let older = verdict(&table("ts_2018-10", Some(&period_tags(None)))).unwrap();
        assert_eq!(owned_by(&older), Some(OwnedBy::PeriodTags));
        assert_eq!(older.not_deletable, [NoEvidence::NoFamilyTag]);
        assert_eq!(
            verdict(&table("ts_backup", Some(&period_tags(None))))
                .unwrap()
                .owner,
            Owner::NotOurs {
                why: NotOurs::UnknownName
            }
        );
    }

    #[test]
    fn a_look_alike_is_not_ours_unless_our_family_tag_says_so_and_then_never_deletable() {
        let other_key = KeySchema {
            partition: string("id"),
            sort: None,
        };
        let mut look_alike = table("ts_2018-10-18", Some(&[]));
        look_alike.key = Some(other_key.clone());
        assert_eq!(
            verdict(&look_alike).unwrap().owner,
            Owner::NotOurs {
                why: NotOurs::LookAlike {
                    have: other_key.clone()
                }
            }
        );
        look_alike.tags = Some(BTreeMap::from([(TAG_FAMILY.to_string(), "ts".to_string())]));
        let changed_key = verdict(&look_alike).unwrap();
        assert_eq!(owned_by(&changed_key), Some(OwnedBy::FamilyTag));
        assert_eq!(
            changed_key.not_deletable,
            [NoEvidence::KeyDiffers {
                have: Some(other_key)
            }]
        );
    }

    #[test]
    fn a_local_index_the_policy_never_had_proves_the_table_was_not_made_by_it() {
        let mut table = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
        table.local_indexes.push(ObservedLocalIndex {
            name: "by_hand".into(),
            key: None,
            projection: None,
        });
        assert_eq!(
            verdict(&table).unwrap().not_deletable,
            [NoEvidence::LocalIndexesDiffer]
        );
    }

    #[test]
    fn an_index_is_the_policys_only_with_its_name_key_and_projection() {
        let family = [(TAG_FAMILY, "ts")];
        for (what, tweak) in [
            (
                "key",
                (|i: &mut ObservedIndex| {
                    i.key = Some(KeySchema {
                        partition: string("customer"),
                        sort: None,
                    })
                }) as fn(&mut ObservedIndex),
            ),
            ("projection", |i: &mut ObservedIndex| {
                i.projection = Some(Projection::KeysOnly)
            }),
            ("name", |i: &mut ObservedIndex| i.name = "by_hand".into()),
            ("unknown key", |i: &mut ObservedIndex| i.key = None),
        ] {
            let mut t = table("ts_2018-10-18", Some(&family));
            tweak(&mut t.global_indexes[0]);
            let v = verdict(&t).unwrap();
            let name = t.global_indexes[0].name.clone();
            assert!(!v.index_is_ours(&name), "{what}");
            assert!(!v.index_capacity_is_ours("ts_2018-10-18", &name), "{what}");
            assert!(!v.whole_table_is_ours(), "{what}");
            // The table's throughput stays ours, but deleting it would destroy their index.
            assert!(v.table_capacity_is_ours("ts_2018-10-18"), "{what}");
            assert_eq!(v.not_deletable, [NoEvidence::ForeignIndexes], "{what}");
        }
        // An Include projection compares as a set.
        let policy = Policy::from_toml(&POLICY.replace(
            "partition = { name = \"site\", type = \"S\" }",
            "partition = { name = \"site\", type = \"S\" }\nprojection = { include = [\"a\", \"b\"] }",
        ))
        .unwrap();
        let mut t = table("ts_2018-10-18", Some(&family));
        t.global_indexes[0].projection = Some(Projection::Include(vec!["b".into(), "a".into()]));
        assert!(Judge::new(&policy).verdict(&t).unwrap().index_is_ours("by_site"));
    }

    fn target(resource: &str, dimension: ScalableDimension, policies: &[&str]) -> ObservedScalableTarget {
        ObservedScalableTarget {
            key: ScalableKey {
                resource_id: resource.into(),
                dimension,
            },
            min: 1,
            max: 10,
            policies: policies
                .iter()
                .map(|name| ObservedScalingPolicy {
                    name: name.to_string(),
                    policy_type: "StepScaling".into(),
                    metric: None,
                    target_value: None,
                })
                .collect(),
            scheduled_actions: Vec::new(),
        }
    }

    #[test]
    fn a_target_is_ours_only_when_every_policy_on_it_is() {
        let mut t = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
        t.scaling = Some(vec![
            target(
                "table/ts_2018-10-18",
                ScalableDimension::TableRead,
                &["ddb-rollover-ts-read"],
            ),
            target(
                "table/ts_2018-10-18",
                ScalableDimension::TableWrite,
                &["ddb-rollover-ts-write", "operators-step"],
            ),
            target(
                "table/ts_2018-10-18/index/by_site",
                ScalableDimension::IndexRead,
                &["theirs"],
            ),
            // Another family's policy name is someone else's.
            target(
                "table/ts_2018-10-18/index/by_site",
                ScalableDimension::IndexWrite,
                &["ddb-rollover-ts_eu-write"],
            ),
        ]);
        let v = verdict(&t).unwrap();
        let key = |resource: &str, dimension| ScalableKey {
            resource_id: resource.into(),
            dimension,
        };
        assert_eq!(
            v.target(&key("table/ts_2018-10-18", ScalableDimension::TableRead)),
            TargetOwner::Ours
        );
        assert_eq!(
            v.target(&key("table/ts_2018-10-18", ScalableDimension::TableWrite)),
            TargetOwner::Shared
        );
        assert_eq!(
            v.target(&key(
                "table/ts_2018-10-18/index/by_site",
                ScalableDimension::IndexRead
            )),
            TargetOwner::Foreign
        );
        assert_eq!(
            v.target(&key(
                "table/ts_2018-10-18/index/by_site",
                ScalableDimension::IndexWrite
            )),
            TargetOwner::Foreign
        );
        assert!(!v.table_capacity_is_ours("ts_2018-10-18"));
        assert!(v.index_is_ours("by_site") && !v.index_capacity_is_ours("ts_2018-10-18", "by_site"));
        assert_eq!(v.not_deletable, [NoEvidence::ForeignScaling]);

        // Not read: nothing known, so nothing proven.
        t.scaling = None;
        assert_eq!(verdict(&t).unwrap().not_deletable, [NoEvidence::ScalingNotRead]);
        // An endpoint without Application Auto Scaling has no targets: proven.
        t.scaling_unsupported = true;
        assert!(verdict(&t).unwrap().not_deletable.is_empty());
    }

    #[test]
    fn without_a_tagging_api_only_the_policys_opt_in_allows_deletion() {
        let mut t = table("ts_2018-10-18", None);
        t.tags_unsupported = true;
        assert_eq!(verdict(&t).unwrap().not_deletable, [NoEvidence::NoTaggingApi]);
        let mut opted = policy();
        opted.retention.as_mut().unwrap().delete_without_tagging_api = true;
        assert!(Judge::new(&opted).verdict(&t).unwrap().not_deletable.is_empty());
    }

    #[test]
    fn a_scheduled_action_makes_a_target_someone_elses_and_vetoes_deletion() {
        let mut t = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
        let mut read = target(
            "table/ts_2018-10-18",
            ScalableDimension::TableRead,
            &["ddb-rollover-ts-read"],
        );
        read.scheduled_actions = vec!["nightly-scale-up".into()];
        let mut index_write = target(
            "table/ts_2018-10-18/index/by_site",
            ScalableDimension::IndexWrite,
            &[],
        );
        index_write.scheduled_actions = vec!["weekend".into()];
        t.scaling = Some(vec![read.clone(), index_write.clone()]);
        let v = verdict(&t).unwrap();
        // Our policy with their scheduled action: ours is removed, the target never deregistered.
        assert_eq!(v.target(&read.key), TargetOwner::Shared);
        assert_eq!(v.target(&index_write.key), TargetOwner::Foreign);
        assert!(v.our_targets.is_empty());
        assert!(!v.table_capacity_is_ours("ts_2018-10-18"));
        assert!(!v.index_capacity_is_ours("ts_2018-10-18", "by_site"));
        assert_eq!(v.not_deletable, [NoEvidence::ForeignScaling]);
        let shown: Vec<String> = v.foreign.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "scalable target table/ts_2018-10-18 read (ours, and also scheduled actions: nightly-scale-up)",
                "scalable target table/ts_2018-10-18/index/by_site write (scheduled actions: weekend)",
            ]
        );
    }

    #[test]
    fn deletion_protection_is_ours_only_when_the_policy_asks_for_it() {
        let mut t = table("ts_2018-10-18", Some(&[(TAG_FAMILY, "ts")]));
        t.deletion_protection = true;
        for template in ["", "[template]\ndeletion_protection = false\n"] {
            let policy = Policy::from_toml(&format!("{POLICY}{template}")).unwrap();
            let v = Judge::new(&policy).verdict(&t).unwrap();
            assert!(v.protection_is_foreign(), "{template:?}");
            assert_eq!(v.foreign, [ForeignPart::DeletionProtection], "{template:?}");
            assert_eq!(
                v.not_deletable,
                [NoEvidence::ForeignDeletionProtection],
                "{template:?}"
            );
            // It holds no throughput: capacity and billing stay ours.
            assert!(v.table_capacity_is_ours("ts_2018-10-18") && v.whole_table_is_ours());
        }
        let asks = Policy::from_toml(&format!("{POLICY}[template]\ndeletion_protection = true\n")).unwrap();
        let v = Judge::new(&asks).verdict(&t).unwrap();
        assert!(!v.protection_is_foreign() && v.foreign.is_empty() && v.not_deletable.is_empty());
        // Off: nothing to say.
        t.deletion_protection = false;
        assert!(verdict(&t).unwrap().foreign.is_empty());
    }
}
