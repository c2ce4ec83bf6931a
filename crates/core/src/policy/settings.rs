//! The vocabulary of a table's settings, shared by the policy (what a table should have), the
//! observation (what DescribeTable says it has) and the change requests between them: key
//! schema, capacity and billing, on-demand limits, table class, stream and encryption.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Primary key of every table the policy creates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySchema {
    /// The partition (hash) key.
    pub partition: KeyAttribute,
    /// The sort (range) key, if the table has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<KeyAttribute>,
}

/// A key attribute: its name and scalar type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyAttribute {
    /// The attribute's name.
    pub name: String,
    /// The attribute's type, `type` in the policy.
    #[serde(rename = "type")]
    pub kind: AttributeKind,
}

/// DynamoDB scalar key types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttributeKind {
    /// String.
    S,
    /// Number.
    N,
    /// Binary.
    B,
}

/// A key schema as written in the policy: like [`KeySchema`], but a key attribute's `type` is
/// any string, checked by validation, so a bad type is named with every other bad field.
/// Serializes exactly as the [`KeySchema`] it validates to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySchemaDocument {
    /// The partition (hash) key.
    pub partition: KeyAttributeDocument,
    /// The sort (range) key, if the table has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<KeyAttributeDocument>,
}

/// A key attribute as written: `{ name = "pk", type = "N" }`, `type` one of `S`, `N`, `B`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyAttributeDocument {
    /// The attribute's name.
    pub name: String,
    /// `S`, `N` or `B` when valid; validation names any other value.
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
    /// Read capacity units.
    pub read: i64,
    /// Write capacity units.
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
    /// Provisioned read and write capacity units.
    Provisioned(Capacity),
    /// On-demand (pay per request), with optional maximum throughput.
    OnDemand(OnDemandLimits),
}

/// On-demand maximum throughput (request units per second); `None` is DynamoDB's default, no
/// table-level maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OnDemandLimits {
    /// Most read request units per second.
    pub max_read: Option<i64>,
    /// Most write request units per second.
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
    /// DynamoDB's default class.
    #[default]
    Standard,
    /// Standard-Infrequent Access.
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
    /// Only the changed item's key attributes.
    KeysOnly,
    /// The item as it is after the change.
    NewImage,
    /// The item as it was before the change.
    OldImage,
    /// The item both before and after the change.
    NewAndOldImages,
}

impl StreamView {
    /// Every view type.
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

    /// The view type DynamoDB's spelling names; `None` for one it does not know.
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
    CustomerManaged {
        /// The key's ARN, ID or alias.
        kms_key: String,
    },
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
    /// Only the table's and the index's key attributes.
    KeysOnly,
    /// Every attribute of the item.
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
    /// The index's name.
    pub name: String,
    /// The index's partition key and optional sort key.
    pub key: KeySchema,
    /// Which attributes the index holds besides the keys.
    pub projection: Projection,
}

/// A local secondary index: the table's partition key with another sort key. DynamoDB creates
/// these with the table only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LocalIndex {
    /// The index's name.
    pub name: String,
    /// The index's sort key; its partition key is the table's.
    pub sort: KeyAttribute,
    /// Which attributes the index holds besides the keys.
    pub projection: Projection,
}
