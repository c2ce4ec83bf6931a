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
mod layout;
pub mod query;
pub mod shard;
pub mod stream;
pub mod write;

pub use changes::{Change, ChangeDecoder, ChangeError, ChangeKind};
pub use ddb_rollover::route::{self, table_for, tables_between, PeriodTable, RouteError};
pub use keys::Granularity;
pub use layout::{Layout, LayoutError};
pub use query::{Order, QueryError, QueryOutcome, TimeRange};
pub use shard::{ShardChoice, Sharding};
pub use stream::ItemStream;
pub use write::{BatchWritten, Item, Record, WriteError, Writer};
