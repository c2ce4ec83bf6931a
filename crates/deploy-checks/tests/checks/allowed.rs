//! The cold start's rule for each stack variable (`ddb_rollover_stack::allowed::RULES`) is
//! template.yaml's own: each parameter's `AllowedPattern`, `AllowedValues`, `MinValue` and
//! `MaxValue`, read from the template here, so the function refuses exactly what CloudFormation
//! refuses and the two cannot drift (issue 41).

use aws_model::template::Value;
use ddb_rollover_stack::allowed::{Rule, RULES};
use ddb_rollover_stack::parameters::{PUBLISHING, VARIABLES};
use deploy_checks::template::{RepoTemplate, Template};

/// A scalar as CloudFormation reads it: a string, a number or a boolean as written.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => panic!("not a scalar: {other:?}"),
    }
}

/// The rule template.yaml gives `parameter`.
fn templates_rule(template: &Template, parameter: &str) -> Rule {
    let parameters = template.section("Parameters");
    let (_, body) = parameters
        .iter()
        .find(|(name, _)| name == parameter)
        .unwrap_or_else(|| panic!("template.yaml has no parameter {parameter}"));
    let kind = body.get("Type").and_then(Value::as_str).unwrap_or_default();
    if let Some(pattern) = body.get("AllowedPattern") {
        let pattern: &'static str = Box::leak(text(pattern).into_boxed_str());
        return Rule::Pattern(pattern);
    }
    if let Some(Value::Sequence(values)) = body.get("AllowedValues") {
        let values: Vec<&'static str> = values
            .iter()
            .map(|v| &*Box::leak(text(v).into_boxed_str()))
            .collect();
        return Rule::Values(Box::leak(values.into_boxed_slice()));
    }
    assert_eq!(
        kind, "Number",
        "{parameter}: no AllowedPattern or AllowedValues, and not a Number"
    );
    let bound = |key: &str| body.get(key).map(|v| text(v).parse::<i64>().unwrap());
    Rule::Number {
        min: bound("MinValue"),
        max: bound("MaxValue"),
    }
}

#[test]
fn every_variables_rule_is_its_template_parameters() {
    let template = Template::load();
    let parameters: Vec<&str> = VARIABLES.iter().chain(&PUBLISHING).map(|v| v.parameter).collect();
    let ruled: Vec<&str> = RULES.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        ruled, parameters,
        "one rule per variable the functions read, in order"
    );
    for (parameter, rule) in RULES {
        assert_eq!(rule, templates_rule(&template, parameter), "{parameter}");
    }
}

/// The template's defaults pass their own rules (what a default stack's functions start with).
#[test]
fn the_templates_defaults_pass() {
    let template = Template::load();
    let defaults = template.parameter_defaults().unwrap();
    for (parameter, rule) in RULES {
        assert_eq!(rule.check(&defaults[parameter]), Ok(()), "{parameter}");
    }
}

/// Hostile read of issue 41: `arn:aws[a-z-]*:` let any partition starting "aws" through. The
/// stream and consumer ARNs take AWS's partitions only, as the engine's own check does
/// (`ddb_rollover::policy::AWS_PARTITIONS`).
#[test]
fn an_arn_takes_only_awss_partitions() {
    let rule = |parameter| RULES.iter().find(|(p, _)| *p == parameter).unwrap().1;
    let stream = rule("ChangeStreamArn");
    let consumer = rule("ConsumerFunctionArn");
    for partition in ddb_rollover::policy::AWS_PARTITIONS {
        assert_eq!(
            stream.check(&format!(
                "arn:{partition}:kinesis:eu-west-1:123456789012:stream/changes"
            )),
            Ok(()),
            "{partition}"
        );
        assert_eq!(
            consumer.check(&format!(
                "arn:{partition}:lambda:eu-west-1:123456789012:function:f"
            )),
            Ok(()),
            "{partition}"
        );
    }
    for partition in ["awsevil", "aws-", "aws-iso-z", "aws-cnx"] {
        assert!(stream
            .check(&format!(
                "arn:{partition}:kinesis:eu-west-1:123456789012:stream/changes"
            ))
            .is_err());
        assert!(consumer
            .check(&format!(
                "arn:{partition}:lambda:eu-west-1:123456789012:function:f"
            ))
            .is_err());
    }
}
