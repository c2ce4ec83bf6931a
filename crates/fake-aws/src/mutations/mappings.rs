//! Lambda event source mappings' changes ([`crate::mappings`] holds what a mapping is):
//! CreateEventSourceMapping, Delete, Update, a function deleted, and the account's functions,
//! by our calls and by foreign acts.

use chrono::Duration;
use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::table::{MappingState, ObservedMapping};

use crate::account::FakeAws;
use crate::errors::error;
use crate::log::Effect;
use crate::maker::Maker;
use crate::mappings::{table_of_stream, Mapping, MappingAct, FUNCTION_GONE};
use crate::objects::TABLE_ARN_PREFIX;
use crate::world::World;

/// A new stream ARN for `table` (its stream just turned on): unique in the account, as each
/// stream's label (a timestamp) is.
pub(crate) fn new_stream_arn(world: &mut World, table: &str) -> String {
    let id = world.next_id;
    world.next_id += 1;
    let label =
        (world.now + Duration::milliseconds(i64::try_from(id).unwrap_or(0))).format("%Y-%m-%dT%H:%M:%S%.3f");
    format!("{TABLE_ARN_PREFIX}{table}/stream/{label}")
}

/// What an UpdateEventSourceMapping changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum MappingEdit {
    /// BatchSize and FilterCriteria.
    Settings { batch_size: u32, filters: Vec<String> },
    /// FunctionName.
    Function(String),
}

fn not_found_mapping(operation: &'static str, table: &str, uuid: &str) -> ControlPlaneError {
    error(
        ErrorKind::NotFound,
        operation,
        table,
        format!("ResourceNotFoundException: The resource you requested does not exist. (event source mapping {uuid})"),
    )
}

fn in_use_mapping(operation: &'static str, table: &str, mapping: &Mapping) -> ControlPlaneError {
    error(
        ErrorKind::InUse,
        operation,
        table,
        format!(
            "ResourceInUseException: Cannot update the event source mapping {} because it is in use (its state is {})",
            mapping.uuid,
            mapping.state.as_str()
        ),
    )
}

/// Whether `stream_arn` is the latest, turned-on stream of a table the account holds.
pub(crate) fn stream_exists(world: &World, stream_arn: &str) -> bool {
    world
        .tables
        .values()
        .any(|t| t.stream.is_some() && t.stream_arn.as_deref() == Some(stream_arn))
}

/// CreateEventSourceMapping of `function_arn` on `stream_arn` by `actor`, with its batch size
/// and filters.
pub(crate) fn create(
    world: &mut World,
    actor: &Maker,
    function_arn: &str,
    stream_arn: &str,
    (batch_size, filters): (u32, &[String]),
    effects: &mut Vec<Effect>,
) -> Result<ObservedMapping, ControlPlaneError> {
    const OP: &str = "CreateEventSourceMapping";
    let table = table_of_stream(stream_arn).unwrap_or_default().to_string();
    if !world.functions.contains(function_arn) {
        return Err(error(
            ErrorKind::NotFound,
            OP,
            &table,
            format!("ResourceNotFoundException: Function not found: {function_arn}"),
        ));
    }
    if !stream_exists(world, stream_arn) {
        return Err(error(
            ErrorKind::NotFound,
            OP,
            &table,
            format!("ResourceNotFoundException: Stream not found: {stream_arn}"),
        ));
    }
    if let Some(held) = world
        .mappings
        .values()
        .find(|m| m.function_arn == function_arn && m.event_source_arn == stream_arn)
    {
        return Err(error(
            ErrorKind::AlreadyExists,
            OP,
            &table,
            format!(
                "ResourceConflictException: An event source mapping with DynamoDB stream arn (\"{stream_arn}\") and function (\"{function_arn}\") already exists. Please update or delete the existing mapping with UUID {}",
                held.uuid
            ),
        ));
    }
    let id = world.next_id;
    world.next_id += 1;
    let uuid = format!("00000000-0000-4000-8000-{id:012x}");
    let mapping = Mapping {
        uuid: uuid.clone(),
        function_arn: function_arn.to_string(),
        event_source_arn: stream_arn.to_string(),
        state: MappingState::Creating,
        ready_at: Some(world.now + world.config.mapping_delay),
        maker: actor.clone(),
        last_result: None,
        last_modified: world.now,
        batch_size,
        filters: filters.to_vec(),
    };
    let observed = mapping.observed();
    world.mappings.insert(uuid.clone(), mapping);
    effects.push(Effect::CreatedMapping {
        table,
        uuid,
        function_arn: function_arn.to_string(),
        stream_arn: stream_arn.to_string(),
    });
    Ok(observed)
}

/// DeleteEventSourceMapping of `uuid`: Deleting, then gone.
pub(crate) fn delete(
    world: &mut World,
    table: &str,
    uuid: &str,
    effects: &mut Vec<Effect>,
) -> Result<(), ControlPlaneError> {
    const OP: &str = "DeleteEventSourceMapping";
    let ready_at = world.now + world.config.mapping_delay;
    let mapping = world
        .mappings
        .get_mut(uuid)
        .ok_or_else(|| not_found_mapping(OP, table, uuid))?;
    if matches!(mapping.state, MappingState::Updating | MappingState::Deleting) {
        return Err(in_use_mapping(OP, table, mapping));
    }
    effects.push(Effect::DeletedMapping {
        table: mapping.table().to_string(),
        uuid: uuid.to_string(),
        function_arn: mapping.function_arn.clone(),
        stream_arn: mapping.event_source_arn.clone(),
        maker: mapping.maker.clone(),
    });
    mapping.state = MappingState::Deleting;
    mapping.ready_at = Some(ready_at);
    Ok(())
}

/// UpdateEventSourceMapping `Enabled = false` of an Enabled mapping: Disabling, then Disabled.
pub(crate) fn disable(
    world: &mut World,
    uuid: &str,
    effects: &mut Vec<Effect>,
) -> Result<(), ControlPlaneError> {
    const OP: &str = "UpdateEventSourceMapping";
    let ready_at = world.now + world.config.mapping_delay;
    let mapping = world
        .mappings
        .get_mut(uuid)
        .ok_or_else(|| not_found_mapping(OP, "", uuid))?;
    if mapping.state != MappingState::Enabled {
        let table = mapping.table().to_string();
        return Err(in_use_mapping(OP, &table, mapping));
    }
    mapping.state = MappingState::Disabling;
    mapping.ready_at = Some(ready_at);
    mapping.last_modified = world.now;
    effects.push(Effect::DisabledMapping {
        table: mapping.table().to_string(),
        uuid: uuid.to_string(),
        function_arn: mapping.function_arn.clone(),
    });
    Ok(())
}

/// UpdateEventSourceMapping of `uuid`'s settings or function (see the module's rules).
pub(crate) fn update(
    world: &mut World,
    uuid: &str,
    edit: MappingEdit,
    effects: &mut Vec<Effect>,
) -> Result<(), ControlPlaneError> {
    const OP: &str = "UpdateEventSourceMapping";
    let ready_at = world.now + world.config.mapping_delay;
    if let MappingEdit::Function(function_arn) = &edit {
        if !world.functions.contains(function_arn) {
            return Err(error(
                ErrorKind::NotFound,
                OP,
                "",
                format!("ResourceNotFoundException: Function not found: {function_arn}"),
            ));
        }
    }
    let mapping = world
        .mappings
        .get_mut(uuid)
        .ok_or_else(|| not_found_mapping(OP, "", uuid))?;
    if !matches!(mapping.state, MappingState::Enabled | MappingState::Disabled) {
        let table = mapping.table().to_string();
        return Err(in_use_mapping(OP, &table, mapping));
    }
    match edit {
        MappingEdit::Settings { batch_size, filters } => {
            mapping.batch_size = batch_size;
            mapping.filters = filters;
        }
        MappingEdit::Function(function_arn) => mapping.function_arn = function_arn,
    }
    if mapping.state == MappingState::Enabled {
        mapping.state = MappingState::Updating;
        mapping.ready_at = Some(ready_at);
    }
    mapping.last_modified = world.now;
    effects.push(Effect::UpdatedMapping {
        table: mapping.table().to_string(),
        uuid: uuid.to_string(),
        function_arn: mapping.function_arn.clone(),
        maker: mapping.maker.clone(),
    });
    Ok(())
}

/// DeleteFunction: the function is gone; its mappings stay, and say so.
pub(crate) fn delete_function(
    world: &mut World,
    function_arn: &str,
    effects: &mut Vec<Effect>,
) -> Result<(), ControlPlaneError> {
    if !world.functions.remove(function_arn) {
        return Err(error(
            ErrorKind::NotFound,
            "DeleteFunction",
            "",
            format!("ResourceNotFoundException: Function not found: {function_arn}"),
        ));
    }
    let mut mappings = Vec::new();
    for mapping in world
        .mappings
        .values_mut()
        .filter(|m| m.function_arn == function_arn)
    {
        mapping.last_result = Some(FUNCTION_GONE.to_string());
        mappings.push(mapping.uuid.clone());
    }
    effects.push(Effect::DeletedFunction {
        function_arn: function_arn.to_string(),
        mappings,
    });
    Ok(())
}

impl FakeAws {
    /// A Lambda function in the account (made before any mapping of it; not logged).
    pub fn create_function(&self, function_arn: &str) {
        self.lock().functions.insert(function_arn.to_string());
    }

    /// Whether the account holds the function.
    pub fn has_function(&self, function_arn: &str) -> bool {
        self.lock().functions.contains(function_arn)
    }

    /// Ground truth: the mappings on `stream_arn`, in any state.
    pub fn mappings_on(&self, stream_arn: &str) -> Vec<Mapping> {
        self.lock()
            .mappings
            .values()
            .filter(|m| m.event_source_arn == stream_arn)
            .cloned()
            .collect()
    }

    /// Ground truth: the latest stream ARN of `table`, if it has ever had a stream.
    pub fn stream_arn(&self, table: &str) -> Option<String> {
        self.lock().tables.get(table).and_then(|t| t.stream_arn.clone())
    }

    /// Someone's CreateEventSourceMapping (outside our role's IAM).
    pub fn foreign_map(
        &self,
        who: &str,
        function_arn: &str,
        stream_arn: &str,
    ) -> Result<String, ControlPlaneError> {
        let table = table_of_stream(stream_arn).unwrap_or_default();
        self.foreign(who, "CreateEventSourceMapping", table, |world, actor, effects| {
            create(world, actor, function_arn, stream_arn, (100, &[]), effects).map(|m| m.uuid)
        })
    }

    /// Someone's UpdateEventSourceMapping of a mapping's batch size and filters, or of its
    /// function.
    pub(crate) fn foreign_update_mapping(
        &self,
        who: &str,
        uuid: &str,
        edit: MappingEdit,
    ) -> Result<(), ControlPlaneError> {
        let table = self
            .lock()
            .mappings
            .get(uuid)
            .map(|m| m.table().to_string())
            .unwrap_or_default();
        self.foreign(who, "UpdateEventSourceMapping", &table, |world, _, effects| {
            update(world, uuid, edit, effects)
        })
    }

    /// Someone's DeleteEventSourceMapping.
    pub fn foreign_unmap(&self, who: &str, uuid: &str) -> Result<(), ControlPlaneError> {
        let table = self
            .lock()
            .mappings
            .get(uuid)
            .map(|m| m.table().to_string())
            .unwrap_or_default();
        self.foreign(who, "DeleteEventSourceMapping", &table, |world, _, effects| {
            delete(world, &table, uuid, effects)
        })
    }

    /// Someone's UpdateEventSourceMapping `Enabled = false`.
    pub fn foreign_disable_mapping(&self, who: &str, uuid: &str) -> Result<(), ControlPlaneError> {
        let table = self
            .lock()
            .mappings
            .get(uuid)
            .map(|m| m.table().to_string())
            .unwrap_or_default();
        self.foreign(who, "UpdateEventSourceMapping", &table, |world, _, effects| {
            disable(world, uuid, effects)
        })
    }

    /// Someone's DeleteFunction.
    pub fn foreign_delete_function(&self, who: &str, function_arn: &str) -> Result<(), ControlPlaneError> {
        self.foreign(who, "DeleteFunction", "", |world, _, effects| {
            delete_function(world, function_arn, effects)
        })
    }

    /// One [`MappingAct`] by `who` (a function's creation is not logged: it is set-up).
    pub fn mapping_act(&self, who: &str, act: &MappingAct) -> Result<(), ControlPlaneError> {
        match act {
            MappingAct::CreateFunction { function_arn } => {
                self.create_function(function_arn);
                Ok(())
            }
            MappingAct::DeleteFunction { function_arn } => self.foreign_delete_function(who, function_arn),
            MappingAct::Map {
                function_arn,
                stream_arn,
            } => self.foreign_map(who, function_arn, stream_arn).map(drop),
            MappingAct::Unmap { uuid } => self.foreign_unmap(who, uuid),
            MappingAct::Disable { uuid } => self.foreign_disable_mapping(who, uuid),
            MappingAct::Configure {
                uuid,
                batch_size,
                filters,
            } => self.foreign_update_mapping(
                who,
                uuid,
                MappingEdit::Settings {
                    batch_size: *batch_size,
                    filters: filters.clone(),
                },
            ),
            MappingAct::Repoint { uuid, function_arn } => {
                self.foreign_update_mapping(who, uuid, MappingEdit::Function(function_arn.clone()))
            }
        }
    }
}
