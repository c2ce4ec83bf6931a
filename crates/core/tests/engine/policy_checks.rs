//! Policy validation once found wanting: duplicate projected attributes, a grace that
//! overflows or outlives retention, bad values in fixed lists that hid every other bad field,
//! and the opt-in to delete where tags cannot be read. Public API only.

// One test binary: the policy document's hash and status's next phase live beside the checks.
#[path = "policy_checks/hash.rs"]
mod hash;
#[path = "policy_checks/next_phase.rs"]
mod next_phase;

use std::time::Duration;

use crate::common::at;
use chrono::{DateTime, Utc};
use ddb_rollover::policy::Slot;
use ddb_rollover::{Policy, PolicyError};

fn invalid(toml: &str) -> Vec<(String, String)> {
    match Policy::from_toml(toml) {
        Err(PolicyError::Invalid(fields)) => fields.into_iter().map(|f| (f.field, f.message)).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

fn fields(toml: &str) -> Vec<String> {
    invalid(toml).into_iter().map(|(field, _)| field).collect()
}

#[test]
fn duplicate_include_attributes_are_refused_in_global_and_local_indexes() {
    let problems = invalid(
        r#"
        [[indexes]]
        name = "by_site"
        partition = { name = "site", type = "S" }
        projection = { include = ["a", "b", "a"] }
        [[local_indexes]]
        name = "by_time"
        sort = { name = "ts", type = "N" }
        projection = { include = ["temp", "temp"] }
        "#,
    );
    let names: Vec<&str> = problems.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        names,
        [
            "indexes[0].projection.include",
            "local_indexes[0].projection.include"
        ]
    );
    assert!(
        problems[0].1.contains("\"a\"") && problems[0].1.contains("more than once"),
        "{}",
        problems[0].1
    );
    assert!(problems[1].1.contains("\"temp\""), "{}", problems[1].1);
}

#[test]
fn a_grace_beyond_100_years_is_refused_naming_the_maximum() {
    let problems = invalid("grace = \"1000000y\"");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, "grace");
    assert!(problems[0].1.contains("100 years"), "{}", problems[0].1);
    // The maximum itself is fine.
    assert!(Policy::from_toml("grace = \"100y\"").is_ok());
}

#[test]
fn grace_end_never_turns_an_overflow_into_no_grace() {
    let mut policy = Policy {
        grace: Some(Duration::from_secs(u64::MAX)),
        ..Policy::default()
    };
    let slot: Slot = policy.calendar().floor(at("2018-10-25T12:00:00Z"));
    // Fail safe: a grace too long to add ends at the latest instant (the table stays hot).
    assert_eq!(policy.grace_end(slot), Some(DateTime::<Utc>::MAX_UTC));
    policy.grace = None;
    assert_eq!(policy.grace_end(slot), None);
}

#[test]
fn a_grace_must_end_before_retention_archives_or_deletes() {
    // Deleted at the start of the 3rd period after a table's own: its grace (from the end of
    // its period) may last at most 2 periods, 47 hours around a DST change in Berlin.
    let berlin = "timezone = \"Europe/Berlin\"\n";
    let problems = invalid(&format!("{berlin}grace = \"3d\"\n[retention]\ndelete_after = 3"));
    assert_eq!(problems.len(), 1, "{problems:?}");
    let (field, message) = &problems[0];
    assert_eq!(field, "grace");
    for part in [
        "3d",
        "retention.delete_after (3 periods)",
        "at most 1day 23h",
        "Europe/Berlin",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    assert!(Policy::from_toml(&format!("{berlin}grace = \"47h\"\n[retention]\ndelete_after = 3")).is_ok());
    assert_eq!(
        fields(&format!(
            "{berlin}grace = \"47h 1s\"\n[retention]\ndelete_after = 3"
        )),
        ["grace"]
    );
    // UTC days are all 24 hours.
    assert!(Policy::from_toml("grace = \"48h\"\n[retention]\ndelete_after = 3").is_ok());

    // The case that once shipped: a 100-year grace with delete_after = 3 deleted tables still taking writes.
    assert_eq!(
        fields("grace = \"100y\"\n[retention]\ndelete_after = 3"),
        ["grace"]
    );
    // Archiving names its own field; both are named when both are too early.
    let problems =
        invalid("grace = \"10d\"\n[retention]\narchive_after = 5\nbucket = \"my-archive\"\ndelete_after = 8");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].1.contains("retention.archive_after (5 periods)")
            && problems[0].1.contains("retention.delete_after (8 periods)"),
        "{}",
        problems[0].1
    );
    assert!(problems[0].1.contains("at most 4days"), "{}", problems[0].1);
    // With delete_after = 1 a table is deleted as its period ends: no grace fits.
    let problems = invalid("grace = \"1s\"\n[retention]\ndelete_after = 1");
    assert_eq!(problems[0].0, "grace");
    assert!(problems[0].1.contains("no grace"), "{}", problems[0].1);
    // Months are at least 28 days.
    assert!(Policy::from_toml("period = \"month\"\ngrace = \"28d\"\n[retention]\ndelete_after = 2").is_ok());
    assert_eq!(
        fields("period = \"month\"\ngrace = \"29d\"\n[retention]\ndelete_after = 2"),
        ["grace"]
    );
}

#[test]
fn bad_values_in_fixed_lists_do_not_hide_other_bad_fields() {
    let problems = invalid(
        r#"
        premake = -5
        [key]
        partition = { name = "pk", type = "Q" }
        [[indexes]]
        name = "by_device"
        partition = { name = "device", type = "S" }
        sort = { name = "ts", type = "X" }
        projection = 7
        [[local_indexes]]
        name = "by_time"
        sort = { name = "ts2", type = "Z" }
        "#,
    );
    let names: Vec<&str> = problems.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        names,
        [
            "premake",
            "key.partition.type",
            "local_indexes",
            "indexes[0].sort.type",
            "indexes[0].projection",
            "local_indexes[0].sort.type",
        ]
    );
    for (field, message) in &problems {
        if field.ends_with(".type") {
            assert!(message.contains("S, N or B"), "{field}: {message}");
        }
    }
    assert!(problems[1].1.contains("\"Q\""), "{}", problems[1].1);
    assert!(problems[4].1.contains("keys_only"), "{}", problems[4].1);
    // The same through JSON.
    let json = Policy::from_json(
        r#"{"premake":-5,"key":{"partition":{"name":"pk","type":"Q"}},
            "indexes":[{"name":"by_device","partition":{"name":"device","type":"s"}}]}"#,
    )
    .unwrap_err();
    let names: Vec<&str> = json.fields().iter().map(|f| f.field.as_str()).collect();
    assert_eq!(
        names,
        ["premake", "key.partition.type", "indexes[0].partition.type"]
    );
}

#[test]
fn delete_without_tagging_api_is_refused_now_that_the_ledger_proves_ownership() {
    for text in [
        "[retention]\ndelete_after = 7\ndelete_without_tagging_api = true",
        "[retention]\ndelete_after = 7\ndelete_without_tagging_api = false",
    ] {
        let problems = invalid(text);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].0, "retention.delete_without_tagging_api");
        assert!(problems[0].1.contains("ledger"), "{}", problems[0].1);
    }
}
