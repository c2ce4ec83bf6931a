//! The AWS adapters: the [`ControlPlane`](crate::run::control::ControlPlane) on the SDK's
//! DynamoDB and Application Auto Scaling clients, and signed calls to the services the
//! bootstraps have no SDK crate for ([`signed`]). Nothing above this folder names the SDK's
//! control-plane types.

pub mod archive;
pub(crate) mod autoscaling;
pub mod dynamodb;
pub mod events;
pub mod sdk;
pub mod signed;
