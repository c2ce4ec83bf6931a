//! ddb-rollover's own tags on a table: their keys, DynamoDB's tag rules, and how each value is
//! written and read back (the period, the archive export, the last deferral). Everything that
//! reads or writes one of these tags goes through here.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::policy::period::{Calendar, Slot};

/// Tag keys ddb-rollover writes; users may not set tags in this namespace.
pub(crate) const TAG_NAMESPACE: &str = "ddb-rollover:";
/// Start and end of the table's period, RFC 3339: later decisions read the period from here
/// rather than re-parsing the name under a policy that may have changed.
pub const TAG_PERIOD_START: &str = "ddb-rollover:period-start";
/// End of the table's period, RFC 3339 (see [`TAG_PERIOD_START`]).
pub const TAG_PERIOD_END: &str = "ddb-rollover:period-end";
/// The family the table belongs to: the prefix of the policy that made it. A table is never
/// another family's just because its name starts with our prefix (`ts_eu_...` under `ts`).
pub const TAG_FAMILY: &str = "ddb-rollover:family";
/// Hash of the policy that created the table.
pub const TAG_POLICY_HASH: &str = "ddb-rollover:policy-hash";
/// When an operator adopted the table with `ddb-rollover adopt` (RFC 3339): its family tag was
/// written then, not at CreateTable.
pub(crate) const TAG_ADOPTED: &str = "ddb-rollover:adopted";
/// The archive export of the table (its ARN, or the part after the table's ARN).
pub const TAG_EXPORT: &str = "ddb-rollover:export";
/// When the archive export completed (RFC 3339): the table may be deleted.
pub const TAG_ARCHIVED: &str = "ddb-rollover:archived";
/// When the table was sealed against item writes and the policy revision the seal put
/// ([`crate::table::seal::SealRecord`]): the final export counts only after it.
pub const TAG_SEALED: &str = "ddb-rollover:sealed";
/// The final export after the seal (the export tag's form): the export a deletion relies on.
pub const TAG_FINAL_EXPORT: &str = "ddb-rollover:final-export";
/// The last time DynamoDB refused a change at run time, and why.
pub const TAG_LAST_DEFERRAL: &str = "ddb-rollover:last-deferral";
/// Set by `restore` (RFC 3339): retention neither archives nor deletes the restored table
/// before this instant (the operator's `--keep`).
pub const TAG_KEEP_UNTIL: &str = "ddb-rollover:keep-until";
/// On a table `restore` imported short of its archive (fewer items than it lists, or errors):
/// nobody's until an operator looks into it, so no run manages, archives or deletes it as the
/// period's table.
pub(crate) const TAG_SHORT_IMPORT: &str = "ddb-rollover:short-import";

/// DynamoDB's tag limits: 50 tags per resource, keys up to 128 and values up to 256 characters.
pub(crate) const MAX_TAGS: usize = 50;
pub(crate) const MAX_TAG_KEY_LEN: usize = 128;
pub(crate) const MAX_TAG_VALUE_LEN: usize = 256;
/// Tags ddb-rollover may write on one table (family, period start, end, policy hash, adopted,
/// export, archived, last deferral, keep-until, sealed, final export), which the user's tags
/// must leave room for.
pub(crate) const OWN_TAGS: usize = 11;

/// The instant a restored table is kept until, when it carries [`TAG_KEEP_UNTIL`].
pub(crate) fn keep_until(tags: &BTreeMap<String, String>) -> Option<DateTime<Utc>> {
    let value = tags.get(TAG_KEEP_UNTIL)?;
    DateTime::parse_from_rfc3339(value)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Characters DynamoDB accepts in tag keys and values.
pub(crate) fn is_tag_char(c: char) -> bool {
    c.is_alphanumeric() || c.is_whitespace() || "_.:/=+-@".contains(c)
}

/// The tags ddb-rollover sets on the table of `slot` when it creates it: the family, the
/// period's bounds (so its period never depends on its name again) and the policy's hash.
pub(crate) fn own_tags(
    family: &str,
    calendar: &Calendar,
    slot: Slot,
    policy_hash: &str,
) -> BTreeMap<String, String> {
    let rfc3339 = |t: DateTime<Utc>| t.with_timezone(&calendar.tz()).to_rfc3339();
    BTreeMap::from([
        (TAG_FAMILY.to_string(), family.to_string()),
        (TAG_PERIOD_START.to_string(), rfc3339(slot.start())),
        (TAG_PERIOD_END.to_string(), rfc3339(calendar.end(slot))),
        (TAG_POLICY_HASH.to_string(), policy_hash.to_string()),
    ])
}

/// The last-deferral tag's value: when, which action, and DynamoDB's reason, cut to what a tag
/// value may hold.
pub(crate) fn deferral_value(at: DateTime<Utc>, action: &str, error: &str) -> String {
    format!("{} {action}: {error}", at.to_rfc3339())
        .chars()
        .filter(|&c| is_tag_char(c))
        .take(MAX_TAG_VALUE_LEN)
        .collect()
}

/// The export tag's value: the part of the export ARN after the table's ARN when it has that
/// form (so it fits the 256-character tag limit with long table names), else the whole ARN.
pub(crate) fn export_tag_value(table_arn: &str, export_arn: &str) -> String {
    export_arn
        .strip_prefix(table_arn)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(export_arn)
        .to_string()
}

/// The export ARN an export tag names.
pub fn export_arn_from_tag(table_arn: &str, value: &str) -> String {
    if value.starts_with("arn:") {
        value.to_string()
    } else {
        format!("{table_arn}/{value}")
    }
}

/// Why DynamoDB (or ddb-rollover, for its own namespace) would refuse this user tag, if it would.
pub(crate) fn tag_problem(key: &str, value: &str) -> Option<String> {
    let allowed = |s: &str| s.chars().all(is_tag_char);
    if key.starts_with(TAG_NAMESPACE) {
        Some(format!(
            "keys starting with {TAG_NAMESPACE:?} are ddb-rollover's own: rename it"
        ))
    } else if key.to_ascii_lowercase().starts_with("aws:") {
        Some("keys starting with \"aws:\" are reserved by AWS: rename it".into())
    } else if !(1..=MAX_TAG_KEY_LEN).contains(&key.chars().count()) {
        Some(format!("keys must be 1 to {MAX_TAG_KEY_LEN} characters long"))
    } else if value.chars().count() > MAX_TAG_VALUE_LEN {
        Some(format!(
            "values may be at most {MAX_TAG_VALUE_LEN} characters long"
        ))
    } else if !allowed(key) || !allowed(value) {
        Some("use letters, digits, spaces and _ . : / = + - @ only".into())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_tags_fit_and_expand() {
        let table = "arn:aws:dynamodb:us-east-1:123456789012:table/t_2018-10-25";
        let export = format!("{table}/export/01540000000000-abcdef12");
        let value = export_tag_value(table, &export);
        assert_eq!(value, "export/01540000000000-abcdef12");
        assert_eq!(export_arn_from_tag(table, &value), export);
        let odd = "arn:aws:dynamodb:us-east-1:123456789012:table/elsewhere/export/1";
        assert_eq!(export_tag_value(table, odd), odd);
        assert_eq!(export_arn_from_tag(table, odd), odd);
    }
}
