//! The archive port: what S3 holds of a table's exports. Retention deletes a table only after
//! its archive is proven here, and `restore` finds the archive to import; without an S3 reader
//! both answer `Unsupported`, so nothing archived is deleted.

use std::future::Future;

use super::{unsupported, ControlPlaneError};
use crate::run::archive::Bucket;
use crate::table::archive::{ArchiveProof, ExportLocation};

/// The exports S3 holds, read and proven (S3's objects themselves are
/// [`crate::run::archive::ArchiveStore`]'s).
pub trait Archives: Sync {
    /// What S3 holds for the COMPLETED export `export` of `table`: its manifest, every data
    /// file the manifest lists, and item counts that agree ([`crate::run::archive::prove`]),
    /// read before retention deletes the table, each read expecting `bucket_owner` to own the
    /// bucket. `Unsupported` by default (no S3 reader), and then no archived table is deleted.
    fn prove_archive(
        &self,
        table: &str,
        export: &str,
        bucket_owner: &str,
    ) -> impl Future<Output = Result<ArchiveProof, ControlPlaneError>> + Send {
        let _ = (export, bucket_owner);
        let error = unsupported("GetObject", table, "no S3 reader: archives cannot be checked");
        async { Err(error) }
    }

    /// Every export under `prefix` in `bucket` (each `manifest-summary.json`), with what S3
    /// proves of it, every read expecting `bucket.owner` to own it: `restore` imports the newest
    /// proven one. `Unsupported` by default.
    fn find_archives(
        &self,
        table: &str,
        bucket: Bucket<'_>,
        prefix: &str,
    ) -> impl Future<Output = Result<Vec<(ExportLocation, ArchiveProof)>, ControlPlaneError>> + Send {
        let _ = (bucket, prefix);
        let error = unsupported("ListObjectsV2", table, "no S3 reader: archives cannot be found");
        async { Err(error) }
    }
}
