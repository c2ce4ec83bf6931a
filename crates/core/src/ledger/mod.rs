//! The ledger: the family's own record of every thing it made, keyed by the identity AWS gave
//! that thing, in one small DynamoDB table of its own (`{prefix}_ledger`).
//!
//! A name, a tag, a policy's name or a field of a file in S3 can be written by anyone with
//! ordinary rights; what AWS assigned when we made a thing cannot. So a table is the family's
//! while the ledger holds its record and DynamoDB still shows the same identity (ARN and
//! creation time, and TableId on AWS): a table made again under our name by anyone, or a
//! copied tag, is not. The ledger also holds what a later decision needs and nobody else may
//! move: the period each table holds (ages never come from a name read again under a changed
//! policy), our scaling policies by ARN, our seal by revision, and each deletion's receipt
//! with the archive it relied on, which is all `restore` reads.
//!
//! - `record`: the records, as stored (JSON in one attribute, so the schema is here once);
//! - `book`: the ledger as one run read it (one Query of the family's partition);
//! - `parameter`: the published parameter, by the version each write of ours got;
//! - here: how a table made before the ledger is recorded on the evidence it carries.
//!
//! Writing it is the run's: an intent before each CreateTable and its outcome after
//! (`crate::run::ledger`), a lease per operation so overlapping runs defer.

mod book;
mod parameter;
mod record;

pub use crate::table::evidence::{
    to_millisecond, ArchiveRecord, ArchivedFile, PeriodBounds, Receipt, TableIdentity,
};
pub use book::{Book, Entry, LedgerState, StoredRecord};
pub use parameter::{
    parameter_owner, ParameterOwner, ParameterRecord, SeenParameter, PARAMETER_WRITE_WINDOW,
};
pub use record::{keys, Feeds, Lease, Meta, Origin, TableRecord, TableState};

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::policy::naming::Ownership;
use crate::policy::period::{Calendar, Slot};
use crate::policy::scaling::policy_name;
use crate::policy::tags::{TAG_FAMILY, TAG_PERIOD_END, TAG_PERIOD_START};
use crate::policy::Policy;
use crate::table::ObservedTable;

/// How much earlier than an intent AWS may date what the intent's run made (a table's
/// CreationDateTime, a mapping's LastModified) and still have it be that run's: the skew between
/// the run's clock and AWS's.
pub const INTENT_SKEW: chrono::Duration = chrono::Duration::minutes(5);

/// The bounds of `slot` in `calendar`.
pub fn bounds_of(calendar: &Calendar, slot: Slot) -> PeriodBounds {
    PeriodBounds {
        start: slot.start(),
        end: calendar.end(slot),
    }
}

/// The period `bounds` hold, placed in `calendar` by their last instant: a table recorded under
/// another period length or time zone ages by when its data ended.
pub fn slot_of(calendar: &Calendar, bounds: &PeriodBounds) -> Option<Slot> {
    calendar.labelled_floor(bounds.end - chrono::Duration::seconds(1))
}

/// The record of a table this family makes now, for `slot`, before its CreateTable.
pub fn intent(policy: &Policy, name: &str, slot: Slot, at: DateTime<Utc>) -> TableRecord {
    TableRecord {
        name: name.to_string(),
        state: TableState::Intended { at },
        origin: Origin::Created,
        period: bounds_of(policy.naming().calendar(), slot),
        key: policy.key.clone(),
        policy_hash: policy.hash(),
        scaling_policies: Vec::new(),
        seal: None,
        lowered: None,
        feeds: Some(Feeds::default()),
    }
}

/// The record of a table made before the ledger, on the evidence it carries, or why it cannot
/// be recorded: our family tag (read), the policy's key, its identity, and its period (our
/// period tags, else its name). `init` records a table only this way; `adopt` is the operator's
/// way for the others.
pub fn enrolment(policy: &Policy, table: &ObservedTable, at: DateTime<Utc>) -> Result<TableRecord, String> {
    let naming = policy.naming();
    let tags = table.tags.as_ref().ok_or("its tags were not read")?;
    match tags.get(TAG_FAMILY) {
        Some(family) if *family == policy.prefix => {}
        Some(other) => return Err(format!("its {TAG_FAMILY} tag names another family, {other:?}")),
        None => {
            return Err(format!(
                "it carries no {TAG_FAMILY} tag: this family did not make it (ddb-rollover adopt records a table an operator vouches for)"
            ))
        }
    }
    let key = table.key.as_ref().ok_or("DescribeTable did not give its key")?;
    if *key != policy.key {
        return Err(format!("its key is {key}, not the policy's ({})", policy.key));
    }
    let identity = table
        .identity()
        .ok_or("DescribeTable did not give its ARN and creation time")?;
    let named = match naming.classify(&table.name) {
        Ownership::Owned(slot) => Some(bounds_of(naming.calendar(), slot)),
        _ => None,
    };
    // The later of the name's and the tags' periods: a tag anyone may write never makes a
    // table older than its name says.
    let period = match (tagged_bounds(tags), named) {
        (Some(tagged), Some(named)) if named.end > tagged.end => named,
        (Some(tagged), _) => tagged,
        (None, Some(named)) => named,
        (None, None) => return Err("neither its name nor its period tags name a period".into()),
    };
    Ok(TableRecord {
        name: table.name.clone(),
        state: TableState::Made { identity },
        origin: Origin::Enrolled { at },
        period,
        key: key.clone(),
        policy_hash: policy.hash(),
        scaling_policies: named_ours(policy, table),
        seal: None,
        lowered: None,
        feeds: Some(feeds_named_ours(policy, table)),
    })
}

/// The ARNs of the scaling policies on `table`'s targets that carry the name this family gives
/// its own: what the version before the ledger went by, taken once, at enrolment.
fn named_ours(policy: &Policy, table: &ObservedTable) -> Vec<String> {
    table
        .scaling
        .iter()
        .flatten()
        .flat_map(|target| {
            let ours = policy_name(&policy.prefix, target.key.dimension);
            target
                .policies
                .iter()
                .filter(move |p| p.name == ours)
                .filter_map(|p| p.arn.clone())
        })
        .collect()
}

/// The change feeds on `table` that the policy names (its stream's destination, its consumer's
/// mappings): what the version before the ledger went by, taken once, at enrolment or adoption.
pub fn feeds_named_ours(policy: &Policy, table: &ObservedTable) -> Feeds {
    let destinations = policy
        .stream
        .kinesis
        .iter()
        .filter(|wanted| {
            table
                .destinations
                .iter()
                .flatten()
                .any(|d| d.is_to(wanted) && d.status.holds())
        })
        .map(|wanted| wanted.stream_arn.to_string())
        .collect();
    let mappings = policy
        .stream
        .lambda
        .iter()
        .flat_map(|consumer| {
            table
                .mappings
                .iter()
                .flatten()
                .filter(move |m| m.is_to(consumer) && m.state.stays())
                .map(|m| m.uuid.clone())
        })
        .collect();
    Feeds {
        destinations,
        mappings,
        mapping_intended: None,
    }
}

impl Book {
    /// A started ledger that records, as made by this family, each of `tables` that carries
    /// `policy`'s family tag, or is named as one of the policy's periods with the policy's key
    /// (or none said) and no other family's tag: the planner's input in tests of its rules
    /// ([`crate::plan::plan`]), where a table "of ours" is one the family made and a
    /// look-alike one it did not. Its period: our period tags, else its name.
    pub fn enrolling(policy: &Policy, tables: &[ObservedTable]) -> Book {
        let naming = policy.naming();
        let mut book = Book::default();
        for table in tables {
            let named = match naming.classify(&table.name) {
                Ownership::Owned(slot) => Some(bounds_of(naming.calendar(), slot)),
                _ => None,
            };
            let tagged = table.tags.as_ref();
            let family = tagged.and_then(|tags| tags.get(TAG_FAMILY));
            let keyed = table.key.as_ref().is_none_or(|key| *key == policy.key);
            let ours = match family {
                Some(family) => *family == policy.prefix,
                None => named.is_some() && keyed,
            };
            let period = tagged.and_then(tagged_bounds).or(named);
            let (true, Some(identity), Some(period)) = (ours, table.identity(), period) else {
                continue;
            };
            let record = TableRecord {
                name: table.name.clone(),
                state: TableState::Made { identity },
                origin: Origin::Created,
                period,
                key: table.key.clone().unwrap_or_else(|| policy.key.clone()),
                policy_hash: policy.hash(),
                scaling_policies: named_ours(policy, table),
                seal: None,
                lowered: None,
                feeds: Some(feeds_named_ours(policy, table)),
            };
            book.tables.insert(
                table.name.clone(),
                Entry {
                    key: keys::table(&table.name),
                    version: 1,
                    record,
                },
            );
        }
        book
    }
}

/// The period our period tags name, when both are there and in order.
fn tagged_bounds(tags: &BTreeMap<String, String>) -> Option<PeriodBounds> {
    let instant = |key: &str| {
        DateTime::parse_from_rfc3339(tags.get(key)?)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    };
    let (start, end) = (instant(TAG_PERIOD_START)?, instant(TAG_PERIOD_END)?);
    (start < end).then_some(PeriodBounds { start, end })
}
