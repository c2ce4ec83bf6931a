//! The SDK adapter against aws-smithy-mocks: the error paths no local server produces
//! (LimitExceededException, ResourceInUseException on update) and response mapping.

use aws_sdk_dynamodb::error::ErrorMetadata;
use aws_sdk_dynamodb::operation::create_table::CreateTableError;
use aws_sdk_dynamodb::operation::describe_table::DescribeTableError;
use aws_sdk_dynamodb::operation::list_tables::ListTablesOutput;
use aws_sdk_dynamodb::operation::update_table::{UpdateTableError, UpdateTableOutput};
use aws_sdk_dynamodb::types::builders::TableDescriptionBuilder;
use aws_sdk_dynamodb::types::error::ResourceInUseException;
use aws_sdk_dynamodb::types::{
    BillingMode, BillingModeSummary, ProvisionedThroughputDescription, TableStatus,
};
use aws_sdk_dynamodb::Client;
use aws_smithy_mocks::{mock, RuleMode};

use crate::common::mocks::{
    adapter, client, coded_with, describes, in_use, limit_exceeded, limit_exceeded_saying, not_found, run_on,
    spec, update_refused,
};
use crate::common::reports::table_outcomes;
use chrono::{DateTime, Utc};
use ddb_rollover::control::{ErrorKind, Tables};
use ddb_rollover::policy::Billing;
use ddb_rollover::policy::Capacity;
use ddb_rollover::table::{CapacityChange, TableSpec};
use ddb_rollover::Policy;
use ddb_rollover::{Operation, Outcome};

fn change(name: &str) -> CapacityChange {
    CapacityChange {
        name: name.into(),
        from: Billing::Provisioned(Capacity {
            read: 300,
            write: 1000,
        }),
        to: Billing::Provisioned(Capacity { read: 1, write: 1 }),
        indexes: Vec::new(),
    }
}

/// An ACTIVE provisioned table with no decreases today.
fn active_provisioned(read: i64, write: i64) -> impl Fn(TableDescriptionBuilder) -> TableDescriptionBuilder {
    move |t| {
        t.table_status(TableStatus::Active).provisioned_throughput(
            ProvisionedThroughputDescription::builder()
                .read_capacity_units(read)
                .write_capacity_units(write)
                .number_of_decreases_today(0)
                .build(),
        )
    }
}

#[tokio::test]
async fn create_on_an_existing_name_means_it_exists() {
    let rule = mock!(Client::create_table).then_error(|| {
        CreateTableError::ResourceInUseException(
            ResourceInUseException::builder()
                .meta(coded_with("ResourceInUseException", "Table already exists"))
                .message("Table already exists")
                .build(),
        )
    });
    let control = adapter(RuleMode::Sequential, &[&rule]);
    let spec = spec("timeseries_2018-10-26");
    let error = control.create_table(&spec).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::AlreadyExists);
    assert!(error.message.contains("ResourceInUseException"), "{error}");
}

#[tokio::test]
async fn update_errors_are_classified() {
    let busy = update_refused("busy", || UpdateTableError::ResourceInUseException(in_use()));
    let limited = update_refused("limited", || {
        UpdateTableError::LimitExceededException(limit_exceeded_saying(
            "Subscriber limit exceeded: Provisioned throughput decreases are limited",
        ))
    });
    let invalid = update_refused("invalid", || {
        UpdateTableError::generic(coded_with(
            "ValidationException",
            "The provisioned throughput for the table will not change.",
        ))
    });
    let other_invalid = update_refused("other", || {
        UpdateTableError::generic(coded_with(
            "ValidationException",
            "One or more parameter values were invalid",
        ))
    });
    let control = adapter(RuleMode::MatchAny, &[&busy, &limited, &invalid, &other_invalid]);
    assert_eq!(
        control.update_capacity(&change("busy")).await.unwrap_err().kind,
        ErrorKind::InUse
    );
    let error = control.update_capacity(&change("limited")).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::LimitExceeded);
    assert!(error.message.contains("decreases are limited"), "{error}");
    // Another run made the same change between our DescribeTable and UpdateTable.
    let error = control.update_capacity(&change("invalid")).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::NoChange);
    let error = control.update_capacity(&change("other")).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Other);
    assert!(
        error.to_string().starts_with(
            "UpdateTable other: ValidationException: One or more parameter values were invalid. \
             DynamoDB refused the request as invalid: check the policy's values"
        ),
        "{error}"
    );
}

#[tokio::test]
async fn update_from_on_demand_switches_billing_mode() {
    let rule = mock!(Client::update_table)
        .match_requests(|r| {
            r.billing_mode() == Some(&BillingMode::Provisioned)
                && r.provisioned_throughput()
                    .map(|t| (t.read_capacity_units(), t.write_capacity_units()))
                    == Some((1, 1))
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let control = adapter(RuleMode::Sequential, &[&rule]);
    let mut change = change("t");
    change.from = Billing::OnDemand(Default::default());
    control.update_capacity(&change).await.unwrap();
    assert_eq!(rule.num_calls(), 1);
}

#[tokio::test]
async fn list_follows_every_page_and_keeps_only_the_prefix() {
    let rule = mock!(Client::list_tables)
        .sequence()
        .output(|| {
            ListTablesOutput::builder()
                .table_names("orders")
                .table_names("timeseries_2018-10-24")
                .last_evaluated_table_name("timeseries_2018-10-24")
                .build()
        })
        .output(|| {
            ListTablesOutput::builder()
                .table_names("timeseries_2018-10-25")
                .last_evaluated_table_name("timeseries_2018-10-25")
                .build()
        })
        .output(|| {
            ListTablesOutput::builder()
                .table_names("timeseries_2018-10-26")
                .table_names("zebra")
                .build()
        })
        .build();
    let control = adapter(RuleMode::Sequential, &[&rule]);
    let names = control.list_table_names("timeseries_").await.unwrap();
    assert_eq!(
        names,
        [
            "timeseries_2018-10-24",
            "timeseries_2018-10-25",
            "timeseries_2018-10-26"
        ]
    );
    assert_eq!(rule.num_calls(), 3);
}

#[tokio::test]
async fn describe_maps_the_fields_decisions_need() {
    let missing = mock!(Client::describe_table)
        .match_requests(|r| r.table_name() == Some("gone"))
        .then_error(|| DescribeTableError::ResourceNotFoundException(not_found()));
    let on_demand = describes("od", |t| {
        t.table_status(TableStatus::Updating).billing_mode_summary(
            BillingModeSummary::builder()
                .billing_mode(BillingMode::PayPerRequest)
                .build(),
        )
    });
    let provisioned = describes("prov", |t| {
        t.table_status(TableStatus::Active).provisioned_throughput(
            ProvisionedThroughputDescription::builder()
                .read_capacity_units(100)
                .write_capacity_units(1)
                .number_of_decreases_today(3)
                .last_decrease_date_time(aws_smithy_types::DateTime::from_secs(1_540_512_900))
                .build(),
        )
    });
    let control = adapter(RuleMode::MatchAny, &[&missing, &on_demand, &provisioned]);
    assert_eq!(control.describe_table("gone").await.unwrap(), None);
    let od = control.describe_table("od").await.unwrap().unwrap();
    assert_eq!(od.billing, Billing::OnDemand(Default::default()));
    assert_eq!(od.status.as_str(), "UPDATING");
    let prov = control.describe_table("prov").await.unwrap().unwrap();
    assert_eq!(
        prov.billing,
        Billing::Provisioned(Capacity { read: 100, write: 1 })
    );
    assert_eq!(prov.decreases_today, 3);
    assert_eq!(
        prov.last_decrease,
        DateTime::<Utc>::from_timestamp(1_540_512_900, 0)
    );
}

/// A run goes on past failures: LimitExceeded defers one table, a validation error fails
/// another, and the third is still resized.
#[tokio::test]
async fn one_failing_table_does_not_stop_the_run() {
    let list = mock!(Client::list_tables).then_output(|| {
        ListTablesOutput::builder()
            .table_names("timeseries_2018-10-20")
            .table_names("timeseries_2018-10-21")
            .table_names("timeseries_2018-10-22")
            .build()
    });
    // A computed rule answers once, so each table gets its own.
    let describe = |name: &'static str| {
        let fill = active_provisioned(300, 1000);
        describes(name, move |t| {
            fill(t).table_arn(crate::common::mocks::arn_of(name))
        })
    };
    let (d20, d21, d22) = (
        describe("timeseries_2018-10-20"),
        describe("timeseries_2018-10-21"),
        describe("timeseries_2018-10-22"),
    );
    let limited = update_refused("timeseries_2018-10-20", || {
        UpdateTableError::LimitExceededException(limit_exceeded())
    });
    let invalid = update_refused("timeseries_2018-10-21", || {
        UpdateTableError::generic(ErrorMetadata::builder().code("ValidationException").build())
    });
    let ok = mock!(Client::update_table)
        .match_requests(|r| r.table_name() == Some("timeseries_2018-10-22"))
        .then_output(|| UpdateTableOutput::builder().build());
    let ledger = crate::common::mocks::ledger(
        &Policy::default(),
        &[
            "timeseries_2018-10-20",
            "timeseries_2018-10-21",
            "timeseries_2018-10-22",
        ],
    );
    // The deferral is recorded on its table.
    let deferral = mock!(Client::tag_resource)
        .then_output(|| aws_sdk_dynamodb::operation::tag_resource::TagResourceOutput::builder().build());
    let mut rules = vec![&list, &d20, &d21, &d22, &limited, &invalid, &ok, &deferral];
    rules.extend(&ledger);
    let client = client(RuleMode::MatchAny, &rules);
    let report = run_on(
        client,
        &Policy::default(),
        Operation::ResizeOld,
        "2018-10-26T00:15:00Z",
    )
    .await;
    assert_eq!(
        table_outcomes(&report.tables),
        [
            ("timeseries_2018-10-20", Outcome::Deferred),
            ("timeseries_2018-10-21", Outcome::Failed),
            ("timeseries_2018-10-22", Outcome::Done),
        ]
    );
    assert!(!report.succeeded());
    assert_eq!(ok.num_calls(), 1);
}

/// What no local server keeps: on-demand maximum throughput and the table class.
#[tokio::test]
async fn on_demand_limits_and_table_class_reach_the_wire() {
    use aws_sdk_dynamodb::operation::create_table::CreateTableOutput;
    use aws_sdk_dynamodb::types::TableClass as SdkTableClass;
    use ddb_rollover::policy::{OnDemandLimits, TableClass};
    use ddb_rollover::table::ClassChange;

    let to_on_demand = mock!(Client::update_table)
        .match_requests(|r| {
            r.billing_mode() == Some(&BillingMode::PayPerRequest)
                && r.provisioned_throughput().is_none()
                && r.on_demand_throughput()
                    .map(|t| (t.max_read_request_units(), t.max_write_request_units()))
                    == Some((Some(50), Some(-1)))
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let class = mock!(Client::update_table)
        .match_requests(|r| {
            r.table_class() == Some(&SdkTableClass::StandardInfrequentAccess) && r.billing_mode().is_none()
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let create = mock!(Client::create_table)
        .match_requests(|r| {
            r.billing_mode() == Some(&BillingMode::PayPerRequest)
                && r.provisioned_throughput().is_none()
                && r.table_class() == Some(&SdkTableClass::StandardInfrequentAccess)
                && r.on_demand_throughput().and_then(|t| t.max_write_request_units()) == Some(4000)
        })
        .then_output(|| CreateTableOutput::builder().build());
    let control = adapter(RuleMode::MatchAny, &[&to_on_demand, &class, &create]);

    let limits = OnDemandLimits {
        max_read: Some(50),
        max_write: None,
    };
    let mut switch = change("t");
    switch.to = Billing::OnDemand(limits);
    control.update_capacity(&switch).await.unwrap();
    control
        .update_table_class(&ClassChange {
            name: "t".into(),
            from: TableClass::Standard,
            to: TableClass::StandardIa,
        })
        .await
        .unwrap();
    let spec = TableSpec {
        billing: Billing::OnDemand(OnDemandLimits {
            max_read: None,
            max_write: Some(4000),
        }),
        table_class: Some(TableClass::StandardIa),
        ..spec("t")
    };
    control.create_table(&spec).await.unwrap();
    assert_eq!(
        (to_on_demand.num_calls(), class.num_calls(), create.num_calls()),
        (1, 1, 1)
    );
}

#[tokio::test]
async fn describe_maps_table_class_and_on_demand_limits() {
    use aws_sdk_dynamodb::types::{OnDemandThroughput, TableClass as SdkTableClass, TableClassSummary};
    use ddb_rollover::policy::{OnDemandLimits, TableClass};

    let rule = describes("t", |t| {
        t.table_status(TableStatus::Active)
            .billing_mode_summary(
                BillingModeSummary::builder()
                    .billing_mode(BillingMode::PayPerRequest)
                    .last_update_to_pay_per_request_date_time(aws_smithy_types::DateTime::from_secs(
                        1_540_512_900,
                    ))
                    .build(),
            )
            .on_demand_throughput(
                OnDemandThroughput::builder()
                    .max_read_request_units(50)
                    .max_write_request_units(-1)
                    .build(),
            )
            .table_class_summary(
                TableClassSummary::builder()
                    .table_class(SdkTableClass::StandardInfrequentAccess)
                    .last_update_date_time(aws_smithy_types::DateTime::from_secs(1_540_000_000))
                    .build(),
            )
    });
    let control = adapter(RuleMode::Sequential, &[&rule]);
    let table = control.describe_table("t").await.unwrap().unwrap();
    assert_eq!(
        table.billing,
        Billing::OnDemand(OnDemandLimits {
            max_read: Some(50),
            max_write: None
        })
    );
    assert_eq!(
        table.last_switch_to_on_demand,
        DateTime::<Utc>::from_timestamp(1_540_512_900, 0)
    );
    assert_eq!(table.table_class, TableClass::StandardIa);
    assert_eq!(
        table.table_class_updated,
        DateTime::<Utc>::from_timestamp(1_540_000_000, 0)
    );
}
