//! ddb-rollover's engine on AWS: the ports of `ddb-rollover` (the crate `ddb_rollover`, which
//! names no SDK type) on the SDK's clients. [`dynamodb::DynamoDb`] is the
//! [`ControlPlane`](ddb_rollover::control::ControlPlane) on the DynamoDB, Application Auto Scaling and
//! Lambda clients; archives in S3, the published table names in Systems Manager and the runs'
//! events in EventBridge are each on their own SDK client behind a feature of the same name
//! (`s3`, `ssm`, `eventbridge`), so a function links only the clients it calls. [`sdk`] sets
//! the clients up, once.

#[cfg(feature = "s3")]
pub mod archive;
pub(crate) mod autoscaling;
pub mod call_error;
pub mod dynamodb;
pub mod events;
pub(crate) mod lambda;
#[cfg(feature = "ssm")]
pub mod parameters;
pub mod sdk;

use ddb_rollover::control::{ControlPlaneError, ErrorKind};

/// Whose answers the clients read: AWS's, or a local server's (moto, dynalite, DynamoDB Local:
/// an endpoint on loopback). Only a local server's answer can mean "this API is not here"
/// ([`ErrorKind::Unsupported`]: its reads are
/// skipped and said once); from AWS the same answer is a failure like any other, since a read
/// AWS refuses (a missing grant, an SCP, a Region without the API) must never pass for "nothing
/// there".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Server {
    /// AWS's endpoints (or any not on loopback).
    #[default]
    Aws,
    /// A DynamoDB-speaking server on this machine.
    Local,
}

impl Server {
    /// The server an endpoint URL names: `Local` for a loopback host (`localhost`, `127.x.x.x`,
    /// `[::1]`), `Aws` for any other and for none (the SDK's own endpoints).
    pub fn of_endpoint(endpoint: Option<&str>) -> Server {
        let Some(endpoint) = endpoint else {
            return Server::Aws;
        };
        let authority = endpoint
            .split_once("://")
            .map_or(endpoint, |(_, rest)| rest)
            .split(['/', '?', '#'])
            .next()
            .unwrap_or_default();
        let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or_default(),
            None => authority.split(':').next().unwrap_or_default(),
        };
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if loopback {
            Server::Local
        } else {
            Server::Aws
        }
    }

    /// `error` as this server's answer means it: an "unsupported" answer from AWS is a failure
    /// ([`ErrorKind::Other`]), saying so.
    pub(crate) fn judge(self, error: ControlPlaneError) -> ControlPlaneError {
        if self == Server::Local || error.kind != ErrorKind::Unsupported {
            return error;
        }
        let message = format!(
            "{} (an AWS endpoint answered that it lacks {}: that is no evidence of anything, so \
             nothing that depends on this read is decided; check the Region and the endpoint)",
            error.message, error.operation
        );
        ControlPlaneError::new(ErrorKind::Other, error.operation, &error.table, message)
    }
}

/// An SDK timestamp (CreationDateTime, ExportTime, Lambda's LastModified) as a UTC instant.
pub(crate) fn utc(time: &aws_smithy_types::DateTime) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::from_timestamp(time.secs(), time.subsec_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_loopback_endpoint_is_a_local_server() {
        for endpoint in [
            "http://127.0.0.1:8000",
            "http://localhost:4566/",
            "https://127.0.0.1:41234",
            "http://[::1]:8000",
            "http://127.10.0.1",
            "LOCALHOST:8000",
        ] {
            assert_eq!(Server::of_endpoint(Some(endpoint)), Server::Local, "{endpoint}");
        }
        for endpoint in [
            None,
            Some("https://dynamodb.us-east-1.amazonaws.com"),
            Some("https://vpce-0123.dynamodb.us-east-1.vpce.amazonaws.com"),
            Some("http://10.0.0.5:8000"),
            Some("http://localhost.example.com"),
            Some("http://127.0.0.1.nip.io"),
        ] {
            assert_eq!(Server::of_endpoint(endpoint), Server::Aws, "{endpoint:?}");
        }
    }

    #[test]
    fn an_unsupported_answer_from_aws_is_a_failure_that_says_so() {
        let unsupported = ControlPlaneError::unsupported(
            "DescribeKinesisStreamingDestination",
            "ts_2018-10-25",
            "UnknownOperationException",
        );
        assert_eq!(
            Server::Local.judge(unsupported.clone()).kind,
            ErrorKind::Unsupported
        );
        let judged = Server::Aws.judge(unsupported);
        assert_eq!(judged.kind, ErrorKind::Other);
        assert!(
            judged
                .message
                .contains("an AWS endpoint answered that it lacks DescribeKinesisStreamingDestination"),
            "{}",
            judged.message
        );
    }
}
