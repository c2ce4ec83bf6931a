//! `Handler::from_env`: the cold start reads `ROLLOVER_POLICY` and builds its client from the
//! environment. This binary holds a single test because it changes the process environment;
//! other tests in the same process could otherwise read it half-changed.

use std::collections::BTreeMap;

use ddb_rollover::policy::POLICY_ENV;
use ddb_rollover::{Operation, Policy};
use ddb_rollover_lambda::grants::{GRANTS_ENV, TABLE_PREFIX_ENV};
use ddb_rollover_lambda::Handler;
use serde_json::json;
use testkit::{LocalDynamo, Server};

async fn from_env_error(policy: &str) -> String {
    std::env::set_var(POLICY_ENV, policy);
    match Handler::from_env(Operation::CreateNew).await {
        Ok(handler) => panic!("{policy:?} accepted as {:?}", handler.policy()),
        Err(error) => error.to_string(),
    }
}

#[tokio::test]
async fn from_env_reads_the_policy_and_the_client_from_the_environment() {
    let server = LocalDynamo::start(Server::Moto);
    // AWS_ENDPOINT_URL, region and static credentials: what aws-config reads on a cold start.
    for (name, value) in server.env() {
        std::env::set_var(name, value);
    }

    // A bad policy fails the cold start, naming every bad field and the variable to fix.
    let message = from_env_error(r#"{"premake":1000,"phases":[{"min_age":0,"read":0,"write":5}]}"#).await;
    for named in ["ROLLOVER_POLICY", "premake", "phases[0].read"] {
        assert!(message.contains(named), "should name {named}: {message}");
    }
    let message = from_env_error(r#"{"prefx":"metrics"}"#).await;
    assert!(message.contains("prefx"), "{message}");
    let message = from_env_error("prefix = \"metrics\"").await;
    assert!(message.contains("not valid JSON"), "{message}");

    // Unset, empty or blank: the blog's defaults.
    std::env::remove_var(POLICY_ENV);
    let handler = Handler::from_env(Operation::ResizeOld).await.unwrap();
    assert_eq!(handler.policy(), &Policy::default());
    assert_eq!(handler.operation(), Operation::ResizeOld);
    for blank in ["", " \n"] {
        std::env::set_var(POLICY_ENV, blank);
        let handler = Handler::from_env(Operation::CreateNew).await.unwrap();
        assert_eq!(handler.policy(), &Policy::default(), "{blank:?}");
    }

    // A valid policy is the one the handler runs, through a client built from the environment.
    std::env::set_var(
        POLICY_ENV,
        r#"{"prefix":"metrics","period":"month","premake":2,"phases":[{"min_age":0,"read":5,"write":50}]}"#,
    );
    let handler = Handler::from_env(Operation::CreateNew).await.unwrap();
    handler
        .handle(json!({"at": "2018-10-25T10:00:00Z"}))
        .await
        .unwrap();
    let client = server.client().await;
    let mut tables = BTreeMap::new();
    for name in client.list_tables().send().await.unwrap().table_names() {
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
    assert_eq!(tables, expected);

    // What the template granted the role (ROLLOVER_GRANTS, ROLLOVER_TABLE_PREFIX): a policy
    // needing more fails the cold start, naming the field and the stack parameter to set.
    std::env::set_var(GRANTS_ENV, "ttl,");
    std::env::set_var(TABLE_PREFIX_ENV, "timeseries");
    let message = from_env_error(r#"{"retention":{"delete_after":30}}"#).await;
    for named in ["ROLLOVER_POLICY", "retention.delete_after", "DeleteAfter"] {
        assert!(message.contains(named), "should name {named}: {message}");
    }
    let message = from_env_error(r#"{"prefix":"metrics"}"#).await;
    assert!(message.contains("TablePrefix=metrics"), "{message}");
    std::env::set_var(POLICY_ENV, r#"{"template":{"ttl_attribute":"expires_at"}}"#);
    Handler::from_env(Operation::ResizeOld).await.unwrap();
    // Without the variables (the CLI, stacks made before them): no check.
    std::env::remove_var(GRANTS_ENV);
    std::env::remove_var(TABLE_PREFIX_ENV);
    std::env::set_var(
        POLICY_ENV,
        r#"{"prefix":"metrics","retention":{"delete_after":30}}"#,
    );
    Handler::from_env(Operation::ResizeOld).await.unwrap();
}
