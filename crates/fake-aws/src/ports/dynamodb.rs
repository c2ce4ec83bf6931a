//! [`Tables`] on the fake: DynamoDB's tables, tags, TTL, point-in-time recovery, settings,
//! exports, imports, resource-based policies and Kinesis data stream destinations, through the
//! role's IAM.

use std::collections::BTreeMap;

use aws_model::exports;
use chrono::Duration;
use ddb_rollover::control::{ControlPlaneError, ErrorKind, Tables};
use ddb_rollover::ledger::TableIdentity;
use ddb_rollover::table::ImportState;
use ddb_rollover::table::ResourcePolicy;
use ddb_rollover::table::{
    CapacityChange, ClassChange, ExportRequest, ImportRequest, SettingChange, TableSetting, TableSpec,
    TagChange, TtlChange,
};
use ddb_rollover::table::{DestinationChange, DestinationStatus, ObservedDestination};
use ddb_rollover::table::{ExportState, ExportStatus, ObservedTable, TtlState};

use crate::account::FakeAws;
use crate::budgets::CLASS_CHANGES_PER_30_DAYS;
use crate::errors::{error, export_not_found, in_use, limit, not_found, validation};
use crate::log::Effect;
use crate::mutations::tables::{encryption_of, CapacityRequest};
use crate::mutations::{destinations, warm};
use crate::objects::Status;
use crate::objects::{arn_of, name_of_arn};
use crate::objects::{Export, Import};
use crate::s3;

impl Tables for FakeAws {
    async fn list_table_names(&self, prefix: &str) -> Result<Vec<String>, ControlPlaneError> {
        self.request("ListTables", prefix).await?;
        Ok(self
            .lock()
            .tables
            .keys()
            .filter(|n| n.starts_with(prefix))
            .cloned()
            .collect())
    }

    async fn describe_table(&self, name: &str) -> Result<Option<ObservedTable>, ControlPlaneError> {
        self.request("DescribeTable", name).await?;
        self.may_read("DescribeTable", "dynamodb:DescribeTable", name)?;
        let world = self.lock();
        Ok(world.tables.get(name).map(|t| t.observed(world.now)))
    }

    async fn create_table(&self, spec: &TableSpec) -> Result<Option<TableIdentity>, ControlPlaneError> {
        const OP: &str = "CreateTable";
        self.change(OP, &spec.name, |world, effects| {
            self.may_create(OP, spec)?;
            Self::create(world, &self.actor, spec, effects)?;
            Ok(world
                .tables
                .get(&spec.name)
                .and_then(|t| t.observed(world.now).identity()))
        })
        .await
    }

    async fn update_capacity(&self, change: &CapacityChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        self.change_table(OP, &change.name, |world, effects| {
            // What the SDK adapter sends: the table's throughput only when it changes.
            let request = CapacityRequest {
                table_to: (change.from != change.to).then_some(change.to),
                indexes: change.indexes.iter().map(|i| (i.index.as_str(), i.to)).collect(),
            };
            Self::update_throughput(world, &change.name, request, effects)
        })
        .await
    }

    async fn update_table_class(&self, change: &ClassChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        self.change_table(OP, &change.name, |world, effects| {
            let now = world.now;
            let delay = world.config.update_delay;
            let table = Self::active_table_mut(world, OP, &change.name)?;
            if table.class == change.to {
                return Err(validation(
                    OP,
                    &change.name,
                    format!("The table class is already {}", change.to),
                ));
            }
            let recent = crate::budgets::within(&table.class_changes, now, Duration::days(30));
            if recent >= CLASS_CHANGES_PER_30_DAYS {
                return Err(limit(
                    OP,
                    &change.name,
                    format!("{recent} table class updates in the trailing 30 days"),
                ));
            }
            effects.push(Effect::TableClass {
                table: change.name.clone(),
                from: table.class,
                to: change.to,
            });
            table.class = change.to;
            table.class_changes.push(now);
            table.status = Status::Updating;
            table.ready_at = Some(now + delay);
            Ok(())
        })
        .await
    }

    async fn list_tags(&self, arn: &str) -> Result<BTreeMap<String, String>, ControlPlaneError> {
        self.read_table("ListTagsOfResource", name_of_arn(arn), |t| t.tags.clone())
            .await
    }

    async fn describe_ttl(&self, name: &str) -> Result<TtlState, ControlPlaneError> {
        self.read_table("DescribeTimeToLive", name, |table| match &table.ttl {
            Some(attribute) => TtlState {
                status: "ENABLED".into(),
                attribute: Some(attribute.clone()),
            },
            None => TtlState {
                status: "DISABLED".into(),
                attribute: None,
            },
        })
        .await
    }

    async fn describe_point_in_time_recovery(&self, name: &str) -> Result<bool, ControlPlaneError> {
        self.read_table("DescribeContinuousBackups", name, |table| table.pitr)
            .await
    }

    async fn describe_export(&self, table: &str, arn: &str) -> Result<ExportState, ControlPlaneError> {
        self.request("DescribeExport", table).await?;
        let world = self.lock();
        let export = world
            .exports
            .get(arn)
            .ok_or_else(|| export_not_found(table, arn))?;
        Ok(ExportState {
            arn: export.arn.clone(),
            status: export.status,
            export_time: Some(export.export_time),
            end_time: (export.status == ExportStatus::Completed).then_some(export.done_at),
            failure: export.failure.clone(),
        })
    }

    /// The operator's ImportTable: the table is created as the request's spec says (CREATING,
    /// then ACTIVE), with no tags; the import COMPLETES with it, having read every object under
    /// the request's prefix (one item a line; a line that is no item is an error).
    async fn import_table(&self, request: &ImportRequest) -> Result<String, ControlPlaneError> {
        const OP: &str = "ImportTable";
        self.change(OP, &request.spec.name, |world, effects| {
            Self::create(world, &self.actor, &request.spec, effects)?;
            let arn = format!("{}/import/{}", arn_of(&request.spec.name), request.client_token);
            let counts = s3::import_counts(&world.s3, &request.bucket, &request.data_prefix);
            world.imports.insert(
                arn.clone(),
                Import {
                    table: request.spec.name.clone(),
                    bucket: request.bucket.clone(),
                    data_prefix: request.data_prefix.clone(),
                    counts,
                },
            );
            Ok(arn)
        })
        .await
    }

    async fn describe_import(&self, table: &str, arn: &str) -> Result<ImportState, ControlPlaneError> {
        self.request("DescribeImport", table).await?;
        let world = self.lock();
        let import = world
            .imports
            .get(arn)
            .ok_or_else(|| not_found("DescribeImport", table))?;
        Ok(match (world.tables.get(&import.table), &import.counts) {
            (_, Err(message)) => ImportState::Failed {
                message: message.clone(),
            },
            (Some(t), Ok((items, errors))) if t.status == Status::Active => ImportState::Completed {
                items: Some(*items),
                errors: Some(*errors),
            },
            (Some(_), Ok(_)) => ImportState::InProgress,
            (None, Ok(_)) => ImportState::Failed {
                message: "the table is gone".into(),
            },
        })
    }

    async fn tag_table(&self, change: &TagChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "TagResource";
        self.change(OP, &change.name, |world, effects| {
            let name = name_of_arn(&change.arn);
            self.may_tag(world, OP, name, &change.tags)?;
            Self::tag(world, name, &change.tags, effects)
        })
        .await
    }

    async fn enable_ttl(&self, change: &TtlChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTimeToLive";
        self.change_table(OP, &change.name, |world, effects| {
            let table = Self::table_mut(world, OP, &change.name)?;
            if matches!(table.status, Status::Creating | Status::Deleting) {
                return Err(in_use(OP, &change.name, table.status));
            }
            if table.ttl.is_some() {
                return Err(validation(OP, &change.name, "TimeToLive is already enabled"));
            }
            table.ttl = Some(change.attribute.clone());
            effects.push(Effect::Ttl {
                table: change.name.clone(),
                attribute: change.attribute.clone(),
            });
            Ok(())
        })
        .await
    }

    async fn enable_point_in_time_recovery(&self, name: &str) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateContinuousBackups";
        self.change_table(OP, name, |world, effects| {
            let table = Self::table_mut(world, OP, name)?;
            if matches!(table.status, Status::Creating | Status::Deleting) {
                return Err(in_use(OP, name, table.status));
            }
            table.pitr = true;
            effects.push(Effect::Pitr {
                table: name.to_string(),
            });
            Ok(())
        })
        .await
    }

    async fn configure(&self, change: &SettingChange) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        self.change_table(OP, &change.name, |world, effects| {
            if let TableSetting::Warm(raise) = &change.setting {
                return warm::raise(world, &change.name, raise, effects);
            }
            if let TableSetting::AddIndex(spec) = &change.setting {
                return Self::add_index(
                    world,
                    &self.actor,
                    &change.name,
                    &spec.index,
                    spec.billing,
                    effects,
                );
            }
            let now = world.now;
            let delay = world.config.update_delay;
            // Turning the stream on makes a new stream (a new LatestStreamArn).
            let turned_on = matches!(change.setting, TableSetting::Stream(Some(_)))
                && world.tables.get(&change.name).is_some_and(|t| t.stream.is_none());
            let new_stream =
                turned_on.then(|| crate::mutations::mappings::new_stream_arn(world, &change.name));
            let table = Self::active_table_mut(world, OP, &change.name)?;
            if let Some(arn) = new_stream {
                table.stream_arn = Some(arn);
            }
            match &change.setting {
                TableSetting::DeletionProtection(on) => {
                    table.deletion_protection = *on;
                    table.protected_by = on.then(|| self.actor.clone());
                }
                TableSetting::Stream(stream) => table.stream = *stream,
                TableSetting::Encryption(encryption) => table.encryption = encryption_of(encryption),
                TableSetting::AddIndex(_) | TableSetting::Warm(_) => unreachable!("handled above"),
            }
            table.status = Status::Updating;
            table.ready_at = Some(now + delay);
            effects.push(Effect::Setting {
                table: change.name.clone(),
                setting: change.setting.to_string(),
            });
            Ok(())
        })
        .await
    }

    async fn export_table(&self, request: &ExportRequest) -> Result<String, ControlPlaneError> {
        const OP: &str = "ExportTableToPointInTime";
        self.change(OP, &request.name, |world, effects| {
            let name = name_of_arn(&request.table_arn).to_string();
            self.may_change(world, OP, "dynamodb:ExportTableToPointInTime", &name)?;
            let table = world.tables.get(&name).ok_or_else(|| {
                error(
                    ErrorKind::NotFound,
                    OP,
                    &name,
                    format!("TableNotFoundException: Table not found: {name}"),
                )
            })?;
            if !table.pitr {
                return Err(error(
                    ErrorKind::Other,
                    OP,
                    &name,
                    format!("PointInTimeRecoveryUnavailableException: Point in time recovery is not enabled for table '{name}'"),
                ));
            }
            let id = world.next_id;
            world.next_id += 1;
            let export_id = format!("{:020}-{id:08x}", world.now.timestamp_millis());
            let arn = exports::export_arn(&arn_of(&name), &export_id);
            let directory = exports::directory(&request.prefix, &export_id);
            // The table as of now (ExportTime), in one data file per partition, as AWS writes them.
            let items = table.items.clone();
            let total = items.len() as u64;
            let files = (0..2u64)
                .map(|n| {
                    let count = if n == 0 { total / 2 } else { total - total / 2 };
                    (exports::data_key(&directory, &format!("{n:04}.json.gz")), count)
                })
                .collect();
            world.exports.insert(
                arn.clone(),
                Export {
                    arn: arn.clone(),
                    table: name.clone(),
                    status: ExportStatus::InProgress,
                    done_at: world.now + world.config.export_delay,
                    bucket: request.bucket.clone(),
                    directory,
                    files,
                    export_time: world.now,
                    items,
                    bucket_owner: Some(request.bucket_owner.clone()),
                    failure: None,
                },
            );
            effects.push(Effect::Exported {
                table: name,
                export: arn.clone(),
            });
            Ok(arn)
        })
        .await
    }

    async fn get_resource_policy(
        &self,
        table: &str,
        _arn: &str,
    ) -> Result<ResourcePolicy, ControlPlaneError> {
        self.read_table("GetResourcePolicy", table, |t| {
            t.resource_policy
                .as_ref()
                .map(|p| ResourcePolicy {
                    document: Some(p.document.clone()),
                    revision: Some(p.revision.clone()),
                })
                .unwrap_or_default()
        })
        .await
    }

    async fn put_resource_policy(
        &self,
        table: &str,
        _arn: &str,
        document: &str,
        expected_revision: &str,
    ) -> Result<String, ControlPlaneError> {
        const OP: &str = "PutResourcePolicy";
        self.change_table(OP, table, |world, _| {
            Self::put_resource_policy_in(world, OP, table, document, Some(expected_revision))
        })
        .await
    }

    async fn delete_resource_policy(
        &self,
        table: &str,
        _arn: &str,
        expected_revision: &str,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteResourcePolicy";
        self.change_table(OP, table, |world, _| {
            Self::delete_resource_policy_in(world, OP, table, Some(expected_revision))
        })
        .await
    }

    async fn describe_kinesis_destinations(
        &self,
        table: &str,
    ) -> Result<Vec<ObservedDestination>, ControlPlaneError> {
        const OP: &str = "DescribeKinesisStreamingDestination";
        self.request(OP, table).await?;
        self.may_read(OP, &format!("dynamodb:{OP}"), table)?;
        Self::described_destinations(&self.lock(), table)
    }

    async fn enable_kinesis_destination(
        &self,
        change: &DestinationChange,
    ) -> Result<DestinationStatus, ControlPlaneError> {
        self.change_table(
            "EnableKinesisStreamingDestination",
            &change.name,
            |world, effects| {
                destinations::enable(
                    world,
                    &self.actor,
                    &change.name,
                    change.destination.stream_arn.as_str(),
                    change.destination.precision,
                    effects,
                )
            },
        )
        .await
    }

    async fn delete_table(&self, name: &str) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteTable";
        self.change_table(OP, name, |world, effects| {
            Self::delete(world, &self.actor, name, effects)
        })
        .await
    }
}
