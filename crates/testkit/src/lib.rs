//! Test fixture: a fresh local DynamoDB-speaking server per test: moto, dynalite, or AWS's
//! DynamoDB Local.
//!
//! Servers are started and stopped through `scripts/local-ddb.sh`, which must have been
//! installed first with `scripts/local-ddb.sh install` (nothing is installed from here).
//! Each [`LocalDynamo`] owns one server process on a loopback port; dropping it stops
//! that process. The script is also told this test process's PID, so a test run killed
//! before its destructors ran leaves no server behind for long (about a second).
//!
//! [`Proxy`] sits in front of such a server and injects the failures real AWS produces
//! (dropped or reset connections, 5xx, throttling, a table deleted between two calls), and
//! behaves as an account does: AWS's per-account API rates, the table quota, and a round trip
//! per call.
//!
//! Where a server departs from AWS in a way the engine must not have to know about, the
//! [`LocalDynamo`] itself behaves like AWS: dynalite drops the tags given to CreateTable, so a
//! dynalite [`LocalDynamo`] is reached through a [`Proxy`] that applies them
//! ([`Proxy::tags_at_create_table`]), and every client of its [`LocalDynamo::endpoint`] (the
//! SDK, the CLI binary, a Lambda handler) sees tables carry their CreateTable tags as on AWS.
//! Likewise moto replaces a table's attribute definitions with those an UpdateTable names (AWS
//! adds them), so a moto [`LocalDynamo`] is reached through a [`Proxy`] that sends the table's
//! own along ([`Proxy::attribute_definitions_at_update_table`]), and moto lowers a warm
//! throughput that AWS refuses to lower, which that proxy refuses ([`Proxy::warm_never_lowered`]).
//!
//! An index: each concern in its own module, from the bottom: `client` (SDK configuration and
//! child environment), `http` (plain HTTP for what the SDK does not do), `proxy` (which uses
//! only those), `launcher` (the servers, behind a proxy where needed), `s3` (moto's S3),
//! `tables` (reading results back), `runs` (binaries under test), `emf` (metric logs).

mod client;
pub mod emf;
mod http;
mod launcher;
pub mod proxy;
mod runs;
mod s3;
mod tables;

pub use client::{endpoint_env, sdk_config, ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY};
pub use http::{http_exchange, http_request, http_request_with_body, percent_encode};
pub use launcher::{pid_alive, repo_root, LocalDynamo, Server};
pub use proxy::{Call, Fault, Proxy, Rule, AWS_RATES, DEFAULT_TABLE_QUOTA, MOTO_ACCOUNT};
pub use runs::{report_lines, ProcessRun};
pub use tables::{
    all_table_names, capacities, capacity_of, create_keyed, create_plain_table, describe, describe_all,
    is_ledger_name, ledgers, scan, table_arn, table_names, tags_of, throughput,
};
