//! The vocabulary of autoscaling phases (Application Auto Scaling on DynamoDB): the scalable
//! dimensions, resource ids, a phase's bounds, what a run observes of the scalable targets and
//! their policies, and the two changes between them (register, deregister).
//!
//! Ownership is provable from Application Auto Scaling alone: a scalable target is ours when
//! our target-tracking policy ([`policy_name`], which names the policy's prefix) is attached
//! to it. Any other target on one of our tables is a foreign one: its table is never resized
//! against it and the target is never deregistered.

use std::fmt;

use serde::Serialize;

/// Target utilisation percentage when a phase gives none (DynamoDB console's default).
pub(crate) const DEFAULT_TARGET: u32 = 70;
/// The target utilisation DynamoDB's auto scaling allows, in percent.
pub(crate) const TARGET_RANGE: std::ops::RangeInclusive<i64> = 20..=90;
/// Application Auto Scaling's longest policy name.
pub(crate) const MAX_POLICY_NAME: usize = 256;

/// A phase's autoscaling bounds: the autoscaler keeps the table's (and each GSI's) provisioned
/// capacity between min and max, aiming at `target` percent utilisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Autoscaling {
    /// Fewest read capacity units the autoscaler may set.
    pub min_read: i64,
    /// Most read capacity units the autoscaler may set.
    pub max_read: i64,
    /// Fewest write capacity units the autoscaler may set.
    pub min_write: i64,
    /// Most write capacity units the autoscaler may set.
    pub max_write: i64,
    /// Percent, 20 to 90.
    pub target: u32,
}

impl Autoscaling {
    /// (min, max) for one dimension.
    pub fn bounds(&self, dimension: ScalableDimension) -> (i64, i64) {
        if dimension.is_read() {
            (self.min_read, self.max_read)
        } else {
            (self.min_write, self.max_write)
        }
    }
}

impl fmt::Display for Autoscaling {
    /// "autoscaling 5-500 RCU / 5-1000 WCU at 70%".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "autoscaling {}-{} RCU / {}-{} WCU at {}%",
            self.min_read, self.max_read, self.min_write, self.max_write, self.target
        )
    }
}

/// The scalable dimensions of a DynamoDB table and of its global secondary indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ScalableDimension {
    /// The table's read capacity units.
    #[serde(rename = "dynamodb:table:ReadCapacityUnits")]
    TableRead,
    /// The table's write capacity units.
    #[serde(rename = "dynamodb:table:WriteCapacityUnits")]
    TableWrite,
    /// A global secondary index's read capacity units.
    #[serde(rename = "dynamodb:index:ReadCapacityUnits")]
    IndexRead,
    /// A global secondary index's write capacity units.
    #[serde(rename = "dynamodb:index:WriteCapacityUnits")]
    IndexWrite,
}

impl ScalableDimension {
    /// Every dimension: the table's read and write, then an index's.
    pub const ALL: [ScalableDimension; 4] = [
        ScalableDimension::TableRead,
        ScalableDimension::TableWrite,
        ScalableDimension::IndexRead,
        ScalableDimension::IndexWrite,
    ];

    /// The dimension as Application Auto Scaling spells it (`dynamodb:table:ReadCapacityUnits`, ...).
    pub fn as_wire_str(self) -> &'static str {
        match self {
            ScalableDimension::TableRead => "dynamodb:table:ReadCapacityUnits",
            ScalableDimension::TableWrite => "dynamodb:table:WriteCapacityUnits",
            ScalableDimension::IndexRead => "dynamodb:index:ReadCapacityUnits",
            ScalableDimension::IndexWrite => "dynamodb:index:WriteCapacityUnits",
        }
    }

    /// The dimension Application Auto Scaling's string names; `None` for one not DynamoDB's.
    pub fn from_wire(value: &str) -> Option<ScalableDimension> {
        Self::ALL.into_iter().find(|d| d.as_wire_str() == value)
    }

    /// Whether the dimension is read capacity (of the table or an index).
    pub fn is_read(self) -> bool {
        matches!(self, ScalableDimension::TableRead | ScalableDimension::IndexRead)
    }

    /// The target-tracking metric that goes with the dimension.
    pub fn metric(self) -> &'static str {
        if self.is_read() {
            "DynamoDBReadCapacityUtilization"
        } else {
            "DynamoDBWriteCapacityUtilization"
        }
    }

    fn short(self) -> &'static str {
        if self.is_read() {
            "read"
        } else {
            "write"
        }
    }
}

impl fmt::Display for ScalableDimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_wire_str())
    }
}

/// What a run's report says of a target its DeregisterScaling left registered: someone attached
/// `what` (`policies`, `scheduled actions`) named `names` since the run looked, and
/// DeregisterScalableTarget would have deleted them. One wording for every adapter.
pub fn left_registered(key: &ScalableKey, what: &str, names: &[&str]) -> String {
    format!(
        "scalable target {key} left registered: {what} that are not ours were attached since the run looked ({}), and deregistering it would delete them",
        names.join(", ")
    )
}

/// `table/NAME`, or `table/NAME/index/INDEX` for a GSI.
pub fn resource_id(table: &str, index: Option<&str>) -> String {
    match index {
        Some(index) => format!("table/{table}/index/{index}"),
        None => format!("table/{table}"),
    }
}

/// The table a resource id belongs to (`table/NAME` or `table/NAME/index/INDEX`).
pub fn table_of(resource_id: &str) -> Option<&str> {
    let rest = resource_id.strip_prefix("table/")?;
    Some(rest.split_once("/index/").map_or(rest, |(table, _)| table))
}

/// One scalable dimension of one resource: what a scalable target is registered for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ScalableKey {
    /// `table/NAME` or `table/NAME/index/INDEX` ([`resource_id`]).
    pub resource_id: String,
    /// Read or write capacity, of the table or of an index.
    pub dimension: ScalableDimension,
}

impl fmt::Display for ScalableKey {
    /// "table/t read", "table/t/index/by_device write".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.resource_id, self.dimension.short())
    }
}

/// Every scalable dimension of a table and its GSIs: the table's read and write, then each
/// index's read and write, in the order given.
pub fn scalable_keys<'a>(table: &str, global_indexes: impl IntoIterator<Item = &'a str>) -> Vec<ScalableKey> {
    let key = |resource_id: &str, dimension| ScalableKey {
        resource_id: resource_id.to_string(),
        dimension,
    };
    let table_id = resource_id(table, None);
    let mut keys = vec![
        key(&table_id, ScalableDimension::TableRead),
        key(&table_id, ScalableDimension::TableWrite),
    ];
    for index in global_indexes {
        let index_id = resource_id(table, Some(index));
        keys.push(key(&index_id, ScalableDimension::IndexRead));
        keys.push(key(&index_id, ScalableDimension::IndexWrite));
    }
    keys
}

/// The name of our target-tracking policy on each of a family's scalable targets:
/// `ddb-rollover-{prefix}-read` / `-write`. Its presence is what makes a target ours.
pub fn policy_name(prefix: &str, dimension: ScalableDimension) -> String {
    format!("ddb-rollover-{prefix}-{}", dimension.short())
}

/// A target-tracking policy's target value (a double on the wire), compared exactly.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct TargetValue(pub f64);

impl Eq for TargetValue {}

/// One scaling policy attached to a scalable target, as DescribeScalingPolicies reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedScalingPolicy {
    /// The policy's name (free text: anyone may give a policy ours).
    pub name: String,
    /// The policy's ARN (PolicyARN, with a UUID Application Auto Scaling gave it): what the
    /// family's ledger records of the policies it put.
    pub arn: Option<String>,
    /// `TargetTrackingScaling`, `StepScaling`, ...
    pub policy_type: String,
    /// The predefined metric of a target-tracking policy.
    pub metric: Option<String>,
    /// The utilisation percentage a target-tracking policy aims at.
    pub target_value: Option<TargetValue>,
}

/// One scalable target on a table or one of its GSIs, with the policies and scheduled actions
/// attached to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservedScalableTarget {
    /// The resource and dimension the target is registered for.
    pub key: ScalableKey,
    /// The target's MinCapacity, in capacity units.
    pub min: i64,
    /// The target's MaxCapacity, in capacity units.
    pub max: i64,
    /// The scaling policies attached to it (DescribeScalingPolicies).
    pub policies: Vec<ObservedScalingPolicy>,
    /// The names of the scheduled actions on it (DescribeScheduledActions). We never create
    /// one, so each is someone else's, and DeregisterScalableTarget would delete it.
    pub scheduled_actions: Vec<String>,
}

impl ObservedScalableTarget {
    /// Ours: the family's target-tracking policy for this dimension is attached.
    #[cfg(test)]
    pub(crate) fn is_ours(&self, prefix: &str) -> bool {
        let ours = policy_name(prefix, self.key.dimension);
        self.policies.iter().any(|p| p.name == ours)
    }

    /// Whether the target is registered with, and our policy tracks, exactly what `want` says.
    pub fn matches(&self, prefix: &str, want: &Autoscaling) -> bool {
        let ours = policy_name(prefix, self.key.dimension);
        (self.min, self.max) == want.bounds(self.key.dimension)
            && self.policies.iter().any(|p| {
                p.name == ours
                    && p.policy_type == "TargetTrackingScaling"
                    && p.metric.as_deref() == Some(self.key.dimension.metric())
                    && p.target_value == Some(TargetValue(f64::from(want.target)))
            })
    }
}

/// One scalable target to register (or update) with our target-tracking policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScalingTarget {
    /// The resource and dimension to register.
    pub key: ScalableKey,
    /// MinCapacity, in capacity units.
    pub min: i64,
    /// MaxCapacity, in capacity units.
    pub max: i64,
    /// Target utilisation, percent.
    pub target: u32,
    /// Our target-tracking policy's name ([`policy_name`]).
    pub policy_name: String,
}

/// RegisterScalableTarget then PutScalingPolicy (target tracking) for each target: the
/// table's, then its GSIs'. Both calls create or update, so a retry is harmless.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegisterScaling {
    /// The table's name.
    pub name: String,
    /// The table's target first, then its GSIs'.
    pub targets: Vec<ScalingTarget>,
}

/// Our policy to remove from a scalable target, and the target with it when every policy on it
/// is ours and no scheduled action is on it: Application Auto Scaling's DeregisterScalableTarget
/// deletes every policy and every scheduled action on the target, whoever made them, so a
/// target that carries anything of someone else's is left in place.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScalingRemoval {
    /// The resource and dimension the policy is on.
    pub key: ScalableKey,
    /// Our target-tracking policy's name ([`policy_name`]).
    pub policy_name: String,
    /// Deregister the target too (once our policy is gone and no other policy and no scheduled
    /// action is left on it).
    pub deregister_target: bool,
}

/// DeleteScalingPolicy then DeregisterScalableTarget for each of our targets on the table (a
/// target or policy already gone counts as removed): when the table leaves its autoscaling
/// phases, and after retention deleted it (deleting a table does not deregister its targets).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeregisterScaling {
    /// The table's name.
    pub name: String,
    /// Each of our targets on the table and its GSIs.
    pub targets: Vec<ScalingRemoval>,
}

impl RegisterScaling {
    /// Registration of every key with the phase's bounds and our policy.
    pub fn new(prefix: &str, table: &str, keys: Vec<ScalableKey>, want: &Autoscaling) -> RegisterScaling {
        RegisterScaling {
            name: table.to_string(),
            targets: keys
                .into_iter()
                .map(|key| {
                    let (min, max) = want.bounds(key.dimension);
                    ScalingTarget {
                        policy_name: policy_name(prefix, key.dimension),
                        key,
                        min,
                        max,
                        target: want.target,
                    }
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_ids_and_dimensions() {
        let keys = scalable_keys("ts_2024-01-02", ["by_device"]);
        let shown: Vec<String> = keys
            .iter()
            .map(|k| format!("{} {}", k.resource_id, k.dimension))
            .collect();
        assert_eq!(
            shown,
            [
                "table/ts_2024-01-02 dynamodb:table:ReadCapacityUnits",
                "table/ts_2024-01-02 dynamodb:table:WriteCapacityUnits",
                "table/ts_2024-01-02/index/by_device dynamodb:index:ReadCapacityUnits",
                "table/ts_2024-01-02/index/by_device dynamodb:index:WriteCapacityUnits",
            ]
        );
        assert_eq!(
            table_of("table/ts_2024-01-02/index/by_device"),
            Some("ts_2024-01-02")
        );
        assert_eq!(table_of("table/ts_2024-01-02"), Some("ts_2024-01-02"));
        assert_eq!(table_of("service/cluster/svc"), None);
        for d in ScalableDimension::ALL {
            assert_eq!(ScalableDimension::from_wire(d.as_wire_str()), Some(d));
        }
        assert_eq!(
            policy_name("ts", ScalableDimension::IndexWrite),
            "ddb-rollover-ts-write"
        );
    }

    #[test]
    fn ours_only_with_our_policy_and_matching_only_when_everything_agrees() {
        let want = Autoscaling {
            min_read: 5,
            max_read: 500,
            min_write: 5,
            max_write: 1000,
            target: 70,
        };
        let policy = |name: &str, target: f64| ObservedScalingPolicy {
            name: name.into(),
            arn: Some(format!(
                "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1:policyName/{}",
                name
            )),
            policy_type: "TargetTrackingScaling".into(),
            metric: Some("DynamoDBWriteCapacityUtilization".into()),
            target_value: Some(TargetValue(target)),
        };
        let mut target = ObservedScalableTarget {
            key: ScalableKey {
                resource_id: "table/ts_2024-01-02".into(),
                dimension: ScalableDimension::TableWrite,
            },
            min: 5,
            max: 1000,
            policies: vec![policy("someone-elses", 70.0)],
            scheduled_actions: Vec::new(),
        };
        assert!(!target.is_ours("ts"));
        // Another family's policy name does not make it ours either.
        target.policies = vec![policy("ddb-rollover-ts_eu-write", 70.0)];
        assert!(!target.is_ours("ts"));
        target.policies = vec![policy("ddb-rollover-ts-write", 70.0)];
        assert!(target.is_ours("ts") && target.matches("ts", &want));
        target.policies = vec![policy("ddb-rollover-ts-write", 50.0)];
        assert!(target.is_ours("ts") && !target.matches("ts", &want));
        target.policies = vec![policy("ddb-rollover-ts-write", 70.0)];
        target.max = 900;
        assert!(!target.matches("ts", &want));
    }
}
