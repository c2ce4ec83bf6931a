//! The names the scenarios play with: the family, its sibling, the people, the streams and the
//! functions a case creates or only names.

/// The family the cases' policies name (our runs' table prefix).
pub const PREFIX: &str = "ts";
/// Another family whose prefix begins with ours (`ts_eu_...` tables look like ours by name).
pub const SIBLING: &str = "ts_eu";
/// Who the sibling family's runs act as.
pub const SIBLING_ACTOR: &str = "family ts_eu";
/// A person acting on the account by hand.
pub const PERSON: &str = "someone";
/// The Kinesis data stream a policy with `[stream]` names (the one the family's role may
/// stream into), created when its case starts.
pub use aws_model::family_role::FAMILY_STREAM;
/// Someone else's Kinesis data stream, which exists once [`Act::ForeignDestination`] made it.
pub const FOREIGN_STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/someone-elses";
/// A Kinesis data stream nobody made: a destination into it ends ENABLE_FAILED.
pub const MISSING_STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/never-made";
/// The Lambda function a policy with `[stream.lambda]` names (the stack's ConsumerFunctionArn),
/// created when its case starts unless an act deletes it.
pub use aws_model::family_role::FAMILY_CONSUMER;
/// Someone else's Lambda function, which exists once [`Act::ForeignMapping`] made it.
pub const FOREIGN_CONSUMER: &str = "arn:aws:lambda:us-east-1:123456789012:function:someone-elses-consumer";
/// Who creates the family's stream when a case starts.
pub const OPERATOR: &str = "operator";
