//! The promises' scenarios, checked after every run of ours and shared by the property test
//! over the in-memory account (the engine's `promises.rs`, on [`fake_aws::FakeAws`]) and its
//! sampled replay on moto (the system tests' `tests/engine/promises_moto/`): random policies
//! ([`PolicySpec`]), steps ([`Step`], [`Act`]), the ground truth of whose each object is
//! ([`Ground`]), the five promises over one run's facts ([`RunFacts`]), and a [`Harness`] that
//! plays a [`Case`] in any [`Account`].

mod account;
mod acts;
mod converges;
mod data_loss;
mod facts;
mod ground;
mod harness;
mod ledger_acts;
mod ledger_promises;
mod loud;
mod mapping_acts;
mod policies;
mod stats;
mod status;
mod steps;
mod stream_acts;

pub use account::*;
pub use converges::*;
pub use data_loss::*;
pub use facts::*;
pub use ground::*;
pub use harness::*;
pub use ledger_acts::*;
pub use ledger_promises::*;
pub use loud::*;
pub use policies::*;
pub use stats::*;
pub use status::*;
pub use steps::*;

pub const PREFIX: &str = "ts";
pub const SIBLING: &str = "ts_eu";
pub const SIBLING_ACTOR: &str = "family ts_eu";
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
