//! The Application Auto Scaling port: scalable targets and their policies, a service apart
//! from DynamoDB (its own client, its own permissions); a control plane without it answers
//! `Unsupported` and the policy cannot have autoscaling phases.

use std::future::Future;

use super::ControlPlaneError;
use crate::policy::scaling::{DeregisterScaling, ObservedScalableTarget, RegisterScaling};

/// Application Auto Scaling for the tables of a policy with autoscaling phases.
pub trait Scaling: Sync {
    /// Every DynamoDB scalable target of Application Auto Scaling whose resource id is one of
    /// `tables`' (`table/NAME`, `table/NAME/index/...`), with the scaling policies attached to
    /// each: read once per run, and only when the policy has autoscaling phases. `Unsupported`
    /// by default (a control plane without Application Auto Scaling).
    fn describe_scaling(
        &self,
        tables: &[String],
    ) -> impl Future<Output = Result<Vec<ObservedScalableTarget>, ControlPlaneError>> + Send {
        let _ = tables;
        async { Err(ControlPlaneError::no_autoscaling("DescribeScalableTargets")) }
    }

    /// RegisterScalableTarget and PutScalingPolicy for each target; returns the policies' ARNs
    /// (what the family's ledger records: a policy named like ours with another ARN is not).
    fn register_scaling(
        &self,
        change: &RegisterScaling,
    ) -> impl Future<Output = Result<Vec<String>, ControlPlaneError>> + Send {
        let _ = change;
        async { Err(ControlPlaneError::no_autoscaling("RegisterScalableTarget")) }
    }

    /// DeleteScalingPolicy and DeregisterScalableTarget for each target. `Ok` names each target
    /// the change would have deregistered but left registered, with what someone attached to
    /// it since the run looked (a sentence each; empty when every one went as planned).
    fn deregister_scaling(
        &self,
        change: &DeregisterScaling,
    ) -> impl Future<Output = Result<Vec<String>, ControlPlaneError>> + Send {
        let _ = change;
        async { Err(ControlPlaneError::no_autoscaling("DeregisterScalableTarget")) }
    }
}
