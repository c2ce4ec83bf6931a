//! Which tables are ours, from everything a run knows about one: its name, ddb-rollover's own
//! tags, and its key schema. A name prefix alone never makes a table ours: a sibling family
//! whose prefix nests in ours (`ts_eu` under `ts`) shares it.
//!
//! - A family tag naming another prefix makes the table another family's, whatever its name.
//! - `{prefix}_{label}` with a label of this policy's period is ours by name.
//! - Any other `{prefix}_...` name is ours only when its tags say so: our family tag and our
//!   period tags (a table made before a `period` or `timezone` change), or, for tables made
//!   before the family tag existed, period tags on a name whose rest is a label of some period.
//! - A table whose key schema differs from the policy's is not ours unless our family tag says
//!   so, and even then retention never deletes it.

use crate::naming::{Ownership, TableNaming};
use crate::observed::ObservedTable;
use crate::period::Slot;
use crate::settings::KeySchema;
use crate::tags::{tagged_slot, TAG_FAMILY};

/// What a run may do with one listed table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The policy manages the table, which holds `slot`.
    Ours {
        slot: Slot,
        by: OwnedBy,
        delete: DeleteGuard,
    },
    /// Starts with our name prefix but is not provably ours: reported, never touched.
    NotOurs(NotOurs),
    /// Does not start with our name prefix: not ours to mention.
    Unrelated,
}

/// Why a table is ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnedBy {
    /// `{prefix}_{label}` for this policy's period.
    Name,
    /// Our family tag and period tags, under a name from another period or zone.
    FamilyTag,
    /// Period tags from a version before the family tag, on `{prefix}_{label of some period}`.
    PeriodTags,
}

/// Whether retention may delete a table of ours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeleteGuard {
    Allowed,
    /// Tags were read and ours is missing: the run tags it, a later run may delete it.
    FamilyTagMissing,
    /// The key schema is not the policy's: kept whatever its age.
    KeyDiffers {
        have: KeySchema,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotOurs {
    /// Another ddb-rollover family's table: its family tag names another prefix.
    OtherFamily { family: String },
    /// The rest of the name is not a label of our period, and no tag of ours claims it.
    UnknownName,
    /// The name is ours but the key schema is not, and no family tag claims it: a hand-made
    /// look-alike.
    LookAlike { have: KeySchema },
}

/// Decides whose `table` is. `key` is the policy's primary key.
pub fn claim(naming: &TableNaming, key: &KeySchema, table: &ObservedTable) -> Claim {
    let by_name = naming.classify(&table.name);
    if by_name == Ownership::Unrelated {
        return Claim::Unrelated;
    }
    let family = table.tags.as_ref().and_then(|tags| tags.get(TAG_FAMILY));
    if let Some(family) = family.filter(|f| *f != naming.prefix()) {
        return Claim::NotOurs(NotOurs::OtherFamily {
            family: family.clone(),
        });
    }
    let tagged = table
        .tags
        .as_ref()
        .and_then(|tags| tagged_slot(naming.calendar(), tags));
    let (slot, by) = match (by_name, family.is_some(), tagged) {
        (Ownership::Owned(slot), _, tagged) => (tagged.unwrap_or(slot), OwnedBy::Name),
        (_, true, Some(slot)) => (slot, OwnedBy::FamilyTag),
        (_, false, Some(slot)) if naming.is_label_of_any_period(&table.name) => (slot, OwnedBy::PeriodTags),
        _ => return Claim::NotOurs(NotOurs::UnknownName),
    };
    let delete = match &table.key {
        Some(have) if have != key => match family {
            None => return Claim::NotOurs(NotOurs::LookAlike { have: have.clone() }),
            Some(_) => DeleteGuard::KeyDiffers { have: have.clone() },
        },
        _ if table.tags.is_some() && family.is_none() => DeleteGuard::FamilyTagMissing,
        _ => DeleteGuard::Allowed,
    };
    Claim::Ours { slot, by, delete }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::policy::Policy;
    use crate::settings::Billing;
    use crate::settings::{AttributeKind, Capacity, KeyAttribute};
    use crate::tags::{TAG_PERIOD_END, TAG_PERIOD_START};

    fn policy() -> Policy {
        Policy::from_toml("prefix = \"ts\"").unwrap()
    }

    fn table(name: &str, tags: Option<&[(&str, &str)]>, key: Option<KeySchema>) -> ObservedTable {
        let mut table = ObservedTable::active(name, Billing::Provisioned(Capacity { read: 1, write: 1 }));
        table.tags = tags.map(|tags| {
            tags.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        });
        table.key = key;
        table
    }

    fn string_key() -> KeySchema {
        KeySchema {
            partition: KeyAttribute {
                name: "id".into(),
                kind: AttributeKind::S,
            },
            sort: None,
        }
    }

    fn period_tags(family: Option<&str>) -> Vec<(&str, &str)> {
        let mut tags = vec![
            (TAG_PERIOD_START, "2018-10-18T00:00:00+00:00"),
            (TAG_PERIOD_END, "2018-10-19T00:00:00+00:00"),
        ];
        tags.extend(family.map(|f| (TAG_FAMILY, f)));
        tags
    }

    fn check(t: &ObservedTable) -> Claim {
        let policy = policy();
        claim(&policy.naming(), &policy.key, t)
    }

    #[test]
    fn a_nested_familys_tables_are_never_ours_whatever_their_tags() {
        for family in [Some("ts_eu"), None] {
            let tags = period_tags(family);
            let sibling = table("ts_eu_2018-10-18", Some(&tags), Some(policy().key));
            let expected = match family {
                Some(f) => NotOurs::OtherFamily { family: f.into() },
                None => NotOurs::UnknownName,
            };
            assert_eq!(check(&sibling), Claim::NotOurs(expected));
        }
        // Even a name that parses as ours is refused when the family tag names another prefix.
        let tags = period_tags(Some("ts_eu"));
        assert!(matches!(
            check(&table("ts_2018-10-18", Some(&tags), None)),
            Claim::NotOurs(NotOurs::OtherFamily { .. })
        ));
    }

    #[test]
    fn our_family_tag_keeps_tables_of_an_earlier_period_setting() {
        let tags = period_tags(Some("ts"));
        let monthly = table("ts_2018-10", Some(&tags), None);
        assert!(matches!(
            check(&monthly),
            Claim::Ours {
                by: OwnedBy::FamilyTag,
                delete: DeleteGuard::Allowed,
                ..
            }
        ));
        // Before the family tag: period tags on a name whose rest is some period's label.
        let tags = period_tags(None);
        assert!(matches!(
            check(&table("ts_2018-10", Some(&tags), None)),
            Claim::Ours {
                by: OwnedBy::PeriodTags,
                delete: DeleteGuard::FamilyTagMissing,
                ..
            }
        ));
        assert_eq!(
            check(&table("ts_backup", Some(&tags), None)),
            Claim::NotOurs(NotOurs::UnknownName)
        );
    }

    #[test]
    fn a_look_alike_with_another_key_schema_is_not_ours() {
        let look_alike = table("ts_2018-10-18", Some(&[]), Some(string_key()));
        assert_eq!(
            check(&look_alike),
            Claim::NotOurs(NotOurs::LookAlike { have: string_key() })
        );
        // Ours by family tag but with another key (a changed policy): managed, never deleted.
        let tags = period_tags(Some("ts"));
        assert!(matches!(
            check(&table("ts_2018-10-18", Some(&tags), Some(string_key()))),
            Claim::Ours {
                delete: DeleteGuard::KeyDiffers { .. },
                ..
            }
        ));
    }

    #[test]
    fn a_named_table_with_our_key_is_ours_and_deletable_once_tagged() {
        let key = Some(policy().key);
        assert!(matches!(
            check(&table("ts_2018-10-18", Some(&[]), key.clone())),
            Claim::Ours {
                by: OwnedBy::Name,
                delete: DeleteGuard::FamilyTagMissing,
                ..
            }
        ));
        let tags = period_tags(Some("ts"));
        assert!(matches!(
            check(&table("ts_2018-10-18", Some(&tags), key.clone())),
            Claim::Ours {
                delete: DeleteGuard::Allowed,
                ..
            }
        ));
        // Tags not read (a server without the tagging API): the name and key decide.
        assert!(matches!(
            check(&table("ts_2018-10-18", None, key)),
            Claim::Ours {
                delete: DeleteGuard::Allowed,
                ..
            }
        ));
        assert_eq!(check(&table("other_2018-10-18", None, None)), Claim::Unrelated);
    }
}
