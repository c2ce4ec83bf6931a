//! A local server as the system tests reach it, for scripts: starts moto, dynalite or DynamoDB
//! Local with [`LocalDynamo::start`] (through `scripts/local-ddb.sh`, installed first), behind
//! the AWS-behaviour layer the tests use (moto: Kinesis destinations, export layout, resource
//! policies enforced, S3 as AWS answers it, ...; dynalite: CreateTable's tags; DynamoDB Local:
//! none), prints the endpoint clients should use on one line, and serves until its stdin is
//! closed (then stops the server). Killed instead, it leaves no server behind for long: the
//! launcher gave the server this process's PID to watch.
//!
//!   cargo run -p testkit --example aws_layer -- [moto|dynalite|ddblocal]
//!
//! `scripts/demo.sh` runs it.

use std::io::Read;

use testkit::{LocalDynamo, Server};

fn main() {
    let server = match std::env::args().nth(1).as_deref().unwrap_or("moto") {
        "moto" => Server::Moto,
        "dynalite" => Server::Dynalite {
            create_ms: 0,
            update_ms: 0,
        },
        "ddblocal" => Server::DynamoDbLocal,
        other => {
            eprintln!("aws_layer: unknown server {other:?}: moto, dynalite or ddblocal");
            std::process::exit(2);
        }
    };
    let local = LocalDynamo::start(server);
    println!("{}", local.endpoint());
    // Until whoever started us closes our stdin (or exits): a read error ends it too.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(local);
}
