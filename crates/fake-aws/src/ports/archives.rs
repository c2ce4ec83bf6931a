//! [`Archives`] on the fake: what the fake's S3 holds of an export, read and proven by the
//! engine's own proof over [`crate::s3`].

use ddb_rollover::control::{prove, recheck};
use ddb_rollover::control::{Archives, ControlPlaneError};
use ddb_rollover::ledger::ArchiveRecord;
use ddb_rollover::table::ExportStatus;
use ddb_rollover::table::{ArchiveProof, ExportLocation};

use crate::account::FakeAws;
use crate::errors::export_not_found;

impl Archives for FakeAws {
    async fn prove_archive(
        &self,
        table: &str,
        export: &str,
        bucket_owner: &str,
    ) -> Result<ArchiveProof, ControlPlaneError> {
        let (location, store) = {
            let world = self.lock();
            let found = world
                .exports
                .get(export)
                .ok_or_else(|| export_not_found(table, export))?;
            if found.status != ExportStatus::Completed {
                return Ok(ArchiveProof::Unproven {
                    export: export.to_string(),
                    reason: format!("the export is {:?}", found.status),
                });
            }
            let location = ExportLocation {
                export: export.to_string(),
                table: table.to_string(),
                bucket: found.bucket.clone(),
                manifest: Some(found.manifest_key()),
                items: Some(found.items()),
                bucket_owner: bucket_owner.to_string(),
            };
            (location, world.s3_snapshot())
        };
        prove(&store, &location).await.map_err(|failed| failed.on(table))
    }

    async fn recheck_archive(
        &self,
        _table: &str,
        record: &ArchiveRecord,
        bucket_owner: &str,
    ) -> Result<ArchiveProof, ControlPlaneError> {
        let store = self.lock().s3_snapshot();
        Ok(recheck(&store, record, bucket_owner).await)
    }
}
