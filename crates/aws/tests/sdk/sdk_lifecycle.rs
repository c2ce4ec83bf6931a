//! The SDK adapter's template and retention calls against aws-smithy-mocks: what reaches the
//! wire, how DynamoDB's answers map back, and how its errors are classified.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::operation::create_table::CreateTableOutput;
use aws_sdk_dynamodb::operation::delete_table::{DeleteTableError, DeleteTableOutput};
use aws_sdk_dynamodb::operation::describe_continuous_backups::DescribeContinuousBackupsOutput;
use aws_sdk_dynamodb::operation::describe_export::DescribeExportOutput;
use aws_sdk_dynamodb::operation::describe_time_to_live::DescribeTimeToLiveOutput;
use aws_sdk_dynamodb::operation::export_table_to_point_in_time::{
    ExportTableToPointInTimeError, ExportTableToPointInTimeOutput,
};
use aws_sdk_dynamodb::operation::list_tables::ListTablesOutput;
use aws_sdk_dynamodb::operation::list_tags_of_resource::ListTagsOfResourceOutput;
use aws_sdk_dynamodb::operation::tag_resource::TagResourceOutput;
use aws_sdk_dynamodb::operation::update_table::{UpdateTableError, UpdateTableInput, UpdateTableOutput};
use aws_sdk_dynamodb::types::error::PointInTimeRecoveryUnavailableException;
use aws_sdk_dynamodb::types::{
    ContinuousBackupsDescription, ContinuousBackupsStatus, ExportDescription, ExportFormat,
    ExportStatus as SdkExportStatus, PointInTimeRecoveryDescription, PointInTimeRecoveryStatus,
    ProvisionedThroughputDescription, SseDescription, SseSpecification, SseStatus, SseType,
    StreamSpecification, StreamViewType, TableStatus as SdkTableStatus, Tag, TimeToLiveDescription,
    TimeToLiveStatus,
};
use aws_sdk_dynamodb::Client;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};

use crate::common::at;
use crate::common::mocks::{
    adapter, coded_with, delete_refused, describes, in_use, limit_exceeded, limit_exceeded_saying, not_found,
    run_on, spec,
};
use crate::common::reports::step_outcomes;
use chrono::{DateTime, Utc};
use ddb_rollover::control::{ErrorKind, Tables};
use ddb_rollover::ledger::{Book, PeriodBounds, Receipt, TableIdentity};
use ddb_rollover::policy::TAG_LAST_DEFERRAL;
use ddb_rollover::policy::{Encryption, StreamView};
use ddb_rollover::table::{DeleteRequest, ExportRequest, SettingChange, TableSetting, TableSpec};
use ddb_rollover::table::{ExportStatus, ObservedEncryption};
use ddb_rollover::Policy;
use ddb_rollover::{ApplyOptions, Operation, Outcome};
use ddb_rollover::{Decision, Plan, PlanItem, TableFacts};
use ddb_rollover_aws::dynamodb::DynamoDb;

const TABLE_ARN: &str = "arn:aws:dynamodb:us-east-1:123456789012:table/t";
const EXPORT_ARN: &str = "arn:aws:dynamodb:us-east-1:123456789012:table/t/export/01540000000000-abcdef12";
const KEY_ARN: &str = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";

fn wire_tags(tags: &[Tag]) -> BTreeMap<String, String> {
    tags.iter()
        .map(|t| (t.key().to_string(), t.value().to_string()))
        .collect()
}

fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// SSESpecification as (Enabled, SSEType, KMSMasterKeyId).
fn sse(spec: Option<&SseSpecification>) -> Option<(Option<bool>, Option<SseType>, Option<String>)> {
    spec.map(|s| {
        (
            s.enabled(),
            s.sse_type().cloned(),
            s.kms_master_key_id().map(str::to_string),
        )
    })
}

/// StreamSpecification as (StreamEnabled, StreamViewType).
fn stream(spec: Option<&StreamSpecification>) -> Option<(bool, Option<StreamViewType>)> {
    spec.map(|s| (s.stream_enabled(), s.stream_view_type().cloned()))
}

/// The settings an UpdateTable request carries.
fn update_fields(r: &UpdateTableInput) -> Vec<&'static str> {
    [
        ("BillingMode", r.billing_mode().is_some()),
        ("ProvisionedThroughput", r.provisioned_throughput().is_some()),
        ("OnDemandThroughput", r.on_demand_throughput().is_some()),
        ("TableClass", r.table_class().is_some()),
        (
            "DeletionProtectionEnabled",
            r.deletion_protection_enabled().is_some(),
        ),
        ("StreamSpecification", r.stream_specification().is_some()),
        ("SSESpecification", r.sse_specification().is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
}

/// Carries out one planned deletion through the executor, which owns the three-call action
/// (the receipt in the ledger, lift deletion protection, then DeleteTable); returns the line's
/// outcome and error.
async fn delete(control: &DynamoDb, name: &str, lift: bool) -> (Outcome, Option<String>) {
    let policy = Policy::default();
    let receipt = Receipt {
        name: name.into(),
        identity: TableIdentity::new(
            &format!("arn:aws:dynamodb:us-east-1:123456789012:table/{name}"),
            at("2018-10-01T00:00:00Z"),
            None,
        ),
        period: PeriodBounds {
            start: at("2018-10-01T00:00:00Z"),
            end: at("2018-10-02T00:00:00Z"),
        },
        key: policy.key.clone(),
        at: at("2018-10-31T00:15:00Z"),
        archive: None,
    };
    let item = PlanItem {
        facts: TableFacts {
            table: name.into(),
            period: Some("2018-10-01".into()),
            slot: None,
            age: Some(30),
            phase: Some(2),
            status: Some("ACTIVE".into()),
            billing: None,
        },
        arn: None,
        verdict: None,
        decision: Decision::Delete(DeleteRequest {
            name: name.into(),
            lift_deletion_protection: lift,
            archived_by: None,
            receipt,
        }),
        reason: "past delete_after".into(),
    };
    let plan = Plan {
        operation: Operation::ResizeOld,
        at: at("2018-10-31T00:15:00Z"),
        prefix: "timeseries".into(),
        current_period: "2018-10-31".into(),
        items: vec![item],
        warnings: Vec::new(),
    };
    let options = ApplyOptions::default();
    let mut report = ddb_rollover::apply(control, &policy, &Book::default(), plan, &[], options).await;
    let line = report.tables.remove(0);
    (line.outcome, line.error)
}

/// The receipt's PutItem, which comes before any deletion.
fn receipt_written() -> Rule {
    mock!(Client::put_item)
        .match_requests(|r| r.table_name() == Some("timeseries_ledger"))
        .then_output(|| aws_sdk_dynamodb::operation::put_item::PutItemOutput::builder().build())
}

/// [`delete`] of `t` when its one call is answered by `rule`.
async fn delete_answered_by(rule: &Rule, lift: bool) -> (Outcome, Option<String>) {
    delete(
        &adapter(RuleMode::Sequential, &[&receipt_written(), rule]),
        "t",
        lift,
    )
    .await
}

/// DescribeContinuousBackups' answer: backups on, point-in-time recovery `status`.
fn continuous_backups(status: PointInTimeRecoveryStatus) -> DescribeContinuousBackupsOutput {
    DescribeContinuousBackupsOutput::builder()
        .continuous_backups_description(
            ContinuousBackupsDescription::builder()
                .continuous_backups_status(ContinuousBackupsStatus::Enabled)
                .point_in_time_recovery_description(
                    PointInTimeRecoveryDescription::builder()
                        .point_in_time_recovery_status(status)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .build()
}

fn export_request() -> ExportRequest {
    ExportRequest {
        name: "t".into(),
        table_arn: TABLE_ARN.into(),
        bucket: "my-archive".into(),
        prefix: "ddb-rollover/t/".into(),
        bucket_owner: "123456789012".into(),
        after_seal: false,
    }
}

// ---- CreateTable ----

#[tokio::test]
async fn create_table_sends_tags_deletion_protection_stream_and_aws_managed_sse() {
    let rule = mock!(Client::create_table)
        .match_requests(|r| {
            wire_tags(r.tags()) == tags(&[("team", "iot"), ("ddb-rollover:policy-hash", "0123456789abcdef")])
                && r.deletion_protection_enabled() == Some(true)
                && stream(r.stream_specification()) == Some((true, Some(StreamViewType::NewAndOldImages)))
                && sse(r.sse_specification()) == Some((Some(true), Some(SseType::Kms), None))
        })
        .then_output(|| CreateTableOutput::builder().build());
    let control = adapter(RuleMode::Sequential, &[&rule]);
    let spec = TableSpec {
        deletion_protection: true,
        stream: Some(StreamView::NewAndOldImages),
        encryption: Some(Encryption::AwsManaged),
        tags: tags(&[("team", "iot"), ("ddb-rollover:policy-hash", "0123456789abcdef")]),
        ..spec("t")
    };
    control.create_table(&spec).await.unwrap();
    assert_eq!(rule.num_calls(), 1);
}

#[tokio::test]
async fn create_table_sends_a_customer_key_or_disables_kms_for_aws_owned() {
    let customer = mock!(Client::create_table)
        .match_requests(|r| {
            r.table_name() == Some("customer")
                && sse(r.sse_specification()) == Some((Some(true), Some(SseType::Kms), Some(KEY_ARN.into())))
        })
        .then_output(|| CreateTableOutput::builder().build());
    let owned = mock!(Client::create_table)
        .match_requests(|r| {
            r.table_name() == Some("owned") && sse(r.sse_specification()) == Some((Some(false), None, None))
        })
        .then_output(|| CreateTableOutput::builder().build());
    let control = adapter(RuleMode::MatchAny, &[&customer, &owned]);
    let customer_spec = TableSpec {
        encryption: Some(Encryption::CustomerManaged {
            kms_key: KEY_ARN.into(),
        }),
        ..spec("customer")
    };
    control.create_table(&customer_spec).await.unwrap();
    let owned_spec = TableSpec {
        encryption: Some(Encryption::AwsOwned),
        ..spec("owned")
    };
    control.create_table(&owned_spec).await.unwrap();
    assert_eq!((customer.num_calls(), owned.num_calls()), (1, 1));
}

#[tokio::test]
async fn create_table_without_template_settings_sends_none_of_them() {
    let rule = mock!(Client::create_table)
        .match_requests(|r| {
            r.tags().is_empty()
                && r.deletion_protection_enabled().is_none()
                && r.stream_specification().is_none()
                && r.sse_specification().is_none()
        })
        .then_output(|| CreateTableOutput::builder().build());
    let control = adapter(RuleMode::Sequential, &[&rule]);
    control.create_table(&spec("t")).await.unwrap();
    assert_eq!(rule.num_calls(), 1);
}

// ---- UpdateTable for one setting ----

#[tokio::test]
async fn configure_sends_exactly_one_setting_per_update_table() {
    let protection = mock!(Client::update_table)
        .match_requests(|r| {
            update_fields(r) == ["DeletionProtectionEnabled"] && r.deletion_protection_enabled() == Some(true)
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let stream_off = mock!(Client::update_table)
        .match_requests(|r| {
            update_fields(r) == ["StreamSpecification"]
                && stream(r.stream_specification()) == Some((false, None))
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let stream_on = mock!(Client::update_table)
        .match_requests(|r| {
            update_fields(r) == ["StreamSpecification"]
                && stream(r.stream_specification()) == Some((true, Some(StreamViewType::KeysOnly)))
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let encryption = mock!(Client::update_table)
        .match_requests(|r| {
            update_fields(r) == ["SSESpecification"]
                && sse(r.sse_specification())
                    == Some((Some(true), Some(SseType::Kms), Some("alias/archive".into())))
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let control = adapter(
        RuleMode::Sequential,
        &[&protection, &stream_off, &stream_on, &encryption],
    );
    for setting in [
        TableSetting::DeletionProtection(true),
        TableSetting::Stream(None),
        TableSetting::Stream(Some(StreamView::KeysOnly)),
        TableSetting::Encryption(Encryption::CustomerManaged {
            kms_key: "alias/archive".into(),
        }),
    ] {
        let change = SettingChange {
            name: "t".into(),
            setting,
        };
        control.configure(&change).await.unwrap();
    }
    let calls: Vec<_> = [&protection, &stream_off, &stream_on, &encryption]
        .iter()
        .map(|r| r.num_calls())
        .collect();
    assert_eq!(calls, [1, 1, 1, 1]);
}

// ---- ExportTableToPointInTime ----

#[tokio::test]
async fn export_sends_arn_bucket_prefix_owner_and_dynamodb_json_and_returns_the_export_arn() {
    let rule = mock!(Client::export_table_to_point_in_time)
        .match_requests(|r| {
            r.table_arn() == Some(TABLE_ARN)
                && r.s3_bucket() == Some("my-archive")
                && r.s3_prefix() == Some("ddb-rollover/t/")
                && r.s3_bucket_owner() == Some("123456789012")
                && r.export_format() == Some(&ExportFormat::DynamodbJson)
        })
        .then_output(|| {
            ExportTableToPointInTimeOutput::builder()
                .export_description(
                    ExportDescription::builder()
                        .export_arn(EXPORT_ARN)
                        .export_status(SdkExportStatus::InProgress)
                        .build(),
                )
                .build()
        });
    let control = adapter(RuleMode::Sequential, &[&rule]);
    assert_eq!(control.export_table(&export_request()).await.unwrap(), EXPORT_ARN);
}

#[tokio::test]
async fn export_errors_name_export_table_to_point_in_time() {
    let rule = mock!(Client::export_table_to_point_in_time).then_error(|| {
        ExportTableToPointInTimeError::PointInTimeRecoveryUnavailableException(
            PointInTimeRecoveryUnavailableException::builder()
                .message("Point in time recovery is not enabled")
                .meta(coded_with(
                    "PointInTimeRecoveryUnavailableException",
                    "Point in time recovery is not enabled",
                ))
                .build(),
        )
    });
    let control = adapter(RuleMode::Sequential, &[&rule]);
    let error = control.export_table(&export_request()).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Other);
    assert_eq!(error.operation, "ExportTableToPointInTime");
    assert!(
        error
            .to_string()
            .starts_with("ExportTableToPointInTime t: PointInTimeRecoveryUnavailableException"),
        "{error}"
    );
}

#[tokio::test]
async fn export_refused_for_limits_is_limit_exceeded() {
    let rule = mock!(Client::export_table_to_point_in_time)
        .then_error(|| ExportTableToPointInTimeError::LimitExceededException(limit_exceeded()));
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule], |c| c
        .retry_config(RetryConfig::disabled()));
    let error = DynamoDb::new(client)
        .export_table(&export_request())
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::LimitExceeded);
}

// ---- DeleteTable ----

#[tokio::test]
async fn delete_lifts_deletion_protection_first_then_deletes() {
    let lift = mock!(Client::update_table)
        .match_requests(|r| {
            r.table_name() == Some("t")
                && update_fields(r) == ["DeletionProtectionEnabled"]
                && r.deletion_protection_enabled() == Some(false)
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let delete_rule = mock!(Client::delete_table)
        .match_requests(|r| r.table_name() == Some("t"))
        .then_output(|| DeleteTableOutput::builder().build());
    let control = adapter(RuleMode::Sequential, &[&receipt_written(), &lift, &delete_rule]);
    assert_eq!(delete(&control, "t", true).await, (Outcome::Done, None));
    assert_eq!((lift.num_calls(), delete_rule.num_calls()), (1, 1));
}

#[tokio::test]
async fn delete_without_protection_sends_only_delete_table() {
    let delete_rule = mock!(Client::delete_table).then_output(|| DeleteTableOutput::builder().build());
    let control = adapter(RuleMode::Sequential, &[&receipt_written(), &delete_rule]);
    assert_eq!(delete(&control, "t", false).await, (Outcome::Done, None));
    assert_eq!(delete_rule.num_calls(), 1);
}

#[tokio::test]
async fn delete_of_a_table_already_gone_counts_as_gone() {
    let rule =
        mock!(Client::delete_table).then_error(|| DeleteTableError::ResourceNotFoundException(not_found()));
    assert_eq!(delete_answered_by(&rule, false).await, (Outcome::Gone, None));
}

/// Another run's DeleteTable is under way: DynamoDB answers ResourceInUseException, and the
/// table is DELETING (or gone by the time we look): the same end state, so not a failure.
#[tokio::test]
async fn delete_of_a_table_another_run_is_deleting_counts_as_gone() {
    let busy =
        || mock!(Client::delete_table).then_error(|| DeleteTableError::ResourceInUseException(in_use()));
    for status in [Some(SdkTableStatus::Deleting), None] {
        let busy = busy();
        let describe = match status.clone() {
            Some(status) => describes("t", move |t| t.table_status(status.clone())),
            None => mock!(Client::describe_table).then_error(|| {
                aws_sdk_dynamodb::operation::describe_table::DescribeTableError::ResourceNotFoundException(
                    not_found(),
                )
            }),
        };
        let control = adapter(RuleMode::Sequential, &[&receipt_written(), &busy, &describe]);
        assert_eq!(
            delete(&control, "t", false).await,
            (Outcome::Gone, None),
            "{status:?}"
        );
    }
    // Busy because it is UPDATING: deferred to a later run, not gone.
    let busy = busy();
    let updating = describes("t", |t| t.table_status(SdkTableStatus::Updating));
    let control = adapter(RuleMode::Sequential, &[&receipt_written(), &busy, &updating]);
    assert_eq!(delete(&control, "t", false).await.0, Outcome::Deferred);
}

/// A concurrent run (or a retry) deleted the protected table first: lifting its protection
/// finds no table, which means the same as DeleteTable finding none.
#[tokio::test]
async fn delete_of_a_protected_table_already_gone_counts_as_done() {
    let rule =
        mock!(Client::update_table).then_error(|| UpdateTableError::ResourceNotFoundException(not_found()));
    assert_eq!(delete_answered_by(&rule, true).await, (Outcome::Gone, None));
}

#[tokio::test]
async fn delete_errors_are_classified() {
    let busy = delete_refused("busy", || DeleteTableError::ResourceInUseException(in_use()));
    let limited = delete_refused("limited", || {
        DeleteTableError::LimitExceededException(limit_exceeded())
    });
    let control = adapter(RuleMode::MatchAny, &[&busy, &limited]);
    let error = control.delete_table("busy").await.unwrap_err();
    assert_eq!((error.kind, error.operation), (ErrorKind::InUse, "DeleteTable"));
    let error = control.delete_table("limited").await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::LimitExceeded);
}

// ---- Reads ----

#[tokio::test]
async fn describe_export_maps_status_failure_and_end_time() {
    let export = |arn: &'static str, status: SdkExportStatus, failed: bool| {
        mock!(Client::describe_export)
            .match_requests(move |r| r.export_arn() == Some(arn))
            .then_output(move || {
                let mut description = ExportDescription::builder()
                    .export_arn(arn)
                    .export_status(status.clone());
                if status == SdkExportStatus::Completed {
                    description = description.end_time(aws_smithy_types::DateTime::from_secs(1_540_512_900));
                }
                if failed {
                    description = description
                        .failure_code("S3NoSuchBucket")
                        .failure_message("The bucket does not exist");
                }
                DescribeExportOutput::builder()
                    .export_description(description.build())
                    .build()
            })
    };
    let done = export("arn:done", SdkExportStatus::Completed, false);
    let failed = export("arn:failed", SdkExportStatus::Failed, true);
    let running = export("arn:running", SdkExportStatus::InProgress, false);
    let control = adapter(RuleMode::MatchAny, &[&done, &failed, &running]);

    let state = control.describe_export("t", "arn:done").await.unwrap();
    assert_eq!(
        (state.arn.as_str(), state.status, state.end_time, state.failure),
        (
            "arn:done",
            ExportStatus::Completed,
            DateTime::<Utc>::from_timestamp(1_540_512_900, 0),
            None
        )
    );
    let state = control.describe_export("t", "arn:failed").await.unwrap();
    assert_eq!(state.status, ExportStatus::Failed);
    assert_eq!(
        state.failure.as_deref(),
        Some("S3NoSuchBucket: The bucket does not exist")
    );
    let state = control.describe_export("t", "arn:running").await.unwrap();
    assert_eq!((state.status, state.end_time), (ExportStatus::InProgress, None));
}

#[tokio::test]
async fn list_tags_follows_next_token_across_pages() {
    let first = mock!(Client::list_tags_of_resource)
        .match_requests(|r| r.resource_arn() == Some(TABLE_ARN) && r.next_token().is_none())
        .then_output(|| {
            ListTagsOfResourceOutput::builder()
                .tags(Tag::builder().key("a").value("1").build().unwrap())
                .tags(Tag::builder().key("b").value("2").build().unwrap())
                .next_token("page-2")
                .build()
        });
    let second = mock!(Client::list_tags_of_resource)
        .match_requests(|r| r.resource_arn() == Some(TABLE_ARN) && r.next_token() == Some("page-2"))
        .then_output(|| {
            ListTagsOfResourceOutput::builder()
                .tags(Tag::builder().key("c").value("3").build().unwrap())
                .build()
        });
    let control = adapter(RuleMode::Sequential, &[&first, &second]);
    let found = control.list_tags(TABLE_ARN).await.unwrap();
    assert_eq!(found, tags(&[("a", "1"), ("b", "2"), ("c", "3")]));
    assert_eq!((first.num_calls(), second.num_calls()), (1, 1));
}

#[tokio::test]
async fn describe_table_maps_arn_deletion_protection_stream_and_kms_key() {
    let full = describes("t", |t| {
        t.table_status(SdkTableStatus::Active)
            .table_arn(TABLE_ARN)
            .deletion_protection_enabled(true)
            .stream_specification(
                StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(StreamViewType::NewAndOldImages)
                    .build()
                    .unwrap(),
            )
            .sse_description(
                SseDescription::builder()
                    .status(SseStatus::Enabled)
                    .sse_type(SseType::Kms)
                    .kms_master_key_arn(KEY_ARN)
                    .build(),
            )
    });
    let plain = describes("plain", |t| {
        t.table_status(SdkTableStatus::Active)
            .stream_specification(
                StreamSpecification::builder()
                    .stream_enabled(false)
                    .stream_view_type(StreamViewType::KeysOnly)
                    .build()
                    .unwrap(),
            )
            .sse_description(SseDescription::builder().status(SseStatus::Disabled).build())
    });
    let control = adapter(RuleMode::MatchAny, &[&full, &plain]);
    let table = control.describe_table("t").await.unwrap().unwrap();
    assert_eq!(table.arn.as_deref(), Some(TABLE_ARN));
    assert!(table.deletion_protection);
    assert_eq!(table.stream, Some(StreamView::NewAndOldImages));
    assert_eq!(
        table.encryption,
        ObservedEncryption::Kms {
            key_arn: Some(KEY_ARN.into())
        }
    );
    let plain = control.describe_table("plain").await.unwrap().unwrap();
    assert_eq!(
        (
            plain.arn,
            plain.deletion_protection,
            plain.stream,
            plain.encryption
        ),
        (None, false, None, ObservedEncryption::AwsOwned)
    );
}

#[tokio::test]
async fn describe_ttl_maps_status_and_attribute() {
    let on = mock!(Client::describe_time_to_live)
        .match_requests(|r| r.table_name() == Some("on"))
        .then_output(|| {
            DescribeTimeToLiveOutput::builder()
                .time_to_live_description(
                    TimeToLiveDescription::builder()
                        .time_to_live_status(TimeToLiveStatus::Enabled)
                        .attribute_name("expires_at")
                        .build(),
                )
                .build()
        });
    let never = mock!(Client::describe_time_to_live)
        .match_requests(|r| r.table_name() == Some("never"))
        .then_output(|| DescribeTimeToLiveOutput::builder().build());
    let control = adapter(RuleMode::MatchAny, &[&on, &never]);
    let ttl = control.describe_ttl("on").await.unwrap();
    assert_eq!(
        (ttl.status.as_str(), ttl.attribute.as_deref()),
        ("ENABLED", Some("expires_at"))
    );
    assert!(ttl.is_on_with("expires_at"));
    let ttl = control.describe_ttl("never").await.unwrap();
    assert_eq!((ttl.status.as_str(), ttl.attribute), ("DISABLED", None));
}

#[tokio::test]
async fn describe_point_in_time_recovery_maps_enabled_and_disabled() {
    let backups = |name: &'static str, status: PointInTimeRecoveryStatus| {
        mock!(Client::describe_continuous_backups)
            .match_requests(move |r| r.table_name() == Some(name))
            .then_output(move || continuous_backups(status.clone()))
    };
    let on = backups("on", PointInTimeRecoveryStatus::Enabled);
    let off = backups("off", PointInTimeRecoveryStatus::Disabled);
    let control = adapter(RuleMode::MatchAny, &[&on, &off]);
    assert!(control.describe_point_in_time_recovery("on").await.unwrap());
    assert!(!control.describe_point_in_time_recovery("off").await.unwrap());
}

// ---- The executor ----

/// ExportTableToPointInTime refused for limits (too many exports in flight) is a deferral,
/// recorded on the table, and the run still succeeds.
#[tokio::test]
async fn an_export_refused_for_limits_is_deferred_and_the_run_succeeds() {
    const NAME: &str = "timeseries_2018-10-24";
    const ARN: &str = "arn:aws:dynamodb:us-east-1:123456789012:table/timeseries_2018-10-24";
    let policy = Policy::from_toml(
        "[[phases]]\nmin_age = 0\nread = 1\nwrite = 1\n\
         [retention]\narchive_after = 1\nbucket = \"my-archive\"\n",
    )
    .unwrap();
    let hash = policy.hash();

    let list =
        mock!(Client::list_tables).then_output(|| ListTablesOutput::builder().table_names(NAME).build());
    let describe = describes(NAME, |t| {
        t.table_arn(ARN)
            .table_status(SdkTableStatus::Active)
            .provisioned_throughput(
                ProvisionedThroughputDescription::builder()
                    .read_capacity_units(1)
                    .write_capacity_units(1)
                    .build(),
            )
    });
    let own_tags = mock!(Client::list_tags_of_resource).then_output(move || {
        let tag = |k: &str, v: &str| Tag::builder().key(k).value(v).build().unwrap();
        ListTagsOfResourceOutput::builder()
            .tags(tag("ddb-rollover:period-start", "2018-10-24T00:00:00+00:00"))
            .tags(tag("ddb-rollover:period-end", "2018-10-25T00:00:00+00:00"))
            .tags(tag("ddb-rollover:policy-hash", &hash))
            .tags(tag("ddb-rollover:family", "timeseries"))
            .build()
    });
    let pitr = mock!(Client::describe_continuous_backups)
        .then_output(|| continuous_backups(PointInTimeRecoveryStatus::Enabled));
    let export = mock!(Client::export_table_to_point_in_time)
        .match_requests(|r| r.table_arn() == Some(ARN))
        .then_error(|| {
            ExportTableToPointInTimeError::LimitExceededException(limit_exceeded_saying(
                "Too many exports in progress",
            ))
        });
    let record = mock!(Client::tag_resource)
        .match_requests(|r| r.tags().iter().any(|t| t.key() == TAG_LAST_DEFERRAL))
        .then_output(|| TagResourceOutput::builder().build());
    let ledger = crate::common::mocks::ledger(&policy, &[NAME]);
    let client = mock_client!(
        aws_sdk_dynamodb,
        RuleMode::MatchAny,
        [&list, &describe, &own_tags, &pitr, &export, &record, &ledger[0], &ledger[1], &ledger[2]],
        |c| c.retry_config(RetryConfig::disabled())
    );

    let report = run_on(client, &policy, Operation::ResizeOld, "2018-10-26T00:15:00Z").await;
    assert_eq!(
        step_outcomes(&report),
        [("unchanged", Outcome::Unchanged), ("export", Outcome::Deferred)]
    );
    assert!(report.succeeded(), "{report:#?}");
    assert_eq!((export.num_calls(), record.num_calls()), (1, 1));
}
