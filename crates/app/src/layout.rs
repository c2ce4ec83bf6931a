//! How an application's items sit in the policy's tables: the [`Layout`] every writer and
//! reader shares, and why a policy's key may not fit it.

use ddb_rollover::policy::AttributeKind;
use ddb_rollover::Policy;

use crate::shard::Sharding;

/// Why a policy's key does not fit sharded time series.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{field} is {found}: {allowed}")]
pub struct LayoutError {
    /// The policy field at fault (`key.sort.type`, ...).
    pub field: &'static str,
    /// What the field holds.
    pub found: String,
    /// What to use instead, and why.
    pub allowed: &'static str,
}

/// How an application's items sit in the policy's tables.
#[derive(Clone, Debug)]
pub struct Layout {
    policy: Policy,
    sharding: Sharding,
}

impl Layout {
    /// Checks that the policy's key fits sharded time series: a string partition key (it holds
    /// `{base}#{n}`) and a string sort key (it holds the ISO 8601 time and a unique suffix).
    pub fn new(policy: &Policy, sharding: Sharding) -> Result<Layout, LayoutError> {
        let key = &policy.key;
        if key.partition.kind != AttributeKind::S {
            return Err(LayoutError {
                field: "key.partition.type",
                found: format!("{:?}", key.partition.kind),
                allowed: "use \"S\": the partition key holds the shard key {base}#{n}",
            });
        }
        match &key.sort {
            Some(sort) if sort.kind == AttributeKind::S => {}
            other => {
                return Err(LayoutError {
                    field: "key.sort.type",
                    found: other
                        .as_ref()
                        .map_or("absent".to_string(), |s| format!("{:?}", s.kind)),
                    allowed: "use \"S\": the sort key holds the ISO 8601 time and a unique suffix",
                })
            }
        }
        Ok(Layout {
            policy: policy.clone(),
            sharding,
        })
    }

    /// The policy whose tables hold the items.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// How base keys are spread over shards.
    pub fn sharding(&self) -> &Sharding {
        &self.sharding
    }

    /// The name of the partition key attribute, which holds the shard key `{base}#{n}`.
    pub fn partition_key(&self) -> &str {
        &self.policy.key.partition.name
    }

    /// The name of the sort key attribute, which holds the time and a unique suffix.
    pub fn sort_key(&self) -> &str {
        &self
            .policy
            .key
            .sort
            .as_ref()
            .expect("checked in Layout::new")
            .name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_need_string_keys() {
        let sharding = Sharding::new(4).unwrap();
        let err = Layout::new(&Policy::default(), sharding.clone()).unwrap_err();
        assert_eq!(err.field, "key.partition.type");
        let no_sort = Policy::from_toml("[key]\npartition = { name = \"pk\", type = \"S\" }").unwrap();
        let err = Layout::new(&no_sort, sharding.clone()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "key.sort.type is absent: use \"S\": the sort key holds the ISO 8601 time and a unique suffix"
        );
        let good = Policy::from_toml(
            "[key]\npartition = { name = \"pk\", type = \"S\" }\nsort = { name = \"sk\", type = \"S\" }",
        )
        .unwrap();
        let layout = Layout::new(&good, sharding).unwrap();
        assert_eq!((layout.partition_key(), layout.sort_key()), ("pk", "sk"));
    }
}
