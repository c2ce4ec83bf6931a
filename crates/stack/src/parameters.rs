//! The stack's parameters as template.yaml hands them to both functions, and the one function
//! that turns them into the [`Policy`] and the role's [`Grants`].
//!
//! The template passes each parameter as it is, one environment variable per parameter
//! ([`VARIABLES`]: `ROLLOVER_` and the parameter's name in capitals, `TablePrefix` is
//! `ROLLOVER_TABLE_PREFIX`), and builds no JSON: what the parameters mean is decided here, typed
//! and tested, and the deploy checks call this same code for every option combination. The
//! template's own conventions for "unset" are kept: an empty `SortKeyName`, `WriteGrace`,
//! `TtlAttribute`, `ColdTableClass`, `ArchiveBucket`, `ChangeStreamArn` or `ConsumerFunctionArn`,
//! and `DeleteAfter` 0.
//!
//! `ROLLOVER_POLICY` (the `PolicyOverride` parameter) replaces the parameters that build the
//! policy; the template then leaves those variables out (Lambda's environment is 4 KB in all)
//! and passes only the ones that decide the roles' permissions ([`Variable::grants`]).

use std::fmt;

use ddb_rollover::policy::BlueprintDocument;
use ddb_rollover::policy::PhaseDocument;
use ddb_rollover::policy::RetentionDocument;
use ddb_rollover::policy::{KeyAttributeDocument, KeySchemaDocument};
use ddb_rollover::policy::{LambdaDocument, StreamDocument};
use ddb_rollover::{Policy, PolicyDocument, PolicyError};

use crate::grants::{Capability, Grants};

/// One stack parameter's environment variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variable {
    /// The environment variable: `ROLLOVER_` and [`Self::parameter`] in capitals.
    pub name: &'static str,
    /// The template parameter it carries, as it is.
    pub parameter: &'static str,
    /// The policy field it fills (a prefix of the validation's field paths), if any.
    pub field: Option<&'static str>,
    /// Set even with a `PolicyOverride`: it decides the roles' permissions.
    pub grants: bool,
}

const fn var(
    name: &'static str,
    parameter: &'static str,
    field: Option<&'static str>,
    grants: bool,
) -> Variable {
    Variable {
        name,
        parameter,
        field,
        grants,
    }
}

/// Every parameter that builds the policy or decides the roles' permissions, in the template's
/// order. `PublishTables` and `PublishEvents` are [`PUBLISHING`]'s.
pub const VARIABLES: [Variable; 28] = [
    var("ROLLOVER_TABLE_PREFIX", "TablePrefix", Some("prefix"), true),
    var("ROLLOVER_PERIOD", "Period", Some("period"), false),
    var("ROLLOVER_TIME_ZONE", "TimeZone", Some("timezone"), false),
    var("ROLLOVER_PREMAKE", "Premake", Some("premake"), false),
    var(
        "ROLLOVER_PARTITION_KEY_NAME",
        "PartitionKeyName",
        Some("key.partition.name"),
        false,
    ),
    var(
        "ROLLOVER_PARTITION_KEY_TYPE",
        "PartitionKeyType",
        Some("key.partition.type"),
        false,
    ),
    var(
        "ROLLOVER_SORT_KEY_NAME",
        "SortKeyName",
        Some("key.sort.name"),
        false,
    ),
    var(
        "ROLLOVER_SORT_KEY_TYPE",
        "SortKeyType",
        Some("key.sort.type"),
        false,
    ),
    var(
        "ROLLOVER_HOT_READ_CAPACITY",
        "HotReadCapacity",
        Some("phases[0].read"),
        false,
    ),
    var(
        "ROLLOVER_HOT_WRITE_CAPACITY",
        "HotWriteCapacity",
        Some("phases[0].write"),
        false,
    ),
    var(
        "ROLLOVER_WARM_READ_CAPACITY",
        "WarmReadCapacity",
        Some("phases[1].read"),
        false,
    ),
    var(
        "ROLLOVER_WARM_WRITE_CAPACITY",
        "WarmWriteCapacity",
        Some("phases[1].write"),
        false,
    ),
    var(
        "ROLLOVER_COLD_BILLING",
        "ColdBilling",
        Some("phases[2].billing"),
        false,
    ),
    var(
        "ROLLOVER_COLD_READ_CAPACITY",
        "ColdReadCapacity",
        Some("phases[2].read"),
        false,
    ),
    var(
        "ROLLOVER_COLD_WRITE_CAPACITY",
        "ColdWriteCapacity",
        Some("phases[2].write"),
        false,
    ),
    var(
        "ROLLOVER_COLD_TABLE_CLASS",
        "ColdTableClass",
        Some("phases[2].table_class"),
        false,
    ),
    var("ROLLOVER_WRITE_GRACE", "WriteGrace", Some("grace"), false),
    var(
        "ROLLOVER_TTL_ATTRIBUTE",
        "TtlAttribute",
        Some("template.ttl_attribute"),
        true,
    ),
    var(
        "ROLLOVER_POINT_IN_TIME_RECOVERY",
        "PointInTimeRecovery",
        None,
        true,
    ),
    var("ROLLOVER_DELETION_PROTECTION", "DeletionProtection", None, false),
    var(
        "ROLLOVER_ARCHIVE_BUCKET",
        "ArchiveBucket",
        Some("retention.bucket"),
        true,
    ),
    var(
        "ROLLOVER_ARCHIVE_PREFIX",
        "ArchivePrefix",
        Some("retention.prefix"),
        true,
    ),
    var(
        "ROLLOVER_ARCHIVE_AFTER",
        "ArchiveAfter",
        Some("retention.archive_after"),
        false,
    ),
    var(
        "ROLLOVER_DELETE_AFTER",
        "DeleteAfter",
        Some("retention.delete_after"),
        true,
    ),
    var(
        "ROLLOVER_MAX_DELETES_PER_RUN",
        "MaxDeletesPerRun",
        Some("retention.max_deletes_per_run"),
        false,
    ),
    var(
        "ROLLOVER_CHANGE_STREAM_ARN",
        "ChangeStreamArn",
        Some("stream.kinesis"),
        true,
    ),
    var(
        "ROLLOVER_CONSUMER_FUNCTION_ARN",
        "ConsumerFunctionArn",
        Some("stream.lambda.function"),
        true,
    ),
    var("ROLLOVER_AUTOSCALING", "Autoscaling", None, true),
];

/// The switches of what a run publishes (the Lambda glue's `Publishing` reads them): set even
/// with a `PolicyOverride`, as each decides a grant (`ssm:PutParameter`, `events:PutEvents`).
pub const PUBLISHING: [Variable; 2] = [
    var("ROLLOVER_PUBLISH_TABLES", "PublishTables", None, true),
    var("ROLLOVER_PUBLISH_EVENTS", "PublishEvents", None, true),
];

/// The variable of a template parameter. Panics on a name not in [`VARIABLES`] (a typo here).
fn variable(parameter: &str) -> &'static Variable {
    VARIABLES
        .iter()
        .find(|v| v.parameter == parameter)
        .unwrap_or_else(|| panic!("no variable for parameter {parameter}"))
}

/// One variable that does not hold what its parameter allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadVariable {
    /// The environment variable.
    pub name: &'static str,
    /// The stack parameter that sets it: what to fix.
    pub parameter: &'static str,
    /// The value as set; `None` when the variable is missing.
    pub value: Option<String>,
    /// What is wrong with it, or what it allows.
    pub message: String,
}

impl fmt::Display for BadVariable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(value) => write!(
                f,
                "{} (parameter {}) is {value:?}: {}",
                self.name, self.parameter, self.message
            ),
            None => write!(
                f,
                "{} (parameter {}) is not set: {}",
                self.name, self.parameter, self.message
            ),
        }
    }
}

/// Every bad variable at once, before any AWS call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the stack parameters do not make a valid policy (fix them, or set PolicyOverride):\n  {}",
    .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  "))]
pub struct StackError(pub Vec<BadVariable>);

/// The parameters as the template passed them: strings, read by [`StackParameters::policy`]
/// and [`StackParameters::grants`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackParameters {
    /// `(parameter, value)` for every variable that was set.
    values: Vec<(&'static str, String)>,
}

impl StackParameters {
    /// The stack's variables from the process environment; `None` when `ROLLOVER_TABLE_PREFIX`
    /// is not set (the CLI, a local run).
    pub fn from_env() -> Option<StackParameters> {
        StackParameters::from_lookup(|name| std::env::var(name).ok())
    }

    /// The same from any source of variables, e.g. a function's `Environment` in the template
    /// (the deploy checks).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Option<StackParameters> {
        lookup(variable("TablePrefix").name)?;
        let values = VARIABLES
            .iter()
            .filter_map(|v| lookup(v.name).map(|value| (v.parameter, value)))
            .collect();
        Some(StackParameters { values })
    }

    fn get(&self, parameter: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(p, _)| *p == parameter)
            .map(|(_, value)| value.as_str())
    }

    /// What the role was granted: the permissions template.yaml's conditions give for these
    /// parameters, and the table prefix its resources name. Unparsable flags count as not set
    /// (the template's `AllowedValues` make them `true` or `false`).
    pub fn grants(&self) -> Grants {
        let set = |parameter: &str| self.get(parameter).is_some_and(|v| !v.trim().is_empty());
        let on = |parameter: &str| self.get(parameter).is_some_and(|v| v.trim() == "true");
        let archiving = set("ArchiveBucket");
        let capabilities = [
            (set("TtlAttribute"), Capability::Ttl),
            // Exports read from the point-in-time recovery window: archiving turns it on.
            (on("PointInTimeRecovery") || archiving, Capability::Pitr),
            (archiving, Capability::Archive),
            (
                self.get("DeleteAfter")
                    .is_some_and(|v| !matches!(v.trim(), "" | "0")),
                Capability::Delete,
            ),
            (on("Autoscaling"), Capability::Autoscaling),
            (set("ChangeStreamArn"), Capability::Stream),
            (set("ConsumerFunctionArn"), Capability::Consumer),
        ]
        .into_iter()
        .filter_map(|(granted, capability)| granted.then_some(capability))
        .collect();
        let arn = |parameter: &str| {
            self.get(parameter)
                .map(str::trim)
                .filter(|arn| !arn.is_empty())
                .map(str::to_owned)
        };
        let archive = archiving.then(|| {
            (
                self.get("ArchiveBucket").unwrap_or_default().to_owned(),
                self.get("ArchivePrefix").unwrap_or_default().to_owned(),
            )
        });
        Grants {
            capabilities,
            table_prefix: self.get("TablePrefix").map(str::to_owned),
            stream_arn: arn("ChangeStreamArn"),
            consumer_function_arn: arn("ConsumerFunctionArn"),
            archive,
        }
    }

    /// The policy the parameters build: every bad variable named at once (its own format
    /// first, then the policy's validation, each error traced back to the variable that filled
    /// the field).
    pub fn policy(&self) -> Result<Policy, StackError> {
        let mut reader = Reader {
            stack: self,
            bad: Vec::new(),
        };
        let document = reader.document();
        let mut bad = reader.bad;
        match document.validate() {
            Ok(policy) if bad.is_empty() => Ok(policy),
            Ok(_) => Err(StackError(bad)),
            Err(error) => {
                // A variable already refused (a number that is not one) left its field empty:
                // named once.
                for traced in self.trace(error) {
                    if !bad.iter().any(|b| b.name == traced.name) {
                        bad.push(traced);
                    }
                }
                Err(StackError(bad))
            }
        }
    }

    /// The policy's validation errors, each on the variable that filled its field (the
    /// longest field path that names it); one that none filled stays on the policy's field.
    fn trace(&self, error: PolicyError) -> Vec<BadVariable> {
        let fields = match error {
            PolicyError::Invalid(fields) => fields,
            other => {
                return vec![BadVariable {
                    name: "ROLLOVER_*",
                    parameter: "(all)",
                    value: None,
                    message: other.to_string(),
                }]
            }
        };
        fields
            .into_iter()
            .map(|field| {
                let filled_by = VARIABLES
                    .iter()
                    .filter(|v| {
                        v.field.is_some_and(|f| {
                            field.field == f
                                || field.field.starts_with(&format!("{f}."))
                                || field.field.starts_with(&format!("{f}["))
                        })
                    })
                    .max_by_key(|v| v.field.map_or(0, str::len));
                match filled_by {
                    Some(v) => BadVariable {
                        name: v.name,
                        parameter: v.parameter,
                        value: self.get(v.parameter).map(str::to_owned),
                        message: field.message,
                    },
                    None => BadVariable {
                        name: "ROLLOVER_*",
                        parameter: "(several)",
                        value: None,
                        message: field.to_string(),
                    },
                }
            })
            .collect()
    }
}

/// Reads the variables one by one, keeping every refusal.
struct Reader<'a> {
    stack: &'a StackParameters,
    bad: Vec<BadVariable>,
}

impl Reader<'_> {
    fn fail(&mut self, parameter: &str, value: Option<&str>, message: &str) {
        let v = variable(parameter);
        self.bad.push(BadVariable {
            name: v.name,
            parameter: v.parameter,
            value: value.map(str::to_owned),
            message: message.to_owned(),
        });
    }

    /// The value, trimmed (a missing one is refused once, by [`Self::document`]).
    fn text(&mut self, parameter: &str) -> String {
        self.stack.get(parameter).unwrap_or_default().trim().to_owned()
    }

    /// Empty is unset.
    fn optional(&mut self, parameter: &str) -> Option<String> {
        Some(self.text(parameter)).filter(|value| !value.is_empty())
    }

    fn number(&mut self, parameter: &str) -> Option<i64> {
        let value = self.stack.get(parameter)?.trim();
        match value.parse::<i64>() {
            Ok(n) => Some(n),
            Err(_) => {
                self.fail(parameter, Some(value), "must be a whole number");
                None
            }
        }
    }

    fn choice(&mut self, parameter: &str, off: &str, on: &str) -> bool {
        let value = self.text(parameter);
        if value == on {
            true
        } else if value == off || value.is_empty() {
            false
        } else {
            self.fail(parameter, Some(&value), &format!("must be {off} or {on}"));
            false
        }
    }

    /// The policy document, as the README's JSON form would spell it for these parameters.
    fn document(&mut self) -> PolicyDocument {
        // Without a PolicyOverride, the template sets every variable.
        for parameter in VARIABLES.iter().map(|v| v.parameter) {
            if self.stack.get(parameter).is_none() {
                self.fail(parameter, None, "template.yaml sets it from the stack parameter");
            }
        }
        let prefix = self.text("TablePrefix");
        let period = self.text("Period");
        let timezone = self.text("TimeZone");
        let premake = self.number("Premake");
        let partition = KeyAttributeDocument {
            name: self.text("PartitionKeyName"),
            kind: self.text("PartitionKeyType"),
        };
        let sort = self.optional("SortKeyName").map(|name| KeyAttributeDocument {
            name,
            kind: self.text("SortKeyType"),
        });
        let hot = phase(0, self.number("HotReadCapacity"), self.number("HotWriteCapacity"));
        let warm = phase(
            1,
            self.number("WarmReadCapacity"),
            self.number("WarmWriteCapacity"),
        );
        let cold_on_demand = self.choice("ColdBilling", "provisioned", "on_demand");
        let (cold_read, cold_write) = (self.number("ColdReadCapacity"), self.number("ColdWriteCapacity"));
        let cold = PhaseDocument {
            billing: cold_on_demand.then(|| "on_demand".to_owned()),
            table_class: self.optional("ColdTableClass"),
            // On demand: the capacities are not used.
            ..if cold_on_demand {
                phase(2, None, None)
            } else {
                phase(2, cold_read, cold_write)
            }
        };
        let grace = self.optional("WriteGrace");
        let ttl = self.optional("TtlAttribute");
        let pitr = self.choice("PointInTimeRecovery", "false", "true");
        let protection = self.choice("DeletionProtection", "false", "true");
        let bucket = self.optional("ArchiveBucket");
        let archive_prefix = self.text("ArchivePrefix");
        let archive_after = self.number("ArchiveAfter");
        let delete_after = self.number("DeleteAfter").filter(|&n| n != 0);
        let max_deletes = self.number("MaxDeletesPerRun");
        let change_stream = self.optional("ChangeStreamArn");
        let consumer = self.optional("ConsumerFunctionArn");

        let archiving = bucket.is_some();
        // Exports read from the point-in-time recovery window: archiving turns it on.
        let needs_pitr = pitr || archiving;
        // The consumer function reads each table's DynamoDB stream: new and old images, what
        // a consumer of changes needs (the policy's validation wants one with stream.lambda).
        let table_stream = consumer.is_some().then(|| "new_and_old_images".to_owned());
        // Left out when nothing in it is asked for; a setting not asked for is left as it is
        // on the tables.
        let template = (ttl.is_some() || needs_pitr || protection || table_stream.is_some()).then(|| {
            BlueprintDocument {
                ttl_attribute: ttl,
                point_in_time_recovery: needs_pitr.then_some(true),
                deletion_protection: protection.then_some(true),
                stream: table_stream,
                ..BlueprintDocument::default()
            }
        });
        let retention = (archiving || delete_after.is_some()).then(|| RetentionDocument {
            archive_after: archive_after.filter(|_| archiving),
            prefix: archiving.then_some(archive_prefix),
            bucket,
            max_deletes_per_run: max_deletes.filter(|_| delete_after.is_some()),
            delete_after,
            ..RetentionDocument::default()
        });
        PolicyDocument {
            prefix: Some(prefix),
            period: Some(period),
            timezone: Some(timezone),
            premake,
            key: Some(KeySchemaDocument { partition, sort }),
            phases: Some(vec![hot, warm, cold]),
            grace,
            template,
            retention,
            stream: (change_stream.is_some() || consumer.is_some()).then(|| StreamDocument {
                kinesis: change_stream,
                lambda: consumer.map(|function| LambdaDocument {
                    function: Some(function),
                    ..LambdaDocument::default()
                }),
                ..StreamDocument::default()
            }),
            ..PolicyDocument::default()
        }
    }
}

fn phase(min_age: i64, read: Option<i64>, write: Option<i64>) -> PhaseDocument {
    PhaseDocument {
        min_age,
        read,
        write,
        ..PhaseDocument::default()
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    use std::collections::BTreeMap;

    /// template.yaml's parameter defaults.
    pub(crate) fn defaults() -> BTreeMap<&'static str, String> {
        [
            ("TablePrefix", "timeseries"),
            ("Period", "day"),
            ("TimeZone", "UTC"),
            ("Premake", "1"),
            ("PartitionKeyName", "pk"),
            ("PartitionKeyType", "S"),
            ("SortKeyName", "sk"),
            ("SortKeyType", "S"),
            ("HotReadCapacity", "300"),
            ("HotWriteCapacity", "1000"),
            ("WarmReadCapacity", "100"),
            ("WarmWriteCapacity", "1"),
            ("ColdBilling", "provisioned"),
            ("ColdReadCapacity", "1"),
            ("ColdWriteCapacity", "1"),
            ("ColdTableClass", ""),
            ("WriteGrace", ""),
            ("TtlAttribute", ""),
            ("PointInTimeRecovery", "false"),
            ("DeletionProtection", "false"),
            ("ArchiveBucket", ""),
            ("ArchivePrefix", "ddb-rollover/"),
            ("ArchiveAfter", "30"),
            ("DeleteAfter", "0"),
            ("MaxDeletesPerRun", "5"),
            ("ChangeStreamArn", ""),
            ("ConsumerFunctionArn", ""),
            ("Autoscaling", "false"),
        ]
        .into_iter()
        .map(|(p, v)| (p, v.to_owned()))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ddb_rollover::policy::StartingPosition;
    use ddb_rollover::policy::StreamView;

    fn stack(changes: &[(&str, &str)]) -> StackParameters {
        let mut parameters = tests_support::defaults();
        for (p, v) in changes {
            *parameters
                .get_mut(p)
                .unwrap_or_else(|| panic!("no parameter {p}")) = (*v).to_owned();
        }
        StackParameters::from_lookup(|name| {
            let v = VARIABLES.iter().find(|v| v.name == name)?;
            parameters.get(v.parameter).cloned()
        })
        .unwrap()
    }

    #[test]
    fn every_variable_is_rollover_and_its_parameter_in_capitals() {
        for v in VARIABLES {
            let mut snake = String::from("ROLLOVER");
            for c in v.parameter.chars() {
                if c.is_ascii_uppercase() {
                    snake.push('_');
                }
                snake.push(c.to_ascii_uppercase());
            }
            assert_eq!(v.name, snake);
        }
        assert_eq!(tests_support::defaults().len(), VARIABLES.len());
    }

    #[test]
    fn the_defaults_build_the_readmes_policy() {
        let readme = Policy::from_json(
            r#"{"prefix":"timeseries","period":"day","timezone":"UTC","premake":1,
                "key":{"partition":{"name":"pk","type":"S"},"sort":{"name":"sk","type":"S"}},
                "phases":[{"min_age":0,"read":300,"write":1000},{"min_age":1,"read":100,"write":1},
                          {"min_age":2,"read":1,"write":1}]}"#,
        )
        .unwrap();
        assert_eq!(stack(&[]).policy().unwrap(), readme);
        assert_eq!(stack(&[]).grants(), Grants::parse(Some(""), Some("timeseries")));
    }

    #[test]
    fn unset_means_empty_or_zero_and_on_demand_ignores_the_capacities() {
        let policy = stack(&[
            ("SortKeyName", ""),
            ("ColdBilling", "on_demand"),
            ("ColdReadCapacity", "not used"),
            ("WriteGrace", "1h 30m"),
            ("ArchiveBucket", "archive"),
            ("DeleteAfter", "40"),
        ])
        .policy();
        // A bad capacity is still a bad variable, used or not.
        let err = policy.unwrap_err();
        assert_eq!(err.0.len(), 1, "{err}");
        assert_eq!(err.0[0].name, "ROLLOVER_COLD_READ_CAPACITY");
        let policy = stack(&[
            ("SortKeyName", ""),
            ("ColdBilling", "on_demand"),
            ("WriteGrace", "1h 30m"),
            ("ArchiveBucket", "archive"),
            ("DeleteAfter", "40"),
        ])
        .policy()
        .unwrap();
        assert!(policy.key.sort.is_none());
        assert!(matches!(
            policy.phases[2].billing,
            ddb_rollover::policy::Billing::OnDemand(_)
        ));
        assert_eq!(policy.grace, Some(std::time::Duration::from_secs(5400)));
        // Archiving turns point-in-time recovery on.
        assert!(policy.template.point_in_time_recovery);
        let retention = policy.retention.unwrap();
        assert_eq!(retention.delete_after, Some(40));
        assert_eq!(retention.archive.unwrap().after, 30);
    }

    #[test]
    fn every_bad_variable_is_named_with_its_parameter_and_value() {
        let err = stack(&[
            ("Premake", "many"),
            ("Period", "fortnight"),
            ("HotReadCapacity", "0"),
            ("PointInTimeRecovery", "yes"),
            ("PartitionKeyType", "X"),
        ])
        .policy()
        .unwrap_err();
        let names: Vec<&str> = err.0.iter().map(|b| b.name).collect();
        for named in [
            "ROLLOVER_PREMAKE",
            "ROLLOVER_PERIOD",
            "ROLLOVER_HOT_READ_CAPACITY",
            "ROLLOVER_POINT_IN_TIME_RECOVERY",
            "ROLLOVER_PARTITION_KEY_TYPE",
        ] {
            assert!(names.contains(&named), "{named}: {err}");
        }
        let message = err.to_string();
        assert!(
            message.contains("ROLLOVER_PERIOD (parameter Period) is \"fortnight\": "),
            "{message}"
        );
        assert!(message.contains("PolicyOverride"), "{message}");
        // A variable the template sets but the environment lacks.
        let partial =
            StackParameters::from_lookup(|name| (name == "ROLLOVER_TABLE_PREFIX").then(|| "t".into()))
                .unwrap();
        let err = partial.policy().unwrap_err();
        assert_eq!(err.0.len(), VARIABLES.len() - 1, "{err}");
        assert!(err
            .to_string()
            .contains("ROLLOVER_MAX_DELETES_PER_RUN (parameter MaxDeletesPerRun) is not set"));
    }

    const STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/timeseries-changes";

    #[test]
    fn change_stream_arn_names_the_policys_kinesis_stream() {
        assert_eq!(stack(&[]).policy().unwrap().stream.kinesis, None);
        let policy = stack(&[("ChangeStreamArn", STREAM)]).policy().unwrap();
        let kinesis = policy.stream.kinesis.as_ref().expect("a Kinesis destination");
        assert_eq!(kinesis.stream_arn.as_str(), STREAM);
        assert_eq!(kinesis.precision, Default::default());
        // What the parameters build, the parameters grant.
        let stack = stack(&[("ChangeStreamArn", STREAM)]);
        assert_eq!(stack.grants().check(&policy), Ok(()));
        // A bad ARN is named with its variable.
        let err = stack_with_bad_stream().policy().unwrap_err();
        assert_eq!(err.0.len(), 1, "{err}");
        assert_eq!(err.0[0].name, "ROLLOVER_CHANGE_STREAM_ARN");
        assert!(err.to_string().contains("(parameter ChangeStreamArn)"), "{err}");
    }

    fn stack_with_bad_stream() -> StackParameters {
        stack(&[(
            "ChangeStreamArn",
            "arn:aws:sqs:us-east-1:123456789012:queue-not-a-stream",
        )])
    }

    #[test]
    fn a_policy_override_naming_another_stream_than_granted_is_refused() {
        let other = "arn:aws:kinesis:us-east-1:123456789012:stream/orders-changes";
        let wants = |arn: &str| {
            Policy::from_json(&format!(
                r#"{{"prefix":"timeseries","stream":{{"kinesis":"{arn}"}}}}"#
            ))
            .unwrap()
        };
        let err = stack(&[("ChangeStreamArn", STREAM)])
            .grants()
            .check(&wants(other))
            .unwrap_err()
            .to_string();
        for named in ["stream.kinesis", "ChangeStreamArn", other, STREAM] {
            assert!(err.contains(named), "{named}: {err}");
        }
        let err = stack(&[]).grants().check(&wants(STREAM)).unwrap_err().to_string();
        assert!(
            err.contains("stream.kinesis") && err.contains("ChangeStreamArn"),
            "{err}"
        );
        assert_eq!(
            stack(&[("ChangeStreamArn", STREAM)])
                .grants()
                .check(&wants(STREAM)),
            Ok(())
        );
    }

    const CONSUMER: &str = "arn:aws:lambda:us-east-1:123456789012:function:ingest-consumer";

    #[test]
    fn consumer_function_arn_names_the_policys_consumer_and_turns_the_tables_stream_on() {
        let policy = stack(&[]).policy().unwrap();
        assert_eq!(policy.stream.lambda, None);
        assert_eq!(
            policy.template.stream, None,
            "the tables' stream is left as it is"
        );
        let policy = stack(&[("ConsumerFunctionArn", CONSUMER)]).policy().unwrap();
        let lambda = policy.stream.lambda.as_ref().expect("a consumer function");
        assert_eq!(lambda.function.as_str(), CONSUMER);
        // The policy's defaults for the rest.
        assert_eq!(lambda.batch_size, 100);
        assert_eq!(lambda.starting_position, StartingPosition::TrimHorizon);
        assert!(lambda.filters.is_empty());
        assert_eq!(policy.template.stream, Some(Some(StreamView::NewAndOldImages)));
        assert_eq!(policy.stream.kinesis, None);
        // The README's policy but for the template's stream and the consumer.
        let readme = stack(&[]).policy().unwrap();
        assert_eq!(policy.phases, readme.phases);
        assert_eq!(policy.retention, readme.retention);
        assert!(!policy.template.point_in_time_recovery && policy.template.ttl_attribute.is_none());
        // What the parameters build, the parameters grant.
        let consuming = stack(&[("ConsumerFunctionArn", CONSUMER)]);
        assert_eq!(consuming.grants().check(&policy), Ok(()));
        // Both destinations at once.
        let both = stack(&[("ConsumerFunctionArn", CONSUMER), ("ChangeStreamArn", STREAM)]);
        let policy = both.policy().unwrap();
        assert!(policy.stream.kinesis.is_some() && policy.stream.lambda.is_some());
        assert_eq!(both.grants().check(&policy), Ok(()));
        // A bad ARN is named with its variable.
        let err = stack(&[(
            "ConsumerFunctionArn",
            "arn:aws:sqs:us-east-1:123456789012:queue-not-a-function",
        )])
        .policy()
        .unwrap_err();
        assert_eq!(err.0.len(), 1, "{err}");
        assert_eq!(err.0[0].name, "ROLLOVER_CONSUMER_FUNCTION_ARN");
        assert!(
            err.to_string().contains("(parameter ConsumerFunctionArn)"),
            "{err}"
        );
    }

    #[test]
    fn a_policy_override_naming_another_consumer_than_granted_is_refused() {
        let other = "arn:aws:lambda:us-east-1:123456789012:function:orders-consumer";
        let wants = |arn: &str| {
            Policy::from_json(&format!(
                r#"{{"prefix":"timeseries","template":{{"stream":"new_image"}},"stream":{{"lambda":{{"function":"{arn}","batch_size":500}}}}}}"#
            ))
            .unwrap()
        };
        let err = stack(&[("ConsumerFunctionArn", CONSUMER)])
            .grants()
            .check(&wants(other))
            .unwrap_err()
            .to_string();
        for named in ["stream.lambda.function", "ConsumerFunctionArn", other, CONSUMER] {
            assert!(err.contains(named), "{named}: {err}");
        }
        let err = stack(&[])
            .grants()
            .check(&wants(CONSUMER))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("stream.lambda.function") && err.contains("ConsumerFunctionArn"),
            "{err}"
        );
        // The granted function, with the policy's own settings; or no consumer at all.
        let granted = stack(&[("ConsumerFunctionArn", CONSUMER)]).grants();
        assert_eq!(granted.check(&wants(CONSUMER)), Ok(()));
        assert_eq!(
            granted.check(&Policy::from_json(r#"{"prefix":"timeseries"}"#).unwrap()),
            Ok(())
        );
    }

    #[test]
    fn no_table_prefix_is_no_stack() {
        assert_eq!(StackParameters::from_lookup(|_| None), None);
    }

    #[test]
    fn the_grants_are_what_the_templates_conditions_grant() {
        let grants = |changes: &[(&str, &str)]| -> Vec<Capability> {
            stack(changes).grants().capabilities.into_iter().collect()
        };
        assert_eq!(grants(&[]), []);
        assert_eq!(grants(&[("TtlAttribute", "expires")]), [Capability::Ttl]);
        assert_eq!(grants(&[("PointInTimeRecovery", "true")]), [Capability::Pitr]);
        assert_eq!(
            grants(&[("ArchiveBucket", "b")]),
            [Capability::Pitr, Capability::Archive]
        );
        assert_eq!(grants(&[("DeleteAfter", "3")]), [Capability::Delete]);
        assert_eq!(grants(&[("Autoscaling", "true")]), [Capability::Autoscaling]);
        assert_eq!(grants(&[("ChangeStreamArn", STREAM)]), [Capability::Stream]);
        assert_eq!(
            grants(&[("ConsumerFunctionArn", CONSUMER)]),
            [Capability::Consumer]
        );
        assert_eq!(
            stack(&[("ConsumerFunctionArn", CONSUMER)])
                .grants()
                .consumer_function_arn
                .as_deref(),
            Some(CONSUMER)
        );
        assert_eq!(stack(&[]).grants().consumer_function_arn, None);
        assert_eq!(
            stack(&[("ChangeStreamArn", STREAM)])
                .grants()
                .stream_arn
                .as_deref(),
            Some(STREAM)
        );
        assert_eq!(stack(&[]).grants().stream_arn, None);
        assert_eq!(
            stack(&[("TablePrefix", "m")]).grants().table_prefix.as_deref(),
            Some("m")
        );
    }
}
