//! The engine's control-plane ports on the fake: one module a port, each answering as the SDK
//! adapter would over AWS.

mod archives;
mod clock;
mod dynamodb;
mod lambda;
mod ledger;
mod scaling;
