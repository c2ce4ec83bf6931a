//! ROLLOVER_POLICY's optional parts ("template", "retention"), built in template.yaml from the
//! stack parameters with Conditions, Fn::If and Fn::Sub: for every combination of the optional
//! parameters, both functions get valid JSON that says what the parameters mean, and the
//! policy parses. With the defaults, neither part is there at all. Then the key, the cold
//! phase and the write grace the parameters build; PolicyOverride, which replaces it all; and
//! ROLLOVER_GRANTS, which must say what the roles were given, so the cold-start check
//! (`ddb_rollover_lambda::grants`) refuses exactly the policies the roles cannot serve.

use ddb_rollover_lambda::grants::{self, Capability, Grants, GRANTS_ENV, TABLE_PREFIX_ENV};
use deploy_checks::features::{combinations, Features};
use deploy_checks::template::{Function, Template};
use serde_json::{json, Value};

fn functions(overrides: &[(&str, &str)]) -> Vec<Function> {
    let mut template = Template::load();
    for (name, value) in overrides {
        template.set_parameter(name, value);
    }
    template
        .functions()
        .unwrap_or_else(|e| panic!("template.yaml with {overrides:?}: {e}"))
}

/// The env policy as JSON; panics with the text if it is not JSON.
fn policy_json(f: &Function, overrides: &[(&str, &str)]) -> Value {
    let text = f
        .environment
        .get(ddb_rollover::policy::POLICY_ENV)
        .unwrap_or_else(|| panic!("{}: no ROLLOVER_POLICY", f.logical_id));
    serde_json::from_str(text).unwrap_or_else(|e| {
        panic!(
            "{}: ROLLOVER_POLICY with {overrides:?} is not JSON ({e}): {text}",
            f.logical_id
        )
    })
}

/// The "template" part the features call for; `None` when nothing is on. A setting not asked
/// for is null, which leaves it as it is on the tables.
fn expected_template(on: &Features) -> Option<Value> {
    (on.ttl || on.pitr() || on.deletion_protection).then(|| {
        json!({
            "ttl_attribute": on.ttl.then_some("expires_at"),
            "point_in_time_recovery": on.pitr().then_some(true),
            "deletion_protection": on.deletion_protection.then_some(true),
        })
    })
}

/// The "retention" part: archive fields only when archiving, delete fields only when deleting.
fn expected_retention(on: &Features) -> Option<Value> {
    (on.archive || on.delete).then(|| {
        json!({
            "archive_after": on.archive.then_some(30),
            "bucket": on.archive.then_some("archive-bucket"),
            "prefix": on.archive.then_some("ddb-rollover/"),
            "delete_after": on.delete.then_some(40),
            "max_deletes_per_run": on.delete.then_some(5),
        })
    })
}

#[test]
fn every_combination_gives_json_that_says_what_the_parameters_mean() {
    for overrides in combinations() {
        let on = Features::of(&overrides);
        for f in functions(&overrides) {
            let policy = policy_json(&f, &overrides);
            let what = format!("{} with {overrides:?}: {policy}", f.logical_id);
            assert_eq!(policy.get("template").cloned(), expected_template(&on), "{what}");
            assert_eq!(
                policy.get("retention").cloned(),
                expected_retention(&on),
                "{what}"
            );
            assert_eq!(policy["prefix"], "timeseries", "{what}");
            assert_eq!(policy["phases"].as_array().map(Vec::len), Some(3), "{what}");
        }
    }
}

#[test]
fn every_combination_parses_as_the_policy_the_parameters_mean() {
    for overrides in combinations() {
        let on = Features::of(&overrides);
        for f in functions(&overrides) {
            let what = format!("{} with {overrides:?}", f.logical_id);
            let policy = f
                .policy()
                .unwrap_or_else(|e| panic!("{what}: ROLLOVER_POLICY does not parse: {e}"));
            assert_eq!(
                policy.template.ttl_attribute.as_deref(),
                on.ttl.then_some("expires_at"),
                "{what}"
            );
            assert_eq!(policy.template.point_in_time_recovery, on.pitr(), "{what}");
            assert_eq!(
                policy.template.deletion_protection,
                on.deletion_protection.then_some(true),
                "{what}"
            );
            let retention = policy.retention.as_ref();
            assert_eq!(retention.is_some(), on.archive || on.delete, "{what}");
            let archive = retention.and_then(|r| r.archive.as_ref());
            assert_eq!(
                archive.map(|a| (a.after, a.bucket.as_str(), a.prefix.as_str())),
                on.archive.then_some((30, "archive-bucket", "ddb-rollover/")),
                "{what}"
            );
            assert_eq!(
                retention.and_then(|r| r.delete_after),
                on.delete.then_some(40),
                "{what}"
            );
            if on.delete {
                assert_eq!(retention.map(|r| r.max_deletes_per_run), Some(5), "{what}");
            }
        }
    }
}

#[test]
fn with_the_defaults_the_policy_has_no_template_or_retention() {
    for f in functions(&[]) {
        let policy = policy_json(&f, &[]);
        assert!(policy.get("template").is_none(), "{}: {policy}", f.logical_id);
        assert!(policy.get("retention").is_none(), "{}: {policy}", f.logical_id);
    }
}

#[test]
fn retention_parameters_reach_the_policy() {
    let overrides = [
        ("ArchiveBucket", "my.archive-1"),
        ("ArchivePrefix", "exports/ddb/"),
        ("ArchiveAfter", "7"),
        ("DeleteAfter", "90"),
        ("MaxDeletesPerRun", "12"),
        ("TtlAttribute", "ttl.at_v-2"),
    ];
    for f in functions(&overrides) {
        let policy = policy_json(&f, &overrides);
        assert_eq!(
            policy["retention"],
            json!({"archive_after": 7, "bucket": "my.archive-1", "prefix": "exports/ddb/",
                   "delete_after": 90, "max_deletes_per_run": 12}),
            "{}",
            f.logical_id
        );
        assert_eq!(policy["template"]["ttl_attribute"], "ttl.at_v-2");
        assert_eq!(policy["template"]["point_in_time_recovery"], true);
    }
}

// ---------------------------------------------------------------- keys, phases, grace

/// One function's policy JSON with these overrides (both functions get the same).
fn policy_with(overrides: &[(&str, &str)]) -> Value {
    let functions = functions(overrides);
    let first = policy_json(&functions[0], overrides);
    for f in &functions[1..] {
        assert_eq!(policy_json(f, overrides), first, "{} differs", f.logical_id);
    }
    first
}

#[test]
fn the_default_keys_are_strings_that_the_application_helpers_can_use() {
    for f in functions(&[]) {
        let policy = f.policy().unwrap_or_else(|e| panic!("{}: {e}", f.logical_id));
        let layout = ddb_rollover_app::Layout::new(&policy, ddb_rollover_app::Sharding::new(4).unwrap())
            .unwrap_or_else(|e| {
                panic!(
                    "{}: the application helpers refuse the default key: {e}",
                    f.logical_id
                )
            });
        assert_eq!((layout.partition_key(), layout.sort_key()), ("pk", "sk"));
    }
}

#[test]
fn key_parameters_build_the_key() {
    assert_eq!(
        policy_with(&[])["key"],
        json!({"partition": {"name": "pk", "type": "S"}, "sort": {"name": "sk", "type": "S"}})
    );
    // Stacks deployed before the key parameters: numbers, as the template used to hard-code.
    let old = [("PartitionKeyType", "N"), ("SortKeyType", "N")];
    assert_eq!(
        policy_with(&old)["key"],
        json!({"partition": {"name": "pk", "type": "N"}, "sort": {"name": "sk", "type": "N"}})
    );
    let custom = [
        ("PartitionKeyName", "device.id"),
        ("PartitionKeyType", "B"),
        ("SortKeyName", "ts"),
        ("SortKeyType", "N"),
    ];
    assert_eq!(
        policy_with(&custom)["key"],
        json!({"partition": {"name": "device.id", "type": "B"}, "sort": {"name": "ts", "type": "N"}})
    );
    // No sort key: SortKeyType is not used.
    let no_sort = [("SortKeyName", ""), ("SortKeyType", "B")];
    assert_eq!(
        policy_with(&no_sort)["key"],
        json!({"partition": {"name": "pk", "type": "S"}})
    );
    for overrides in [&old[..], &custom[..], &no_sort[..]] {
        for f in functions(overrides) {
            let policy = f
                .policy()
                .unwrap_or_else(|e| panic!("{} with {overrides:?}: {e}", f.logical_id));
            assert_eq!(policy.key.sort.is_some(), overrides != no_sort, "{overrides:?}");
        }
    }
}

#[test]
fn cold_phase_parameters_shape_phase_two() {
    let cases: [(&[(&str, &str)], Value); 5] = [
        (&[], json!({"min_age": 2, "read": 1, "write": 1})),
        (
            &[("ColdBilling", "on_demand"), ("ColdReadCapacity", "9")],
            json!({"min_age": 2, "billing": "on_demand"}),
        ),
        (
            &[("ColdTableClass", "standard_ia")],
            json!({"min_age": 2, "read": 1, "write": 1, "table_class": "standard_ia"}),
        ),
        (
            &[("ColdBilling", "on_demand"), ("ColdTableClass", "standard_ia")],
            json!({"min_age": 2, "billing": "on_demand", "table_class": "standard_ia"}),
        ),
        (
            &[("ColdTableClass", "standard"), ("ColdWriteCapacity", "4")],
            json!({"min_age": 2, "read": 1, "write": 4, "table_class": "standard"}),
        ),
    ];
    for (overrides, expected) in cases {
        let policy = policy_with(overrides);
        assert_eq!(policy["phases"][2], expected, "{overrides:?}");
        for f in functions(overrides) {
            let parsed = f
                .policy()
                .unwrap_or_else(|e| panic!("{} with {overrides:?}: {e}", f.logical_id));
            let cold = &parsed.phases[2];
            let on_demand = overrides.contains(&("ColdBilling", "on_demand"));
            assert_eq!(
                matches!(cold.billing, ddb_rollover::settings::Billing::OnDemand(_)),
                on_demand,
                "{overrides:?}"
            );
            let class = overrides
                .iter()
                .find(|(n, _)| *n == "ColdTableClass")
                .map(|(_, v)| *v);
            assert_eq!(
                cold.table_class.map(|c| c.to_string()).as_deref(),
                class,
                "{overrides:?}"
            );
        }
    }
}

#[test]
fn write_grace_becomes_the_policys_grace() {
    assert!(policy_with(&[]).get("grace").is_none(), "no grace by default");
    for (grace, seconds) in [
        ("90m", 5400),
        ("1h 30m", 5400),
        ("1h30m", 5400),
        ("2h", 7200),
        ("1d", 86400),
    ] {
        let overrides = [("WriteGrace", grace)];
        let policy = policy_with(&overrides);
        assert_eq!(policy["grace"], grace, "{policy}");
        let parsed = ddb_rollover::Policy::from_json(&policy.to_string())
            .unwrap_or_else(|e| panic!("{grace}: {e}: {policy}"));
        assert_eq!(
            parsed.grace,
            Some(std::time::Duration::from_secs(seconds)),
            "{grace}"
        );
    }
}

#[test]
fn the_parameter_patterns_keep_the_json_well_formed() {
    // AllowedPattern of every parameter spliced into the JSON as a string: no quote, backslash
    // or control character can get through.
    let template = Template::load();
    for name in [
        "PartitionKeyName",
        "SortKeyName",
        "WriteGrace",
        "TtlAttribute",
        "TablePrefix",
    ] {
        let (_, param) = template
            .section("Parameters")
            .into_iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no parameter {name}"));
        let pattern = param
            .get("AllowedPattern")
            .and_then(|p| p.as_str())
            .unwrap_or_else(|| panic!("{name}: no AllowedPattern"));
        // The pattern without its `{n,m}` repetition counts: what is left names the characters.
        let mut characters = String::new();
        let mut rest = pattern;
        while let Some(start) = rest.find('{') {
            characters.push_str(&rest[..start]);
            let end = rest[start..].find('}').expect("a closed {n,m}") + start;
            let count = &rest[start + 1..end];
            assert!(
                count.chars().all(|c| c.is_ascii_digit() || c == ','),
                "{name}: {pattern:?} has a literal brace"
            );
            rest = &rest[end + 1..];
        }
        characters.push_str(rest);
        for bad in ['"', '\\', '\n', '{', '}', ','] {
            assert!(
                !characters.contains(bad),
                "{name}: pattern {pattern:?} allows {bad:?}"
            );
        }
    }
}

// ---------------------------------------------------------------- PolicyOverride

const OVERRIDE: &str = r#"{"prefix":"timeseries","period":"hour","premake":2,"key":{"partition":{"name":"device","type":"S"},"sort":{"name":"ts","type":"S"}},"phases":[{"min_age":0,"billing":"on_demand"},{"min_age":3,"read":1,"write":1,"table_class":"standard_ia"}],"retention":{"delete_after":48}}"#;

#[test]
fn policy_override_is_the_policy_as_it_is() {
    let overrides = [
        ("PolicyOverride", OVERRIDE),
        // Ignored with an override: the policy says it all.
        ("HotReadCapacity", "7"),
        ("WriteGrace", "1h"),
        ("ColdBilling", "on_demand"),
        ("PartitionKeyType", "N"),
    ];
    for f in functions(&overrides) {
        assert_eq!(
            f.environment[ddb_rollover::policy::POLICY_ENV],
            OVERRIDE,
            "{}",
            f.logical_id
        );
        let policy = f.policy().unwrap_or_else(|e| panic!("{}: {e}", f.logical_id));
        assert_eq!(policy.key.partition.name, "device");
        assert_eq!(policy.premake, 2);
    }
}

// ---------------------------------------------------------------- ROLLOVER_GRANTS

fn grants_of(f: &Function) -> Grants {
    let env = |name: &str| f.environment.get(name).map(String::as_str);
    assert!(
        env(GRANTS_ENV).is_some() && env(TABLE_PREFIX_ENV).is_some(),
        "{}: {GRANTS_ENV} and {TABLE_PREFIX_ENV} must be set",
        f.logical_id
    );
    Grants::parse(env(GRANTS_ENV), env(TABLE_PREFIX_ENV))
}

#[test]
fn rollover_grants_say_what_the_parameters_granted_and_the_built_policy_passes() {
    for overrides in combinations() {
        let on = Features::of(&overrides);
        for f in functions(&overrides) {
            let grants = grants_of(&f);
            let names: std::collections::BTreeSet<&str> =
                grants.capabilities.iter().map(|c| c.as_str()).collect();
            assert_eq!(names, on.grants(), "{} with {overrides:?}", f.logical_id);
            assert_eq!(grants.table_prefix.as_deref(), Some("timeseries"));
            // The policy the parameters build never needs more than they granted.
            let policy = f.policy().unwrap();
            grants
                .check(&policy)
                .unwrap_or_else(|e| panic!("{} with {overrides:?}: {e}", f.logical_id));
            let needed: std::collections::BTreeSet<&str> = grants::needs(&policy)
                .into_iter()
                .map(|(c, _)| c.as_str())
                .collect();
            let mut expected = on.grants();
            // Autoscaling is granted for a PolicyOverride; the built phases never use it.
            expected.remove("autoscaling");
            assert_eq!(needed, expected, "{} with {overrides:?}", f.logical_id);
        }
    }
}

/// One action per capability that a role has exactly when the capability is granted, for the
/// functions that use it.
fn probe(capability: Capability, operation: ddb_rollover::Operation) -> Option<&'static str> {
    use ddb_rollover::Operation::ResizeOld;
    match capability {
        Capability::Ttl => Some("dynamodb:UpdateTimeToLive"),
        Capability::Pitr => Some("dynamodb:UpdateContinuousBackups"),
        Capability::Archive => (operation == ResizeOld).then_some("dynamodb:ExportTableToPointInTime"),
        Capability::Delete => (operation == ResizeOld).then_some("dynamodb:DeleteTable"),
        Capability::Autoscaling => Some("application-autoscaling:RegisterScalableTarget"),
    }
}

#[test]
fn rollover_grants_match_the_roles() {
    use deploy_checks::iam::{evaluate, table_arn, tags, Request};
    for overrides in combinations() {
        let mut template = Template::load();
        for (name, value) in &overrides {
            template.set_parameter(name, value);
        }
        for f in template.functions().unwrap() {
            let statements = template.role_statements(f.role.as_deref().unwrap()).unwrap();
            let grants = grants_of(&f);
            for capability in Capability::ALL {
                let Some(action) = probe(capability, f.operation().unwrap()) else {
                    continue;
                };
                let family = tags(&[("ddb-rollover:family", "timeseries")]);
                let request = if action.starts_with("dynamodb:") {
                    Request::new(action, &table_arn("timeseries_2018-10-25")).with_resource_tags(family)
                } else {
                    // A DynamoDB scalable target of the account (its ARN ends in a generated id).
                    Request::new(
                        action,
                        "arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/0123456789abcdef",
                    )
                    .with_context("application-autoscaling:service-namespace", "dynamodb")
                };
                assert_eq!(
                    evaluate(&statements, &request).is_allowed(),
                    grants.capabilities.contains(&capability),
                    "{}: {action} vs {GRANTS_ENV} {capability} with {overrides:?}",
                    f.logical_id
                );
            }
        }
    }
}

#[test]
fn a_policy_override_needing_more_than_granted_is_refused_at_cold_start() {
    // OVERRIDE deletes after 48 periods: without DeleteAfter, the role may not delete.
    for f in functions(&[("PolicyOverride", OVERRIDE)]) {
        let err = grants_of(&f).check(&f.policy().unwrap()).unwrap_err().to_string();
        for named in ["retention.delete_after", "DeleteAfter"] {
            assert!(err.contains(named), "{}: {err}", f.logical_id);
        }
    }
    for f in functions(&[("PolicyOverride", OVERRIDE), ("DeleteAfter", "48")]) {
        grants_of(&f)
            .check(&f.policy().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", f.logical_id));
    }
    // Another prefix than TablePrefix: the roles' resources would not match.
    let other = OVERRIDE.replace(r#""prefix":"timeseries""#, r#""prefix":"metrics""#);
    for f in functions(&[("PolicyOverride", &other), ("DeleteAfter", "48")]) {
        let err = grants_of(&f).check(&f.policy().unwrap()).unwrap_err().to_string();
        assert!(err.contains("TablePrefix=metrics"), "{err}");
    }
}

#[test]
fn autoscaling_without_a_policy_override_is_refused_by_the_template_rule() {
    let rule = |overrides: &[(&str, &str)]| {
        let mut template = Template::load();
        for (name, value) in overrides {
            template.set_parameter(name, value);
        }
        template.rule_holds("AutoscalingNeedsPolicyOverride").unwrap()
    };
    assert!(rule(&[]));
    assert!(!rule(&[("Autoscaling", "true")]));
    assert!(rule(&[("Autoscaling", "true"), ("PolicyOverride", OVERRIDE)]));
    assert!(rule(&[("PolicyOverride", OVERRIDE)]));
}
