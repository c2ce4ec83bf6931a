//! [`Mappings`] on the fake: Lambda's event source mappings ([`crate::mappings`]), through the
//! role's IAM as the template grants it (CreateEventSourceMapping, UpdateEventSourceMapping and
//! DeleteEventSourceMapping scoped by `lambda:FunctionArn`, ListEventSourceMappings on `*`).

use aws_model::iam::Request;
use ddb_rollover::control::{ControlPlaneError, Mappings};
use ddb_rollover::table::{MappingChange, MappingRemoval, MappingUpdate, ObservedMapping};

use crate::account::FakeAws;
use crate::mappings::{Mapping, MAPPING_ARN_PREFIX};
use crate::mutations::mappings::{self, MappingEdit};

/// The condition key the template scopes the mapping calls with.
const FUNCTION_KEY: &str = "lambda:FunctionArn";

impl Mappings for FakeAws {
    async fn list_event_source_mappings(
        &self,
        table: &str,
        stream_arn: &str,
    ) -> Result<Vec<ObservedMapping>, ControlPlaneError> {
        const OP: &str = "ListEventSourceMappings";
        self.request(OP, table).await?;
        self.authorize(OP, table, Request::new("lambda:ListEventSourceMappings", "*"))?;
        Ok(self
            .lock()
            .mappings
            .values()
            .filter(|m| m.event_source_arn == stream_arn)
            .map(Mapping::observed)
            .collect())
    }

    async fn create_event_source_mapping(
        &self,
        change: &MappingChange,
        stream_arn: &str,
    ) -> Result<ObservedMapping, ControlPlaneError> {
        const OP: &str = "CreateEventSourceMapping";
        let function = change.consumer.function.as_str();
        self.change(OP, &change.name, |world, effects| {
            let request =
                Request::new("lambda:CreateEventSourceMapping", "*").with_context(FUNCTION_KEY, function);
            self.authorize(OP, &change.name, request)?;
            let settings = (change.consumer.batch_size, change.consumer.filters.as_slice());
            mappings::create(world, &self.actor, function, stream_arn, settings, effects)
        })
        .await
    }

    async fn update_event_source_mapping(&self, update: &MappingUpdate) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateEventSourceMapping";
        self.change(OP, &update.name, |world, effects| {
            let edit = MappingEdit::Settings {
                batch_size: update.batch_size,
                filters: update.filters.clone(),
            };
            // Lambda looks the mapping up first: IAM's lambda:FunctionArn is its function.
            let Some(function) = world.mappings.get(&update.uuid).map(|m| m.function_arn.clone()) else {
                return mappings::update(world, &update.uuid, edit, effects);
            };
            let arn = format!("{MAPPING_ARN_PREFIX}{}", update.uuid);
            let request =
                Request::new("lambda:UpdateEventSourceMapping", &arn).with_context(FUNCTION_KEY, &function);
            self.authorize(OP, &update.name, request)?;
            mappings::update(world, &update.uuid, edit, effects)
        })
        .await
    }

    async fn delete_event_source_mapping(&self, removal: &MappingRemoval) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteEventSourceMapping";
        self.change(OP, &removal.name, |world, effects| {
            // Lambda looks the mapping up first: IAM's lambda:FunctionArn is its function.
            let Some(function) = world.mappings.get(&removal.uuid).map(|m| m.function_arn.clone()) else {
                return mappings::delete(world, &removal.name, &removal.uuid, effects);
            };
            let arn = format!("{MAPPING_ARN_PREFIX}{}", removal.uuid);
            let request =
                Request::new("lambda:DeleteEventSourceMapping", &arn).with_context(FUNCTION_KEY, &function);
            self.authorize(OP, &removal.name, request)?;
            mappings::delete(world, &removal.name, &removal.uuid, effects)
        })
        .await
    }
}
