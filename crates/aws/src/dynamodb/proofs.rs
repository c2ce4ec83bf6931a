//! [`Archives`] on the SDK: DescribeExport says where an export is, and the proof reads it in
//! the archive store ([`super::archives`]).

use aws_sdk_dynamodb::types::ExportStatus as SdkExportStatus;

use super::archives::store;
use super::errors::classify;
use super::DynamoDb;
use ddb_rollover::control::{prove, recheck};
use ddb_rollover::control::{Archives, ControlPlaneError};
use ddb_rollover::ledger::ArchiveRecord;
use ddb_rollover::table::{ArchiveProof, ExportLocation};

impl Archives for DynamoDb {
    async fn prove_archive(
        &self,
        table: &str,
        export: &str,
        bucket_owner: &str,
    ) -> Result<ArchiveProof, ControlPlaneError> {
        let Some(s3) = &self.archives else {
            return Err(ControlPlaneError::unsupported(
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
            .map_err(|e| self.server.judge(classify("DescribeExport", table, &e, None)))?;
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
            bucket_owner: bucket_owner.to_string(),
        };
        prove(&store(s3), &location)
            .await
            .map_err(|failed| failed.on(table))
    }

    async fn recheck_archive(
        &self,
        table: &str,
        record: &ArchiveRecord,
        bucket_owner: &str,
    ) -> Result<ArchiveProof, ControlPlaneError> {
        let s3 = self.archives.as_ref().ok_or_else(|| {
            ControlPlaneError::unsupported("GetObject", table, "no S3 client: archives cannot be checked")
        })?;
        Ok(recheck(&store(s3), record, bucket_owner).await)
    }
}
