//! [`Archives`] on the store the control plane finds and proves archives in: S3 where the `s3`
//! feature links it; without it (create_new) there is no S3 client to give, and [`NoS3`] can
//! never be made.

use aws_sdk_dynamodb::types::ExportStatus as SdkExportStatus;

use super::errors::classify;
use super::DynamoDb;
use crate::run::archive::{archives_under, prove};
use crate::run::control::{unsupported, Archives, ControlPlaneError, ErrorKind};
use crate::table::archive::{ArchiveProof, ExportLocation};

#[cfg(feature = "s3")]
pub(crate) use s3::{store, S3};

#[cfg(not(feature = "s3"))]
pub(crate) use none::{store, NoS3 as S3};

#[cfg(feature = "s3")]
mod s3 {
    use crate::aws::archive::S3Store;

    pub(crate) type S3 = aws_sdk_s3::Client;

    pub(crate) fn store(s3: &S3) -> S3Store<'_> {
        S3Store(s3)
    }
}

#[cfg(not(feature = "s3"))]
mod none {
    use crate::run::archive::ArchiveStore;
    use crate::table::archive::ObjectHead;

    /// No S3 client is linked: a value of this type cannot exist.
    #[derive(Clone, Debug)]
    pub(crate) enum NoS3 {}

    /// The store over a client that cannot exist (a borrow, so the callers' code after it
    /// stays reachable to the compiler, as it is with S3).
    pub(crate) struct NoStore<'a>(&'a NoS3);

    pub(crate) fn store(s3: &NoS3) -> NoStore<'_> {
        NoStore(s3)
    }

    impl ArchiveStore for NoStore<'_> {
        async fn get(&self, _: &str, _: &str) -> Result<Option<Vec<u8>>, String> {
            match *self.0 {}
        }
        async fn list(&self, _: &str, _: &str) -> Result<Vec<String>, String> {
            match *self.0 {}
        }
        async fn head(&self, _: &str, _: &str) -> Result<Option<ObjectHead>, String> {
            match *self.0 {}
        }
    }
}

impl Archives for DynamoDb {
    async fn prove_archive(&self, table: &str, export: &str) -> Result<ArchiveProof, ControlPlaneError> {
        let Some(s3) = &self.archives else {
            return Err(unsupported(
                "GetObject",
                table,
                "no S3 client: archives cannot be checked",
            ));
        };
        let output = self
            .client
            .describe_export()
            .export_arn(export)
            .send()
            .await
            .map_err(|e| classify("DescribeExport", table, &e, None))?;
        let Some(description) = output.export_description() else {
            return Ok(ArchiveProof::Unproven {
                export: export.to_string(),
                reason: "DescribeExport gave no description".into(),
            });
        };
        if description.export_status() != Some(&SdkExportStatus::Completed) {
            return Ok(ArchiveProof::Unproven {
                export: export.to_string(),
                reason: format!(
                    "the export is {}",
                    description
                        .export_status()
                        .map_or("of unknown status", |s| s.as_str())
                ),
            });
        }
        let location = ExportLocation {
            export: export.to_string(),
            table: table.to_string(),
            bucket: description.s3_bucket().unwrap_or_default().to_string(),
            manifest: description.export_manifest().map(str::to_owned),
            items: description.item_count().and_then(|n| u64::try_from(n).ok()),
        };
        Ok(prove(&store(s3), &location).await)
    }

    async fn find_archives(
        &self,
        table: &str,
        bucket: &str,
        prefix: &str,
    ) -> Result<Vec<(ExportLocation, ArchiveProof)>, ControlPlaneError> {
        let s3 = self
            .archives
            .as_ref()
            .ok_or_else(|| unsupported("ListObjectsV2", table, "no S3 client: archives cannot be found"))?;
        archives_under(&store(s3), table, bucket, prefix)
            .await
            .map_err(|message| ControlPlaneError {
                kind: ErrorKind::Other,
                operation: "ListObjectsV2",
                table: table.to_string(),
                message,
            })
    }
}
