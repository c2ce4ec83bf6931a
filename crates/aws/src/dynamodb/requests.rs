//! Our change requests in the SDK's types: key schemas, throughput, indexes, tags, streams,
//! encryption.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, GlobalSecondaryIndex, GlobalSecondaryIndexUpdate, KeySchemaElement, KeyType,
    OnDemandThroughput, Projection as SdkProjection, ProjectionType, ProvisionedThroughput,
    ScalarAttributeType, SseSpecification, SseType, StreamSpecification, StreamViewType,
    TableClass as SdkTableClass, Tag, UpdateGlobalSecondaryIndexAction, WarmThroughput as SdkWarmThroughput,
};

use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::{AttributeKind, Capacity, KeyAttribute, KeySchema, Projection};
use ddb_rollover::policy::{Billing, OnDemandLimits, TableClass};
use ddb_rollover::policy::{Encryption, StreamSetting};
use ddb_rollover::table::{IndexCapacityChange, IndexSpec, TableSpec, WarmPart};

/// The table name in a table ARN (`...:table/NAME`), for error reports.
pub(super) fn table_name_of(arn: &str) -> &str {
    arn.rsplit_once(":table/").map_or(arn, |(_, name)| name)
}

pub(super) fn tags(tags: &BTreeMap<String, String>) -> Vec<Tag> {
    tags.iter()
        .map(|(key, value)| {
            Tag::builder()
                .key(key)
                .value(value)
                .build()
                .expect("both required fields are set")
        })
        .collect()
}

pub(super) fn stream_specification(stream: StreamSetting) -> StreamSpecification {
    StreamSpecification::builder()
        .stream_enabled(stream.is_some())
        .set_stream_view_type(stream.map(|view| StreamViewType::from(view.as_wire_str())))
        .build()
        .expect("the required field is set")
}

pub(super) fn sse_specification(encryption: &Encryption) -> SseSpecification {
    match encryption {
        Encryption::AwsOwned => SseSpecification::builder().enabled(false).build(),
        Encryption::AwsManaged => SseSpecification::builder()
            .enabled(true)
            .sse_type(SseType::Kms)
            .build(),
        Encryption::CustomerManaged { kms_key } => SseSpecification::builder()
            .enabled(true)
            .sse_type(SseType::Kms)
            .kms_master_key_id(kms_key)
            .build(),
    }
}

pub(super) fn sdk_table_class(class: TableClass) -> SdkTableClass {
    match class {
        TableClass::Standard => SdkTableClass::Standard,
        TableClass::StandardIa => SdkTableClass::StandardInfrequentAccess,
    }
}

/// The maximum on-demand throughput to send at creation, if the phase sets one.
pub(super) fn on_demand_throughput(limits: OnDemandLimits) -> Option<OnDemandThroughput> {
    (limits.max_read.is_some() || limits.max_write.is_some()).then(|| {
        OnDemandThroughput::builder()
            .set_max_read_request_units(limits.max_read)
            .set_max_write_request_units(limits.max_write)
            .build()
    })
}

pub(super) fn throughput(capacity: Capacity) -> ProvisionedThroughput {
    ProvisionedThroughput::builder()
        .read_capacity_units(capacity.read)
        .write_capacity_units(capacity.write)
        .build()
        .expect("both required fields are set")
}

pub(super) fn attribute(key: &KeyAttribute) -> AttributeDefinition {
    let kind = match key.kind {
        AttributeKind::S => ScalarAttributeType::S,
        AttributeKind::N => ScalarAttributeType::N,
        AttributeKind::B => ScalarAttributeType::B,
    };
    AttributeDefinition::builder()
        .attribute_name(&key.name)
        .attribute_type(kind)
        .build()
        .expect("both required fields are set")
}

/// A key schema as DynamoDB takes it: the partition (HASH) key, then the sort (RANGE) key.
/// One definition per attribute used in any key, the table's or an index's.
pub(super) fn attribute_definitions(spec: &TableSpec) -> Vec<AttributeDefinition> {
    let mut attributes: BTreeMap<&str, &KeyAttribute> = BTreeMap::new();
    let keys = std::iter::once(&spec.key)
        .chain(spec.global_indexes.iter().map(|i| &i.index.key))
        .flat_map(|key| std::iter::once(&key.partition).chain(&key.sort))
        .chain(spec.local_indexes.iter().map(|i| &i.sort));
    for key in keys {
        attributes.entry(&key.name).or_insert(key);
    }
    attributes.values().map(|key| attribute(key)).collect()
}

pub(super) fn key_elements(key: &KeySchema) -> Vec<KeySchemaElement> {
    std::iter::once(key_element(&key.partition, KeyType::Hash))
        .chain(key.sort.as_ref().map(|sort| key_element(sort, KeyType::Range)))
        .collect()
}

pub(super) fn projection(projection: &Projection) -> SdkProjection {
    match projection {
        Projection::KeysOnly => SdkProjection::builder().projection_type(ProjectionType::KeysOnly),
        Projection::All => SdkProjection::builder().projection_type(ProjectionType::All),
        Projection::Include(attributes) => SdkProjection::builder()
            .projection_type(ProjectionType::Include)
            .set_non_key_attributes(Some(attributes.clone())),
    }
    .build()
}

/// Warm throughput as CreateTable and UpdateTable take it: both dimensions, always.
pub(super) fn warm_throughput(warm: WarmThroughput) -> SdkWarmThroughput {
    SdkWarmThroughput::builder()
        .read_units_per_second(warm.read)
        .write_units_per_second(warm.write)
        .build()
}

/// One index's warm throughput raise in an UpdateTable.
pub(super) fn index_warm_update(index: &str, part: &WarmPart) -> GlobalSecondaryIndexUpdate {
    let update = UpdateGlobalSecondaryIndexAction::builder()
        .index_name(index)
        .warm_throughput(warm_throughput(part.to))
        .build()
        .expect("the required field is set");
    GlobalSecondaryIndexUpdate::builder().update(update).build()
}

/// A global index as CreateTable makes it, with the table's warm throughput (one value serves
/// the table and every index).
pub(super) fn global_index(spec: &IndexSpec, warm: Option<WarmThroughput>) -> GlobalSecondaryIndex {
    let index = GlobalSecondaryIndex::builder()
        .index_name(&spec.index.name)
        .set_key_schema(Some(key_elements(&spec.index.key)))
        .projection(projection(&spec.index.projection))
        .set_warm_throughput(warm.map(warm_throughput));
    match spec.billing {
        Billing::Provisioned(capacity) => index.provisioned_throughput(throughput(capacity)),
        Billing::OnDemand(limits) => index.set_on_demand_throughput(on_demand_throughput(limits)),
    }
    .build()
    .expect("the required fields are set")
}

/// One index's throughput in an UpdateTable; on-demand maximums the phase no longer sets are
/// removed with -1, as for the table.
pub(super) fn index_update(change: &IndexCapacityChange) -> GlobalSecondaryIndexUpdate {
    let update = UpdateGlobalSecondaryIndexAction::builder().index_name(&change.index);
    let update = match change.to {
        Billing::Provisioned(capacity) => update.provisioned_throughput(throughput(capacity)),
        Billing::OnDemand(limits) => update.on_demand_throughput(
            OnDemandThroughput::builder()
                .max_read_request_units(limits.max_read.unwrap_or(-1))
                .max_write_request_units(limits.max_write.unwrap_or(-1))
                .build(),
        ),
    };
    GlobalSecondaryIndexUpdate::builder()
        .update(update.build().expect("the required field is set"))
        .build()
}

pub(super) fn key_element(key: &KeyAttribute, key_type: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(&key.name)
        .key_type(key_type)
        .build()
        .expect("both required fields are set")
}
