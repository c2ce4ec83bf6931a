//! Every number a policy holds is bounded, every type error is named with its path, all in one
//! answer, and no document, however extreme, panics the parser or the planner.

use crate::common::at;
use crate::common::policies::{invalid_fields, BY_SITE};
use chrono::Duration;
use ddb_rollover::policy::{Billing, Capacity};
use ddb_rollover::table::ObservedTable;
use ddb_rollover::{plan, Operation, Policy, PolicyError};
use proptest::prelude::*;
use serde_json::{json, Value};

/// 9.2e18 read units used to be accepted and sent to DynamoDB; every throughput is now capped.
#[test]
fn capacities_and_ages_have_an_upper_bound_named_in_the_error() {
    let problems = Policy::from_toml(
        &[
            BY_SITE,
            r#"
        [[phases]]
        min_age = 0
        read = 9200000000000000000
        write = 1000001
        index_read = 5000000
        warm = { read = 2000000, write = 40000 }

        [[phases]]
        min_age = 200000
        billing = "on_demand"
        max_read = 9000000000

        [[phases]]
        min_age = 200001
        autoscaling = { min_read = 1, max_read = 1000001, min_write = 1, max_write = 5 }

        [retention]
        delete_after = 4294967295
        keep_newest = 100001
        "#,
        ]
        .concat(),
    );
    let fields = invalid_fields(problems);
    for field in [
        "phases[0].read",
        "phases[0].write",
        "phases[0].index_read",
        "phases[0].warm.read",
        "phases[1].min_age",
        "phases[1].max_read",
        "phases[2].min_age",
        "phases[2].autoscaling.max_read",
        "retention.delete_after",
        "retention.keep_newest",
    ] {
        assert!(fields.contains(&field.to_string()), "{field} not in {fields:?}");
    }
    let message = Policy::from_toml("[[phases]]\nmin_age = 0\nread = 9200000000000000000\nwrite = 1")
        .unwrap_err()
        .to_string();
    assert!(message.contains("above 1000000"), "{message}");
    assert!(message.contains("40000"), "{message}");
    // The bound itself is allowed.
    Policy::from_toml("[[phases]]\nmin_age = 0\nread = 1000000\nwrite = 1000000").unwrap();
}

/// `retention.prefix` is a folder: ends with `/` (or is empty), no leading `/`, no `..`, and
/// short enough for S3's 1,024-byte keys.
#[test]
fn the_archive_prefix_is_a_folder_that_no_other_family_can_share() {
    let with = |prefix: &str| {
        Policy::from_json(
            &json!({"retention": {"archive_after": 2, "bucket": "my-archive", "prefix": prefix}}).to_string(),
        )
    };
    for bad in [
        "../../",
        "exports/../other/",
        "/exports/",
        "exports",
        "exports/t",
        "a//b/",
        "./x/",
        &"a".repeat(2000),
        &format!("{}/", "a".repeat(600)),
    ] {
        assert_eq!(invalid_fields(with(bad)), ["retention.prefix"], "{bad:?}");
    }
    for good in ["", "ddb-rollover/", "exports/ts/", "a.b/c-d_e/"] {
        let policy = with(good).unwrap_or_else(|e| panic!("{good:?}: {e}"));
        // Nested families sharing bucket and prefix: their tables' folders never coincide, and
        // neither lies inside the other.
        let archive = policy.archive().unwrap();
        let ours = archive.prefix_for("ts_2018-10-25");
        let sibling = archive.prefix_for("ts_eu_2018-10-25");
        assert!(
            !ours.starts_with(&sibling) && !sibling.starts_with(&ours),
            "{ours} {sibling}"
        );
    }
}

/// Three wrong types and two out-of-range values: all five, with their paths, in one answer, in
/// TOML and in JSON alike.
#[test]
fn every_type_error_is_named_with_its_path_alongside_the_range_errors() {
    let toml = r#"
        premake = "two"
        grace = 90
        [[phases]]
        min_age = 0
        read = "many"
        write = 0
        [retention]
        delete_after = 0
    "#;
    let json = json!({
        "premake": "two",
        "grace": 90,
        "phases": [{"min_age": 0, "read": "many", "write": 0}],
        "retention": {"delete_after": 0}
    })
    .to_string();
    for (format, result) in [
        ("TOML", Policy::from_toml(toml)),
        ("JSON", Policy::from_json(&json)),
    ] {
        let mut fields = invalid_fields(result);
        fields.sort();
        assert_eq!(
            fields,
            [
                "grace",
                "phases[0].read",
                "phases[0].write",
                "premake",
                "retention.delete_after"
            ],
            "{format}"
        );
    }
    // An unknown field deep inside is named with its path too.
    let fields = invalid_fields(Policy::from_json(
        r#"{"phases": [{"min_age": 0, "read": 1, "write": 1}, {"min_age": 1, "raed": 1, "write": 1}]}"#,
    ));
    assert!(fields.contains(&"phases[1].raed".to_string()), "{fields:?}");
}

fn extreme() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(i64::MIN)),
        Just(json!(-1)),
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(2)),
        Just(json!(1_000_000)),
        Just(json!(1_000_001)),
        Just(json!(100_000)),
        Just(json!(u32::MAX)),
        Just(json!(i64::MAX)),
        Just(json!(u64::MAX)),
        Just(json!(1e300)),
        Just(json!("x")),
    ]
}

fn grace() -> impl Strategy<Value = Value> {
    one_of_texts(&["0s", "1h", "99y", "100y", "101y", "18446744073709551615s", "1ns"])
}

fn period() -> impl Strategy<Value = Value> {
    one_of_texts(&["1h", "day", "week", "month", "quarter", "year"])
}

/// One of `texts`, as a JSON string.
fn one_of_texts(texts: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::sample::select(texts).prop_map(|text| json!(text))
}

prop_compose! {
    fn document()(
        period in period(),
        premake in extreme(),
        grace in proptest::option::of(grace()),
        numbers in proptest::collection::vec(extreme(), 16),
        on_demand in any::<bool>(),
        autoscaling in any::<bool>(),
        retention in any::<bool>(),
    ) -> Value {
        let n = |i: usize| numbers[i].clone();
        let mut hot = json!({"min_age": 0});
        if on_demand {
            hot["billing"] = json!("on_demand");
            hot["max_read"] = n(0);
            hot["max_write"] = n(1);
            hot["warm"] = json!({"read": n(2), "write": n(3)});
        } else if autoscaling {
            hot["autoscaling"] = json!({"min_read": n(0), "max_read": n(1), "min_write": n(2), "max_write": n(3), "target": n(4)});
        } else {
            hot["read"] = n(0);
            hot["write"] = n(1);
            hot["index_read"] = n(2);
            hot["warm"] = json!({"read": n(3), "write": n(4)});
        }
        let mut doc = json!({
            "period": period,
            "premake": premake,
            "indexes": [{"name": "by_site", "partition": {"name": "site", "type": "S"}}],
            "phases": [hot, {"min_age": n(5), "read": n(6), "write": n(7)}, {"min_age": n(8), "read": 1, "write": 1}],
        });
        if let Some(grace) = grace {
            doc["grace"] = grace;
        }
        if retention {
            doc["retention"] = json!({"archive_after": n(9), "bucket": "my-archive", "delete_after": n(10), "keep_newest": n(11), "max_deletes_per_run": n(12)});
        }
        doc
    }
}

proptest! {
    // The recorded cases (common::RECORDED_SEED); fresh ones: scripts/long-run.sh.
    #![proptest_config(crate::common::recorded(2000))]

    /// Extreme numbers anywhere: an error naming fields, or a policy the planner plans with,
    /// never a panic.
    #[test]
    fn extreme_numbers_give_an_error_or_a_plan_never_a_panic(doc in document()) {
        let text = doc.to_string();
        match Policy::from_json(&text) {
            Err(PolicyError::Invalid(fields)) => prop_assert!(!fields.is_empty()),
            Err(other) => prop_assert!(false, "not a field error: {other}"),
            Ok(policy) => {
                let now = at("2018-10-25T23:45:00Z");
                let calendar = policy.calendar();
                // Tables of every age the policy names, and some.
                let observed: Vec<ObservedTable> = [0i64, 1, 2, 5, 400]
                    .into_iter()
                    .map(|back| {
                        let slot = calendar.floor(now - Duration::days(back));
                        ObservedTable::active(
                            &policy.naming().table_name(slot),
                            Billing::Provisioned(Capacity { read: 5, write: 5 }),
                        )
                    })
                    .collect();
                for operation in [Operation::CreateNew, Operation::ResizeOld] {
                    let _ = plan(&policy, now, &observed, operation);
                }
                // Round trip through the document, as the Lambda parameters carry it.
                let again = Policy::from_json(&serde_json::to_string(&policy.to_document()).unwrap());
                prop_assert!(again.is_ok(), "{again:?}");
            }
        }
    }
}
