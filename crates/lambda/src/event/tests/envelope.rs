//! The EventBridge envelope's tests: AWS's documented Scheduled Event, its `time` and `detail`,
//! and the refusal of other events.

use super::*;

#[test]
fn a_scheduled_event_envelope_uses_its_time() {
    let invocation = ok(envelope(json!({})), CREATE);
    assert_eq!(
        invocation,
        real_run_at("2018-10-25T23:45:00Z", ClockSource::EnvelopeTime)
    );
    // Any function may be targeted by a plain schedule; the metadata is ignored.
    assert_eq!(ok(envelope(json!({})), RESIZE).clock, ClockSource::EnvelopeTime);
    let mut bare = envelope(Value::Null);
    bare.as_object_mut().unwrap().remove("detail");
    assert_eq!(ok(bare, CREATE).at, Some(t("2018-10-25T23:45:00Z")));
}

#[test]
fn an_envelopes_detail_may_carry_operation_and_dry_run() {
    let invocation = ok(
        envelope(json!({"Operation": "create_new", "dry_run": true})),
        CREATE,
    );
    assert!(invocation.dry_run);
    assert_eq!(invocation.clock, ClockSource::EnvelopeTime);
    let e = err(envelope(json!({"Operation": "create_new"})), RESIZE);
    assert_eq!(
        e,
        EventError::WrongFunction {
            function: RESIZE,
            requested: CREATE
        }
    );
    let e = err(envelope(json!({"dry_run": "yes"})), CREATE).to_string();
    assert!(
        e.starts_with("detail.dry_run: invalid type: string \"yes\", expected true or false"),
        "{e}"
    );
    let e = err(envelope(json!({"Operation": "nope"})), CREATE).to_string();
    assert!(e.starts_with("detail.Operation: "), "{e}");
}

#[test]
fn an_envelopes_detail_rejects_unknown_keys_and_non_objects() {
    let e = err(envelope(json!({"at": "2018-10-28T00:15:00Z"})), CREATE).to_string();
    assert_eq!(
        e,
        "detail.at: unknown field `at`, expected `Operation` or `dry_run`"
    );
    let e = err(envelope(json!("x")), CREATE).to_string();
    assert!(
        e.starts_with("detail: invalid type: a string (\"x\"), expected an object"),
        "{e}"
    );
}

#[test]
fn an_envelope_needs_a_valid_time() {
    let mut event = envelope(json!({}));
    event.as_object_mut().unwrap().remove("time");
    let e = err(event.clone(), CREATE);
    assert!(
        matches!(e, EventError::Missing { ref field, .. } if field == "time"),
        "{e:?}"
    );
    event["time"] = json!("noon");
    let e = err(event, CREATE).to_string();
    assert!(
        e.starts_with("time is \"noon\", not an RFC 3339 timestamp"),
        "{e}"
    );
}

#[test]
fn other_eventbridge_events_are_refused() {
    let mut event = envelope(json!({}));
    event["detail-type"] = json!("EC2 Instance State-change Notification");
    event["source"] = json!("aws.ec2");
    let e = err(event, CREATE);
    assert!(matches!(e, EventError::NotAScheduledEvent { .. }), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains("\"EC2 Instance State-change Notification\"") && e.contains("\"aws.ec2\""),
        "{e}"
    );
    // Only one of the two keys: not an envelope, so both are unknown keys.
    let e = invalid_at(
        json!({"source": "aws.events", "time": "2018-10-25T23:45:00Z"}),
        CREATE,
        "source",
    );
    assert!(e.starts_with("source: unknown field `source`"), "{e}");
}

#[test]
fn an_eventbridge_scheduled_event_as_aws_documents_it_parses() {
    // The example event of the EventBridge User Guide's tutorial "Schedule AWS Lambda
    // functions using EventBridge" (eb-run-lambda-schedule).
    let documented = r#"{
        "version": "0",
        "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": "2015-10-08T16:53:06Z",
        "region": "us-east-1",
        "resources": [
            "arn:aws:events:us-east-1:123456789012:rule/my-scheduled-rule"
        ],
        "detail": {}
    }"#;
    let event: Value = serde_json::from_str(documented).unwrap();
    for function in [CREATE, RESIZE] {
        assert_eq!(
            ok(event.clone(), function),
            real_run_at("2015-10-08T16:53:06Z", ClockSource::EnvelopeTime)
        );
    }
    // Envelope keys other than the documented ones (a replayed event's `replay-name`) are
    // metadata: ignored, unlike unknown keys in a direct payload or in `detail`.
    let mut replayed = event;
    replayed["replay-name"] = json!("replay-2015-10-08");
    assert_eq!(ok(replayed, CREATE).at, Some(t("2015-10-08T16:53:06Z")));
}

#[test]
fn an_unknown_key_in_detail_names_the_accepted_detail_keys() {
    assert_eq!(
        invalid_at(envelope(json!({"dryRun": true})), CREATE, "detail.dryRun"),
        "detail.dryRun: unknown field `dryRun`, expected `Operation` or `dry_run`"
    );
    // serde would read an array as the struct's fields in order: not an object, refused.
    let e = err(envelope(json!([null, true])), CREATE).to_string();
    assert!(e.starts_with("detail: invalid type: an array"), "{e}");
}

#[test]
fn an_envelopes_time_gets_the_same_messages_as_the_other_times() {
    let mut event = envelope(json!({}));
    event["time"] = json!("<aws.events.event.ingestion-time>");
    let e = err(event.clone(), CREATE);
    assert!(
        matches!(e, EventError::Placeholder { ref field, .. } if field == "time"),
        "{e:?}"
    );
    event["time"] = json!(1_540_511_100);
    let e = err(event.clone(), CREATE).to_string();
    assert_eq!(
        e,
        "time: invalid type: integer `1540511100`, expected an RFC 3339 timestamp string such as \"2018-10-25T23:45:00Z\""
    );
    // The crate's chrono parse is relaxed (here: an offset without a colon); the other
    // times are strict RFC 3339.
    event["time"] = json!("2018-10-25T23:45:00+0000");
    assert_eq!(ok(event.clone(), CREATE).at, Some(t("2018-10-25T23:45:00Z")));
    assert!(matches!(
        err(json!({"at": "2018-10-25T23:45:00+0000"}), CREATE),
        EventError::BadTimestamp { .. }
    ));
    // Only a time chrono refused is blamed when the envelope is refused for its detail.
    let mut both = event.clone();
    both["detail"] = json!({"force": true});
    invalid_at(both, CREATE, "detail.force");
    event["time"] = Value::Null;
    let e = err(event, CREATE);
    assert!(
        matches!(e, EventError::Missing { ref field, .. } if field == "time"),
        "{e:?}"
    );
}

#[test]
fn an_envelope_with_metadata_eventbridge_would_not_send_is_malformed() {
    let mut event = envelope(json!({}));
    event["account"] = json!(123456789012_u64);
    // Now named by its path, which the hand-written walk could not do.
    let e = invalid_at(event, CREATE, "account");
    assert!(
        e.starts_with("account: invalid type: integer `123456789012`"),
        "{e}"
    );
}
