//! A checker for CloudWatch Embedded Metric Format documents: the rules of the EMF
//! specification (<https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html>)
//! that decide whether CloudWatch Logs extracts a log event's metrics.

use serde_json::Value;

/// CloudWatch's units (MetricDatum's `Unit`), the values EMF's `Unit` may take.
pub const UNITS: [&str; 27] = [
    "Seconds",
    "Microseconds",
    "Milliseconds",
    "Bytes",
    "Kilobytes",
    "Megabytes",
    "Gigabytes",
    "Terabytes",
    "Bits",
    "Kilobits",
    "Megabits",
    "Gigabits",
    "Terabits",
    "Percent",
    "Count",
    "Bytes/Second",
    "Kilobytes/Second",
    "Megabytes/Second",
    "Gigabytes/Second",
    "Terabytes/Second",
    "Bits/Second",
    "Kilobits/Second",
    "Megabits/Second",
    "Gigabits/Second",
    "Terabits/Second",
    "Count/Second",
    "None",
];

/// One metric CloudWatch would extract: under one dimension set, with its value.
#[derive(Clone, Debug, PartialEq)]
pub struct EmfMetric {
    /// The CloudWatch namespace.
    pub namespace: String,
    /// (dimension name, value), in the dimension set's order.
    pub dimensions: Vec<(String, String)>,
    /// The metric's name.
    pub name: String,
    /// Its unit.
    pub unit: Option<String>,
    /// Its value.
    pub value: f64,
}

impl EmfMetric {
    /// The names of its dimensions.
    pub fn dimension_names(&self) -> Vec<&str> {
        self.dimensions.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// The value of the dimension `name`.
    pub fn dimension(&self, name: &str) -> Option<&str> {
        self.dimensions
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Checks one log event against the specification and returns the metrics it defines, one per
/// (dimension set, metric); panics naming the broken rule: one line of JSON, an object root,
/// `_aws` an object with an integer `Timestamp` (milliseconds) and a non-empty
/// `CloudWatchMetrics` array; each directive a `Namespace` (1 to 255 characters), `Dimensions`
/// an array of arrays of at most 30 names, each a top-level member with a string value,
/// `Metrics` 1 to 100 definitions with a `Name` (and optionally a CloudWatch `Unit` and a
/// `StorageResolution` of 1 or 60), each a top-level member with a number (or an array of
/// numbers) as value.
pub fn validate(line: &str) -> Vec<EmfMetric> {
    assert!(!line.contains('\n'), "one log event per line: {line}");
    let root: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    let root = required(root.as_object(), "the root is not an object", line);
    let aws = required(
        root.get("_aws").and_then(Value::as_object),
        "no _aws object at the top level",
        line,
    );
    assert!(
        aws.get("Timestamp").is_some_and(Value::is_u64),
        "_aws.Timestamp is not an integer of milliseconds: {line}"
    );
    let directives = required(
        aws.get("CloudWatchMetrics").and_then(Value::as_array),
        "_aws.CloudWatchMetrics is not an array",
        line,
    );
    assert!(!directives.is_empty(), "no metric directive: {line}");
    let mut found = Vec::new();
    for directive in directives {
        let namespace = required(directive["Namespace"].as_str(), "Namespace is not a string", line);
        assert!((1..=255).contains(&namespace.len()), "Namespace length: {line}");
        let sets = required(
            directive["Dimensions"].as_array(),
            "Dimensions is not an array",
            line,
        );
        let mut dimension_sets = Vec::new();
        for set in sets {
            let set = required(set.as_array(), "a dimension set is not an array", line);
            assert!(set.len() <= 30, "more than 30 dimensions in a set: {line}");
            let mut dimensions = Vec::new();
            for name in set {
                let name = required(name.as_str(), "a dimension name is not a string", line);
                let value = root.get(name).and_then(Value::as_str).unwrap_or_else(|| {
                    panic!("dimension {name} has no string value at the top level: {line}")
                });
                dimensions.push((name.to_string(), value.to_string()));
            }
            dimension_sets.push(dimensions);
        }
        let metrics = required(directive["Metrics"].as_array(), "Metrics is not an array", line);
        assert!(
            (1..=100).contains(&metrics.len()),
            "1 to 100 metrics per directive: {line}"
        );
        for metric in metrics {
            let metric = required(metric.as_object(), "a metric definition is not an object", line);
            let name = required(
                metric.get("Name").and_then(Value::as_str),
                "a metric has no Name",
                line,
            );
            assert!((1..=255).contains(&name.len()), "metric name length: {line}");
            let unit = metric.get("Unit").map(|unit| {
                let unit = required(unit.as_str(), "Unit is not a string", line);
                assert!(UNITS.contains(&unit), "{unit} is not a CloudWatch unit: {line}");
                unit.to_string()
            });
            if let Some(resolution) = metric.get("StorageResolution") {
                assert!(
                    resolution == 1 || resolution == 60,
                    "StorageResolution is 1 or 60: {line}"
                );
            }
            let value = match root.get(name) {
                Some(Value::Number(n)) => n.as_f64().expect("a number"),
                Some(Value::Array(values)) if !values.is_empty() && values.len() <= 100 => values
                    .iter()
                    .map(|v| {
                        v.as_f64()
                            .unwrap_or_else(|| panic!("{name}: not numbers: {line}"))
                    })
                    .sum(),
                _ => panic!("metric {name} has no numeric value at the top level: {line}"),
            };
            for dimensions in &dimension_sets {
                found.push(EmfMetric {
                    namespace: namespace.to_string(),
                    dimensions: dimensions.clone(),
                    name: name.to_string(),
                    unit: unit.clone(),
                    value,
                });
            }
        }
    }
    found
}

/// What `found` holds; else a panic naming the `broken` rule and the line.
fn required<T>(found: Option<T>, broken: &str, line: &str) -> T {
    found.unwrap_or_else(|| panic!("{broken}: {line}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_document_and_rejects_what_cloudwatch_would_not_parse() {
        let good = r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Prefix"]],"Metrics":[{"Name":"X","Unit":"Count"}]}]},"Prefix":"t","X":1}"#;
        let found = validate(good);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].dimension("Prefix"), Some("t"));
        assert_eq!(found[0].value, 1.0);
        let bad = [
            r#"{"Prefix":"t","X":1}"#,
            r#"{"_aws":{"Timestamp":"1","CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Prefix"]],"Metrics":[{"Name":"X"}]}]},"Prefix":"t","X":1}"#,
            r#"{"_aws":{"Timestamp":1.5,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Prefix"]],"Metrics":[{"Name":"X"}]}]},"Prefix":"t","X":1}"#,
            r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Prefix"]],"Metrics":[{"Name":"X"}]}]},"Prefix":1,"X":1}"#,
            r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Prefix"]],"Metrics":[{"Name":"X"}]}]},"Prefix":"t","X":"1"}"#,
            r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Prefix"]],"Metrics":[{"Name":"X","Unit":"Things"}]}]},"Prefix":"t","X":1}"#,
            r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":["Prefix"],"Metrics":[{"Name":"X"}]}]},"Prefix":"t","X":1}"#,
            "{\"_aws\":{\"Timestamp\":1,\"CloudWatchMetrics\":[{\"Namespace\":\"n\",\"Dimensions\":[],\n\"Metrics\":[{\"Name\":\"X\"}]}]},\"X\":1}",
        ];
        for line in bad {
            assert!(std::panic::catch_unwind(|| validate(line)).is_err(), "{line}");
        }
    }
}
