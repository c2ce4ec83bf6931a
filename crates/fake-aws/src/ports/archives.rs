//! [`Archives`] on the fake: what the fake's S3 holds of an export, read and proven by the
//! engine's own proof over [`crate::s3`].

use ddb_rollover::run::archive::{archives_under, prove, Bucket};
use ddb_rollover::run::control::{Archives, ControlPlaneError, ErrorKind};
use ddb_rollover::table::archive::{ArchiveProof, ExportLocation};
use ddb_rollover::table::ExportStatus;

use crate::errors::{error, export_not_found};
use crate::s3;
use crate::FakeAws;

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
            (location, s3::FakeS3::of(&world))
        };
        Ok(prove(&store, &location).await)
    }

    async fn find_archives(
        &self,
        table: &str,
        bucket: Bucket<'_>,
        prefix: &str,
    ) -> Result<Vec<(ExportLocation, ArchiveProof)>, ControlPlaneError> {
        let store = s3::FakeS3::of(&self.lock());
        archives_under(&store, table, bucket, prefix)
            .await
            .map_err(|message| error(ErrorKind::Other, "ListObjectsV2", table, message))
    }
}
