//! The signed calls the bootstraps make without an SDK crate (`ddb_rollover::aws::signed`:
//! Systems Manager, EventBridge, S3) against moto through the tests' proxy: what they write
//! is read back with another call or straight from moto's S3, and refusals come back with
//! AWS's error code.

use aws_config::{BehaviorVersion, Region};
use aws_sdk_dynamodb::config::Credentials;
use ddb_rollover::aws::signed::{SignedClient, EVENTBRIDGE, SSM};
use serde_json::json;
use testkit::{LocalDynamo, Server};

async fn signed_client(db: &LocalDynamo) -> SignedClient {
    let config = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(db.endpoint())
        .credentials_provider(Credentials::new("testing", "testing", None, None, "tests"))
        .load()
        .await;
    SignedClient::new(config)
}

#[tokio::test]
async fn parameters_events_and_objects_through_signed_calls_on_moto() {
    let db = LocalDynamo::start(Server::Moto);
    let signed = signed_client(&db).await;

    // Systems Manager: a parameter written, overwritten, and read back.
    let name = "/ddb-rollover/signed/tables";
    for (value, version) in [(r#"{"current":"a"}"#, 1), (r#"{"current":"b"}"#, 2)] {
        let put = signed
            .json(
                SSM,
                "PutParameter",
                &json!({"Name": name, "Value": value, "Type": "String", "Overwrite": true}),
            )
            .await
            .unwrap();
        assert_eq!(put["Version"], version, "{put}");
    }
    let got = signed
        .json(SSM, "GetParameter", &json!({"Name": name}))
        .await
        .unwrap();
    assert_eq!(got["Parameter"]["Value"], r#"{"current":"b"}"#, "{got}");
    let missing = signed
        .json(SSM, "GetParameter", &json!({"Name": "/ddb-rollover/none"}))
        .await
        .unwrap_err();
    assert_eq!(
        (missing.status, missing.code.as_str()),
        (Some(400), "ParameterNotFound"),
        "{missing}"
    );
    assert!(!missing.is_access_denied());

    // EventBridge: two events on the default bus, each given an id.
    let put = signed
        .json(
            EVENTBRIDGE,
            "PutEvents",
            &json!({"Entries": [
                {"Source": "ddb-rollover", "DetailType": "Table ready", "Detail": "{\"table\":\"signed_1\"}"},
                {"Source": "ddb-rollover", "DetailType": "Table deleted", "Detail": "{\"table\":\"signed_0\"}"}
            ]}),
        )
        .await
        .unwrap();
    assert_eq!(put["FailedEntryCount"], 0, "{put}");
    let ids: Vec<_> = put["Entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["EventId"].clone())
        .collect();
    assert!(
        ids.len() == 2 && ids.iter().all(|id| id.as_str().is_some_and(|id| !id.is_empty())),
        "{put}"
    );

    // S3: an object's exact bytes (a key that needs encoding included), a missing key, a
    // missing bucket.
    db.create_bucket("signed-archive");
    let key = "exports/AWSDynamoDB/01234-abcd/manifest files+1.json";
    let body = br#"{"itemCount": 3}"#;
    db.put_object("signed-archive", key, body);
    assert_eq!(
        signed.s3_get("signed-archive", key).await.unwrap().as_deref(),
        Some(&body[..])
    );
    // HeadObject: the ETag unquoted (a single-part upload's: the MD5 of the bytes), the size,
    // no storage class header for STANDARD.
    let head = signed
        .s3_head("signed-archive", key)
        .await
        .unwrap()
        .expect("there");
    assert_eq!(
        (head.etag.as_str(), head.storage_class),
        ("f770f4b4c529946efd50dfd4def49115", None)
    );
    assert_eq!(
        signed
            .s3_get("signed-archive", "exports/none.json")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        signed
            .s3_head("signed-archive", "exports/none.json")
            .await
            .unwrap(),
        None
    );
    // Listing: every key under a prefix, across pages (ListObjectsV2 gives 1,000 a page).
    db.put_object("signed-archive", "other/x.json", b"{}");
    let many: Vec<String> = (0..1005).map(|n| format!("exports/page/{n:04}.json")).collect();
    for k in &many {
        db.put_object("signed-archive", k, b"");
    }
    let mut listed = signed.s3_list("signed-archive", "exports/").await.unwrap();
    listed.sort();
    let mut expected = many.clone();
    expected.push(key.to_string());
    expected.sort();
    assert_eq!(listed, expected);
    assert!(signed
        .s3_list("no-such-bucket", "")
        .await
        .unwrap_or_default()
        .is_empty());
    let no_bucket = signed.s3_get("no-such-bucket", key).await;
    assert!(
        matches!(&no_bucket, Ok(None) | Err(_)),
        "a missing bucket is never an object: {no_bucket:?}"
    );
}
