//! The writer and the fan-out query against aws-smithy-mocks: the answers no local server gives
//! (UnprocessedItems, a server error in the middle of a read).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemOutput;
use aws_sdk_dynamodb::operation::query::{QueryError, QueryOutput};
use aws_sdk_dynamodb::types::error::InternalServerError;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;
use aws_smithy_mocks::{mock, mock_client, RuleMode};
use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use ddb_rollover::Policy;
use ddb_rollover_app::query::{query, QueryError as FanOutError, TimeRange};
use ddb_rollover_app::write::{Backoff, UnwrittenReason};
use ddb_rollover_app::{ItemStream, Layout, Record, ShardChoice, Sharding, WriteError, Writer};

const POLICY: &str = "prefix = \"m\"\n[key]\npartition = { name = \"pk\", type = \"S\" }\nsort = { name = \"sk\", type = \"S\" }\n";

fn layout() -> Layout {
    Layout::new(&Policy::from_toml(POLICY).unwrap(), Sharding::new(2).unwrap()).unwrap()
}

fn noon() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 12, 1, 12, 0, 0).unwrap()
}

fn records(n: i64) -> Vec<Record> {
    (0..n)
        .map(|i| Record::new("b", noon() + TimeDelta::seconds(i)).unique(i.to_string()))
        .collect()
}

fn fast_backoff(max_attempts: u32) -> Backoff {
    Backoff {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(4),
    }
}

#[tokio::test]
async fn unprocessed_items_are_resent_until_written() {
    // Each call leaves the first half of what it was sent unprocessed, until one item is left.
    let sent = Arc::new(std::sync::Mutex::new(Vec::<usize>::new()));
    let seen = sent.clone();
    let rule = mock!(Client::batch_write_item).then_compute_output(move |input| {
        let (table, writes) = input.request_items().unwrap().iter().next().unwrap();
        seen.lock().unwrap().push(writes.len());
        let keep = if writes.len() > 1 { writes.len() / 2 } else { 0 };
        let mut output = BatchWriteItemOutput::builder();
        if keep > 0 {
            output = output.unprocessed_items(table, writes[..keep].to_vec());
        }
        output.build()
    });
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let writer = Writer::new(client, layout()).with_backoff(fast_backoff(10));
    let done = writer.write_batch(records(20)).await.unwrap();
    assert_eq!(done.items, 20);
    // 20 -> 10 -> 5 -> 2 -> 1 left unprocessed, then done.
    assert_eq!(*sent.lock().unwrap(), [20, 10, 5, 2, 1]);
    assert_eq!((done.requests, done.retries), (5, 4));
    assert_eq!(rule.num_calls(), 5);
}

#[tokio::test]
async fn items_left_unprocessed_come_back_pinned_after_the_last_attempt() {
    let rule = mock!(Client::batch_write_item).then_compute_output(|input| {
        let (table, writes) = input.request_items().unwrap().iter().next().unwrap();
        BatchWriteItemOutput::builder()
            .unprocessed_items(table, writes[..1].to_vec())
            .build()
    });
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let writer = Writer::new(client, layout()).with_backoff(fast_backoff(3));
    let err = writer.write_batch(records(30)).await.unwrap_err();
    let WriteError::Incomplete { written, unwritten } = &err else {
        panic!("{err}");
    };
    // Two calls of 25 and 5, each retried twice more with one item left over.
    assert_eq!(rule.num_calls(), 6);
    assert_eq!(*written, 28);
    assert_eq!(unwritten.len(), 1);
    assert_eq!(
        unwritten[0].reason,
        UnwrittenReason::StillUnprocessed { attempts: 3 }
    );
    assert_eq!(unwritten[0].records.len(), 2);
    for record in &unwritten[0].records {
        assert!(
            matches!(record.shard, ShardChoice::Fixed(1..=2)),
            "{:?}",
            record.shard
        );
        assert!(record.unique.is_some());
    }
    assert!(
        err.to_string()
            .contains("m_2024-12-01: 2 items, still unprocessed after 3 attempts"),
        "{err}"
    );
}

#[tokio::test]
async fn records_are_checked_before_any_call() {
    let rule = mock!(Client::batch_write_item).then_output(|| BatchWriteItemOutput::builder().build());
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let writer = Writer::new(client, layout());
    // Same time, suffix and (calculated) shard as the first record: the same item key.
    let mut batch: Vec<Record> = records(5).into_iter().map(|r| r.shard_by("x")).collect();
    batch.push(Record::new("b", noon()).unique("0").shard_by("x"));
    let err = writer.write_batch(batch).await.unwrap_err();
    assert!(matches!(err, WriteError::InvalidRecord { index: 5, .. }), "{err}");
    assert!(err.to_string().contains("same key as an earlier record"), "{err}");
    let mut bad = records(3);
    bad[2].base.clear();
    let err = writer.write_batch(bad).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "record 2: base is empty: use the logical partition key, such as SENSOR#123"
    );
    assert_eq!(rule.num_calls(), 0);
}

#[tokio::test]
async fn a_failing_shard_fails_the_read_and_names_it() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let rule = mock!(Client::query).then_compute_response(move |input| {
        counter.fetch_add(1, Ordering::SeqCst);
        let key = input.expression_attribute_values().unwrap()[":pk"]
            .as_s()
            .unwrap()
            .clone();
        if key == "b#2" {
            aws_smithy_mocks::MockResponse::Error(QueryError::InternalServerError(
                InternalServerError::builder().message("boom").build(),
            ))
        } else {
            let item = [
                ("pk".to_string(), AttributeValue::S(key)),
                (
                    "sk".to_string(),
                    AttributeValue::S(format!("{}#x", noon().to_rfc3339())),
                ),
            ]
            .into_iter()
            .collect();
            aws_smithy_mocks::MockResponse::Output(QueryOutput::builder().items(item).build())
        }
    });
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    let range = TimeRange::new("b", noon(), noon() + TimeDelta::hours(1));
    let layout = layout();
    let err = query(&client, &layout, &range).await.unwrap_err();
    assert!(
        matches!(&err, FanOutError::Sdk { table, partition_key, .. } if table == "m_2024-12-01" && partition_key == "b#2"),
        "{err}"
    );

    // The stream ends after the error: nothing half-merged is yielded.
    let mut stream = ItemStream::new(&client, &layout, &range).unwrap();
    let mut yielded = Vec::new();
    while let Some(item) = stream.next().await {
        yielded.push(item);
    }
    assert_eq!(yielded.len(), 1, "one error, then the end");
    assert!(matches!(&yielded[0], Err(FanOutError::Sdk { partition_key, .. }) if partition_key == "b#2"));

    let bad = TimeRange::new("b", noon(), noon()).shard(3);
    let err = query(&client, &layout, &bad).await.unwrap_err();
    assert_eq!(err.to_string(), "shard is 3: use 1 to 2, the shard count");
    let err = query(&client, &layout, &TimeRange::new("b", noon(), noon()).limit(0))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "limit is 0: use at least 1, or no limit");
    let reversed = TimeRange::new("b", noon(), noon() - TimeDelta::hours(1));
    assert!(query(&client, &layout, &reversed)
        .await
        .unwrap_err()
        .to_string()
        .contains("from"));
    assert!(calls.load(Ordering::SeqCst) <= 4, "bad input makes no call");
}

#[tokio::test]
async fn retries_wait_between_attempts() {
    // A client without a sleep of its own (like this mock) still backs off, with Tokio's.
    let rule = mock!(Client::batch_write_item).then_compute_output(|input| {
        let (table, writes) = input.request_items().unwrap().iter().next().unwrap();
        BatchWriteItemOutput::builder()
            .unprocessed_items(table, writes.clone())
            .build()
    });
    let client = mock_client!(aws_sdk_dynamodb, RuleMode::MatchAny, [&rule]);
    assert!(client.config().sleep_impl().is_none());
    let backoff = Backoff {
        max_attempts: 4,
        base_delay: Duration::from_millis(40),
        max_delay: Duration::from_secs(1),
    };
    let writer = Writer::new(client, layout()).with_backoff(backoff);
    let started = std::time::Instant::now();
    assert!(writer.write_batch(records(1)).await.is_err());
    // Three waits of at least half of 40, 80 and 160 ms.
    assert!(
        started.elapsed() >= Duration::from_millis(140),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(rule.num_calls(), 4);
}
