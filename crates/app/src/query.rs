//! One time-range read of a base key across every period table and shard, merged in order.
//!
//! Each (table, shard) pair is one paginated Query; up to `concurrency` run at once, in time
//! order of their tables. Tables hold disjoint times, so each table's shards are merged by sort
//! key and the tables are concatenated. With a limit, reading stops as soon as enough items
//! are in, and no shard reads more than the limit.

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::query::{QueryError as SdkQueryError, QueryOutput};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;
use aws_smithy_async::future::pagination_stream::PaginationStream;
use chrono::{DateTime, Utc};
use futures::stream::{self, StreamExt};
use itertools::Itertools;
use serde::Serialize;

use crate::keys::sort_key_time;
use crate::layout::Layout;
use crate::write::Item;
use ddb_rollover::route::{tables_between, PeriodTable, RouteError};

/// Concurrent Query calls when none is given.
pub const DEFAULT_CONCURRENCY: usize = 8;

/// The order items come back in, by time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Order {
    /// Oldest time first.
    #[default]
    OldestFirst,
    /// Newest time first.
    NewestFirst,
}

/// What to read: the items of `base` with times in `[from, to)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeRange {
    /// The base key whose shards are read.
    pub base: String,
    /// The earliest time, included.
    pub from: DateTime<Utc>,
    /// The latest time, excluded.
    pub to: DateTime<Utc>,
    /// The order items come back in.
    pub order: Order,
    /// The most items to return; `None`: every item in the range.
    pub limit: Option<usize>,
    /// Only this shard (1-based), for items written with a calculated shard.
    pub shard: Option<u32>,
    /// Items per Query call (DynamoDB's `Limit`); `None` lets pages run to 1 MB.
    pub page_size: Option<usize>,
    /// Query calls in flight at once.
    pub concurrency: usize,
    /// Strongly consistent reads, at twice the read units.
    pub consistent_read: bool,
}

impl TimeRange {
    /// The items of `base` in `[from, to)`, oldest first, from every shard.
    pub fn new(base: impl Into<String>, from: DateTime<Utc>, to: DateTime<Utc>) -> TimeRange {
        TimeRange {
            base: base.into(),
            from,
            to,
            order: Order::OldestFirst,
            limit: None,
            shard: None,
            page_size: None,
            concurrency: DEFAULT_CONCURRENCY,
            consistent_read: false,
        }
    }

    /// Returns the newest items first.
    pub fn newest_first(mut self) -> TimeRange {
        self.order = Order::NewestFirst;
        self
    }

    /// Returns at most `limit` items.
    pub fn limit(mut self, limit: usize) -> TimeRange {
        self.limit = Some(limit);
        self
    }

    /// Reads only shard `shard` (1-based).
    pub fn shard(mut self, shard: u32) -> TimeRange {
        self.shard = Some(shard);
        self
    }

    /// Asks for at most `items` items per Query call.
    pub fn page_size(mut self, items: usize) -> TimeRange {
        self.page_size = Some(items);
        self
    }

    /// Runs at most `concurrency` Query calls at once.
    pub fn concurrency(mut self, concurrency: usize) -> TimeRange {
        self.concurrency = concurrency;
        self
    }

    /// Reads with strong consistency.
    pub fn consistent_read(mut self) -> TimeRange {
        self.consistent_read = true;
        self
    }
}

/// The merged items and what it took to read them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryOutcome {
    /// In sort-key order (reversed for newest first), at most `limit`.
    pub items: Vec<Item>,
    /// Tables of the range that do not exist (deleted, or never created): skipped.
    pub missing_tables: Vec<String>,
    /// Tables read (missing ones included); fewer than the range has when a limit stopped early.
    pub tables_read: usize,
    /// Query calls, one per page.
    pub requests: usize,
}

/// Why a query failed.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// Bad input, found before any call.
    #[error("{field} is {found}: {allowed}")]
    Invalid {
        /// The input at fault.
        field: &'static str,
        /// What it holds.
        found: String,
        /// What to use instead.
        allowed: String,
    },
    /// The range is reversed, or outside the years tables exist for.
    #[error(transparent)]
    Route(#[from] RouteError),
    /// A Query call failed.
    #[error("querying {table} for {partition_key}: {source}")]
    Sdk {
        /// The table queried.
        table: String,
        /// The shard key queried.
        partition_key: String,
        /// The SDK's error.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },
}

/// Reads the items of `range.base` in `[from, to)` from every table and shard.
pub async fn query(client: &Client, layout: &Layout, range: &TimeRange) -> Result<QueryOutcome, QueryError> {
    let (tables, keys) = reads_of(layout, range)?;
    let reads = tables
        .iter()
        .flat_map(|table| keys.iter().map(move |key| (table, key)))
        .map(|(table, key)| read_shard(client, layout, range, table, key));
    // `buffered` keeps table order and runs up to `concurrency` reads ahead; dropping the
    // stream on an early stop cancels the reads not needed.
    let mut results = stream::iter(reads).buffered(range.concurrency);

    let mut outcome = QueryOutcome::default();
    let mut table_reads: Vec<ShardRead> = Vec::with_capacity(keys.len());
    let sort_key = layout.sort_key();
    while let Some(read) = results.next().await {
        let read = read?;
        outcome.requests += read.requests;
        table_reads.push(read);
        if table_reads.len() < keys.len() {
            continue;
        }
        let reads = std::mem::take(&mut table_reads);
        outcome.tables_read += 1;
        if let Some(missing) = reads.iter().find(|r| r.missing) {
            tracing::warn!(table = %missing.table, "skipping a table of the range that does not exist");
            outcome.missing_tables.push(missing.table.clone());
            continue;
        }
        let merged = reads
            .into_iter()
            .map(|r| r.items)
            .kmerge_by(|a: &Item, b: &Item| match range.order {
                Order::OldestFirst => sort_text(a, sort_key) < sort_text(b, sort_key),
                Order::NewestFirst => sort_text(a, sort_key) > sort_text(b, sort_key),
            });
        let room = range
            .limit
            .map_or(usize::MAX, |limit| limit - outcome.items.len());
        outcome.items.extend(merged.take(room));
        if range.limit.is_some_and(|limit| outcome.items.len() >= limit) {
            break;
        }
    }
    Ok(outcome)
}

pub(super) fn sort_text<'a>(item: &'a Item, sort_key: &str) -> &'a str {
    item.get(sort_key)
        .and_then(|v| v.as_s().ok())
        .map_or("", String::as_str)
}

/// Checks a range (before any call) and lists what to read: its tables in reading order, and
/// the partition keys of the shards to read in each.
pub(super) fn reads_of(
    layout: &Layout,
    range: &TimeRange,
) -> Result<(Vec<PeriodTable>, Vec<String>), QueryError> {
    check(layout, range)?;
    let mut tables = tables_between(layout.policy(), range.from, range.to)?;
    if range.order == Order::NewestFirst {
        tables.reverse();
    }
    let keys = match range.shard {
        Some(n) => vec![layout.sharding().key(&range.base, n)],
        None => layout.sharding().keys(&range.base),
    };
    Ok((tables, keys))
}

fn check(layout: &Layout, range: &TimeRange) -> Result<(), QueryError> {
    let invalid = |field, found: String, allowed: String| {
        Err(QueryError::Invalid {
            field,
            found,
            allowed,
        })
    };
    if range.base.is_empty() {
        return invalid(
            "base",
            "empty".into(),
            "use the base key the items were written with".into(),
        );
    }
    if range.limit == Some(0) {
        return invalid("limit", "0".into(), "use at least 1, or no limit".into());
    }
    if range.page_size == Some(0) {
        return invalid(
            "page_size",
            "0".into(),
            "use at least 1, or none for 1 MB pages".into(),
        );
    }
    if range.concurrency == 0 {
        return invalid("concurrency", "0".into(), "use at least 1".into());
    }
    let shards = layout.sharding().shards();
    if let Some(n) = range.shard.filter(|n| !(1..=shards).contains(n)) {
        return invalid(
            "shard",
            n.to_string(),
            format!("use 1 to {shards}, the shard count"),
        );
    }
    Ok(())
}

/// One (table, shard) pair's items, in the requested order.
struct ShardRead {
    table: String,
    items: Vec<Item>,
    requests: usize,
    missing: bool,
}

async fn read_shard(
    client: &Client,
    layout: &Layout,
    range: &TimeRange,
    table: &PeriodTable,
    partition_key: &str,
) -> Result<ShardRead, QueryError> {
    let mut pages = shard_pages(client, layout, range, table, partition_key);
    let mut read = ShardRead {
        table: table.name.clone(),
        items: Vec::new(),
        requests: 0,
        missing: false,
    };
    while let Some(page) = next_page(&mut pages, table, partition_key).await {
        read.requests += 1;
        match page? {
            Page::Items(items) => read.items.extend(items),
            Page::TableMissing => {
                read.missing = true;
                break;
            }
        }
        if let Some(limit) = range.limit.filter(|&limit| read.items.len() >= limit) {
            read.items.truncate(limit);
            break;
        }
    }
    Ok(read)
}

/// The pages of one (table, shard) pair; no call is made until the first page is awaited.
pub(super) type ShardPages = PaginationStream<Result<QueryOutput, SdkError<SdkQueryError, HttpResponse>>>;

pub(super) fn shard_pages(
    client: &Client,
    layout: &Layout,
    range: &TimeRange,
    table: &PeriodTable,
    partition_key: &str,
) -> ShardPages {
    // BETWEEN is inclusive, but every sort key is `time#suffix`, longer than the bare time:
    // items at `to` sort above the upper bound, items at `from` above the lower one.
    let lower = sort_key_time(range.from.max(table.start));
    let upper = sort_key_time(range.to.min(table.end));
    // A shard never needs more than `limit` items, so no page asks for more.
    let page_size = match (range.page_size, range.limit) {
        (Some(size), Some(limit)) => Some(size.min(limit)),
        (size, limit) => size.or(limit),
    }
    .map(|size| i32::try_from(size).unwrap_or(i32::MAX));
    client
        .query()
        .table_name(&table.name)
        .key_condition_expression("#pk = :pk AND #sk BETWEEN :lower AND :upper")
        .expression_attribute_names("#pk", layout.partition_key())
        .expression_attribute_names("#sk", layout.sort_key())
        .expression_attribute_values(":pk", AttributeValue::S(partition_key.to_string()))
        .expression_attribute_values(":lower", AttributeValue::S(lower))
        .expression_attribute_values(":upper", AttributeValue::S(upper))
        .scan_index_forward(range.order == Order::OldestFirst)
        .consistent_read(range.consistent_read)
        .set_limit(page_size)
        .into_paginator()
        .send()
}

/// One page of a shard, or the news that its table does not exist.
pub(super) enum Page {
    Items(Vec<Item>),
    TableMissing,
}

/// The next page; `None` after the last one.
pub(super) async fn next_page(
    pages: &mut ShardPages,
    table: &PeriodTable,
    partition_key: &str,
) -> Option<Result<Page, QueryError>> {
    let page = match pages.next().await? {
        Ok(page) => Ok(Page::Items(page.items.unwrap_or_default())),
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception()) =>
        {
            Ok(Page::TableMissing)
        }
        Err(e) => Err(QueryError::Sdk {
            table: table.name.clone(),
            partition_key: partition_key.to_string(),
            source: Box::new(e.into()),
        }),
    };
    Some(page)
}
