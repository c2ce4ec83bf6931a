//! From a document to a [`Policy`]: the blog's defaults filled in and every field checked,
//! all problems reported at once, each naming its field and what is allowed.

use std::fmt;
use std::time::Duration;

use chrono_tz::Tz;

use crate::policy::blueprint::Blueprint;
use crate::policy::indexes::validate_indexes;
use crate::policy::limits::{MAX_AGE_PERIODS, MAX_UNITS};
use crate::policy::naming::TableNaming;
use crate::policy::period::{Calendar, PeriodKind};
use crate::policy::rates::Rates;
use crate::policy::retention::{Retention, RetentionDocument};
use crate::policy::scaling;
use crate::policy::scaling::{Autoscaling, ScalableDimension};
use crate::policy::settings::{
    AttributeKind, Billing, Capacity, KeyAttribute, KeySchema, KeySchemaDocument, OnDemandLimits, TableClass,
};
use crate::policy::stream::ChangeStream;
use crate::policy::warm::WarmThroughput;
use crate::policy::{
    AutoscalingDocument, Phase, PhaseDocument, Policy, PolicyDocument, MAX_GRACE, MAX_PREMAKE,
};

/// One invalid field: its path in the document and what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldError {
    /// The field's path in the document (`phases[1].read`).
    pub field: String,
    /// What is wrong and what to change.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Why a policy could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The policy file could not be read.
    #[error("cannot read policy file {path}: {source}")]
    Read {
        /// The file's path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not valid TOML or JSON.
    #[error("policy is not valid {format}: {message}")]
    Syntax {
        /// `TOML` or `JSON`.
        format: &'static str,
        /// The parser's error.
        message: String,
    },
    /// Every invalid field, each with what to change.
    #[error("invalid policy:\n  {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  "))]
    Invalid(Vec<FieldError>),
}

impl PolicyError {
    /// The invalid fields, if this is a validation error.
    pub fn fields(&self) -> &[FieldError] {
        match self {
            PolicyError::Invalid(fields) => fields,
            _ => &[],
        }
    }
}

impl PolicyDocument {
    /// Fills the blog's defaults and checks every field; all problems are reported at once.
    pub fn validate(&self) -> Result<Policy, PolicyError> {
        let mut problems = Vec::new();
        let errors = &mut problems;

        let period = match self.period.as_deref().unwrap_or("day").parse::<PeriodKind>() {
            Ok(period) => Some(period),
            Err(message) => {
                fail(errors, "period", message.to_string());
                None
            }
        };

        let timezone_name = self.timezone.as_deref().unwrap_or("UTC");
        let timezone = match timezone_name.parse::<Tz>() {
            Ok(tz) => Some(tz),
            Err(_) => {
                fail(
                    errors,
                    "timezone",
                    format!(
                        "unknown time zone {timezone_name:?}: use an IANA name such as \"UTC\", \"Europe/Berlin\" or \"America/New_York\""
                    ),
                );
                None
            }
        };

        let prefix = self.prefix.clone().unwrap_or_else(|| "timeseries".into());
        // With an invalid period, check the prefix against the shortest label, so its other
        // problems are still reported in the same answer.
        if let Err(message) = TableNaming::check_prefix(&prefix, period.unwrap_or(PeriodKind::Year)) {
            fail(errors, "prefix", message);
        }

        let premake = self.premake.unwrap_or(1);
        if !(0..=i64::from(MAX_PREMAKE)).contains(&premake) {
            fail(
                    errors,
                "premake",
                format!(
                    "{premake} is out of range: use 0 to {MAX_PREMAKE} periods to pre-build ahead of the current one"
                ),
            );
        }

        let (key_document, key) = self.check_key(errors);
        let indexes = validate_indexes(
            &key_document,
            self.indexes.as_deref().unwrap_or_default(),
            self.local_indexes.as_deref().unwrap_or_default(),
        );
        let index_names: Vec<&str> = match &indexes {
            Ok((globals, _)) => globals.iter().map(|i| i.name.as_str()).collect(),
            Err(problems) => {
                for (name, message) in problems {
                    fail(errors, name, message.clone());
                }
                self.indexes.iter().flatten().map(|i| i.name.as_str()).collect()
            }
        };

        let grace = self.check_grace(errors);
        let (phases, parsed_phases) = self.check_phases(&index_names, errors);
        let (template, retention, rates) = self.check_sections(errors);
        let stream = self.check_stream(errors);
        if let (Some(grace), Some(period), Some(timezone), Some(retention)) =
            (grace.filter(|g| !g.is_zero()), period, timezone, &retention)
        {
            let text = self.grace.as_deref().unwrap_or_default();
            let calendar = Calendar::new(period, timezone);
            if let Some(message) = grace_against_retention(text, grace, calendar, retention) {
                fail(errors, "grace", message);
            }
        }
        let maps_consumer = self.stream.as_ref().is_some_and(|s| s.lambda.is_some());
        if maps_consumer
            && !template
                .as_ref()
                .is_some_and(|t| matches!(t.stream, Some(Some(_))))
        {
            fail(
                errors,
                "template.stream",
                "stream.lambda maps the consumer function to each table's DynamoDB stream, which the table template must turn on: set it to \"keys_only\", \"new_image\", \"old_image\" or \"new_and_old_images\"".into(),
            );
        }
        let archiving = self.retention.as_ref().is_some_and(|r| r.archive_after.is_some());
        let pitr_off = self
            .template
            .as_ref()
            .is_some_and(|t| t.point_in_time_recovery == Some(false));
        if archiving && pitr_off {
            fail(
                    errors,
                "template.point_in_time_recovery",
                "retention.archive_after exports with ExportTableToPointInTime, which needs point-in-time recovery: remove this or set it to true".into(),
            );
        }

        // Our scaling policies' names carry the prefix; Application Auto Scaling caps their length.
        let longest_policy_name = scaling::policy_name(&prefix, ScalableDimension::TableWrite).len();
        if phases.iter().any(|p| p.autoscaling.is_some()) && longest_policy_name > scaling::MAX_POLICY_NAME {
            fail(
                    errors,
                "prefix",
                format!(
                    "too long for autoscaling phases: the scaling policies are named ddb-rollover-{{prefix}}-write, at most {} characters; shorten the prefix by {}",
                    scaling::MAX_POLICY_NAME,
                    longest_policy_name - scaling::MAX_POLICY_NAME
                ),
            );
        }

        if !problems.is_empty() {
            return Err(PolicyError::Invalid(problems));
        }
        let (indexes, local_indexes) = indexes.expect("checked above");
        Ok(Policy {
            indexes,
            local_indexes,
            grace: grace.filter(|g| !g.is_zero()),
            template: template.expect("checked above"),
            retention,
            rates,
            stream,
            prefix,
            period: period.expect("checked above"),
            timezone: timezone.expect("checked above"),
            premake: premake as u32,
            key: key.expect("checked above"),
            phases: phases
                .iter()
                .zip(parsed_phases)
                .map(|(p, settings)| Phase {
                    min_age: p.min_age as u32,
                    ..settings.expect("checked above")
                })
                .collect(),
        })
    }

    /// The table's key schema: its document (the indexes are checked against it) and the
    /// schema, `None` when a type is not valid.
    fn check_key(&self, errors: &mut Vec<FieldError>) -> (KeySchemaDocument, Option<KeySchema>) {
        let key_document = self
            .key
            .clone()
            .unwrap_or_else(|| KeySchemaDocument::from(&default_key()));
        for (field, attribute) in [
            ("key.partition", Some(&key_document.partition)),
            ("key.sort", key_document.sort.as_ref()),
        ] {
            if let Some(attribute) = attribute {
                let len = attribute.name.len();
                if !(1..=255).contains(&len) {
                    fail(
                        errors,
                        &format!("{field}.name"),
                        format!("{:?} must be 1 to 255 bytes long", attribute.name),
                    );
                }
                if let Err(message) = attribute.attribute_kind() {
                    fail(errors, &format!("{field}.type"), message);
                }
            }
        }
        if key_document
            .sort
            .as_ref()
            .is_some_and(|sort| sort.name == key_document.partition.name)
        {
            fail(
                errors,
                "key.sort.name",
                format!(
                    "{:?} is also the partition key: use a different attribute name",
                    key_document.partition.name
                ),
            );
        }
        // `None` when a type is not valid (named above).
        let key = key_document.partition.attribute().and_then(|partition| {
            let sort = match &key_document.sort {
                None => None,
                Some(sort) => Some(sort.attribute()?),
            };
            Some(KeySchema { partition, sort })
        });

        (key_document, key)
    }

    /// How long a table keeps phase 0 after its period ends; `None` without one or when bad.
    fn check_grace(&self, errors: &mut Vec<FieldError>) -> Option<Duration> {
        let grace = match self.grace.as_deref().map(humantime::parse_duration) {
            None => None,
            Some(Ok(grace)) if grace > MAX_GRACE => {
                fail(
                    errors,
                    "grace",
                    format!(
                        "{:?} is longer than the 100 years allowed: use at most \"100y\" (how long a table keeps phase 0 after its period ends)",
                        self.grace.as_deref().unwrap_or_default()
                    ),
                );
                None
            }
            Some(Ok(grace)) => Some(grace),
            Some(Err(e)) => {
                fail(
                    errors,
                    "grace",
                    format!("{e}: use a duration such as \"90m\" or \"2h\" (how long a table keeps phase 0 after its period ends)"),
                );
                None
            }
        };

        grace
    }

    /// The phases as written (defaults filled in) and each one's settings, `None` when bad.
    fn check_phases(
        &self,
        index_names: &[&str],
        errors: &mut Vec<FieldError>,
    ) -> (Vec<PhaseDocument>, Vec<Option<Phase>>) {
        let phases = self.phases.clone().unwrap_or_else(default_phases);
        if phases.is_empty() {
            fail(
                errors,
                "phases",
                "must list at least one phase, starting with min_age = 0".into(),
            );
        }
        let mut previous_age: Option<i64> = None;
        let mut parsed_phases = Vec::new();
        for (i, phase) in phases.iter().enumerate() {
            let field = format!("phases[{i}]");
            match previous_age {
                None if phase.min_age != 0 => fail(
                    errors,
                    &format!("{field}.min_age"),
                    format!(
                        "the first phase must have min_age = 0 (the current and pre-built tables), not {}",
                        phase.min_age
                    ),
                ),
                Some(previous) if phase.min_age <= previous => fail(
                    errors,
                    &format!("{field}.min_age"),
                    format!(
                        "{} must be greater than the previous phase's min_age ({previous}): phases are listed youngest first",
                        phase.min_age
                    ),
                ),
                _ if phase.min_age > MAX_AGE_PERIODS => fail(
                    errors,
                    &format!("{field}.min_age"),
                    format!(
                        "{} is too large: use at most {MAX_AGE_PERIODS} periods (an account holds at most 10,000 tables, so no table gets older)",
                        phase.min_age
                    ),
                ),
                _ => {}
            }
            previous_age = Some(phase.min_age);
            let settings = phase_settings(phase, &field, index_names);
            if let Err(problems) = &settings {
                for (name, message) in problems {
                    fail(errors, &format!("{field}.{name}"), message.clone());
                }
            }
            parsed_phases.push(settings.ok());
        }

        (phases, parsed_phases)
    }

    /// The `[stream]` section.
    fn check_stream(&self, errors: &mut Vec<FieldError>) -> ChangeStream {
        match self.stream.clone().unwrap_or_default().validate() {
            Ok(stream) => stream,
            Err(problems) => {
                for (name, message) in problems {
                    fail(errors, &format!("stream.{name}"), message);
                }
                ChangeStream::default()
            }
        }
    }

    /// The `[template]`, `[retention]` and `[rates]` sections, each checked by its own module.
    fn check_sections(&self, errors: &mut Vec<FieldError>) -> (Option<Blueprint>, Option<Retention>, Rates) {
        let template = match self.template.clone().unwrap_or_default().validate() {
            Ok(template) => Some(template),
            Err(problems) => {
                for (name, message) in problems {
                    fail(errors, &format!("template.{name}"), message);
                }
                None
            }
        };
        let retention = match self.retention.as_ref().map(RetentionDocument::validate) {
            None => None,
            Some(Ok(retention)) => Some(retention),
            Some(Err(problems)) => {
                for (name, message) in problems {
                    fail(errors, &format!("retention.{name}"), message);
                }
                None
            }
        };
        let rates = match self.rates.clone().unwrap_or_default().validate() {
            Ok(rates) => rates,
            Err(problems) => {
                for (name, message) in problems {
                    fail(errors, &format!("rates.{name}"), message);
                }
                Rates::default()
            }
        };
        (template, retention, rates)
    }
}

/// What is wrong with a number of throughput units, if anything: below DynamoDB's minimum of 1,
/// or above [`MAX_UNITS`].
pub(super) fn units_problem(units: i64) -> Option<String> {
    if units < 1 {
        Some(format!("{units} is below DynamoDB's minimum: use 1 or more"))
    } else if units > MAX_UNITS {
        Some(format!(
            "{units} is above {MAX_UNITS}, the most this tool accepts (DynamoDB's default quota is 40000 read and 40000 write units per table, raised through Service Quotas): use 1 to {MAX_UNITS}"
        ))
    } else {
        None
    }
}

/// Records that `field` is bad and why.
fn fail(errors: &mut Vec<FieldError>, field: &str, message: String) {
    errors.push(FieldError {
        field: field.to_string(),
        message,
    });
}

/// The blog's key: numeric partition and sort keys `pk` / `sk`.
pub(super) fn default_key() -> KeySchema {
    KeySchema {
        partition: KeyAttribute {
            name: "pk".into(),
            kind: AttributeKind::N,
        },
        sort: Some(KeyAttribute {
            name: "sk".into(),
            kind: AttributeKind::N,
        }),
    }
}

/// Why a table would still be in its write grace when retention archives or deletes it, if it
/// would. A table of period `s` is archived or deleted when its age reaches N, at the start of
/// period `s + N`; its grace runs from the end of `s`, the start of `s + 1`. So the grace may
/// last as long as the shortest N - 1 periods of the policy's calendar, and no longer.
fn grace_against_retention(
    text: &str,
    grace: Duration,
    calendar: Calendar,
    retention: &Retention,
) -> Option<String> {
    let grace = chrono::Duration::from_std(grace).unwrap_or(chrono::Duration::MAX);
    // (field, N, the longest grace that ends by age N) for each limit the grace passes.
    let broken: Vec<(&str, u32, chrono::Duration)> = [
        (
            "retention.archive_after",
            retention.archive.as_ref().map(|a| a.after),
        ),
        ("retention.delete_after", retention.delete_after),
    ]
    .into_iter()
    .filter_map(|(field, periods)| {
        let periods = periods?;
        Some((field, periods, calendar.shortest_span(periods.saturating_sub(1))))
    })
    .filter(|(_, _, allowed)| grace > *allowed)
    .collect();
    let (tightest_field, tightest, bound) = broken.iter().copied().min_by_key(|(_, periods, _)| *periods)?;
    let plural = |n: u32| if n == 1 { "" } else { "s" };
    let fields: Vec<String> = broken
        .iter()
        .map(|(field, n, _)| format!("{field} ({n} period{})", plural(*n)))
        .collect();
    let fields = fields.join(" and ");
    if bound <= chrono::Duration::zero() {
        return Some(format!(
            "{text:?} must end before {fields}, but with {tightest_field} = 1 a table is archived or deleted as soon as its period ends: no grace is possible; remove the grace or raise {tightest_field}"
        ));
    }
    let bound_text = humantime::format_duration(bound.to_std().unwrap_or_default());
    let periods = tightest - 1;
    Some(format!(
        "{text:?} must end before {fields}: at most {bound_text} with period = \"{}\" in {}, the shortest {periods} period{} there (a grace starts when a table's period ends; retention acts when its age reaches {tightest}); shorten the grace or raise {}",
        calendar.kind(),
        calendar.tz().name(),
        plural(periods),
        broken.iter().map(|(field, _, _)| *field).collect::<Vec<_>>().join(" and "),
    ))
}

/// The blog's capacities: today 300/1000, yesterday 100/1, older 1/1.
fn default_phases() -> Vec<PhaseDocument> {
    [(0, 300, 1000), (1, 100, 1), (2, 1, 1)]
        .into_iter()
        .map(|(min_age, read, write)| PhaseDocument {
            min_age,
            read: Some(read),
            write: Some(write),
            ..PhaseDocument::default()
        })
        .collect()
}

/// Problems with one phase: (field within the phase, what to change).
type PhaseProblems = Vec<(String, String)>;

/// A phase's settings (its `min_age` left at 0), or every problem with it. `indexes`: the
/// policy's global secondary index names, which `index_overrides` may name.
fn phase_settings(phase: &PhaseDocument, field: &str, indexes: &[&str]) -> Result<Phase, PhaseProblems> {
    let mut problems: PhaseProblems = Vec::new();
    let table_class = match phase.table_class.as_deref().map(TableClass::from_policy_str) {
        None => None,
        Some(Ok(class)) => Some(class),
        Some(Err(message)) => {
            problems.push(("table_class".into(), message));
            None
        }
    };
    let positive = |problems: &mut PhaseProblems, name: &str, value: Option<i64>| {
        if let Some(message) = value.and_then(units_problem) {
            problems.push((name.to_string(), message));
        }
    };
    // The capacity settings the phase sets, by name; each billing mode refuses those it does
    // not use.
    let set: Vec<&str> = [
        ("read", phase.read.is_some()),
        ("write", phase.write.is_some()),
        ("max_read", phase.max_read.is_some()),
        ("max_write", phase.max_write.is_some()),
        ("index_read", phase.index_read.is_some()),
        ("index_write", phase.index_write.is_some()),
        ("index_overrides", phase.index_overrides.is_some()),
        ("index_max_read", phase.index_max_read.is_some()),
        ("index_max_write", phase.index_max_write.is_some()),
        ("autoscaling", phase.autoscaling.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, is_set)| is_set.then_some(name))
    .collect();
    let only_with = |problems: &mut PhaseProblems, unused: &[&str], what: &str| {
        for name in set.iter().filter(|name| unused.contains(name)) {
            problems.push((name.to_string(), what.to_string()));
        }
    };
    if indexes.is_empty() && set.iter().any(|name| name.starts_with("index_")) {
        problems.push((
            "index_read".into(),
            "index capacity without [[indexes]]: remove the index_* fields, or add the global secondary indexes".into(),
        ));
    }
    let mut autoscaling = None;
    let (billing, index_billing) = match phase.billing.as_deref().unwrap_or("provisioned") {
        "provisioned" if phase.autoscaling.is_some() => {
            only_with(
                &mut problems,
                &[
                    "read",
                    "write",
                    "max_read",
                    "max_write",
                    "index_read",
                    "index_write",
                    "index_overrides",
                    "index_max_read",
                    "index_max_write",
                ],
                &format!(
                    "not used with {field}.autoscaling (the autoscaler sets the capacity of the table and its indexes between its bounds): remove it"
                ),
            );
            autoscaling = autoscaling_bounds(phase.autoscaling.as_ref().expect("matched"), &mut problems);
            let a = autoscaling.unwrap_or(Autoscaling {
                min_read: 1,
                max_read: 1,
                min_write: 1,
                max_write: 1,
                target: scaling::DEFAULT_TARGET,
            });
            // CreateTable starts a table and its indexes at the minimums; the autoscaler raises
            // them from there.
            let minimums = Billing::Provisioned(Capacity {
                read: a.min_read,
                write: a.min_write,
            });
            (minimums, minimums)
        }
        "provisioned" => {
            only_with(
                &mut problems,
                &["max_read", "max_write", "index_max_read", "index_max_write"],
                &format!("only for on-demand phases: remove it, or set {field}.billing = \"on_demand\""),
            );
            for (name, value) in [("read", phase.read), ("write", phase.write)] {
                if value.is_none() {
                    problems.push((
                        name.into(),
                        format!("required for a provisioned phase (capacity units, 1 or more), or set {field}.billing = \"on_demand\""),
                    ));
                }
                positive(&mut problems, name, value);
            }
            positive(&mut problems, "index_read", phase.index_read);
            positive(&mut problems, "index_write", phase.index_write);
            for (index, capacity) in phase.index_overrides.iter().flatten() {
                if !indexes.is_empty() && !indexes.contains(&index.as_str()) {
                    problems.push((
                        format!("index_overrides.{index}"),
                        format!(
                            "no index {index:?} in [[indexes]]: use one of {}",
                            indexes.join(", ")
                        ),
                    ));
                }
                positive(
                    &mut problems,
                    &format!("index_overrides.{index}.read"),
                    Some(capacity.read),
                );
                positive(
                    &mut problems,
                    &format!("index_overrides.{index}.write"),
                    Some(capacity.write),
                );
            }
            let table = Capacity {
                read: phase.read.unwrap_or(1),
                write: phase.write.unwrap_or(1),
            };
            (
                Billing::Provisioned(table),
                Billing::Provisioned(Capacity {
                    read: phase.index_read.unwrap_or(table.read),
                    write: phase.index_write.unwrap_or(table.write),
                }),
            )
        }
        "on_demand" => {
            let unused = "not used by an on-demand phase: remove it (max_read / max_write and index_max_read / index_max_write cap on-demand throughput)";
            only_with(
                &mut problems,
                &[
                    "read",
                    "write",
                    "index_read",
                    "index_write",
                    "index_overrides",
                    "autoscaling",
                ],
                unused,
            );
            for (name, value) in [
                ("max_read", phase.max_read),
                ("max_write", phase.max_write),
                ("index_max_read", phase.index_max_read),
                ("index_max_write", phase.index_max_write),
            ] {
                positive(&mut problems, name, value);
            }
            (
                Billing::OnDemand(OnDemandLimits {
                    max_read: phase.max_read,
                    max_write: phase.max_write,
                }),
                Billing::OnDemand(OnDemandLimits {
                    max_read: phase.index_max_read,
                    max_write: phase.index_max_write,
                }),
            )
        }
        other => {
            problems.push((
                "billing".into(),
                format!("unknown billing {other:?}: use \"provisioned\" or \"on_demand\""),
            ));
            let any = Billing::OnDemand(OnDemandLimits::default());
            (any, any)
        }
    };
    let warm = phase.warm.and_then(|warm| {
        let (floor, source) = warm_floor(billing, index_billing, phase, indexes);
        warm.validate(floor, &source)
            .map_err(|found| {
                for (name, message) in found {
                    problems.push((format!("warm.{name}"), message));
                }
            })
            .ok()
    });
    if problems.is_empty() {
        Ok(Phase {
            min_age: 0,
            billing,
            index_billing,
            index_overrides: phase.index_overrides.clone().unwrap_or_default(),
            table_class,
            autoscaling,
            warm,
        })
    } else {
        Err(problems)
    }
}

/// The least warm throughput DynamoDB takes for a phase's table and global indexes (one value
/// serves them all), and where it comes from: the on-demand starting values, or the highest
/// provisioned capacity the phase gives the table or an index (CreateTable's, the minimums for
/// an autoscaling phase), since warm throughput is never below the provisioned throughput.
fn warm_floor(
    billing: Billing,
    index_billing: Billing,
    phase: &PhaseDocument,
    indexes: &[&str],
) -> (WarmThroughput, String) {
    if matches!(billing, Billing::OnDemand(_)) {
        return (
            WarmThroughput::ON_DEMAND,
            "DynamoDB's on-demand default (a new on-demand table and index start at 12000 read / 4000 write units per second)".into(),
        );
    }
    let mut floor = WarmThroughput::floor_for(billing);
    if !indexes.is_empty() {
        let overrides = phase
            .index_overrides
            .iter()
            .flatten()
            .map(|(_, c)| Billing::Provisioned(*c));
        for index in std::iter::once(index_billing).chain(overrides) {
            floor = floor.raised_to(WarmThroughput::floor_for(index));
        }
    }
    (
        floor,
        "the phase's highest provisioned capacity on the table or an index (warm throughput is never below the provisioned throughput)".into(),
    )
}

/// A phase's autoscaling bounds, or `None` after naming every problem with them.
fn autoscaling_bounds(doc: &AutoscalingDocument, problems: &mut PhaseProblems) -> Option<Autoscaling> {
    let before = problems.len();
    // `None` after naming the problem: a missing or invalid bound is not compared.
    let mut required = |name: &'static str, value: Option<i64>| match value {
        None => {
            problems.push((
                name.to_string(),
                "required for autoscaling (capacity units, 1 or more)".to_string(),
            ));
            None
        }
        Some(units) => match units_problem(units) {
            Some(message) => {
                problems.push((name.to_string(), message));
                None
            }
            None => Some(units),
        },
    };
    let min_read = required("autoscaling.min_read", doc.min_read);
    let max_read = required("autoscaling.max_read", doc.max_read);
    let min_write = required("autoscaling.min_write", doc.min_write);
    let max_write = required("autoscaling.max_write", doc.max_write);
    for (name, min_name, min, max) in [
        ("autoscaling.max_read", "min_read", min_read, max_read),
        ("autoscaling.max_write", "min_write", min_write, max_write),
    ] {
        let (Some(min), Some(max)) = (min, max) else {
            continue;
        };
        if max < min {
            problems.push((
                name.to_string(),
                format!("{max} is below {min_name} ({min}): use at least {min}"),
            ));
        }
    }
    let target = doc.target.unwrap_or(i64::from(scaling::DEFAULT_TARGET));
    if !scaling::TARGET_RANGE.contains(&target) {
        problems.push((
            "autoscaling.target".into(),
            format!(
                "{target} is out of range: use a target utilisation of {} to {} percent",
                scaling::TARGET_RANGE.start(),
                scaling::TARGET_RANGE.end()
            ),
        ));
    }
    if problems.len() > before {
        return None;
    }
    Some(Autoscaling {
        min_read: min_read?,
        max_read: max_read?,
        min_write: min_write?,
        max_write: max_write?,
        target: target as u32,
    })
}
