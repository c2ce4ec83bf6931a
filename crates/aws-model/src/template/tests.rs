//! The reader against the fixtures: values, JSON, conditions.

use super::fixtures::{conditional, SMALL};
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
