//! What the consumer saw: per period, the family's inserts, modifies and removes, each change
//! counted once (Kinesis may deliver a record twice: a repeated `eventID` is a duplicate), and
//! the records that were not the family's changes. Printed as text or one JSON object.

use std::collections::{BTreeMap, HashSet};

use ddb_rollover_app::{ChangeDecoder, ChangeError, ChangeKind};
use serde_json::{json, Value};

/// One period's changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PeriodCount {
    pub inserts: usize,
    pub modifies: usize,
    pub removes: usize,
}

impl PeriodCount {
    pub(crate) fn total(&self) -> usize {
        self.inserts + self.modifies + self.removes
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Tally {
    /// By period label, oldest first (labels sort in time order).
    pub periods: BTreeMap<String, PeriodCount>,
    pub records: usize,
    pub duplicates: usize,
    /// Records of tables that are not the family's, by table.
    pub other_tables: BTreeMap<String, usize>,
    /// Records that are not DynamoDB change records, with why.
    pub malformed: Vec<String>,
    pub shards: usize,
    pub get_records_calls: usize,
}

impl Tally {
    pub(crate) fn of<'a>(decoder: &ChangeDecoder, records: impl IntoIterator<Item = &'a [u8]>) -> Tally {
        let mut tally = Tally::default();
        let mut seen = HashSet::new();
        for data in records {
            tally.records += 1;
            match decoder.decode_kinesis_data(data) {
                Ok(change) => {
                    if !seen.insert(change.event_id) {
                        tally.duplicates += 1;
                        continue;
                    }
                    let count = tally.periods.entry(change.period.label).or_default();
                    match change.kind {
                        ChangeKind::Insert => count.inserts += 1,
                        ChangeKind::Modify => count.modifies += 1,
                        ChangeKind::Remove => count.removes += 1,
                    }
                }
                Err(ChangeError::OtherTable { table, .. } | ChangeError::NotAPeriod { table, .. }) => {
                    *tally.other_tables.entry(table).or_default() += 1;
                }
                Err(malformed) => tally.malformed.push(malformed.to_string()),
            }
        }
        tally
    }

    pub(crate) fn changes(&self) -> usize {
        self.periods.values().map(PeriodCount::total).sum()
    }

    pub(crate) fn json(&self) -> Value {
        let periods: serde_json::Map<String, Value> = self
            .periods
            .iter()
            .map(|(label, count)| {
                let value = json!({
                    "inserts": count.inserts,
                    "modifies": count.modifies,
                    "removes": count.removes,
                });
                (label.clone(), value)
            })
            .collect();
        json!({
            "records": self.records,
            "changes": self.changes(),
            "duplicates": self.duplicates,
            "periods": periods,
            "other_tables": self.other_tables,
            "malformed": self.malformed,
            "shards": self.shards,
            "get_records_calls": self.get_records_calls,
        })
    }

    pub(crate) fn text(&self) -> String {
        let mut lines = vec![format!(
            "stream    {} records from {} shards in {} GetRecords calls: {} changes, {} duplicates",
            self.records,
            self.shards,
            self.get_records_calls,
            self.changes(),
            self.duplicates
        )];
        lines.push(format!(
            "{:<16}  {:>7}  {:>8}  {:>7}",
            "PERIOD", "INSERTS", "MODIFIES", "REMOVES"
        ));
        for (label, count) in &self.periods {
            lines.push(format!(
                "{label:<16}  {:>7}  {:>8}  {:>7}",
                count.inserts, count.modifies, count.removes
            ));
        }
        for (table, records) in &self.other_tables {
            lines.push(format!("other     {table}: {records} records (not the family's)"));
        }
        if !self.malformed.is_empty() {
            lines.push(format!("malformed {} records (see stderr)", self.malformed.len()));
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ddb_rollover::Policy;

    fn record(table: &str, event: &str, id: &str, millis: i64) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "awsRegion": "us-east-1", "eventID": id, "eventName": event, "userIdentity": null,
            "recordFormat": "application/json", "tableName": table,
            "dynamodb": {
                "ApproximateCreationDateTime": millis,
                "Keys": {"pk": {"S": "SENSOR#0001#1"}, "sk": {"S": id}},
                "NewImage": {"pk": {"S": "SENSOR#0001#1"}, "sk": {"S": id}},
                "SizeBytes": 40
            },
            "eventSource": "aws:dynamodb"
        }))
        .unwrap()
    }

    #[test]
    fn changes_are_counted_per_period_once_each_and_strangers_apart() {
        let policy = Policy::from_toml("prefix = \"iot_example\"\nperiod = \"6h\"").unwrap();
        let decoder = ChangeDecoder::new(&policy);
        // 2024-12-01T05:59:59Z and T06:00:00Z: the boundary, with the records interleaved.
        let (before, after) = (1_733_032_799_000, 1_733_032_800_000);
        let records = [
            record("iot_example_2024-12-01T00", "INSERT", "a", before),
            record("iot_example_2024-12-01T06", "INSERT", "b", after),
            record("iot_example_2024-12-01T00", "MODIFY", "c", after),
            record("iot_example_2024-12-01T06", "INSERT", "b", after),
            record("iot_example_2024-12-01T06", "REMOVE", "d", after),
            record("weather_2024-12-01T00", "INSERT", "e", after),
            record("iot_example_archive", "INSERT", "f", after),
            b"not json".to_vec(),
        ];
        let tally = Tally::of(&decoder, records.iter().map(Vec::as_slice));
        let counts = |inserts, modifies, removes| PeriodCount {
            inserts,
            modifies,
            removes,
        };
        assert_eq!(
            tally.periods,
            BTreeMap::from([
                ("2024-12-01T00".to_string(), counts(1, 1, 0)),
                ("2024-12-01T06".to_string(), counts(1, 0, 1)),
            ])
        );
        assert_eq!((tally.records, tally.changes(), tally.duplicates), (8, 4, 1));
        assert_eq!(
            tally.other_tables,
            BTreeMap::from([
                ("iot_example_archive".to_string(), 1),
                ("weather_2024-12-01T00".to_string(), 1)
            ])
        );
        assert_eq!(tally.malformed.len(), 1);
        assert!(tally.malformed[0].contains("field `.`"), "{:?}", tally.malformed);
        let json = tally.json();
        assert_eq!(json["periods"]["2024-12-01T06"]["removes"], json!(1));
        assert_eq!(json["changes"], json!(4));
        let text = tally.text();
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
        assert!(rows.contains(&vec!["2024-12-01T00", "1", "1", "0"]), "{text}");
        assert!(rows.contains(&vec!["2024-12-01T06", "1", "0", "1"]), "{text}");
    }
}
