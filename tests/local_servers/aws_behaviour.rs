//! The proxy's AWS behaviours that moto lacks, against moto:
//! - `Proxy::deregister_deletes_policies`: moto keeps a deregistered scalable target's scaling
//!   policies, AWS deletes them; through the proxy, DeregisterScalableTarget deletes exactly that
//!   target's policies, and the proxy's own calls are not recorded.
//! - `Proxy::family_role`: the IAM role of one family's functions (`template.yaml`), which no
//!   local server enforces: reads and changes only under `table/{prefix}_*`, changes refused on
//!   another family's table, CreateTable and DeleteTable only with our family tag.

use crate::support::autoscaling_client;
use crate::support::scaling::{deregister_target, put_policy, register_target, Scales};
use aws_sdk_applicationautoscaling::error::ProvideErrorMetadata;
use aws_sdk_applicationautoscaling::types::ScalableDimension;
use aws_sdk_applicationautoscaling::Client;
use testkit::{create_plain_table, LocalDynamo, Proxy, Server};

const READ: ScalableDimension = ScalableDimension::DynamoDbTableReadCapacityUnits;
const WRITE: ScalableDimension = ScalableDimension::DynamoDbTableWriteCapacityUnits;

async fn register(client: &Client, resource: &str, dimension: ScalableDimension) {
    register_target(client, resource, dimension, 1, 10)
        .send()
        .await
        .unwrap();
}

/// A step-scaling policy (no CloudWatch metric needed).
async fn put_step_policy(client: &Client, resource: &str, dimension: ScalableDimension, name: &str) {
    put_policy(client, resource, dimension, name, Scales::Step)
        .send()
        .await
        .unwrap();
}

async fn deregister(client: &Client, resource: &str, dimension: ScalableDimension) -> Result<(), String> {
    deregister_target(client, resource, dimension)
        .send()
        .await
        .map(drop)
        .map_err(|e| format!("{}: {}", e.code().unwrap_or("?"), e.message().unwrap_or("?")))
}

/// Every DynamoDB scaling policy on the server, as (resource id, dimension, name), sorted.
async fn policies(client: &Client) -> Vec<(String, String, String)> {
    let mut found: Vec<(String, String, String)> = crate::support::scaling::policies(client)
        .await
        .iter()
        .map(|p| {
            (
                p.resource_id().to_string(),
                p.scalable_dimension().as_str().to_string(),
                p.policy_name().to_string(),
            )
        })
        .collect();
    found.sort();
    found
}

fn policy(resource: &str, dimension: &ScalableDimension, name: &str) -> (String, String, String) {
    (resource.into(), dimension.as_str().into(), name.into())
}

#[tokio::test]
async fn deregistering_a_target_through_the_proxy_deletes_its_policies_as_aws_does() {
    let moto = LocalDynamo::start(Server::Moto);
    let direct = autoscaling_client(moto.endpoint());

    // moto on its own keeps the policies of a target it deregistered.
    register(&direct, "table/kept", READ).await;
    put_step_policy(&direct, "table/kept", READ, "left-behind").await;
    deregister(&direct, "table/kept", READ).await.unwrap();
    assert_eq!(
        policies(&direct).await,
        [policy("table/kept", &READ, "left-behind")],
        "moto now deletes a deregistered target's policies itself: the proxy's behaviour is no longer needed"
    );

    let proxy = Proxy::start(moto.endpoint());
    proxy.deregister_deletes_policies();
    let through = autoscaling_client(&proxy.endpoint());
    // `table/t` is a substring of `table/t.2` (moto filters resource ids by substring).
    register(&through, "table/t", READ).await;
    register(&through, "table/t", WRITE).await;
    register(&through, "table/t.2", READ).await;
    put_step_policy(&through, "table/t", READ, "ours").await;
    put_step_policy(&through, "table/t", READ, "theirs").await;
    put_step_policy(&through, "table/t", WRITE, "write").await;
    put_step_policy(&through, "table/t.2", READ, "repeated-hour").await;
    let mut all = vec![
        policy("table/kept", &READ, "left-behind"),
        policy("table/t", &READ, "ours"),
        policy("table/t", &READ, "theirs"),
        policy("table/t", &WRITE, "write"),
        policy("table/t.2", &READ, "repeated-hour"),
    ];
    assert_eq!(policies(&direct).await, all);

    // Only the deregistered target's policies go, whatever their names.
    deregister(&through, "table/t.2", READ).await.unwrap();
    all.retain(|p| p.0 != "table/t.2");
    assert_eq!(policies(&direct).await, all);
    deregister(&through, "table/t", READ).await.unwrap();
    all.retain(|p| !(p.0 == "table/t" && p.1 == READ.as_str()));
    assert_eq!(policies(&direct).await, all);

    // A target that is not registered: moto's error, unchanged, and nothing deleted.
    let missing = deregister(&through, "table/none", READ).await.unwrap_err();
    assert!(missing.contains("No scalable target"), "{missing}");
    assert_eq!(policies(&direct).await, all);

    // The proxy recorded the client's calls only, not its own reads and deletes.
    let counts = proxy.counts();
    assert_eq!(counts.get("DeregisterScalableTarget"), Some(&3), "{counts:?}");
    assert_eq!(counts.get("DescribeScalingPolicies"), None, "{counts:?}");
    assert_eq!(counts.get("DeleteScalingPolicy"), None, "{counts:?}");
}

fn family(prefix: &str) -> aws_sdk_dynamodb::types::Tag {
    aws_sdk_dynamodb::types::Tag::builder()
        .key("ddb-rollover:family")
        .value(prefix)
        .build()
        .unwrap()
}

const ARN: &str = "arn:aws:dynamodb:us-east-1:123456789012:table/";

/// The AWS error code of a call's result, or "ok".
fn code<T, E: ProvideErrorMetadata>(result: Result<T, E>) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(e) => e.code().unwrap_or("?").into(),
    }
}

#[tokio::test]
async fn the_family_role_refuses_what_the_template_does_not_allow() {
    let moto = LocalDynamo::start(Server::Moto);
    let admin = moto.client().await;
    for name in ["ts_ours", "ts_untagged", "ts_eu_theirs", "other"] {
        create_plain_table(&admin, name).await;
    }
    for (name, prefix) in [("ts_ours", "ts"), ("ts_eu_theirs", "ts_eu")] {
        admin
            .tag_resource()
            .resource_arn(format!("{ARN}{name}"))
            .tags(family(prefix))
            .send()
            .await
            .unwrap();
    }
    let proxy = Proxy::start(moto.endpoint());
    proxy.family_role("ts");
    let role = proxy.client().await;
    let scaling = autoscaling_client(&proxy.endpoint());
    let update = |name: &'static str, units: i64| {
        let role = role.clone();
        async move {
            code(
                role.update_table()
                    .table_name(name)
                    .provisioned_throughput(testkit::throughput(units, units))
                    .send()
                    .await,
            )
        }
    };
    const DENIED: &str = "AccessDeniedException";
    // Changes: our family's or untagged tables under the prefix; never another family's, never
    // outside the prefix (not even a read there).
    assert_eq!(update("ts_ours", 6).await, "ok");
    assert_eq!(update("ts_untagged", 6).await, "ok");
    assert_eq!(update("ts_eu_theirs", 6).await, DENIED);
    assert_eq!(update("other", 6).await, DENIED);
    assert_eq!(
        code(role.describe_table().table_name("ts_eu_theirs").send().await),
        "ok"
    );
    assert_eq!(
        code(role.describe_table().table_name("other").send().await),
        DENIED
    );
    // A table that does not exist: DynamoDB's own answer.
    assert_eq!(update("ts_missing", 6).await, "ResourceNotFoundException");
    // Tags: never another family's, never on another family's table; no UntagResource.
    let tag = |name: &str, tag: aws_sdk_dynamodb::types::Tag| {
        role.tag_resource()
            .resource_arn(format!("{ARN}{name}"))
            .tags(tag)
            .send()
    };
    assert_eq!(code(tag("ts_untagged", family("ts_eu")).await), DENIED);
    assert_eq!(code(tag("ts_eu_theirs", family("ts")).await), DENIED);
    let team = aws_sdk_dynamodb::types::Tag::builder()
        .key("team")
        .value("iot")
        .build()
        .unwrap();
    assert_eq!(code(tag("ts_eu_theirs", team.clone()).await), DENIED);
    assert_eq!(code(tag("ts_untagged", team).await), "ok");
    assert_eq!(
        code(
            role.untag_resource()
                .resource_arn(format!("{ARN}ts_untagged"))
                .tag_keys("team")
                .send()
                .await
        ),
        DENIED
    );
    // DeleteTable only with our family tag (an untagged table is refused too).
    assert_eq!(
        code(role.delete_table().table_name("ts_untagged").send().await),
        DENIED
    );
    assert_eq!(
        code(role.delete_table().table_name("ts_eu_theirs").send().await),
        DENIED
    );
    assert_eq!(code(role.delete_table().table_name("ts_ours").send().await), "ok");
    // CreateTable only with our family tag in its Tags.
    let create = |name: &str, tags: Vec<aws_sdk_dynamodb::types::Tag>| {
        testkit::create_keyed(
            &role,
            name,
            &["id"],
            aws_sdk_dynamodb::types::ScalarAttributeType::S,
        )
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .set_tags(Some(tags))
        .send()
    };
    assert_eq!(code(create("ts_new", Vec::new()).await), DENIED);
    assert_eq!(code(create("ts_new", vec![family("ts_eu")]).await), DENIED);
    assert_eq!(code(create("ts_new", vec![family("ts")]).await), "ok");
    // Application Auto Scaling: a target only on a table the role may update.
    let register = |resource: &str| register_target(&scaling, resource, READ, 1, 10).send();
    assert_eq!(code(register("table/ts_untagged").await), "ok");
    assert_eq!(code(register("table/ts_eu_theirs").await), DENIED);
    assert_eq!(code(register("table/other").await), DENIED);
    // Each refusal is recorded as a fault of the client's call; the proxy's reads are not.
    let faulted = proxy.faulted_counts();
    assert_eq!(faulted.get("UpdateTable"), Some(&2), "{faulted:?}");
    assert_eq!(faulted.get("RegisterScalableTarget"), Some(&2), "{faulted:?}");
    assert_eq!(proxy.counts().get("ListTagsOfResource"), None);
    assert!(proxy
        .calls()
        .iter()
        .filter_map(|c| c.fault.as_deref())
        .all(|f| f == "error AccessDeniedException"));
}

/// The ledger through the proxy's emulated role, on moto: the family's own ledger's items
/// (Query, PutItem, DeleteItem; no other item call), never a change of the ledger table (an
/// explicit deny, whatever the prefix's grants), and nothing of a nested family's ledger.
#[tokio::test]
async fn the_family_role_uses_its_ledger_and_never_changes_a_ledger_table() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let moto = LocalDynamo::start(Server::Moto);
    let admin = moto.client().await;
    for (name, prefix) in [("ts_ledger", "ts"), ("ts_eu_ledger", "ts_eu")] {
        testkit::create_keyed(
            &admin,
            name,
            &["family", "record"],
            aws_sdk_dynamodb::types::ScalarAttributeType::S,
        )
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .tags(family(prefix))
        .send()
        .await
        .unwrap();
    }
    let proxy = Proxy::start(moto.endpoint());
    proxy.family_role("ts");
    let role = proxy.client().await;
    let key = |family: &str| {
        [
            ("family".to_owned(), AttributeValue::S(family.into())),
            ("record".to_owned(), AttributeValue::S("lease#resize_old".into())),
        ]
        .into_iter()
        .collect::<std::collections::HashMap<_, _>>()
    };
    let put = |table: &'static str, family: &'static str| {
        role.put_item()
            .table_name(table)
            .set_item(Some(key(family)))
            .condition_expression("attribute_not_exists(#r)")
            .expression_attribute_names("#r", "record")
            .send()
    };
    let query = |table: &'static str, family: &'static str| {
        role.query()
            .table_name(table)
            .key_condition_expression("#f = :f")
            .expression_attribute_names("#f", "family")
            .expression_attribute_values(":f", AttributeValue::S(family.into()))
            .consistent_read(true)
            .send()
    };
    const DENIED: &str = "AccessDeniedException";
    assert_eq!(
        code(role.describe_table().table_name("ts_ledger").send().await),
        "ok"
    );
    assert_eq!(code(put("ts_ledger", "ts").await), "ok");
    assert_eq!(code(query("ts_ledger", "ts").await), "ok");
    assert_eq!(
        code(
            role.get_item()
                .table_name("ts_ledger")
                .set_key(Some(key("ts")))
                .send()
                .await
        ),
        DENIED
    );
    assert_eq!(
        code(
            role.delete_item()
                .table_name("ts_ledger")
                .set_key(Some(key("ts")))
                .send()
                .await
        ),
        "ok"
    );
    // The ledger table itself: refused by the explicit Deny, though UpdateTable and
    // TagResource are granted on table/ts_* for a table of our family.
    let unprotect = role
        .update_table()
        .table_name("ts_ledger")
        .deletion_protection_enabled(false)
        .send()
        .await
        .expect_err("UpdateTable of the ledger");
    assert_eq!(unprotect.code(), Some(DENIED));
    assert!(
        unprotect.message().unwrap_or_default().contains("explicit deny"),
        "{unprotect:?}"
    );
    let team = aws_sdk_dynamodb::types::Tag::builder()
        .key("team")
        .value("iot")
        .build()
        .unwrap();
    assert_eq!(
        code(
            role.tag_resource()
                .resource_arn(format!("{ARN}ts_ledger"))
                .tags(team)
                .send()
                .await
        ),
        DENIED
    );
    assert_eq!(
        code(role.delete_table().table_name("ts_ledger").send().await),
        DENIED
    );
    // A nested family's ledger: neither its items nor the table.
    assert_eq!(code(put("ts_eu_ledger", "ts_eu").await), DENIED);
    assert_eq!(code(query("ts_eu_ledger", "ts_eu").await), DENIED);
    assert_eq!(
        code(
            role.update_table()
                .table_name("ts_eu_ledger")
                .deletion_protection_enabled(false)
                .send()
                .await
        ),
        DENIED
    );
    // Both ledgers are still there, ours empty again.
    let tables = testkit::ledgers(&admin).await;
    assert!(tables.contains_key("ts_ledger") && tables.contains_key("ts_eu_ledger"));
    let items = admin.scan().table_name("ts_ledger").send().await.unwrap();
    assert_eq!(items.count(), 0);
}
