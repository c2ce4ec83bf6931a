use aws_lambda_events::event::{dynamodb, kinesis::KinesisEvent};
use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, TimeZone, Utc};

use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $name))
    };
}

fn decoder() -> ChangeDecoder {
    ChangeDecoder::new(&Policy::from_toml("prefix = \"iot\"\nperiod = \"6h\"").unwrap())
}

fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
}

fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.to_string())
}

fn n(text: &str) -> AttributeValue {
    AttributeValue::N(text.to_string())
}

/// The JSON of a fixture with one field replaced (`pointer` as in RFC 6901).
fn with(fixture: &str, pointer: &str, value: serde_json::Value) -> Vec<u8> {
    let mut json: serde_json::Value = serde_json::from_str(fixture).unwrap();
    *json.pointer_mut(pointer).unwrap() = value;
    serde_json::to_vec(&json).unwrap()
}

fn malformed(err: ChangeError) -> (String, String) {
    match err {
        ChangeError::Malformed { path, message } => (path, message),
        other => panic!("expected a malformed record, got {other:?}"),
    }
}

#[test]
fn an_insert_carries_its_new_image_and_its_tables_period() {
    let change = decoder()
        .decode_kinesis_data(fixture!("kds-insert.json").as_bytes())
        .unwrap();
    assert_eq!(change.table, "iot_2024-12-01T00");
    assert_eq!(change.period.name, "iot_2024-12-01T00");
    assert_eq!(change.period.label, "2024-12-01T00");
    assert_eq!(
        (change.period.start, change.period.end),
        (utc("2024-12-01T00:00:00Z"), utc("2024-12-01T06:00:00Z"))
    );
    assert_eq!(change.kind, ChangeKind::Insert);
    assert_eq!(change.event_id, "0f1e6c5a-8c1b-4d3e-9a55-3b9c1d7e2f01");
    assert_eq!(change.approximate_creation, utc("2024-12-01T05:59:59.999Z"));
    assert_eq!(change.keys.len(), 2);
    assert_eq!(change.keys["pk"], s("SENSOR#0007#2"));
    assert_eq!(change.keys["sk"], s("2024-12-01T05:59:59.998Z#a1"));
    let new = change.new_image.expect("an insert has its new image");
    assert_eq!(new["celsius"], n("21.5"));
    assert_eq!(new["ok"], AttributeValue::Bool(true));
    assert_eq!(new["raw"], AttributeValue::B(vec![0, 1, 2].into()));
    assert_eq!(
        new["tags"],
        AttributeValue::Ss(vec!["roof".into(), "north".into()])
    );
    assert_eq!(
        new["where"],
        AttributeValue::M([("floor".to_string(), n("3"))].into())
    );
    assert_eq!(change.old_image, None);
    assert!(!change.expired);
}

#[test]
fn a_modify_carries_both_images_and_the_period_of_its_table_not_of_its_time() {
    let change = decoder()
        .decode_kinesis_data(fixture!("kds-modify.json").as_bytes())
        .unwrap();
    assert_eq!(change.kind, ChangeKind::Modify);
    // A late write into the period that just ended: it belongs to that period's table.
    assert_eq!(change.approximate_creation, utc("2024-12-01T06:00:00.250Z"));
    assert_eq!(change.period.label, "2024-12-01T00");
    assert!(!change.period.contains(change.approximate_creation));
    assert_eq!(change.new_image.unwrap()["celsius"], n("21.7"));
    assert_eq!(change.old_image.unwrap()["celsius"], n("21.5"));
}

#[test]
fn a_ttl_remove_carries_its_old_image_and_says_it_expired() {
    let change = decoder()
        .decode_kinesis_data(fixture!("kds-remove-ttl.json").as_bytes())
        .unwrap();
    assert_eq!(change.kind, ChangeKind::Remove);
    assert_eq!(change.period.label, "2024-11-30T18");
    assert_eq!(change.new_image, None);
    assert_eq!(change.old_image.unwrap()["celsius"], n("19"));
    assert!(
        change.expired,
        "userIdentity dynamodb.amazonaws.com is the TTL process"
    );
}

#[test]
fn microsecond_precision_is_read_as_microseconds() {
    let change = decoder()
        .decode_kinesis_data(fixture!("kds-insert-microsecond.json").as_bytes())
        .unwrap();
    assert_eq!(change.approximate_creation, utc("2024-12-01T06:00:00.000123Z"));
    assert_eq!(change.period.label, "2024-12-01T06");
    // Without the precision field the same number is milliseconds: far past 9999, refused.
    let unlabelled = with(
        fixture!("kds-insert-microsecond.json"),
        "/dynamodb/ApproximateCreationDateTimePrecision",
        "MILLISECOND".into(),
    );
    let (path, message) = malformed(decoder().decode_kinesis_data(&unlabelled).unwrap_err());
    assert_eq!(path, "dynamodb.ApproximateCreationDateTime");
    assert!(message.contains("1733032800000123 milliseconds"), "{message}");
}

#[test]
fn a_record_of_another_prefix_names_its_table() {
    let other = with(
        fixture!("kds-insert.json"),
        "/tableName",
        "weather_2024-12-01T00".into(),
    );
    let err = decoder().decode_kinesis_data(&other).unwrap_err();
    assert_eq!(
        err,
        ChangeError::OtherTable {
            table: "weather_2024-12-01T00".into(),
            prefix: "iot".into()
        }
    );
    assert!(err.to_string().contains("\"weather_2024-12-01T00\""), "{err}");
}

#[test]
fn a_name_under_the_prefix_that_is_no_period_label_is_not_given_a_period() {
    for (table, label) in [
        ("iot_archive", "archive"),
        // A daily label is not a label of this 6-hour family.
        ("iot_2024-12-01", "2024-12-01"),
        ("iot_2024-12-01T05", "2024-12-01T05"),
    ] {
        let record = with(fixture!("kds-insert.json"), "/tableName", table.into());
        assert_eq!(
            decoder().decode_kinesis_data(&record).unwrap_err(),
            ChangeError::NotAPeriod {
                table: table.into(),
                prefix: "iot".into(),
                label: label.into()
            }
        );
    }
}

#[test]
fn malformed_records_name_the_bad_field() {
    let insert = fixture!("kds-insert.json");
    let cases: [(Vec<u8>, &str, &str); 8] = [
        (with(insert, "/eventName", "UPSERT".into()), "eventName", "UPSERT"),
        (
            with(insert, "/dynamodb/Keys/pk", serde_json::json!({"X": "1"})),
            "dynamodb.Keys.pk",
            "X",
        ),
        (
            with(
                insert,
                "/dynamodb/ApproximateCreationDateTime",
                "yesterday".into(),
            ),
            "dynamodb.ApproximateCreationDateTime",
            "yesterday",
        ),
        (
            with(
                fixture!("kds-insert-microsecond.json"),
                "/dynamodb/ApproximateCreationDateTimePrecision",
                "SECOND".into(),
            ),
            "dynamodb.ApproximateCreationDateTimePrecision",
            "SECOND",
        ),
        (with(insert, "/tableName", 7.into()), "tableName", "integer"),
        (
            with(insert, "/eventSource", "aws:kinesis".into()),
            "eventSource",
            "aws:kinesis",
        ),
        (
            with(insert, "/recordFormat", "application/x-ion".into()),
            "recordFormat",
            "x-ion",
        ),
        (
            with(insert, "/dynamodb", serde_json::json!({"Keys": {}})),
            "dynamodb",
            "ApproximateCreationDateTime",
        ),
    ];
    for (record, field, mentions) in cases {
        let err = decoder().decode_kinesis_data(&record).unwrap_err();
        let (path, message) = malformed(err.clone());
        assert_eq!(path, field, "{err}");
        assert!(message.contains(mentions), "{err} should mention {mentions}");
        assert!(err.to_string().contains(&format!("`{field}`")), "{err}");
    }
    let (path, message) = malformed(decoder().decode_kinesis_data(b"{\"eventID\": ").unwrap_err());
    assert_eq!(path, "eventID");
    assert!(message.contains("EOF"), "{message}");
    let (path, message) = malformed(decoder().decode_kinesis_data(b"PutRecord").unwrap_err());
    assert_eq!(path, ".", "the record itself");
    assert!(message.contains("expected value"), "{message}");
}

#[test]
fn a_lambda_kinesis_event_decodes_each_records_base64_data() {
    let event: KinesisEvent = serde_json::from_str(fixture!("lambda-kinesis-event.json")).unwrap();
    let changes = decoder().decode_kinesis_event(&event);
    assert_eq!(changes.len(), 3);
    let first = changes[0].as_ref().unwrap();
    assert_eq!(
        (first.kind, first.period.label.as_str()),
        (ChangeKind::Insert, "2024-12-01T00")
    );
    assert_eq!(first.keys["pk"], s("SENSOR#0007#2"));
    let second = changes[1].as_ref().unwrap();
    assert_eq!(second.period.label, "2024-12-01T06");
    assert_eq!(second.approximate_creation, utc("2024-12-01T06:00:00.000123Z"));
    assert!(matches!(
        &changes[2],
        Err(ChangeError::OtherTable { table, .. }) if table == "weather_2024-12-01T00"
    ));

    let mut broken = event.clone();
    broken.records[1].kinesis.data.0 = with(fixture!("kds-insert.json"), "/eventName", "PUT".into());
    let (path, _) = malformed(decoder().decode_kinesis_event(&broken).remove(1).unwrap_err());
    assert_eq!(path, "Records[1].kinesis.data.eventName");
}

#[test]
fn a_lambda_dynamodb_event_takes_the_table_from_the_stream_arn() {
    let event: dynamodb::Event = serde_json::from_str(fixture!("lambda-dynamodb-event.json")).unwrap();
    let changes = decoder().decode_dynamodb_event(&event);
    assert_eq!(changes.len(), 3);

    let insert = changes[0].as_ref().unwrap();
    assert_eq!(insert.table, "iot_2024-12-01T00");
    assert_eq!(
        (insert.kind, insert.period.label.as_str()),
        (ChangeKind::Insert, "2024-12-01T00")
    );
    assert_eq!(insert.event_id, "c4ca4238a0b923820dcc509a6f75849b");
    // DynamoDB Streams dates its records in whole seconds.
    assert_eq!(
        insert.approximate_creation,
        Utc.timestamp_opt(1_733_032_799, 0).unwrap()
    );
    assert_eq!(insert.new_image.as_ref().unwrap()["celsius"], n("21.5"));
    assert_eq!(insert.old_image, None);

    let remove = changes[1].as_ref().unwrap();
    assert_eq!(
        (remove.kind, remove.period.label.as_str()),
        (ChangeKind::Remove, "2024-11-30T18")
    );
    assert!(remove.expired);
    assert_eq!(remove.old_image.as_ref().unwrap()["celsius"], n("19"));

    assert_eq!(
        changes[2].clone().unwrap_err(),
        ChangeError::NotAPeriod {
            table: "iot_archive".into(),
            prefix: "iot".into(),
            label: "archive".into()
        }
    );

    let mut broken = event.clone();
    broken.records[0].event_source_arn = Some("arn:aws:kinesis:eu-west-1:1:stream/iot".into());
    broken.records[1].event_source_arn = None;
    broken.records[2].event_name = "UPSERT".into();
    broken.records.push(event.records[0].clone());
    broken.records[3].change.approximate_creation_date_time = DateTime::UNIX_EPOCH;
    let errors: Vec<_> = decoder()
        .decode_dynamodb_event(&broken)
        .into_iter()
        .map(|result| malformed(result.unwrap_err()).0)
        .collect();
    assert_eq!(
        errors,
        [
            "Records[0].eventSourceARN",
            "Records[1].eventSourceARN",
            "Records[2].eventName",
            "Records[3].dynamodb.ApproximateCreationDateTime",
        ]
    );
}

#[test]
fn stream_arns_name_their_table() {
    assert_eq!(
        lambda::table_of_stream_arn(
            "arn:aws:dynamodb:eu-west-1:123456789012:table/iot_2024-12-01T00/stream/2024-11-30T23:00:00.000"
        ),
        Ok("iot_2024-12-01T00")
    );
    assert_eq!(
        lambda::table_of_stream_arn("arn:aws-cn:dynamodb:cn-north-1:1:table/t.x-1/stream/label"),
        Ok("t.x-1")
    );
    for bad in [
        "",
        "arn:aws:dynamodb:eu-west-1:1:table/iot_2024-12-01T00",
        "arn:aws:kinesis:eu-west-1:1:table/iot/stream/x",
        "arn:aws:dynamodb:eu-west-1:1:table//stream/x",
    ] {
        assert!(lambda::table_of_stream_arn(bad).is_err(), "{bad}");
    }
}
