//! ROLLOVER_POLICY's optional parts ("template", "retention"), built in template.yaml from the
//! stack parameters with Conditions, Fn::If and Fn::Sub: for every combination of the optional
//! parameters, both functions get valid JSON that says what the parameters mean, and the
//! policy parses. With the defaults, neither part is there at all.

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
