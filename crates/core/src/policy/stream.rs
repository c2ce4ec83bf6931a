//! `[stream]`: one change stream for the whole family, so a consumer attaches once instead of
//! once per period. Either or both of:
//! - `kinesis`: every table streams its item changes into the one Kinesis data stream the
//!   policy names (DynamoDB's Kinesis Data Streams destination,
//!   `EnableKinesisStreamingDestination`);
//! - `[stream.lambda]`: each table's DynamoDB stream gets a Lambda event source mapping to the
//!   one consumer function the policy names, made with the table and removed with it.
//!
//! The stream's ARN, and the function's on the table's stream, are the positive evidence a
//! destination or a mapping is ours: any other is someone else's (see [`crate::plan::verdict`]).
//! AWS's facts it rests on: EnableKinesisStreamingDestination's `StreamArn` is 37 to 1024
//! characters and `ApproximateCreationDateTimePrecision` is `MILLISECOND` or `MICROSECOND`;
//! CreateEventSourceMapping on a DynamoDB stream takes a `BatchSize` of 1 to 10,000 (default
//! 100) and a `StartingPosition` of `TRIM_HORIZON` or `LATEST`, and a mapping has at most 5
//! filters (Lambda's default quota) of at most 4,096 characters each.

use std::fmt;

use serde::{Deserialize, Serialize};

/// AWS's partitions, the second part of every ARN (the SDK's endpoint rules list the same);
/// template.yaml's `AllowedPattern`s for the stream and consumer ARNs spell them alike.
pub const AWS_PARTITIONS: [&str; 8] = [
    "aws",
    "aws-cn",
    "aws-us-gov",
    "aws-eusc",
    "aws-iso",
    "aws-iso-b",
    "aws-iso-e",
    "aws-iso-f",
];

/// The `[stream]` section as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamDocument {
    /// The Kinesis data stream every table of the family streams its changes into:
    /// `arn:aws:kinesis:REGION:ACCOUNT:stream/NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinesis: Option<String>,
    /// The precision of each record's `ApproximateCreationDateTime`: `"millisecond"`
    /// (default) or `"microsecond"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    /// `[stream.lambda]`: the consumer function mapped to each table's DynamoDB stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda: Option<LambdaDocument>,
}

/// The `[stream.lambda]` section as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LambdaDocument {
    /// The consumer function's ARN: `arn:aws:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Records per invocation, 1 to 10,000 (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u32>,
    /// Where a new mapping starts reading: `"trim_horizon"` (default: every record the stream
    /// holds) or `"latest"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_position: Option<String>,
    /// Lambda event filter patterns (JSON objects), at most 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<String>>,
}

/// The validated `[stream]` section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ChangeStream {
    /// The family's Kinesis destination; `None`: tables get none from this policy.
    pub kinesis: Option<KinesisDestination>,
    /// The family's consumer function on each table's DynamoDB stream; `None`: no mapping.
    pub lambda: Option<LambdaConsumer>,
}

/// The consumer function every table's DynamoDB stream is mapped to, and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LambdaConsumer {
    /// The function's ARN: a mapping to it on one of our tables' streams is ours.
    pub function: FunctionArn,
    /// Records per invocation.
    pub batch_size: u32,
    /// Where a new mapping starts reading.
    pub starting_position: StartingPosition,
    /// Event filter patterns, as written (each a JSON object).
    pub filters: Vec<String>,
}

/// Lambda's bounds on a DynamoDB stream mapping's batch size, and its default.
pub(crate) const BATCH_SIZES: std::ops::RangeInclusive<u32> = 1..=10_000;
const DEFAULT_BATCH_SIZE: u32 = 100;
/// Lambda's default quota of filters on one event source mapping.
pub(crate) const MAX_FILTERS: usize = 5;
/// Lambda's limit on one filter pattern's length.
pub(crate) const MAX_FILTER_LENGTH: usize = 4096;

/// A Lambda function's ARN, checked: `arn:PARTITION:lambda:REGION:ACCOUNT:function:NAME`,
/// optionally with `:VERSION` or `:ALIAS` (not `:$LATEST`, which is the unqualified ARN). A full ARN, not a name: Lambda reports a mapping's
/// function as its ARN, and that is what tells ours from someone else's.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct FunctionArn(String);

impl FunctionArn {
    /// The ARN, or what is wrong with it.
    pub fn parse(text: &str) -> Result<FunctionArn, String> {
        let wrong = |why: &str| {
            Err(format!(
                "{text:?} {why}: use the consumer function's ARN, arn:aws:lambda:REGION:ACCOUNT:function:NAME (optionally :ALIAS or :VERSION)"
            ))
        };
        let parts: Vec<&str> = text.split(':').collect();
        let (qualifier, parts) = match parts.len() {
            7 => (None, &parts[..]),
            8 => (Some(parts[7]), &parts[..7]),
            _ => return wrong("does not have the parts of a function's ARN"),
        };
        let [arn, partition, service, region, account, kind, name] = parts[..] else {
            return wrong("does not have the parts of a function's ARN");
        };
        if arn != "arn" || !AWS_PARTITIONS.contains(&partition) {
            return wrong(&format!(
                "does not start with arn:PARTITION: (an AWS partition: {})",
                AWS_PARTITIONS.join(", ")
            ));
        }
        if service != "lambda" {
            return wrong(&format!("names the service {service:?}, not lambda"));
        }
        if region.is_empty() {
            return wrong("has no Region");
        }
        if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
            return wrong("has no 12-digit account ID");
        }
        if kind != "function" {
            return wrong("is not a function (the resource must be function:NAME)");
        }
        let word = |text: &str, max: usize| {
            (1..=max).contains(&text.len())
                && text
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
        };
        if !word(name, 64) {
            return wrong("has a function name that is not 1 to 64 characters of a-z A-Z 0-9 _ -");
        }
        if qualifier == Some("$LATEST") {
            // Lambda may report the mapping's function without it, and then ours would look
            // like someone else's: the unqualified ARN means the same.
            return wrong("ends in :$LATEST: leave it out (the unqualified ARN is $LATEST)");
        }
        if qualifier.is_some_and(|q| !word(q, 128)) {
            return wrong("has a qualifier that is not a version or an alias");
        }
        Ok(FunctionArn(text.to_string()))
    }

    /// The ARN as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FunctionArn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a new mapping starts reading the table's stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StartingPosition {
    /// The oldest record the stream holds: a mapping made just after its table misses nothing.
    #[default]
    TrimHorizon,
    /// Only records written after the mapping starts.
    Latest,
}

impl StartingPosition {
    /// As the API spells it.
    pub fn as_wire(self) -> &'static str {
        match self {
            StartingPosition::TrimHorizon => "TRIM_HORIZON",
            StartingPosition::Latest => "LATEST",
        }
    }

    fn as_policy_str(self) -> &'static str {
        match self {
            StartingPosition::TrimHorizon => "trim_horizon",
            StartingPosition::Latest => "latest",
        }
    }
}

impl LambdaDocument {
    /// The section, or every problem as (field, what to change).
    fn validate(&self, problems: &mut Vec<(&'static str, String)>) -> Option<LambdaConsumer> {
        let function = match self.function.as_deref().map(FunctionArn::parse) {
            None => {
                problems.push((
                    "lambda.function",
                    "is missing: name the consumer function's ARN, arn:aws:lambda:REGION:ACCOUNT:function:NAME".into(),
                ));
                None
            }
            Some(Ok(arn)) => Some(arn),
            Some(Err(message)) => {
                problems.push(("lambda.function", message));
                None
            }
        };
        let batch_size = self.batch_size.unwrap_or(DEFAULT_BATCH_SIZE);
        if !BATCH_SIZES.contains(&batch_size) {
            problems.push((
                "lambda.batch_size",
                format!(
                    "{batch_size} is out of range: a DynamoDB stream mapping takes {} to {} records a batch",
                    BATCH_SIZES.start(),
                    BATCH_SIZES.end()
                ),
            ));
        }
        let starting_position = match self.starting_position.as_deref() {
            None | Some("trim_horizon") => StartingPosition::TrimHorizon,
            Some("latest") => StartingPosition::Latest,
            Some(other) => {
                problems.push((
                    "lambda.starting_position",
                    format!("unknown starting position {other:?}: use \"trim_horizon\" or \"latest\""),
                ));
                StartingPosition::default()
            }
        };
        let filters = self.filters.clone().unwrap_or_default();
        if filters.len() > MAX_FILTERS {
            problems.push((
                "lambda.filters",
                format!(
                    "has {} filters: a mapping takes at most {MAX_FILTERS} (Lambda's default quota)",
                    filters.len()
                ),
            ));
        }
        for (i, filter) in filters.iter().enumerate() {
            let object = serde_json::from_str::<serde_json::Value>(filter).is_ok_and(|v| v.is_object());
            if !object || filter.len() > MAX_FILTER_LENGTH {
                problems.push((
                    "lambda.filters",
                    format!(
                        "filter {} is not a JSON object of at most {MAX_FILTER_LENGTH} characters (a Lambda filter pattern, e.g. {{\"eventName\": [\"INSERT\"]}})",
                        i + 1
                    ),
                ));
            }
        }
        Some(LambdaConsumer {
            function: function?,
            batch_size,
            starting_position,
            filters,
        })
    }
}

impl LambdaConsumer {
    fn to_document(&self) -> LambdaDocument {
        LambdaDocument {
            function: Some(self.function.to_string()),
            batch_size: (self.batch_size != DEFAULT_BATCH_SIZE).then_some(self.batch_size),
            starting_position: (self.starting_position != StartingPosition::default())
                .then(|| self.starting_position.as_policy_str().to_string()),
            filters: (!self.filters.is_empty()).then(|| self.filters.clone()),
        }
    }
}

/// The Kinesis data stream every table of the family streams into, and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KinesisDestination {
    /// The stream's ARN.
    pub stream_arn: KinesisStreamArn,
    /// The precision of the records' creation times.
    pub precision: Precision,
}

/// A Kinesis data stream's ARN, checked: `arn:PARTITION:kinesis:REGION:ACCOUNT:stream/NAME`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct KinesisStreamArn(String);

impl KinesisStreamArn {
    /// The ARN, or what is wrong with it.
    pub fn parse(text: &str) -> Result<KinesisStreamArn, String> {
        let wrong = |why: &str| {
            Err(format!(
                "{text:?} {why}: use a Kinesis data stream's ARN, arn:aws:kinesis:REGION:ACCOUNT:stream/NAME"
            ))
        };
        if !(37..=1024).contains(&text.len()) {
            return wrong("is not 37 to 1024 characters long (DynamoDB's limits for a StreamArn)");
        }
        let parts: Vec<&str> = text.splitn(6, ':').collect();
        let [arn, partition, service, region, account, resource] = parts[..] else {
            return wrong("does not have the six parts of an ARN");
        };
        if arn != "arn" || !AWS_PARTITIONS.contains(&partition) {
            return wrong(&format!(
                "does not start with arn:PARTITION: (an AWS partition: {})",
                AWS_PARTITIONS.join(", ")
            ));
        }
        if service != "kinesis" {
            return wrong(&format!("names the service {service:?}, not kinesis"));
        }
        if region.is_empty() {
            return wrong("has no Region");
        }
        if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
            return wrong("has no 12-digit account ID");
        }
        let Some(name) = resource.strip_prefix("stream/") else {
            return wrong("is not a stream (the resource must be stream/NAME)");
        };
        let name_ok = (1..=128).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        if !name_ok {
            return wrong("has a stream name that is not 1 to 128 characters of a-z A-Z 0-9 _ . -");
        }
        Ok(KinesisStreamArn(text.to_string()))
    }

    /// The ARN as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KinesisStreamArn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The precision of a Kinesis record's `ApproximateCreationDateTime`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// Epoch milliseconds (DynamoDB's default for the API).
    #[default]
    Millisecond,
    /// Epoch microseconds.
    Microsecond,
}

impl Precision {
    /// As the API spells it: `MILLISECOND`, `MICROSECOND`.
    pub fn as_wire(self) -> &'static str {
        match self {
            Precision::Millisecond => "MILLISECOND",
            Precision::Microsecond => "MICROSECOND",
        }
    }

    /// The precision the API spelled; `None` for one this version does not know.
    pub fn from_wire(text: &str) -> Option<Precision> {
        match text {
            "MILLISECOND" => Some(Precision::Millisecond),
            "MICROSECOND" => Some(Precision::Microsecond),
            _ => None,
        }
    }

    fn as_policy_str(self) -> &'static str {
        match self {
            Precision::Millisecond => "millisecond",
            Precision::Microsecond => "microsecond",
        }
    }
}

impl StreamDocument {
    /// The section, or every problem as (field, what to change).
    pub fn validate(&self) -> Result<ChangeStream, Vec<(&'static str, String)>> {
        let mut problems = Vec::new();
        let precision = match self.precision.as_deref() {
            None | Some("millisecond") => Some(Precision::Millisecond),
            Some("microsecond") => Some(Precision::Microsecond),
            Some(other) => {
                problems.push((
                    "precision",
                    format!("unknown precision {other:?}: use \"millisecond\" or \"microsecond\""),
                ));
                None
            }
        };
        if self.precision.is_some() && self.kinesis.is_none() {
            problems.push((
                "precision",
                "is the precision of the Kinesis records: set kinesis too, or remove this".to_string(),
            ));
        }
        let stream_arn = match self.kinesis.as_deref().map(KinesisStreamArn::parse) {
            None => None,
            Some(Ok(arn)) => Some(arn),
            Some(Err(message)) => {
                problems.push(("kinesis", message));
                None
            }
        };
        let lambda = self.lambda.as_ref().map(|lambda| lambda.validate(&mut problems));
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(ChangeStream {
            kinesis: stream_arn.map(|stream_arn| KinesisDestination {
                stream_arn,
                precision: precision.expect("checked above"),
            }),
            lambda: lambda.flatten(),
        })
    }
}

impl ChangeStream {
    /// Whether the section asks for nothing.
    pub fn is_empty(&self) -> bool {
        self.kinesis.is_none() && self.lambda.is_none()
    }

    /// The document that validates to this section; `None` when it asks for nothing, so the
    /// policy document (and its hash) of a policy without `[stream]` stays as it was.
    pub fn to_document(&self) -> Option<StreamDocument> {
        if self.is_empty() {
            return None;
        }
        let kinesis = self.kinesis.as_ref();
        Some(StreamDocument {
            kinesis: kinesis.map(|k| k.stream_arn.to_string()),
            precision: kinesis
                .filter(|k| k.precision != Precision::default())
                .map(|k| k.precision.as_policy_str().to_string()),
            lambda: self.lambda.as_ref().map(LambdaConsumer::to_document),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARN: &str = "arn:aws:kinesis:eu-west-1:123456789012:stream/timeseries-changes";

    #[test]
    fn a_stream_arn_is_checked_part_by_part() {
        assert_eq!(KinesisStreamArn::parse(ARN).unwrap().as_str(), ARN);
        for (bad, why) in [
            (
                "arn:aws:kinesis:eu-west-1:123456789012:table/x-long-enough-name",
                "not a stream",
            ),
            (
                "arn:aws:sqs:eu-west-1:123456789012:stream/timeseries-changes",
                "not kinesis",
            ),
            (
                "arn:aws:kinesis:eu-west-1:1234:stream/timeseries-changes-xxxxx",
                "12-digit",
            ),
            (
                "arn:aws:kinesis:eu-west-1:123456789012:stream/bad name here!",
                "stream name",
            ),
            (
                "arn:aws:kinesis::123456789012:stream/timeseries-changes-xx",
                "no Region",
            ),
            ("kinesis", "37 to 1024"),
            // Hostile read of issue 41: any partition starting "aws" passed.
            (
                "arn:awsevil:kinesis:eu-west-1:123456789012:stream/timeseries-changes",
                "an AWS partition: aws, aws-cn",
            ),
        ] {
            let message = KinesisStreamArn::parse(bad).unwrap_err();
            assert!(message.contains(why), "{bad}: {message}");
        }
    }

    #[test]
    fn every_bad_field_is_named() {
        let doc = StreamDocument {
            kinesis: Some("arn:aws:kinesis:eu-west-1:123456789012:nope".into()),
            precision: Some("nanosecond".into()),
            lambda: None,
        };
        let fields: Vec<&str> = doc.validate().unwrap_err().iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["precision", "kinesis"]);
        let lonely = StreamDocument {
            precision: Some("microsecond".into()),
            ..StreamDocument::default()
        };
        assert_eq!(lonely.validate().unwrap_err()[0].0, "precision");
    }

    #[test]
    fn the_document_round_trips_and_stays_absent_when_empty() {
        assert_eq!(ChangeStream::default().to_document(), None);
        for precision in [None, Some("microsecond".to_string())] {
            let doc = StreamDocument {
                kinesis: Some(ARN.into()),
                precision,
                lambda: None,
            };
            let stream = doc.validate().unwrap();
            assert_eq!(stream.to_document(), Some(doc));
        }
    }

    const FUNCTION: &str = "arn:aws:lambda:eu-west-1:123456789012:function:ingest-consumer";

    #[test]
    fn a_function_arn_is_checked_part_by_part() {
        for good in [
            FUNCTION,
            "arn:aws:lambda:eu-west-1:123456789012:function:f:live",
            "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:f",
        ] {
            assert_eq!(FunctionArn::parse(good).unwrap().as_str(), good);
        }
        for (bad, why) in [
            (
                "arn:aws:lambda:eu-west-1:123456789012:function:f:$LATEST",
                "leave it out",
            ),
            ("ingest-consumer", "parts"),
            ("arn:aws:sqs:eu-west-1:123456789012:function:f", "not lambda"),
            ("arn:aws:lambda:eu-west-1:1234:function:f", "12-digit"),
            (
                "arn:awsevil:lambda:eu-west-1:123456789012:function:f",
                "an AWS partition",
            ),
            ("arn:aws:lambda:eu-west-1:123456789012:layer:f", "not a function"),
            (
                "arn:aws:lambda:eu-west-1:123456789012:function:bad name",
                "function name",
            ),
            (
                "arn:aws:lambda:eu-west-1:123456789012:function:f:bad qualifier",
                "qualifier",
            ),
        ] {
            let message = FunctionArn::parse(bad).unwrap_err();
            assert!(message.contains(why), "{bad}: {message}");
        }
    }

    #[test]
    fn every_bad_lambda_field_is_named() {
        let doc = StreamDocument {
            lambda: Some(LambdaDocument {
                function: None,
                batch_size: Some(10_001),
                starting_position: Some("at_timestamp".into()),
                filters: Some(vec!["[1]".into(); 6]),
            }),
            ..StreamDocument::default()
        };
        let problems = doc.validate().unwrap_err();
        let fields: std::collections::BTreeSet<&str> = problems.iter().map(|(f, _)| *f).collect();
        assert_eq!(
            fields.into_iter().collect::<Vec<_>>(),
            [
                "lambda.batch_size",
                "lambda.filters",
                "lambda.function",
                "lambda.starting_position"
            ]
        );
        assert_eq!(
            problems.iter().filter(|(f, _)| *f == "lambda.filters").count(),
            7,
            "{problems:?}"
        );
    }

    #[test]
    fn the_lambda_section_round_trips_with_its_defaults_left_out() {
        let doc = StreamDocument {
            lambda: Some(LambdaDocument {
                function: Some(FUNCTION.into()),
                ..LambdaDocument::default()
            }),
            ..StreamDocument::default()
        };
        let stream = doc.validate().unwrap();
        let consumer = stream.lambda.as_ref().unwrap();
        assert_eq!(
            (consumer.batch_size, consumer.starting_position),
            (100, StartingPosition::TrimHorizon)
        );
        assert_eq!(stream.to_document(), Some(doc));
        let full = StreamDocument {
            kinesis: Some(ARN.into()),
            precision: None,
            lambda: Some(LambdaDocument {
                function: Some(FUNCTION.into()),
                batch_size: Some(500),
                starting_position: Some("latest".into()),
                filters: Some(vec![r#"{"eventName": ["INSERT"]}"#.into()]),
            }),
        };
        assert_eq!(full.validate().unwrap().to_document(), Some(full));
    }
}
