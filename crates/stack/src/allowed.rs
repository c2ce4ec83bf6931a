//! What each stack parameter allows, as template.yaml's `AllowedPattern`, `AllowedValues`,
//! `MinValue` and `MaxValue` say: the cold start holds every variable to its parameter's rule
//! ([`crate::environment`]), so a function whose environment was set by hand (or edited in the
//! console) cannot run on a value the stack would have refused (`WriteGrace="2 weeks"`,
//! `TimeZone="Europe/Berlin "`, `Premake=" 1"`, `PublishTables=True`).
//!
//! One source for both: the deploy checks read template.yaml's Parameters and assert that
//! [`RULES`] says exactly what they say (`crates/deploy-checks/tests/checks/allowed.rs`), so
//! the two cannot drift apart.

use std::fmt;

/// One parameter's rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// `AllowedPattern`, a regular expression (CloudFormation's; these patterns mean the same
    /// to `regex-lite`).
    Pattern(&'static str),
    /// `AllowedValues`.
    Values(&'static [&'static str]),
    /// `Type: Number` with `MinValue` / `MaxValue`; a whole number written plainly (no spaces,
    /// no `+`, no fraction).
    Number {
        /// `MinValue`, if the template sets one.
        min: Option<i64>,
        /// `MaxValue`, if the template sets one.
        max: Option<i64>,
    },
}

const fn number(min: Option<i64>, max: Option<i64>) -> Rule {
    Rule::Number { min, max }
}

const SWITCH: Rule = Rule::Values(&["true", "false"]);
const KEY_TYPE: Rule = Rule::Values(&["S", "N", "B"]);

/// Every parameter the functions read, with its rule, in the template's order.
pub const RULES: [(&str, Rule); 30] = [
    ("TablePrefix", Rule::Pattern("^[a-zA-Z0-9_.-]{1,200}$")),
    (
        "Period",
        Rule::Values(&[
            "hour", "2h", "3h", "4h", "6h", "8h", "12h", "day", "week", "month", "quarter", "year",
        ]),
    ),
    ("TimeZone", Rule::Pattern("^[A-Za-z][A-Za-z0-9_+/-]{0,63}$")),
    ("Premake", number(Some(0), Some(100))),
    ("PartitionKeyName", Rule::Pattern("^[a-zA-Z0-9_.-]{1,255}$")),
    ("PartitionKeyType", KEY_TYPE),
    ("SortKeyName", Rule::Pattern("^[a-zA-Z0-9_.-]{0,255}$")),
    ("SortKeyType", KEY_TYPE),
    ("HotReadCapacity", number(Some(1), None)),
    ("HotWriteCapacity", number(Some(1), None)),
    ("WarmReadCapacity", number(Some(1), None)),
    ("WarmWriteCapacity", number(Some(1), None)),
    ("ColdBilling", Rule::Values(&["provisioned", "on_demand"])),
    ("ColdReadCapacity", number(Some(1), None)),
    ("ColdWriteCapacity", number(Some(1), None)),
    ("ColdTableClass", Rule::Values(&["", "standard", "standard_ia"])),
    (
        "WriteGrace",
        Rule::Pattern("^$|^[0-9]+ ?(s|m|min|h|d)( ?[0-9]+ ?(s|m|min|h|d))*$"),
    ),
    ("TtlAttribute", Rule::Pattern("^[a-zA-Z0-9_.-]{0,255}$")),
    ("PointInTimeRecovery", SWITCH),
    ("DeletionProtection", SWITCH),
    (
        "ArchiveBucket",
        Rule::Pattern("^$|^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"),
    ),
    (
        "ArchivePrefix",
        Rule::Pattern("^$|^[a-zA-Z0-9_.=-][a-zA-Z0-9_.=/-]{0,510}/$"),
    ),
    ("ArchiveAfter", number(Some(1), None)),
    ("DeleteAfter", number(Some(0), None)),
    ("MaxDeletesPerRun", number(Some(1), Some(100))),
    (
        "ChangeStreamArn",
        Rule::Pattern("^$|^arn:aws(-cn|-us-gov|-eusc|-iso(-[bef])?)?:kinesis:[a-z0-9-]+:[0-9]{12}:stream/[a-zA-Z0-9_.-]{1,128}$"),
    ),
    (
        "ConsumerFunctionArn",
        Rule::Pattern(
            "^$|^arn:aws(-cn|-us-gov|-eusc|-iso(-[bef])?)?:lambda:[a-z0-9-]+:[0-9]{12}:function:[a-zA-Z0-9_-]{1,64}(:[a-zA-Z0-9_-]{1,128})?$",
        ),
    ),
    ("Autoscaling", SWITCH),
    ("PublishTables", SWITCH),
    ("PublishEvents", SWITCH),
];

/// The rule of `parameter`, if the functions read it.
pub fn rule(parameter: &str) -> Option<Rule> {
    RULES.iter().find(|(p, _)| *p == parameter).map(|(_, rule)| *rule)
}

impl Rule {
    /// `Err` says what is allowed.
    pub fn check(&self, value: &str) -> Result<(), String> {
        match *self {
            Rule::Pattern(pattern) => {
                let regex = regex_lite::Regex::new(pattern)
                    .unwrap_or_else(|e| panic!("the pattern {pattern:?} does not compile: {e}"));
                if regex.is_match(value) {
                    Ok(())
                } else {
                    Err(format!("must match the template's AllowedPattern {pattern}"))
                }
            }
            Rule::Values(values) if values.contains(&value) => Ok(()),
            Rule::Values(_) => Err(format!("must be one of the template's AllowedValues: {self}")),
            Rule::Number { min, max } => {
                let digits = value.strip_prefix('-').unwrap_or(value);
                let plain = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
                match value.parse::<i64>().ok().filter(|_| plain) {
                    Some(n) if min.is_none_or(|min| n >= min) && max.is_none_or(|max| n <= max) => Ok(()),
                    _ => Err(format!("must be {self}")),
                }
            }
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Pattern(pattern) => write!(f, "a value matching {pattern}"),
            Rule::Values(values) => write!(
                f,
                "{}",
                values
                    .iter()
                    .map(|v| format!("{v:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Rule::Number { min, max } => match (min, max) {
                (Some(min), Some(max)) => write!(f, "a whole number from {min} to {max}"),
                (Some(min), None) => write!(f, "a whole number of at least {min}"),
                (None, Some(max)) => write!(f, "a whole number of at most {max}"),
                (None, None) => write!(f, "a whole number"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_issue_found_accepted_is_refused() {
        for (parameter, value) in [
            ("WriteGrace", "2 weeks"),
            ("TimeZone", "Europe/Berlin "),
            ("Premake", " 1"),
            ("Premake", "101"),
            ("Premake", "1.0"),
            ("Premake", "-"),
            ("PublishTables", "True"),
            ("Autoscaling", "1"),
            ("PublishEvents", "yes"),
            ("MaxDeletesPerRun", "0"),
        ] {
            let refused = rule(parameter).unwrap().check(value);
            assert!(refused.is_err(), "{parameter}={value:?}");
        }
        for (parameter, value) in [
            ("WriteGrace", ""),
            ("WriteGrace", "1h 30m"),
            ("TimeZone", "Europe/Berlin"),
            ("Premake", "0"),
            ("Premake", "100"),
            ("PublishTables", "false"),
            ("ColdTableClass", ""),
            ("DeleteAfter", "0"),
        ] {
            assert_eq!(
                rule(parameter).unwrap().check(value),
                Ok(()),
                "{parameter}={value:?}"
            );
        }
    }

    #[test]
    fn every_pattern_compiles() {
        for (parameter, rule) in RULES {
            if let Rule::Pattern(pattern) = rule {
                assert!(regex_lite::Regex::new(pattern).is_ok(), "{parameter}: {pattern}");
            }
        }
    }
}
