//! DescribeTable's answer as an [`ObservedTable`]: the facts decisions depend on.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndexDescription, KeySchemaElement, KeyType,
    OnDemandThroughput, Projection as SdkProjection, ProjectionType, ProvisionedThroughputDescription,
    ScalarAttributeType, SseStatus, TableClass as SdkTableClass, TableDescription,
};

use ddb_rollover::policy::StreamView;
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::{AttributeKind, Capacity, KeyAttribute, KeySchema, Projection};
use ddb_rollover::policy::{Billing, OnDemandLimits, TableClass};
use ddb_rollover::table::{
    ObservedEncryption, ObservedIndex, ObservedLocalIndex, ObservedTable, ObservedWarm, TableStatus,
};

pub(super) fn observed_table(name: &str, table: &TableDescription) -> ObservedTable {
    let throughput = table.provisioned_throughput();
    let billing_summary = table.billing_mode_summary();
    let on_demand = billing_summary
        .and_then(|summary| summary.billing_mode())
        .is_some_and(|mode| *mode == BillingMode::PayPerRequest);
    let billing = billing_of(on_demand, throughput, table.on_demand_throughput());
    ObservedTable {
        name: table.table_name().unwrap_or(name).to_string(),
        status: TableStatus::from_wire(table.table_status().map(|s| s.as_str()).unwrap_or("UNKNOWN")),
        key: key_schema(table.key_schema(), table.attribute_definitions()),
        billing,
        decreases_today: decreases_today(throughput),
        last_decrease: throughput.and_then(|t| t.last_decrease_date_time()).and_then(utc),
        last_switch_to_on_demand: billing_summary
            .and_then(|s| s.last_update_to_pay_per_request_date_time())
            .and_then(utc),
        table_class: match table.table_class_summary().and_then(|c| c.table_class()) {
            Some(SdkTableClass::StandardInfrequentAccess) => TableClass::StandardIa,
            _ => TableClass::Standard,
        },
        table_class_updated: table
            .table_class_summary()
            .and_then(|c| c.last_update_date_time())
            .and_then(utc),
        arn: table.table_arn().map(str::to_string),
        created: table.creation_date_time().and_then(utc),
        table_id: table.table_id().map(str::to_string),
        deletion_protection: table.deletion_protection_enabled().unwrap_or(false),
        stream: table
            .stream_specification()
            .filter(|s| s.stream_enabled())
            .and_then(|s| s.stream_view_type())
            .and_then(|v| StreamView::from_wire(v.as_str())),
        stream_arn: table.latest_stream_arn().map(str::to_string),
        global_indexes: table
            .global_secondary_indexes()
            .iter()
            .map(|index| observed_index(index, on_demand, table.attribute_definitions()))
            .collect(),
        local_indexes: table
            .local_secondary_indexes()
            .iter()
            .map(|index| ObservedLocalIndex {
                name: index.index_name().unwrap_or_default().to_string(),
                key: key_schema(index.key_schema(), table.attribute_definitions()),
                projection: index.projection().and_then(observed_projection),
            })
            .collect(),
        warm: table.warm_throughput().map(|w| {
            observed_warm(
                w.read_units_per_second(),
                w.write_units_per_second(),
                w.status().map(|s| s.as_str()),
            )
        }),
        encryption: match table.sse_description() {
            Some(sse)
                if matches!(
                    sse.status(),
                    Some(SseStatus::Enabled | SseStatus::Enabling | SseStatus::Updating)
                ) =>
            {
                ObservedEncryption::Kms {
                    key_arn: sse.kms_master_key_arn().map(str::to_string),
                }
            }
            _ => ObservedEncryption::AwsOwned,
        },
        // The other calls' reads come later, where the policy needs them.
        ..ObservedTable::active(name, billing)
    }
    .described_only()
}

/// A table's or an index's throughput, in the table's billing mode.
pub(super) fn billing_of(
    on_demand: bool,
    throughput: Option<&ProvisionedThroughputDescription>,
    limits: Option<&OnDemandThroughput>,
) -> Billing {
    if on_demand {
        // DynamoDB reports -1 (or nothing) for "no maximum".
        let max = |units: Option<i64>| units.filter(|u| *u > 0);
        Billing::OnDemand(OnDemandLimits {
            max_read: max(limits.and_then(|l| l.max_read_request_units())),
            max_write: max(limits.and_then(|l| l.max_write_request_units())),
        })
    } else {
        Billing::Provisioned(Capacity {
            read: throughput.and_then(|t| t.read_capacity_units()).unwrap_or(0),
            write: throughput.and_then(|t| t.write_capacity_units()).unwrap_or(0),
        })
    }
}

pub(super) fn decreases_today(throughput: Option<&ProvisionedThroughputDescription>) -> u32 {
    throughput
        .and_then(|t| t.number_of_decreases_today())
        .map_or(0, |n| n.clamp(0, i64::from(u32::MAX)) as u32)
}

pub(super) fn observed_index(
    index: &GlobalSecondaryIndexDescription,
    on_demand: bool,
    definitions: &[AttributeDefinition],
) -> ObservedIndex {
    let throughput = index.provisioned_throughput();
    ObservedIndex {
        name: index.index_name().unwrap_or_default().to_string(),
        status: TableStatus::from_wire(index.index_status().map_or("ACTIVE", |s| s.as_str())),
        backfilling: index.backfilling().unwrap_or(false),
        billing: billing_of(on_demand, throughput, index.on_demand_throughput()),
        decreases_today: decreases_today(throughput),
        last_decrease: throughput.and_then(|t| t.last_decrease_date_time()).and_then(utc),
        key: key_schema(index.key_schema(), definitions),
        projection: index.projection().and_then(observed_projection),
        warm: index.warm_throughput().map(|w| {
            observed_warm(
                w.read_units_per_second(),
                w.write_units_per_second(),
                w.status().map(|s| s.as_str()),
            )
        }),
    }
}

/// A WarmThroughput description (the table's or an index's). A dimension it leaves out counts
/// as 0, below anything a phase asks, so a raise sets it; no status counts as ACTIVE, as for an
/// index's own status.
fn observed_warm(read: Option<i64>, write: Option<i64>, status: Option<&str>) -> ObservedWarm {
    ObservedWarm {
        units: WarmThroughput {
            read: read.unwrap_or(0),
            write: write.unwrap_or(0),
        },
        status: TableStatus::from_wire(status.unwrap_or("ACTIVE")),
    }
}

/// An index's projection as DescribeTable reports it; `None` for a type this version does not
/// know (then the index is not provably the policy's).
pub(super) fn observed_projection(projection: &SdkProjection) -> Option<Projection> {
    match projection.projection_type()? {
        ProjectionType::All => Some(Projection::All),
        ProjectionType::KeysOnly => Some(Projection::KeysOnly),
        ProjectionType::Include => Some(Projection::Include(projection.non_key_attributes().to_vec())),
        _ => None,
    }
}

/// A table's or an index's key with its attribute types (from the table's AttributeDefinitions);
/// `None` when the description lacks it.
pub(super) fn key_schema(
    elements: &[KeySchemaElement],
    definitions: &[AttributeDefinition],
) -> Option<KeySchema> {
    let attribute = |key_type: KeyType| -> Option<KeyAttribute> {
        let name = elements
            .iter()
            .find(|k| *k.key_type() == key_type)?
            .attribute_name();
        let kind = match definitions
            .iter()
            .find(|a| a.attribute_name() == name)?
            .attribute_type()
        {
            ScalarAttributeType::S => AttributeKind::S,
            ScalarAttributeType::N => AttributeKind::N,
            ScalarAttributeType::B => AttributeKind::B,
            _ => return None,
        };
        Some(KeyAttribute {
            name: name.to_string(),
            kind,
        })
    };
    let partition = attribute(KeyType::Hash)?;
    let sort = elements
        .iter()
        .any(|k| *k.key_type() == KeyType::Range)
        .then(|| attribute(KeyType::Range));
    Some(KeySchema {
        partition,
        sort: match sort {
            None => None,
            Some(Some(sort)) => Some(sort),
            // A sort key whose type is not described: the key is unknown.
            Some(None) => return None,
        },
    })
}

pub(super) use crate::utc;
