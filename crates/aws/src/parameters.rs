//! Systems Manager parameters through `aws-sdk-ssm`: where create_new publishes the table names
//! writers read (the lambda crate's `publish`), and what the name holds before it writes (whose
//! parameter it is).

use aws_sdk_ssm::types::ParameterType;

use crate::call_error::CallError;
use crate::utc;
use ddb_rollover::ledger::SeenParameter;

/// Writes `value` to the String parameter `name`, replacing what it held; the version it made.
pub async fn put_parameter(client: &aws_sdk_ssm::Client, name: &str, value: &str) -> Result<i64, CallError> {
    write(client, name, value, true).await
}

/// Creates the String parameter `name` holding `value` (version 1); fails
/// (`ParameterAlreadyExists`) when someone made one under the name meanwhile, instead of
/// replacing theirs.
pub async fn create_parameter(
    client: &aws_sdk_ssm::Client,
    name: &str,
    value: &str,
) -> Result<i64, CallError> {
    write(client, name, value, false).await
}

async fn write(
    client: &aws_sdk_ssm::Client,
    name: &str,
    value: &str,
    overwrite: bool,
) -> Result<i64, CallError> {
    client
        .put_parameter()
        .name(name)
        .value(value)
        .r#type(ParameterType::String)
        .overwrite(overwrite)
        .send()
        .await
        .map(|written| written.version())
        .map_err(|e| CallError::from_sdk("PutParameter", &e))
}

/// A parameter as it stands: its value (a SecureString's as stored, not decrypted), its type and
/// what Systems Manager gave its last write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredParameter {
    /// Its value (ciphertext for a SecureString: read without decryption).
    pub value: String,
    /// Its version and when it was last written.
    pub seen: SeenParameter,
}

/// What `name` holds (or, as `NAME:VERSION`, that version of it); `None` when there is no
/// such parameter.
pub async fn get_parameter(
    client: &aws_sdk_ssm::Client,
    name: &str,
) -> Result<Option<StoredParameter>, CallError> {
    match client
        .get_parameter()
        .name(name)
        .with_decryption(false)
        .send()
        .await
    {
        Ok(answer) => Ok(answer.parameter().map(|p| StoredParameter {
            value: p.value().unwrap_or_default().to_owned(),
            seen: SeenParameter {
                kind: p.r#type().map(|t| t.as_str().to_owned()).unwrap_or_default(),
                version: p.version(),
                last_modified: p.last_modified_date().and_then(utc),
            },
        })),
        Err(e) => {
            let error = CallError::from_sdk("GetParameter", &e);
            if error.code == "ParameterNotFound" || error.code == "ParameterVersionNotFound" {
                Ok(None)
            } else {
                Err(error)
            }
        }
    }
}
