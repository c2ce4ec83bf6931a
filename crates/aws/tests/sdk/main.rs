//! The SDK adapters against mocked replies (aws-smithy-mocks), one test binary: DynamoDB's and
//! Lambda's answers and errors as they come off the wire, through the engine's runs. Tests that
//! need a local DynamoDB server live in the top-level `tests/` package (`engine` there).

mod common;

mod sdk_errors;
mod sdk_lifecycle;
mod sdk_mapping;
mod sdk_stream;
mod sdk_warm;
