//! An export laid out in S3 as AWS documents it (DynamoDB developer guide, "DynamoDB table
//! export output format"), for [`crate::Proxy::export_layout`]: moto writes only an export's
//! data file, under `{S3Prefix}/AWSDynamoDB/{uuid}/data/`, and its DescribeExport names no
//! `ExportManifest`. The proxy adds, beside that `data/` folder, the two manifests a reader of
//! a real export finds: `manifest-summary.json` (the export's and the table's ARNs, bucket,
//! prefix, item count, the key of the file list, the format) and `manifest-files.json` (one
//! line per data file: its item count, its MD5 in base64 (`md5Checksum`), S3's ETag (hex) and
//! key), and an empty `_started`. moto uploads the data file in one part, so its ETag is the
//! MD5 of the bytes, as a single-part upload's is on S3. The `.checksum` files are left out:
//! nothing here or in ddb-rollover reads them.

use serde_json::json;

/// AWS's form of a moto export ARN (`arn:…:table/{table ARN}/import/{id}` to
/// `{table ARN}/export/{id}`); any other ARN as it is.
pub fn aws_export_arn(arn: &str) -> String {
    let Some((_, rest)) = arn.split_once(":table/arn:") else {
        return arn.to_string();
    };
    match rest.rsplit_once("/import/") {
        Some((table, id)) => format!("arn:{table}/export/{id}"),
        None => arn.to_string(),
    }
}

/// moto's form of an AWS export ARN (the inverse of [`aws_export_arn`]).
pub fn moto_export_arn(arn: &str) -> String {
    if arn.contains(":table/arn:") {
        return arn.to_string();
    }
    let Some((table, id)) = arn.rsplit_once("/export/") else {
        return arn.to_string();
    };
    let Some((scope, _)) = table.split_once(":table/") else {
        return arn.to_string();
    };
    format!("{scope}:table/{table}/import/{id}")
}

/// A JSON body with every `ExportArn` field (at any depth) mapped by `map`; other bodies as
/// they are.
pub fn rewrite_export_arns(body: &[u8], map: fn(&str) -> String) -> hyper::body::Bytes {
    fn walk(value: &mut serde_json::Value, map: fn(&str) -> String) {
        match value {
            serde_json::Value::Object(fields) => {
                for (name, field) in fields.iter_mut() {
                    match field {
                        serde_json::Value::String(text) if name == "ExportArn" => *text = map(text),
                        _ => walk(field, map),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| walk(v, map)),
            _ => {}
        }
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(mut value) => {
            walk(&mut value, map);
            hyper::body::Bytes::from(value.to_string())
        }
        Err(_) => hyper::body::Bytes::copy_from_slice(body),
    }
}

/// The folder of an export (`{prefix}/AWSDynamoDB/{id}`) a data file's key belongs to.
pub fn export_directory(data_key: &str) -> Option<&str> {
    let (directory, _) = data_key.split_once("/data/")?;
    directory.contains("AWSDynamoDB/").then_some(directory)
}

/// The key DescribeExport's `ExportManifest` names.
pub fn manifest_key(directory: &str) -> String {
    format!("{directory}/manifest-summary.json")
}

/// The objects to write for a COMPLETED export whose data files (key, ETag) sit in `directory`.
/// Each file holds one item per line; `counts` gives them in the same order.
pub fn manifests(
    export_arn: &str,
    bucket: &str,
    prefix: Option<&str>,
    directory: &str,
    files: &[(String, String, u64)],
    export_time: chrono::DateTime<chrono::Utc>,
) -> Vec<(String, Vec<u8>)> {
    let files_key = format!("{directory}/manifest-files.json");
    let lines: String = files
        .iter()
        .map(|(key, etag, items)| {
            let etag = etag.trim_matches('"');
            format!(
                "{}\n",
                json!({ "itemCount": items, "md5Checksum": md5_checksum(etag), "etag": etag, "dataFileS3Key": key })
            )
        })
        .collect();
    let items: u64 = files.iter().map(|(_, _, n)| n).sum();
    let table_arn = export_arn.split("/export/").next().unwrap_or_default();
    let summary = json!({
        "version": "2020-06-30",
        "exportArn": export_arn,
        "tableArn": table_arn,
        "exportTime": export_time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "s3Bucket": bucket,
        "s3Prefix": prefix,
        "s3SseAlgorithm": "AES256",
        "manifestFilesS3Key": files_key,
        "itemCount": items,
        "outputFormat": "DYNAMODB_JSON",
    });
    vec![
        (format!("{directory}/_started"), Vec::new()),
        (files_key, lines.into_bytes()),
        (manifest_key(directory), summary.to_string().into_bytes()),
    ]
}

/// The MD5 a single-part ETag (32 hex digits) spells, base64-encoded as the manifest writes it;
/// `None` for a multipart ETag.
fn md5_checksum(etag: &str) -> Option<String> {
    if etag.len() != 32 || !etag.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&etag[2 * i..2 * i + 2], 16).expect("hex digits"))
        .collect();
    Some(aws_smithy_types::base64::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_arns_go_between_motos_form_and_awss() {
        let moto = "arn:aws:dynamodb:us-east-1:1:table/arn:aws:dynamodb:us-east-1:1:table/t/import/abc";
        let aws = "arn:aws:dynamodb:us-east-1:1:table/t/export/abc";
        assert_eq!(aws_export_arn(moto), aws);
        assert_eq!(moto_export_arn(aws), moto);
        assert_eq!(aws_export_arn(aws), aws);
        let body = rewrite_export_arns(
            format!("{{\"ExportSummaries\":[{{\"ExportArn\":\"{moto}\"}}]}}").as_bytes(),
            aws_export_arn,
        );
        assert!(String::from_utf8_lossy(&body).contains(aws));
    }

    #[test]
    fn the_directory_is_the_folder_above_data() {
        assert_eq!(
            export_directory("p/t//AWSDynamoDB/abc/data/def.gz"),
            Some("p/t//AWSDynamoDB/abc")
        );
        assert_eq!(export_directory("p/t/other/data/def.gz"), None);
        assert_eq!(export_directory("p/t/AWSDynamoDB/abc/manifest-files.json"), None);
    }

    #[test]
    fn manifests_list_every_file_and_the_sum_of_their_items() {
        let files = [
            ("d/AWSDynamoDB/1/data/a.gz".to_string(), "\"e1\"".to_string(), 2),
            (
                "d/AWSDynamoDB/1/data/b.gz".to_string(),
                "\"d41d8cd98f00b204e9800998ecf8427e\"".to_string(),
                3,
            ),
        ];
        let at = chrono::DateTime::from_timestamp_millis(1_538_740_800_123).unwrap();
        let objects = manifests("arn:t/export/1", "b", Some("d"), "d/AWSDynamoDB/1", &files, at);
        let summary: serde_json::Value = serde_json::from_slice(&objects[2].1).unwrap();
        assert_eq!(objects[2].0, "d/AWSDynamoDB/1/manifest-summary.json");
        assert_eq!(summary["itemCount"], 5);
        assert_eq!(summary["tableArn"], "arn:t");
        assert_eq!(summary["exportTime"], "2018-10-05T12:00:00.123Z");
        assert_eq!(
            summary["manifestFilesS3Key"],
            "d/AWSDynamoDB/1/manifest-files.json"
        );
        let lines = String::from_utf8(objects[1].1.clone()).unwrap();
        assert_eq!(lines.lines().count(), 2);
        assert!(
            lines.contains("\"dataFileS3Key\":\"d/AWSDynamoDB/1/data/b.gz\"")
                && lines.contains("\"etag\":\"d41d8cd98f00b204e9800998ecf8427e\"")
                && lines.contains("\"md5Checksum\":\"1B2M2Y8AsgTpgAmY7PhCfg==\"")
        );
    }
}
