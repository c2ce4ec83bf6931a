//! [`Scaling`] through the Application Auto Scaling client, when the caller gave one; the calls
//! themselves are [`crate::autoscaling`]'s.

use super::DynamoDb;
use crate::autoscaling;
use ddb_rollover::control::{ControlPlaneError, Scaling};
use ddb_rollover::policy::{DeregisterScaling, ObservedScalableTarget, RegisterScaling};

impl Scaling for DynamoDb {
    async fn describe_scaling(
        &self,
        tables: &[String],
    ) -> Result<Vec<ObservedScalableTarget>, ControlPlaneError> {
        autoscaling::describe(self.autoscaling("DescribeScalableTargets")?, tables)
            .await
            .map_err(|e| self.server.judge(e))
    }

    async fn register_scaling(&self, change: &RegisterScaling) -> Result<Vec<String>, ControlPlaneError> {
        autoscaling::register(self.autoscaling("RegisterScalableTarget")?, change)
            .await
            .map_err(|e| self.server.judge(e))
    }

    async fn deregister_scaling(&self, change: &DeregisterScaling) -> Result<Vec<String>, ControlPlaneError> {
        autoscaling::deregister(self.autoscaling("DeregisterScalableTarget")?, change)
            .await
            .map_err(|e| self.server.judge(e))
    }
}
