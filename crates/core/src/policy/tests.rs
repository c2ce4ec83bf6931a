//! The policy's parsing, defaults, validation and queries.

use super::validate::default_key;
use super::*;
use crate::policy::settings::OnDemandLimits;

#[test]
fn empty_document_gives_the_blogs_defaults() {
    let policy = Policy::from_toml("").unwrap();
    assert_eq!(policy.prefix, "timeseries");
    assert_eq!(policy.period, PeriodKind::Day);
    assert_eq!(policy.timezone, Tz::UTC);
    assert_eq!(policy.premake, 1);
    assert_eq!(policy.key, default_key());
    let caps: Vec<_> = policy
        .phases
        .iter()
        .map(|p| (p.min_age, p.billing, p.table_class))
        .collect();
    let provisioned = |read, write| Billing::Provisioned(Capacity { read, write });
    assert_eq!(
        caps,
        vec![
            (0, provisioned(300, 1000), None),
            (1, provisioned(100, 1), None),
            (2, provisioned(1, 1), None)
        ]
    );
}

#[test]
fn toml_and_json_agree() {
    let toml = r#"
        prefix = "metrics"
        period = "hour"
        timezone = "Europe/Berlin"
        premake = 3
        [key]
        partition = { name = "device", type = "S" }
        [[phases]]
        min_age = 0
        read = 10
        write = 50
        [[phases]]
        min_age = 24
        read = 1
        write = 1
    "#;
    let json = r#"{"prefix":"metrics","period":"hour","timezone":"Europe/Berlin","premake":3,
        "key":{"partition":{"name":"device","type":"S"}},
        "phases":[{"min_age":0,"read":10,"write":50},{"min_age":24,"read":1,"write":1}]}"#;
    let a = Policy::from_toml(toml).unwrap();
    let b = Policy::from_json(json).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.period, PeriodKind::Hours(1));
    assert_eq!(a.key.sort, None);
    assert_eq!(
        Policy::from_json(&serde_json::to_string(&a.to_document()).unwrap()).unwrap(),
        a
    );
}

#[test]
fn unknown_keys_are_rejected_with_their_name() {
    let err = Policy::from_toml("prefx = \"x\"").unwrap_err();
    assert!(err.to_string().contains("prefx"), "{err}");
    let err = Policy::from_json(r#"{"phases":[{"min_age":0,"read":1,"write":1,"rcu":5}]}"#).unwrap_err();
    assert!(err.to_string().contains("rcu"), "{err}");
}

/// Issue 38: a JSON policy with a key given twice was read with the last one winning
/// (`premake` 5). Refused, naming the key's path, whoever reads the policy (CLI or functions).
#[test]
fn a_json_key_given_twice_is_refused_with_its_path() {
    for (json, path) in [
        (r#"{"prefix":"ts","premake":1,"premake":5}"#, "premake"),
        (
            r#"{"phases":[{"min_age":0,"read":5,"write":5,"read":9}]}"#,
            "phases[0].read",
        ),
        (
            r#"{"retention":{"delete_after":3,"delete_after":30}}"#,
            "retention.delete_after",
        ),
    ] {
        match Policy::from_json(json) {
            Err(PolicyError::Invalid(fields)) => {
                assert_eq!(fields.len(), 1, "{fields:?}");
                assert_eq!(fields[0].field, path, "{json}");
                assert!(fields[0].message.contains("given twice"), "{}", fields[0].message);
            }
            other => panic!("{json}: {other:?}"),
        }
    }
    // Not JSON at all is still a syntax error, in serde_json's words.
    let err = Policy::from_json("prefix = \"ts\"").unwrap_err();
    assert!(
        matches!(&err, PolicyError::Syntax { format: "JSON", message } if !message.starts_with("not JSON")),
        "{err:?}"
    );
}

fn invalid_fields(toml: &str) -> Vec<String> {
    match Policy::from_toml(toml) {
        Err(PolicyError::Invalid(fields)) => fields.into_iter().map(|f| f.field).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[test]
fn every_bad_field_is_named() {
    assert_eq!(invalid_fields("period = \"fortnight\""), ["period"]);
    assert_eq!(invalid_fields("timezone = \"Mars/Olympus\""), ["timezone"]);
    assert_eq!(invalid_fields("prefix = \"bad name!\""), ["prefix"]);
    assert_eq!(invalid_fields("prefix = \"\""), ["prefix"]);
    assert_eq!(
        invalid_fields(&format!("prefix = \"{}\"", "p".repeat(250))),
        ["prefix"]
    );
    // A bad period does not hide a bad prefix, nor the reverse.
    assert_eq!(
        invalid_fields("prefix = \"a b\"\nperiod = \"x\"\ntimezone = \"Nowhere\"\npremake = -1"),
        ["period", "timezone", "prefix", "premake"]
    );
    assert_eq!(invalid_fields("premake = -1"), ["premake"]);
    assert_eq!(invalid_fields("premake = 101"), ["premake"]);
    assert_eq!(
        invalid_fields("[key]\npartition = { name = \"\", type = \"S\" }"),
        ["key.partition.name"]
    );
    assert_eq!(
        invalid_fields(
            "[key]\npartition = { name = \"a\", type = \"S\" }\nsort = { name = \"a\", type = \"N\" }"
        ),
        ["key.sort.name"]
    );
    assert_eq!(invalid_fields("phases = []"), ["phases"]);
    assert_eq!(
        invalid_fields("[[phases]]\nmin_age = 1\nread = 1\nwrite = 1"),
        ["phases[0].min_age"]
    );
    assert_eq!(
        invalid_fields(
            "[[phases]]\nmin_age = 0\nread = 0\nwrite = 1\n[[phases]]\nmin_age = 0\nread = 1\nwrite = -5"
        ),
        ["phases[0].read", "phases[1].min_age", "phases[1].write"]
    );
}

#[test]
fn phase_billing_and_class_rules() {
    let phase = |body: &str| format!("[[phases]]\nmin_age = 0\n{body}");
    for (body, invalid) in [
        ("billing = \"on_demand\"\nread = 5", "phases[0].read"),
        ("read = 5", "phases[0].write"),
        ("read = 5\nwrite = 5\nmax_read = 9", "phases[0].max_read"),
        ("billing = \"spot\"", "phases[0].billing"),
        ("billing = \"on_demand\"\nmax_write = 0", "phases[0].max_write"),
        (
            "billing = \"on_demand\"\ntable_class = \"glacier\"",
            "phases[0].table_class",
        ),
    ] {
        assert_eq!(invalid_fields(&phase(body)), [invalid], "{body}");
    }
    let policy = Policy::from_toml(&phase("billing = \"on_demand\"\ntable_class = \"standard_ia\"")).unwrap();
    assert_eq!(
        policy.phases[0].billing,
        Billing::OnDemand(OnDemandLimits::default())
    );
    assert_eq!(policy.phases[0].table_class, Some(TableClass::StandardIa));
    let round_trip = Policy::from_json(&serde_json::to_string(&policy.to_document()).unwrap()).unwrap();
    assert_eq!(round_trip, policy);
}

#[test]
fn autoscaling_phases() {
    let phase =
        |body: &str| format!("[[phases]]\nmin_age = 0\n{body}\n[[phases]]\nmin_age = 1\nread = 1\nwrite = 1");
    let policy = Policy::from_toml(&phase(
        "autoscaling = { min_read = 5, max_read = 500, min_write = 10, max_write = 1000 }",
    ))
    .unwrap();
    let hot = &policy.phases[0];
    assert_eq!(
        hot.autoscaling,
        Some(Autoscaling {
            min_read: 5,
            max_read: 500,
            min_write: 10,
            max_write: 1000,
            target: 70
        })
    );
    // CreateTable starts at the minimums.
    assert_eq!(hot.billing, Billing::Provisioned(Capacity { read: 5, write: 10 }));
    assert!(policy.uses_autoscaling());
    assert!(!Policy::default().uses_autoscaling());
    assert_eq!(policy.phases[1].autoscaling, None);
    let round_trip = Policy::from_json(&serde_json::to_string(&policy.to_document()).unwrap()).unwrap();
    assert_eq!(round_trip, policy);
    let json = Policy::from_json(
        r#"{"phases":[{"min_age":0,"autoscaling":{"min_read":5,"max_read":500,"min_write":10,"max_write":1000,"target":70}},
            {"min_age":1,"read":1,"write":1}]}"#,
    )
    .unwrap();
    assert_eq!(json, policy);

    // Every bad field named, at once.
    assert_eq!(
        invalid_fields(&phase(
            "read = 5\nwrite = 5\nautoscaling = { min_read = 0, max_read = 500, max_write = 3, min_write = 4, target = 95 }"
        )),
        [
            "phases[0].read",
            "phases[0].write",
            "phases[0].autoscaling.min_read",
            "phases[0].autoscaling.max_write",
            "phases[0].autoscaling.target",
        ]
    );
    assert_eq!(
        invalid_fields(&phase("autoscaling = { min_read = 5 }")),
        [
            "phases[0].autoscaling.max_read",
            "phases[0].autoscaling.min_write",
            "phases[0].autoscaling.max_write",
        ]
    );
    assert_eq!(
        invalid_fields(&phase(
            "billing = \"on_demand\"\nautoscaling = { min_read = 1, max_read = 1, min_write = 1, max_write = 1 }"
        )),
        ["phases[0].autoscaling"]
    );
    assert_eq!(
        invalid_fields(&phase(
            "autoscaling = { min_read = 1, max_read = 1, min_write = 1, max_write = 1, target = 19 }"
        )),
        ["phases[0].autoscaling.target"]
    );
    let err = Policy::from_toml(&phase(
        "autoscaling = { min_read = 1, max_read = 1, min_write = 1, max_write = 1, scale_in = false }",
    ))
    .unwrap_err();
    assert!(err.to_string().contains("scale_in"), "{err}");
    let err = Policy::from_toml(&phase(
        "autoscaling = { min_read = 9, max_read = 5, min_write = 1, max_write = 1, target = 91 }",
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("below min_read (9)") && err.contains("20 to 90"),
        "{err}"
    );
    // The prefix must leave room for our scaling policies' names.
    let long = format!(
        "prefix = \"{}\"\n{}",
        "p".repeat(240),
        phase("autoscaling = { min_read = 1, max_read = 1, min_write = 1, max_write = 1 }")
    );
    assert_eq!(invalid_fields(&long), ["prefix"]);
}

#[test]
fn messages_say_what_is_allowed() {
    let err = Policy::from_toml("premake = 500").unwrap_err().to_string();
    assert!(err.contains("premake") && err.contains("0 to 100"), "{err}");
    let err = Policy::from_toml("period = \"5h\"").unwrap_err().to_string();
    assert!(err.contains("period") && err.contains("day"), "{err}");
    let err = Policy::from_toml("key = { partition = { name = \"a\", type = \"X\" } }")
        .unwrap_err()
        .to_string();
    assert!(err.contains("X"), "{err}");
}

#[test]
fn indexes_and_grace_round_trip_and_every_bad_field_is_named() {
    // The policy whose document and hash the engine's tests pin
    // (`crates/core/tests/engine/policy_checks/hash.rs`).
    let good = include_str!("../../tests/fixtures/policy_with_indexes.toml");
    let policy = Policy::from_toml(good).unwrap();
    assert_eq!(policy.grace, Some(Duration::from_secs(90 * 60)));
    assert_eq!(policy.indexes.len(), 2);
    // A local index without a projection projects every attribute.
    let local =
        Policy::from_toml("[[local_indexes]]\nname = \"by_time\"\nsort = { name = \"ts\", type = \"N\" }")
            .unwrap();
    assert_eq!(
        local.local_indexes[0].projection,
        crate::policy::settings::Projection::All
    );
    let hot = policy.hot_phase();
    let provisioned = |read, write| Billing::Provisioned(Capacity { read, write });
    assert_eq!(hot.billing_of_index("by_device"), provisioned(20, 500));
    assert_eq!(hot.billing_of_index("by_site"), provisioned(3, 4));
    assert_eq!(
        policy.phases[1].billing_of_index("by_device"),
        Billing::OnDemand(OnDemandLimits {
            max_read: Some(9),
            max_write: None
        })
    );
    let round_trip = Policy::from_json(&serde_json::to_string(&policy.to_document()).unwrap()).unwrap();
    assert_eq!(round_trip, policy);
    // Without indexes or grace the document, and so the hash, is what it was before them.
    let plain = serde_json::to_value(Policy::default().to_document()).unwrap();
    for absent in ["indexes", "local_indexes", "grace"] {
        assert!(plain.get(absent).is_none(), "{absent}");
    }
    assert!(plain["phases"][0].get("index_read").is_none());

    let bad = r#"
        grace = "soon"
        [key]
        partition = { name = "pk", type = "S" }
        [[indexes]]
        name = "x"
        partition = { name = "pk", type = "N" }
        projection = "some"
        [[indexes]]
        name = "by_site"
        partition = { name = "site", type = "S" }
        sort = { name = "site", type = "S" }
        projection = { include = ["pk"] }
        [[local_indexes]]
        name = "by_site"
        sort = { name = "ts", type = "N" }
        [[phases]]
        min_age = 0
        read = 1
        write = 1
        index_max_read = 5
        index_overrides = { nope = { read = 1, write = 0 } }
    "#;
    assert_eq!(
        invalid_fields(bad),
        [
            "local_indexes",
            "indexes[0].partition.type",
            "indexes[0].name",
            "indexes[0].projection",
            "indexes[1].sort.name",
            "indexes[1].projection",
            "local_indexes[0].name",
            "grace",
            "phases[0].index_max_read",
            "phases[0].index_overrides.nope",
            "phases[0].index_overrides.nope.write",
        ]
    );
    assert_eq!(
        invalid_fields("[[phases]]\nmin_age = 0\nread = 1\nwrite = 1\nindex_read = 2"),
        ["phases[0].index_read"]
    );
}

#[test]
fn phase_lookup_by_age() {
    let policy = Policy::default();
    assert_eq!(policy.phase_index_for_age(-3), 0);
    assert_eq!(policy.phase_index_for_age(0), 0);
    assert_eq!(policy.phase_index_for_age(1), 1);
    assert_eq!(policy.phase_index_for_age(2), 2);
    assert_eq!(policy.phase_index_for_age(400), 2);
}

fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339).unwrap().to_utc()
}

#[test]
fn phase_at_keeps_phase_0_through_the_grace_then_follows_the_age() {
    // Daily tables, phases at ages 0, 1 and 2, a grace of 3 periods.
    let policy = Policy::from_toml("grace = \"3d\"").unwrap();
    let slot = policy.calendar().floor(at("2018-10-25T12:00:00Z"));
    for (instant, phase) in [
        ("2018-10-24T12:00:00Z", 0),
        ("2018-10-25T12:00:00Z", 0),
        ("2018-10-26T00:00:00Z", 0),
        ("2018-10-28T23:59:59Z", 0),
        // The grace ends at age 4: straight to the last phase.
        ("2018-10-29T00:00:00Z", 2),
        ("2019-01-01T00:00:00Z", 2),
    ] {
        assert_eq!(policy.phase_at(slot, at(instant)), phase, "{instant}");
    }
    let without = Policy::default();
    assert_eq!(without.phase_at(slot, at("2018-10-25T23:59:59Z")), 0);
    assert_eq!(without.phase_at(slot, at("2018-10-26T00:00:00Z")), 1);
    assert_eq!(without.phase_at(slot, at("2018-10-27T00:00:00Z")), 2);
}

#[test]
fn the_next_phase_change_is_the_first_instant_the_phase_differs() {
    let policy = Policy::from_toml("grace = \"3d\"").unwrap();
    let slot = policy.calendar().floor(at("2018-10-25T12:00:00Z"));
    let next = |now| policy.next_phase_change(slot, at(now));
    // Phase 1's start (age 1) falls inside the grace: the change is the grace's end, to 2.
    for now in [
        "2018-10-24T00:00:00Z",
        "2018-10-25T12:00:00Z",
        "2018-10-27T12:00:00Z",
    ] {
        assert_eq!(next(now), Some((2, at("2018-10-29T00:00:00Z"))), "{now}");
    }
    assert_eq!(next("2018-10-29T00:00:00Z"), None, "in the last phase");

    let phases_0_1_5 = "grace = \"3d\"\n[[phases]]\nmin_age = 0\nread = 9\nwrite = 9\n[[phases]]\nmin_age = 1\nread = 5\nwrite = 5\n[[phases]]\nmin_age = 5\nread = 1\nwrite = 1";
    for (case, toml, answers) in [
        (
            "phases at 0, 1 and 5: the grace ends in phase 1, phase 2 follows at age 5",
            phases_0_1_5,
            &[
                ("2018-10-26T06:00:00Z", Some((1, "2018-10-29T00:00:00Z"))),
                ("2018-10-29T00:00:00Z", Some((2, "2018-10-30T00:00:00Z"))),
                ("2018-10-30T00:00:00Z", None),
            ][..],
        ),
        (
            "a grace shorter than a period delays only phase 1",
            "grace = \"2h\"",
            &[
                ("2018-10-25T23:45:00Z", Some((1, "2018-10-26T02:00:00Z"))),
                ("2018-10-26T02:15:00Z", Some((2, "2018-10-27T00:00:00Z"))),
            ],
        ),
        (
            "without a grace, phase by phase; a future table starts with phase 1 at its age 1",
            "",
            &[("2018-10-20T00:00:00Z", Some((1, "2018-10-26T00:00:00Z")))],
        ),
        (
            "one phase only: nothing ever changes",
            "[[phases]]\nmin_age = 0\nread = 1\nwrite = 1",
            &[("2018-10-20T00:00:00Z", None)],
        ),
    ] {
        let policy = Policy::from_toml(toml).unwrap();
        for (now, expected) in answers {
            assert_eq!(
                policy.next_phase_change(slot, at(now)),
                expected.map(|(phase, starts)| (phase, at(starts))),
                "{case}, at {now}"
            );
        }
    }
    // A hand-built grace too long to add never ends: phase 0 for good.
    let forever = Policy {
        grace: Some(Duration::MAX),
        ..Policy::default()
    };
    assert_eq!(forever.phase_at(slot, at("9000-01-01T00:00:00Z")), 0);
    assert_eq!(forever.next_phase_change(slot, at("2018-10-26T00:00:00Z")), None);
}

#[test]
fn longest_table_name_fits() {
    let longest_ok = 255 - 1 - crate::policy::naming::max_label_len(PeriodKind::Day);
    let doc = PolicyDocument {
        prefix: Some("p".repeat(longest_ok)),
        ..Default::default()
    };
    assert!(doc.validate().is_ok());
    let doc = PolicyDocument {
        prefix: Some("p".repeat(longest_ok + 1)),
        ..Default::default()
    };
    assert!(doc.validate().is_err());
    assert_eq!(crate::policy::naming::MAX_TABLE_NAME, 255);
}
