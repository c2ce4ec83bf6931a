//! The Lambda port: event source mappings on the tables' DynamoDB streams, a service apart from
//! DynamoDB (its own client, its own permissions). A control plane without it answers
//! `Unsupported`: then no mapping can exist, and a policy naming a consumer function is told so.

use std::future::Future;

use super::ControlPlaneError;
use crate::table::stream::{MappingChange, MappingRemoval, MappingUpdate, ObservedMapping};

const NO_LAMBDA: &str = "this control plane has no Lambda event source mappings";

/// Lambda's event source mappings for the tables of a policy with a consumer function.
pub trait Mappings: Sync {
    /// ListEventSourceMappings of one stream (`stream_arn`, the table's latest), across every
    /// page: everyone's mappings on it, whatever their function. `Unsupported` by default.
    fn list_event_source_mappings(
        &self,
        table: &str,
        stream_arn: &str,
    ) -> impl Future<Output = Result<Vec<ObservedMapping>, ControlPlaneError>> + Send {
        let _ = stream_arn;
        let error = ControlPlaneError::unsupported("ListEventSourceMappings", table, NO_LAMBDA);
        async { Err(error) }
    }

    /// CreateEventSourceMapping of the consumer function on `stream_arn`; returns the mapping
    /// as Lambda answered (Creating). `Unsupported` by default.
    fn create_event_source_mapping(
        &self,
        change: &MappingChange,
        stream_arn: &str,
    ) -> impl Future<Output = Result<ObservedMapping, ControlPlaneError>> + Send {
        let _ = stream_arn;
        let error = ControlPlaneError::unsupported("CreateEventSourceMapping", &change.name, NO_LAMBDA);
        async { Err(error) }
    }

    /// UpdateEventSourceMapping of one of ours: the policy's batch size and filters back.
    /// `Unsupported` by default.
    fn update_event_source_mapping(
        &self,
        update: &MappingUpdate,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send {
        let error = ControlPlaneError::unsupported("UpdateEventSourceMapping", &update.name, NO_LAMBDA);
        async { Err(error) }
    }

    /// DeleteEventSourceMapping of one of ours. `Unsupported` by default.
    fn delete_event_source_mapping(
        &self,
        removal: &MappingRemoval,
    ) -> impl Future<Output = Result<(), ControlPlaneError>> + Send {
        let error = ControlPlaneError::unsupported("DeleteEventSourceMapping", &removal.name, NO_LAMBDA);
        async { Err(error) }
    }
}
