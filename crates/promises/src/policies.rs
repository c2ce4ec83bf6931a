//! Random policies: the phases, retention, change stream and table shape a case runs under
//! ([`PolicySpec`]).

use proptest::prelude::*;

use crate::knobs::Knobs;
use crate::names::{FAMILY_CONSUMER, FAMILY_STREAM};

#[derive(Clone, Debug)]
/// A phase's capacity in a generated policy.
pub enum PhaseKind {
    /// Fixed provisioned (read, write) capacity.
    Provisioned(i64, i64),
    /// On demand, with this maximum on both dimensions, if any.
    OnDemand(Option<i64>),
    /// Two sets of bounds, so a table moving between autoscaling phases has its targets
    /// registered again.
    Autoscaling {
        /// Whether its bounds are the wider of the two sets.
        wide: bool,
    },
}

#[derive(Clone, Debug)]
/// One phase of a generated policy.
pub struct PhaseSpec {
    /// min_age minus the previous phase's (the first phase has min_age 0).
    pub gap: u32,
    /// Its capacity.
    pub kind: PhaseKind,
    /// Its table class, if it sets one.
    pub class: Option<&'static str>,
    /// `warm = { read, write }` (units per second): at least any capacity the generator gives.
    pub warm: Option<(i64, i64)>,
}

#[derive(Clone, Debug)]
/// A generated policy's `[retention]`.
pub struct RetentionSpec {
    /// `delete_after`, in periods.
    pub delete_after: Option<u32>,
    /// `archive_after`, in periods.
    pub archive_after: Option<u32>,
    /// `keep_newest`.
    pub keep_newest: u32,
    /// `max_deletes`.
    pub max_deletes: u32,
}

/// `[stream]`: the family's Kinesis data stream ([`FAMILY_STREAM`], created in the account
/// when the case starts) and, when set, the records' precision.
#[derive(Clone, Debug)]
pub struct StreamSpec {
    /// `precision`, if set.
    pub precision: Option<&'static str>,
}

#[derive(Clone, Debug)]
/// A generated policy, before it is written as TOML ([`PolicySpec::toml`]).
pub struct PolicySpec {
    /// The period (`hour`, `day`, ...).
    pub period: &'static str,
    /// The time zone.
    pub timezone: &'static str,
    /// How many tables create_new makes ahead.
    pub premake: u32,
    /// Whether the tables have the global index `by_device`.
    pub gsi: bool,
    /// Whether the tables have a local index.
    pub lsi: bool,
    /// The grace after a period's end, if any.
    pub grace: Option<&'static str>,
    /// Whether the tables have a TTL attribute.
    pub ttl: bool,
    /// Whether new tables have deletion protection.
    pub deletion_protection: bool,
    /// The phases, youngest first.
    pub phases: Vec<PhaseSpec>,
    /// `[retention]`, if any.
    pub retention: Option<RetentionSpec>,
    /// `[stream]`, if any.
    pub stream: Option<StreamSpec>,
    /// `[stream.lambda] function = FAMILY_CONSUMER` (which needs `[template] stream`).
    pub consumer: bool,
    /// `[template] stream = "new_and_old_images"` without a consumer: the tables have a
    /// stream someone else may map their function to.
    pub table_stream: bool,
}

impl PolicySpec {
    /// The policy as TOML for the family `prefix`.
    pub fn toml(&self, prefix: &str) -> String {
        let mut t = format!(
            "prefix = \"{prefix}\"\nperiod = \"{}\"\ntimezone = \"{}\"\npremake = {}\n",
            self.period, self.timezone, self.premake
        );
        if let Some(grace) = self.grace {
            t.push_str(&format!("grace = \"{grace}\"\n"));
        }
        if self.gsi {
            t.push_str(
                "[[indexes]]\nname = \"by_device\"\npartition = { name = \"device\", type = \"S\" }\nprojection = \"keys_only\"\n",
            );
        }
        if self.lsi {
            t.push_str("[[local_indexes]]\nname = \"by_time\"\nsort = { name = \"ts\", type = \"N\" }\n");
        }
        let mut min_age = 0;
        for (i, phase) in self.phases.iter().enumerate() {
            if i > 0 {
                min_age += phase.gap;
            }
            t.push_str(&format!("[[phases]]\nmin_age = {min_age}\n"));
            match phase.kind {
                PhaseKind::Provisioned(read, write) => t.push_str(&format!("read = {read}\nwrite = {write}\n")),
                PhaseKind::OnDemand(max_read) => {
                    t.push_str("billing = \"on_demand\"\n");
                    if let Some(max) = max_read {
                        t.push_str(&format!("max_read = {max}\n"));
                    }
                }
                PhaseKind::Autoscaling { wide: false } => t.push_str(
                    "autoscaling = { min_read = 5, max_read = 50, min_write = 5, max_write = 100, target = 70 }\n",
                ),
                PhaseKind::Autoscaling { wide: true } => t.push_str(
                    "autoscaling = { min_read = 1, max_read = 400, min_write = 20, max_write = 200, target = 50 }\n",
                ),
            }
            if let Some(class) = phase.class {
                t.push_str(&format!("table_class = \"{class}\"\n"));
            }
            if let Some((read, write)) = phase.warm {
                t.push_str(&format!("warm = {{ read = {read}, write = {write} }}\n"));
            }
        }
        let table_stream = self.consumer || self.table_stream;
        if self.ttl || self.deletion_protection || table_stream {
            t.push_str("[template]\n");
            if table_stream {
                t.push_str("stream = \"new_and_old_images\"\n");
            }
            if self.ttl {
                t.push_str("ttl_attribute = \"expires_at\"\n");
            }
            if self.deletion_protection {
                t.push_str("deletion_protection = true\n");
            }
        }
        if let Some(r) = &self.retention {
            t.push_str(&format!(
                "[retention]\nkeep_newest = {}\nmax_deletes_per_run = {}\n",
                r.keep_newest, r.max_deletes
            ));
            if let Some(after) = r.delete_after {
                t.push_str(&format!("delete_after = {after}\n"));
            }
            if let Some(after) = r.archive_after {
                t.push_str(&format!("archive_after = {after}\nbucket = \"my-archive\"\n"));
            }
        }
        if let Some(stream) = &self.stream {
            t.push_str(&format!("[stream]\nkinesis = \"{FAMILY_STREAM}\"\n"));
            if let Some(precision) = stream.precision {
                t.push_str(&format!("precision = \"{precision}\"\n"));
            }
        }
        if self.consumer {
            t.push_str(&format!("[stream.lambda]\nfunction = \"{FAMILY_CONSUMER}\"\n"));
        }
        t
    }
}

/// A random phase.
pub fn phase_strategy() -> impl Strategy<Value = PhaseSpec> {
    let kind = prop_oneof![
        3 => prop_oneof![Just((300, 1000)), Just((100, 1)), Just((1, 1)), Just((50, 50)), Just((10, 5))]
            .prop_map(|(r, w)| PhaseKind::Provisioned(r, w)),
        1 => prop::option::of(Just(100i64)).prop_map(PhaseKind::OnDemand),
        1 => any::<bool>().prop_map(|wide| PhaseKind::Autoscaling { wide }),
    ];
    let class = prop_oneof![4 => Just(None), 1 => Just(Some("standard_ia")), 1 => Just(Some("standard"))];
    // At or above every capacity above and DynamoDB's on-demand starting values (12,000 / 4,000).
    let warm = prop_oneof![
        5 => Just(None),
        1 => Just(Some((12_000i64, 4_000i64))),
        1 => Just(Some((40_000, 20_000))),
        1 => Just(Some((30_000, 30_000))),
    ];
    (1u32..=3, kind, class, warm).prop_map(|(gap, kind, class, warm)| PhaseSpec {
        gap,
        kind,
        class,
        warm,
    })
}

/// A random `[retention]`.
pub fn retention_strategy() -> impl Strategy<Value = RetentionSpec> {
    (
        prop::option::weighted(0.9, 1u32..=4),
        prop::option::weighted(0.25, 1u32..=2),
        1u32..=3,
        1u32..=3,
    )
        .prop_map(
            |(delete_after, archive_after, keep_newest, max_deletes)| RetentionSpec {
                delete_after,
                archive_after,
                keep_newest,
                max_deletes,
            },
        )
}

/// A random policy, within the knobs.
pub fn policy_strategy(k: &Knobs) -> impl Strategy<Value = PolicySpec> {
    let k = k.clone();
    (
        prop_oneof![Just("hour"), Just("6h"), Just("day"), Just("day"), Just("week"), Just("month")],
        prop_oneof![Just("UTC"), Just("Europe/Berlin")],
        0u32..=3,
        (any::<bool>(), prop::bool::weighted(0.3)),
        prop_oneof![3 => Just(None), 1 => Just(Some("30m")), 1 => Just(Some("2h")), 1 => Just(Some("1day")), 1 => Just(Some("3days"))],
        (prop::bool::weighted(0.2), prop::bool::weighted(0.15)),
        prop::collection::vec(phase_strategy(), 1..=3),
        prop::option::weighted(0.6, retention_strategy()),
        prop::option::weighted(
            0.25,
            prop_oneof![2 => Just(None), 1 => Just(Some("microsecond")), 1 => Just(Some("millisecond"))]
                .prop_map(|precision| StreamSpec { precision }),
        ),
        // A quarter of the policies name the consumer; an eighth give the tables a stream without.
        prop_oneof![5 => Just((false, false)), 2 => Just((true, true)), 1 => Just((false, true))],
    )
        .prop_map(
            move |(
                period,
                timezone,
                premake,
                (gsi, lsi),
                grace,
                (ttl, deletion_protection),
                phases,
                retention,
                stream,
                (consumer, table_stream),
            )| {
                PolicySpec {
                    period,
                    timezone,
                    premake,
                    gsi: gsi || !k.on("policy_without_gsi"),
                    lsi,
                    grace: grace.filter(|_| k.on("grace")),
                    ttl: ttl && k.on("ttl"),
                    deletion_protection,
                    phases: phases
                        .into_iter()
                        .map(|p| PhaseSpec {
                            class: p.class.filter(|_| k.on("table_class")),
                            warm: p.warm.filter(|_| k.on("warm")),
                            ..p
                        })
                        .map(|p| match p.kind {
                            PhaseKind::Autoscaling { .. } if !k.on("autoscaling") => PhaseSpec {
                                kind: PhaseKind::Provisioned(50, 50),
                                ..p
                            },
                            PhaseKind::OnDemand(Some(_)) if !k.on("on_demand_max") => PhaseSpec {
                                kind: PhaseKind::OnDemand(None),
                                ..p
                            },
                            _ => p,
                        })
                        .collect(),
                    retention: retention.filter(|_| k.on("retention")).map(|r| RetentionSpec {
                        archive_after: r.archive_after.filter(|_| k.on("archive")),
                        ..r
                    }),
                    stream: stream.filter(|_| k.on("stream")),
                    consumer: consumer && k.on("lambda"),
                    table_stream: table_stream && k.on("lambda"),
                }
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::PREFIX;
    use ddb_rollover::policy::Precision;
    use ddb_rollover::Policy;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    #[test]
    fn a_policy_that_streams_names_the_family_stream_and_its_precision() {
        let mut runner = TestRunner::deterministic();
        let knobs = Knobs {
            without: Default::default(),
        };
        let strategy = policy_strategy(&knobs);
        let (mut streaming, mut valid) = (0, 0);
        for _ in 0..400 {
            let spec = strategy.new_tree(&mut runner).unwrap().current();
            let policy = match Policy::from_toml(&spec.toml(PREFIX)) {
                Ok(policy) => policy,
                // Some random policies are invalid (the generator filters them), never for `[stream]`.
                Err(e) => {
                    let e = e.to_string();
                    assert!(!e.contains("stream") && !e.contains("kinesis"), "{e}");
                    continue;
                }
            };
            valid += 1;
            let named = policy.stream.kinesis.as_ref();
            assert_eq!(named.is_some(), spec.stream.is_some(), "{}", spec.toml(PREFIX));
            if let (Some(kinesis), Some(stream)) = (named, &spec.stream) {
                streaming += 1;
                assert_eq!(kinesis.stream_arn.as_str(), FAMILY_STREAM);
                let wanted = match stream.precision {
                    Some("microsecond") => Precision::Microsecond,
                    _ => Precision::Millisecond,
                };
                assert_eq!(kinesis.precision, wanted);
            }
        }
        // About a quarter of the policies stream; the rest are as they were.
        assert!(valid > 200, "{valid} of 400 policies validate");
        assert!(
            (valid / 8..valid / 2).contains(&streaming),
            "{streaming} of {valid}"
        );
        let without = Knobs {
            without: ["stream".to_string(), "lambda".to_string()].into(),
        };
        let strategy = policy_strategy(&without);
        for _ in 0..100 {
            let spec = strategy.new_tree(&mut runner).unwrap().current();
            assert!(spec.stream.is_none() && !spec.consumer && !spec.table_stream);
        }
    }

    #[test]
    fn a_policy_with_a_consumer_names_the_family_consumer_on_streaming_tables() {
        let mut runner = TestRunner::deterministic();
        let knobs = Knobs {
            without: Default::default(),
        };
        let strategy = policy_strategy(&knobs);
        let (mut consuming, mut streaming_only, mut valid) = (0, 0, 0);
        for _ in 0..400 {
            let spec = strategy.new_tree(&mut runner).unwrap().current();
            let Ok(policy) = Policy::from_toml(&spec.toml(PREFIX)) else {
                continue;
            };
            valid += 1;
            let lambda = policy.stream.lambda.as_ref();
            assert_eq!(lambda.is_some(), spec.consumer, "{}", spec.toml(PREFIX));
            if let Some(lambda) = lambda {
                consuming += 1;
                assert_eq!(lambda.function.as_str(), FAMILY_CONSUMER);
            }
            let stream = policy.template.stream.flatten();
            assert_eq!(stream.is_some(), spec.consumer || spec.table_stream);
            if spec.table_stream && !spec.consumer {
                streaming_only += 1;
            }
        }
        assert!(
            (valid / 8..valid / 2).contains(&consuming),
            "{consuming} of {valid}"
        );
        assert!(streaming_only > 0, "{streaming_only} of {valid}");
    }
}
