//! Table names: `{prefix}_{label}`, and what a name alone says about a table. Whether a
//! table is ours also depends on its tags and key schema: see [`crate::plan::verdict`].

use crate::policy::period::{Calendar, PeriodKind, Slot};

/// DynamoDB's limit on table names: 3 to 255 characters of `[a-zA-Z0-9_.-]` (a prefix and a
/// label are always at least 3).
pub(crate) const MAX_TABLE_NAME: usize = 255;

/// Whether a table name belongs to the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// `{prefix}_{label}` with a label that parses: named as this period's table.
    Owned(Slot),
    /// Starts with `{prefix}_` but the rest is not a label of this period.
    Foreign,
    /// Does not start with `{prefix}_`: not ours to mention.
    Unrelated,
}

/// Names tables for one prefix and calendar.
#[derive(Clone, Debug)]
pub struct TableNaming {
    prefix: String,
    calendar: Calendar,
}

impl TableNaming {
    /// Naming for tables `{prefix}_{label}`, labels from `calendar`.
    pub fn new(prefix: &str, calendar: Calendar) -> Self {
        TableNaming {
            prefix: prefix.to_string(),
            calendar,
        }
    }

    /// The policy's prefix, without the `_` before the label.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The calendar whose period labels end the names.
    pub fn calendar(&self) -> &Calendar {
        &self.calendar
    }

    /// What every table name of this policy starts with.
    pub(crate) fn name_prefix(&self) -> String {
        format!("{}_", self.prefix)
    }

    /// The family's ledger table (`crate::ledger`): `{prefix}_ledger`, inside the prefix's IAM
    /// scope and outside the period-name grammar (no period's label is `ledger`).
    pub fn ledger_name(&self) -> String {
        format!("{}_ledger", self.prefix)
    }

    /// The name of the table that holds `slot`: `{prefix}_{label}`.
    pub fn table_name(&self, slot: Slot) -> String {
        format!("{}_{}", self.prefix, self.calendar.label(slot))
    }

    /// Whether `table_name` names one of this prefix's periods, is only under the prefix, or is unrelated.
    pub fn classify(&self, table_name: &str) -> Ownership {
        let Some(label) = table_name
            .strip_prefix(self.prefix.as_str())
            .and_then(|rest| rest.strip_prefix('_'))
        else {
            return Ownership::Unrelated;
        };
        match self.calendar.parse(label) {
            Ok(slot) => Ownership::Owned(slot),
            Err(_) => Ownership::Foreign,
        }
    }

    /// Whether the name is `{prefix}_{label}` for a label of *any* period kind in this zone:
    /// the shape of a table this family made under an earlier `period` setting.
    pub(crate) fn is_label_of_any_period(&self, table_name: &str) -> bool {
        let Some(label) = table_name.strip_prefix(&self.name_prefix()) else {
            return false;
        };
        PeriodKind::ALL
            .into_iter()
            .any(|kind| Calendar::new(kind, self.calendar.tz()).parse(label).is_ok())
    }

    /// Checks that every table name built from `prefix` is a valid DynamoDB table name.
    pub(crate) fn check_prefix(prefix: &str, period: PeriodKind) -> Result<(), String> {
        let longest = MAX_TABLE_NAME - 1 - max_label_len(period);
        if prefix.is_empty() || prefix.len() > longest {
            return Err(format!(
                "{prefix:?} must be 1 to {longest} characters long, so that `{{prefix}}_{{label}}` fits DynamoDB's {MAX_TABLE_NAME}-character table name limit"
            ));
        }
        if let Some(bad) = prefix.chars().find(|c| !is_table_name_char(*c)) {
            return Err(format!(
                "{prefix:?} contains {bad:?}: table names allow only letters, digits, '_', '-' and '.'"
            ));
        }
        Ok(())
    }
}

pub(crate) fn is_table_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// The longest label a period kind produces (hours carry a `.2` suffix on repeated DST hours).
pub(crate) fn max_label_len(period: PeriodKind) -> usize {
    match period {
        PeriodKind::Hours(_) => "2018-10-28T02.2".len(),
        PeriodKind::Day => "2018-10-25".len(),
        PeriodKind::Week => "2018-W43".len(),
        PeriodKind::Month => "2018-10".len(),
        PeriodKind::Quarter => "2018-Q4".len(),
        PeriodKind::Year => "2018".len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn daily() -> TableNaming {
        TableNaming::new("timeseries", Calendar::new(PeriodKind::Day, chrono_tz::UTC))
    }

    #[test]
    fn names_follow_the_blog() {
        let naming = daily();
        let slot = naming
            .calendar()
            .floor(Utc.with_ymd_and_hms(2018, 10, 25, 23, 45, 0).unwrap());
        assert_eq!(naming.table_name(slot), "timeseries_2018-10-25");
        assert_eq!(naming.classify("timeseries_2018-10-25"), Ownership::Owned(slot));
    }

    #[test]
    fn only_parseable_labels_are_owned() {
        let naming = daily();
        assert_eq!(naming.classify("timeseries_backup"), Ownership::Foreign);
        assert_eq!(naming.classify("timeseries_2018-10-25-old"), Ownership::Foreign);
        assert_eq!(naming.classify("timeseries_eu_2018-10-25"), Ownership::Foreign);
        assert_eq!(naming.classify("timeseries_2018-13-01"), Ownership::Foreign);
        assert_eq!(naming.classify("timeseries2018-10-25"), Ownership::Unrelated);
        assert_eq!(naming.classify("other_2018-10-25"), Ownership::Unrelated);
        assert_eq!(naming.classify("timeseries"), Ownership::Unrelated);
    }

    #[test]
    fn prefix_rules() {
        assert!(TableNaming::check_prefix("a", PeriodKind::Day).is_ok());
        assert!(TableNaming::check_prefix("my.app-data_v2", PeriodKind::Day).is_ok());
        let err = TableNaming::check_prefix("my app", PeriodKind::Day).unwrap_err();
        assert!(err.contains("' '"), "{err}");
        assert!(TableNaming::check_prefix("", PeriodKind::Day).is_err());
        assert!(TableNaming::check_prefix(&"x".repeat(240), PeriodKind::Day).is_ok());
        assert!(TableNaming::check_prefix(&"x".repeat(240), PeriodKind::Hours(1)).is_err());
    }
}
