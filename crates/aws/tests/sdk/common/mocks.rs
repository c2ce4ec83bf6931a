//! The SDK-adapter tests' pieces of aws-smithy-mocks: DescribeTable rules, refused updates and
//! deletes, modeled errors as
//! they come off the wire, the table spec most calls carry, and a whole run on a mocked client.

use aws_sdk_dynamodb::error::ErrorMetadata;
use aws_sdk_dynamodb::operation::delete_table::DeleteTableError;
use aws_sdk_dynamodb::operation::describe_table::DescribeTableOutput;
use aws_sdk_dynamodb::operation::update_table::UpdateTableError;
use aws_sdk_dynamodb::types::builders::TableDescriptionBuilder;
use aws_sdk_dynamodb::types::error::{
    LimitExceededException, ResourceInUseException, ResourceNotFoundException,
};
use aws_sdk_dynamodb::types::TableDescription;
use aws_sdk_dynamodb::Client;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use ddb_rollover::policy::{Billing, Capacity};
use ddb_rollover::table::TableSpec;
use ddb_rollover::{run, ApplyOptions, Operation, Policy, RunReport};
use ddb_rollover_aws::dynamodb::DynamoDb;

use super::at;

/// A DescribeTable rule for table `name`, answering with the table `fill` describes (it gets a
/// builder that already carries the name).
pub(crate) fn describes(
    name: &'static str,
    fill: impl Fn(TableDescriptionBuilder) -> TableDescriptionBuilder + Send + Sync + 'static,
) -> Rule {
    mock!(Client::describe_table)
        .match_requests(move |r| r.table_name() == Some(name))
        .then_output(move || {
            // The creation time a family's ledger records ([`ledger`]), unless `fill` says
            // otherwise; with [`arn_of`] (which `fill` sets where the test needs it), the identity.
            let described = TableDescription::builder()
                .table_name(name)
                .creation_date_time(aws_smithy_types::DateTime::from_secs(0));
            DescribeTableOutput::builder()
                .table(fill(described).build())
                .build()
        })
}

/// The ARN the mocked tables have.
pub(crate) fn arn_of(name: &str) -> String {
    format!("arn:aws:dynamodb:us-east-1:123456789012:table/{name}")
}

/// The family's ledger for a run on a mocked client: its Query answers that `policy`'s family
/// made each of `tables` (by the identity [`describes`] gives them, for the period their names
/// say), and every record write (a lease taken, given back) succeeds.
pub(crate) fn ledger(policy: &Policy, tables: &[&str]) -> Vec<Rule> {
    use aws_sdk_dynamodb::operation::delete_item::DeleteItemOutput;
    use aws_sdk_dynamodb::operation::put_item::PutItemOutput;
    use aws_sdk_dynamodb::operation::query::QueryOutput;
    use aws_sdk_dynamodb::types::AttributeValue;
    use ddb_rollover::ledger::{bounds_of, keys, Meta, Origin, TableIdentity, TableRecord, TableState};
    use ddb_rollover::policy::Ownership;
    use std::collections::HashMap;

    let naming = policy.naming();
    let item = |key: String, body: String| {
        HashMap::from([
            ("family".to_string(), AttributeValue::S(policy.prefix.clone())),
            ("record".to_string(), AttributeValue::S(key)),
            ("version".to_string(), AttributeValue::N("1".into())),
            ("body".to_string(), AttributeValue::S(body)),
        ])
    };
    let mut items = vec![item(
        keys::META.into(),
        serde_json::to_string(&Meta::FirstRun {
            at: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
        })
        .unwrap(),
    )];
    for name in tables {
        let Ownership::Owned(slot) = naming.classify(name) else {
            panic!("{name} is not one of the policy's periods")
        };
        let record = TableRecord {
            name: name.to_string(),
            state: TableState::Made {
                identity: TableIdentity::new(
                    &arn_of(name),
                    chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
                    None,
                ),
            },
            origin: Origin::Created,
            period: bounds_of(naming.calendar(), slot),
            key: policy.key.clone(),
            policy_hash: policy.hash(),
            scaling_policies: Vec::new(),
            seal: None,
            lowered: None,
            feeds: None,
        };
        items.push(item(keys::table(name), serde_json::to_string(&record).unwrap()));
    }
    let ledger = naming.ledger_name();
    let (read, write, remove) = (ledger.clone(), ledger.clone(), ledger);
    vec![
        mock!(Client::query)
            .match_requests(move |r| r.table_name() == Some(read.as_str()))
            .then_output(move || QueryOutput::builder().set_items(Some(items.clone())).build()),
        mock!(Client::put_item)
            .match_requests(move |r| r.table_name() == Some(write.as_str()))
            .then_output(|| PutItemOutput::builder().build()),
        mock!(Client::delete_item)
            .match_requests(move |r| r.table_name() == Some(remove.as_str()))
            .then_output(|| DeleteItemOutput::builder().build()),
    ]
}

/// An UpdateTable rule for table `name`, refused with the error `error` makes.
pub(crate) fn update_refused(name: &'static str, error: fn() -> UpdateTableError) -> Rule {
    mock!(Client::update_table)
        .match_requests(move |r| r.table_name() == Some(name))
        .then_error(error)
}

/// A DeleteTable rule for table `name`, refused with the error `error` makes.
pub(crate) fn delete_refused(name: &'static str, error: fn() -> DeleteTableError) -> Rule {
    mock!(Client::delete_table)
        .match_requests(move |r| r.table_name() == Some(name))
        .then_error(error)
}

/// A DynamoDB client answering from `rules`, matched as `mode` says.
pub(crate) fn client(mode: RuleMode, rules: &[&Rule]) -> Client {
    mock_client!(aws_sdk_dynamodb, mode, rules.iter().copied())
}

/// The SDK adapter over a [`client`] answering from `rules`.
pub(crate) fn adapter(mode: RuleMode, rules: &[&Rule]) -> DynamoDb {
    DynamoDb::new(client(mode, rules))
}

/// A modeled error's metadata as it comes off the wire: the SDK's deserializer puts the error
/// code there, and the adapter classifies by it.
pub(crate) fn coded(code: &str) -> ErrorMetadata {
    coded_with(code, "refused")
}

/// [`coded`] with the error's own message, which the metadata repeats on the wire.
pub(crate) fn coded_with(code: &str, message: &str) -> ErrorMetadata {
    ErrorMetadata::builder().code(code).message(message).build()
}

/// ResourceInUseException as the wire brings it.
pub(crate) fn in_use() -> ResourceInUseException {
    ResourceInUseException::builder()
        .meta(coded("ResourceInUseException"))
        .build()
}

/// ResourceNotFoundException as the wire brings it.
pub(crate) fn not_found() -> ResourceNotFoundException {
    ResourceNotFoundException::builder()
        .meta(coded("ResourceNotFoundException"))
        .build()
}

/// LimitExceededException as the wire brings it.
pub(crate) fn limit_exceeded() -> LimitExceededException {
    LimitExceededException::builder()
        .meta(coded("LimitExceededException"))
        .build()
}

/// LimitExceededException with DynamoDB's `message`, in the exception and its metadata.
pub(crate) fn limit_exceeded_saying(message: &str) -> LimitExceededException {
    LimitExceededException::builder()
        .meta(coded_with("LimitExceededException", message))
        .message(message)
        .build()
}

/// The default policy's table `name` at 300 / 1000, without template settings.
pub(crate) fn spec(name: &str) -> TableSpec {
    let billing = Billing::Provisioned(Capacity {
        read: 300,
        write: 1000,
    });
    fake_aws::table_spec(name, Policy::default().key, billing)
}

/// One whole run of `operation` through the SDK adapter on `client`, its clock simulated at
/// `now` (RFC 3339).
pub(crate) async fn run_on(client: Client, policy: &Policy, operation: Operation, now: &str) -> RunReport {
    let clock = ddb_rollover::simulation(policy, &[operation], at(now)).unwrap();
    run(
        &DynamoDb::new(client),
        policy,
        operation,
        &clock,
        ApplyOptions::default(),
    )
    .await
    .unwrap()
}
