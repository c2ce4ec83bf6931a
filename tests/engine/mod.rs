/// The promises' scenarios, shared with the property test over the in-memory account in the
/// engine's own tests (`crates/core/tests/engine/promises.rs`): one file, compiled into both.
#[path = "../../crates/core/tests/engine/scenarios.rs"]
mod scenarios;

mod archive_moto;
mod autoscaling_moto;
mod ddblocal;
mod grace;
mod indexes;
mod no_autoscaling_servers;
mod promises_moto;
mod sdk_moto;
