//! The SDK-backed adapters beside DynamoDB (S3 archives, Systems Manager parameters, EventBridge
//! events) against moto through the tests' AWS-behaviour proxy, built as the functions build
//! them (one `SdkConfig`): what they write is read back with another client or straight from
//! moto, refusals come back named, a dropped connection is retried, and the three clients
//! fetch credentials once between them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use aws_config::{BehaviorVersion, Region};
use aws_credential_types::credential_fn::provide_credentials_fn;
use aws_sdk_dynamodb::config::Credentials;
use ddb_rollover::control::{ArchiveStore, Bucket};
use ddb_rollover::table::{ObjectBody, ObjectHead};
use ddb_rollover_aws::archive::S3Store;
use ddb_rollover_aws::events::{put_events, Event};
use ddb_rollover_aws::parameters::put_parameter;
use ddb_rollover_aws::sdk::AwsClients;
use serde_json::json;
use testkit::proxy::{Fault, Proxy, Rule};
use testkit::{LocalDynamo, Server};

use crate::support::aws_clients;
use crate::support::events::{received, subscribe};

/// The proxy names a call by its `X-Amz-Target` (DynamoDB, Systems Manager, EventBridge and SQS
/// send one); S3's REST calls have none, and this operation.
const S3_CALL: &str = "";

/// A bucket of moto's account, as the proof reads it.
fn ours(name: &str) -> Bucket<'_> {
    Bucket {
        name,
        owner: testkit::MOTO_ACCOUNT,
    }
}

/// An object's body as GetObject gives it, with no expiration.
fn body(bytes: &[u8]) -> Option<ObjectBody> {
    Some(ObjectBody {
        bytes: bytes.to_vec(),
        expiration: None,
    })
}

#[tokio::test]
async fn s3_objects_are_read_listed_and_headed_as_moto_holds_them() {
    let db = LocalDynamo::start(Server::Moto);
    let clients = aws_clients(db.endpoint()).await;
    let store = S3Store(&clients.s3);
    db.create_bucket("sdk-archive");

    // An object's exact bytes (a key that needs encoding included), a missing key, a missing
    // bucket.
    let key = "exports/AWSDynamoDB/01234-abcd/manifest files+1.json";
    let body = br#"{"itemCount": 3}"#;
    db.put_object("sdk-archive", key, body);
    assert_eq!(
        store.get(ours("sdk-archive"), key).await.unwrap(),
        self::body(body)
    );
    assert_eq!(
        store.get(ours("sdk-archive"), "exports/none.json").await.unwrap(),
        None
    );
    assert_eq!(store.get(ours("no-such-bucket"), key).await.unwrap(), None);

    // HeadObject: the ETag as moto's own listing gives it, without quotes; the size; no storage
    // class for STANDARD, the class for another.
    let listed = clients
        .s3
        .list_objects_v2()
        .bucket("sdk-archive")
        .prefix(key)
        .send()
        .await
        .unwrap();
    let listed_etag = listed.contents()[0].e_tag().unwrap().trim_matches('"').to_owned();
    assert!(!listed_etag.is_empty());
    assert_eq!(
        store.head(ours("sdk-archive"), key).await.unwrap(),
        Some(ObjectHead {
            etag: listed_etag,
            size: body.len() as u64,
            storage_class: None,
            expiration: None,
        })
    );
    clients
        .s3
        .put_object()
        .bucket("sdk-archive")
        .key("exports/cold.json.gz")
        .storage_class(aws_sdk_s3::types::StorageClass::Glacier)
        .body(b"cold".to_vec().into())
        .send()
        .await
        .unwrap();
    let cold = store
        .head(ours("sdk-archive"), "exports/cold.json.gz")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((cold.size, cold.storage_class.as_deref()), (4, Some("GLACIER")));
    assert!(!cold.etag.contains('"'), "{cold:?}");
    assert_eq!(
        store
            .head(ours("sdk-archive"), "exports/none.json")
            .await
            .unwrap(),
        None
    );

    // Listing: every key under a prefix, across pages (ListObjectsV2 gives 1,000 a page).
    db.put_object("sdk-archive", "other/x.json", b"{}");
    let many: Vec<String> = (0..1005).map(|n| format!("exports/page/{n:04}.json")).collect();
    for k in &many {
        db.put_object("sdk-archive", k, b"");
    }
    let mut listed = store.list(ours("sdk-archive"), "exports/").await.unwrap();
    listed.sort();
    let mut expected = many.clone();
    expected.extend([key.to_string(), "exports/cold.json.gz".to_string()]);
    expected.sort();
    assert_eq!(listed, expected);
    assert!(store.list(ours("no-such-bucket"), "").await.unwrap().is_empty());
}

/// Every read names the account that must own the bucket (`ExpectedBucketOwner`), and S3's 403
/// for another owner is an error naming it; GetObject and HeadObject pass S3's
/// `x-amz-expiration` on. moto does neither: the AWS-behaviour proxy in front of it does.
#[tokio::test]
async fn s3_reads_expect_the_owner_and_carry_the_expiration() {
    let db = LocalDynamo::start(Server::Moto);
    let clients = aws_clients(db.endpoint()).await;
    let store = S3Store(&clients.s3);
    db.create_bucket("sdk-archive");
    db.put_object("sdk-archive", "exports/a.json", b"{}");
    db.put_object("sdk-archive", "kept/b.json", b"{}");

    let theirs = Bucket {
        name: "sdk-archive",
        owner: "210987654321",
    };
    let refused = [
        store.get(theirs, "exports/a.json").await.unwrap_err(),
        store.head(theirs, "exports/a.json").await.unwrap_err(),
        store.list(theirs, "exports/").await.unwrap_err(),
    ];
    for error in refused {
        assert!(
            error.contains("403") && error.contains("not owned by account 210987654321"),
            "{error}"
        );
    }

    db.put_lifecycle_expiration("sdk-archive", "tidy exports", "exports/", 30);
    let head = store
        .head(ours("sdk-archive"), "exports/a.json")
        .await
        .unwrap()
        .unwrap();
    let expiration = head.expiration.expect("x-amz-expiration on HeadObject");
    assert!(
        expiration.starts_with("expiry-date=\"") && expiration.ends_with("GMT\", rule-id=\"tidy%20exports\""),
        "{expiration}"
    );
    let got = store
        .get(ours("sdk-archive"), "exports/a.json")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.expiration, Some(expiration));
    let outside = store
        .head(ours("sdk-archive"), "kept/b.json")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outside.expiration, None);
}

/// S3 answers 403 for a key it will not show (no s3:GetObject, or a missing key without
/// s3:ListBucket, or a bucket of another owner than the read expects): never an absence, and
/// the error says which grant to add and which owner the read expected.
#[tokio::test]
async fn an_s3_refusal_is_an_error_naming_the_grant_never_an_absence() {
    let db = LocalDynamo::start(Server::Moto);
    db.create_bucket("sdk-archive");
    let proxy = Proxy::start(db.endpoint());
    let clients = aws_clients(&proxy.endpoint()).await;
    let store = S3Store(&clients.s3);
    proxy.add(
        Rule::op(S3_CALL).always(),
        Fault::Error {
            status: 403,
            error_type: "AccessDenied".into(),
            message: "Access Denied".into(),
        },
    );
    let head = store
        .head(ours("sdk-archive"), "p/data/missing.json.gz")
        .await
        .unwrap_err();
    assert!(
        head.contains("403")
            && head.contains("s3:ListBucket")
            && head.contains("s3:GetObject")
            && head.contains("not owned by account 123456789012"),
        "{head}"
    );
    let get = store
        .get(ours("sdk-archive"), "p/manifest-summary.json")
        .await
        .unwrap_err();
    assert!(
        get.contains("s3:ListBucket") && get.contains("arn:aws:s3:::sdk-archive"),
        "{get}"
    );
    let list = store.list(ours("sdk-archive"), "p/").await.unwrap_err();
    assert!(
        list.contains("s3:ListBucket") && list.contains("s3:prefix"),
        "{list}"
    );
}

/// A connection dropped before the answer is retried by the SDK's standard strategy, for each
/// of the three services.
#[tokio::test]
async fn a_dropped_connection_is_retried_for_s3_ssm_and_eventbridge() {
    let db = LocalDynamo::start(Server::Moto);
    db.create_bucket("sdk-archive");
    db.put_object("sdk-archive", "k.json", b"{}");
    let proxy = Proxy::start(db.endpoint());
    let clients = aws_clients(&proxy.endpoint()).await;
    let queue = subscribe(&proxy.endpoint()).await;

    proxy.add(Rule::op(S3_CALL), Fault::Drop);
    let got = S3Store(&clients.s3).get(ours("sdk-archive"), "k.json").await;
    assert_eq!(got, Ok(body(b"{}")));
    proxy.add(Rule::op("PutParameter"), Fault::Reset);
    put_parameter(&clients.ssm, "/ddb-rollover/sdk/tables", "{}")
        .await
        .unwrap();
    proxy.add(Rule::op("PutEvents"), Fault::Drop);
    let failures = put_events(&clients.eventbridge, &[ready("sdk_1")], |e| e.to_string()).await;
    assert!(failures.is_empty(), "{failures:?}");

    // Read back from moto: the parameter and the one event.
    let parameter = clients
        .ssm
        .get_parameter()
        .name("/ddb-rollover/sdk/tables")
        .send()
        .await
        .unwrap();
    assert_eq!(parameter.parameter().unwrap().value(), Some("{}"));
    assert_eq!(
        received(&queue).await,
        [("Table Ready".to_string(), "sdk_1".to_string())]
    );
    assert_eq!(
        proxy.faulted_counts().values().sum::<usize>(),
        3,
        "{:?}",
        proxy.calls()
    );
}

fn ready(table: &str) -> Event {
    Event {
        detail_type: "Table Ready",
        detail: json!({"table": table}),
    }
}

#[tokio::test]
async fn parameters_are_written_overwritten_and_read_back() {
    let db = LocalDynamo::start(Server::Moto);
    let clients = aws_clients(db.endpoint()).await;
    let name = "/ddb-rollover/sdk/tables";
    for value in [r#"{"current":"a"}"#, r#"{"current":"b"}"#] {
        put_parameter(&clients.ssm, name, value).await.unwrap();
    }
    let got = clients.ssm.get_parameter().name(name).send().await.unwrap();
    let parameter = got.parameter().unwrap();
    assert_eq!(
        (parameter.value(), parameter.version()),
        (Some(r#"{"current":"b"}"#), 2)
    );
    let missing = clients
        .ssm
        .get_parameter()
        .name("/ddb-rollover/none")
        .send()
        .await
        .unwrap_err();
    assert!(missing.into_service_error().is_parameter_not_found());
}

#[tokio::test]
async fn events_reach_a_subscribed_queue_ten_a_call() {
    let db = LocalDynamo::start(Server::Moto);
    let proxy = Proxy::start(db.endpoint());
    let clients = aws_clients(&proxy.endpoint()).await;
    let queue = subscribe(&proxy.endpoint()).await;
    proxy.reset_calls();
    let events: Vec<Event> = (0..12).map(|n| ready(&format!("sdk_{n:02}"))).collect();
    let failures = put_events(&clients.eventbridge, &events, |e| e.to_string()).await;
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(proxy.calls().len(), 2, "PutEvents takes ten entries a call");
    let mut got = received(&queue).await;
    got.sort();
    let expected: Vec<(String, String)> = (0..12)
        .map(|n| ("Table Ready".to_string(), format!("sdk_{n:02}")))
        .collect();
    assert_eq!(got, expected);
}

/// One `SdkConfig`, one credentials cache: S3, Systems Manager and EventBridge calls ask the
/// provider once between them (a function's role credentials are fetched once per cold start).
#[tokio::test]
async fn the_clients_share_one_credentials_cache() {
    let db = LocalDynamo::start(Server::Moto);
    db.create_bucket("sdk-archive");
    let asked = Arc::new(AtomicUsize::new(0));
    let config = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(db.endpoint())
        .credentials_provider(provide_credentials_fn({
            let asked = asked.clone();
            move || {
                asked.fetch_add(1, Ordering::SeqCst);
                async { Ok(Credentials::new("testing", "testing", None, None, "counting")) }
            }
        }))
        .load()
        .await;
    let clients = AwsClients::from_config(&config);
    for n in 0..3 {
        S3Store(&clients.s3)
            .head(ours("sdk-archive"), &format!("k{n}"))
            .await
            .unwrap();
        put_parameter(&clients.ssm, "/ddb-rollover/sdk/cache", "{}")
            .await
            .unwrap();
        let failures = put_events(&clients.eventbridge, &[ready("sdk_0")], |e| e.to_string()).await;
        assert!(failures.is_empty(), "{failures:?}");
    }
    clients.dynamodb.list_tables().send().await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}
