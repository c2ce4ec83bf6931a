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
mod knobs;
mod ledger_acts;
mod ledger_promises;
mod loud;
mod mapping_acts;
mod names;
mod policies;
mod stats;
mod status;
mod steps;
mod stream_acts;
mod tally;

pub use account::*;
pub use converges::*;
pub use data_loss::*;
pub use facts::*;
pub use ground::*;
pub use harness::*;
pub use knobs::*;
pub use ledger_acts::*;
pub use ledger_promises::*;
pub use loud::*;
pub use names::*;
pub use policies::*;
pub use stats::*;
pub use status::*;
pub use steps::*;
pub use tally::*;
