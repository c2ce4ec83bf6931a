//! The functions' IAM roles in template.yaml against what the code really sends.
//!
//! The schedule scenario of `schedule_inputs.rs` runs again with an SDK client that records
//! every DynamoDB request; each (action, resource) is then evaluated against the statements
//! of the function's role, resolved for a stack in us-east-1 of account 123456789012: once
//! with the parameter defaults, once with every optional part on (TTL, point-in-time recovery,
//! deletion protection, archiving to S3, deletion) over several days. Neither moto nor dynalite
//! enforces IAM, so this is where an action the engine starts sending, or a table outside the
//! prefix it starts touching, shows up before a deployment fails with AccessDenied; and where
//! a permission nothing uses shows up as a grant to remove.
//!
//! Families: every changing statement is conditioned on the tag `ddb-rollover:family` (the
//! stack's TablePrefix), so that a sibling stack whose prefix nests in ours (`timeseries_eu`
//! inside `table/timeseries_*`) cannot have its tables changed by our role. Each recorded call
//! is evaluated with the tags its table carried on moto when it was sent and the tags it wrote;
//! the same calls are then turned on a sibling's table, on an untagged one, and given another
//! family, to show the conditions refuse exactly what they should.

use std::collections::BTreeSet;

use aws_model::iam::{self, evaluate, tags, Decision, Request, Statement, Tags};
use aws_model::stack::table_arn;
use aws_sdk_dynamodb::types::ScalarAttributeType;
use ddb_rollover::policy::TAG_FAMILY as FAMILY;
use ddb_rollover::Operation;
use ddb_rollover_aws::dynamodb::DynamoDb;
use deploy_checks::features::{
    archive_s3_actions, combinations, Features, AUTOSCALING_ACTIONS, EXPORT_S3_ACTIONS, FUNCTION_ARN,
    KINESIS_REPLICATION_ROLE, KINESIS_REPLICATION_SERVICE, PROOF_LIST_ACTION, PROOF_S3_ACTIONS,
    SCALING_READS, STREAM_ARN,
};
use deploy_checks::ledger::{ledger_name, LEDGER_ACTIONS, LEDGER_DENIED};
use deploy_checks::recorder::{Call, Recorder};
use deploy_checks::scenario;
use deploy_checks::template::{Function, RepoTemplate, Template};
use testkit::{LocalDynamo, Server};

use crate::support::ledger::{init, recorded_by, stack_ledger};

mod recorded;
mod statements;

/// Every optional part on, with ages short enough that a few days export and delete tables.
const RETENTION_STACK: [(&str, &str); 6] = [
    ("TtlAttribute", "expires_at"),
    ("PointInTimeRecovery", "true"),
    ("DeletionProtection", "true"),
    ("ArchiveBucket", "archive-bucket"),
    ("ArchiveAfter", "1"),
    ("DeleteAfter", "2"),
];
const ARCHIVE_OBJECTS: &str = "arn:aws:s3:::archive-bucket/ddb-rollover/*";
const ARCHIVE_BUCKET: &str = "arn:aws:s3:::archive-bucket";
/// ArchivePrefix's default.
const ARCHIVE_PREFIX: &str = "ddb-rollover/";

/// Our stack's value of the tag that says which stack's tables a table belongs to ([`FAMILY`],
/// the key the engine writes): TablePrefix's default.
const PREFIX: &str = "timeseries";
/// A sibling stack's table, inside our resource pattern `table/timeseries_*`: its stack has the
/// prefix `timeseries_eu`.
const SIBLING: &str = "timeseries_eu_2018-10-18";
const SIBLING_FAMILY: &str = "timeseries_eu";
/// One of our names on a table without the family tag (made before the tag existed).
const UNTAGGED: &str = "timeseries_2018-10-18";

/// Our family tag.
fn ours() -> Tags {
    tags(&[(FAMILY, PREFIX)])
}

/// The sibling's tags, as its own stack's create_new would have set them.
fn siblings() -> Tags {
    tags(&[
        (FAMILY, SIBLING_FAMILY),
        ("ddb-rollover:period-start", "2018-10-18T00:00:00+00:00"),
        ("ddb-rollover:period-end", "2018-10-19T00:00:00+00:00"),
    ])
}

/// Whether an action changes a table: everything but reads (`Describe*`, `List*`).
/// The changes a table must carry our family tag for: its deletion, and the seal against item
/// writes that comes before it.
const FAMILY_ONLY: [&str; 4] = [
    "dynamodb:DeleteTable",
    "dynamodb:GetResourcePolicy",
    "dynamodb:PutResourcePolicy",
    "dynamodb:DeleteResourcePolicy",
];

fn changes(action: &str) -> bool {
    let name = action.split_once(':').map_or(action, |(_, name)| name);
    !(name.starts_with("Describe") || name.starts_with("List"))
}

/// The resource `action` names for `table`: the table, one of its exports, or `*`.
fn resource_of(action: &str, table: &str) -> String {
    match action {
        "dynamodb:ListTables" => "*".into(),
        "dynamodb:DescribeExport" => format!("{}/export/01234567890123-abcdef12", table_arn(table)),
        _ => table_arn(table),
    }
}

/// What a role may allow besides DynamoDB and the archive's S3 objects: its own log group, and
/// the failure queue that Lambda's OnFailure destination writes with the function's role.
const OTHER_ACTIONS: [&str; 3] = ["logs:CreateLogStream", "logs:PutLogEvents", "sqs:SendMessage"];

/// What the functions publish (crates/lambda/src/publish.rs).
const PUBLISH_ACTIONS: [&str; 3] = ["ssm:GetParameter", "ssm:PutParameter", "events:PutEvents"];

/// The one resource each publishing action is granted on: the prefix's parameter, the
/// account's default event bus.
fn publish_resource(action: &str, prefix: &str) -> String {
    match action {
        "ssm:GetParameter" | "ssm:PutParameter" => {
            format!("arn:aws:ssm:us-east-1:123456789012:parameter/ddb-rollover/{prefix}/tables")
        }
        "events:PutEvents" => "arn:aws:events:us-east-1:123456789012:event-bus/default".to_owned(),
        other => panic!("{other} is not a publishing action"),
    }
}

/// A function of the stack, its role's statements, and what the stack turns on.
struct Deployed {
    function: Function,
    statements: Vec<Statement>,
    features: Features,
}

impl Deployed {
    fn id(&self) -> &str {
        &self.function.logical_id
    }

    fn operation(&self) -> Operation {
        self.function
            .operation()
            .unwrap_or_else(|| panic!("{}: no operation", self.id()))
    }

    fn needed(&self) -> BTreeSet<String> {
        self.features
            .needed(self.operation())
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

/// The template with these parameter overrides.
fn template(overrides: &[(&str, &str)]) -> Template {
    let mut template = Template::load();
    for (name, value) in overrides {
        template.set_parameter(name, value);
    }
    template
}

/// The stack's functions in day order (create_new first), with their roles' statements.
fn deploy(overrides: &[(&str, &str)]) -> Vec<Deployed> {
    let template = template(overrides);
    let functions = template
        .functions()
        .unwrap_or_else(|e| panic!("template.yaml: {e}"));
    scenario::in_day_order(functions)
        .into_iter()
        .map(|function| {
            let role = function
                .role
                .clone()
                .unwrap_or_else(|| panic!("{}: needs Role: !GetAtt SOME_ROLE.Arn", function.logical_id));
            let statements = template
                .role_statements(&role)
                .unwrap_or_else(|e| panic!("{}: {e}", function.logical_id));
            Deployed {
                function,
                statements,
                features: Features::of(overrides),
            }
        })
        .collect()
}
