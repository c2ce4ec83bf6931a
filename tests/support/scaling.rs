//! Application Auto Scaling with the SDK: read back, every page (what the tests compare the
//! engine's registrations with), and the targets and policies a test registers itself (someone
//! else's, or a probe's), built in one place.

use aws_sdk_applicationautoscaling::operation::deregister_scalable_target::builders::DeregisterScalableTargetFluentBuilder;
use aws_sdk_applicationautoscaling::operation::put_scaling_policy::builders::PutScalingPolicyFluentBuilder;
use aws_sdk_applicationautoscaling::operation::register_scalable_target::builders::RegisterScalableTargetFluentBuilder;
use aws_sdk_applicationautoscaling::types::{
    AdjustmentType, MetricType, PolicyType, PredefinedMetricSpecification, ScalableDimension, ScalableTarget,
    ScalingPolicy, ServiceNamespace, StepAdjustment, StepScalingPolicyConfiguration,
    TargetTrackingScalingPolicyConfiguration,
};
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

/// RegisterScalableTarget of a DynamoDB table's or index's `dimension` (`resource`:
/// `table/{name}`, or `table/{name}/index/{index}`) between `min` and `max` capacity units: a
/// target someone else registers. Not sent: each test reads the answer its own way.
pub(crate) fn register_target(
    client: &Client,
    resource: &str,
    dimension: ScalableDimension,
    min: i32,
    max: i32,
) -> RegisterScalableTargetFluentBuilder {
    client
        .register_scalable_target()
        .service_namespace(ServiceNamespace::Dynamodb)
        .resource_id(resource)
        .scalable_dimension(dimension)
        .min_capacity(min)
        .max_capacity(max)
}

/// DeregisterScalableTarget of a DynamoDB table's or index's `dimension`. Not sent.
pub(crate) fn deregister_target(
    client: &Client,
    resource: &str,
    dimension: ScalableDimension,
) -> DeregisterScalableTargetFluentBuilder {
    client
        .deregister_scalable_target()
        .service_namespace(ServiceNamespace::Dynamodb)
        .resource_id(resource)
        .scalable_dimension(dimension)
}

/// How a test's own scaling policy scales.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scales {
    /// Target tracking of the dimension's own utilization metric at this percentage: the kind
    /// the engine registers.
    Tracking(f64),
    /// One step of one capacity unit: a kind the engine never registers, and one that needs no
    /// CloudWatch metric.
    Step,
}

/// PutScalingPolicy `name` on a DynamoDB table's or index's `dimension`: a policy someone else
/// puts. Not sent.
pub(crate) fn put_policy(
    client: &Client,
    resource: &str,
    dimension: ScalableDimension,
    name: &str,
    scales: Scales,
) -> PutScalingPolicyFluentBuilder {
    let metric = if dimension.as_str().contains("Read") {
        MetricType::DynamoDbReadCapacityUtilization
    } else {
        MetricType::DynamoDbWriteCapacityUtilization
    };
    let request = client
        .put_scaling_policy()
        .policy_name(name)
        .service_namespace(ServiceNamespace::Dynamodb)
        .resource_id(resource)
        .scalable_dimension(dimension);
    match scales {
        Scales::Tracking(target) => request
            .policy_type(PolicyType::TargetTrackingScaling)
            .target_tracking_scaling_policy_configuration(
                TargetTrackingScalingPolicyConfiguration::builder()
                    .target_value(target)
                    .predefined_metric_specification(
                        PredefinedMetricSpecification::builder()
                            .predefined_metric_type(metric)
                            .build()
                            .expect("a metric type is set"),
                    )
                    .build()
                    .expect("a target value is set"),
            ),
        Scales::Step => request
            .policy_type(PolicyType::StepScaling)
            .step_scaling_policy_configuration(
                StepScalingPolicyConfiguration::builder()
                    .adjustment_type(AdjustmentType::ChangeInCapacity)
                    .step_adjustments(
                        StepAdjustment::builder()
                            .metric_interval_lower_bound(0.0)
                            .scaling_adjustment(1)
                            .build()
                            .expect("an adjustment is set"),
                    )
                    .build(),
            ),
    }
}
