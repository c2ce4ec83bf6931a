//! A [`ControlPlane`](crate::run::control::ControlPlane) that paces the calls AWS rate-limits per account (ListTagsOfResource,
//! TagResource, and Lambda's control plane), so a run over thousands of tables waits its turn
//! instead of collecting ThrottlingExceptions until the SDK's retries run out. Every other call
//! passes straight through: DynamoDB's general control-plane limit (2,500 requests per second)
//! is far above what a run sends.
//!
//! The pace is measured and waited on the control plane's own [`Clock`]: the wall clock for the
//! SDK's, the fake time of an in-memory account, so a test of a catch-up at AWS's rates runs in
//! virtual time.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

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
    list_tags: Bucket,
    tag_writes: Bucket,
    lambda: Bucket,
}

/// Lambda's control-plane quota: 15 requests per second for the account and Region across all
/// its control-plane calls (event source mappings among them), shared with every other caller.
const LAMBDA_CONTROL_PLANE_PER_SECOND: u32 = 15;

/// One rate: governor's token bucket, measured on the control plane's own [`Clock`] (the time
/// is handed to governor's clock just before each check, and the wait is slept on the port).
#[derive(Debug)]
struct Bucket {
    quota: Quota,
    /// Made at the first call, so governor counts from the port's time, not the wall clock's
    /// (an in-memory control plane's instants may lie before this process started).
    limiter: OnceLock<RateLimiter<NotKeyed, InMemoryState, PortTime>>,
    time: PortTime,
}

/// governor's clock: the instant the control plane's [`Clock`] said last.
#[derive(Clone, Debug)]
struct PortTime(Arc<Mutex<Option<Instant>>>);

impl PortTime {
    /// Moves to `now`, never back (several calls wait at once): the instant governor reads.
    fn advance(&self, now: Instant) -> Instant {
        let mut time = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let now = time.map_or(now, |was| was.max(now));
        *time = Some(now);
        now
    }
}

impl governor::clock::Clock for PortTime {
    type Instant = Instant;

    fn now(&self) -> Instant {
        let time = self.0.lock().unwrap_or_else(|e| e.into_inner());
        time.expect("set before governor's first check")
    }
}

impl Bucket {
    /// AWS's token bucket holds one second's worth. The pacer's holds half of it: a steady
    /// run's few tag calls go out without waiting, a catch-up over thousands of tables settles
    /// at the rate, and the other half is headroom for calls that leave paced but arrive
    /// bunched (a busy client, the network), which AWS would throttle. Another caller spending
    /// the same budget meets a throttle, which the SDK's retries absorb.
    fn per_second(per_second: u32) -> Bucket {
        let per_second = NonZeroU32::new(per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(per_second.get() / 2).unwrap_or(NonZeroU32::MIN);
        Bucket {
            quota: Quota::per_second(per_second).allow_burst(burst),
            limiter: OnceLock::new(),
            time: PortTime(Arc::new(Mutex::new(None))),
        }
    }

    /// Takes a call's place at `now` if governor lets it go (zero), else says how long until
    /// it would.
    fn take(&self, now: Instant) -> Duration {
        let now = self.time.advance(now);
        let limiter = self
            .limiter
            .get_or_init(|| RateLimiter::direct_with_clock(self.quota, self.time.clone()));
        match limiter.check() {
            Ok(()) => Duration::ZERO,
            Err(not_until) => not_until.wait_time_from(now),
        }
    }

    /// Waits on `clock` until governor lets the call go.
    async fn until_ready(&self, clock: &impl Clock) {
        loop {
            let wait = self.take(clock.now());
            if wait.is_zero() {
                return;
            }
            clock.sleep(wait).await;
        }
    }
}

impl<C> Paced<C> {
    /// `inner`, its tag calls paced at `rates`.
    pub fn new(inner: C, rates: Rates) -> Self {
        Paced {
            inner,
            list_tags: Bucket::per_second(rates.list_tags_of_resource),
            tag_writes: Bucket::per_second(rates.tag_resource),
            lambda: Bucket::per_second(LAMBDA_CONTROL_PLANE_PER_SECOND),
        }
    }

    /// The control plane the calls go to.
    pub fn inner(&self) -> &C {
        &self.inner
    }
}

impl<C: Tables + Clock + Send> Tables for Paced<C> {
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
        self.list_tags.until_ready(&self.inner).await;
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
        self.tag_writes.until_ready(&self.inner).await;
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

impl<C: Mappings + Clock + Send> Mappings for Paced<C> {
    async fn list_event_source_mappings(
        &self,
        table: &str,
        stream_arn: &str,
    ) -> Result<Vec<ObservedMapping>, ControlPlaneError> {
        self.lambda.until_ready(&self.inner).await;
        self.inner.list_event_source_mappings(table, stream_arn).await
    }

    async fn create_event_source_mapping(
        &self,
        change: &MappingChange,
        stream_arn: &str,
    ) -> Result<ObservedMapping, ControlPlaneError> {
        self.lambda.until_ready(&self.inner).await;
        self.inner.create_event_source_mapping(change, stream_arn).await
    }

    async fn update_event_source_mapping(&self, update: &MappingUpdate) -> Result<(), ControlPlaneError> {
        self.lambda.until_ready(&self.inner).await;
        self.inner.update_event_source_mapping(update).await
    }

    async fn delete_event_source_mapping(&self, removal: &MappingRemoval) -> Result<(), ControlPlaneError> {
        self.lambda.until_ready(&self.inner).await;
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

    /// How many calls at one instant go out without waiting.
    fn sent_at_once(bucket: &Bucket) -> usize {
        sent_at(bucket, Instant::now())
    }

    fn sent_at(bucket: &Bucket, now: Instant) -> usize {
        (0..20).take_while(|_| bucket.take(now).is_zero()).count()
    }

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
        assert_eq!(sent_at_once(&paced.list_tags), 5);
        assert_eq!(sent_at_once(&paced.tag_writes), 2);
        // Then one call every tenth of a second: the sixth waits one interval.
        let now = Instant::now();
        let bucket = Bucket::per_second(10);
        let waits: Vec<Duration> = (0..6).map(|_| bucket.take(now)).collect();
        assert_eq!(waits[5], Duration::from_millis(100));
        assert!(bucket.take(now + Duration::from_millis(100)).is_zero());
        // Once the rate has caught up with the calls sent, a burst goes out at once again.
        assert_eq!(sent_at(&bucket, now + Duration::from_millis(1_200)), 5);
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
        assert_eq!(sent_at_once(&paced.list_tags), 2);
        assert_eq!(sent_at_once(&paced.tag_writes), 1);
    }
}
