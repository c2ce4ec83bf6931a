//! The `resize_old` Lambda function: after each period ends, dial every aged table down to
//! the phase its age calls for. Everything else is in `ddb_rollover_lambda`.

use ddb_rollover::Operation;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    ddb_rollover_lambda::serve(Operation::ResizeOld).await
}
