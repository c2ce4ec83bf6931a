//! The SDK's key-schema pieces from plain names: what a test needs to create a table or add an
//! index by hand, without repeating the SDK's builders.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, KeySchemaElement, KeyType, Projection, ProjectionType, ScalarAttributeType,
};

/// The definition of the attribute `name` of type `kind`.
pub(crate) fn attribute(name: &str, kind: ScalarAttributeType) -> AttributeDefinition {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(kind)
        .build()
        .expect("name and type")
}

/// The key element `name`, as the partition (`KeyType::Hash`) or the sort (`KeyType::Range`) key.
pub(crate) fn key_element(name: &str, kind: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .expect("name and key type")
}

/// An index's projection of the keys only.
pub(crate) fn keys_only() -> Projection {
    Projection::builder()
        .projection_type(ProjectionType::KeysOnly)
        .build()
}
