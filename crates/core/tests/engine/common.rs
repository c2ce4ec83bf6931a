//! Helpers shared by the engine's tests: instants, and the mock rules of the SDK-adapter tests.

use aws_sdk_dynamodb::error::ErrorMetadata;
use aws_sdk_dynamodb::operation::describe_table::DescribeTableOutput;
use aws_sdk_dynamodb::types::builders::TableDescriptionBuilder;
use aws_sdk_dynamodb::types::TableDescription;
use aws_sdk_dynamodb::Client;
use aws_smithy_mocks::{mock, Rule};

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

/// A modeled error's metadata as it comes off the wire: the SDK's deserializer puts the error
/// code there, and the adapter classifies by it.
pub(crate) fn coded(code: &str) -> ErrorMetadata {
    coded_with(code, "refused")
}

/// [`coded`] with the error's own message, which the metadata repeats on the wire.
pub(crate) fn coded_with(code: &str, message: &str) -> ErrorMetadata {
    ErrorMetadata::builder().code(code).message(message).build()
}

/// The instant an RFC 3339 text names, in UTC.
pub(crate) fn at(rfc3339: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(rfc3339).unwrap().to_utc()
}
