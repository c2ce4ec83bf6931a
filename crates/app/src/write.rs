//! Writes routed to the right period table and shard.
//!
//! Every record is checked and given its table, shard and unique suffix before any call, so bad
//! input fails whole and early. Records that could not be written come back *pinned* (shard and
//! suffix fixed), so writing them again is idempotent.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::config::AsyncSleep;
use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
use aws_sdk_dynamodb::Client;
use aws_smithy_async::rt::sleep::default_async_sleep;
use chrono::{DateTime, Utc};
use futures::stream::{self, StreamExt};
use itertools::Itertools;

use crate::keys::{sort_key, unique_suffix};
use crate::layout::Layout;
use crate::shard::ShardChoice;
use ddb_rollover::route::{table_for, PeriodTable};

/// One DynamoDB item: attribute name to value.
pub type Item = HashMap<String, AttributeValue>;

/// BatchWriteItem takes at most 25 put or delete requests.
pub const MAX_BATCH_ITEMS: usize = 25;

/// One time-series item before routing.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The logical partition key, such as `SENSOR#123`; the writer appends the shard.
    pub base: String,
    /// When the event happened: picks the table and the sort key.
    pub time: DateTime<Utc>,
    /// Which shard of `base` the item goes to.
    pub shard: ShardChoice,
    /// Sort key suffix; `None` draws a random one.
    pub unique: Option<String>,
    /// TTL in epoch seconds, written to the policy's `template.ttl_attribute`.
    pub expires_at: Option<i64>,
    /// Everything else; must not name the key or TTL attributes.
    pub attributes: Item,
}

impl Record {
    /// A record of `base` at `time`, on a random shard with a random sort key suffix.
    pub fn new(base: impl Into<String>, time: DateTime<Utc>) -> Record {
        Record {
            base: base.into(),
            time,
            shard: ShardChoice::Random,
            unique: None,
            expires_at: None,
            attributes: Item::new(),
        }
    }

    /// Adds the attribute `name`.
    pub fn attribute(mut self, name: impl Into<String>, value: AttributeValue) -> Record {
        self.attributes.insert(name.into(), value);
        self
    }

    /// Calculates the shard from `value` instead of drawing one at random.
    pub fn shard_by(mut self, value: impl Into<String>) -> Record {
        self.shard = ShardChoice::By(value.into());
        self
    }

    /// Uses `suffix` as the sort key suffix instead of a random one.
    pub fn unique(mut self, suffix: impl Into<String>) -> Record {
        self.unique = Some(suffix.into());
        self
    }

    /// Expires the item at `epoch_seconds`, through the policy's TTL attribute.
    pub fn expires_at(mut self, epoch_seconds: i64) -> Record {
        self.expires_at = Some(epoch_seconds);
        self
    }
}

/// How BatchWriteItem's UnprocessedItems are retried: exponential backoff with equal jitter
/// (half of `min(base * 2^retry, max_delay)`, plus a random part up to the other half), so
/// writers that were throttled together do not come back together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Requests per batch, the first included.
    pub max_attempts: u32,
    /// The ceiling of the first retry's delay.
    pub base_delay: Duration,
    /// The ceiling of any retry's delay.
    pub max_delay: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            max_attempts: 10,
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_secs(5),
        }
    }
}

impl Backoff {
    fn delay(&self, retry: u32) -> Duration {
        let ceiling = self
            .base_delay
            .saturating_mul(1u32.checked_shl(retry).unwrap_or(u32::MAX))
            .min(self.max_delay);
        ceiling / 2 + (ceiling / 2).mul_f64(fastrand::f64())
    }
}

/// Where one record went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The period's table.
    pub table: String,
    /// The item's partition key: the base key and the shard.
    pub partition_key: String,
    /// The item's sort key: the time and the unique suffix.
    pub sort_key: String,
}

/// A batch that was written completely.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchWritten {
    /// Records written.
    pub items: usize,
    /// BatchWriteItem calls, retries included.
    pub requests: usize,
    /// Calls that only resent UnprocessedItems.
    pub retries: usize,
}

/// Records of one table that were not written, pinned for an idempotent retry.
#[derive(Clone, Debug, PartialEq)]
pub struct Unwritten {
    /// The period's table the records belong in.
    pub table: String,
    /// Why they were not written.
    pub reason: UnwrittenReason,
    /// The records, with their shard and suffix fixed, so a retry writes the same items.
    pub records: Vec<Record>,
}

/// Why records were not written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnwrittenReason {
    /// The period's table does not exist (not created yet, or deleted by retention).
    TableMissing,
    /// DynamoDB kept returning them as UnprocessedItems.
    StillUnprocessed {
        /// BatchWriteItem requests made for them.
        attempts: u32,
    },
    /// The call failed (after the SDK's own retries).
    Failed(String),
}

/// Why a put or a batch write failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Bad input, found before any call; nothing was written.
    #[error("record {index}: {reason}")]
    InvalidRecord {
        /// The record's position in the batch, from 0.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The period's table for the item does not exist.
    #[error("table {table} does not exist, so the item for {time} was not written: create_new builds each period's table before it starts; a missing one was never created, or was deleted by retention")]
    TableMissing {
        /// The table's name.
        table: String,
        /// The item's time.
        time: DateTime<Utc>,
    },
    /// A call failed (after the SDK's own retries).
    #[error("writing to {table}: {source}")]
    Sdk {
        /// The table written to.
        table: String,
        /// The SDK's error.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },
    /// Part of a batch was not written.
    #[error("{} of {} items were not written ({})", unwritten_count(.unwritten), .written + unwritten_count(.unwritten), describe(.unwritten))]
    Incomplete {
        /// Records written.
        written: usize,
        /// The records not written, by table, and why.
        unwritten: Vec<Unwritten>,
    },
}

fn unwritten_count(unwritten: &[Unwritten]) -> usize {
    unwritten.iter().map(|u| u.records.len()).sum()
}

fn describe(unwritten: &[Unwritten]) -> String {
    let parts: Vec<String> = unwritten
        .iter()
        .map(|u| {
            let why = match &u.reason {
                UnwrittenReason::TableMissing => "table does not exist".to_string(),
                UnwrittenReason::StillUnprocessed { attempts } => {
                    format!("still unprocessed after {attempts} attempts")
                }
                UnwrittenReason::Failed(error) => error.clone(),
            };
            format!("{}: {} items, {why}", u.table, u.records.len())
        })
        .collect();
    parts.join("; ")
}

/// A record checked and routed: its table, its item, and the record pinned to that item.
#[derive(Clone, Debug)]
struct Routed {
    table: PeriodTable,
    item: Item,
    key: (String, String),
    record: Record,
}

/// Puts and batch-writes records into the policy's tables. Cheap to clone; clones share the
/// missing-table counter.
#[derive(Clone, Debug)]
pub struct Writer {
    client: Client,
    layout: Arc<Layout>,
    backoff: Backoff,
    concurrency: usize,
    missing_table_writes: Arc<AtomicU64>,
}

impl Writer {
    /// A writer for `layout`'s tables through `client`, with the default backoff and 4 batch calls in flight.
    pub fn new(client: Client, layout: Layout) -> Writer {
        Writer {
            client,
            layout: Arc::new(layout),
            backoff: Backoff::default(),
            concurrency: 4,
            missing_table_writes: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Retries UnprocessedItems with `backoff` instead of the default.
    pub fn with_backoff(mut self, backoff: Backoff) -> Writer {
        self.backoff = backoff;
        self
    }

    /// How many BatchWriteItem calls one batch may have in flight (at least 1).
    pub fn with_concurrency(mut self, concurrency: usize) -> Writer {
        self.concurrency = concurrency.max(1);
        self
    }

    /// How items sit in the policy's tables.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Items not written because their table did not exist, since this writer was made.
    /// Publish it as a metric (or alarm on the `write to a missing table` log event).
    pub fn missing_table_writes(&self) -> u64 {
        self.missing_table_writes.load(Ordering::Relaxed)
    }

    /// The table and item a record becomes, without writing it.
    pub fn item_for(&self, record: &Record) -> Result<(PeriodTable, Item), String> {
        self.route(record.clone())
            .map(|routed| (routed.table, routed.item))
    }

    /// Writes one record with PutItem.
    pub async fn put(&self, record: Record) -> Result<Written, WriteError> {
        let routed = self
            .route(record)
            .map_err(|reason| WriteError::InvalidRecord { index: 0, reason })?;
        let result = self
            .client
            .put_item()
            .table_name(&routed.table.name)
            .set_item(Some(routed.item))
            .send()
            .await;
        match result {
            Ok(_) => Ok(Written {
                table: routed.table.name,
                partition_key: routed.key.0,
                sort_key: routed.key.1,
            }),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_resource_not_found_exception()) =>
            {
                self.count_missing(&routed.table.name, 1);
                Err(WriteError::TableMissing {
                    table: routed.table.name,
                    time: routed.record.time,
                })
            }
            Err(e) => Err(WriteError::Sdk {
                table: routed.table.name,
                source: Box::new(e.into()),
            }),
        }
    }

    /// Writes records with BatchWriteItem, 25 per call, grouped by table, retrying
    /// UnprocessedItems with backoff. Tables that fail do not stop the others; what was not
    /// written comes back in [`WriteError::Incomplete`].
    pub async fn write_batch(&self, records: Vec<Record>) -> Result<BatchWritten, WriteError> {
        let mut by_table: BTreeMap<String, Vec<Routed>> = BTreeMap::new();
        let mut keys = HashSet::new();
        for (index, record) in records.into_iter().enumerate() {
            let routed = self
                .route(record)
                .map_err(|reason| WriteError::InvalidRecord { index, reason })?;
            if !keys.insert((routed.table.name.clone(), routed.key.clone())) {
                return Err(WriteError::InvalidRecord {
                    index,
                    reason: format!(
                        "same key as an earlier record ({} / {}): give each record its own unique suffix",
                        routed.key.0, routed.key.1
                    ),
                });
            }
            by_table
                .entry(routed.table.name.clone())
                .or_default()
                .push(routed);
        }
        // Moved into calls of 25, not copied: items can be large.
        let mut chunks: Vec<(String, Vec<Routed>)> = Vec::new();
        for (table, routed) in by_table {
            for chunk in &routed.into_iter().chunks(MAX_BATCH_ITEMS) {
                chunks.push((table.clone(), chunk.collect()));
            }
        }
        let results: Vec<ChunkResult> = stream::iter(chunks)
            .map(|(table, chunk)| self.write_chunk(table, chunk))
            .buffer_unordered(self.concurrency)
            .collect()
            .await;

        let mut done = BatchWritten::default();
        let mut unwritten: Vec<Unwritten> = Vec::new();
        for result in results {
            done.items += result.written;
            done.requests += result.requests;
            done.retries += result.requests.saturating_sub(1);
            if let Some(failed) = result.unwritten {
                match unwritten
                    .iter_mut()
                    .find(|u| u.table == failed.table && u.reason == failed.reason)
                {
                    Some(same) => same.records.extend(failed.records),
                    None => unwritten.push(failed),
                }
            }
        }
        if unwritten.is_empty() {
            Ok(done)
        } else {
            Err(WriteError::Incomplete {
                written: done.items,
                unwritten,
            })
        }
    }

    async fn write_chunk(&self, table: String, mut pending: Vec<Routed>) -> ChunkResult {
        let total = pending.len();
        let mut requests = 0;
        loop {
            let writes: Vec<WriteRequest> = pending.iter().map(|r| put_request(&r.item)).collect();
            requests += 1;
            let result = self
                .client
                .batch_write_item()
                .request_items(&table, writes)
                .send()
                .await;
            let reason = match result {
                Ok(output) => {
                    let unprocessed: HashSet<(String, String)> = output
                        .unprocessed_items()
                        .and_then(|by_table| by_table.get(&table))
                        .into_iter()
                        .flatten()
                        .filter_map(|w| w.put_request())
                        .filter_map(|put| self.key_of(put.item()))
                        .collect();
                    pending.retain(|r| unprocessed.contains(&r.key));
                    if pending.is_empty() {
                        return ChunkResult::done(total, requests);
                    }
                    if requests >= self.backoff.max_attempts as usize {
                        UnwrittenReason::StillUnprocessed {
                            attempts: self.backoff.max_attempts,
                        }
                    } else {
                        self.sleep(self.backoff.delay(requests as u32 - 1)).await;
                        continue;
                    }
                }
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|e| e.is_resource_not_found_exception()) =>
                {
                    self.count_missing(&table, pending.len());
                    UnwrittenReason::TableMissing
                }
                Err(e) => UnwrittenReason::Failed(aws_sdk_dynamodb::Error::from(e).to_string()),
            };
            return ChunkResult {
                written: total - pending.len(),
                requests,
                unwritten: Some(Unwritten {
                    table,
                    reason,
                    records: pending.into_iter().map(|r| r.record).collect(),
                }),
            };
        }
    }

    /// Checks a record and gives it a table, shard and suffix; the returned record is pinned.
    fn route(&self, mut record: Record) -> Result<Routed, String> {
        let layout = &self.layout;
        if record.base.is_empty() {
            return Err("base is empty: use the logical partition key, such as SENSOR#123".into());
        }
        let ttl_attribute = layout.policy().template.ttl_attribute.as_deref();
        let reserved = [
            Some(layout.partition_key()),
            Some(layout.sort_key()),
            ttl_attribute,
        ];
        if let Some(name) = record
            .attributes
            .keys()
            .find(|name| reserved.contains(&Some(name.as_str())))
        {
            return Err(format!(
                "attribute {name:?} is set by the writer (key or TTL attribute): use base, time, unique and expires_at"
            ));
        }
        let table = table_for(layout.policy(), record.time).map_err(|e| e.to_string())?;
        let shard = layout
            .sharding()
            .choose(&record.shard)
            .map_err(|e| e.to_string())?;
        let unique = record.unique.get_or_insert_with(unique_suffix).clone();
        record.shard = ShardChoice::Fixed(shard);

        let partition = layout.sharding().key(&record.base, shard);
        let sort = sort_key(record.time, &unique);
        let mut item = record.attributes.clone();
        item.insert(
            layout.partition_key().to_string(),
            AttributeValue::S(partition.clone()),
        );
        item.insert(layout.sort_key().to_string(), AttributeValue::S(sort.clone()));
        match (record.expires_at, ttl_attribute) {
            (Some(at), Some(name)) => {
                item.insert(name.to_string(), AttributeValue::N(at.to_string()));
            }
            (Some(_), None) => {
                return Err(
                    "expires_at is set but the policy has no template.ttl_attribute: name the TTL attribute in the policy".into(),
                )
            }
            (None, _) => {}
        }
        Ok(Routed {
            table,
            item,
            key: (partition, sort),
            record,
        })
    }

    fn key_of(&self, item: &Item) -> Option<(String, String)> {
        let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
        Some((text(self.layout.partition_key())?, text(self.layout.sort_key())?))
    }

    fn count_missing(&self, table: &str, items: usize) {
        let total = self
            .missing_table_writes
            .fetch_add(items as u64, Ordering::Relaxed)
            + items as u64;
        tracing::error!(
            table,
            items,
            missing_table_writes = total,
            "write to a missing table"
        );
    }

    /// Waits with the client's sleep if it was given one, else the SDK's default (Tokio).
    async fn sleep(&self, delay: Duration) {
        let sleep = self.client.config().sleep_impl().or_else(default_async_sleep);
        sleep
            .expect("aws-smithy-async's rt-tokio feature provides a sleep")
            .sleep(delay)
            .await;
    }
}

struct ChunkResult {
    written: usize,
    requests: usize,
    unwritten: Option<Unwritten>,
}

impl ChunkResult {
    fn done(written: usize, requests: usize) -> ChunkResult {
        ChunkResult {
            written,
            requests,
            unwritten: None,
        }
    }
}

fn put_request(item: &Item) -> WriteRequest {
    WriteRequest::builder()
        .put_request(
            PutRequest::builder()
                .set_item(Some(item.clone()))
                .build()
                .expect("an item is set"),
        )
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::Sharding;
    use chrono::TimeZone;
    use ddb_rollover::Policy;

    fn writer(policy: &str) -> Writer {
        let policy = Policy::from_toml(policy).unwrap();
        let layout = Layout::new(&policy, Sharding::new(4).unwrap()).unwrap();
        let config = aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .build();
        Writer::new(Client::from_conf(config), layout)
    }

    const KEYED: &str = "prefix = \"iot\"\n[key]\npartition = { name = \"pk\", type = \"S\" }\nsort = { name = \"sk\", type = \"S\" }\n[template]\nttl_attribute = \"expires\"\n";

    fn at(h: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 12, 1, h, 30, 0).unwrap()
    }

    #[test]
    fn records_become_routed_sharded_items() {
        let writer = writer(KEYED);
        let record = Record::new("SENSOR#7", at(14))
            .shard_by("sensor-123")
            .unique("0001")
            .expires_at(1_735_000_000)
            .attribute("celsius", AttributeValue::N("21.5".into()));
        let (table, item) = writer.item_for(&record).unwrap();
        assert_eq!(table.name, "iot_2024-12-01");
        // sensor-123 hashes to shard 4 of 4 (see shard.rs).
        assert_eq!(item["pk"], AttributeValue::S("SENSOR#7#4".into()));
        assert_eq!(
            item["sk"],
            AttributeValue::S("2024-12-01T14:30:00.000000000Z#0001".into())
        );
        assert_eq!(item["expires"], AttributeValue::N("1735000000".into()));
        assert_eq!(item["celsius"], AttributeValue::N("21.5".into()));
        assert_eq!(item.len(), 4);
    }

    #[test]
    fn routing_pins_the_random_choices() {
        let writer = writer(KEYED);
        let routed = writer.route(Record::new("b", at(1))).unwrap();
        let ShardChoice::Fixed(shard) = routed.record.shard else {
            panic!("not pinned: {:?}", routed.record.shard);
        };
        assert_eq!(routed.key.0, format!("b#{shard}"));
        let again = writer.route(routed.record.clone()).unwrap();
        assert_eq!(again.item, routed.item, "a pinned record becomes the same item");
    }

    #[test]
    fn bad_records_name_the_problem() {
        let writer = writer(KEYED);
        let reason = |r: Record| writer.item_for(&r).unwrap_err();
        assert!(reason(Record::new("", at(1))).starts_with("base is empty"));
        assert!(
            reason(Record::new("b", at(1)).attribute("sk", AttributeValue::S("x".into())))
                .starts_with("attribute \"sk\" is set by the writer")
        );
        assert!(
            reason(Record::new("b", at(1)).attribute("expires", AttributeValue::N("1".into())))
                .contains("\"expires\"")
        );
        let far = Utc.with_ymd_and_hms(12_000, 1, 1, 0, 0, 0).unwrap();
        assert!(reason(Record::new("b", far)).contains("years 1000 to 9999"));
        let mut fixed = Record::new("b", at(1));
        fixed.shard = ShardChoice::Fixed(9);
        assert_eq!(reason(fixed), "shard is 9: use 1 to 4, the shard count");
        let no_ttl = self::writer(&KEYED.replace("ttl_attribute = \"expires\"", ""));
        let err = no_ttl
            .item_for(&Record::new("b", at(1)).expires_at(5))
            .unwrap_err();
        assert!(err.contains("template.ttl_attribute"), "{err}");
    }

    #[test]
    fn backoff_grows_and_stays_capped() {
        let backoff = Backoff {
            max_attempts: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
        };
        for retry in 0..40 {
            let ceiling = Duration::from_millis(100 * 2u64.saturating_pow(retry).min(3));
            let delay = backoff.delay(retry);
            assert!(
                ceiling / 2 <= delay && delay <= ceiling,
                "retry {retry}: {delay:?}"
            );
        }
        let spread: HashSet<Duration> = (0..50).map(|_| backoff.delay(3)).collect();
        assert!(spread.len() > 10, "jitter spreads the waits");
    }
}
