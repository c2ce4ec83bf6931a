//! The consumer: reads every record of the family's one Kinesis stream (each shard from its
//! oldest record, ListShards + GetShardIterator TRIM_HORIZON + GetRecords) and hands each
//! record's bytes to the tally. Every table of the family streams into that one stream, so one
//! reader sees every period's changes, interleaved.

use std::error::Error;
use std::time::Duration;

use aws_config::{BehaviorVersion, Region};
use aws_sdk_kinesis::types::ShardIteratorType;
use aws_sdk_kinesis::Client;

use crate::args::Args;

/// GetRecords calls per shard before the reader gives up on reaching the shard's end.
const MAX_CALLS_PER_SHARD: usize = 10_000;

/// Kinesis serves five GetRecords calls a second per shard: an empty page that is still behind
/// the tip waits this long before the next call.
const EMPTY_PAGE_PAUSE: Duration = Duration::from_millis(200);

/// Every record's data read, and how many calls it took.
#[derive(Debug, Default)]
pub(crate) struct StreamRead {
    pub records: Vec<Vec<u8>>,
    pub shards: usize,
    pub get_records_calls: usize,
}

/// A Kinesis client for the flags' region and endpoint, from the usual chain.
pub(crate) async fn client(args: &Args) -> Client {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if let Some(region) = &args.region {
        loader = loader.region(Region::new(region.clone()));
    }
    if let Some(endpoint) = &args.endpoint_url {
        loader = loader.endpoint_url(endpoint);
    }
    Client::new(&loader.load().await)
}

/// The stream as Kinesis calls take it: an ARN (`arn:...:stream/NAME`) or a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StreamId {
    Arn(String),
    Name(String),
}

impl StreamId {
    pub(crate) fn parse(text: &str) -> StreamId {
        if text.starts_with("arn:") {
            StreamId::Arn(text.to_string())
        } else {
            StreamId::Name(text.to_string())
        }
    }

    fn arn(&self) -> Option<String> {
        match self {
            StreamId::Arn(arn) => Some(arn.clone()),
            StreamId::Name(_) => None,
        }
    }

    fn name(&self) -> Option<String> {
        match self {
            StreamId::Name(name) => Some(name.clone()),
            StreamId::Arn(_) => None,
        }
    }
}

/// Reads every shard from its oldest record to its end (a closed shard) or to the tip (an open
/// one: an empty page with nothing left behind it).
pub(crate) async fn read_all(client: &Client, stream: &StreamId) -> Result<StreamRead, Box<dyn Error>> {
    let mut read = StreamRead::default();
    for shard in list_shards(client, stream).await? {
        read.shards += 1;
        let mut iterator = client
            .get_shard_iterator()
            .set_stream_arn(stream.arn())
            .set_stream_name(stream.name())
            .shard_id(&shard)
            .shard_iterator_type(ShardIteratorType::TrimHorizon)
            .send()
            .await?
            .shard_iterator;
        let mut calls = 0;
        while let Some(current) = iterator {
            if calls == MAX_CALLS_PER_SHARD {
                return Err(
                    format!("shard {shard}: no end after {MAX_CALLS_PER_SHARD} GetRecords calls").into(),
                );
            }
            calls += 1;
            let page = client
                .get_records()
                .shard_iterator(current)
                .set_stream_arn(stream.arn())
                .send()
                .await?;
            let empty = page.records.is_empty();
            read.records
                .extend(page.records.into_iter().map(|r| r.data.into_inner()));
            let behind = page.millis_behind_latest.unwrap_or(0) > 0;
            iterator = page.next_shard_iterator;
            if empty && !behind {
                break;
            }
            if empty {
                tokio::time::sleep(EMPTY_PAGE_PAUSE).await;
            }
        }
        read.get_records_calls += calls;
    }
    Ok(read)
}

async fn list_shards(client: &Client, stream: &StreamId) -> Result<Vec<String>, Box<dyn Error>> {
    let mut shards = Vec::new();
    let mut next_token: Option<String> = None;
    loop {
        // With a NextToken, ListShards takes neither the stream's name nor its ARN.
        let request = match &next_token {
            Some(token) => client.list_shards().next_token(token),
            None => client
                .list_shards()
                .set_stream_arn(stream.arn())
                .set_stream_name(stream.name()),
        };
        let page = request.send().await?;
        shards.extend(page.shards().iter().map(|s| s.shard_id().to_string()));
        next_token = page.next_token;
        if next_token.is_none() {
            return Ok(shards);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arns_and_names_go_to_their_own_parameter() {
        let arn = StreamId::parse("arn:aws:kinesis:eu-west-1:123456789012:stream/iot-changes");
        assert_eq!(
            arn.arn().as_deref(),
            Some("arn:aws:kinesis:eu-west-1:123456789012:stream/iot-changes")
        );
        assert_eq!(arn.name(), None);
        let name = StreamId::parse("iot-changes");
        assert_eq!((name.arn(), name.name().as_deref()), (None, Some("iot-changes")));
    }
}
