//! [`Mappings`] through the Lambda client, when the caller gave one; the calls themselves are
//! [`crate::lambda`]'s.

use super::DynamoDb;
use crate::lambda;
use ddb_rollover::control::{ControlPlaneError, Mappings};
use ddb_rollover::table::{MappingChange, MappingRemoval, MappingUpdate, ObservedMapping};

impl DynamoDb {
    fn lambda(
        &self,
        operation: &'static str,
        table: &str,
    ) -> Result<&aws_sdk_lambda::Client, ControlPlaneError> {
        self.lambda.as_ref().ok_or_else(|| {
            ControlPlaneError::unsupported(
                operation,
                table,
                "no Lambda client: event source mappings need one",
            )
        })
    }
}

impl Mappings for DynamoDb {
    async fn list_event_source_mappings(
        &self,
        table: &str,
        stream_arn: &str,
    ) -> Result<Vec<ObservedMapping>, ControlPlaneError> {
        lambda::list(self.lambda("ListEventSourceMappings", table)?, table, stream_arn)
            .await
            .map_err(|e| self.server.judge(e))
    }

    async fn create_event_source_mapping(
        &self,
        change: &MappingChange,
        stream_arn: &str,
    ) -> Result<ObservedMapping, ControlPlaneError> {
        lambda::create(
            self.lambda("CreateEventSourceMapping", &change.name)?,
            change,
            stream_arn,
        )
        .await
        .map_err(|e| self.server.judge(e))
    }

    async fn update_event_source_mapping(&self, update: &MappingUpdate) -> Result<(), ControlPlaneError> {
        lambda::update(self.lambda("UpdateEventSourceMapping", &update.name)?, update)
            .await
            .map_err(|e| self.server.judge(e))
    }

    async fn delete_event_source_mapping(&self, removal: &MappingRemoval) -> Result<(), ControlPlaneError> {
        lambda::delete(self.lambda("DeleteEventSourceMapping", &removal.name)?, removal)
            .await
            .map_err(|e| self.server.judge(e))
    }
}
