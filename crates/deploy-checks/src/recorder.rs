//! An SDK interceptor that records each DynamoDB request a client sends: the operation
//! (from the `Metadata` the generated client stores in the config bag) and the table it names
//! (`TableName`, or `ResourceArn` for the tagging calls, from the serialized JSON body).

use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::Metadata;

/// One request as sent (each retry attempt counts).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Call {
    /// Service name from the client's metadata: `DynamoDB`.
    pub service: String,
    /// Operation name: `DescribeTable`.
    pub operation: String,
    /// `TableName` of the request, if it has one.
    pub table: Option<String>,
    /// `ResourceArn` of the request, if it has one (TagResource, ListTagsOfResource, ...).
    pub resource_arn: Option<String>,
}

impl Call {
    /// The IAM action: `dynamodb:DescribeTable`.
    pub fn action(&self) -> String {
        format!("{}:{}", self.service.to_ascii_lowercase(), self.operation)
    }

    /// The resource IAM evaluates: the table's ARN, the request's ResourceArn, or `*` for
    /// operations on no table (ListTables).
    pub fn resource(&self) -> String {
        match (&self.table, &self.resource_arn) {
            (Some(table), _) => crate::iam::table_arn(table),
            (None, Some(arn)) => arn.clone(),
            (None, None) => "*".into(),
        }
    }
}

/// Records the calls of every client it is attached to. Clones share one record.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    calls: Arc<Mutex<Vec<Call>>>,
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// The same client (endpoint, credentials, retries) with this recorder attached.
    pub fn attach(&self, client: &aws_sdk_dynamodb::Client) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::from_conf(client.config().to_builder().interceptor(self.clone()).build())
    }

    /// Everything recorded so far, in order; the record is emptied.
    pub fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Intercept for Recorder {
    fn name(&self) -> &'static str {
        "deploy-checks call recorder"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let metadata = cfg
            .load::<Metadata>()
            .ok_or("deploy-checks recorder: no operation Metadata in the config bag")?;
        let body: serde_json::Value = context
            .request()
            .body()
            .bytes()
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or_default();
        let field = |key: &str| body.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        let call = Call {
            service: metadata.service().to_owned(),
            operation: metadata.name().to_owned(),
            table: field("TableName"),
            resource_arn: field("ResourceArn"),
        };
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).push(call);
        Ok(())
    }
}
