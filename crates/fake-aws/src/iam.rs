//! IAM of the functions' role for one family, as the fake's calls meet it: the role is
//! `aws_model`'s [`FamilyRole`] (decided by `template.yaml`'s own statements, which testkit's
//! proxy asks too), and the `may_*` checks turn the fake's calls into its requests (action,
//! table ARN, the table's tags, the tags the call writes).

use std::collections::BTreeMap;

use aws_model::family_role::{scalable_target_arn, table_actions_checked_by_autoscaling, FamilyRole};
use aws_model::iam::Request;
use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::table::TableSpec;

use crate::account::FakeAws;
use crate::errors::error;
use crate::objects::arn_of;
use crate::world::World;

impl FakeAws {
    /// Refuses `request` on `table` as AWS would when the role does not allow it (never with
    /// IAM off: the operator's credentials).
    pub(crate) fn authorize(
        &self,
        operation: &'static str,
        table: &str,
        request: Request,
    ) -> Result<(), ControlPlaneError> {
        if !self.iam {
            return Ok(());
        }
        match FamilyRole::of(&self.family).refusal(&request) {
            None => Ok(()),
            Some(why) => Err(error(
                ErrorKind::Other,
                operation,
                table,
                format!("AccessDeniedException: {why}"),
            )),
        }
    }

    /// `action` on `table` with the table's current tags (none if it does not exist).
    fn table_request(world: &World, action: &str, table: &str) -> Request {
        let tags = world
            .tables
            .get(table)
            .map(|t| t.tags.clone())
            .unwrap_or_default();
        Request::new(action, &arn_of(table)).with_resource_tags(tags)
    }

    /// A read of `table` (the world is locked here, for the table's tags).
    pub(crate) fn may_read(
        &self,
        operation: &'static str,
        action: &str,
        table: &str,
    ) -> Result<(), ControlPlaneError> {
        let request = {
            let world = self.world.lock().unwrap_or_else(|e| e.into_inner());
            Self::table_request(&world, action, table)
        };
        self.authorize(operation, table, request)
    }

    /// A change of `table` (UpdateTable, DeleteTable, ...).
    pub(crate) fn may_change(
        &self,
        world: &World,
        operation: &'static str,
        action: &str,
        table: &str,
    ) -> Result<(), ControlPlaneError> {
        self.authorize(operation, table, Self::table_request(world, action, table))
    }

    /// CreateTable, with the tags it writes.
    pub(crate) fn may_create(
        &self,
        operation: &'static str,
        spec: &TableSpec,
    ) -> Result<(), ControlPlaneError> {
        let request =
            Request::new("dynamodb:CreateTable", &arn_of(&spec.name)).with_request_tags(spec.tags.clone());
        self.authorize(operation, &spec.name, request)
    }

    /// TagResource on `name`, writing `tags`.
    pub(crate) fn may_tag(
        &self,
        world: &World,
        operation: &'static str,
        name: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), ControlPlaneError> {
        let request =
            Self::table_request(world, "dynamodb:TagResource", name).with_request_tags(tags.clone());
        self.authorize(operation, name, request)
    }

    /// What Application Auto Scaling checks before it registers a target or puts a policy on
    /// `table`: the role's `action` on a DynamoDB scalable target, and that the caller may
    /// describe and update the target's table.
    pub(crate) fn may_scale(
        &self,
        world: &World,
        operation: &'static str,
        action: &str,
        table: &str,
    ) -> Result<(), ControlPlaneError> {
        let request = Request::new(action, &scalable_target_arn(table))
            .with_context("application-autoscaling:service-namespace", "dynamodb");
        self.authorize(operation, table, request)?;
        for table_action in table_actions_checked_by_autoscaling(operation) {
            self.may_change(world, operation, table_action, table)?;
        }
        Ok(())
    }
}
