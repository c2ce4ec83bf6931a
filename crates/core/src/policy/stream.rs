//! `[stream]`: one change stream for the whole family. Every table of the family streams its
//! item changes into the one Kinesis data stream the policy names (DynamoDB's Kinesis Data
//! Streams destination, `EnableKinesisStreamingDestination`), so a consumer attaches once
//! instead of once per period.
//!
//! The ARN is the positive evidence a destination is ours: a table's destination to any other
//! stream is someone else's (see [`crate::plan::verdict`]). AWS's facts it rests on (DynamoDB
//! API Reference, EnableKinesisStreamingDestination): `StreamArn` is 37 to 1024 characters;
//! `ApproximateCreationDateTimePrecision` is `MILLISECOND` or `MICROSECOND`.

use std::fmt;

use serde::{Deserialize, Serialize};

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
}

/// The validated `[stream]` section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ChangeStream {
    /// The family's Kinesis destination; `None`: tables get none from this policy.
    pub kinesis: Option<KinesisDestination>,
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
        if arn != "arn" || partition.is_empty() {
            return wrong("does not start with arn:PARTITION:");
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
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(ChangeStream {
            kinesis: stream_arn.map(|stream_arn| KinesisDestination {
                stream_arn,
                precision: precision.expect("checked above"),
            }),
        })
    }
}

impl ChangeStream {
    /// Whether the section asks for nothing.
    pub fn is_empty(&self) -> bool {
        self.kinesis.is_none()
    }

    /// The document that validates to this section; `None` when it asks for nothing, so the
    /// policy document (and its hash) of a policy without `[stream]` stays as it was.
    pub fn to_document(&self) -> Option<StreamDocument> {
        let kinesis = self.kinesis.as_ref()?;
        Some(StreamDocument {
            kinesis: Some(kinesis.stream_arn.to_string()),
            precision: (kinesis.precision != Precision::default())
                .then(|| kinesis.precision.as_policy_str().to_string()),
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
        };
        let fields: Vec<&str> = doc.validate().unwrap_err().iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["precision", "kinesis"]);
        let lonely = StreamDocument {
            kinesis: None,
            precision: Some("microsecond".into()),
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
            };
            let stream = doc.validate().unwrap();
            assert_eq!(stream.to_document(), Some(doc));
        }
    }
}
