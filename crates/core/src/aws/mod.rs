//! The AWS adapters: the [`ControlPlane`](crate::run::control::ControlPlane) on the SDK's
//! DynamoDB, Application Auto Scaling and Lambda clients; archives in S3, the published table names in
//! Systems Manager and the runs' events in EventBridge, each on its own SDK client behind a
//! feature of the same name, so a function links only the clients it calls. Nothing above this
//! folder names the SDK's control-plane types.

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

/// An SDK timestamp (CreationDateTime, ExportTime, Lambda's LastModified) as a UTC instant.
pub(crate) fn utc(time: &aws_smithy_types::DateTime) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::from_timestamp(time.secs(), time.subsec_nanos())
}
