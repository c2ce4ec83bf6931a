//! The published parameter (`/ddb-rollover/{prefix}/tables`, written by create_new after each
//! run) by the identity Systems Manager gives each write: its `Version` and that version's
//! `LastModifiedDate`. A parameter at our name is ours while it stands at the version our last
//! write recorded, modified when that write was; a write by anyone else moves the version on, a
//! parameter deleted and made again restarts at version 1 with another date, and from then on
//! it is theirs, reported and never overwritten. A name, a type or a document anyone can copy
//! decides nothing once the ledger holds a record.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ledger::INTENT_SKEW;

/// What the family wrote at the parameter's name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParameterRecord {
    /// The parameter's name.
    pub name: String,
    /// The `Version` PutParameter returned for our last write; `None` before the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    /// The `LastModifiedDate` Systems Manager gave that version (read back by its selector,
    /// `NAME:VERSION`): a parameter made again under the name restarts its versions, never at
    /// our date. `None` in records from before it was recorded (the version alone decides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<DateTime<Utc>>,
    /// When a run was about to write and has not recorded the version yet (a crash in between):
    /// the version right after [`Self::version`], written since then, is that run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_at: Option<DateTime<Utc>>,
}

/// The longest a write of ours can be in flight after its intent: Lambda's longest timeout
/// (15 minutes), and the clock skew. A version made later is no crashed write of ours.
pub const PARAMETER_WRITE_WINDOW: chrono::Duration = chrono::Duration::minutes(15);

/// The parameter as GetParameter shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenParameter {
    /// Its `Type` (`String`, `StringList`, `SecureString`): ours are `String`.
    pub kind: String,
    /// Its `Version` (1 when created, one more at each write).
    pub version: i64,
    /// Its `LastModifiedDate`.
    pub last_modified: Option<DateTime<Utc>>,
}

/// Whose the parameter at our name is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParameterOwner {
    /// No parameter: ours to create (without overwriting, so one made meanwhile is kept).
    Nobody,
    /// Ours: the version our last write recorded (or the one our crashed write made).
    Us,
    /// Someone else's, for the reason given: never overwritten.
    Foreign(String),
}

/// Whose `seen` is, on the ledger's `record` of our writes. Without a record (a stack that
/// published before the ledger recorded parameters), `before_records` decides: what our own
/// previous write left (`Ok`), or why it is not that (`Err`); the next write is recorded, and
/// from then on only the version counts.
pub fn parameter_owner(
    record: Option<&ParameterRecord>,
    seen: Option<&SeenParameter>,
    before_records: impl FnOnce() -> Result<(), String>,
) -> ParameterOwner {
    let Some(seen) = seen else {
        return ParameterOwner::Nobody;
    };
    if seen.kind != "String" {
        return ParameterOwner::Foreign(format!("it is a {} parameter; ours are String", seen.kind));
    }
    let Some(record) = record else {
        return match before_records() {
            Ok(()) => ParameterOwner::Us,
            Err(why) => ParameterOwner::Foreign(why),
        };
    };
    if record.version == Some(seen.version) {
        return match record.modified {
            Some(ours) if seen.last_modified != Some(ours) => ParameterOwner::Foreign(format!(
                "it is at version {} as our last write was, but modified {}, not {} as ours was: \
                 someone deleted it and made it again",
                seen.version,
                seen.last_modified
                    .map_or("at an unknown time".to_owned(), |m| m.to_rfc3339()),
                ours.to_rfc3339()
            )),
            _ => ParameterOwner::Us,
        };
    }
    // A write of ours that crashed before its record: exactly one version on, made while the
    // intent's run could still be writing.
    let next = record.version.unwrap_or(0) + 1;
    let crashed_write = record.intended_at.is_some_and(|at| {
        seen.version == next
            && seen.last_modified.is_some_and(|modified| {
                modified + INTENT_SKEW >= at && modified <= at + PARAMETER_WRITE_WINDOW + INTENT_SKEW
            })
    });
    if crashed_write {
        return ParameterOwner::Us;
    }
    let ours = record.version.map_or("none yet".to_owned(), |v| v.to_string());
    ParameterOwner::Foreign(format!(
        "it is at version {}{}, and the ledger records our last write as version {ours}: \
         someone else wrote it since",
        seen.version,
        seen.last_modified
            .map(|m| format!(" (modified {})", m.to_rfc3339()))
            .unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn record(version: Option<i64>, intended_at: Option<&str>) -> ParameterRecord {
        ParameterRecord {
            name: "/ddb-rollover/ts/tables".into(),
            version,
            modified: None,
            intended_at: intended_at.map(t),
        }
    }

    fn seen(version: i64, modified: &str) -> SeenParameter {
        SeenParameter {
            kind: "String".into(),
            version,
            last_modified: Some(t(modified)),
        }
    }

    #[test]
    fn the_recorded_version_is_ours_and_any_later_one_is_not() {
        let never = || Err("not our document".to_owned());
        let ours = record(Some(3), None);
        assert_eq!(parameter_owner(Some(&ours), None, never), ParameterOwner::Nobody);
        let now = "2024-05-01T23:45:00Z";
        assert_eq!(
            parameter_owner(Some(&ours), Some(&seen(3, now)), never),
            ParameterOwner::Us
        );
        match parameter_owner(Some(&ours), Some(&seen(4, now)), || Ok(())) {
            ParameterOwner::Foreign(why) => {
                assert!(why.contains("version 4") && why.contains("version 3"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_crashed_write_is_the_next_version_made_since_its_intent() {
        let never = || Err("not our document".to_owned());
        let intended = record(Some(3), Some("2024-05-01T23:45:00Z"));
        assert_eq!(
            parameter_owner(Some(&intended), Some(&seen(4, "2024-05-01T23:45:02Z")), never),
            ParameterOwner::Us
        );
        // Someone wrote again after the crashed write, or before the intent, or the next
        // version came after the intent's run could have been writing (hostile read of issue 41).
        for (version, modified) in [
            (5, "2024-05-01T23:46:00Z"),
            (4, "2024-05-01T23:30:00Z"),
            (4, "2024-05-02T00:06:00Z"),
        ] {
            assert!(matches!(
                parameter_owner(Some(&intended), Some(&seen(version, modified)), never),
                ParameterOwner::Foreign(_)
            ));
        }
        // The first write crashed: version 1 is ours.
        let first = record(None, Some("2024-05-01T23:45:00Z"));
        assert_eq!(
            parameter_owner(Some(&first), Some(&seen(1, "2024-05-01T23:45:01Z")), never),
            ParameterOwner::Us
        );
    }

    #[test]
    fn without_a_record_our_previous_write_decides() {
        let seen = seen(7, "2024-05-01T23:45:00Z");
        assert_eq!(parameter_owner(None, Some(&seen), || Ok(())), ParameterOwner::Us);
        assert_eq!(
            parameter_owner(None, Some(&seen), || Err("a SecureString".into())),
            ParameterOwner::Foreign("a SecureString".into())
        );
    }

    /// Hostile read of issue 41, finding 1: deleted and made again, a parameter restarts at
    /// version 1, which may be our recorded version: its date tells it apart. A type other than
    /// String is never ours.
    #[test]
    fn a_parameter_made_again_at_our_version_is_not_ours() {
        let never = || Err("not our document".to_owned());
        let ours = ParameterRecord {
            modified: Some(t("2024-05-01T23:45:01Z")),
            ..record(Some(1), None)
        };
        let again = seen(1, "2024-05-02T08:00:00Z");
        match parameter_owner(Some(&ours), Some(&again), never) {
            ParameterOwner::Foreign(why) => assert!(why.contains("made it again"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parameter_owner(Some(&ours), Some(&seen(1, "2024-05-01T23:45:01Z")), never),
            ParameterOwner::Us
        );
        let secure = SeenParameter {
            kind: "SecureString".into(),
            ..seen(1, "2024-05-01T23:45:01Z")
        };
        assert!(matches!(
            parameter_owner(Some(&ours), Some(&secure), never),
            ParameterOwner::Foreign(_)
        ));
    }
}
