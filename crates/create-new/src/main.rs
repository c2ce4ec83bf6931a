//! The `create_new` Lambda function: before each period starts, make sure its table (and the
//! next `premake` ones) exist. Everything else is in `ddb_rollover_lambda`.

use ddb_rollover::Operation;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    ddb_rollover_lambda::serve(Operation::CreateNew).await
}
