//! A failed call to S3, Systems Manager or EventBridge, as a person reads it: the operation, the
//! HTTP status and AWS's error code when the service answered. The SDK has already retried what
//! its retry strategy retries (throttling, 5xx, transport errors).

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};

/// One AWS call that failed, with what the answer said.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{operation}: {}", self.describe())]
pub struct CallError {
    /// The operation called, as AWS names it.
    pub operation: &'static str,
    /// `None`: no response (connection, timeout, credentials).
    pub status: Option<u16>,
    /// AWS's error code (`ParameterNotFound`, `AccessDenied`); empty when the answer had none
    /// (a HEAD has no body).
    pub code: String,
    /// AWS's error message, or what went wrong without an answer.
    pub message: String,
}

impl CallError {
    /// Any SDK client's error (every SDK crate's `SdkError` is the same type).
    pub fn from_sdk<E>(operation: &'static str, error: &SdkError<E, HttpResponse>) -> CallError
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        match error.raw_response() {
            Some(response) => CallError {
                operation,
                status: Some(response.status().as_u16()),
                code: error.code().unwrap_or_default().to_owned(),
                message: error.message().unwrap_or_default().to_owned(),
            },
            None => CallError {
                operation,
                status: None,
                code: String::new(),
                message: DisplayErrorContext(error).to_string(),
            },
        }
    }

    fn describe(&self) -> String {
        match self.status {
            Some(status) if self.code.is_empty() => format!("HTTP {status} {}", self.message),
            Some(status) => format!("HTTP {status} {}: {}", self.code, self.message),
            None => self.message.clone(),
        }
        .trim_end()
        .to_owned()
    }

    /// The caller has no permission (an IAM refusal): a deployment problem, not a transient one.
    pub fn is_access_denied(&self) -> bool {
        self.status == Some(403) || self.code.contains("AccessDenied")
    }

    /// The key or bucket is not there (S3's 404).
    pub fn is_not_found(&self) -> bool {
        self.status == Some(404)
    }
}
