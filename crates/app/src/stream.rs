//! A time-range read as a stream: items come out merged in order while later pages are still
//! unread, and memory holds at most one page per shard of the current table, however long the
//! range. [`query`](super::query::query) is faster for ranges that fit in memory (it reads
//! tables in parallel) but collects everything first.

use std::collections::VecDeque;

use aws_sdk_dynamodb::Client;
use futures::stream::{self, StreamExt};

use crate::layout::Layout;
use crate::query::{
    next_page, reads_of, shard_pages, sort_text, Order, Page, QueryError, ShardPages, TimeRange,
};
use crate::write::Item;
use ddb_rollover::route::PeriodTable;

/// The items of one [`TimeRange`], one at a time:
///
/// ```no_run
/// # async fn example(client: aws_sdk_dynamodb::Client, layout: ddb_rollover_app::Layout, range: ddb_rollover_app::TimeRange) -> Result<(), ddb_rollover_app::QueryError> {
/// let mut items = ddb_rollover_app::ItemStream::new(&client, &layout, &range)?;
/// while let Some(item) = items.next().await {
///     println!("{:?}", item?);
/// }
/// println!("tables that do not exist: {:?}", items.missing_tables());
/// # Ok(())
/// # }
/// ```
pub struct ItemStream<'a> {
    client: &'a Client,
    layout: &'a Layout,
    range: &'a TimeRange,
    keys: Vec<String>,
    tables: std::vec::IntoIter<PeriodTable>,
    /// The table being read, with one cursor per shard; `None` between tables.
    current: Option<(PeriodTable, Vec<Cursor>)>,
    yielded: usize,
    requests: usize,
    missing_tables: Vec<String>,
}

/// One shard of the current table: its unread pages and the rest of the page in hand.
struct Cursor {
    key: String,
    pages: ShardPages,
    buffer: VecDeque<Item>,
    exhausted: bool,
}

impl<'a> ItemStream<'a> {
    /// Checks the range (before any call); nothing is read until [`next`](Self::next).
    pub fn new(
        client: &'a Client,
        layout: &'a Layout,
        range: &'a TimeRange,
    ) -> Result<ItemStream<'a>, QueryError> {
        let (tables, keys) = reads_of(layout, range)?;
        Ok(ItemStream {
            client,
            layout,
            range,
            keys,
            tables: tables.into_iter(),
            current: None,
            yielded: 0,
            requests: 0,
            missing_tables: Vec::new(),
        })
    }

    /// The next item in order; `None` at the end of the range or the limit. After an error the
    /// stream ends.
    pub async fn next(&mut self) -> Option<Result<Item, QueryError>> {
        loop {
            if self.range.limit.is_some_and(|limit| self.yielded >= limit) {
                return None;
            }
            let Some((table, cursors)) = &mut self.current else {
                let table = self.tables.next()?;
                let cursors = self.open(&table);
                self.current = Some((table, cursors));
                continue;
            };
            // Refill every shard whose page ran out, up to `concurrency` at once.
            let dry = cursors.iter_mut().filter(|c| c.buffer.is_empty() && !c.exhausted);
            let table_ref = &*table;
            let pages: Vec<_> = stream::iter(dry)
                .map(|cursor| async move {
                    let page = next_page(&mut cursor.pages, table_ref, &cursor.key).await;
                    (cursor, page)
                })
                .buffer_unordered(self.range.concurrency)
                .collect()
                .await;
            let mut missing = false;
            for (cursor, page) in pages {
                match page {
                    None => cursor.exhausted = true,
                    Some(Ok(Page::Items(items))) => {
                        self.requests += 1;
                        cursor.buffer.extend(items);
                    }
                    Some(Ok(Page::TableMissing)) => {
                        self.requests += 1;
                        missing = true;
                    }
                    Some(Err(error)) => {
                        self.requests += 1;
                        self.current = None;
                        self.tables = Vec::new().into_iter();
                        return Some(Err(error));
                    }
                }
            }
            if missing {
                tracing::warn!(table = %table.name, "skipping a table of the range that does not exist");
                self.missing_tables.push(table.name.clone());
                self.current = None;
                continue;
            }
            // An empty page with more to come: read on before comparing heads.
            if cursors.iter().any(|c| c.buffer.is_empty() && !c.exhausted) {
                continue;
            }
            let sort_key = self.layout.sort_key();
            let order = self.range.order;
            let next = cursors
                .iter_mut()
                .filter(|c| !c.buffer.is_empty())
                .reduce(|best, c| {
                    let (a, b) = (
                        sort_text(&c.buffer[0], sort_key),
                        sort_text(&best.buffer[0], sort_key),
                    );
                    let earlier = match order {
                        Order::OldestFirst => a < b,
                        Order::NewestFirst => a > b,
                    };
                    if earlier {
                        c
                    } else {
                        best
                    }
                });
            match next.and_then(|cursor| cursor.buffer.pop_front()) {
                Some(item) => {
                    self.yielded += 1;
                    return Some(Ok(item));
                }
                None => self.current = None,
            }
        }
    }

    /// Query calls made so far, one per page.
    pub fn requests(&self) -> usize {
        self.requests
    }

    /// Tables of the range found not to exist so far: skipped.
    pub fn missing_tables(&self) -> &[String] {
        &self.missing_tables
    }

    fn open(&self, table: &PeriodTable) -> Vec<Cursor> {
        self.keys
            .iter()
            .map(|key| Cursor {
                key: key.clone(),
                pages: shard_pages(self.client, self.layout, self.range, table, key),
                buffer: VecDeque::new(),
                exhausted: false,
            })
            .collect()
    }
}
