//! moto's Kinesis as the tests' consumers read it: a one-shard stream made for a test, and every
//! record in it, oldest first.

use aws_sdk_kinesis::types::{Record, ShardIteratorType};

/// Creates the one-shard stream `name` and returns its ARN.
pub(crate) async fn create_stream(kinesis: &aws_sdk_kinesis::Client, name: &str) -> String {
    kinesis
        .create_stream()
        .stream_name(name)
        .shard_count(1)
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateStream {name}: {e:?}"));
    let summary = kinesis
        .describe_stream_summary()
        .stream_name(name)
        .send()
        .await
        .unwrap();
    summary
        .stream_description_summary()
        .unwrap()
        .stream_arn()
        .to_owned()
}

/// Every record in the one-shard stream `arn`, oldest first (GetRecords until a page comes back
/// empty, at most 100 pages).
pub(crate) async fn records(kinesis: &aws_sdk_kinesis::Client, arn: &str) -> Vec<Record> {
    let shards = kinesis.list_shards().stream_arn(arn).send().await.unwrap();
    let shard = shards.shards()[0].shard_id().to_owned();
    let mut iterator = kinesis
        .get_shard_iterator()
        .stream_arn(arn)
        .shard_id(shard)
        .shard_iterator_type(ShardIteratorType::TrimHorizon)
        .send()
        .await
        .unwrap()
        .shard_iterator()
        .map(str::to_owned);
    let mut all = Vec::new();
    for _ in 0..100 {
        let Some(current) = iterator.take() else {
            return all;
        };
        let page = kinesis
            .get_records()
            .stream_arn(arn)
            .shard_iterator(current)
            .send()
            .await
            .unwrap();
        if page.records().is_empty() {
            return all;
        }
        all.extend(page.records().iter().cloned());
        iterator = page.next_shard_iterator().map(str::to_owned);
    }
    panic!("stream {arn} did not run out of records in 100 pages");
}
