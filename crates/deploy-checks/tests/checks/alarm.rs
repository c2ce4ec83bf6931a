//! NextTableReadyAlarm and the dashboard against the metrics contract: create_new
//! writes, in CloudWatch's Embedded Metric Format, the metric `NextTableReady` in the namespace
//! `ddb-rollover` with the single dimension `Prefix` (the policy's prefix, TablePrefix); the
//! alarm must watch exactly that, over a window a little longer than one period, within what
//! CloudWatch allows, for every Period the template accepts.

use aws_model::template::Value;
use deploy_checks::template::{RepoTemplate, Template};

/// The metrics contract's names (crates/lambda writes them).
const NAMESPACE: &str = "ddb-rollover";
const NEXT_TABLE_READY: &str = "NextTableReady";
const PREFIX_DIMENSION: &str = "Prefix";

/// PutMetricAlarm: Period x EvaluationPeriods at most one day for an alarm Period under an
/// hour, at most seven days otherwise.
const SHORT_PERIOD_LIMIT: u64 = 86_400;
const LIMIT: u64 = 604_800;

fn template(overrides: &[(&str, &str)]) -> Template {
    let mut template = Template::load();
    for (name, value) in overrides {
        template.set_parameter(name, value);
    }
    template
}

fn property<'t>(template: &'t Template, id: &str, key: &str) -> &'t Value {
    template
        .resource(id)
        .and_then(|r| r.get("Properties"))
        .and_then(|p| p.get(key))
        .unwrap_or_else(|| panic!("{id}: no Properties.{key}"))
}

fn resolved(template: &Template, id: &str, key: &str) -> String {
    template
        .resolve(property(template, id, key))
        .unwrap_or_else(|e| panic!("{id}.{key}: {e}"))
}

const ALARM: &str = "NextTableReadyAlarm";

#[test]
fn the_alarm_watches_the_contracts_metric_for_the_stacks_prefix() {
    let t = template(&[("TablePrefix", "metrics.v2")]);
    assert_eq!(
        t.resource(ALARM)
            .and_then(|r| r.get("Type"))
            .and_then(Value::as_str),
        Some("AWS::CloudWatch::Alarm")
    );
    assert_eq!(resolved(&t, ALARM, "Namespace"), NAMESPACE);
    assert_eq!(resolved(&t, ALARM, "MetricName"), NEXT_TABLE_READY);
    let dimensions = property(&t, ALARM, "Dimensions").as_sequence().expect("a list");
    assert_eq!(
        dimensions.len(),
        1,
        "only Prefix: the EMF document has [[\"Prefix\"]]"
    );
    let name = t.resolve(dimensions[0].get("Name").unwrap()).unwrap();
    let value = t.resolve(dimensions[0].get("Value").unwrap()).unwrap();
    assert_eq!((name.as_str(), value.as_str()), (PREFIX_DIMENSION, "metrics.v2"));
    // Below 1 (0: not ready), the best value of each period, missing data breaching.
    assert_eq!(resolved(&t, ALARM, "Statistic"), "Maximum");
    assert_eq!(resolved(&t, ALARM, "ComparisonOperator"), "LessThanThreshold");
    assert_eq!(resolved(&t, ALARM, "Threshold"), "1");
    assert_eq!(resolved(&t, ALARM, "TreatMissingData"), "breaching");
    assert_eq!(
        resolved(&t, ALARM, "DatapointsToAlarm"),
        resolved(&t, ALARM, "EvaluationPeriods"),
        "every period of the window must breach"
    );
    let actions = property(&t, ALARM, "AlarmActions").as_sequence().unwrap();
    let actions: Vec<String> = actions.iter().map(|a| t.resolve(a).unwrap()).collect();
    assert_eq!(actions, ["{ref:AlarmTopic}"]);
}

/// A table period's length in seconds; `None` for calendar periods longer than a day.
fn period_seconds(period: &str) -> Option<u64> {
    match period {
        "hour" => Some(3600),
        "day" => Some(86_400),
        "week" | "month" | "quarter" | "year" => None,
        hours => Some(
            hours
                .strip_suffix('h')
                .and_then(|n| n.parse::<u64>().ok())
                .expect("NNh")
                * 3600,
        ),
    }
}

#[test]
fn the_window_is_a_little_longer_than_one_period_for_every_period_and_within_cloudwatchs_limits() {
    let periods: Vec<String> = Template::load()
        .section("Parameters")
        .into_iter()
        .find(|(n, _)| n == "Period")
        .and_then(|(_, p)| p.get("AllowedValues").and_then(Value::as_sequence).cloned())
        .expect("Period's AllowedValues")
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(periods.len(), 12);
    for period in &periods {
        let t = template(&[("Period", period)]);
        let alarm_period: u64 = resolved(&t, ALARM, "Period").parse().unwrap();
        let evaluations: u64 = resolved(&t, ALARM, "EvaluationPeriods").parse().unwrap();
        let window = alarm_period * evaluations;
        assert!(
            alarm_period >= 60 && alarm_period % 60 == 0,
            "{period}: alarm period {alarm_period}"
        );
        let limit = if alarm_period < 3600 {
            SHORT_PERIOD_LIMIT
        } else {
            LIMIT
        };
        assert!(
            window <= limit,
            "{period}: {window} s is over CloudWatch's {limit} s"
        );
        match period_seconds(period) {
            Some(length) => {
                assert!(
                    window > length,
                    "{period}: window {window} s is not longer than one period"
                );
                assert!(
                    window <= length + length / 2,
                    "{period}: window {window} s is more than a little longer than {length} s"
                );
            }
            // Longer than the limit allows: create_new runs daily (CreateSchedule's description
            // says so), and the window is a little longer than a day.
            None => assert_eq!(window, 25 * 3600, "{period}"),
        }
    }
    let schedule = Template::load()
        .section("Parameters")
        .into_iter()
        .find(|(n, _)| n == "CreateSchedule")
        .and_then(|(_, p)| p.get("Description").and_then(Value::as_str).map(str::to_owned))
        .unwrap();
    assert!(
        schedule.contains("daily") && schedule.contains("NextTableReadyAlarm"),
        "{schedule}"
    );
}

#[test]
fn the_dashboard_shows_the_contracts_metrics() {
    let t = template(&[("TablePrefix", "metrics.v2")]);
    let body = resolved(&t, "Dashboard", "DashboardBody");
    let json: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("DashboardBody is not JSON ({e}): {body}"));
    let widgets = json["widgets"].as_array().expect("widgets");
    assert!(widgets.len() >= 5);
    let metrics: Vec<String> = widgets
        .iter()
        .map(|w| w["properties"]["metrics"].to_string())
        .collect();
    let shows = |needle: &str| metrics.iter().any(|m| m.contains(needle));
    assert!(
        shows(r#"["ddb-rollover","NextTableReady","Prefix","metrics.v2"]"#),
        "{metrics:#?}"
    );
    assert!(shows(
        r#"{\"ddb-rollover\",Prefix,Operation} Prefix=\"metrics.v2\" Operation=\"create_new\""#
    ));
    assert!(shows(
        r#"{\"ddb-rollover\",Prefix,Operation} Prefix=\"metrics.v2\" Operation=\"resize_old\""#
    ));
    assert!(shows(
        r#"{\"ddb-rollover\",Prefix,Operation,Reason} Prefix=\"metrics.v2\" MetricName=\"Deferrals\""#
    ));
    assert!(shows(
        r#"["AWS/Lambda","Errors","FunctionName","{ref:CreateNewFunction}"]"#
    ));
    assert!(shows(
        r#"["AWS/Lambda","Errors","FunctionName","{ref:ResizeOldFunction}"]"#
    ));
}

/// The texts of every `Fn::Sub` (`!Sub text` or `!Sub [text, {vars}]`) under `value`.
fn sub_texts<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    let text_of = |arg: &'v Value| match arg {
        Value::Sequence(items) => items.first().and_then(Value::as_str),
        other => other.as_str(),
    };
    match value {
        Value::Tagged(tagged) => {
            if tagged.tag == "Sub" {
                out.extend(text_of(&tagged.value));
            }
            sub_texts(&tagged.value, out);
        }
        Value::Mapping(m) => {
            for (k, v) in m {
                if k.as_str() == Some("Fn::Sub") {
                    out.extend(text_of(v));
                }
                sub_texts(v, out);
            }
        }
        Value::Sequence(items) => items.iter().for_each(|item| sub_texts(item, out)),
        _ => {}
    }
}

#[test]
fn no_json_is_built_from_strings() {
    let t = Template::load();
    let mut texts = Vec::new();
    for section in ["Resources", "Outputs", "Conditions", "Rules"] {
        for (_, value) in t.section(section) {
            sub_texts(value, &mut texts);
        }
    }
    assert!(
        texts.len() > 10,
        "the walk finds the template's !Sub texts: {texts:?}"
    );
    let json: Vec<_> = texts
        .iter()
        .filter(|text| text.trim_start().starts_with(['{', '[']))
        .collect();
    assert!(
        json.is_empty(),
        "JSON glued with !Sub (use Fn::ToJsonString): {json:#?}"
    );
}
