//! The reader against the fixtures: values, JSON, conditions.

use super::fixtures::{conditional, SMALL, WITH_TABLES};
use super::Template;

#[test]
fn resolves_sub_ref_and_getatt() {
    let t = Template::parse(SMALL).unwrap();
    let text = |yaml: &str| t.resolve(&yaml_serde::from_str(yaml).unwrap()).unwrap();
    assert_eq!(text("!Ref Prefix"), "ts");
    assert_eq!(text("!Ref Count"), "3");
    assert_eq!(text("!Ref AWS::Region"), "us-east-1");
    assert_eq!(text("!Ref Queue"), "{ref:Queue}");
    assert_eq!(text("!GetAtt Queue.Arn"), "{Queue.Arn}");
    assert_eq!(
        text("!Sub '${Prefix}-${Count} ${!Literal} ${Q.Arn}'"),
        "ts-3 ${Literal} {Q.Arn}"
    );
    assert_eq!(text("!Sub ['${A}/${Prefix}', {A: !Ref Count}]"), "3/ts");
    assert_eq!(text("{Ref: Prefix}"), "ts");
}

#[test]
fn a_named_dynamodb_table_resolves_to_its_name_and_arn() {
    let t = Template::parse(WITH_TABLES).unwrap();
    let text = |yaml: &str| t.resolve(&yaml_serde::from_str(yaml).unwrap());
    assert_eq!(text("!Ref Ledger").unwrap(), "ts_ledger");
    assert_eq!(
        text("!GetAtt Ledger.Arn").unwrap(),
        "arn:aws:dynamodb:us-east-1:123456789012:table/ts_ledger"
    );
    assert_eq!(
        text("!GetAtt [Ledger, Arn]").unwrap(),
        text("!GetAtt Ledger.Arn").unwrap()
    );
    assert_eq!(
        text("!Sub '${Ledger}/${Ledger.Arn}'").unwrap(),
        "ts_ledger/arn:aws:dynamodb:us-east-1:123456789012:table/ts_ledger"
    );
    // Other attributes, a table CloudFormation names, other resources: placeholders.
    assert_eq!(text("!GetAtt Ledger.StreamArn").unwrap(), "{Ledger.StreamArn}");
    assert_eq!(text("!Ref Unnamed").unwrap(), "{ref:Unnamed}");
    assert_eq!(text("!GetAtt Unnamed.Arn").unwrap(), "{Unnamed.Arn}");
    assert_eq!(text("!Ref Queue").unwrap(), "{ref:Queue}");
    assert_eq!(text("!GetAtt Queue.Arn").unwrap(), "{Queue.Arn}");
    // The name follows the parameters.
    let mut eu = Template::parse(WITH_TABLES).unwrap();
    eu.set_parameter("Prefix", "ts_eu");
    assert_eq!(
        eu.resolve(&yaml_serde::from_str("!GetAtt Ledger.Arn").unwrap())
            .unwrap(),
        "arn:aws:dynamodb:us-east-1:123456789012:table/ts_eu_ledger"
    );
    // Names that refer to each other are an error, not a stack overflow.
    let e = text("!Ref Ping").unwrap_err();
    assert!(e.contains("cycle"), "{e}");
}

#[test]
fn to_json_string_keeps_types_and_resolves_what_it_holds() {
    let t = Template::parse(SMALL).unwrap();
    let text = |yaml: &str| t.resolve(&yaml_serde::from_str(yaml).unwrap()).unwrap();
    let json = text(
        "Fn::ToJsonString: {n: 3600, on: true, name: !Ref Prefix, list: [a, !Sub '${Prefix}-x', !Ref Queue]}",
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json).unwrap(),
        serde_json::json!({"n": 3600, "on": true, "name": "ts", "list": ["a", "ts-x", "{ref:Queue}"]})
    );
}

#[test]
fn evaluates_conditions_with_defaults_and_overrides() {
    for (overrides, expected) in [
        (
            &[][..],
            &[
                ("HasBucket", false),
                ("HasDays", false),
                ("FlagOn", false),
                ("Either", false),
                ("Both", false),
            ][..],
        ),
        (
            &[("Bucket", "b"), ("Days", "2")],
            &[
                ("HasBucket", true),
                ("HasDays", true),
                ("Either", true),
                ("Both", true),
            ],
        ),
        (
            &[("Days", "2"), ("Flag", "true")],
            &[("Either", true), ("Both", false)],
        ),
    ] {
        let t = conditional(overrides);
        for (name, holds) in expected {
            assert_eq!(t.condition(name), Ok(*holds), "{name} with {overrides:?}");
        }
    }
    let t = conditional(&[("Days", "2"), ("Flag", "true")]);
    assert!(t.condition("Nope").unwrap_err().contains("no condition Nope"));
    assert!(t.condition("Loop").unwrap_err().contains("cycle"));
}

#[test]
fn if_inside_sub_variables_and_no_value_where_a_value_is_needed() {
    let text = |t: &Template, yaml: &str| t.resolve(&yaml_serde::from_str(yaml).unwrap());
    let sub = r#"!Sub ['{"bucket":${B},"days":${D}}', {B: !If [HasBucket, !Sub '"${Bucket}"', "null"], D: !If [HasDays, !Ref Days, "null"]}]"#;
    assert_eq!(
        text(&conditional(&[]), sub).unwrap(),
        r#"{"bucket":null,"days":null}"#
    );
    assert_eq!(
        text(&conditional(&[("Bucket", "b"), ("Days", "7")]), sub).unwrap(),
        r#"{"bucket":"b","days":7}"#
    );
    let t = conditional(&[]);
    assert!(text(&t, "!If [HasBucket, x, !Ref AWS::NoValue]")
        .unwrap_err()
        .contains("NoValue"));
    assert!(text(&t, "!If [HasBucket, x]").is_err());
    assert_eq!(
        t.resolve_structure(&yaml_serde::from_str("!Ref AWS::NoValue").unwrap()),
        Ok(None)
    );
}
