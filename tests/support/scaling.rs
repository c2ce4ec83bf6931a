//! Application Auto Scaling read back with the SDK, every page: what the tests compare the
//! engine's registrations with.

use aws_sdk_applicationautoscaling::types::{ScalableTarget, ScalingPolicy, ServiceNamespace};
use aws_sdk_applicationautoscaling::Client;

/// Every DynamoDB scalable target on the server (DescribeScalableTargets).
pub(crate) async fn targets(client: &Client) -> Vec<ScalableTarget> {
    client
        .describe_scalable_targets()
        .service_namespace(ServiceNamespace::Dynamodb)
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("DescribeScalableTargets: {e:?}"))
}

/// Every DynamoDB scaling policy on the server (DescribeScalingPolicies).
pub(crate) async fn policies(client: &Client) -> Vec<ScalingPolicy> {
    client
        .describe_scaling_policies()
        .service_namespace(ServiceNamespace::Dynamodb)
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("DescribeScalingPolicies: {e:?}"))
}
