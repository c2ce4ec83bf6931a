//! A failed cold start, told to Lambda through the Runtime API's init-error endpoint.
//!
//! `lambda_runtime` reports init errors only for its SnapStart hooks (its reporter is
//! private), so a function whose `ROLLOVER_POLICY` is invalid would otherwise just exit:
//! Lambda would show "Runtime exited" with no reason. Posting the error ourselves makes the
//! invocation fail with `Runtime.InitError` and our message, in the console and the metrics.

use lambda_runtime::Diagnostic;
use lambda_runtime_api_client::body::Body;
use lambda_runtime_api_client::{build_request, Client};

use ddb_rollover_stack::InitError;

const INIT_ERROR_PATH: &str = "/2018-06-01/runtime/init/error";

/// POSTs the error to `/runtime/init/error` of the Runtime API named by
/// `AWS_LAMBDA_RUNTIME_API` (set by Lambda, and by `cargo lambda watch`).
pub async fn report_init_error(error: &InitError) -> Result<(), lambda_runtime::Error> {
    let diagnostic = Diagnostic {
        error_type: "InitError".into(),
        error_message: error.to_string(),
    };
    let request = build_request()
        .method("POST")
        .uri(INIT_ERROR_PATH)
        .header("lambda-runtime-function-error-type", "Runtime.InitError")
        .body(Body::from(serde_json::to_vec(&diagnostic)?))?;
    let response = Client::builder().build()?.call(request).await?;
    if !response.status().is_success() {
        return Err(format!("the Runtime API answered {}", response.status()).into());
    }
    Ok(())
}
