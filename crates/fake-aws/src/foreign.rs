//! The foreign acts: people, other tools and other families' runs changing the account outside
//! our role's IAM (logged with their actor), and application writes of items.

use std::collections::BTreeMap;

use aws_model::exports;
use aws_model::resource_policy::{denies_to_everyone, explicit_deny};
use ddb_rollover::control::{ControlPlaneError, ErrorKind};
use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::policy::{table_of, ScalableKey};
use ddb_rollover::policy::{Billing, GlobalIndex};
use ddb_rollover::table::{TableSetting, TableSpec, WarmPart, WarmRaise};

use crate::account::FakeAws;
use crate::errors::{error, in_use, not_found, validation};
use crate::log::Effect;
use crate::maker::Maker;
use crate::mutations::tables::CapacityRequest;
use crate::mutations::warm;
use crate::objects::arn_of;
use crate::objects::{Export, ScalingPolicy, ScheduledAction, Write};
use crate::objects::{Status, KEY_LOSS_UNTIL_ARCHIVING};
use crate::s3;
use crate::s3::S3Object;
use crate::world::World;

impl FakeAws {
    pub(crate) fn foreign<T>(
        &self,
        who: &str,
        operation: &'static str,
        table: &str,
        f: impl FnOnce(&mut World, &Maker, &mut Vec<Effect>) -> Result<T, ControlPlaneError>,
    ) -> Result<T, ControlPlaneError> {
        let actor = Maker::Foreign(who.to_string());
        self.call(&actor, None, operation, table, |world, effects| {
            f(world, &actor, effects)
        })
    }

    /// A foreign act on the scalable target `key`, logged on its table (the closure gets the
    /// table's name).
    pub(crate) fn foreign_on_target<T>(
        &self,
        who: &str,
        operation: &'static str,
        key: &ScalableKey,
        f: impl FnOnce(&mut World, &Maker, &mut Vec<Effect>, &str) -> Result<T, ControlPlaneError>,
    ) -> Result<T, ControlPlaneError> {
        let table = table_of(&key.resource_id).unwrap_or_default();
        self.foreign(who, operation, table, |world, actor, effects| {
            f(world, actor, effects, table)
        })
    }

    /// A hand-made table: any name, key, indexes, tags and billing (CREATING, then ACTIVE).
    pub fn foreign_create_table(&self, who: &str, spec: &TableSpec) -> Result<(), ControlPlaneError> {
        self.foreign(who, "CreateTable", &spec.name, |world, actor, effects| {
            Self::create(world, actor, spec, effects)
        })
    }

    /// Someone tags `table` (TagResource), outside the role's IAM.
    pub fn foreign_tag(
        &self,
        who: &str,
        table: &str,
        tags: BTreeMap<String, String>,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "TagResource", table, |world, _, effects| {
            Self::tag(world, table, &tags, effects)
        })
    }

    /// Someone removes tags from `table` (UntagResource).
    pub fn foreign_untag(&self, who: &str, table: &str, keys: &[String]) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UntagResource", table, |world, _, effects| {
            let t = Self::table_mut(world, "UntagResource", table)?;
            for key in keys {
                t.tags.remove(key);
            }
            effects.push(Effect::Untagged {
                table: table.to_string(),
                keys: keys.to_vec(),
            });
            Ok(())
        })
    }

    /// Someone sets the table's throughput (every index gets the same when switching to
    /// provisioned), within DynamoDB's rules.
    pub fn foreign_update_capacity(
        &self,
        who: &str,
        table: &str,
        to: Billing,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UpdateTable", table, |world, _, effects| {
            let indexes: Vec<String> = world
                .tables
                .get(table)
                .map(|t| t.gsis.iter().map(|g| g.name.clone()).collect())
                .unwrap_or_default();
            let request = CapacityRequest {
                table_to: Some(to),
                indexes: match to {
                    Billing::Provisioned(_) => indexes.iter().map(|i| (i.as_str(), to)).collect(),
                    Billing::OnDemand(_) => Vec::new(),
                },
            };
            Self::update_throughput(world, table, request, effects)
        })
    }

    /// Someone sets one global index's provisioned throughput, within DynamoDB's rules.
    pub fn foreign_update_index_capacity(
        &self,
        who: &str,
        table: &str,
        index: &str,
        to: Billing,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UpdateTable", table, |world, _, effects| {
            let request = CapacityRequest {
                table_to: None,
                indexes: vec![(index, to)],
            };
            Self::update_throughput(world, table, request, effects)
        })
    }

    /// Someone deletes a scaling policy (DeleteScalingPolicy): the target stays.
    pub fn foreign_delete_policy(
        &self,
        who: &str,
        key: &ScalableKey,
        name: &str,
    ) -> Result<(), ControlPlaneError> {
        self.foreign_on_target(who, "DeleteScalingPolicy", key, |world, _, effects, table| {
            let missing = || no_such("DeleteScalingPolicy", table, "scaling policy", key, name);
            let target = world.targets.get_mut(key).ok_or_else(missing)?;
            let policy = remove_named(&mut target.policies, |p| &p.name, name).ok_or_else(missing)?;
            effects.push(Effect::DeletedPolicy {
                key: key.clone(),
                policy,
            });
            Ok(())
        })
    }

    /// Someone pre-warms one of the table's parts (`index` None: the table) to `to` (UpdateTable's
    /// WarmThroughput), within DynamoDB's rules.
    pub fn foreign_raise_warm(
        &self,
        who: &str,
        table: &str,
        index: Option<&str>,
        to: WarmThroughput,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UpdateTable", table, |world, _, effects| {
            let from = world
                .tables
                .get(table)
                .and_then(|t| match index {
                    None => Some(t.warm.units),
                    Some(index) => t.gsi(index).map(|g| g.warm.units),
                })
                .unwrap_or(to);
            let raise = WarmRaise {
                parts: vec![WarmPart {
                    index: index.map(str::to_string),
                    from,
                    to,
                }],
            };
            warm::raise(world, table, &raise, effects)
        })
    }

    /// The application writes new items to `table` (BatchWriteItem): accepted on an ACTIVE,
    /// UPDATING or even DELETING table, refused with AccessDeniedException when the table's
    /// resource-based policy (once it applies) denies item writes to everyone.
    pub fn write_items(&self, who: &str, table: &str, items: &[String]) -> Result<(), ControlPlaneError> {
        const OP: &str = "BatchWriteItem";
        self.foreign(who, OP, table, |world, _, _| {
            let now = world.now;
            let t = world
                .tables
                .get_mut(table)
                .filter(|t| t.status != Status::Creating)
                .ok_or_else(|| not_found(OP, table))?;
            let denied = t
                .resource_policy
                .as_ref()
                .filter(|p| p.applies_at <= now)
                .is_some_and(|p| denies_to_everyone(&p.document, "dynamodb:BatchWriteItem"));
            if denied {
                return Err(error(
                    ErrorKind::Other,
                    OP,
                    table,
                    format!(
                        "AccessDeniedException: {}",
                        explicit_deny(
                            &format!("arn:aws:sts::123456789012:assumed-role/app/{who}"),
                            "dynamodb:BatchWriteItem",
                            &t.arn
                        )
                    ),
                ));
            }
            for item in items {
                t.items.insert(item.clone());
                world.writes.push(Write {
                    at: now,
                    table: table.to_string(),
                    item: item.clone(),
                });
            }
            Ok(())
        })
    }

    /// Someone disables the table's customer managed KMS key (or revokes DynamoDB's grant on
    /// it, KMS DisableKey / RevokeGrant): the table turns INACCESSIBLE_ENCRYPTION_CREDENTIALS,
    /// takes no reads or writes, and DynamoDB archives it after [`KEY_LOSS_UNTIL_ARCHIVING`]
    /// (ARCHIVING, then ARCHIVED). On AWS only a table encrypted with a customer managed key
    /// can lose it; the fake lets any table.
    pub fn foreign_disable_key(&self, who: &str, table: &str) -> Result<(), ControlPlaneError> {
        self.foreign(who, "DisableKey", table, |world, _, effects| {
            let now = world.now;
            let t = Self::table_mut(world, "DisableKey", table)?;
            if !matches!(t.status, Status::Active | Status::Updating) {
                return Err(validation(
                    "DisableKey",
                    table,
                    format!("the table is {}", t.status.observed().as_str()),
                ));
            }
            t.status = Status::InaccessibleEncryptionCredentials;
            t.ready_at = Some(now + KEY_LOSS_UNTIL_ARCHIVING);
            effects.push(Effect::Setting {
                table: table.to_string(),
                setting: "encryption: KMS key disabled".into(),
            });
            Ok(())
        })
    }

    /// Someone else's PutResourcePolicy (unconditional: it replaces whatever is there).
    pub fn foreign_put_resource_policy(
        &self,
        who: &str,
        table: &str,
        document: &str,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "PutResourcePolicy", table, |world, _, _| {
            Self::put_resource_policy_in(world, "PutResourcePolicy", table, document, None).map(drop)
        })
    }

    /// Someone else's DeleteResourcePolicy (unconditional).
    pub fn foreign_delete_resource_policy(&self, who: &str, table: &str) -> Result<(), ControlPlaneError> {
        self.foreign(who, "DeleteResourcePolicy", table, |world, _, _| {
            Self::delete_resource_policy_in(world, "DeleteResourcePolicy", table, None)
        })
    }

    /// Someone deletes `table` (DeleteTable), as DynamoDB allows it.
    pub fn foreign_delete_table(&self, who: &str, table: &str) -> Result<(), ControlPlaneError> {
        self.foreign(who, "DeleteTable", table, |world, actor, effects| {
            Self::delete(world, actor, table, effects)
        })
    }

    // ---- S3: another principal's acts on the archive bucket (logged by key) ----

    /// PutObject: `key` written, or overwritten, with `bytes` (STANDARD).
    pub fn foreign_put_object(&self, who: &str, bucket: &str, key: &str, bytes: &[u8]) {
        let _ = self.foreign(who, "PutObject", key, |world, _, _| {
            world.s3.insert(
                (bucket.to_string(), key.to_string()),
                S3Object::new(bytes.to_vec()),
            );
            Ok(())
        });
    }

    /// DeleteObject (a missing key is no error, as S3 answers).
    pub fn foreign_delete_object(&self, who: &str, bucket: &str, key: &str) {
        let _ = self.foreign(who, "DeleteObject", key, |world, _, _| {
            world.s3.remove(&(bucket.to_string(), key.to_string()));
            Ok(())
        });
    }

    /// CopyObject of `key` onto itself with `x-amz-storage-class: {class}` (what a lifecycle
    /// transition does too): the bytes and the ETag stay. `false` when there is no such key.
    pub fn foreign_set_storage_class(&self, who: &str, bucket: &str, key: &str, class: &str) -> bool {
        self.foreign(who, "CopyObject", key, |world, _, _| {
            let object = world
                .s3
                .get_mut(&(bucket.to_string(), key.to_string()))
                .ok_or_else(|| not_found("CopyObject", key))?;
            object.storage_class = (class != "STANDARD").then(|| class.to_string());
            Ok(())
        })
        .is_ok()
    }

    /// PutBucketLifecycleConfiguration of one Enabled rule `id` expiring the objects under
    /// `prefix` `days` days after their creation (it replaces the bucket's configuration, as
    /// S3's does): from then on S3 answers `x-amz-expiration` on every read of such an object.
    pub fn foreign_put_lifecycle_expiration(
        &self,
        who: &str,
        bucket: &str,
        id: &str,
        prefix: &str,
        days: u32,
    ) {
        let _ = self.foreign(who, "PutBucketLifecycleConfiguration", bucket, |world, _, _| {
            let mut state = world.bucket(bucket);
            state.expirations = vec![s3::ExpirationRule {
                id: id.to_owned(),
                prefix: prefix.to_owned(),
                days,
            }];
            world.buckets.insert(bucket.to_owned(), state);
            Ok(())
        });
    }

    /// DeleteBucketLifecycle: the bucket's rules gone.
    pub fn foreign_delete_lifecycle(&self, who: &str, bucket: &str) {
        let _ = self.foreign(who, "DeleteBucketLifecycle", bucket, |world, _, _| {
            let mut state = world.bucket(bucket);
            state.expirations.clear();
            world.buckets.insert(bucket.to_owned(), state);
            Ok(())
        });
    }

    /// The bucket's name now belongs to `account`: its owner deleted the bucket and that account
    /// made one of the same name (S3 bucket names are global), and copied every object back as
    /// it was (the worst case for a proof: ETags and manifests unchanged). Its lifecycle rules
    /// went with the old bucket.
    pub fn foreign_bucket_owner(&self, who: &str, bucket: &str, account: &str) {
        let _ = self.foreign(who, "CreateBucket", bucket, |world, _, _| {
            world.buckets.insert(
                bucket.to_owned(),
                s3::Bucket {
                    owner: account.to_owned(),
                    expirations: Vec::new(),
                },
            );
            Ok(())
        });
    }

    /// A whole, consistent export of another account's or family's `table` (`items` items in
    /// one data file) laid out under `prefix`, as its own ExportTableToPointInTime would; its
    /// id sorts after every export made so far. Returns its manifest's key.
    pub fn foreign_place_export(
        &self,
        who: &str,
        bucket: &str,
        prefix: &str,
        table: &str,
        items: u64,
    ) -> String {
        let (id, now) = {
            let world = self.lock();
            (
                format!("{:020}-ffffffff", world.now.timestamp_millis() + 1),
                world.now,
            )
        };
        let directory = exports::directory(prefix, &id);
        let export = exports::export_arn(&arn_of(table), &id);
        let files = [(exports::data_key(&directory, "0000.json.gz"), items)];
        let objects = s3::export_objects(&export, &arn_of(table), &directory, &files, now);
        let manifest = exports::summary_key(&directory);
        let _ = self.foreign(who, "PutObject", &manifest, |world, _, _| {
            for (key, object) in objects {
                world.s3.insert((bucket.to_string(), key), object);
            }
            Ok(())
        });
        manifest
    }

    /// An export's `manifest-files.json` rewritten (ETags and MD5s consistent) so its first data
    /// file is listed at a copy outside the export's `data/`, and that file removed from
    /// `data/`. `false` when there is no such export or it lists no file.
    pub fn foreign_repoint_file_list(&self, who: &str, bucket: &str, export: &Export) -> bool {
        let files_key = export.files_key();
        self.foreign(who, "PutObject", &files_key, |world, _, _| {
            let Some((first, _)) = export.files.first() else {
                return Err(not_found("PutObject", &files_key));
            };
            let at = |key: &str| (bucket.to_string(), key.to_string());
            let lines = world
                .s3
                .get(&at(&files_key))
                .ok_or_else(|| not_found("PutObject", &files_key))?;
            let moved = first.replace("/data/", "/elsewhere/");
            let rewritten = String::from_utf8_lossy(&lines.bytes).replace(first.as_str(), &moved);
            let object = world
                .s3
                .remove(&at(first))
                .ok_or_else(|| not_found("PutObject", first))?;
            world.s3.insert(at(&moved), object);
            world
                .s3
                .insert(at(&files_key), S3Object::new(rewritten.into_bytes()));
            Ok(())
        })
        .is_ok()
    }

    /// Someone adds a global secondary index to `table` (UpdateTable).
    pub fn foreign_add_index(
        &self,
        who: &str,
        table: &str,
        index: &GlobalIndex,
        billing: Billing,
    ) -> Result<(), ControlPlaneError> {
        self.foreign(who, "UpdateTable", table, |world, actor, effects| {
            Self::add_index(world, actor, table, index, billing, effects)
        })
    }

    /// Someone else's scalable target (created, or its bounds updated).
    pub fn foreign_register_target(
        &self,
        who: &str,
        key: &ScalableKey,
        min: i64,
        max: i64,
    ) -> Result<(), ControlPlaneError> {
        self.foreign_on_target(who, "RegisterScalableTarget", key, |world, actor, effects, _| {
            Self::check_resource(world, "RegisterScalableTarget", key)?;
            Self::register_target(world, actor, key, min, max, effects);
            Ok(())
        })
    }

    /// Someone else's scaling policy on an existing target: `StepScaling` (no metric or target)
    /// or `TargetTrackingScaling` on the dimension's utilisation metric at 50%.
    pub fn foreign_put_policy(
        &self,
        who: &str,
        key: &ScalableKey,
        name: &str,
        policy_type: &str,
    ) -> Result<(), ControlPlaneError> {
        let tracking = policy_type == "TargetTrackingScaling";
        let policy = ScalingPolicy {
            name: name.to_string(),
            arn: String::new(),
            policy_type: policy_type.to_string(),
            metric: tracking.then(|| key.dimension.metric().to_string()),
            target_value: tracking.then_some(50.0),
            maker: Maker::Foreign(who.to_string()),
        };
        self.foreign_on_target(who, "PutScalingPolicy", key, |world, actor, effects, _| {
            Self::put_policy(world, actor, key, policy, effects).map(drop)
        })
    }

    /// Someone puts a scheduled action on a registered scalable target (PutScheduledAction;
    /// the same name again updates it): AWS refuses one on a target that is not registered.
    pub fn foreign_put_scheduled_action(
        &self,
        who: &str,
        key: &ScalableKey,
        name: &str,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "PutScheduledAction";
        self.foreign_on_target(who, OP, key, |world, actor, effects, table| {
            let Some(target) = world.targets.get_mut(key) else {
                return Err(error(
                    ErrorKind::NotFound,
                    OP,
                    table,
                    format!("ObjectNotFoundException: No scalable target registered for service namespace: dynamodb, resource ID: {}, scalable dimension: {}", key.resource_id, key.dimension),
                ));
            };
            let created = !target.scheduled_actions.iter().any(|a| a.name == name);
            if created {
                target.scheduled_actions.push(ScheduledAction {
                    name: name.to_string(),
                    maker: actor.clone(),
                });
            }
            effects.push(Effect::PutScheduledAction {
                key: key.clone(),
                name: name.to_string(),
                created,
            });
            Ok(())
        })
    }

    /// Someone deletes a scheduled action (DeleteScheduledAction): the target stays.
    pub fn foreign_delete_scheduled_action(
        &self,
        who: &str,
        key: &ScalableKey,
        name: &str,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "DeleteScheduledAction";
        self.foreign_on_target(who, OP, key, |world, _, effects, table| {
            let missing = || no_such(OP, table, "scheduled action", key, name);
            let target = world.targets.get_mut(key).ok_or_else(missing)?;
            let action =
                remove_named(&mut target.scheduled_actions, |a| &a.name, name).ok_or_else(missing)?;
            effects.push(Effect::DeletedScheduledAction {
                key: key.clone(),
                action,
            });
            Ok(())
        })
    }

    /// Someone turns deletion protection on or off (UpdateTable DeletionProtectionEnabled),
    /// within DynamoDB's rules (an ACTIVE table; UPDATING meanwhile).
    pub fn foreign_deletion_protection(
        &self,
        who: &str,
        table: &str,
        on: bool,
    ) -> Result<(), ControlPlaneError> {
        const OP: &str = "UpdateTable";
        self.foreign(who, OP, table, |world, actor, effects| {
            let now = world.now;
            let delay = world.config.update_delay;
            let t = Self::table_mut(world, OP, table)?;
            if t.status != Status::Active {
                return Err(in_use(OP, table, t.status));
            }
            t.deletion_protection = on;
            t.protected_by = on.then(|| actor.clone());
            t.status = Status::Updating;
            t.ready_at = Some(now + delay);
            effects.push(Effect::Setting {
                table: table.to_string(),
                setting: TableSetting::DeletionProtection(on).to_string(),
            });
            Ok(())
        })
    }

    /// Someone deregisters a scalable target: Application Auto Scaling deletes every policy and
    /// scheduled action on it with it, whoever made them.
    pub fn foreign_deregister_target(&self, who: &str, key: &ScalableKey) -> Result<(), ControlPlaneError> {
        self.foreign_on_target(who, "DeregisterScalableTarget", key, |world, _, effects, _| {
            Self::deregister_target(world, key, effects)
        })
    }
}

/// Application Auto Scaling's answer when the `what` named `name` is not on the target `key`.
fn no_such(
    operation: &'static str,
    table: &str,
    what: &str,
    key: &ScalableKey,
    name: &str,
) -> ControlPlaneError {
    error(
        ErrorKind::NotFound,
        operation,
        table,
        format!(
            "ObjectNotFoundException: No {what} found for service namespace: dynamodb, resource ID: {}, scalable dimension: {}: {name}",
            key.resource_id, key.dimension
        ),
    )
}

/// Takes the item named `name` out of `items`.
fn remove_named<T>(items: &mut Vec<T>, name_of: impl Fn(&T) -> &String, name: &str) -> Option<T> {
    let at = items.iter().position(|item| name_of(item) == name)?;
    Some(items.remove(at))
}
