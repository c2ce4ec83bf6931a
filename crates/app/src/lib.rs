//! ddb-rollover for applications: what writers and readers of the period tables need, from the
//! same rules the Lambda functions use (routing comes from the engine, `ddb_rollover::route`).
//!
//! - [`route`]: which table holds time `t` ([`table_for`], [`tables_between`]), re-exported
//!   from the engine so the application and the functions can never disagree;
//! - [`shard`]: write sharding, random or calculated;
//! - [`keys`]: granularity, composite and sort keys, TTL values;
//! - [`write`](mod@write): put and batch-write to the right table and shard ([`Writer`]);
//! - [`query`]: one time range read across periods and shards, merged in order ([`query`](query::query));
//! - [`stream`]: the same read item by item, in bounded memory ([`ItemStream`]);
//! - [`capacity`]: sizing, the way AWS's guidance does it: period, write shards, WCU;
//! - [`changes`]: the family's change records, typed ([`Change`], with the period its table
//!   holds), decoded by a [`ChangeDecoder`] from the family's one Kinesis stream or from Lambda's
//!   Kinesis and DynamoDB Streams events (docs/consume.md).
//!
//! A [`Layout`] ties them to one policy: items carry the shard key `{base}#{n}` in the policy's
//! partition key and `sort_key(time, unique)` in its sort key, both strings.
//!
//! ```no_run
//! # async fn example(client: aws_sdk_dynamodb::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use aws_sdk_dynamodb::types::AttributeValue;
//! use chrono::{TimeDelta, Utc};
//! use ddb_rollover_app::keys::ttl_epoch_seconds;
//! use ddb_rollover_app::{query::query, Layout, Record, Sharding, TimeRange, Writer};
//! use ddb_rollover::Policy;
//!
//! let policy = Policy::from_toml(r#"
//!     prefix = "iot"
//!     [key]
//!     partition = { name = "pk", type = "S" }
//!     sort = { name = "sk", type = "S" }
//!     [template]
//!     ttl_attribute = "expires_at"
//! "#)?;
//! let layout = Layout::new(&policy, Sharding::new(4)?)?;
//! let writer = Writer::new(client.clone(), layout.clone());
//!
//! let time = Utc::now();
//! writer
//!     .write_batch(vec![Record::new("SENSOR#0007", time)
//!         .attribute("celsius", AttributeValue::N("21.5".into()))
//!         .expires_at(ttl_epoch_seconds(time, TimeDelta::days(30)))])
//!     .await?;
//!
//! let (from, to) = (time - TimeDelta::days(1), time + TimeDelta::seconds(1));
//! let day = query(&client, &layout, &TimeRange::new("SENSOR#0007", from, to)).await?;
//! let latest = TimeRange::new("SENSOR#0007", from, to).newest_first().limit(5);
//! let latest = query(&client, &layout, &latest).await?;
//! assert!(latest.items.len() <= day.items.len());
//! # Ok(())
//! # }
//! ```

pub mod capacity;
pub mod changes;
pub mod keys;
pub mod query;
pub mod shard;
pub mod stream;
pub mod write;

pub use changes::{Change, ChangeDecoder, ChangeError, ChangeKind};
pub use ddb_rollover::route::{self, table_for, tables_between, PeriodTable, RouteError};
pub use keys::Granularity;
pub use query::{Order, QueryError, QueryOutcome, TimeRange};
pub use shard::{ShardChoice, Sharding};
pub use stream::ItemStream;
pub use write::{BatchWritten, Item, Record, WriteError, Writer};

use ddb_rollover::policy::AttributeKind;
use ddb_rollover::Policy;

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
