//! The archive port: what S3 holds of a table's exports. Retention deletes a table only after
//! its archive is proven here, and `restore` checks the one its receipt recorded; without an S3 reader
//! both answer `Unsupported`, so nothing archived is deleted.

use std::future::Future;

use super::ControlPlaneError;
use crate::table::archive::ArchiveProof;
use crate::table::evidence::ArchiveRecord;

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
        let error =
            ControlPlaneError::unsupported("GetObject", table, "no S3 reader: archives cannot be checked");
        async { Err(error) }
    }

    /// The archive a deletion's receipt recorded, checked again in S3 exactly as recorded,
    /// every read expecting `bucket_owner` to own the bucket
    /// ([`crate::run::archive::recheck`]): what `restore` imports. `Unsupported` by default.
    fn recheck_archive(
        &self,
        table: &str,
        record: &ArchiveRecord,
        bucket_owner: &str,
    ) -> impl Future<Output = Result<ArchiveProof, ControlPlaneError>> + Send {
        let _ = (record, bucket_owner);
        let error =
            ControlPlaneError::unsupported("GetObject", table, "no S3 reader: archives cannot be checked");
        async { Err(error) }
    }
}
