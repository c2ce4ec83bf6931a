//! The optional parts of the stack, as its parameters turn them on, and the DynamoDB actions
//! each function needs for them. Read from the parameter values the way the README documents
//! them, not from the template's `Conditions`: those are what the checks verify.

use std::collections::BTreeSet;

use ddb_rollover::Operation;

/// Parameter values that switch every optional part on, and their "off" values: each
/// combination of them is a stack the checks resolve.
pub const SWITCHES: [(&str, &str, &str); 8] = [
    ("TtlAttribute", "", "expires_at"),
    ("PointInTimeRecovery", "false", "true"),
    ("DeletionProtection", "false", "true"),
    ("ArchiveBucket", "", "archive-bucket"),
    // Above ArchiveAfter's default (30): the policy deletes only after archiving.
    ("DeleteAfter", "0", "40"),
    // The template's Rule wants a PolicyOverride with it; the roles do not depend on that.
    ("Autoscaling", "false", "true"),
    ("ChangeStreamArn", "", STREAM_ARN),
    ("ConsumerFunctionArn", "", FUNCTION_ARN),
];

/// The Kinesis data stream the checks' stacks stream into (`ChangeStreamArn`).
pub const STREAM_ARN: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/timeseries-changes";

/// The consumer function the checks' stacks map to each table's stream (`ConsumerFunctionArn`).
pub const FUNCTION_ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:ingest-consumer";

/// Every event source mapping of the checks' account and Region (a mapping's ARN ends in its
/// UUID, which Lambda makes).
pub const ANY_MAPPING: &str = "arn:aws:lambda:us-east-1:123456789012:event-source-mapping:*";

/// Every on/off combination of [`SWITCHES`], as parameter overrides.
pub fn combinations() -> Vec<Vec<(&'static str, &'static str)>> {
    (0..1u32 << SWITCHES.len())
        .map(|bits| {
            SWITCHES
                .iter()
                .enumerate()
                .map(|(i, &(name, off, on))| (name, if bits & (1 << i) != 0 { on } else { off }))
                .collect()
        })
        .collect()
}

/// What a stack with these parameter overrides (the rest at their defaults) turns on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features {
    /// `TtlAttribute` set.
    pub ttl: bool,
    /// Point-in-time recovery asked for (archiving needs it too: see [`Features::pitr`]).
    pub pitr_requested: bool,
    /// `DeletionProtection`: the tables are made protected (no grant of its own).
    pub deletion_protection: bool,
    /// `ArchiveBucket` set: exports to S3 before deletion.
    pub archive: bool,
    /// `DeleteAfter` above 0: DeleteTable.
    pub delete: bool,
    /// `Autoscaling` on: Application Auto Scaling's targets and policies.
    pub autoscaling: bool,
    /// `ChangeStreamArn` set: the family's Kinesis destination.
    pub stream: bool,
    /// `ConsumerFunctionArn` set: the consumer function mapped to each table's stream.
    pub consumer: bool,
    /// `PublishTables` and `PublishEvents` (both on by default; not among [`SWITCHES`]: they
    /// add statements of their own, checked on their own).
    pub publish_tables: bool,
    /// See [`Self::publish_tables`].
    pub publish_events: bool,
}

impl Features {
    /// The features of a stack with these parameter overrides: a later override wins.
    pub fn of(overrides: &[(&str, &str)]) -> Features {
        let value = |name: &str, default: &'static str| {
            overrides
                .iter()
                .rev()
                .find(|(n, _)| *n == name)
                .map_or(default, |(_, v)| *v)
                .to_owned()
        };
        Features {
            ttl: !value("TtlAttribute", "").is_empty(),
            pitr_requested: value("PointInTimeRecovery", "false") == "true",
            deletion_protection: value("DeletionProtection", "false") == "true",
            archive: !value("ArchiveBucket", "").is_empty(),
            delete: value("DeleteAfter", "0") != "0",
            autoscaling: value("Autoscaling", "false") == "true",
            stream: !value("ChangeStreamArn", "").is_empty(),
            consumer: !value("ConsumerFunctionArn", "").is_empty(),
            publish_tables: value("PublishTables", "true") == "true",
            publish_events: value("PublishEvents", "true") == "true",
        }
    }

    /// The capabilities the stack grants its roles beyond the tables themselves: what
    /// what the functions read back from the parameters (names of
    /// `ddb_rollover_stack::grants::Capability`).
    pub fn grants(&self) -> BTreeSet<&'static str> {
        [
            (self.ttl, "ttl"),
            (self.pitr(), "pitr"),
            (self.archive, "archive"),
            (self.delete, "delete"),
            (self.autoscaling, "autoscaling"),
            (self.stream, "stream"),
            (self.consumer, "consumer"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }

    /// The Application Auto Scaling, CloudWatch and IAM actions both roles need: always the
    /// reads of scalable targets, their policies and scheduled actions (every run reads whose
    /// they are before a capacity change
    /// or a deletion), and with autoscaling on everything the executor sends, what Application
    /// Auto Scaling checks its caller may do for target tracking, and its service-linked role.
    pub fn autoscaling_actions(&self) -> BTreeSet<&'static str> {
        if !self.autoscaling {
            return SCALING_READS.into_iter().collect();
        }
        AUTOSCALING_ACTIONS.into_iter().collect()
    }

    /// Point-in-time recovery on: asked for, or needed by archive exports.
    pub fn pitr(&self) -> bool {
        self.pitr_requested || self.archive
    }

    /// The DynamoDB actions `operation` sends with these features, and so the ones its role
    /// must grant, no more.
    pub fn needed(&self, operation: Operation) -> BTreeSet<&'static str> {
        // TagResource: CreateTable with tags, and tags brought back to the policy's.
        // ListTagsOfResource: the current and pre-built tables' (whose they are), and of tables
        // whose decision needs them: a name from another period setting, retention's candidates.
        let mut actions = vec![
            "dynamodb:ListTables",
            "dynamodb:DescribeTable",
            "dynamodb:UpdateTable",
            "dynamodb:TagResource",
            "dynamodb:ListTagsOfResource",
        ];
        if operation == Operation::CreateNew {
            actions.push("dynamodb:CreateTable");
            // The family's destination on the current and pre-built tables: read, then enabled.
            if self.stream {
                actions.extend([
                    "dynamodb:DescribeKinesisStreamingDestination",
                    "dynamodb:EnableKinesisStreamingDestination",
                ]);
            }
        }
        if self.ttl {
            actions.extend(["dynamodb:DescribeTimeToLive", "dynamodb:UpdateTimeToLive"]);
        }
        if self.pitr() {
            actions.extend([
                "dynamodb:DescribeContinuousBackups",
                "dynamodb:UpdateContinuousBackups",
            ]);
        }
        if operation == Operation::ResizeOld {
            if self.archive {
                actions.extend(["dynamodb:ExportTableToPointInTime", "dynamodb:DescribeExport"]);
            }
            // A deletion reads the table's resource-based policy first: someone else's keeps it,
            // and so does a Kinesis destination someone else enabled, whatever ChangeStreamArn.
            if self.delete {
                actions.extend([
                    "dynamodb:DeleteTable",
                    "dynamodb:GetResourcePolicy",
                    "dynamodb:DescribeKinesisStreamingDestination",
                ]);
            }
            // The seal against item writes before an archived table's final export.
            if self.archive && self.delete {
                actions.extend(["dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy"]);
            }
        }
        actions.into_iter().collect()
    }
}

impl Features {
    /// The Kinesis and IAM actions `operation`'s role needs for the Kinesis destination, each
    /// with the one resource it is granted on: create_new's what DynamoDB checks when it
    /// enables and describes a destination to [`STREAM_ARN`] (and the service-linked role the
    /// first enable creates); resize_old's, when it deletes, the reads of whatever stream a
    /// foreign destination names.
    pub fn stream_actions(&self, operation: Operation) -> BTreeSet<(&'static str, &'static str)> {
        match operation {
            Operation::CreateNew if self.stream => [
                ("kinesis:DescribeStream", STREAM_ARN),
                ("kinesis:DescribeStreamSummary", STREAM_ARN),
                ("kinesis:PutRecords", STREAM_ARN),
                ("kinesis:ListStreams", "*"),
                ("iam:CreateServiceLinkedRole", KINESIS_REPLICATION_ROLE),
            ]
            .into_iter()
            .collect(),
            Operation::ResizeOld if self.delete => [
                ("kinesis:DescribeStream", ANY_STREAM),
                ("kinesis:DescribeStreamSummary", ANY_STREAM),
            ]
            .into_iter()
            .collect(),
            _ => BTreeSet::new(),
        }
    }

    /// The Lambda actions `operation`'s role needs for the event source mappings, each with the
    /// one resource it is granted on (the create, update and delete also scoped to
    /// [`FUNCTION_ARN`] by `lambda:FunctionArn`): create_new's, with the consumer, what maps it
    /// to the current and pre-built tables, reads their mappings back (readiness) and puts the
    /// policy's settings back on ours; resize_old's, when it
    /// deletes, the list that finds someone else's mapping on a table about to go (whatever
    /// `ConsumerFunctionArn`), and with the consumer too the removal of ours. List and Create
    /// take no resource type (`*`).
    pub fn mapping_actions(&self, operation: Operation) -> BTreeSet<(&'static str, &'static str)> {
        let mut actions = BTreeSet::new();
        match operation {
            Operation::CreateNew if self.consumer => {
                actions.insert(("lambda:CreateEventSourceMapping", "*"));
                actions.insert(("lambda:ListEventSourceMappings", "*"));
                actions.insert(("lambda:UpdateEventSourceMapping", ANY_MAPPING));
            }
            Operation::ResizeOld if self.delete => {
                actions.insert(("lambda:ListEventSourceMappings", "*"));
                if self.consumer {
                    actions.insert(("lambda:DeleteEventSourceMapping", ANY_MAPPING));
                }
            }
            _ => {}
        }
        actions
    }

    /// The publishing actions (`ssm:GetParameter` and `ssm:PutParameter`, `events:PutEvents`)
    /// `operation`'s role needs: the table names are create_new's (read first: a parameter
    /// that is not ours is never overwritten), the events both functions'.
    pub fn publish_actions(&self, operation: Operation) -> BTreeSet<&'static str> {
        let mut actions = BTreeSet::new();
        if self.publish_tables && operation == Operation::CreateNew {
            actions.insert("ssm:GetParameter");
            actions.insert("ssm:PutParameter");
        }
        if self.publish_events {
            actions.insert("events:PutEvents");
        }
        actions
    }
}

/// Every stream of the checks' account and Region.
pub const ANY_STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/*";

/// The service-linked role DynamoDB creates on the first EnableKinesisStreamingDestination of
/// an account, and the service it is for (`iam:AWSServiceName`).
pub const KINESIS_REPLICATION_ROLE: &str = "arn:aws:iam::123456789012:role/aws-service-role/kinesisreplication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBKinesisDataStreamsReplication";
/// The service [`KINESIS_REPLICATION_ROLE`] is for.
pub const KINESIS_REPLICATION_SERVICE: &str = "kinesisreplication.dynamodb.amazonaws.com";

/// The reads of scalable targets, their policies and scheduled actions both roles always have.
pub const SCALING_READS: [&str; 3] = [
    "application-autoscaling:DescribeScalableTargets",
    "application-autoscaling:DescribeScalingPolicies",
    "application-autoscaling:DescribeScheduledActions",
];

/// See [`Features::autoscaling_actions`].
pub const AUTOSCALING_ACTIONS: [&str; 11] = [
    "application-autoscaling:RegisterScalableTarget",
    "application-autoscaling:DeregisterScalableTarget",
    "application-autoscaling:DescribeScalableTargets",
    "application-autoscaling:PutScalingPolicy",
    "application-autoscaling:DeleteScalingPolicy",
    "application-autoscaling:DescribeScalingPolicies",
    "application-autoscaling:DescribeScheduledActions",
    "cloudwatch:PutMetricAlarm",
    "cloudwatch:DescribeAlarms",
    "cloudwatch:DeleteAlarms",
    "iam:CreateServiceLinkedRole",
];

/// What DynamoDB's export to S3 needs on the objects it writes, with the caller's
/// permissions (DynamoDB Developer Guide, "Requesting a table export in DynamoDB").
pub const EXPORT_S3_ACTIONS: [&str; 3] = ["s3:AbortMultipartUpload", "s3:PutObject", "s3:PutObjectAcl"];

/// What resize_old reads of an export before it deletes the table: the manifests (GetObject)
/// and every data file they list (HeadObject, which S3 allows with s3:GetObject).
pub const PROOF_S3_ACTIONS: [&str; 1] = ["s3:GetObject"];

/// On the bucket, for the archive prefix only (`s3:prefix`): without it S3 answers 403, not
/// 404, for a missing key, and the proof could not tell a missing data file from a refusal.
pub const PROOF_LIST_ACTION: &str = "s3:ListBucket";

/// Every S3 action of the archive grant, sorted.
pub fn archive_s3_actions() -> Vec<&'static str> {
    let mut actions: Vec<&str> = EXPORT_S3_ACTIONS
        .iter()
        .chain(&PROOF_S3_ACTIONS)
        .chain([&PROOF_LIST_ACTION])
        .copied()
        .collect();
    actions.sort_unstable();
    actions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_cover_every_switch_setting_once() {
        let all = combinations();
        assert_eq!(all.len(), 256);
        let distinct: BTreeSet<_> = all.iter().collect();
        assert_eq!(distinct.len(), 256);
        let publishing = Features {
            publish_tables: true,
            publish_events: true,
            ..Features::default()
        };
        assert_eq!(Features::of(&all[0]), publishing, "publishing is on by default");
        let quiet = Features::of(&[("PublishTables", "false"), ("PublishEvents", "false")]);
        assert_eq!(quiet, Features::default());
        assert_eq!(publishing.publish_actions(Operation::CreateNew).len(), 3);
        assert_eq!(
            publishing.publish_actions(Operation::ResizeOld),
            BTreeSet::from(["events:PutEvents"])
        );
        let on = Features::of(&all[255]);
        assert!(on.ttl && on.pitr_requested && on.deletion_protection && on.archive && on.delete);
        assert!(on.autoscaling && on.stream && on.consumer);
        assert_eq!(on.grants().len(), 7);
        assert!(Features::default().grants().is_empty());
        // Without autoscaling, only the reads that find someone else's targets, policies and
        // scheduled actions.
        assert_eq!(
            Features::default().autoscaling_actions(),
            SCALING_READS.into_iter().collect()
        );
        assert_eq!(SCALING_READS.len(), 3);
    }

    #[test]
    fn archiving_implies_pitr_and_only_resize_old_exports_or_deletes() {
        let archive = Features::of(&[("ArchiveBucket", "b")]);
        assert!(archive.pitr() && !archive.pitr_requested);
        let create = archive.needed(Operation::CreateNew);
        assert!(create.contains("dynamodb:UpdateContinuousBackups"));
        assert!(!create.contains("dynamodb:ExportTableToPointInTime"));
        let resize = Features::of(&[("DeleteAfter", "3")]).needed(Operation::ResizeOld);
        assert!(resize.contains("dynamodb:DeleteTable"));
        assert!(!resize.contains("dynamodb:DescribeExport"));
        assert_eq!(Features::default().needed(Operation::ResizeOld).len(), 5);
        assert_eq!(Features::default().needed(Operation::CreateNew).len(), 6);
    }

    #[test]
    fn the_stream_grants_enabling_to_create_new_and_deleting_reads_destinations() {
        let stream = Features::of(&[("ChangeStreamArn", STREAM_ARN)]);
        assert!(stream.stream && !Features::default().stream);
        let create = stream.needed(Operation::CreateNew);
        assert!(create.contains("dynamodb:EnableKinesisStreamingDestination"));
        assert!(create.contains("dynamodb:DescribeKinesisStreamingDestination"));
        assert_eq!(stream.stream_actions(Operation::CreateNew).len(), 5);
        // resize_old never enables; it reads destinations only before deleting.
        assert_eq!(
            stream.needed(Operation::ResizeOld),
            Features::default().needed(Operation::ResizeOld)
        );
        assert!(stream.stream_actions(Operation::ResizeOld).is_empty());
        let deleting = Features::of(&[("DeleteAfter", "3")]);
        assert!(deleting
            .needed(Operation::ResizeOld)
            .contains("dynamodb:DescribeKinesisStreamingDestination"));
        assert!(!deleting
            .needed(Operation::CreateNew)
            .iter()
            .any(|a| a.contains("Kinesis")));
        assert!(deleting.stream_actions(Operation::CreateNew).is_empty());
        assert_eq!(
            deleting.stream_actions(Operation::ResizeOld),
            BTreeSet::from([
                ("kinesis:DescribeStream", ANY_STREAM),
                ("kinesis:DescribeStreamSummary", ANY_STREAM)
            ])
        );
    }

    #[test]
    fn the_consumer_grants_mapping_to_create_new_and_deleting_lists_and_unmaps() {
        let consumer = Features::of(&[("ConsumerFunctionArn", FUNCTION_ARN)]);
        assert!(consumer.consumer && !Features::default().consumer);
        assert_eq!(consumer.grants(), BTreeSet::from(["consumer"]));
        // No DynamoDB action of its own: the tables' stream is an UpdateTable setting.
        for operation in [Operation::CreateNew, Operation::ResizeOld] {
            assert_eq!(consumer.needed(operation), Features::default().needed(operation));
            assert!(Features::default().mapping_actions(operation).is_empty());
        }
        assert_eq!(
            consumer.mapping_actions(Operation::CreateNew),
            BTreeSet::from([
                ("lambda:CreateEventSourceMapping", "*"),
                ("lambda:ListEventSourceMappings", "*"),
                ("lambda:UpdateEventSourceMapping", ANY_MAPPING)
            ])
        );
        // resize_old never maps; without deletions it reads no mapping either.
        assert!(consumer.mapping_actions(Operation::ResizeOld).is_empty());
        let deleting = Features::of(&[("DeleteAfter", "3")]);
        assert!(deleting.mapping_actions(Operation::CreateNew).is_empty());
        assert_eq!(
            deleting.mapping_actions(Operation::ResizeOld),
            BTreeSet::from([("lambda:ListEventSourceMappings", "*")])
        );
        let both = Features::of(&[("DeleteAfter", "3"), ("ConsumerFunctionArn", FUNCTION_ARN)]);
        assert_eq!(
            both.mapping_actions(Operation::ResizeOld),
            BTreeSet::from([
                ("lambda:DeleteEventSourceMapping", ANY_MAPPING),
                ("lambda:ListEventSourceMappings", "*")
            ])
        );
    }
}
