//! A [`ControlPlane`](crate::run::control::ControlPlane) that paces the calls AWS rate-limits per account (ListTagsOfResource,
//! TagResource, and Lambda's control plane), so a run over thousands of tables waits its turn
//! instead of collecting ThrottlingExceptions until the SDK's retries run out. Every other call
//! passes straight through: DynamoDB's general control-plane limit (2,500 requests per second)
//! is far above what a run sends.

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use crate::policy::rates::Rates;
use crate::policy::scaling::{DeregisterScaling, ObservedScalableTarget, RegisterScaling};
use crate::run::control::{
    Archives, Clock, ControlPlaneError, Expect, Ledger, Mappings, Scaling, StoredRecord, Tables,
};
use crate::table::archive::{ArchiveProof, ImportState};
use crate::table::changes::{
    CapacityChange, ClassChange, ExportRequest, ImportRequest, SettingChange, TableSpec, TagChange, TtlChange,
};
use crate::table::evidence::{ArchiveRecord, TableIdentity};
use crate::table::seal::ResourcePolicy;
use crate::table::stream::{
    DestinationChange, DestinationStatus, MappingChange, MappingRemoval, MappingUpdate, ObservedDestination,
    ObservedMapping,
};
use crate::table::{ExportState, ObservedTable, TtlState};

/// `inner` with its tag calls paced at `rates`.
#[derive(Debug)]
pub struct Paced<C> {
    inner: C,
    list_tags: DefaultDirectRateLimiter,
    tag_writes: DefaultDirectRateLimiter,
    lambda: DefaultDirectRateLimiter,
}

/// Lambda's control-plane quota: 15 requests per second for the account and Region across all
/// its control-plane calls (event source mappings among them), shared with every other caller.
const LAMBDA_CONTROL_PLANE_PER_SECOND: u32 = 15;

impl<C> Paced<C> {
    /// `inner`, its tag calls paced at `rates`.
    pub fn new(inner: C, rates: Rates) -> Self {
        // AWS's token bucket holds one second's worth. The pacer's holds half of it: a steady
        // run's few tag calls go out without waiting, a catch-up over thousands of tables
        // settles at the rate, and the other half is headroom for calls that leave paced but
        // arrive bunched (a busy client, the network), which AWS would throttle. Another caller
        // spending the same budget meets a throttle, which the SDK's retries absorb.
        let quota = |per_second: u32| {
            let per_second = NonZeroU32::new(per_second.max(1)).expect("at least 1");
            let burst = NonZeroU32::new(per_second.get() / 2).unwrap_or(NonZeroU32::MIN);
            Quota::per_second(per_second).allow_burst(burst)
        };
        Paced {
            inner,
            list_tags: RateLimiter::direct(quota(rates.list_tags_of_resource)),
            tag_writes: RateLimiter::direct(quota(rates.tag_resource)),
            lambda: RateLimiter::direct(quota(LAMBDA_CONTROL_PLANE_PER_SECOND)),
        }
    }

    /// The control plane the calls go to.
    pub fn inner(&self) -> &C {
        &self.inner
    }
}

impl<C: Tables + Send> Tables for Paced<C> {
    async fn list_table_names(&self, prefix: &str) -> Result<Vec<String>, ControlPlaneError> {
        self.inner.list_table_names(prefix).await
    }

    async fn describe_table(&self, name: &str) -> Result<Option<ObservedTable>, ControlPlaneError> {
        self.inner.describe_table(name).await
    }

    async fn create_table(&self, spec: &TableSpec) -> Result<Option<TableIdentity>, ControlPlaneError> {
        self.inner.create_table(spec).await
    }

    async fn update_capacity(&self, change: &CapacityChange) -> Result<(), ControlPlaneError> {
        self.inner.update_capacity(change).await
    }

    async fn update_table_class(&self, change: &ClassChange) -> Result<(), ControlPlaneError> {
        self.inner.update_table_class(change).await
    }

    async fn list_tags(&self, arn: &str) -> Result<BTreeMap<String, String>, ControlPlaneError> {
        self.list_tags.until_ready().await;
        self.inner.list_tags(arn).await
    }

    async fn describe_ttl(&self, name: &str) -> Result<TtlState, ControlPlaneError> {
        self.inner.describe_ttl(name).await
    }

    async fn describe_point_in_time_recovery(&self, name: &str) -> Result<bool, ControlPlaneError> {
        self.inner.describe_point_in_time_recovery(name).await
    }

    async fn describe_export(&self, table: &str, arn: &str) -> Result<ExportState, ControlPlaneError> {
        self.inner.describe_export(table, arn).await
    }

    async fn tag_table(&self, change: &TagChange) -> Result<(), ControlPlaneError> {
        self.tag_writes.until_ready().await;
        self.inner.tag_table(change).await
    }

    async fn enable_ttl(&self, change: &TtlChange) -> Result<(), ControlPlaneError> {
        self.inner.enable_ttl(change).await
    }

    async fn enable_point_in_time_recovery(&self, name: &str) -> Result<(), ControlPlaneError> {
        self.inner.enable_point_in_time_recovery(name).await
    }

    async fn configure(&self, change: &SettingChange) -> Result<(), ControlPlaneError> {
        self.inner.configure(change).await
    }

    async fn export_table(&self, request: &ExportRequest) -> Result<String, ControlPlaneError> {
        self.inner.export_table(request).await
    }

    async fn delete_table(&self, name: &str) -> Result<(), ControlPlaneError> {
        self.inner.delete_table(name).await
    }

    // The resource-based policy calls seal the few tables a run deletes: no pacing needed.
    async fn get_resource_policy(&self, table: &str, arn: &str) -> Result<ResourcePolicy, ControlPlaneError> {
        self.inner.get_resource_policy(table, arn).await
    }

    async fn put_resource_policy(
        &self,
        table: &str,
        arn: &str,
        document: &str,
        expected_revision: &str,
    ) -> Result<String, ControlPlaneError> {
        self.inner
            .put_resource_policy(table, arn, document, expected_revision)
            .await
    }

    async fn delete_resource_policy(
        &self,
        table: &str,
        arn: &str,
        expected_revision: &str,
    ) -> Result<(), ControlPlaneError> {
        self.inner
            .delete_resource_policy(table, arn, expected_revision)
            .await
    }

    // A destination is read and enabled for the few tables create_new keeps ready and the few
    // a run deletes: no pacing needed.
    async fn describe_kinesis_destinations(
        &self,
        table: &str,
    ) -> Result<Vec<ObservedDestination>, ControlPlaneError> {
        self.inner.describe_kinesis_destinations(table).await
    }

    async fn enable_kinesis_destination(
        &self,
        change: &DestinationChange,
    ) -> Result<DestinationStatus, ControlPlaneError> {
        self.inner.enable_kinesis_destination(change).await
    }

    async fn import_table(&self, request: &ImportRequest) -> Result<String, ControlPlaneError> {
        self.inner.import_table(request).await
    }

    async fn describe_import(&self, table: &str, arn: &str) -> Result<ImportState, ControlPlaneError> {
        self.inner.describe_import(table, arn).await
    }
}

impl<C: Clock + Send> Clock for Paced<C> {
    fn now(&self) -> std::time::Instant {
        self.inner.now()
    }

    async fn sleep(&self, duration: std::time::Duration) {
        self.inner.sleep(duration).await
    }
}

impl<C: Scaling + Send> Scaling for Paced<C> {
    // Application Auto Scaling has its own rates, far above a run's few calls; the SDK's
    // retries cover its throttling.
    async fn describe_scaling(
        &self,
        tables: &[String],
    ) -> Result<Vec<ObservedScalableTarget>, ControlPlaneError> {
        self.inner.describe_scaling(tables).await
    }

    async fn register_scaling(&self, change: &RegisterScaling) -> Result<Vec<String>, ControlPlaneError> {
        self.inner.register_scaling(change).await
    }

    async fn deregister_scaling(&self, change: &DeregisterScaling) -> Result<Vec<String>, ControlPlaneError> {
        self.inner.deregister_scaling(change).await
    }
}

impl<C: Mappings + Send> Mappings for Paced<C> {
    async fn list_event_source_mappings(
        &self,
        table: &str,
        stream_arn: &str,
    ) -> Result<Vec<ObservedMapping>, ControlPlaneError> {
        self.lambda.until_ready().await;
        self.inner.list_event_source_mappings(table, stream_arn).await
    }

    async fn create_event_source_mapping(
        &self,
        change: &MappingChange,
        stream_arn: &str,
    ) -> Result<ObservedMapping, ControlPlaneError> {
        self.lambda.until_ready().await;
        self.inner.create_event_source_mapping(change, stream_arn).await
    }

    async fn update_event_source_mapping(&self, update: &MappingUpdate) -> Result<(), ControlPlaneError> {
        self.lambda.until_ready().await;
        self.inner.update_event_source_mapping(update).await
    }

    async fn delete_event_source_mapping(&self, removal: &MappingRemoval) -> Result<(), ControlPlaneError> {
        self.lambda.until_ready().await;
        self.inner.delete_event_source_mapping(removal).await
    }
}

impl<C: Archives + Send> Archives for Paced<C> {
    async fn prove_archive(
        &self,
        table: &str,
        export: &str,
        bucket_owner: &str,
    ) -> Result<ArchiveProof, ControlPlaneError> {
        self.inner.prove_archive(table, export, bucket_owner).await
    }

    async fn recheck_archive(
        &self,
        table: &str,
        record: &ArchiveRecord,
        bucket_owner: &str,
    ) -> Result<ArchiveProof, ControlPlaneError> {
        self.inner.recheck_archive(table, record, bucket_owner).await
    }
}

/// The ledger's item calls are DynamoDB's data plane: not paced.
impl<C: Ledger + Send> Ledger for Paced<C> {
    async fn read_ledger(
        &self,
        ledger: &str,
        family: &str,
    ) -> Result<Option<Vec<StoredRecord>>, ControlPlaneError> {
        self.inner.read_ledger(ledger, family).await
    }

    async fn create_ledger(&self, ledger: &str, family: &str) -> Result<(), ControlPlaneError> {
        self.inner.create_ledger(ledger, family).await
    }

    async fn put_record(
        &self,
        ledger: &str,
        family: &str,
        record: &StoredRecord,
        expect: Expect,
    ) -> Result<(), ControlPlaneError> {
        self.inner.put_record(ledger, family, record, expect).await
    }

    async fn delete_record(
        &self,
        ledger: &str,
        family: &str,
        key: &str,
        expect: Expect,
    ) -> Result<(), ControlPlaneError> {
        self.inner.delete_record(ledger, family, key, expect).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half of AWS's one-second bucket goes out at once, the next call waits: the other half is
    /// headroom for calls that arrive bunched.
    #[test]
    fn half_a_second_of_calls_goes_out_at_once_then_the_rate() {
        let paced = Paced::new(
            (),
            Rates {
                list_tags_of_resource: 10,
                tag_resource: 5,
            },
        );
        let sent =
            |limiter: &DefaultDirectRateLimiter| (0..20).take_while(|_| limiter.check().is_ok()).count();
        assert_eq!(sent(&paced.list_tags), 5);
        assert_eq!(sent(&paced.tag_writes), 2);
    }

    /// A policy's lower rate lowers the burst with it, never below one call.
    #[test]
    fn a_lower_rate_is_a_smaller_burst() {
        let paced = Paced::new(
            (),
            Rates {
                list_tags_of_resource: 4,
                tag_resource: 1,
            },
        );
        assert!(paced
            .list_tags
            .check_n(NonZeroU32::new(2).unwrap())
            .unwrap()
            .is_ok());
        assert!(paced.list_tags.check().is_err());
        assert!(paced.tag_writes.check().is_ok());
        assert!(paced.tag_writes.check().is_err());
    }
}
