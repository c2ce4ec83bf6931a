//! Contract between template.yaml and the Lambda code: what each ScheduleV2 event sends,
//! once EventBridge Scheduler fills in `<aws.scheduler.scheduled-time>`, is accepted by the
//! function that owns the event and does the day's work against a real DynamoDB wire API
//! (moto), with the policy the template's `ROLLOVER_POLICY` gives for the parameter defaults.

use chrono::{DateTime, Utc};
use ddb_rollover::{Operation, Outcome};
use deploy_checks::scenario;
use deploy_checks::template::{Function, Template, SCHEDULED_TIME_PLACEHOLDER};
use testkit::{LocalDynamo, Server};

fn functions() -> Vec<Function> {
    Template::load()
        .functions()
        .unwrap_or_else(|e| panic!("template.yaml: {e}"))
}

#[test]
fn every_function_serves_an_operation_and_its_env_policy_parses() {
    let functions = functions();
    let mut operations: Vec<_> = functions
        .iter()
        .map(|f| {
            f.operation()
                .unwrap_or_else(|| panic!("{}: binary {:?} is no known function", f.logical_id, f.binary))
        })
        .collect();
    operations.sort_by_key(|o| o.as_str());
    assert_eq!(operations, [Operation::CreateNew, Operation::ResizeOld]);

    for f in &functions {
        // Each function is its own handler crate (the card's shape): CodeUri is
        // crates/BINARY, a package named BINARY whose one binary is src/main.rs, so sam build
        // needs no BuildProperties.Binary to pick it.
        assert_eq!(
            f.code_uri,
            format!("crates/{}", f.binary),
            "{}: CodeUri must be the function's own handler crate",
            f.logical_id
        );
        let crate_dir = testkit::repo_root().join(&f.code_uri);
        assert!(
            crate_dir.join("src/main.rs").is_file() && !crate_dir.join("src/bin").exists(),
            "{}: {} must hold one binary, src/main.rs",
            f.logical_id,
            f.code_uri
        );
        let template_text = std::fs::read_to_string(deploy_checks::template::template_path()).unwrap();
        assert!(
            !template_text.contains("BuildProperties"),
            "template.yaml: each CodeUri holds one binary; BuildProperties.Binary is not needed"
        );
        let policy = f
            .policy()
            .unwrap_or_else(|e| panic!("{}: ROLLOVER_POLICY does not parse: {e}", f.logical_id));
        // The template's defaults are the README's (and the blog's) policy, with string keys
        // (what the application helpers need).
        let readme_default = ddb_rollover::Policy::from_json(
            r#"{"prefix":"timeseries","period":"day","timezone":"UTC","premake":1,
                "key":{"partition":{"name":"pk","type":"S"},"sort":{"name":"sk","type":"S"}},
                "phases":[{"min_age":0,"read":300,"write":1000},{"min_age":1,"read":100,"write":1},
                          {"min_age":2,"read":1,"write":1}]}"#,
        )
        .unwrap();
        assert_eq!(policy, readme_default, "{}", f.logical_id);
    }
}

#[test]
fn env_policy_follows_the_parameters() {
    let mut template = Template::load();
    for (name, value) in [
        ("TablePrefix", "metrics.v2"),
        ("Period", "hour"),
        ("TimeZone", "Europe/Berlin"),
        ("Premake", "3"),
        ("HotReadCapacity", "50"),
        ("HotWriteCapacity", "60"),
        ("WarmReadCapacity", "7"),
        ("WarmWriteCapacity", "8"),
        ("ColdReadCapacity", "2"),
        ("ColdWriteCapacity", "3"),
    ] {
        template.set_parameter(name, value);
    }
    for f in template.functions().unwrap() {
        let p = f.policy().unwrap_or_else(|e| panic!("{}: {e}", f.logical_id));
        assert_eq!(p.prefix, "metrics.v2");
        assert_eq!(p.timezone.name(), "Europe/Berlin");
        assert_eq!(p.premake, 3);
        let capacities: Vec<_> = p
            .phases
            .iter()
            .map(|ph| (ph.min_age, ph.billing.to_string()))
            .collect();
        let expected: Vec<(u32, String)> = [(0, 50, 60), (1, 7, 8), (2, 2, 3)]
            .into_iter()
            .map(|(age, read, write)| (age, format!("{read} RCU / {write} WCU")))
            .collect();
        assert_eq!(capacities, expected);
        for s in &f.schedules {
            assert_eq!(
                s.timezone.as_deref(),
                Some("Europe/Berlin"),
                "{}.{}",
                f.logical_id,
                s.event
            );
        }
    }
}

#[test]
fn every_function_has_a_schedule_in_the_policy_time_zone_with_the_scheduled_time() {
    for f in functions() {
        assert!(
            !f.schedules.is_empty(),
            "{} has no ScheduleV2 event",
            f.logical_id
        );
        let policy = f.policy().unwrap();
        for s in &f.schedules {
            assert!(
                s.input.contains(SCHEDULED_TIME_PLACEHOLDER),
                "{}.{}: Input must pass {SCHEDULED_TIME_PLACEHOLDER} so retries decide as the first delivery: {}",
                f.logical_id,
                s.event,
                s.input
            );
            assert_eq!(
                s.timezone.as_deref(),
                Some(policy.timezone.name()),
                "{}.{}: the schedule's time zone must be the policy's",
                f.logical_id,
                s.event
            );
            assert!(
                s.expression.starts_with("cron(") || s.expression.starts_with("rate("),
                "{}.{}: {}",
                f.logical_id,
                s.event,
                s.expression
            );
        }
    }
}

/// A console test with the schedule's raw Input (placeholder not filled in) must change nothing.
#[tokio::test]
async fn raw_input_without_the_scheduled_time_is_refused() {
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;
    for f in functions() {
        for s in &f.schedules {
            let raw: serde_json::Value = serde_json::from_str(&s.input).unwrap();
            let result = scenario::handler(&f, client.clone()).handle(raw).await;
            assert!(
                matches!(result, Err(ddb_rollover_lambda::HandlerError::BadEvent(_))),
                "{}.{}: {result:?}",
                f.logical_id,
                s.event
            );
        }
    }
    let tables = client.list_tables().send().await.unwrap();
    assert!(tables.table_names().is_empty(), "{:?}", tables.table_names());
}

async fn capacity(client: &aws_sdk_dynamodb::Client, table: &str) -> (i64, i64) {
    let out = client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap_or_else(|e| panic!("DescribeTable {table}: {e:?}"));
    let t = out.table().expect("a table description");
    let pt = t.provisioned_throughput().expect("provisioned throughput");
    (
        pt.read_capacity_units().unwrap_or_default(),
        pt.write_capacity_units().unwrap_or_default(),
    )
}

/// The blog's day through the template's schedules: at 23:45 create_new pre-builds the next
/// day's table (and today's), at 00:15 resize_old dials yesterday's down. Each run is delivered
/// twice, as a Scheduler or Lambda retry would: the second delivery changes nothing.
#[tokio::test]
async fn schedule_inputs_do_the_day_through_the_handlers() {
    let db = LocalDynamo::start(Server::Moto);
    let client = db.client().await;

    for f in &scenario::in_day_order(functions()) {
        let operation = f.operation().unwrap();
        let at: DateTime<Utc> = scenario::scheduled_time(operation).parse().unwrap();
        for s in &f.schedules {
            for delivery in 1..=2 {
                let report = scenario::run_schedule(f, s, client.clone())
                    .await
                    .unwrap_or_else(|e| panic!("{}.{} delivery {delivery}: {e}", f.logical_id, s.event));
                let what = format!("{}.{} delivery {delivery}: {report:#?}", f.logical_id, s.event);
                assert_eq!(report.operation, operation, "{what}");
                assert_eq!(report.at, at, "{what}");
                assert!(!report.dry_run, "{what}");
                assert_eq!(report.summary.failed, 0, "{what}");
                let done: Vec<_> = report
                    .lines_with(Outcome::Done)
                    .map(|l| l.item.table.as_str())
                    .collect();
                let expected: &[&str] = match (delivery, operation) {
                    (1, Operation::CreateNew) => &["timeseries_2018-10-25", "timeseries_2018-10-26"],
                    (1, Operation::ResizeOld) => &["timeseries_2018-10-25"],
                    _ => &[],
                };
                assert_eq!(done, expected, "{what}");
            }
        }
        match operation {
            Operation::CreateNew => {
                assert_eq!(capacity(&client, "timeseries_2018-10-25").await, (300, 1000));
                assert_eq!(capacity(&client, "timeseries_2018-10-26").await, (300, 1000));
            }
            Operation::ResizeOld => {
                assert_eq!(capacity(&client, "timeseries_2018-10-25").await, (100, 1));
                assert_eq!(capacity(&client, "timeseries_2018-10-26").await, (300, 1000));
            }
        }
    }
    // A create_new retry delivered late, after resize_old ran, still decides as of 23:45: it
    // must not raise the table resize_old just dialled down.
    let functions = functions();
    let create = functions
        .iter()
        .find(|f| f.operation() == Some(Operation::CreateNew))
        .unwrap();
    let late = scenario::run_schedule(create, &create.schedules[0], client.clone())
        .await
        .unwrap();
    assert_eq!(late.lines_with(Outcome::Done).count(), 0, "{late:#?}");
    assert_eq!(capacity(&client, "timeseries_2018-10-25").await, (100, 1));

    let mut tables = client.list_tables().send().await.unwrap().table_names().to_vec();
    tables.sort();
    assert_eq!(tables, ["timeseries_2018-10-25", "timeseries_2018-10-26"]);
}
