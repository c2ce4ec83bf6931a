//! An export laid out in S3 as AWS documents it (DynamoDB Developer Guide, "DynamoDB table
//! export output format"): its ARN (`{table ARN}/export/{id}`), its folder
//! (`{prefix}/AWSDynamoDB/{id}/`) with `data/`, `_started`, `manifest-files.json` (one line
//! per data file: `itemCount`, `md5Checksum` in base64, `etag` in hex, `dataFileS3Key`) and
//! `manifest-summary.json` (the export's and the table's ARNs, the time, the item count, the
//! key of the file list, the format). The one writer of this layout: fake-aws's exports and
//! testkit's proxy (beside moto's data file) both use it.

use chrono::{DateTime, SecondsFormat, Utc};

/// The folder every export writes under its prefix.
pub const FOLDER: &str = "AWSDynamoDB";

/// An export's ARN: `{table ARN}/export/{id}`.
pub fn export_arn(table_arn: &str, id: &str) -> String {
    format!("{table_arn}/export/{id}")
}

/// The table ARN an export's ARN (AWS's form) begins with.
pub fn table_arn_of(export_arn: &str) -> &str {
    export_arn.split("/export/").next().unwrap_or_default()
}

/// The folder of the export `id` under `prefix`: `{prefix}/AWSDynamoDB/{id}`.
pub fn directory(prefix: &str, id: &str) -> String {
    format!("{}/{FOLDER}/{id}", prefix.trim_end_matches('/'))
}

/// The key of the data file `name` of the export in `directory`.
pub fn data_key(directory: &str, name: &str) -> String {
    format!("{directory}/data/{name}")
}

/// The folder of an export (`{prefix}/AWSDynamoDB/{id}`) a data file's key belongs to.
pub fn export_directory(data_key: &str) -> Option<&str> {
    let (directory, _) = data_key.split_once("/data/")?;
    directory.contains(&format!("{FOLDER}/")).then_some(directory)
}

/// The key of the export's summary, which DescribeExport's `ExportManifest` names.
pub fn summary_key(directory: &str) -> String {
    format!("{directory}/manifest-summary.json")
}

/// The key of the export's list of data files.
pub fn files_key(directory: &str) -> String {
    format!("{directory}/manifest-files.json")
}

/// The empty object an export writes first in its folder.
pub fn started_key(directory: &str) -> String {
    format!("{directory}/_started")
}

/// One data file of an export, as its manifest lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataFile<'a> {
    /// Its S3 key.
    pub key: &'a str,
    /// Its ETag, in hex (quoted or not; a single-part upload's is the MD5 of its bytes).
    pub etag: &'a str,
    /// The items it holds.
    pub items: u64,
}

/// Where an export was asked to write, as its summary names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location<'a> {
    /// The bucket.
    pub bucket: &'a str,
    /// The prefix, if the request gave one.
    pub prefix: Option<&'a str>,
}

/// The two manifest objects AWS writes beside a COMPLETED export's `data/` folder, by key:
/// `manifest-files.json`, then `manifest-summary.json` (with the bucket and prefix when
/// `location` gives them).
pub fn manifests(
    export_arn: &str,
    table_arn: &str,
    location: Option<Location<'_>>,
    directory: &str,
    files: &[DataFile<'_>],
    export_time: DateTime<Utc>,
) -> [(String, Vec<u8>); 2] {
    let files_key = files_key(directory);
    let lines: String = files
        .iter()
        .map(|file| {
            let etag = file.etag.trim_matches('"');
            let md5 = md5_of_etag(etag).map_or_else(|| "null".to_owned(), |md5| json_text(&md5));
            format!(
                "{{\"itemCount\":{},\"md5Checksum\":{md5},\"etag\":{},\"dataFileS3Key\":{}}}\n",
                file.items,
                json_text(etag),
                json_text(file.key)
            )
        })
        .collect();
    let items: u64 = files.iter().map(|file| file.items).sum();
    let location = match location {
        None => String::new(),
        Some(Location { bucket, prefix }) => format!(
            ",\"s3Bucket\":{},\"s3Prefix\":{},\"s3SseAlgorithm\":\"AES256\"",
            json_text(bucket),
            prefix.map_or_else(|| "null".to_owned(), json_text)
        ),
    };
    let summary = format!(
        "{{\"version\":\"2020-06-30\",\"exportArn\":{},\"tableArn\":{},\"exportTime\":\"{}\"{location},\"itemCount\":{items},\"manifestFilesS3Key\":{},\"outputFormat\":\"DYNAMODB_JSON\"}}",
        json_text(export_arn),
        json_text(table_arn),
        export_time.to_rfc3339_opts(SecondsFormat::Millis, true),
        json_text(&files_key),
    );
    [
        (files_key, lines.into_bytes()),
        (summary_key(directory), summary.into_bytes()),
    ]
}

/// The MD5 a single-part ETag (32 hex digits) spells, in base64 as the manifest writes it;
/// `None` for a multipart ETag.
fn md5_of_etag(etag: &str) -> Option<String> {
    if etag.len() != 32 || !etag.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..16)
        .map(|i| u8::from_str_radix(&etag[2 * i..2 * i + 2], 16).ok())
        .collect();
    Some(base64(&bytes?))
}

/// `text` as a JSON string, quotes included.
fn json_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Standard base64 with padding, as the manifest writes an MD5.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_list_every_file_and_the_sum_of_their_items() {
        let files = [
            DataFile {
                key: "d/AWSDynamoDB/1/data/a.gz",
                etag: "\"e1\"",
                items: 2,
            },
            DataFile {
                key: "d/AWSDynamoDB/1/data/b.gz",
                etag: "\"d41d8cd98f00b204e9800998ecf8427e\"",
                items: 3,
            },
        ];
        let at = DateTime::from_timestamp_millis(1_538_740_800_123).unwrap();
        let location = Some(Location {
            bucket: "b",
            prefix: Some("d"),
        });
        let objects = manifests("arn:t/export/1", "arn:t", location, "d/AWSDynamoDB/1", &files, at);
        let summary = String::from_utf8(objects[1].1.clone()).unwrap();
        assert_eq!(objects[1].0, "d/AWSDynamoDB/1/manifest-summary.json");
        for field in [
            "\"itemCount\":5",
            "\"tableArn\":\"arn:t\"",
            "\"exportTime\":\"2018-10-05T12:00:00.123Z\"",
            "\"manifestFilesS3Key\":\"d/AWSDynamoDB/1/manifest-files.json\"",
            "\"s3Bucket\":\"b\"",
            "\"s3Prefix\":\"d\"",
        ] {
            assert!(summary.contains(field), "{field} not in {summary}");
        }
        let lines = String::from_utf8(objects[0].1.clone()).unwrap();
        assert_eq!(lines.lines().count(), 2);
        assert!(
            lines.contains("\"dataFileS3Key\":\"d/AWSDynamoDB/1/data/b.gz\"")
                && lines.contains("\"etag\":\"d41d8cd98f00b204e9800998ecf8427e\"")
                && lines.contains("\"md5Checksum\":\"1B2M2Y8AsgTpgAmY7PhCfg==\"")
                && lines.contains("\"md5Checksum\":null"),
            "{lines}"
        );
        assert_eq!(json_text("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }

    #[test]
    fn base64_pads_as_the_standard_does() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn the_directory_is_the_folder_above_data() {
        assert_eq!(
            export_directory("p/t//AWSDynamoDB/abc/data/def.gz"),
            Some("p/t//AWSDynamoDB/abc")
        );
        assert_eq!(export_directory("p/t/other/data/def.gz"), None);
        assert_eq!(export_directory("p/t/AWSDynamoDB/abc/manifest-files.json"), None);
        assert_eq!(directory("p/", "1"), "p/AWSDynamoDB/1");
        assert_eq!(export_arn("arn:t", "1"), "arn:t/export/1");
        assert_eq!(table_arn_of("arn:t/export/1"), "arn:t");
    }
}
