//! A role as `template.yaml` grants it: the statements of an `AWS::IAM::Role`'s inline
//! policies, resolved for a stack with given parameters, and what IAM decides for a request
//! made with it. The one place the tests ask "may this function do that?".
//!
//! Statements keep their `Condition` blocks, parsed into [`Condition`]s: an operator or key
//! the evaluation does not implement makes [`Template::role_statements`] fail.

use std::path::Path;

use crate::iam::{evaluate, Condition, Decision, Request, Statement};
use crate::template::{Template, Value};

/// A function's role: its statements, resolved for one stack's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Role {
    /// The role's logical id in the template.
    pub logical_id: String,
    /// Every statement of its inline policies.
    pub statements: Vec<Statement>,
}

impl Role {
    /// The role of `function` (its logical id, e.g. `CreateNewFunction`) in the template at
    /// `template_path`, for a stack with these parameters (the rest at their defaults).
    pub fn from_template(
        template_path: &Path,
        function: &str,
        parameters: &[(&str, &str)],
    ) -> Result<Role, String> {
        let mut template = Template::read(template_path)?;
        template.set_parameters(parameters)?;
        Role::of_function(&template, function)
    }

    /// The role of `function` in an already read template.
    pub fn of_function(template: &Template, function: &str) -> Result<Role, String> {
        let role = template
            .function_role(function)?
            .ok_or_else(|| format!("{function} has no Role"))?;
        Role::named(template, &role)
    }

    /// The `AWS::IAM::Role` with this logical id.
    pub fn named(template: &Template, role: &str) -> Result<Role, String> {
        Ok(Role {
            logical_id: role.to_owned(),
            statements: template.role_statements(role)?,
        })
    }

    /// What IAM decides for `request` made with this role.
    pub fn decide(&self, request: &Request) -> Decision {
        evaluate(&self.statements, request)
    }

    /// Whether IAM allows `request` made with this role.
    pub fn allows(&self, request: &Request) -> bool {
        self.decide(request).is_allowed()
    }
}

impl Template {
    /// The statements of every inline policy of an `AWS::IAM::Role`, resolved. Managed
    /// policies cannot be evaluated here: a role that has any is an error.
    pub fn role_statements(&self, role: &str) -> Result<Vec<Statement>, String> {
        let resource = self.resource(role).ok_or_else(|| format!("no resource {role}"))?;
        if resource.get("Type").and_then(Value::as_str) != Some("AWS::IAM::Role") {
            return Err(format!("{role} is not an AWS::IAM::Role"));
        }
        let props = resource.get("Properties").unwrap_or(&Value::Null);
        if props.get("ManagedPolicyArns").is_some() {
            return Err(format!(
                "{role} has ManagedPolicyArns, which this check cannot evaluate: use inline policies"
            ));
        }
        // Conditional policies and statements (`!If [Cond, {...}, !Ref AWS::NoValue]`) are
        // chosen first, so what follows sees the role a stack with these parameters would get.
        let policies = match props.get("Policies") {
            Some(p) => self.resolve_structure(p)?.unwrap_or(Value::Null),
            None => Value::Null,
        };
        let mut out = Vec::new();
        for policy in policies.as_sequence().into_iter().flatten() {
            let name = policy.get("PolicyName").and_then(Value::as_str).unwrap_or("?");
            let statements = policy
                .get("PolicyDocument")
                .and_then(|d| d.get("Statement"))
                .ok_or_else(|| format!("{role} policy {name}: no PolicyDocument.Statement"))?;
            let statements = match statements {
                Value::Sequence(s) => s.clone(),
                one => vec![one.clone()],
            };
            for s in &statements {
                out.push(
                    self.statement(s)
                        .map_err(|e| format!("{role} policy {name}: {e}"))?,
                );
            }
        }
        Ok(out)
    }

    fn statement(&self, s: &Value) -> Result<Statement, String> {
        let list = |key: &str| -> Result<Vec<String>, String> {
            match s.get(key) {
                None => Ok(Vec::new()),
                Some(Value::Sequence(items)) => items.iter().map(|i| self.resolve(i)).collect(),
                Some(one) => Ok(vec![self.resolve(one)?]),
            }
        };
        Ok(Statement {
            sid: s.get("Sid").and_then(Value::as_str).map(str::to_owned),
            effect: s
                .get("Effect")
                .and_then(Value::as_str)
                .ok_or("a statement without Effect")?
                .to_owned(),
            actions: list("Action")?,
            not_actions: list("NotAction")?,
            resources: list("Resource")?,
            not_resources: list("NotResource")?,
            conditions: match s.get("Condition") {
                None => Vec::new(),
                Some(block) => self.conditions(block)?,
            },
        })
    }

    /// A statement's `Condition` block, `{Operator: {Key: value or [values]}}`, resolved. An
    /// operator or key [`iam`](crate::iam) cannot evaluate is an error, never skipped.
    fn conditions(&self, block: &Value) -> Result<Vec<Condition>, String> {
        let Value::Mapping(operators) = block else {
            return Err(format!("Condition is not a mapping: {block:?}"));
        };
        let mut out = Vec::new();
        for (operator, keys) in operators {
            // YAML reads a plain `Null:` key as null, not as the string: it is the operator.
            let operator = match operator {
                Value::Null => "Null",
                other => other
                    .as_str()
                    .ok_or_else(|| format!("Condition operator is not a string: {other:?}"))?,
            };
            let Value::Mapping(keys) = keys else {
                return Err(format!("Condition {operator}: not a mapping of keys to values"));
            };
            if keys.is_empty() {
                return Err(format!("Condition {operator}: no keys"));
            }
            for (key, values) in keys {
                let key = key
                    .as_str()
                    .ok_or_else(|| format!("Condition {operator}: key is not a string: {key:?}"))?;
                let values = match values {
                    Value::Sequence(items) => items.iter().map(|i| self.resolve(i)).collect(),
                    one => self.resolve(one).map(|v| vec![v]),
                }
                .map_err(|e| format!("Condition {operator} {key}: {e}"))?;
                out.push(Condition::parse(operator, key, values).map_err(|e| format!("Condition: {e}"))?);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::fixtures::{conditional, SMALL, WITH_CONDITIONS, WITH_TABLES};

    fn sids(t: &Template) -> Vec<String> {
        t.role_statements("Role")
            .unwrap()
            .into_iter()
            .map(|s| s.sid.unwrap())
            .collect()
    }

    #[test]
    fn reads_role_statements() {
        let t = Template::parse(SMALL).unwrap();
        let statements = t.role_statements("Role").unwrap();
        assert_eq!(statements.len(), 2);
        assert_eq!(statements[0].resources, ["*"]);
        assert_eq!(
            statements[1].resources,
            ["arn:aws:dynamodb:us-east-1:123456789012:table/ts_*", "{Q.Arn}"]
        );
    }

    #[test]
    fn reads_conditions_and_refuses_what_it_cannot_evaluate() {
        use crate::iam::{ConditionKey, Operator};
        let t = Template::parse(WITH_CONDITIONS).unwrap();
        let s = &t.role_statements("Role").unwrap()[0];
        assert_eq!(s.conditions.len(), 3, "{:?}", s.conditions);
        assert_eq!(s.conditions[0].operator, Operator::StringEqualsIfExists);
        assert_eq!(
            s.conditions[0].key,
            ConditionKey::ResourceTag("ddb-rollover:family".into())
        );
        assert_eq!(s.conditions[0].values, ["ts"]);
        assert_eq!(
            s.conditions[1].key,
            ConditionKey::RequestTag("ddb-rollover:family".into())
        );
        assert_eq!(s.conditions[1].values, ["ts", "ts-old"]);
        assert_eq!(s.conditions[2].operator, Operator::Null);
        assert_eq!(s.conditions[2].values, ["false"]);

        let mut relaxed = Template::parse(WITH_CONDITIONS).unwrap();
        relaxed.set_parameter("Strict", "false");
        let mapping_without_keys = relaxed.role_statements("Role").unwrap_err();
        assert!(mapping_without_keys.contains("Null"), "{mapping_without_keys}");

        let e = t.role_statements("Odd").unwrap_err();
        assert!(
            e.contains("ForAllValues:StringEquals") && e.contains("not evaluated"),
            "{e}"
        );
    }

    #[test]
    fn if_and_no_value_choose_statements_and_policies() {
        assert_eq!(sids(&conditional(&[])), ["Always", "Flagged"]);
        assert_eq!(
            sids(&conditional(&[("Days", "1")])),
            ["Always", "Delete", "Flagged"]
        );
        let t = conditional(&[("Bucket", "my-bucket"), ("Flag", "true")]);
        let statements = t.role_statements("Role").unwrap();
        let labels: Vec<_> = statements.iter().map(|s| s.label()).collect();
        assert_eq!(labels, ["Always", "Flagged", "Objects"]);
        assert_eq!(statements[1].actions, ["a:B", "a:C"]);
        assert_eq!(statements[2].resources, ["arn:aws:s3:::my-bucket/*"]);
        assert_eq!(
            conditional(&[]).role_statements("Role").unwrap()[1].actions,
            ["a:B"]
        );
    }

    /// A Deny on one table's `!GetAtt` ARN beside an Allow on a pattern that matches it: the
    /// Deny wins there, the Allow everywhere else; an Allow on that ARN only reaches no other.
    #[test]
    fn a_deny_on_a_getatt_table_beats_an_allow_on_its_pattern() {
        use crate::stack::table_arn;
        let t = Template::parse(WITH_TABLES).unwrap();
        let role = Role::named(&t, "Role").unwrap();
        assert_eq!(role.statements[2].resources[0], table_arn("ts_ledger"));
        assert_eq!(
            role.statements[2].resources[1],
            format!("{}/x", table_arn("ts_ledger"))
        );
        let decide = |action: &str, table: &str| role.decide(&Request::new(action, &table_arn(table)));
        assert_eq!(
            decide("dynamodb:UpdateTable", "ts_ledger"),
            Decision::ExplicitDeny("KeepLedger".into())
        );
        assert_eq!(
            decide("dynamodb:UpdateTable", "ts_2018-10-25"),
            Decision::Allowed("Tables".into())
        );
        assert_eq!(
            decide("dynamodb:DescribeTable", "ts_ledger"),
            Decision::Allowed("Tables".into())
        );
        assert_eq!(
            decide("dynamodb:PutItem", "ts_ledger"),
            Decision::Allowed("Items".into())
        );
        for other in ["ts_eu_ledger", "ts_2018-10-25", "ts_ledger2", "other_ledger"] {
            assert_eq!(
                decide("dynamodb:PutItem", other),
                Decision::ImplicitDeny,
                "{other}"
            );
        }
        // The Deny is on the one ARN: a nested family's ledger is decided by the Allow.
        assert_eq!(
            decide("dynamodb:UpdateTable", "ts_eu_ledger"),
            Decision::Allowed("Tables".into())
        );
    }

    /// The repository's template, where the functions' roles are.
    fn repository_template() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../template.yaml")
    }

    #[test]
    fn a_function_role_from_the_repository_template_with_parameters() {
        use crate::iam::tags;
        use crate::stack::table_arn;
        let path = repository_template();
        let delete = |role: &Role, family: &str| {
            role.decide(
                &Request::new("dynamodb:DeleteTable", &table_arn("timeseries_2018-10-25"))
                    .with_resource_tags(tags(&[("ddb-rollover:family", family)])),
            )
        };
        let keeping = Role::from_template(&path, "ResizeOldFunction", &[]).unwrap();
        assert_eq!(keeping.logical_id, "ResizeOldRole");
        assert_eq!(delete(&keeping, "timeseries"), Decision::ImplicitDeny);
        let deleting = Role::from_template(&path, "ResizeOldFunction", &[("DeleteAfter", "48")]).unwrap();
        assert_eq!(
            delete(&deleting, "timeseries"),
            Decision::Allowed("DeleteFamilyTables".into())
        );
        assert!(!deleting.allows(
            &Request::new("dynamodb:DeleteTable", &table_arn("timeseries_2018-10-25"))
                .with_resource_tags(tags(&[("ddb-rollover:family", "other")]))
        ));
        let e = Role::from_template(&path, "ResizeOldFunction", &[("NoSuchParameter", "1")]).unwrap_err();
        assert!(e.contains("NoSuchParameter"), "{e}");
        let e = Role::from_template(&path, "AlarmTopic", &[]).unwrap_err();
        assert!(e.contains("no Role"), "{e}");
    }
}
