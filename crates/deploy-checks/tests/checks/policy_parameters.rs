//! The stack's parameters reach both functions as plain environment variables, one per
//! parameter (no JSON is built in template.yaml), and the functions turn them into their
//! policy and grants with `ddb_rollover_stack::parameters`, the code these checks call with each
//! function's resolved `Environment`: for every combination of the optional parameters the
//! policy says what the parameters mean, and it is the policy today's template built with
//! `Fn::Sub` before (tests/fixtures/template_policies_before.json, captured from that template
//! with this crate's evaluator). Then the key, the cold phase and the write grace; PolicyOverride,
//! which replaces it all; and the grants, which must be what the roles were given, so the
//! cold-start check (`ddb_rollover_stack::grants`) refuses exactly the policies the roles
//! cannot serve.

use std::collections::BTreeMap;

use ddb_rollover::Policy;
use ddb_rollover_stack::grants::{self, Capability, Grants};
use ddb_rollover_stack::parameters::{PUBLISHING, VARIABLES};
use deploy_checks::features::{combinations, Features, FUNCTION_ARN, STREAM_ARN, SWITCHES};
use deploy_checks::template::{function_environment, Function, RepoTemplate, Template};
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

/// The policy both functions build with these overrides (they must build the same).
fn policy_of(overrides: &[(&str, &str)]) -> Policy {
    let functions = functions(overrides);
    let policy = |f: &Function| {
        f.policy()
            .unwrap_or_else(|e| panic!("{} with {overrides:?}: {e}", f.logical_id))
    };
    let first = policy(&functions[0]);
    for f in &functions[1..] {
        assert_eq!(policy(f), first, "{} differs with {overrides:?}", f.logical_id);
    }
    first
}

/// The README's (and the blog's) policy, which the parameters' defaults build, with `patch`'s
/// top-level fields replacing its own.
fn readme_policy_with(patch: Value) -> Policy {
    let mut document = json!({"prefix":"timeseries","period":"day","timezone":"UTC","premake":1,
        "key":{"partition":{"name":"pk","type":"S"},"sort":{"name":"sk","type":"S"}},
        "phases":[{"min_age":0,"read":300,"write":1000},{"min_age":1,"read":100,"write":1},
                  {"min_age":2,"read":1,"write":1}]});
    for (field, value) in patch.as_object().unwrap() {
        document[field] = value.clone();
    }
    Policy::from_json(&document.to_string()).unwrap_or_else(|e| panic!("{document}: {e}"))
}

/// One captured stack of today's template: its parameters, the `ROLLOVER_POLICY` JSON it gave
/// both functions, and its `ROLLOVER_GRANTS`.
struct Before {
    parameters: Vec<(String, String)>,
    policy: Value,
    grants: String,
}

fn before() -> Vec<Before> {
    let path = testkit::repo_root().join("crates/deploy-checks/tests/fixtures/template_policies_before.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
    cases
        .into_iter()
        .map(|case| Before {
            parameters: case["parameters"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect(),
            policy: case["ROLLOVER_POLICY"].clone(),
            grants: case["ROLLOVER_GRANTS"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// The switches the fixture's template had: all of [`SWITCHES`] but `ChangeStreamArn` and
/// `ConsumerFunctionArn` (which came later, and whose stacks it holds with the parameters
/// empty).
const CAPTURED_SWITCHES: usize = SWITCHES.len() - 2;

#[test]
fn every_captured_stack_gives_the_functions_the_policy_and_grants_todays_template_gave() {
    let cases = before();
    // Every combination of the optional parameters it had, and the key, phase, grace and
    // retention cases below.
    assert_eq!(SWITCHES[CAPTURED_SWITCHES].0, "ChangeStreamArn");
    assert_eq!(SWITCHES[CAPTURED_SWITCHES + 1].0, "ConsumerFunctionArn");
    assert!(cases.len() > 1 << CAPTURED_SWITCHES, "{} cases", cases.len());
    let mut defaults_seen = false;
    for case in cases {
        let overrides: Vec<(&str, &str)> = case
            .parameters
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let was = Policy::from_json(&case.policy.to_string()).unwrap();
        assert_eq!(policy_of(&overrides), was, "{overrides:?}");
        let prefix = overrides
            .iter()
            .find(|(n, _)| *n == "TablePrefix")
            .map_or("timeseries", |(_, v)| *v);
        let parameter = |name: &str, default: &str| {
            overrides
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(default.to_owned(), |(_, v)| (*v).to_owned())
        };
        for f in functions(&overrides) {
            let mut expected = Grants::parse(Some(&case.grants), Some(prefix));
            // Newer than the fixture: the archive's bucket and prefix the S3 statements name.
            if expected.capabilities.contains(&Capability::Archive) {
                expected.archive = Some((
                    parameter("ArchiveBucket", ""),
                    parameter("ArchivePrefix", "ddb-rollover/"),
                ));
            }
            assert_eq!(f.grants(), Some(expected), "{} with {overrides:?}", f.logical_id);
        }
        // Every switch off (the fixture's keys are sorted).
        defaults_seen |=
            overrides.len() == CAPTURED_SWITCHES && overrides.iter().all(|o| combinations()[0].contains(o));
    }
    assert!(defaults_seen, "the defaults are one of the captured stacks");
}

#[test]
fn a_stack_with_the_default_parameters_gives_the_functions_todays_default_policy() {
    let was = before()
        .into_iter()
        .find(|case| {
            case.parameters
                .iter()
                .all(|(name, value)| combinations()[0].contains(&(name.as_str(), value.as_str())))
        })
        .expect("the default stack was captured");
    assert_eq!(
        policy_of(&[]),
        Policy::from_json(&was.policy.to_string()).unwrap()
    );
    assert_eq!(policy_of(&[]), readme_policy_with(json!({})));
    // The file the README gives the CLI for a stack on the defaults (hostile read of issue 38,
    // finding 6: `--prefix` alone is the CLI's default policy, with numeric keys).
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/examples/stack-defaults.toml"
    );
    assert_eq!(
        policy_of(&[]),
        Policy::load(std::path::Path::new(file)).unwrap(),
        "docs/examples/stack-defaults.toml is the stack's default policy"
    );
    assert_ne!(
        policy_of(&[]).key,
        Policy::default().key,
        "the CLI's own default is another key"
    );
}

#[test]
fn every_parameter_reaches_the_functions_as_its_own_plain_variable() {
    // Two stacks with every parameter changed: each variable holds its parameter's value as
    // it is (nothing built from it), and no variable is left over.
    let changed = [
        ("TablePrefix", "metrics.v2"),
        ("Period", "hour"),
        ("TimeZone", "Europe/Berlin"),
        ("Premake", "3"),
        ("PartitionKeyName", "device.id"),
        ("PartitionKeyType", "B"),
        ("SortKeyName", "ts"),
        ("SortKeyType", "N"),
        ("HotReadCapacity", "50"),
        ("HotWriteCapacity", "60"),
        ("WarmReadCapacity", "7"),
        ("WarmWriteCapacity", "8"),
        ("ColdBilling", "on_demand"),
        ("ColdReadCapacity", "2"),
        ("ColdWriteCapacity", "3"),
        ("ColdTableClass", "standard_ia"),
        ("WriteGrace", "1h 30m"),
        ("TtlAttribute", "expires_at"),
        ("PointInTimeRecovery", "true"),
        ("DeletionProtection", "true"),
        ("ArchiveBucket", "archive-bucket"),
        ("ArchivePrefix", "exports/"),
        ("ArchiveAfter", "7"),
        ("DeleteAfter", "90"),
        ("MaxDeletesPerRun", "12"),
        ("ChangeStreamArn", STREAM_ARN),
        ("ConsumerFunctionArn", FUNCTION_ARN),
        ("Autoscaling", "false"),
        ("PublishTables", "false"),
    ];
    let defaults = Template::load().parameter_defaults().unwrap();
    for parameters in [&changed[..], &[]] {
        for f in functions(parameters) {
            // The policy's and the grants' variables, and what the functions publish.
            let mut expected: BTreeMap<String, String> = VARIABLES
                .iter()
                .chain(&PUBLISHING)
                .map(|v| (v.name, v.parameter))
                .map(|(name, parameter)| {
                    let value = parameters
                        .iter()
                        .find(|(p, _)| *p == parameter)
                        .map_or_else(|| defaults[parameter].clone(), |(_, value)| (*value).to_owned());
                    (name.to_owned(), value)
                })
                .collect();
            expected.insert(ddb_rollover::policy::POLICY_ENV.into(), String::new());
            expected.insert(
                ddb_rollover_stack::environment::ACCOUNT_ENV.into(),
                aws_model::stack::ACCOUNT_ID.into(),
            );
            assert_eq!(f.environment, expected, "{} with {parameters:?}", f.logical_id);
            assert_eq!(
                function_environment(parameters, &f.binary).unwrap(),
                f.environment,
                "function_environment({parameters:?}, {})",
                f.binary
            );
        }
    }
    // The variables the functions read are the template's parameters.
    let names: Vec<String> = Template::load()
        .section("Parameters")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    for v in VARIABLES {
        assert!(
            names.contains(&v.parameter.to_owned()),
            "{}: no parameter {}",
            v.name,
            v.parameter
        );
    }
}

#[test]
fn every_combination_builds_the_policy_the_parameters_mean() {
    for overrides in combinations() {
        let on = Features::of(&overrides);
        let policy = policy_of(&overrides);
        let what = format!("with {overrides:?}");
        assert_eq!(policy.prefix, "timeseries", "{what}");
        assert_eq!(policy.phases.len(), 3, "{what}");
        // Left out, as today, when nothing in it is asked for.
        if !(on.ttl || on.pitr() || on.deletion_protection || on.consumer) {
            assert_eq!(policy.template, readme_policy_with(json!({})).template, "{what}");
        }
    }
}

#[test]
fn every_combination_gives_the_optional_parts_the_parameters_mean() {
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
            assert_eq!(
                policy.stream.kinesis.as_ref().map(|k| k.stream_arn.as_str()),
                on.stream.then_some(STREAM_ARN),
                "{what}"
            );
            // The consumer reads each table's stream: the template turns it on, new and old
            // images; without a consumer the tables' stream is left as it is.
            assert_eq!(
                policy.stream.lambda.as_ref().map(|l| l.function.as_str()),
                on.consumer.then_some(FUNCTION_ARN),
                "{what}"
            );
            assert_eq!(
                policy.template.stream,
                on.consumer
                    .then_some(Some(ddb_rollover::policy::settings::StreamView::NewAndOldImages)),
                "{what}"
            );
        }
    }
}

#[test]
fn with_the_defaults_the_policy_has_no_template_settings_or_retention() {
    let policy = policy_of(&[]);
    assert_eq!(policy.template, ddb_rollover::Policy::default().template);
    assert!(policy.retention.is_none());
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
    assert_eq!(
        policy_of(&overrides),
        readme_policy_with(json!({
            "retention": {"archive_after": 7, "bucket": "my.archive-1", "prefix": "exports/ddb/",
                          "delete_after": 90, "max_deletes_per_run": 12},
            "template": {"ttl_attribute": "ttl.at_v-2", "point_in_time_recovery": true},
        }))
    );
}

// ---------------------------------------------------------------- keys, phases, grace

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
    let key = |overrides: &[(&str, &str)], key: Value| {
        assert_eq!(
            policy_of(overrides),
            readme_policy_with(json!({ "key": key })),
            "{overrides:?}"
        );
    };
    key(
        &[],
        json!({"partition": {"name": "pk", "type": "S"}, "sort": {"name": "sk", "type": "S"}}),
    );
    // Stacks deployed before the key parameters: numbers, as the template used to hard-code.
    key(
        &[("PartitionKeyType", "N"), ("SortKeyType", "N")],
        json!({"partition": {"name": "pk", "type": "N"}, "sort": {"name": "sk", "type": "N"}}),
    );
    key(
        &[
            ("PartitionKeyName", "device.id"),
            ("PartitionKeyType", "B"),
            ("SortKeyName", "ts"),
            ("SortKeyType", "N"),
        ],
        json!({"partition": {"name": "device.id", "type": "B"}, "sort": {"name": "ts", "type": "N"}}),
    );
    // No sort key: SortKeyType is not used.
    key(
        &[("SortKeyName", ""), ("SortKeyType", "B")],
        json!({"partition": {"name": "pk", "type": "S"}}),
    );
    assert!(policy_of(&[("SortKeyName", "")]).key.sort.is_none());
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
    for (overrides, cold) in cases {
        let phases = json!([{"min_age":0,"read":300,"write":1000},{"min_age":1,"read":100,"write":1}, cold]);
        assert_eq!(
            policy_of(overrides),
            readme_policy_with(json!({ "phases": phases })),
            "{overrides:?}"
        );
        let parsed = policy_of(overrides);
        let on_demand = overrides.contains(&("ColdBilling", "on_demand"));
        assert_eq!(
            matches!(
                parsed.phases[2].billing,
                ddb_rollover::policy::settings::Billing::OnDemand(_)
            ),
            on_demand,
            "{overrides:?}"
        );
    }
}

#[test]
fn write_grace_becomes_the_policys_grace() {
    assert_eq!(policy_of(&[]).grace, None, "no grace by default");
    for (grace, seconds) in [
        ("90m", 5400),
        ("1h 30m", 5400),
        ("1h30m", 5400),
        ("2h", 7200),
        ("1d", 86400),
    ] {
        let policy = policy_of(&[("WriteGrace", grace)]);
        assert_eq!(policy, readme_policy_with(json!({ "grace": grace })), "{grace}");
        assert_eq!(
            policy.grace,
            Some(std::time::Duration::from_secs(seconds)),
            "{grace}"
        );
    }
}

#[test]
fn bad_parameter_values_are_refused_at_cold_start_naming_the_variable() {
    // What the template's AllowedPattern / AllowedValues would refuse at deploy time, checked
    // again by the function: each bad variable named, with its parameter.
    for f in functions(&[("WriteGrace", "1 fortnight"), ("Premake", "-1")]) {
        let err = f.policy().unwrap_err().to_string();
        for named in [
            "ROLLOVER_WRITE_GRACE (parameter WriteGrace)",
            "ROLLOVER_PREMAKE (parameter Premake)",
        ] {
            assert!(err.contains(named), "{}: {err}", f.logical_id);
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
        assert_eq!(policy, Policy::from_json(OVERRIDE).unwrap());
        assert_eq!(policy.key.partition.name, "device");
        assert_eq!(policy.premake, 2);
        // Only the parameters that decide the roles' permissions are passed along with it
        // (Lambda's environment is 4 KB in all).
        for v in VARIABLES {
            assert_eq!(
                f.environment.contains_key(v.name),
                v.grants,
                "{}: {} with a PolicyOverride",
                f.logical_id,
                v.name
            );
        }
    }
}

// ---------------------------------------------------------------- grants

fn grants_of(f: &Function) -> Grants {
    f.grants()
        .unwrap_or_else(|| panic!("{}: the stack's parameters must be passed", f.logical_id))
}

#[test]
fn the_grants_say_what_the_parameters_granted_and_the_built_policy_passes() {
    for overrides in combinations() {
        let on = Features::of(&overrides);
        for f in functions(&overrides) {
            let grants = grants_of(&f);
            let names: std::collections::BTreeSet<&str> =
                grants.capabilities.iter().map(|c| c.as_str()).collect();
            assert_eq!(names, on.grants(), "{} with {overrides:?}", f.logical_id);
            assert_eq!(grants.table_prefix.as_deref(), Some("timeseries"));
            assert_eq!(
                grants.stream_arn.as_deref(),
                on.stream.then_some(STREAM_ARN),
                "{} with {overrides:?}",
                f.logical_id
            );
            assert_eq!(
                grants.consumer_function_arn.as_deref(),
                on.consumer.then_some(FUNCTION_ARN),
                "{} with {overrides:?}",
                f.logical_id
            );
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
        Capability::Stream => (operation == ddb_rollover::Operation::CreateNew)
            .then_some("dynamodb:EnableKinesisStreamingDestination"),
        // resize_old's DeleteEventSourceMapping needs DeleteAfter too: checked on its own
        // (tests/deploy/iam/statements.rs).
        Capability::Consumer => {
            (operation == ddb_rollover::Operation::CreateNew).then_some("lambda:CreateEventSourceMapping")
        }
    }
}

#[test]
fn the_grants_match_the_roles() {
    use aws_model::iam::{tags, Request};
    use aws_model::role::Role;
    use aws_model::stack::table_arn;
    for overrides in combinations() {
        let mut template = Template::load();
        for (name, value) in &overrides {
            template.set_parameter(name, value);
        }
        for f in template.functions().unwrap() {
            let role = Role::named(&template, f.role.as_deref().unwrap()).unwrap();
            let grants = grants_of(&f);
            for capability in Capability::ALL {
                let Some(action) = probe(capability, f.operation().unwrap()) else {
                    continue;
                };
                let family = tags(&[("ddb-rollover:family", "timeseries")]);
                let request = if action.starts_with("dynamodb:") {
                    Request::new(action, &table_arn("timeseries_2018-10-25")).with_resource_tags(family)
                } else if action.starts_with("lambda:") {
                    // CreateEventSourceMapping takes no resource; the function it maps is the key.
                    Request::new(action, "*").with_context("lambda:FunctionArn", FUNCTION_ARN)
                } else {
                    // A DynamoDB scalable target of the account (its ARN ends in a generated id).
                    Request::new(
                        action,
                        "arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/0123456789abcdef",
                    )
                    .with_context("application-autoscaling:service-namespace", "dynamodb")
                };
                assert_eq!(
                    role.allows(&request),
                    grants.capabilities.contains(&capability),
                    "{}: {action} vs the granted {capability} with {overrides:?}",
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
fn a_policy_override_naming_another_stream_than_change_stream_arn_is_refused_at_cold_start() {
    let other = "arn:aws:kinesis:us-east-1:123456789012:stream/orders-changes";
    let streaming = |arn: &str| {
        OVERRIDE.replace(
            r#""retention":{"delete_after":48}}"#,
            &format!(r#""retention":{{"delete_after":48}},"stream":{{"kinesis":"{arn}"}}}}"#),
        )
    };
    let cold_start = |policy: &str, stream: &str| -> Vec<Result<(), String>> {
        let overrides = [
            ("PolicyOverride", policy),
            ("DeleteAfter", "48"),
            ("ChangeStreamArn", stream),
        ];
        functions(&overrides)
            .iter()
            .map(|f| {
                let policy = f.policy().unwrap_or_else(|e| panic!("{}: {e}", f.logical_id));
                grants_of(f).check(&policy).map_err(|e| e.to_string())
            })
            .collect()
    };
    // Another stream than the one the roles may write to, or none granted: both functions
    // refuse, naming the field and the parameter.
    for (granted, why) in [(STREAM_ARN, "another stream"), ("", "no stream granted")] {
        for result in cold_start(&streaming(other), granted) {
            let err = result.expect_err(why);
            assert!(
                err.contains("stream.kinesis") && err.contains("ChangeStreamArn"),
                "{why}: {err}"
            );
        }
    }
    // The granted stream itself.
    for result in cold_start(&streaming(STREAM_ARN), STREAM_ARN) {
        result.unwrap();
    }
}

#[test]
fn a_policy_override_naming_another_consumer_than_consumer_function_arn_is_refused_at_cold_start() {
    let other = "arn:aws:lambda:us-east-1:123456789012:function:orders-consumer";
    let consuming = |arn: &str| {
        OVERRIDE.replace(
            r#""retention":{"delete_after":48}}"#,
            &format!(
                r#""retention":{{"delete_after":48}},"template":{{"stream":"new_image"}},"stream":{{"lambda":{{"function":"{arn}","starting_position":"latest"}}}}}}"#
            ),
        )
    };
    let cold_start = |policy: &str, consumer: &str| -> Vec<Result<(), String>> {
        let overrides = [
            ("PolicyOverride", policy),
            ("DeleteAfter", "48"),
            ("ConsumerFunctionArn", consumer),
        ];
        functions(&overrides)
            .iter()
            .map(|f| {
                let policy = f.policy().unwrap_or_else(|e| panic!("{}: {e}", f.logical_id));
                grants_of(f).check(&policy).map_err(|e| e.to_string())
            })
            .collect()
    };
    // Another function than the one the roles may map, or none granted: both functions
    // refuse, naming the field and the parameter.
    for (granted, why) in [(FUNCTION_ARN, "another function"), ("", "no consumer granted")] {
        let results = cold_start(&consuming(other), granted);
        assert_eq!(results.len(), 2, "{why}");
        for result in results {
            let err = result.expect_err(why);
            assert!(
                err.contains("stream.lambda.function") && err.contains("ConsumerFunctionArn"),
                "{why}: {err}"
            );
        }
    }
    // The granted function itself; and a stack granting a consumer its policy does not use.
    for result in cold_start(&consuming(FUNCTION_ARN), FUNCTION_ARN) {
        result.unwrap();
    }
    for result in cold_start(OVERRIDE, FUNCTION_ARN) {
        result.unwrap();
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
