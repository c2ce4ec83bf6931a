//! The payload's tests: what each key does, and the refusals of unknown keys, wrong
//! types, wrong functions and bad times.

use super::*;

#[test]
fn null_and_empty_object_run_now_for_real() {
    for event in [Value::Null, json!({})] {
        for function in [CREATE, RESIZE] {
            assert_eq!(ok(event.clone(), function), Invocation::wall_clock());
        }
    }
    assert_eq!(Invocation::wall_clock().clock, ClockSource::WallClock);
}

/// `{"Operation": create}` runs now on create_new, and `resize` on resize_old.
fn assert_each_runs_now_on_its_own_function(create: &str, resize: &str) {
    for (operation, function) in [(create, CREATE), (resize, RESIZE)] {
        assert_eq!(
            ok(json!({ "Operation": operation }), function),
            Invocation::wall_clock(),
            "{operation}"
        );
    }
}

#[test]
fn the_blogs_payloads_are_accepted_by_their_own_function() {
    assert_each_runs_now_on_its_own_function("create_new", "resize_old");
}

/// The docs name `create_new` and `resize_old`; the CLI's hyphenated spelling is no event's.
#[test]
fn the_kebab_case_spelling_is_refused() {
    for (name, function) in [
        ("create-new", CREATE),
        ("resize-old", RESIZE),
        ("CREATE_NEW", CREATE),
    ] {
        let e = err(json!({ "Operation": name }), function);
        assert!(matches!(e, EventError::UnknownOperation { .. }), "{name}: {e:?}");
        assert!(e.to_string().contains("underscores"), "{e}");
    }
}

#[test]
fn an_operation_for_the_other_function_names_both() {
    let e = err(json!({"Operation": "resize_old"}), CREATE);
    assert_eq!(
        e,
        EventError::WrongFunction {
            function: CREATE,
            requested: RESIZE
        }
    );
    assert_eq!(
        e.to_string(),
        "this is the create_new function; it cannot run Operation \"resize_old\" \
         (invoke the resize_old function instead)"
    );
    let e = err(json!({"Operation": "create_new"}), RESIZE).to_string();
    assert!(
        e.contains("this is the resize_old function") && e.contains("invoke the create_new function"),
        "{e}"
    );
}

#[test]
fn an_unknown_or_mistyped_operation_is_refused() {
    let e = err(json!({"Operation": "delete_old"}), CREATE);
    assert!(matches!(e, EventError::UnknownOperation { .. }), "{e:?}");
    let e = e.to_string();
    assert!(
        e.starts_with("Operation: ") && e.contains("\"delete_old\""),
        "{e}"
    );
    assert!(e.contains("create_new") && e.contains("resize_old"), "{e}");
    assert_eq!(
        invalid_at(json!({"Operation": 1}), CREATE, "Operation"),
        "Operation: invalid type: integer `1`, expected \"create_new\" or \"resize_old\""
    );
}

#[test]
fn scheduled_time_sets_the_clock() {
    let invocation = ok(
        json!({"Operation": "create_new", "scheduled_time": "2018-10-25T23:45:00Z"}),
        CREATE,
    );
    assert_eq!(
        invocation,
        real_run_at("2018-10-25T23:45:00Z", ClockSource::ScheduledTime)
    );
}

#[test]
fn at_sets_the_clock_and_offsets_are_converted_to_utc() {
    let invocation = ok(
        json!({"at": "2018-10-28T02:15:00+02:00", "dry_run": true}),
        RESIZE,
    );
    assert_eq!(
        invocation,
        Invocation {
            at: Some(t("2018-10-28T00:15:00Z")),
            dry_run: true,
            allow_future_clock: false,
            replay: false,
            clock: ClockSource::At
        }
    );
}

#[test]
fn scheduled_time_wins_over_at() {
    let invocation = ok(
        json!({"scheduled_time": "2018-10-26T00:15:00Z", "at": "2018-10-28T00:15:00Z"}),
        RESIZE,
    );
    assert_eq!(invocation.at, Some(t("2018-10-26T00:15:00Z")));
    assert_eq!(invocation.clock, ClockSource::ScheduledTime);
    // The losing field is still checked: a typo in it is not silently ignored.
    let e = err(
        json!({"scheduled_time": "2018-10-26T00:15:00Z", "at": "soon"}),
        RESIZE,
    );
    assert!(
        matches!(e, EventError::BadTimestamp { ref field, .. } if field == "at"),
        "{e:?}"
    );
}

/// `{"dry_run": null}` is no dry run and no real run: refused, like every other null value.
#[test]
fn null_values_are_refused_naming_the_key() {
    for key in [
        "Operation",
        "scheduled_time",
        "at",
        "dry_run",
        "allow_future_clock",
        "replay",
    ] {
        let message = invalid_at(json!({ key: null }), CREATE, key);
        assert!(message.contains("invalid type: null"), "{message}");
    }
}

#[test]
fn replay_is_a_boolean() {
    assert!(ok(json!({"replay": true, "at": "2018-10-25T23:45:00Z"}), CREATE).replay);
    assert!(!ok(json!({"replay": false}), CREATE).replay);
    invalid_at(json!({"replay": "true"}), CREATE, "replay");
}

/// What the runtime reads, from the invocation's bytes.
fn from_text(text: &str, function: Operation) -> Result<Invocation, EventError> {
    serde_json::from_str::<Payload>(text)
        .expect("the runtime never fails to read a payload")
        .invocation(function)
}

#[test]
fn a_key_given_twice_is_refused_with_its_path() {
    let e = from_text(
        r#"{"scheduled_time": "2018-10-25T23:45:00Z", "scheduled_time": "2030-10-25T23:45:00Z"}"#,
        CREATE,
    )
    .unwrap_err();
    assert!(
        matches!(&e, EventError::Invalid { path, .. } if path == "scheduled_time"),
        "{e:?}"
    );
    assert!(e.to_string().contains("given twice"), "{e}");
    let e = from_text(r#"{"dry_run": true, "x": {"a": 1, "a": 2}}"#, CREATE).unwrap_err();
    assert!(
        matches!(&e, EventError::Invalid { path, .. } if path == "x.a"),
        "{e:?}"
    );
}

#[test]
fn a_deeply_nested_payload_is_a_bad_event_not_the_runtimes_error() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let e = from_text(&deep, CREATE).unwrap_err();
    assert!(matches!(&e, EventError::Invalid { .. }), "{e:?}");
    assert!(e.to_string().contains("nested more than"), "{e}");
    let e = from_text(
        &format!(r#"{{"dry_run": {}1{}}}"#, "[".repeat(200), "]".repeat(200)),
        CREATE,
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("dry_run"), "{e}");
}

#[test]
fn a_huge_value_is_echoed_as_a_bounded_excerpt() {
    let huge = "9".repeat(1 << 20);
    for event in [
        json!({ "scheduled_time": huge }),
        json!({ "at": format!("<{huge}>") }),
        json!({ "Operation": huge }),
        json!({ huge.clone(): true }),
        json!({ "dry_run": huge }),
    ] {
        let e = err(event, CREATE).to_string();
        assert!(
            e.len() < 2 * MAX_ECHO_CHARS + 600,
            "{} bytes: {}",
            e.len(),
            &e[..300]
        );
    }
}

#[test]
fn dry_run_false_is_a_real_run() {
    assert!(!ok(json!({"dry_run": false}), CREATE).dry_run);
    assert!(ok(json!({"dry_run": true}), CREATE).dry_run);
}

#[test]
fn an_unsubstituted_scheduler_placeholder_says_so() {
    for field in ["scheduled_time", "at"] {
        let event = json!({"Operation": "create_new", field: "<aws.scheduler.scheduled-time>"});
        let e = err(event, CREATE);
        assert_eq!(
            e,
            EventError::Placeholder {
                field: field.into(),
                value: "<aws.scheduler.scheduled-time>".into()
            }
        );
        let message = e.to_string();
        assert!(
            message.starts_with(&format!("{field} is \"<aws.scheduler.scheduled-time>\"")),
            "{message}"
        );
        assert!(message.contains("placeholder was not substituted"), "{message}");
    }
}

#[test]
fn an_unknown_key_is_named_with_the_accepted_ones() {
    let e = err(json!({"Operation": "create_new", "force": true}), CREATE);
    assert_eq!(
        e.to_string(),
        "force: unknown field `force`, expected one of `Operation`, `scheduled_time`, `at`, `dry_run`, `allow_future_clock`, `replay`"
    );
}

#[test]
fn a_near_miss_key_is_named_next_to_the_key_it_missed() {
    for (typo, meant) in [
        ("dryrun", "dry_run"),
        ("dry-run", "dry_run"),
        ("operation", "Operation"),
        ("scheduledTime", "scheduled_time"),
        ("AT", "at"),
    ] {
        let e = err(json!({ typo: "x" }), CREATE).to_string();
        assert!(
            e.starts_with(&format!("{typo}: unknown field `{typo}`, expected one of ")),
            "{e}"
        );
        assert!(e.contains(&format!("`{meant}`")), "{e}");
    }
}

#[test]
fn a_payload_that_is_not_an_object_is_refused() {
    for (event, found) in [
        (json!("create_new"), "a string (\"create_new\")"),
        (json!(5), "a number (5)"),
        (json!(true), "a boolean (true)"),
        (json!([{"Operation": "create_new"}]), "an array"),
    ] {
        let e = err(event, CREATE);
        assert!(matches!(e, EventError::NotAnObject { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.starts_with("the event must be a JSON object"), "{e}");
        assert!(e.contains(found), "{e}");
    }
}

#[test]
fn wrong_types_name_the_field_and_the_expected_form() {
    for (event, field, expected) in [
        (json!({"dry_run": "yes"}), "dry_run", "true or false"),
        (json!({"dry_run": 1}), "dry_run", "true or false"),
        (json!({"at": 5}), "at", "an RFC 3339 timestamp string"),
        (
            json!({"scheduled_time": {}}),
            "scheduled_time",
            "an RFC 3339 timestamp string",
        ),
    ] {
        let e = invalid_at(event, CREATE, field);
        assert!(e.starts_with(&format!("{field}: invalid type: ")), "{e}");
        assert!(e.contains(&format!(", expected {expected}")), "{e}");
    }
    assert_eq!(
        err(json!({"dry_run": "yes"}), CREATE).to_string(),
        "dry_run: invalid type: string \"yes\", expected true or false (a JSON boolean, not a string)"
    );
}

#[test]
fn a_time_that_is_not_rfc_3339_names_the_field_and_an_example() {
    for value in [
        "yesterday",
        "2018-10-25",
        "2018-10-25 23:45",
        "2018-10-25T23:45:00",
    ] {
        let e = err(json!({ "at": value }), CREATE);
        assert!(matches!(e, EventError::BadTimestamp { .. }), "{value}: {e:?}");
        let e = e.to_string();
        assert!(
            e.starts_with(&format!("at is {value:?}, not an RFC 3339 timestamp")),
            "{e}"
        );
        assert!(e.ends_with("use e.g. \"2018-10-25T23:45:00Z\""), "{e}");
    }
}

#[test]
fn long_values_are_cut_short_in_messages() {
    let e = err(json!({"dry_run": "y".repeat(500)}), CREATE).to_string();
    assert!(e.len() < 200, "{e}");
    assert!(e.contains("..."), "{e}");
}

/// The accepted keys a refusal lists are its struct's own fields, in the struct's order:
/// no copy of them to keep in step.
#[test]
fn the_accepted_keys_are_the_structs_fields_in_order() {
    fn listed<T: serde::de::DeserializeOwned + fmt::Debug>() -> Vec<String> {
        let refusal = serde_path_to_error::deserialize::<_, T>(&json!({"?": null}))
            .unwrap_err()
            .to_string();
        refusal.split('`').skip(3).step_by(2).map(String::from).collect()
    }
    assert_eq!(
        listed::<Fields>(),
        [
            "Operation",
            "scheduled_time",
            "at",
            "dry_run",
            "allow_future_clock",
            "replay"
        ]
    );
}

/// The template's schedules are EventBridge Scheduler's, which send the payload itself: an
/// EventBridge rule's envelope (another way to run on a schedule) is not read as one.
#[test]
fn an_eventbridge_rule_envelope_is_refused_naming_one_of_its_keys() {
    let envelope = json!({
        "version": "0",
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "time": "2018-10-25T23:45:00Z",
        "detail": {}
    });
    let e = err(envelope.clone(), CREATE);
    let EventError::Invalid { path, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(envelope.get(path).is_some(), "{e}");
    assert!(
        e.to_string()
            .ends_with(&format!("unknown field `{path}`, expected one of `Operation`, `scheduled_time`, `at`, `dry_run`, `allow_future_clock`, `replay`")),
        "{e}"
    );
}

/// What the runtime hands the handler reads the same as the JSON: refusals included, so a bad
/// event is the handler's own error, not the runtime's.
#[test]
fn the_runtimes_payload_reads_as_the_json_does() {
    for event in [
        json!({"at": "2018-10-28T00:15:00Z", "dry_run": true}),
        json!({"dryrun": true}),
        json!("create_new"),
        Value::Null,
    ] {
        let from_runtime: Payload = serde_json::from_str(&event.to_string()).expect("never fails");
        assert_eq!(
            from_runtime.invocation(RESIZE),
            parse_invocation(&event, RESIZE),
            "{event}"
        );
    }
}
