//! The stack's environment, whole, before anything reads it: every variable template.yaml
//! sets must be there, each holding what its parameter allows ([`crate::allowed`]). A function
//! whose `ROLLOVER_TABLE_PREFIX` went missing must not fall back to the built-in defaults (the
//! `timeseries` family, perhaps another stack's); a `PublishTables=True` must not read as off.
//!
//! What the template sets: `ROLLOVER_POLICY` (the `PolicyOverride`, empty when none), the
//! variables that decide the roles' permissions ([`crate::parameters::Variable::grants`]), `ROLLOVER_AUTOSCALING`,
//! `ROLLOVER_PUBLISH_TABLES` and `ROLLOVER_PUBLISH_EVENTS` always; without a `PolicyOverride`,
//! every other [`VARIABLES`] entry too.

use ddb_rollover::policy::strict_json::excerpt;
use ddb_rollover::policy::POLICY_ENV;

use crate::allowed;
use crate::parameters::{BadVariable, StackError, PUBLISHING, VARIABLES};

/// The Region the function runs in (Lambda sets it): an ARN the stack names must be in it.
pub const REGION_ENV: &str = "AWS_REGION";

/// The stack's account (template.yaml sets it from `AWS::AccountId`): an ARN the stack names
/// must be in it, as the roles' statements are.
pub const ACCOUNT_ENV: &str = "ROLLOVER_ACCOUNT_ID";

/// An AWS account ID.
const ACCOUNT_RULE: allowed::Rule = allowed::Rule::Pattern("^[0-9]{12}$");

/// Every variable the template sets, checked: `Err` names each missing or bad one with its
/// parameter and what it allows, at once.
pub fn check_environment(lookup: impl Fn(&str) -> Option<String>) -> Result<(), StackError> {
    let mut bad = Vec::new();
    let policy = lookup(POLICY_ENV);
    if policy.is_none() {
        bad.push(BadVariable {
            name: POLICY_ENV,
            parameter: "PolicyOverride",
            value: None,
            message: "template.yaml sets it from the stack parameter (empty: no override)".into(),
        });
    }
    let overridden = policy.is_some_and(|json| !json.trim().is_empty());
    let region = lookup(REGION_ENV).filter(|r| !r.is_empty());
    let account = lookup(ACCOUNT_ENV);
    match &account {
        None => bad.push(BadVariable {
            name: ACCOUNT_ENV,
            parameter: "AWS::AccountId",
            value: None,
            message: "template.yaml sets it to the stack's account".into(),
        }),
        Some(value) => {
            if let Err(message) = ACCOUNT_RULE.check(value) {
                bad.push(BadVariable {
                    name: ACCOUNT_ENV,
                    parameter: "AWS::AccountId",
                    value: Some(excerpt(value)),
                    message,
                });
            }
        }
    }
    let home = Home {
        region: region.as_deref(),
        account: account.as_deref(),
    };
    for v in VARIABLES.iter().chain(&PUBLISHING) {
        let set_by_template = v.grants || v.parameter == "Autoscaling" || !overridden;
        let Some(value) = lookup(v.name) else {
            if set_by_template {
                bad.push(BadVariable {
                    name: v.name,
                    parameter: v.parameter,
                    value: None,
                    message: "template.yaml sets it from the stack parameter".into(),
                });
            }
            continue;
        };
        let rule = allowed::rule(v.parameter).unwrap_or_else(|| panic!("no rule for {}", v.parameter));
        let mut message = rule.check(&value).err();
        if message.is_none() {
            message = home.elsewhere(&value);
        }
        if let Some(message) = message {
            bad.push(BadVariable {
                name: v.name,
                parameter: v.parameter,
                value: Some(excerpt(&value)),
                message,
            });
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(StackError(bad))
    }
}

/// Where the function runs: the Region (Lambda's `AWS_REGION`) and the stack's account.
struct Home<'a> {
    region: Option<&'a str>,
    account: Option<&'a str>,
}

impl Home<'_> {
    /// Why an ARN (`arn:PARTITION:SERVICE:REGION:ACCOUNT:...`) is out of reach: in another
    /// Region than the function's or another account than the stack's (the roles' statements,
    /// a Kinesis destination and an event source mapping are the function's own Region's and
    /// account's). `None` for a value that is no ARN, or one at home.
    fn elsewhere(&self, value: &str) -> Option<String> {
        let mut fields = value.strip_prefix("arn:")?.split(':').skip(2);
        let (arn_region, arn_account) = (fields.next()?, fields.next()?);
        let mut why = Vec::new();
        if let Some(region) = self.region.filter(|r| *r != arn_region) {
            why.push(format!(
                "in Region {arn_region}, but the function runs in {region}"
            ));
        }
        if let Some(account) = self.account.filter(|a| *a != arn_account) {
            why.push(format!("in account {arn_account}, but the stack is in {account}"));
        }
        (!why.is_empty()).then(|| {
            format!(
                "is {}: name a resource in the stack's own Region and account",
                why.join(" and ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// What template.yaml sets with its defaults, without a PolicyOverride.
    fn stack() -> BTreeMap<&'static str, String> {
        let mut env: BTreeMap<&str, String> = crate::parameters::tests_support::defaults()
            .into_iter()
            .map(|(parameter, value)| {
                let v = VARIABLES.iter().find(|v| v.parameter == parameter).unwrap();
                (v.name, value)
            })
            .collect();
        env.insert(POLICY_ENV, String::new());
        env.insert(ACCOUNT_ENV, "123456789012".into());
        env.insert("ROLLOVER_PUBLISH_TABLES", "true".into());
        env.insert("ROLLOVER_PUBLISH_EVENTS", "true".into());
        env
    }

    fn check(env: &BTreeMap<&'static str, String>) -> Result<(), StackError> {
        check_environment(|name| env.get(name).cloned())
    }

    #[test]
    fn the_templates_defaults_pass_and_a_missing_prefix_is_named() {
        let mut env = stack();
        assert_eq!(check(&env), Ok(()));
        env.remove("ROLLOVER_TABLE_PREFIX");
        let err = check(&env).unwrap_err().to_string();
        assert!(
            err.contains("ROLLOVER_TABLE_PREFIX (parameter TablePrefix) is not set"),
            "{err}"
        );
        // An empty environment names every variable the template sets.
        let err = check_environment(|_| None).unwrap_err();
        assert_eq!(err.0.len(), VARIABLES.len() + 4, "{err}");
    }

    #[test]
    fn with_an_override_only_the_grants_and_the_switches_are_set() {
        let mut env: BTreeMap<&str, String> = stack()
            .into_iter()
            .filter(|(name, _)| {
                VARIABLES
                    .iter()
                    .find(|v| v.name == *name)
                    .is_none_or(|v| v.grants || v.parameter == "Autoscaling")
            })
            .collect();
        env.insert(POLICY_ENV, r#"{"prefix":"timeseries"}"#.into());
        assert_eq!(check(&env), Ok(()));
        env.remove("ROLLOVER_AUTOSCALING");
        let err = check(&env).unwrap_err().to_string();
        assert!(err.contains("ROLLOVER_AUTOSCALING"), "{err}");
    }

    #[test]
    fn switches_take_true_or_false_and_values_their_parameters_rule() {
        for (name, value) in [
            ("ROLLOVER_PUBLISH_TABLES", "True"),
            ("ROLLOVER_PUBLISH_EVENTS", "1"),
            ("ROLLOVER_AUTOSCALING", "yes"),
            ("ROLLOVER_WRITE_GRACE", "2 weeks"),
            ("ROLLOVER_TIME_ZONE", "Europe/Berlin "),
            ("ROLLOVER_PREMAKE", " 1"),
        ] {
            let mut env = stack();
            env.insert(name, value.into());
            let err = check(&env).unwrap_err();
            assert_eq!(err.0.len(), 1, "{err}");
            assert_eq!(err.0[0].name, name);
            let message = err.to_string();
            assert!(message.contains(&format!("{value:?}")), "{message}");
        }
    }

    #[test]
    fn an_arn_in_another_region_or_account_is_refused() {
        let mut env = stack();
        env.insert(
            "ROLLOVER_CHANGE_STREAM_ARN",
            "arn:aws:kinesis:eu-west-1:123456789012:stream/s".into(),
        );
        assert_eq!(check(&env), Ok(()));
        env.insert(REGION_ENV, "us-east-1".into());
        let err = check(&env).unwrap_err().to_string();
        assert!(
            err.contains("ROLLOVER_CHANGE_STREAM_ARN") && err.contains("eu-west-1"),
            "{err}"
        );
        env.insert(
            "ROLLOVER_CONSUMER_FUNCTION_ARN",
            "arn:aws:lambda:us-east-1:210987654321:function:theirs".into(),
        );
        env.insert(
            "ROLLOVER_CHANGE_STREAM_ARN",
            "arn:aws:kinesis:us-east-1:123456789012:stream/s".into(),
        );
        let err = check(&env).unwrap_err();
        assert_eq!(err.0.len(), 1, "{err}");
        assert_eq!(err.0[0].name, "ROLLOVER_CONSUMER_FUNCTION_ARN");
        assert!(err.to_string().contains("account 210987654321"), "{err}");
        // The account itself is the template's: twelve digits, and there.
        env.insert(ACCOUNT_ENV, "12345".into());
        assert!(check(&env).unwrap_err().to_string().contains(ACCOUNT_ENV));
        env.remove(ACCOUNT_ENV);
        assert!(check(&env).unwrap_err().to_string().contains("AWS::AccountId"));
    }
}
