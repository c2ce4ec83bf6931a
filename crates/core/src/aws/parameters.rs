//! Systems Manager parameters through `aws-sdk-ssm`: where create_new publishes the table names
//! writers read (the lambda crate's `publish`).

use aws_sdk_ssm::types::ParameterType;

use crate::aws::call_error::CallError;

/// Writes `value` to the String parameter `name`, replacing what it held.
pub async fn put_parameter(client: &aws_sdk_ssm::Client, name: &str, value: &str) -> Result<(), CallError> {
    client
        .put_parameter()
        .name(name)
        .value(value)
        .r#type(ParameterType::String)
        .overwrite(true)
        .send()
        .await
        .map(drop)
        .map_err(|e| CallError::from_sdk("PutParameter", &e))
}
