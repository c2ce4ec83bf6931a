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
use ddb_rollover::aws::dynamodb::DynamoDb;
use ddb_rollover::policy::settings::{Billing, Capacity};
use ddb_rollover::table::changes::TableSpec;
use ddb_rollover::{run, ApplyOptions, Operation, Policy, RunReport};

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
            DescribeTableOutput::builder()
                .table(fill(TableDescription::builder().table_name(name)).build())
                .build()
        })
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
    let clock = ddb_rollover::run::clock::simulation(policy, &[operation], at(now)).unwrap();
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
