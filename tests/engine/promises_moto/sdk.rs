//! The SDK's side: clients to moto through the testkit proxy, and the conversions between
//! the SDK's shapes and the fake's, both ways.

use super::*;
use crate::support::schema::{attribute, key_element};

pub(super) fn scaling_client(endpoint: &str) -> aas::Client {
    aas::Client::from_conf(
        aas::Config::builder()
            .behavior_version(aas::config::BehaviorVersion::latest())
            .region(aas::config::Region::new(testkit::REGION))
            .credentials_provider(aas::config::Credentials::new(
                testkit::ACCESS_KEY_ID,
                testkit::SECRET_ACCESS_KEY,
                None,
                None,
                "test",
            ))
            .endpoint_url(endpoint)
            .build(),
    )
}

pub(super) fn table_client(endpoint: &str) -> ddb::Client {
    ddb::Client::from_conf(testkit::sdk_config(endpoint).build())
}

/// A proxy in front of moto that behaves as AWS does where moto does not: deregistering a
/// scalable target deletes its policies; with `role`, that family's IAM role.
pub(super) fn aws_proxy(moto: &LocalDynamo, role: Option<&str>) -> Proxy {
    let proxy = Proxy::start(moto.endpoint());
    proxy.deregister_deletes_policies();
    if let Some(prefix) = role {
        proxy.family_role(prefix);
    }
    proxy
}

pub(super) async fn control(proxy: &Proxy) -> DynamoDb {
    DynamoDb::local(table_client(&proxy.endpoint()))
        .with_autoscaling(scaling_client(&proxy.endpoint()))
        .with_archives(crate::support::aws_clients(&proxy.endpoint()).await.s3)
}

pub(super) fn who(name: &str) -> Maker {
    Maker::Foreign(name.to_string())
}

pub(super) fn sdk_error<E: aws_sdk_dynamodb::error::ProvideErrorMetadata>(e: E) -> String {
    format!("{}: {}", e.code().unwrap_or("?"), e.message().unwrap_or("?"))
}

pub(super) fn sdk_dimension(dimension: ScalableDimension) -> aas::types::ScalableDimension {
    aas::types::ScalableDimension::from(dimension.as_wire_str())
}

pub(super) fn attribute_kind(kind: &ddb::types::ScalarAttributeType) -> AttributeKind {
    match kind {
        ddb::types::ScalarAttributeType::N => AttributeKind::N,
        ddb::types::ScalarAttributeType::B => AttributeKind::B,
        _ => AttributeKind::S,
    }
}

pub(super) fn scalar(kind: AttributeKind) -> ddb::types::ScalarAttributeType {
    match kind {
        AttributeKind::S => ddb::types::ScalarAttributeType::S,
        AttributeKind::N => ddb::types::ScalarAttributeType::N,
        AttributeKind::B => ddb::types::ScalarAttributeType::B,
    }
}

/// A key schema read back, with the attributes' types from the table's definitions.
pub(super) fn key_of(
    elements: &[ddb::types::KeySchemaElement],
    definitions: &[ddb::types::AttributeDefinition],
) -> KeySchema {
    let attribute = |element: &ddb::types::KeySchemaElement| KeyAttribute {
        name: element.attribute_name().to_string(),
        kind: attribute_kind(
            definitions
                .iter()
                .find(|d| d.attribute_name() == element.attribute_name())
                .map(|d| d.attribute_type())
                .unwrap_or_else(|| {
                    panic!(
                        "moto describes the key attribute {} without its definition",
                        element.attribute_name()
                    )
                }),
        ),
    };
    let partition = elements
        .iter()
        .find(|e| *e.key_type() == ddb::types::KeyType::Hash)
        .map(attribute)
        .expect("a partition key");
    let sort = elements
        .iter()
        .find(|e| *e.key_type() == ddb::types::KeyType::Range)
        .map(attribute);
    KeySchema { partition, sort }
}

pub(super) fn projection_of(projection: Option<&ddb::types::Projection>) -> Projection {
    match projection.and_then(|p| p.projection_type()) {
        Some(ddb::types::ProjectionType::KeysOnly) => Projection::KeysOnly,
        Some(ddb::types::ProjectionType::Include) => Projection::Include(
            projection
                .map(|p| p.non_key_attributes().to_vec())
                .unwrap_or_default(),
        ),
        _ => Projection::All,
    }
}

pub(super) fn provisioned_of(throughput: Option<&ddb::types::ProvisionedThroughputDescription>) -> Billing {
    let throughput = throughput.expect("provisioned throughput");
    Billing::Provisioned(Capacity {
        read: throughput.read_capacity_units().unwrap_or_default(),
        write: throughput.write_capacity_units().unwrap_or_default(),
    })
}

pub(super) fn on_demand_of(limits: Option<&ddb::types::OnDemandThroughput>) -> Billing {
    Billing::OnDemand(OnDemandLimits {
        max_read: limits.and_then(|l| l.max_read_request_units()).filter(|n| *n > 0),
        max_write: limits
            .and_then(|l| l.max_write_request_units())
            .filter(|n| *n > 0),
    })
}

pub(super) fn sdk_key(key: &KeySchema) -> Vec<ddb::types::KeySchemaElement> {
    let mut elements = vec![key_element(&key.partition.name, ddb::types::KeyType::Hash)];
    elements.extend(
        key.sort
            .iter()
            .map(|s| key_element(&s.name, ddb::types::KeyType::Range)),
    );
    elements
}

pub(super) fn sdk_projection(projection: &Projection) -> ddb::types::Projection {
    let builder = ddb::types::Projection::builder();
    match projection {
        Projection::All => builder.projection_type(ddb::types::ProjectionType::All),
        Projection::KeysOnly => builder.projection_type(ddb::types::ProjectionType::KeysOnly),
        Projection::Include(attributes) => builder
            .projection_type(ddb::types::ProjectionType::Include)
            .set_non_key_attributes(Some(attributes.clone())),
    }
    .build()
}

pub(super) fn sdk_throughput(capacity: Capacity) -> ddb::types::ProvisionedThroughput {
    ddb::types::ProvisionedThroughput::builder()
        .read_capacity_units(capacity.read)
        .write_capacity_units(capacity.write)
        .build()
        .expect("both units")
}

pub(super) fn definitions<'a>(
    keys: impl IntoIterator<Item = &'a KeyAttribute>,
) -> Vec<ddb::types::AttributeDefinition> {
    let mut seen: BTreeMap<&str, AttributeKind> = BTreeMap::new();
    for attribute in keys {
        seen.entry(&attribute.name).or_insert(attribute.kind);
    }
    seen.into_iter()
        .map(|(name, kind)| attribute(name, scalar(kind)))
        .collect()
}

/// A warm throughput description as the fake models it: moto reports every table's and index's
/// (ACTIVE at once), the dimensions AWS's starting values when left out.
pub(super) fn warm_of(
    read: Option<i64>,
    write: Option<i64>,
    status: Option<&str>,
    now: DateTime<Utc>,
) -> Warm {
    Warm {
        units: WarmThroughput {
            read: read.unwrap_or(0),
            write: write.unwrap_or(0),
        },
        ready_at: (status.is_some_and(|s| s != "ACTIVE")).then_some(now),
    }
}

pub(super) fn key_attributes(key: &KeySchema) -> Vec<&KeyAttribute> {
    std::iter::once(&key.partition).chain(key.sort.as_ref()).collect()
}
