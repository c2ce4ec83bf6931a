//! What the function's role was granted against what the policy needs.
//!
//! template.yaml grants the optional permissions (TTL, point-in-time recovery, export to S3,
//! DeleteTable, Application Auto Scaling, the Kinesis destination, the consumer function's event
//! source mappings) only when its parameters ask for them, and scopes the tables to
//! `TablePrefix`, the Kinesis writes to `ChangeStreamArn` and the mappings to
//! `ConsumerFunctionArn`; [`crate::parameters::StackParameters::grants`] reads the same parameters
//! back. A policy given whole (the template's `PolicyOverride`) can ask for more than the
//! parameters granted: the cold start then refuses it, naming the policy field and the
//! parameter to set, instead of the run failing table by table with AccessDenied. No stack
//! parameters (the CLI, local runs): no check.
//!
//! The family's ledger (`{TablePrefix}_ledger`, issue 37) is no capability: every stack makes it
//! and both roles may use its items. The functions name it from the policy's prefix, which
//! [`Grants::check`] holds to `TablePrefix`: so it is the ledger the roles were granted, and no
//! environment variable carries its name.

use std::collections::BTreeSet;
use std::fmt;

use ddb_rollover::Policy;

/// An optional part of the roles' permissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Capability {
    /// DescribeTimeToLive / UpdateTimeToLive.
    Ttl,
    /// DescribeContinuousBackups / UpdateContinuousBackups.
    Pitr,
    /// ExportTableToPointInTime, DescribeExport and the S3 objects of the archive.
    Archive,
    /// DeleteTable.
    Delete,
    /// Application Auto Scaling's scalable targets and target-tracking policies.
    Autoscaling,
    /// EnableKinesisStreamingDestination, and the Kinesis stream it streams into.
    Stream,
    /// CreateEventSourceMapping and UpdateEventSourceMapping (create_new) and
    /// DeleteEventSourceMapping (resize_old, when it deletes) of the one consumer function.
    Consumer,
}

impl Capability {
    /// Every capability, in the order the deploy checks list them.
    pub const ALL: [Capability; 7] = [
        Capability::Ttl,
        Capability::Pitr,
        Capability::Archive,
        Capability::Delete,
        Capability::Autoscaling,
        Capability::Stream,
        Capability::Consumer,
    ];

    /// The name the deploy checks and messages use.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Ttl => "ttl",
            Capability::Pitr => "pitr",
            Capability::Archive => "archive",
            Capability::Delete => "delete",
            Capability::Autoscaling => "autoscaling",
            Capability::Stream => "stream",
            Capability::Consumer => "consumer",
        }
    }

    /// The template parameter that grants it.
    pub fn parameter(self) -> &'static str {
        match self {
            Capability::Ttl => "TtlAttribute (the policy's ttl_attribute)",
            Capability::Pitr => "PointInTimeRecovery=true",
            Capability::Archive => "ArchiveBucket and ArchivePrefix (the policy's bucket and prefix)",
            Capability::Delete => "DeleteAfter (not 0)",
            Capability::Autoscaling => "Autoscaling=true",
            Capability::Stream => "ChangeStreamArn (the policy's stream.kinesis)",
            Capability::Consumer => "ConsumerFunctionArn (the policy's stream.lambda.function)",
        }
    }

    fn parse(name: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The capabilities a validated policy needs, each with the policy field that needs it. The
/// one place that decides it: the cold start and the deploy checks both ask here.
pub fn needs(policy: &Policy) -> Vec<(Capability, &'static str)> {
    let mut needs = Vec::new();
    if policy.template.ttl_attribute.is_some() {
        needs.push((Capability::Ttl, "template.ttl_attribute"));
    }
    if policy.wants_point_in_time_recovery() {
        let field = if policy.template.point_in_time_recovery {
            "template.point_in_time_recovery"
        } else {
            // Exports read from the point-in-time recovery window.
            "retention.archive_after"
        };
        needs.push((Capability::Pitr, field));
    }
    if policy.archive().is_some() {
        needs.push((Capability::Archive, "retention.archive_after"));
    }
    if policy
        .retention
        .as_ref()
        .is_some_and(|r| r.delete_after.is_some())
    {
        needs.push((Capability::Delete, "retention.delete_after"));
    }
    let uses_autoscaling = policy.uses_autoscaling();
    if uses_autoscaling {
        needs.push((Capability::Autoscaling, "phases[].autoscaling"));
    }
    if policy.stream.kinesis.is_some() {
        needs.push((Capability::Stream, "stream.kinesis"));
    }
    if policy.stream.lambda.is_some() {
        needs.push((Capability::Consumer, "stream.lambda.function"));
    }
    needs
}

/// What the role was granted, as the template says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// The optional permissions the template's conditions gave.
    pub capabilities: BTreeSet<Capability>,
    /// `None`: the prefix is not checked.
    pub table_prefix: Option<String>,
    /// The one Kinesis stream the role may stream into (`ChangeStreamArn`), with
    /// [`Capability::Stream`]; `None`: the stream is not checked.
    pub stream_arn: Option<String>,
    /// The one function the role may map to the tables' streams (`ConsumerFunctionArn`), with
    /// [`Capability::Consumer`]; `None`: the function is not checked.
    pub consumer_function_arn: Option<String>,
    /// The archive's bucket and prefix the role's S3 statements name (`ArchiveBucket`,
    /// `ArchivePrefix`), with [`Capability::Archive`]; `None`: not checked.
    pub archive: Option<(String, String)>,
}

/// One thing the policy needs that the role lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// A capability the template's conditions did not grant.
    Capability {
        /// What is missing.
        capability: Capability,
        /// The policy field that needs it.
        field: &'static str,
    },
    /// The policy's prefix is not `TablePrefix`, the one the role's table statements name.
    Prefix {
        /// The policy's prefix.
        policy: String,
        /// `TablePrefix`.
        granted: String,
    },
    /// The policy's `stream.kinesis` is another stream than the one the role may write to.
    StreamArn {
        /// The policy's stream.
        policy: String,
        /// `ChangeStreamArn`.
        granted: String,
    },
    /// The policy's `stream.lambda.function` is another function than the one the role may map.
    ConsumerFunctionArn {
        /// The policy's function.
        policy: String,
        /// `ConsumerFunctionArn`.
        granted: String,
    },
    /// The policy's `retention.bucket` or `retention.prefix` is not what the role's S3
    /// statements name: its first export would fail periods later, with AccessDenied.
    Archive {
        /// `retention.bucket` or `retention.prefix`.
        field: &'static str,
        /// The policy's value.
        policy: String,
        /// The parameter's value.
        granted: String,
        /// `ArchiveBucket` or `ArchivePrefix`.
        parameter: &'static str,
    },
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::Capability { capability, field } => write!(
                f,
                "{field} needs the {capability} permissions, which the function's role was not given: \
                 set the stack parameter {}",
                capability.parameter()
            ),
            Missing::Prefix { policy, granted } => write!(
                f,
                "prefix is {policy:?}, but the function's role may only touch tables named \"{granted}_*\": \
                 set the stack parameter TablePrefix={policy}, or the policy's prefix to {granted:?}"
            ),
            Missing::StreamArn { policy, granted } => write!(
                f,
                "stream.kinesis is {policy:?}, but the function's role may only stream into {granted:?}: \
                 set the stack parameter ChangeStreamArn={policy}, or the policy's stream.kinesis to {granted:?}"
            ),
            Missing::ConsumerFunctionArn { policy, granted } => write!(
                f,
                "stream.lambda.function is {policy:?}, but the function's role may only map {granted:?} to the tables' streams: \
                 set the stack parameter ConsumerFunctionArn={policy}, or the policy's stream.lambda.function to {granted:?}"
            ),
            Missing::Archive {
                field,
                policy,
                granted,
                parameter,
            } => write!(
                f,
                "{field} is {policy:?}, but the function's role may only archive under {parameter}={granted:?}: \
                 set the stack parameter {parameter}={policy:?}, or the policy's {field} to {granted:?}"
            ),
        }
    }
}

/// Everything the policy needs beyond the grants, at once.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct GrantsError(pub Vec<Missing>);

impl Grants {
    /// `grants`: comma-separated capability names; `None` checks no capability. Unknown names
    /// (a newer template) and empty items are ignored.
    pub fn parse(grants: Option<&str>, table_prefix: Option<&str>) -> Grants {
        let capabilities = match grants {
            Some(text) => text
                .split(',')
                .map(str::trim)
                .filter_map(Capability::parse)
                .collect(),
            None => Capability::ALL.into_iter().collect(),
        };
        Grants {
            capabilities,
            table_prefix: table_prefix.map(str::to_owned),
            stream_arn: None,
            consumer_function_arn: None,
            archive: None,
        }
    }

    /// Refuses a policy that needs anything the grants lack.
    pub fn check(&self, policy: &Policy) -> Result<(), GrantsError> {
        let mut missing = Vec::new();
        if let Some(granted) = &self.table_prefix {
            if &policy.prefix != granted {
                missing.push(Missing::Prefix {
                    policy: policy.prefix.clone(),
                    granted: granted.clone(),
                });
            }
        }
        for (capability, field) in needs(policy) {
            if !self.capabilities.contains(&capability) {
                missing.push(Missing::Capability { capability, field });
            }
        }
        // Granted, but for another stream: the role's Kinesis statements name that one only.
        let named = policy.stream.kinesis.as_ref().map(|k| k.stream_arn.as_str());
        if let (Some(policy), Some(granted)) = (named, &self.stream_arn) {
            if self.capabilities.contains(&Capability::Stream) && policy != granted {
                missing.push(Missing::StreamArn {
                    policy: policy.to_owned(),
                    granted: granted.clone(),
                });
            }
        }
        // Granted, but for another function: the role's mapping statements name that one only
        // (lambda:FunctionArn).
        let named = policy.stream.lambda.as_ref().map(|l| l.function.as_str());
        if let (Some(policy), Some(granted)) = (named, &self.consumer_function_arn) {
            if self.capabilities.contains(&Capability::Consumer) && policy != granted {
                missing.push(Missing::ConsumerFunctionArn {
                    policy: policy.to_owned(),
                    granted: granted.clone(),
                });
            }
        }
        // Granted, but for another bucket or prefix: the role's S3 statements name those only.
        if let (Some(archive), Some((bucket, prefix))) = (policy.archive(), &self.archive) {
            if self.capabilities.contains(&Capability::Archive) {
                for (field, wanted, granted, parameter) in [
                    ("retention.bucket", &archive.bucket, bucket, "ArchiveBucket"),
                    ("retention.prefix", &archive.prefix, prefix, "ArchivePrefix"),
                ] {
                    if wanted != granted {
                        missing.push(Missing::Archive {
                            field,
                            policy: wanted.clone(),
                            granted: granted.clone(),
                            parameter,
                        });
                    }
                }
            }
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(GrantsError(missing))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(json: &str) -> Policy {
        Policy::from_json(json).unwrap_or_else(|e| panic!("{json}: {e}"))
    }

    const EVERYTHING: &str = r#"{"template":{"ttl_attribute":"expires_at"},
        "retention":{"archive_after":3,"bucket":"archive-bucket","prefix":"p/","delete_after":5}}"#;

    #[test]
    fn needs_name_the_fields_that_need_each_capability() {
        assert_eq!(needs(&Policy::default()), []);
        assert_eq!(
            needs(&policy(EVERYTHING)),
            [
                (Capability::Ttl, "template.ttl_attribute"),
                (Capability::Pitr, "retention.archive_after"),
                (Capability::Archive, "retention.archive_after"),
                (Capability::Delete, "retention.delete_after"),
            ]
        );
        assert_eq!(
            needs(&policy(r#"{"template":{"point_in_time_recovery":true}}"#)),
            [(Capability::Pitr, "template.point_in_time_recovery")]
        );
        // Deletion protection needs only UpdateTable, which every role has.
        assert_eq!(needs(&policy(r#"{"template":{"deletion_protection":true}}"#)), []);
    }

    #[test]
    fn a_policy_needing_what_the_role_lacks_is_refused_naming_field_and_parameter() {
        let grants = Grants::parse(Some(""), Some("timeseries"));
        let err = grants
            .check(&policy(r#"{"retention":{"delete_after":30}}"#))
            .unwrap_err();
        assert_eq!(
            err.0,
            [Missing::Capability {
                capability: Capability::Delete,
                field: "retention.delete_after"
            }]
        );
        let message = err.to_string();
        for named in ["retention.delete_after", "DeleteAfter"] {
            assert!(message.contains(named), "{message}");
        }

        let err = grants.check(&policy(EVERYTHING)).unwrap_err();
        assert_eq!(err.0.len(), 4, "{err}");
        for named in [
            "TtlAttribute",
            "PointInTimeRecovery",
            "ArchiveBucket",
            "DeleteAfter",
        ] {
            assert!(err.to_string().contains(named), "{err}");
        }
    }

    #[test]
    fn granted_capabilities_pass_and_trailing_commas_and_unknown_names_are_ignored() {
        let grants = Grants::parse(Some("ttl,pitr,archive,delete,future-thing,"), Some("timeseries"));
        assert_eq!(grants.capabilities.len(), 4);
        assert_eq!(grants.check(&policy(EVERYTHING)), Ok(()));
        assert_eq!(grants.check(&Policy::default()), Ok(()));
        // PITR alone does not stand in for archiving.
        let err = Grants::parse(Some("ttl,pitr,delete"), None)
            .check(&policy(EVERYTHING))
            .unwrap_err();
        assert_eq!(
            err.0,
            [Missing::Capability {
                capability: Capability::Archive,
                field: "retention.archive_after"
            }]
        );
    }

    #[test]
    fn another_prefix_than_the_roles_is_refused() {
        let grants = Grants::parse(Some("ttl"), Some("timeseries"));
        let err = grants.check(&policy(r#"{"prefix":"metrics"}"#)).unwrap_err();
        assert_eq!(
            err.0,
            [Missing::Prefix {
                policy: "metrics".into(),
                granted: "timeseries".into()
            }]
        );
        assert!(err.to_string().contains("TablePrefix=metrics"), "{err}");
        // A nested prefix is another family: its tables would carry another family tag.
        assert!(grants.check(&policy(r#"{"prefix":"timeseries_eu"}"#)).is_err());
    }

    const STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/timeseries-changes";
    const OTHER_STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/orders-changes";

    fn streaming(arn: &str) -> Policy {
        policy(&format!(r#"{{"stream":{{"kinesis":"{arn}"}}}}"#))
    }

    fn stream_grants(arn: Option<&str>) -> Grants {
        Grants {
            stream_arn: arn.map(str::to_owned),
            ..Grants::parse(Some(arn.map_or("", |_| "stream")), Some("timeseries"))
        }
    }

    #[test]
    fn a_stream_is_refused_unless_change_stream_arn_grants_that_very_stream() {
        assert_eq!(
            needs(&streaming(STREAM)),
            [(Capability::Stream, "stream.kinesis")]
        );
        // The parameter empty: the role has no Kinesis statement at all.
        let err = stream_grants(None).check(&streaming(STREAM)).unwrap_err();
        assert_eq!(
            err.0,
            [Missing::Capability {
                capability: Capability::Stream,
                field: "stream.kinesis"
            }]
        );
        for named in ["stream.kinesis", "ChangeStreamArn"] {
            assert!(err.to_string().contains(named), "{err}");
        }
        // Granted for another stream.
        let err = stream_grants(Some(OTHER_STREAM))
            .check(&streaming(STREAM))
            .unwrap_err();
        assert_eq!(
            err.0,
            [Missing::StreamArn {
                policy: STREAM.into(),
                granted: OTHER_STREAM.into()
            }]
        );
        let message = err.to_string();
        assert!(
            message.contains("stream.kinesis") && message.contains(&format!("ChangeStreamArn={STREAM}")),
            "{message}"
        );
        // The very stream, or none named: nothing missing.
        assert_eq!(stream_grants(Some(STREAM)).check(&streaming(STREAM)), Ok(()));
        assert_eq!(stream_grants(Some(STREAM)).check(&Policy::default()), Ok(()));
    }

    const CONSUMER: &str = "arn:aws:lambda:us-east-1:123456789012:function:ingest-consumer";
    const OTHER_CONSUMER: &str = "arn:aws:lambda:us-east-1:123456789012:function:orders-consumer";

    fn consuming(arn: &str) -> Policy {
        policy(&format!(
            r#"{{"template":{{"stream":"new_and_old_images"}},"stream":{{"lambda":{{"function":"{arn}"}}}}}}"#
        ))
    }

    fn consumer_grants(arn: Option<&str>) -> Grants {
        Grants {
            consumer_function_arn: arn.map(str::to_owned),
            ..Grants::parse(Some(arn.map_or("", |_| "consumer")), Some("timeseries"))
        }
    }

    #[test]
    fn a_consumer_is_refused_unless_consumer_function_arn_grants_that_very_function() {
        assert_eq!(
            needs(&consuming(CONSUMER)),
            [(Capability::Consumer, "stream.lambda.function")]
        );
        // The parameter empty: the role has no mapping statement at all.
        let err = consumer_grants(None).check(&consuming(CONSUMER)).unwrap_err();
        assert_eq!(
            err.0,
            [Missing::Capability {
                capability: Capability::Consumer,
                field: "stream.lambda.function"
            }]
        );
        for named in ["stream.lambda.function", "ConsumerFunctionArn"] {
            assert!(err.to_string().contains(named), "{err}");
        }
        // Granted for another function.
        let err = consumer_grants(Some(OTHER_CONSUMER))
            .check(&consuming(CONSUMER))
            .unwrap_err();
        assert_eq!(
            err.0,
            [Missing::ConsumerFunctionArn {
                policy: CONSUMER.into(),
                granted: OTHER_CONSUMER.into()
            }]
        );
        let message = err.to_string();
        assert!(
            message.contains("stream.lambda.function")
                && message.contains(&format!("ConsumerFunctionArn={CONSUMER}")),
            "{message}"
        );
        // An alias of the granted function is another ARN: lambda:FunctionArn compares them
        // as strings.
        assert!(consumer_grants(Some(CONSUMER))
            .check(&consuming(&format!("{CONSUMER}:live")))
            .is_err());
        // The very function, or none named (a stack may grant a consumer its policy does not
        // use, like ChangeStreamArn): nothing missing.
        assert_eq!(
            consumer_grants(Some(CONSUMER)).check(&consuming(CONSUMER)),
            Ok(())
        );
        assert_eq!(consumer_grants(Some(CONSUMER)).check(&Policy::default()), Ok(()));
        // The Kinesis grant does not stand in for the consumer's, nor the other way round.
        let err = stream_grants(Some(STREAM))
            .check(&consuming(CONSUMER))
            .unwrap_err();
        assert_eq!(err.0.len(), 1, "{err}");
        let err = consumer_grants(Some(CONSUMER))
            .check(&streaming(STREAM))
            .unwrap_err();
        assert_eq!(err.0.len(), 1, "{err}");
    }

    #[test]
    fn without_the_variables_nothing_is_checked() {
        // Only the prefix told: every capability counts as granted.
        let grants = Grants::parse(None, Some("timeseries"));
        assert_eq!(grants.check(&policy(EVERYTHING)), Ok(()));
        let grants = Grants::parse(Some("ttl"), None);
        assert_eq!(grants.check(&policy(r#"{"prefix":"anything"}"#)), Ok(()));
    }
}
