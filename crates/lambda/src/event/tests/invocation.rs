//! The tests of what an invocation decides: its instant, the clock source's names, and the
//! clock's warning and refusal against the wall clock.

use super::*;

#[test]
fn now_is_the_events_time_else_the_wall_clock() {
    let wall = t("2030-01-01T00:00:00Z");
    assert_eq!(Invocation::wall_clock().now(wall), wall);
    let at = ok(json!({"at": "2018-10-28T00:15:00Z"}), RESIZE);
    assert_eq!(at.now(wall), t("2018-10-28T00:15:00Z"));
}

#[test]
fn clock_source_serializes_in_snake_case() {
    let names: Vec<String> = [
        ClockSource::ScheduledTime,
        ClockSource::At,
        ClockSource::WallClock,
    ]
    .into_iter()
    .map(|c| {
        let name = serde_json::to_value(c).unwrap().as_str().unwrap().to_string();
        assert_eq!(name, c.as_str());
        name
    })
    .collect();
    assert_eq!(names, ["scheduled_time", "at", "wall_clock"]);
}

#[test]
fn a_manual_create_new_far_ahead_warns_naming_at() {
    let policy = Policy::default();
    let wall = t("2018-10-25T10:00:00Z");
    let far = ok(json!({"at": "2030-01-01T00:00:00Z"}), CREATE);
    let warning = far.clock_warning(&policy, CREATE, wall).unwrap();
    assert!(
        warning.starts_with("at: 2030-01-01 00:00:00 UTC is in period 2030-01-01, 4086 periods after"),
        "{warning}"
    );
    assert!(warning.contains("nothing lowers a future table"), "{warning}");
    let dry = ok(json!({"at": "2030-01-01T00:00:00Z", "dry_run": true}), CREATE);
    assert!(dry.clock_warning(&policy, CREATE, wall).is_some());
    // The next period's run, the wall clock, and resize_old (refused that far ahead) do not.
    let near = ok(json!({"at": "2018-10-25T23:45:00Z"}), CREATE);
    assert_eq!(near.clock_warning(&policy, CREATE, wall), None);
    assert_eq!(
        Invocation::wall_clock().clock_warning(&policy, CREATE, wall),
        None
    );
    assert_eq!(far.clock_warning(&policy, RESIZE, wall), None);
    // A schedule's own time is not a manual instant.
    let scheduled = ok(json!({"scheduled_time": "2030-01-01T00:00:00Z"}), CREATE);
    assert_eq!(scheduled.clock_warning(&policy, CREATE, wall), None);
}

#[test]
fn a_far_future_clock_is_refused_for_resize_old_naming_the_field_unless_allowed() {
    let policy = Policy::default();
    let wall = t("2018-10-25T10:00:00Z");
    let event = json!({"at": "9999-12-30T23:59:59Z"});
    let e = ok(event.clone(), RESIZE)
        .checked_now(&policy, RESIZE, wall)
        .unwrap_err();
    assert!(matches!(e, EventError::Clock { field: "at", .. }), "{e:?}");
    assert!(e.to_string().starts_with("at: 9999-12-30"), "{e}");
    let e = ok(json!({"scheduled_time": "2019-01-01T00:15:00Z"}), RESIZE)
        .checked_now(&policy, RESIZE, wall)
        .unwrap_err();
    assert!(e.to_string().starts_with("scheduled_time: "), "{e}");
    // create_new may look ahead when the event says it is a replay; so may an explicit
    // simulation (a replay too) or a dry run.
    assert!(ok(json!({"at": "9999-12-30T23:59:59Z", "replay": true}), CREATE)
        .checked_now(&policy, CREATE, wall)
        .is_ok());
    for allowed in [
        json!({"at": "9999-12-30T23:59:59Z", "allow_future_clock": true, "replay": true}),
        json!({"at": "9999-12-30T23:59:59Z", "dry_run": true}),
    ] {
        assert_eq!(
            ok(allowed, RESIZE)
                .checked_now(&policy, RESIZE, wall)
                .map(|at| at.at()),
            Ok(t("9999-12-30T23:59:59Z"))
        );
    }
    // No label for the next day: refused for everyone.
    let e = ok(
        json!({"at": "9999-12-31T23:59:59Z", "allow_future_clock": true}),
        CREATE,
    )
    .checked_now(&policy, CREATE, wall)
    .unwrap_err();
    assert!(e.to_string().contains("1000 to 9999"), "{e}");
    assert_eq!(
        err(json!({"allow_future_clock": "yes"}), RESIZE).to_string(),
        "allow_future_clock: invalid type: string \"yes\", expected true or false (a JSON boolean, not a string)"
    );
}

/// Finding 1 and 3 of issue 41: an event's time in another period (the 2018 console event, a
/// year ahead) is refused unless it says it is a replay (or a dry run); the wall clock's
/// period, or a few minutes across its boundary, is now.
#[test]
fn an_event_time_that_is_not_now_is_refused_unless_a_replay() {
    let policy = Policy::default();
    let wall = t("2024-05-01T23:50:00Z");
    for event in [
        json!({"scheduled_time": "2018-10-25T23:45:00Z"}),
        json!({"at": "2025-05-01T23:45:00Z"}),
        json!({"scheduled_time": "2024-05-02T00:15:00Z"}),
    ] {
        for function in [CREATE, RESIZE] {
            let e = ok(event.clone(), function)
                .checked_now(&policy, function, wall)
                .unwrap_err();
            assert!(
                matches!(e, EventError::NotNow { .. }) || matches!(e, EventError::Clock { .. }),
                "{event}: {e:?}"
            );
            if function == CREATE {
                assert!(e.to_string().contains("\"replay\": true"), "{e}");
            }
        }
        let mut replay = event.clone();
        replay["replay"] = json!(true);
        let invocation = ok(replay, CREATE);
        assert!(invocation.checked_now(&policy, CREATE, wall).is_ok(), "{event}");
        assert!(!invocation.speaks_of_now(&policy, wall));
    }
    for now in [
        json!({"scheduled_time": "2024-05-01T23:45:00Z"}),
        json!({"scheduled_time": "2024-05-01T00:00:00Z"}),
        json!({}),
    ] {
        let invocation = ok(now.clone(), CREATE);
        assert!(invocation.checked_now(&policy, CREATE, wall).is_ok(), "{now}");
        assert!(invocation.speaks_of_now(&policy, wall), "{now}");
    }
    // Across the boundary within the skew: acted on, but not now's period.
    let late = ok(json!({"scheduled_time": "2024-05-01T23:58:00Z"}), CREATE);
    let after = t("2024-05-02T00:01:00Z");
    assert!(late.checked_now(&policy, CREATE, after).is_ok());
    assert!(!late.speaks_of_now(&policy, after));
    // A dry run previews any instant.
    assert!(ok(json!({"at": "2018-10-25T23:45:00Z", "dry_run": true}), CREATE)
        .checked_now(&policy, CREATE, wall)
        .is_ok());
}
