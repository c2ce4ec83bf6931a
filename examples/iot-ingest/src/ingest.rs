//! The two halves of an IoT backend: batch-writing readings to the right table and shard, and
//! reading one sensor's time range back across every table and shard.

use std::error::Error;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};
use ddb_rollover_app::query::query;
use ddb_rollover_app::write::Item;
use ddb_rollover_app::{BatchWritten, Layout, QueryError, TimeRange, Writer};

use crate::readings::Reading;

/// Records per `write_batch` call: enough for the writer to keep several BatchWriteItem calls
/// in flight, small enough that a failure names a small slice of the day.
pub(crate) const BATCH_RECORDS: usize = 500;

/// How many of the newest readings the second read asks for.
pub(crate) const LATEST: usize = 5;

#[derive(Clone, Debug, Default)]
pub(crate) struct WriteTotals {
    pub batch: BatchWritten,
    pub time: Duration,
}

/// Writes every reading, `BATCH_RECORDS` at a time; stops at the first incomplete batch.
pub(crate) async fn write(writer: &Writer, readings: &[Reading]) -> Result<WriteTotals, Box<dyn Error>> {
    let started = Instant::now();
    let mut totals = WriteTotals::default();
    for (index, chunk) in readings.chunks(BATCH_RECORDS).enumerate() {
        let records = chunk.iter().map(Reading::record).collect();
        let done = writer.write_batch(records).await.map_err(|e| {
            format!(
                "write incomplete: batch {} ({} records from {}): {e}",
                index + 1,
                chunk.len(),
                chunk[0].time
            )
        })?;
        totals.batch.items += done.items;
        totals.batch.requests += done.requests;
        totals.batch.retries += done.retries;
    }
    totals.time = started.elapsed();
    Ok(totals)
}

/// One sensor's day and its newest readings, as sort keys.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReadBack {
    /// The whole day, oldest first.
    pub day: Vec<String>,
    /// The newest `LATEST`, newest first.
    pub latest: Vec<String>,
    /// Partition keys of the day's items, in the same order.
    pub partitions: Vec<String>,
    pub requests: usize,
    pub missing_tables: Vec<String>,
    pub time: Duration,
}

/// Reads `base` over `[start, end)` twice: the whole range oldest first, then the newest
/// `LATEST` (which stops after the newest table that has enough). Strongly consistent, so
/// items written a moment ago on real DynamoDB are all there.
pub(crate) async fn read(
    client: &Client,
    layout: &Layout,
    base: &str,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<ReadBack, QueryError> {
    let started = Instant::now();
    let range = TimeRange::new(base, start, end).consistent_read();
    let day = query(client, layout, &range).await?;
    let newest = query(client, layout, &range.newest_first().limit(LATEST)).await?;
    let text = |items: &[Item], name: &str| -> Vec<String> {
        items
            .iter()
            .map(|item| {
                item.get(name)
                    .and_then(|v| v.as_s().ok())
                    .cloned()
                    .unwrap_or_default()
            })
            .collect()
    };
    let mut missing_tables = day.missing_tables.clone();
    missing_tables.extend(
        newest
            .missing_tables
            .iter()
            .filter(|t| !day.missing_tables.contains(t))
            .cloned(),
    );
    Ok(ReadBack {
        day: text(&day.items, layout.sort_key()),
        latest: text(&newest.items, layout.sort_key()),
        partitions: text(&day.items, layout.partition_key()),
        requests: day.requests + newest.requests,
        missing_tables,
        time: started.elapsed(),
    })
}
