//! The policy's secondary indexes (`[[indexes]]` and `[[local_indexes]]`) as written, and their
//! validation against DynamoDB's rules: index names, key attributes whose types agree with the
//! table's, projections, and how many indexes and projected attributes a table may have.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::naming::is_table_name_char;
use crate::policy::settings::{
    AttributeKind, GlobalIndex, KeyAttributeDocument, KeySchema, KeySchemaDocument, LocalIndex, Projection,
};

/// Global secondary indexes per table (DynamoDB's default quota).
pub(crate) const MAX_GLOBAL_INDEXES: usize = 20;
/// Local secondary indexes per table.
pub(crate) const MAX_LOCAL_INDEXES: usize = 5;
/// Non-key attributes projected into all of a table's indexes together.
pub(crate) const MAX_PROJECTED_ATTRIBUTES: usize = 100;

/// One `[[indexes]]` entry as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexDocument {
    /// The index's name.
    pub name: String,
    /// The index's partition key.
    pub partition: KeyAttributeDocument,
    /// The index's sort key, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<KeyAttributeDocument>,
    /// Default `"all"`, as DynamoDB's console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection: Option<ProjectionDocument>,
}

/// One `[[local_indexes]]` entry as written: the table's partition key, this sort key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalIndexDocument {
    /// The index's name.
    pub name: String,
    /// The index's sort key; its partition key is the table's.
    pub sort: KeyAttributeDocument,
    /// Default `"all"`, as DynamoDB's console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection: Option<ProjectionDocument>,
}

/// `"keys_only"`, `"all"`, or `{ include = ["a", "b"] }`. Any other value is kept as written
/// (`Other`) for validation to name, so it does not hide the document's other bad fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum ProjectionDocument {
    /// `"keys_only"` or `"all"`.
    Kind(String),
    /// Keys and the attributes listed.
    Include {
        /// The non-key attributes the index holds.
        include: Vec<String>,
    },
    /// Anything else, kept for validation to name.
    Other(serde_json::Value),
}

type Problems = Vec<(String, String)>;

/// The validated indexes, or every problem as (field, what to change). `key` is the table's
/// key as written: its own problems are the caller's to name, and an attribute whose type is
/// not valid there is not compared with the indexes'.
pub(crate) fn validate_indexes(
    key: &KeySchemaDocument,
    globals: &[IndexDocument],
    locals: &[LocalIndexDocument],
) -> Result<(Vec<GlobalIndex>, Vec<LocalIndex>), Problems> {
    let mut problems = Problems::new();
    if globals.len() > MAX_GLOBAL_INDEXES {
        problems.push((
            "indexes".into(),
            format!(
                "{} indexes: DynamoDB allows {MAX_GLOBAL_INDEXES} per table",
                globals.len()
            ),
        ));
    }
    if locals.len() > MAX_LOCAL_INDEXES {
        problems.push((
            "local_indexes".into(),
            format!(
                "{} local indexes: DynamoDB allows {MAX_LOCAL_INDEXES} per table",
                locals.len()
            ),
        ));
    }
    if !locals.is_empty() && key.sort.is_none() {
        problems.push((
            "local_indexes".into(),
            "a local index needs a table with a sort key: add key.sort, or use [[indexes]] (global)".into(),
        ));
    }
    // Every attribute used as a key anywhere has one type (one AttributeDefinitions entry).
    let mut types: BTreeMap<String, (AttributeKind, String)> = BTreeMap::new();
    for (field, attribute) in [
        ("key.partition", Some(&key.partition)),
        ("key.sort", key.sort.as_ref()),
    ] {
        if let Some(kind) = attribute.and_then(|a| a.attribute_kind().ok()) {
            let name = attribute.map(|a| a.name.clone()).unwrap_or_default();
            types.insert(name, (kind, field.into()));
        }
    }
    let mut check_attribute = |problems: &mut Problems, field: String, attribute: &KeyAttributeDocument| {
        if !(1..=255).contains(&attribute.name.len()) {
            problems.push((
                format!("{field}.name"),
                format!("{:?} must be 1 to 255 bytes long", attribute.name),
            ));
        }
        let own = match attribute.attribute_kind() {
            Ok(kind) => kind,
            Err(message) => {
                problems.push((format!("{field}.type"), message));
                return;
            }
        };
        let (kind, first) = types
            .entry(attribute.name.clone())
            .or_insert((own, field.clone()))
            .clone();
        if kind != own {
            problems.push((
                format!("{field}.type"),
                format!(
                    "{:?} is {kind:?} in {first}: an attribute has one type in all keys of a table",
                    attribute.name
                ),
            ));
        }
    };
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut projected = 0;
    let mut check_common = |problems: &mut Problems,
                            field: &str,
                            name: &str,
                            projection: &Option<ProjectionDocument>,
                            keys: &[&str]| {
        if let Err(message) = check_index_name(name) {
            problems.push((format!("{field}.name"), message));
        }
        if let Some(first) = names.insert(name.to_string(), field.to_string()) {
            problems.push((
                format!("{field}.name"),
                format!("{name:?} is also the name of {first}: index names are unique per table"),
            ));
        }
        match projection_of(projection.as_ref(), keys) {
            Ok(projection) => {
                if let Projection::Include(attributes) = &projection {
                    projected += attributes.len();
                }
                Some(projection)
            }
            Err((subfield, message)) => {
                problems.push((format!("{field}.projection{subfield}"), message));
                None
            }
        }
    };
    let table_keys: Vec<&str> = std::iter::once(key.partition.name.as_str())
        .chain(key.sort.as_ref().map(|s| s.name.as_str()))
        .collect();
    let mut global_indexes = Vec::new();
    for (i, doc) in globals.iter().enumerate() {
        let field = format!("indexes[{i}]");
        check_attribute(&mut problems, format!("{field}.partition"), &doc.partition);
        if let Some(sort) = &doc.sort {
            check_attribute(&mut problems, format!("{field}.sort"), sort);
            if sort.name == doc.partition.name {
                problems.push((
                    format!("{field}.sort.name"),
                    format!(
                        "{:?} is also the index's partition key: use another attribute",
                        sort.name
                    ),
                ));
            }
        }
        let mut keys = table_keys.clone();
        keys.push(&doc.partition.name);
        keys.extend(doc.sort.as_ref().map(|s| s.name.as_str()));
        let projection = check_common(&mut problems, &field, &doc.name, &doc.projection, &keys);
        let partition = doc.partition.attribute();
        // `None` for a sort key whose type is not valid, `Some(None)` without a sort key.
        let sort = match &doc.sort {
            None => Some(None),
            Some(sort) => sort.attribute().map(Some),
        };
        // Each `None` was named above.
        if let (Some(projection), Some(partition), Some(sort)) = (projection, partition, sort) {
            global_indexes.push(GlobalIndex {
                name: doc.name.clone(),
                key: KeySchema { partition, sort },
                projection,
            });
        }
    }
    let mut local_indexes = Vec::new();
    for (i, doc) in locals.iter().enumerate() {
        let field = format!("local_indexes[{i}]");
        check_attribute(&mut problems, format!("{field}.sort"), &doc.sort);
        if doc.sort.name == key.partition.name {
            problems.push((
                format!("{field}.sort.name"),
                format!(
                    "{:?} is the table's partition key: use another attribute",
                    doc.sort.name
                ),
            ));
        }
        let mut keys = table_keys.clone();
        keys.push(&doc.sort.name);
        let projection = check_common(&mut problems, &field, &doc.name, &doc.projection, &keys);
        if let (Some(projection), Some(sort)) = (projection, doc.sort.attribute()) {
            local_indexes.push(LocalIndex {
                name: doc.name.clone(),
                sort,
                projection,
            });
        }
    }
    if projected > MAX_PROJECTED_ATTRIBUTES {
        problems.push((
            "indexes".into(),
            format!(
                "{projected} attributes in `include` projections: DynamoDB allows {MAX_PROJECTED_ATTRIBUTES} across all of a table's indexes"
            ),
        ));
    }
    if problems.is_empty() {
        Ok((global_indexes, local_indexes))
    } else {
        Err(problems)
    }
}

/// DynamoDB's index names: 3 to 255 characters of `[a-zA-Z0-9_.-]`.
fn check_index_name(name: &str) -> Result<(), String> {
    if !(3..=255).contains(&name.len()) || !name.chars().all(is_table_name_char) {
        return Err(format!(
            "{name:?} is not a valid index name: use 3 to 255 characters of a-z A-Z 0-9 _ . -"
        ));
    }
    Ok(())
}

const PROJECTIONS: &str = "use \"keys_only\", \"all\" or { include = [\"attribute\", ...] }";

/// The projection, or (the field within `projection`, what to change).
fn projection_of(
    doc: Option<&ProjectionDocument>,
    keys: &[&str],
) -> Result<Projection, (&'static str, String)> {
    match doc {
        None => Ok(Projection::All),
        Some(ProjectionDocument::Kind(kind)) => match kind.as_str() {
            "keys_only" => Ok(Projection::KeysOnly),
            "all" => Ok(Projection::All),
            other => Err(("", format!("unknown projection {other:?}: {PROJECTIONS}"))),
        },
        Some(ProjectionDocument::Other(value)) => {
            Err(("", format!("{value} is not a projection: {PROJECTIONS}")))
        }
        Some(ProjectionDocument::Include { include }) => {
            if include.is_empty() {
                return Err((
                    "",
                    "include lists no attribute: name at least one, or use \"keys_only\"".into(),
                ));
            }
            if let Some(key) = include.iter().find(|a| keys.contains(&a.as_str())) {
                return Err((
                    "",
                    format!("{key:?} is a key attribute, which every index projects anyway: remove it from include"),
                ));
            }
            let mut seen = std::collections::BTreeSet::new();
            let repeated: Vec<String> = include
                .iter()
                .filter(|a| !seen.insert(a.as_str()))
                .map(|a| format!("{a:?}"))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            if !repeated.is_empty() {
                return Err((
                    ".include",
                    format!(
                        "{} listed more than once: name each attribute once (DynamoDB refuses the table otherwise)",
                        repeated.join(", ")
                    ),
                ));
            }
            Ok(Projection::Include(include.clone()))
        }
    }
}

/// The document that validates to `projection`.
pub(crate) fn projection_document(projection: &Projection) -> ProjectionDocument {
    match projection {
        Projection::KeysOnly => ProjectionDocument::Kind("keys_only".into()),
        Projection::All => ProjectionDocument::Kind("all".into()),
        Projection::Include(attributes) => ProjectionDocument::Include {
            include: attributes.clone(),
        },
    }
}

impl From<&GlobalIndex> for IndexDocument {
    fn from(index: &GlobalIndex) -> Self {
        IndexDocument {
            name: index.name.clone(),
            partition: KeyAttributeDocument::from(&index.key.partition),
            sort: index.key.sort.as_ref().map(KeyAttributeDocument::from),
            projection: Some(projection_document(&index.projection)),
        }
    }
}

impl From<&LocalIndex> for LocalIndexDocument {
    fn from(index: &LocalIndex) -> Self {
        LocalIndexDocument {
            name: index.name.clone(),
            sort: KeyAttributeDocument::from(&index.sort),
            projection: Some(projection_document(&index.projection)),
        }
    }
}
