//! The IAM role `template.yaml` gives the functions of one family, as both models of AWS enforce
//! it (fake-aws's account and testkit's proxy): the template's own statements decide through
//! [`crate::iam`]'s evaluator, never rules written here. [`FamilyRole`] is the role, in AWS's
//! words when it refuses; the stack it is read for names the family's Kinesis stream
//! ([`FAMILY_STREAM`]) and consumer function ([`FAMILY_CONSUMER`]), which the scenarios create.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use crate::iam::{action_matches, ConditionKey, Decision, Request};
use crate::role::Role;
use crate::stack::{ACCOUNT_ID, PARTITION, REGION};

/// The family's Kinesis data stream (the stack's `ChangeStreamArn`): the role may enable a
/// destination into it and no other.
pub const FAMILY_STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/ts-changes";
/// The family's consumer function (the stack's `ConsumerFunctionArn`): the role may map a
/// table's stream to it and to no other.
pub const FAMILY_CONSUMER: &str = "arn:aws:lambda:us-east-1:123456789012:function:family-consumer";

/// What Application Auto Scaling checks, besides the role's own action on the scalable
/// target, before `operation` on a DynamoDB target: that the caller may describe and update
/// the target's table (RegisterScalableTarget and PutScalingPolicy; nothing for the others).
pub fn table_actions_checked_by_autoscaling(operation: &str) -> &'static [&'static str] {
    match operation {
        "RegisterScalableTarget" | "PutScalingPolicy" => &["dynamodb:DescribeTable", "dynamodb:UpdateTable"],
        _ => &[],
    }
}

/// The template whose roles the models enforce.
const TEMPLATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../template.yaml");

/// The stack parameters the modelled role is read with, besides `TablePrefix`: every optional
/// grant on (TTL, point-in-time recovery, archiving, deletion, autoscaling, the family's Kinesis
/// stream, the family's consumer function), so a test of any policy may make the calls such a stack's functions may make, and
/// no other. The fake checks the DynamoDB actions on the tables, which no stream ARN scopes.
const STACK_PARAMETERS: [(&str, &str); 7] = [
    ("TtlAttribute", "expires"),
    ("PointInTimeRecovery", "true"),
    ("ArchiveBucket", "archive-bucket"),
    ("DeleteAfter", "48"),
    ("Autoscaling", "true"),
    ("ChangeStreamArn", FAMILY_STREAM),
    ("ConsumerFunctionArn", FAMILY_CONSUMER),
];

/// The functions of the template whose roles together are the family's role.
const FUNCTIONS: [&str; 2] = ["CreateNewFunction", "ResizeOldFunction"];

/// The IAM role of one family's functions: create_new's and resize_old's statements together
/// (the fakes act as either function), resolved for a stack with `TablePrefix` = the family.
#[derive(Debug)]
pub struct FamilyRole {
    family: String,
    role: Role,
}

impl FamilyRole {
    /// The role of the family `family`, read from the template once per family and process.
    pub fn of(family: &str) -> Arc<FamilyRole> {
        static ROLES: OnceLock<Mutex<HashMap<String, Arc<FamilyRole>>>> = OnceLock::new();
        let mut roles = ROLES
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Arc::clone(
            roles
                .entry(family.to_owned())
                .or_insert_with(|| Arc::new(FamilyRole::read(family))),
        )
    }

    fn read(family: &str) -> FamilyRole {
        let mut parameters = vec![("TablePrefix", family)];
        parameters.extend(STACK_PARAMETERS);
        let statements = FUNCTIONS
            .iter()
            .flat_map(|function| {
                Role::from_template(Path::new(TEMPLATE), function, &parameters)
                    .unwrap_or_else(|e| panic!("{TEMPLATE}: the role of {function}: {e}"))
                    .statements
            })
            .collect();
        FamilyRole {
            family: family.to_owned(),
            role: Role {
                logical_id: FUNCTIONS.join("+"),
                statements,
            },
        }
    }

    /// Whether IAM's decision on `action` may depend on the resource's tags (a statement for
    /// it has an `aws:ResourceTag` condition): callers that must fetch the tags skip it if not.
    pub fn reads_resource_tags(&self, action: &str) -> bool {
        self.role.statements.iter().any(|statement| {
            statement
                .actions
                .iter()
                .any(|pattern| action_matches(pattern, action))
                && statement
                    .conditions
                    .iter()
                    .any(|condition| matches!(condition.key, ConditionKey::ResourceTag(_)))
        })
    }

    /// AWS's AccessDeniedException message (without the code) when the role may not make
    /// `request`, `None` when IAM allows it.
    pub fn refusal(&self, request: &Request) -> Option<String> {
        let because = match self.role.decide(request) {
            Decision::Allowed(_) => return None,
            Decision::ExplicitDeny(_) => "with an explicit deny in an identity-based policy".to_owned(),
            Decision::ImplicitDeny => format!(
                "because no identity-based policy allows the {} action",
                request.action
            ),
        };
        Some(format!(
            "User: arn:{PARTITION}:sts::{ACCOUNT_ID}:assumed-role/ddb-rollover-{}/function is not authorized to \
             perform: {} on resource: {} {because}",
            self.family, request.action, request.resource
        ))
    }
}

/// The ARN of an Application Auto Scaling scalable target on `table` (AWS ends it in a
/// generated id; the table's name stands in for it).
pub fn scalable_target_arn(table: &str) -> String {
    format!("arn:{PARTITION}:application-autoscaling:{REGION}:{ACCOUNT_ID}:scalable-target/{table}")
}

#[cfg(test)]
mod tests {
    use crate::iam::tags;
    use crate::stack::table_arn;

    use super::*;

    /// The ledger as the fakes and the proxy enforce it, from the template's statements: the
    /// family's own ledger's items, never the ledger table itself (an explicit Deny beside the
    /// prefix's grants), no other family's ledger; the family's period tables as before.
    #[test]
    fn the_family_role_uses_its_ledgers_items_and_never_changes_a_ledger_table() {
        let role = FamilyRole::of("ts");
        let request = |action: &str, table: &str, family: &str| {
            Request::new(action, &table_arn(table))
                .with_resource_tags(tags(&[
                    ("ddb-rollover:family", family),
                    ("ddb-rollover:ledger", "true"),
                ]))
                .with_request_tags(tags(&[("ddb-rollover:family", "ts")]))
        };
        for action in [
            "dynamodb:DescribeTable",
            "dynamodb:Query",
            "dynamodb:PutItem",
            "dynamodb:DeleteItem",
        ] {
            assert_eq!(
                role.refusal(&request(action, "ts_ledger", "ts")),
                None,
                "{action}"
            );
        }
        for (table, family) in [("ts_ledger", "ts"), ("ts_eu_ledger", "ts_eu")] {
            for action in [
                "dynamodb:UpdateTable",
                "dynamodb:DeleteTable",
                "dynamodb:TagResource",
                "dynamodb:CreateTable",
                "dynamodb:PutResourcePolicy",
                "dynamodb:ExportTableToPointInTime",
            ] {
                let why = role
                    .refusal(&request(action, table, family))
                    .unwrap_or_else(|| panic!("{action} on {table} allowed"));
                assert!(why.contains("explicit deny"), "{why}");
            }
        }
        for action in [
            "dynamodb:Query",
            "dynamodb:PutItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
        ] {
            let why = role
                .refusal(&request(action, "ts_eu_ledger", "ts_eu"))
                .unwrap_or_else(|| panic!("{action} on ts_eu_ledger allowed"));
            assert!(why.contains("no identity-based policy allows"), "{why}");
        }
        assert_eq!(
            role.refusal(&request("dynamodb:UpdateTable", "ts_2018-10-25", "ts")),
            None
        );
    }
}
