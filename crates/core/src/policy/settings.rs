//! The vocabulary of a table's settings, shared by the policy (what a table should have), the
//! observation (what DescribeTable says it has) and the change requests between them: key
//! schema, capacity and billing, on-demand limits, table class, stream and encryption.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Primary key of every table the policy creates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySchema {
    pub partition: KeyAttribute,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<KeyAttribute>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyAttribute {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: AttributeKind,
}

/// DynamoDB scalar key types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttributeKind {
    S,
    N,
    B,
}

/// A key schema as written in the policy: like [`KeySchema`], but a key attribute's `type` is
/// any string, checked by validation, so a bad type is named with every other bad field.
/// Serializes exactly as the [`KeySchema`] it validates to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySchemaDocument {
    pub partition: KeyAttributeDocument,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<KeyAttributeDocument>,
}

/// A key attribute as written: `{ name = "pk", type = "N" }`, `type` one of `S`, `N`, `B`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyAttributeDocument {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
}

impl KeyAttributeDocument {
    /// The attribute's type, or what to change (for the field `{attribute}.type`).
    pub fn attribute_kind(&self) -> Result<AttributeKind, String> {
        match self.kind.as_str() {
            "S" => Ok(AttributeKind::S),
            "N" => Ok(AttributeKind::N),
            "B" => Ok(AttributeKind::B),
            other => Err(format!(
                "unknown key type {other:?}: use S, N or B (string, number or binary, in capitals)"
            )),
        }
    }

    /// The attribute, when its type is valid.
    pub fn attribute(&self) -> Option<KeyAttribute> {
        Some(KeyAttribute {
            name: self.name.clone(),
            kind: self.attribute_kind().ok()?,
        })
    }
}

impl From<&KeyAttribute> for KeyAttributeDocument {
    fn from(attribute: &KeyAttribute) -> Self {
        KeyAttributeDocument {
            name: attribute.name.clone(),
            kind: format!("{:?}", attribute.kind),
        }
    }
}

impl From<&KeySchema> for KeySchemaDocument {
    fn from(key: &KeySchema) -> Self {
        KeySchemaDocument {
            partition: KeyAttributeDocument::from(&key.partition),
            sort: key.sort.as_ref().map(KeyAttributeDocument::from),
        }
    }
}

/// Provisioned read and write capacity units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capacity {
    pub read: i64,
    pub write: i64,
}

impl fmt::Display for Capacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} RCU / {} WCU", self.read, self.write)
    }
}

/// `pk (N), sk (N)`: a key schema as messages show it.
impl fmt::Display for KeySchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let attribute = |a: &KeyAttribute| format!("{} ({:?})", a.name, a.kind);
        match &self.sort {
            Some(sort) => write!(f, "{}, {}", attribute(&self.partition), attribute(sort)),
            None => f.write_str(&attribute(&self.partition)),
        }
    }
}

/// How a table pays for throughput: the policy's wish for a phase, or what DescribeTable says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Billing {
    Provisioned(Capacity),
    OnDemand(OnDemandLimits),
}

/// On-demand maximum throughput (request units per second); `None` is DynamoDB's default, no
/// table-level maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OnDemandLimits {
    pub max_read: Option<i64>,
    pub max_write: Option<i64>,
}

impl fmt::Display for Billing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Billing::Provisioned(capacity) => capacity.fmt(f),
            Billing::OnDemand(OnDemandLimits {
                max_read: None,
                max_write: None,
            }) => f.write_str("on-demand"),
            Billing::OnDemand(limits) => {
                let max = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
                write!(
                    f,
                    "on-demand (max {} / {})",
                    max(limits.max_read),
                    max(limits.max_write)
                )
            }
        }
    }
}

/// DynamoDB's table classes: Standard-IA stores for less and charges more per request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TableClass {
    #[default]
    Standard,
    StandardIa,
}

impl TableClass {
    /// The policy's spelling: `standard` or `standard_ia`.
    pub(crate) fn from_policy_str(value: &str) -> Result<TableClass, String> {
        match value {
            "standard" => Ok(TableClass::Standard),
            "standard_ia" => Ok(TableClass::StandardIa),
            other => Err(format!(
                "unknown table class {other:?}: use \"standard\" or \"standard_ia\""
            )),
        }
    }

    pub(crate) fn as_policy_str(self) -> &'static str {
        match self {
            TableClass::Standard => "standard",
            TableClass::StandardIa => "standard_ia",
        }
    }
}

impl fmt::Display for TableClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_policy_str())
    }
}

/// What DynamoDB Streams records for each item change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamView {
    KeysOnly,
    NewImage,
    OldImage,
    NewAndOldImages,
}

impl StreamView {
    pub const ALL: [StreamView; 4] = [
        StreamView::KeysOnly,
        StreamView::NewImage,
        StreamView::OldImage,
        StreamView::NewAndOldImages,
    ];

    pub(crate) fn as_policy_str(self) -> &'static str {
        match self {
            StreamView::KeysOnly => "keys_only",
            StreamView::NewImage => "new_image",
            StreamView::OldImage => "old_image",
            StreamView::NewAndOldImages => "new_and_old_images",
        }
    }

    /// DynamoDB's spelling, `NEW_AND_OLD_IMAGES`.
    pub fn as_wire_str(self) -> &'static str {
        match self {
            StreamView::KeysOnly => "KEYS_ONLY",
            StreamView::NewImage => "NEW_IMAGE",
            StreamView::OldImage => "OLD_IMAGE",
            StreamView::NewAndOldImages => "NEW_AND_OLD_IMAGES",
        }
    }

    pub fn from_wire(value: &str) -> Option<StreamView> {
        StreamView::ALL.into_iter().find(|v| v.as_wire_str() == value)
    }
}

/// The stream a table should have: `None` means no stream.
pub type StreamSetting = Option<StreamView>;

/// Server-side encryption at rest. DynamoDB always encrypts; this picks whose key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "key", rename_all = "snake_case")]
pub enum Encryption {
    /// DynamoDB's own key, free (the default).
    AwsOwned,
    /// The account's AWS managed key `alias/aws/dynamodb` (KMS charges apply).
    AwsManaged,
    /// A customer managed KMS key: its ARN, ID or alias.
    CustomerManaged { kms_key: String },
}

impl fmt::Display for Encryption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Encryption::AwsOwned => f.write_str("aws_owned"),
            Encryption::AwsManaged => f.write_str("aws_managed"),
            Encryption::CustomerManaged { kms_key } => write!(f, "customer_managed ({kms_key})"),
        }
    }
}

/// Which attributes an index copies from the table besides the keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Projection {
    KeysOnly,
    All,
    /// The keys and these attributes.
    Include(Vec<String>),
}

impl fmt::Display for Projection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Projection::KeysOnly => f.write_str("keys_only"),
            Projection::All => f.write_str("all"),
            Projection::Include(attributes) => write!(f, "include {}", attributes.join(", ")),
        }
    }
}

/// A global secondary index the policy's tables carry: its own key and throughput.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GlobalIndex {
    pub name: String,
    pub key: KeySchema,
    pub projection: Projection,
}

/// A local secondary index: the table's partition key with another sort key. DynamoDB creates
/// these with the table only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LocalIndex {
    pub name: String,
    pub sort: KeyAttribute,
    pub projection: Projection,
}
