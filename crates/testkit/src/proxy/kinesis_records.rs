//! The record DynamoDB puts into a table's Kinesis data stream for one changed item, as the
//! DynamoDB Developer Guide's "Using Kinesis Data Streams to capture changes to DynamoDB"
//! (`kds.html`) shows it: `awsRegion`, `eventID`, `eventName` (INSERT, MODIFY or REMOVE),
//! `userIdentity` (null for a caller's write), `recordFormat` `application/json`, `tableName`,
//! `eventSource` `aws:dynamodb`, and `dynamodb` with `ApproximateCreationDateTime` (epoch
//! milliseconds, or microseconds under MICROSECOND precision), `Keys`, `NewImage`, `OldImage`,
//! `SizeBytes` and `ApproximateCreationDateTimePrecision`. Pure: no I/O, so the format is tested
//! on its own. Used by `kinesis_delivery`.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Map, Value};

/// `ApproximateCreationDateTimePrecision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Precision {
    Millisecond,
    Microsecond,
}

impl Precision {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Precision::Millisecond => "MILLISECOND",
            Precision::Microsecond => "MICROSECOND",
        }
    }

    pub(super) fn parse(text: &str) -> Option<Precision> {
        match text {
            "MILLISECOND" => Some(Precision::Millisecond),
            "MICROSECOND" => Some(Precision::Microsecond),
            _ => None,
        }
    }
}

/// One item changed by a write: its key, and the item before and after (`None`: absent).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Change {
    pub(super) table: String,
    pub(super) keys: Value,
    pub(super) old: Option<Value>,
    pub(super) new: Option<Value>,
}

impl Change {
    /// INSERT, MODIFY or REMOVE; `None` when the write changed nothing (a DeleteItem of a
    /// missing item, a put of the same item). The Developer Guide's DynamoDB Streams pages say
    /// a PutItem or UpdateItem that changes no data writes no stream record; the proxy assumes
    /// the same of Kinesis destinations, whose pages do not say.
    pub(super) fn event_name(&self) -> Option<&'static str> {
        match (&self.old, &self.new) {
            (None, Some(_)) => Some("INSERT"),
            (Some(old), Some(new)) if old != new => Some("MODIFY"),
            (Some(_), None) => Some("REMOVE"),
            _ => None,
        }
    }

    /// The record DynamoDB writes for this change, made at `micros` (microseconds since the
    /// epoch) in `region`; `None` when nothing changed.
    pub(super) fn record(&self, region: &str, precision: Precision, micros: i64) -> Option<Value> {
        let event_name = self.event_name()?;
        let mut dynamodb = Map::new();
        let created = match precision {
            Precision::Millisecond => micros / 1000,
            Precision::Microsecond => micros,
        };
        dynamodb.insert("ApproximateCreationDateTime".into(), Value::from(created));
        dynamodb.insert("Keys".into(), self.keys.clone());
        if let Some(new) = &self.new {
            dynamodb.insert("NewImage".into(), new.clone());
        }
        if let Some(old) = &self.old {
            dynamodb.insert("OldImage".into(), old.clone());
        }
        let size = [Some(&self.keys), self.new.as_ref(), self.old.as_ref()]
            .into_iter()
            .flatten()
            .map(item_size)
            .sum::<usize>();
        dynamodb.insert("SizeBytes".into(), Value::from(size));
        dynamodb.insert(
            "ApproximateCreationDateTimePrecision".into(),
            Value::from(precision.as_str()),
        );
        Some(json!({
            "awsRegion": region,
            "eventID": event_id(micros),
            "eventName": event_name,
            "userIdentity": null,
            "recordFormat": "application/json",
            "tableName": self.table,
            "dynamodb": dynamodb,
            "eventSource": "aws:dynamodb",
        }))
    }
}

/// The Kinesis partition key of an item's records: a hash of its key (DynamoDB uses a hash of
/// the item's key, so one item's records stay on one shard, in order), 32 hex digits.
pub(super) fn partition_key(keys: &Value) -> String {
    // Sorted by attribute name: one key, one text, one hash, whatever the map's order.
    let mut attributes: Vec<(&String, &Value)> = keys.as_object().into_iter().flatten().collect();
    attributes.sort_by_key(|(name, _)| *name);
    let text = format!("{attributes:?}");
    let half = |seed: u8| {
        let mut hasher = DefaultHasher::new();
        seed.hash(&mut hasher);
        text.hash(&mut hasher);
        hasher.finish()
    };
    format!("{:016X}{:016X}", half(1), half(2))
}

/// A unique event id (32 hex digits): the time and a per-process counter.
fn event_id(micros: i64) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{:016x}{:016x}", micros, n)
}

/// An item's size as DynamoDB counts it, approximately: each attribute's name plus its
/// value's bytes (strings and binary by length, numbers about one byte per two digits, plus
/// three bytes for each list or map).
fn item_size(item: &Value) -> usize {
    item.as_object()
        .into_iter()
        .flatten()
        .map(|(name, value)| name.len() + value_size(value))
        .sum()
}

fn value_size(value: &Value) -> usize {
    let Some((kind, inner)) = value.as_object().and_then(|v| v.iter().next()) else {
        return 0;
    };
    let text = |v: &Value| v.as_str().map_or(0, str::len);
    let number = |v: &Value| v.as_str().map_or(0, |n| n.len().div_ceil(2) + 1);
    let binary = |v: &Value| v.as_str().map_or(0, |b| b.len() * 3 / 4);
    let each = |f: &dyn Fn(&Value) -> usize| inner.as_array().into_iter().flatten().map(f).sum();
    match kind.as_str() {
        "S" => text(inner),
        "N" => number(inner),
        "B" => binary(inner),
        "SS" => each(&text),
        "NS" => each(&number),
        "BS" => each(&binary),
        "BOOL" | "NULL" => 1,
        "L" => 3 + each(&value_size),
        "M" => 3 + item_size(inner),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(old: Option<Value>, new: Option<Value>) -> Change {
        Change {
            table: "t_2026_11".into(),
            keys: json!({"pk": {"S": "a"}}),
            old,
            new,
        }
    }

    #[test]
    fn each_kind_of_change_is_named_and_carries_its_images() {
        let item = json!({"pk": {"S": "a"}, "n": {"N": "1"}});
        let changed = json!({"pk": {"S": "a"}, "n": {"N": "2"}});
        let at = 1_795_000_000_123_456;
        let insert = change(None, Some(item.clone()))
            .record("eu-west-1", Precision::Millisecond, at)
            .unwrap();
        assert_eq!(insert["eventName"], "INSERT");
        assert_eq!(insert["awsRegion"], "eu-west-1");
        assert_eq!(insert["tableName"], "t_2026_11");
        assert_eq!(insert["recordFormat"], "application/json");
        assert_eq!(insert["eventSource"], "aws:dynamodb");
        assert_eq!(insert["userIdentity"], Value::Null);
        assert_eq!(insert["dynamodb"]["Keys"], json!({"pk": {"S": "a"}}));
        assert_eq!(insert["dynamodb"]["NewImage"], item);
        assert!(insert["dynamodb"].get("OldImage").is_none());
        assert_eq!(
            insert["dynamodb"]["ApproximateCreationDateTime"],
            1_795_000_000_123_i64
        );
        assert_eq!(
            insert["dynamodb"]["ApproximateCreationDateTimePrecision"],
            "MILLISECOND"
        );
        // pk (2) + "a" (1) for the keys, + n (1) + "1" (2) for the image.
        assert_eq!(insert["dynamodb"]["SizeBytes"], 3 + 3 + 3);

        let modify = change(Some(item.clone()), Some(changed.clone()))
            .record("eu-west-1", Precision::Microsecond, at)
            .unwrap();
        assert_eq!(modify["eventName"], "MODIFY");
        assert_eq!(modify["dynamodb"]["OldImage"], item);
        assert_eq!(modify["dynamodb"]["NewImage"], changed);
        assert_eq!(modify["dynamodb"]["ApproximateCreationDateTime"], at);
        assert_eq!(
            modify["dynamodb"]["ApproximateCreationDateTimePrecision"],
            "MICROSECOND"
        );
        assert_ne!(modify["eventID"], insert["eventID"]);

        let remove = change(Some(item.clone()), None)
            .record("eu-west-1", Precision::Millisecond, at)
            .unwrap();
        assert_eq!(remove["eventName"], "REMOVE");
        assert!(remove["dynamodb"].get("NewImage").is_none());

        assert_eq!(change(None, None).event_name(), None);
        assert_eq!(change(Some(item.clone()), Some(item)).event_name(), None);
    }

    #[test]
    fn one_key_one_partition_key() {
        let a = partition_key(&json!({"pk": {"S": "a"}, "sk": {"N": "1"}}));
        assert_eq!(a.len(), 32);
        assert_eq!(a, partition_key(&json!({"sk": {"N": "1"}, "pk": {"S": "a"}})));
        assert_ne!(a, partition_key(&json!({"pk": {"S": "b"}, "sk": {"N": "1"}})));
    }
}
