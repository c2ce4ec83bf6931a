//! The SDK adapter's warm throughput against aws-smithy-mocks: what CreateTable and UpdateTable
//! send (the table's `WarmThroughput` and each index's), and how DescribeTable's descriptions map
//! back, status included.

use crate::common::mocks::{adapter, describes};
use aws_sdk_dynamodb::operation::create_table::{CreateTableInput, CreateTableOutput};
use aws_sdk_dynamodb::operation::update_table::{UpdateTableInput, UpdateTableOutput};
use aws_sdk_dynamodb::types::{
    GlobalSecondaryIndexDescription, GlobalSecondaryIndexWarmThroughputDescription, IndexStatus,
    TableStatus as SdkTableStatus, TableWarmThroughputDescription, WarmThroughput as SdkWarm,
};
use aws_sdk_dynamodb::Client;
use aws_smithy_mocks::{mock, RuleMode};
use ddb_rollover::control::Tables;
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::{Billing, GlobalIndex, KeyAttribute, KeySchema, Projection};
use ddb_rollover::table::{IndexSpec, SettingChange, TableSetting, TableSpec, WarmPart, WarmRaise};
use ddb_rollover::table::{ObservedWarm, TableStatus};
use ddb_rollover::Policy;

const WANT: WarmThroughput = WarmThroughput {
    read: 40_000,
    write: 20_000,
};

fn units(warm: Option<&SdkWarm>) -> Option<(Option<i64>, Option<i64>)> {
    warm.map(|w| (w.read_units_per_second(), w.write_units_per_second()))
}

fn spec() -> TableSpec {
    let on_demand = Billing::OnDemand(Default::default());
    TableSpec {
        name: "t".into(),
        key: Policy::default().key,
        billing: on_demand,
        global_indexes: vec![IndexSpec {
            index: GlobalIndex {
                name: "by_device".into(),
                key: KeySchema {
                    partition: KeyAttribute {
                        name: "device".into(),
                        kind: ddb_rollover::policy::AttributeKind::S,
                    },
                    sort: None,
                },
                projection: Projection::All,
            },
            billing: on_demand,
        }],
        local_indexes: Vec::new(),
        table_class: None,
        deletion_protection: false,
        stream: None,
        encryption: None,
        tags: Default::default(),
        warm: Some(WANT),
    }
}

#[tokio::test]
async fn create_table_sends_the_warm_throughput_for_the_table_and_each_index() {
    let both = Some((Some(40_000), Some(20_000)));
    let rule = mock!(Client::create_table)
        .match_requests(move |r: &CreateTableInput| {
            units(r.warm_throughput()) == both
                && r.global_secondary_indexes().len() == 1
                && units(r.global_secondary_indexes()[0].warm_throughput()) == both
        })
        .then_output(|| CreateTableOutput::builder().build());
    let plain = mock!(Client::create_table)
        .match_requests(|r: &CreateTableInput| {
            r.warm_throughput().is_none()
                && r.global_secondary_indexes()
                    .iter()
                    .all(|i| i.warm_throughput().is_none())
        })
        .then_output(|| CreateTableOutput::builder().build());
    let control = adapter(RuleMode::Sequential, &[&rule, &plain]);
    control.create_table(&spec()).await.unwrap();
    control
        .create_table(&TableSpec { warm: None, ..spec() })
        .await
        .unwrap();
    assert_eq!((rule.num_calls(), plain.num_calls()), (1, 1));
}

#[tokio::test]
async fn a_raise_sends_only_the_warm_throughput_of_the_parts_it_raises() {
    let raise = |parts: Vec<WarmPart>| SettingChange {
        name: "t".into(),
        setting: TableSetting::Warm(WarmRaise { parts }),
    };
    let part = |index: Option<&str>, to: WarmThroughput| WarmPart {
        index: index.map(str::to_string),
        from: WarmThroughput::ON_DEMAND,
        to,
    };
    let nothing_else = |r: &UpdateTableInput| {
        r.provisioned_throughput().is_none()
            && r.billing_mode().is_none()
            && r.on_demand_throughput().is_none()
            && r.attribute_definitions().is_empty()
            && r.stream_specification().is_none()
    };
    let index_update = |r: &UpdateTableInput| {
        r.global_secondary_index_updates()
            .iter()
            .map(|u| {
                let update = u.update().expect("an index update");
                assert!(update.provisioned_throughput().is_none() && update.on_demand_throughput().is_none());
                (update.index_name().to_string(), units(update.warm_throughput()))
            })
            .collect::<Vec<_>>()
    };
    let both = mock!(Client::update_table)
        .match_requests(move |r| {
            nothing_else(r)
                && units(r.warm_throughput()) == Some((Some(40_000), Some(20_000)))
                && index_update(r) == [("by_device".to_string(), Some((Some(40_000), Some(20_000))))]
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let index_only = mock!(Client::update_table)
        .match_requests(move |r| {
            nothing_else(r)
                && r.warm_throughput().is_none()
                && index_update(r) == [("by_device".to_string(), Some((Some(50_000), Some(20_000))))]
        })
        .then_output(|| UpdateTableOutput::builder().build());
    let control = adapter(RuleMode::Sequential, &[&both, &index_only]);
    control
        .configure(&raise(vec![part(None, WANT), part(Some("by_device"), WANT)]))
        .await
        .unwrap();
    let more = WarmThroughput {
        read: 50_000,
        write: 20_000,
    };
    control
        .configure(&raise(vec![part(Some("by_device"), more)]))
        .await
        .unwrap();
    assert_eq!((both.num_calls(), index_only.num_calls()), (1, 1));
}

#[tokio::test]
async fn describe_table_reads_the_warm_throughput_and_its_status() {
    let reported = describes("t", |t| {
        t.table_status(SdkTableStatus::Active)
            .warm_throughput(
                TableWarmThroughputDescription::builder()
                    .read_units_per_second(40_000)
                    .write_units_per_second(20_000)
                    .status(SdkTableStatus::Updating)
                    .build(),
            )
            .global_secondary_indexes(
                GlobalSecondaryIndexDescription::builder()
                    .index_name("by_device")
                    .warm_throughput(
                        GlobalSecondaryIndexWarmThroughputDescription::builder()
                            .read_units_per_second(12_000)
                            .write_units_per_second(4_000)
                            .status(IndexStatus::Active)
                            .build(),
                    )
                    .build(),
            )
    });
    let silent = describes("u", |t| {
        t.table_status(SdkTableStatus::Active).global_secondary_indexes(
            GlobalSecondaryIndexDescription::builder()
                .index_name("by_device")
                .build(),
        )
    });
    let control = adapter(RuleMode::Sequential, &[&reported, &silent]);
    let t = control.describe_table("t").await.unwrap().unwrap();
    assert_eq!(
        t.warm,
        Some(ObservedWarm {
            units: WANT,
            status: TableStatus::Updating
        })
    );
    assert_eq!(
        t.global_indexes[0].warm,
        Some(ObservedWarm {
            units: WarmThroughput::ON_DEMAND,
            status: TableStatus::Active
        })
    );
    // dynalite and DynamoDB Local report none: nothing is assumed.
    let u = control.describe_table("u").await.unwrap().unwrap();
    assert_eq!((u.warm, u.global_indexes[0].warm.clone()), (None, None));
}
