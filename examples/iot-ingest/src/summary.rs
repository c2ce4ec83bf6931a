//! What a run did, printed as text for people or as one JSON object for scripts and tests.

use std::time::Duration;

use serde_json::{json, Value};

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Summary {
    pub day: String,
    pub period: String,
    pub sensors: u32,
    pub every_seconds: u32,
    /// The day's tables, oldest first.
    pub tables: Vec<String>,
    pub tables_created: usize,
    pub shards: u32,
    pub written: usize,
    pub write_requests: usize,
    pub write_retries: usize,
    pub missing_table_writes: u64,
    /// The base key read back, such as `SENSOR#0007`.
    pub sensor: String,
    pub read: usize,
    pub read_requests: usize,
    pub first_sort_key: Option<String>,
    pub last_sort_key: Option<String>,
    /// Sort keys of the newest readings, newest first.
    pub latest: Vec<String>,
    pub missing_tables: Vec<String>,
    pub write_time: Duration,
    pub read_time: Duration,
    /// Failed checks; empty when verified.
    pub problems: Vec<String>,
}

impl Summary {
    pub(crate) fn verified(&self) -> bool {
        self.problems.is_empty()
    }

    pub(crate) fn json(&self) -> Value {
        json!({
            "day": self.day,
            "period": self.period,
            "sensors": self.sensors,
            "every_seconds": self.every_seconds,
            "tables": self.tables,
            "tables_created": self.tables_created,
            "shards": self.shards,
            "written": self.written,
            "write_requests": self.write_requests,
            "write_retries": self.write_retries,
            "missing_table_writes": self.missing_table_writes,
            "sensor": self.sensor,
            "read": self.read,
            "read_requests": self.read_requests,
            "first_sort_key": self.first_sort_key,
            "last_sort_key": self.last_sort_key,
            "latest": self.latest,
            "missing_tables": self.missing_tables,
            "write_seconds": self.write_time.as_secs_f64(),
            "read_seconds": self.read_time.as_secs_f64(),
            "verified": self.verified(),
            "problems": self.problems,
        })
    }

    pub(crate) fn text(&self) -> String {
        let none = || "-".to_string();
        let missing = if self.missing_tables.is_empty() {
            "none".to_string()
        } else {
            self.missing_tables.join(", ")
        };
        let mut lines = vec![
            format!(
                "day {}: {} sensors every {} s, period {}, {} shards",
                self.day, self.sensors, self.every_seconds, self.period, self.shards
            ),
            format!(
                "tables    {} ({} created by create_new in this run)",
                self.tables.join(", "),
                self.tables_created
            ),
            format!(
                "written   {} items in {} BatchWriteItem requests ({} retries, {} to missing tables) in {:.2} s",
                self.written,
                self.write_requests,
                self.write_retries,
                self.missing_table_writes,
                self.write_time.as_secs_f64()
            ),
            format!(
                "read      {}: {} items in {} Query requests in {:.2} s; missing tables: {missing}",
                self.sensor,
                self.read,
                self.read_requests,
                self.read_time.as_secs_f64()
            ),
            format!("first     {}", self.first_sort_key.clone().unwrap_or_else(none)),
            format!("last      {}", self.last_sort_key.clone().unwrap_or_else(none)),
            format!("latest {}  {}", self.latest.len(), self.latest.join(", ")),
        ];
        if self.verified() {
            lines.push("verified  yes".to_string());
        } else {
            lines.push(format!(
                "verified  NO: {} problems (see stderr)",
                self.problems.len()
            ));
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_the_documented_keys_and_verified_follows_problems() {
        let mut summary = Summary {
            tables: vec!["a".into(), "b".into()],
            latest: vec!["k2".into(), "k1".into()],
            write_time: Duration::from_millis(1500),
            ..Summary::default()
        };
        let value = summary.json();
        for key in [
            "tables",
            "shards",
            "written",
            "write_requests",
            "sensor",
            "read",
            "read_requests",
            "first_sort_key",
            "last_sort_key",
            "latest",
            "missing_tables",
            "write_seconds",
            "read_seconds",
            "verified",
        ] {
            assert!(value.get(key).is_some(), "{key} missing from {value}");
        }
        assert_eq!(value["tables"], json!(summary.tables));
        assert_eq!(value["write_seconds"], json!(summary.write_time.as_secs_f64()));
        assert_eq!(value["verified"], json!(true));
        summary.problems.push("read 1 items, wrote 2".into());
        assert_eq!(summary.json()["verified"], json!(false));
        assert!(summary.text().contains("verified  NO"));
    }
}
