//! The system tests: everything that starts a local DynamoDB server (moto, dynalite, AWS's
//! DynamoDB Local; `scripts/local-ddb.sh install` puts them under `.local/`) or runs the CLI,
//! the example, the Lambda handlers or the SAM template end to end. One test binary, so the SDK
//! links once; one module per area, one file per former test binary. `scripts/test.sh` runs
//! them with everything else; some of them alone, by name:
//! `cargo nextest run --workspace cli::faults::vanish::vanished` or
//! `cargo test --workspace --test system -- cli::faults::vanish::vanished`. With `--workspace` (rather
//! than `-p`) Cargo resolves the same features as scripts/test.sh and builds nothing again.

mod support;

/// Results computed by the application helpers, read back from moto.
mod app;
/// The `ddb-rollover` binary against local servers, behind the fault-injecting proxy.
mod cli;
/// The SAM template: IAM policies evaluated on the calls the functions really send, schedule
/// inputs through the handlers.
mod deploy;
/// The engine's SDK adapter and runs against each local server.
mod engine;
/// The `iot-ingest` example's binary against moto.
mod example;
/// The Lambda handlers against local servers.
mod lambda;
/// The testkit's servers and proxy behave as AWS does where the engine relies on it.
mod local_servers;
