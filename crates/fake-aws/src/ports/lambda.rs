//! [`Mappings`] on the fake: Lambda's event source mappings ([`crate::mappings`]), through the
//! role's IAM as the template grants it (CreateEventSourceMapping and DeleteEventSourceMapping
//! scoped by `lambda:FunctionArn`, ListEventSourceMappings on `*`).

use aws_model::iam::Request;
use ddb_rollover::run::control::{ControlPlaneError, Mappings};
use ddb_rollover::table::stream::{MappingChange, MappingRemoval, ObservedMapping};

use crate::mappings::{self, MAPPING_ARN_PREFIX};
use crate::FakeAws;

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
            .map(mappings::Mapping::observed)
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
            mappings::create(world, &self.actor, function, stream_arn, effects)
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
