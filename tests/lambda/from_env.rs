//! `Handler::from_env`: the cold start reads the stack's whole environment (every variable
//! template.yaml sets, each against its parameter's rule), then `ROLLOVER_POLICY` or the
//! stack's parameters, and builds its client from the environment. This binary holds a single
//! test because it changes the process environment; other tests in the same process could
//! otherwise read it half-changed.

use std::collections::BTreeMap;

use ddb_rollover::policy::POLICY_ENV;
use ddb_rollover::Operation;
use ddb_rollover_lambda::Handler;
use ddb_rollover_stack::parameters::VARIABLES;
use serde_json::json;
use testkit::{LocalDynamo, Server};

use crate::support::ledger::{stack_ledger, without_ledger};

/// The error a create_new cold start fails with in the environment as it stands.
async fn cold_start_error() -> String {
    match Handler::from_env(Operation::CreateNew).await {
        Ok(handler) => panic!(
            "{POLICY_ENV}={:?} accepted as {:?}",
            std::env::var(POLICY_ENV),
            handler.policy()
        ),
        Err(error) => error.to_string(),
    }
}

async fn from_env_error(policy: &str) -> String {
    std::env::set_var(POLICY_ENV, policy);
    cold_start_error().await
}

/// An error message must name each of `named`: what the operator has to fix.
fn assert_names(message: &str, named: &[&str]) {
    for name in named {
        assert!(message.contains(name), "should name {name}: {message}");
    }
}

/// What template.yaml sets with a PolicyOverride: the override, and the variables that decide
/// the roles' permissions and the switches (here: TtlAttribute, an archive bucket, TablePrefix
/// timeseries), and the stack's account.
const GRANTS_ONLY: [(&str, &str); 12] = [
    ("ROLLOVER_ACCOUNT_ID", "123456789012"),
    ("ROLLOVER_TABLE_PREFIX", "timeseries"),
    ("ROLLOVER_TTL_ATTRIBUTE", "expires_at"),
    ("ROLLOVER_POINT_IN_TIME_RECOVERY", "false"),
    ("ROLLOVER_ARCHIVE_BUCKET", "archive-bucket"),
    ("ROLLOVER_ARCHIVE_PREFIX", "ddb-rollover/"),
    ("ROLLOVER_DELETE_AFTER", "0"),
    ("ROLLOVER_AUTOSCALING", "false"),
    ("ROLLOVER_CHANGE_STREAM_ARN", ""),
    ("ROLLOVER_CONSUMER_FUNCTION_ARN", ""),
    ("ROLLOVER_PUBLISH_TABLES", "false"),
    ("ROLLOVER_PUBLISH_EVENTS", "false"),
];

/// ... and without one, the other parameters at the template's defaults.
const DEFAULTS: [(&str, &str); 19] = [
    ("ROLLOVER_PERIOD", "day"),
    ("ROLLOVER_TIME_ZONE", "UTC"),
    ("ROLLOVER_PREMAKE", "1"),
    ("ROLLOVER_PARTITION_KEY_NAME", "pk"),
    ("ROLLOVER_PARTITION_KEY_TYPE", "S"),
    ("ROLLOVER_SORT_KEY_NAME", "sk"),
    ("ROLLOVER_SORT_KEY_TYPE", "S"),
    ("ROLLOVER_HOT_READ_CAPACITY", "300"),
    ("ROLLOVER_HOT_WRITE_CAPACITY", "1000"),
    ("ROLLOVER_WARM_READ_CAPACITY", "100"),
    ("ROLLOVER_WARM_WRITE_CAPACITY", "1"),
    ("ROLLOVER_COLD_BILLING", "provisioned"),
    ("ROLLOVER_COLD_READ_CAPACITY", "1"),
    ("ROLLOVER_COLD_WRITE_CAPACITY", "1"),
    ("ROLLOVER_COLD_TABLE_CLASS", ""),
    ("ROLLOVER_WRITE_GRACE", ""),
    ("ROLLOVER_DELETION_PROTECTION", "false"),
    ("ROLLOVER_ARCHIVE_AFTER", "30"),
    ("ROLLOVER_MAX_DELETES_PER_RUN", "5"),
];

fn set_all(variables: &[(&str, &str)]) {
    for (name, value) in variables {
        std::env::set_var(name, value);
    }
}

#[tokio::test]
async fn from_env_reads_the_policy_and_the_client_from_the_environment() {
    let server = LocalDynamo::start(Server::Moto);
    // AWS_ENDPOINT_URL, region and static credentials: what aws-config reads on a cold start.
    for (name, value) in server.env() {
        std::env::set_var(name, value);
    }

    // Issue 41, finding 2: no stack variables at all (ROLLOVER_TABLE_PREFIX unset) is no
    // start. Before: the built-in default policy (prefix timeseries) ran.
    std::env::remove_var(POLICY_ENV);
    let message = cold_start_error().await;
    assert_names(
        &message,
        &[
            "ROLLOVER_TABLE_PREFIX (parameter TablePrefix) is not set",
            "ROLLOVER_POLICY (parameter PolicyOverride) is not set",
            "ROLLOVER_PUBLISH_TABLES (parameter PublishTables) is not set",
        ],
    );
    set_all(&GRANTS_ONLY);

    // A bad policy fails the cold start, naming every bad field and the variable to fix.
    let message = from_env_error(r#"{"premake":1000,"phases":[{"min_age":0,"read":0,"write":5}]}"#).await;
    assert_names(&message, &["ROLLOVER_POLICY", "premake", "phases[0].read"]);
    let message = from_env_error(r#"{"prefx":"metrics"}"#).await;
    assert!(message.contains("prefx"), "{message}");
    let message = from_env_error("prefix = \"metrics\"").await;
    assert!(message.contains("not JSON"), "{message}");
    // Finding 7: `[]` is no policy. Before: the all-defaults policy.
    let message = from_env_error("[]").await;
    assert_names(&message, &["ROLLOVER_POLICY", "must be a JSON object"]);
    // Finding 6: a key given twice is named with its path. Before: the last one won.
    let message = from_env_error(r#"{"prefix":"timeseries","premake":1,"premake":5}"#).await;
    assert_names(&message, &["ROLLOVER_POLICY", "premake: given twice"]);
    let message =
        from_env_error(r#"{"prefix":"timeseries","phases":[{"min_age":0,"read":5,"write":5,"read":9}]}"#)
            .await;
    assert_names(&message, &["phases[0].read: given twice"]);

    // What the stack's parameters granted the role: a policy needing more fails the cold
    // start, naming the field and the stack parameter to set.
    let message = from_env_error(r#"{"retention":{"delete_after":30}}"#).await;
    assert_names(
        &message,
        &["ROLLOVER_POLICY", "retention.delete_after", "DeleteAfter"],
    );
    let message = from_env_error(r#"{"prefix":"metrics"}"#).await;
    assert!(message.contains("TablePrefix=metrics"), "{message}");
    // Finding 5: another bucket or prefix than the stack's archive (or "" for the whole
    // bucket). Before: accepted, failing at the first export periods later.
    for (retention, field, parameter) in [
        (
            r#""bucket":"other-bucket","prefix":"ddb-rollover/""#,
            "retention.bucket",
            "ArchiveBucket",
        ),
        (
            r#""bucket":"archive-bucket","prefix":"elsewhere/""#,
            "retention.prefix",
            "ArchivePrefix",
        ),
        (
            r#""bucket":"archive-bucket","prefix":"""#,
            "retention.prefix",
            "ArchivePrefix",
        ),
    ] {
        let message = from_env_error(&format!(
            r#"{{"prefix":"timeseries","retention":{{"archive_after":3,{retention}}}}}"#
        ))
        .await;
        assert_names(&message, &[field, parameter]);
    }
    std::env::set_var(
        POLICY_ENV,
        r#"{"template":{"ttl_attribute":"expires_at"},"retention":{"archive_after":3,"bucket":"archive-bucket","prefix":"ddb-rollover/"}}"#,
    );
    Handler::from_env(Operation::ResizeOld).await.unwrap();

    // Finding 4: switches take exactly true or false. Before: True, 1, yes meant false.
    for name in [
        "ROLLOVER_PUBLISH_TABLES",
        "ROLLOVER_PUBLISH_EVENTS",
        "ROLLOVER_AUTOSCALING",
    ] {
        for value in ["True", "1", "yes", ""] {
            std::env::set_var(name, value);
            let message = cold_start_error().await;
            assert_names(&message, &[name, "\"true\", \"false\""]);
        }
        std::env::set_var(name, "false");
    }
    // A ChangeStreamArn in another Region than the function's.
    std::env::set_var("AWS_REGION", "us-east-1");
    std::env::set_var(
        "ROLLOVER_CHANGE_STREAM_ARN",
        "arn:aws:kinesis:eu-west-1:123456789012:stream/changes",
    );
    let message = cold_start_error().await;
    assert_names(&message, &["ROLLOVER_CHANGE_STREAM_ARN", "eu-west-1"]);
    std::env::set_var("ROLLOVER_CHANGE_STREAM_ARN", "");

    // No PolicyOverride: the stack's parameters build the policy, and every variable the
    // template sets must be there; each missing or bad one is named.
    std::env::set_var(POLICY_ENV, "");
    std::env::set_var("ROLLOVER_ARCHIVE_BUCKET", "");
    let message = cold_start_error().await;
    assert_names(
        &message,
        &[
            "ROLLOVER_PERIOD",
            "ROLLOVER_HOT_READ_CAPACITY",
            "ROLLOVER_MAX_DELETES_PER_RUN",
        ],
    );
    assert_eq!(
        // Less the account and the two publishing switches, which are no policy variables.
        GRANTS_ONLY.len() - 3 + DEFAULTS.len(),
        VARIABLES.len(),
        "every variable is set here"
    );
    set_all(&DEFAULTS);
    let handler = Handler::from_env(Operation::CreateNew).await.unwrap();
    assert_eq!(
        handler.policy().template.ttl_attribute.as_deref(),
        Some("expires_at")
    );
    assert_eq!(
        handler.policy().hot_phase().billing.to_string(),
        "300 RCU / 1000 WCU"
    );
    // Values the template's AllowedPattern forbids. Before: accepted (trimmed, or read).
    for (name, value) in [
        ("ROLLOVER_WRITE_GRACE", "2 weeks"),
        ("ROLLOVER_TIME_ZONE", "Europe/Berlin "),
        ("ROLLOVER_PREMAKE", " 1"),
    ] {
        std::env::set_var(name, value);
        let message = cold_start_error().await;
        assert_names(&message, &[name, &format!("{value:?}"), "Allowed"]);
    }
    set_all(&DEFAULTS);
    std::env::set_var("ROLLOVER_HOT_READ_CAPACITY", "lots");
    std::env::set_var("ROLLOVER_PERIOD", "fortnight");
    let message = cold_start_error().await;
    assert_names(
        &message,
        &[
            "ROLLOVER_HOT_READ_CAPACITY",
            "\"lots\"",
            "ROLLOVER_PERIOD",
            "\"fortnight\"",
        ],
    );
    set_all(&DEFAULTS);

    // A valid policy is the one the handler runs, through a client built from the environment.
    std::env::set_var("ROLLOVER_TABLE_PREFIX", "metrics");
    std::env::set_var("ROLLOVER_TTL_ATTRIBUTE", "");
    std::env::set_var(
        POLICY_ENV,
        r#"{"prefix":"metrics","period":"month","premake":2,"phases":[{"min_age":0,"read":5,"write":50}]}"#,
    );
    let client = server.client().await;
    // The family's ledger, as the stack with TablePrefix metrics makes it.
    stack_ledger(&client, "metrics").await;
    let handler = Handler::from_env(Operation::CreateNew).await.unwrap();
    handler
        .handle(json!({"at": "2018-10-25T10:00:00Z", "replay": true}))
        .await
        .unwrap();
    let mut tables = BTreeMap::new();
    for name in testkit::table_names(&client).await.iter() {
        let table = client.describe_table().table_name(name).send().await.unwrap();
        let throughput = table.table().unwrap().provisioned_throughput().unwrap();
        tables.insert(
            name.clone(),
            (
                throughput.read_capacity_units().unwrap(),
                throughput.write_capacity_units().unwrap(),
            ),
        );
    }
    let expected: BTreeMap<String, (i64, i64)> = ["metrics_2018-10", "metrics_2018-11", "metrics_2018-12"]
        .into_iter()
        .map(|name| (name.to_string(), (5, 50)))
        .collect();
    assert_eq!(without_ledger(tables, "metrics"), expected);
}
