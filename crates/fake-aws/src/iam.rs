//! IAM of the functions' role, as `template.yaml` grants it to one family: every decision the
//! fake makes about what our role (or another family's) may do is here, so a shared evaluator
//! can replace this one module.

use std::collections::BTreeMap;

use ddb_rollover::run::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::table::changes::TableSpec;

use crate::errors::{arn_of, error};
use crate::{FakeAws, Table, World, FAMILY_TAG};

impl FakeAws {
    pub(crate) fn denied(
        &self,
        operation: &'static str,
        action: &str,
        table: &str,
        why: &str,
    ) -> ControlPlaneError {
        error(
            ErrorKind::Other,
            operation,
            table,
            format!(
                "AccessDeniedException: User: arn:aws:sts::123456789012:assumed-role/ddb-rollover-{}/function is not \
                 authorized to perform: {action} on resource: {} because no identity-based policy allows the {action} \
                 action ({why})",
                self.family,
                arn_of(table)
            ),
        )
    }

    pub(crate) fn in_pattern(&self, table: &str) -> bool {
        table.starts_with(&format!("{}_", self.family))
    }

    /// ReadPrefixTables: reads on `table/{prefix}_*`.
    pub(crate) fn may_read(
        &self,
        operation: &'static str,
        action: &str,
        table: &str,
    ) -> Result<(), ControlPlaneError> {
        if !self.iam || self.in_pattern(table) {
            Ok(())
        } else {
            Err(self.denied(operation, action, table, "outside table/{prefix}_*"))
        }
    }

    /// ChangeFamilyTables: `aws:ResourceTag/ddb-rollover:family` equals the prefix if it exists.
    pub(crate) fn may_change(
        &self,
        world: &World,
        operation: &'static str,
        action: &str,
        table: &str,
    ) -> Result<(), ControlPlaneError> {
        self.may_read(operation, action, table)?;
        match world.tables.get(table).and_then(Table::family) {
            Some(family) if self.iam && family != self.family => Err(self.denied(
                operation,
                action,
                table,
                &format!("the table's {FAMILY_TAG} tag is {family:?}"),
            )),
            _ => Ok(()),
        }
    }

    /// CreateFamilyTables: `aws:RequestTag/ddb-rollover:family` must be the prefix.
    pub(crate) fn may_create(
        &self,
        operation: &'static str,
        spec: &TableSpec,
    ) -> Result<(), ControlPlaneError> {
        const ACTION: &str = "dynamodb:CreateTable";
        self.may_read(operation, ACTION, &spec.name)?;
        if self.iam && spec.tags.get(FAMILY_TAG).map(String::as_str) != Some(self.family.as_str()) {
            return Err(self.denied(
                operation,
                ACTION,
                &spec.name,
                &format!("aws:RequestTag/{FAMILY_TAG} must be {:?}", self.family),
            ));
        }
        Ok(())
    }

    /// TagResource on a table of the family, and never writing another family's tag.
    pub(crate) fn may_tag(
        &self,
        world: &World,
        operation: &'static str,
        name: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), ControlPlaneError> {
        const ACTION: &str = "dynamodb:TagResource";
        self.may_change(world, operation, ACTION, name)?;
        if let Some(family) = tags.get(FAMILY_TAG).filter(|f| self.iam && **f != self.family) {
            return Err(self.denied(
                operation,
                ACTION,
                name,
                &format!("aws:RequestTag/{FAMILY_TAG} is {family:?}"),
            ));
        }
        Ok(())
    }

    /// DeleteFamilyTables: StringEquals, so an untagged table is refused too.
    pub(crate) fn may_delete(
        &self,
        world: &World,
        operation: &'static str,
        name: &str,
    ) -> Result<(), ControlPlaneError> {
        const ACTION: &str = "dynamodb:DeleteTable";
        self.may_read(operation, ACTION, name)?;
        let family = world.tables.get(name).and_then(Table::family);
        if self.iam && family != Some(self.family.as_str()) {
            return Err(self.denied(
                operation,
                ACTION,
                name,
                &format!(
                    "aws:ResourceTag/{FAMILY_TAG} is {family:?}, the role needs {:?}",
                    self.family
                ),
            ));
        }
        Ok(())
    }
}
