//! An SDK interceptor that records each DynamoDB request a client sends: the operation
//! (from the `Metadata` the generated client stores in the config bag) and the resource it
//! names (`TableName`, or the `ResourceArn` / `TableArn` / `ExportArn` of the calls that take an
//! ARN, from the serialized JSON body).

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
    /// The ARN the request names, if it has one: `ResourceArn` (TagResource,
    /// ListTagsOfResource), `TableArn` (ExportTableToPointInTime) or `ExportArn`
    /// (DescribeExport, in AWS's shape: see [`aws_export_arn`]).
    pub resource_arn: Option<String>,
    /// A CreateTable that carries `Tags`: IAM authorizes those as `dynamodb:TagResource` too.
    pub creates_tags: bool,
}

impl Call {
    /// The IAM action: `dynamodb:DescribeTable`.
    pub fn action(&self) -> String {
        format!("{}:{}", self.service.to_ascii_lowercase(), self.operation)
    }

    /// Every IAM action the request needs: its own, plus `dynamodb:TagResource` for a
    /// CreateTable with tags.
    pub fn actions(&self) -> Vec<String> {
        let mut actions = vec![self.action()];
        if self.creates_tags {
            actions.push(format!("{}:TagResource", self.service.to_ascii_lowercase()));
        }
        actions
    }

    /// The resource IAM evaluates: the table's ARN, the request's ARN, or `*` for
    /// operations on no table (ListTables).
    pub fn resource(&self) -> String {
        match (&self.table, &self.resource_arn) {
            (Some(table), _) => crate::iam::table_arn(table),
            (None, Some(arn)) => arn.clone(),
            (None, None) => "*".into(),
        }
    }

    /// The table the request touches: its `TableName`, or the name in its ARN
    /// (`...:table/NAME` or `...:table/NAME/export/ID`).
    pub fn table_name(&self) -> Option<String> {
        self.table.clone().or_else(|| {
            let (_, path) = self.resource_arn.as_deref()?.split_once(":table/")?;
            Some(path.split('/').next().unwrap_or(path).to_owned())
        })
    }
}

/// moto (5.2.5) answers ExportTableToPointInTime with an ExportArn of the form
/// `arn:aws:dynamodb:R:A:table/arn:aws:dynamodb:R:A:table/NAME/import/ID`; AWS's is
/// `arn:aws:dynamodb:R:A:table/NAME/export/ID`, and that is what the role's
/// `table/PREFIX_*/export/*` must match in a real account. Any other ARN is kept as it is.
pub fn aws_export_arn(arn: &str) -> String {
    let real = arn.split_once(":table/arn:").and_then(|(_, inner)| {
        let (table_arn, id) = inner.rsplit_once("/import/")?;
        Some(format!("arn:{table_arn}/export/{id}"))
    });
    real.unwrap_or_else(|| arn.to_owned())
}

/// The ARN a request names, from its JSON body.
fn request_arn(body: &serde_json::Value) -> Option<String> {
    let field = |key: &str| body.get(key).and_then(|v| v.as_str());
    field("ResourceArn")
        .or_else(|| field("TableArn"))
        .map(str::to_owned)
        .or_else(|| field("ExportArn").map(aws_export_arn))
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
        let operation = metadata.name().to_owned();
        let tags = body.get("Tags").and_then(|t| t.as_array());
        let call = Call {
            service: metadata.service().to_owned(),
            creates_tags: operation == "CreateTable" && tags.is_some_and(|t| !t.is_empty()),
            operation,
            table: body.get("TableName").and_then(|v| v.as_str()).map(str::to_owned),
            resource_arn: request_arn(&body),
        };
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).push(call);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(operation: &str, table: Option<&str>, arn: Option<&str>, creates_tags: bool) -> Call {
        Call {
            service: "DynamoDB".into(),
            operation: operation.into(),
            table: table.map(str::to_owned),
            resource_arn: arn.map(str::to_owned),
            creates_tags,
        }
    }

    #[test]
    fn moto_export_arns_take_the_aws_shape() {
        assert_eq!(
            aws_export_arn(
                "arn:aws:dynamodb:us-east-1:123456789012:table/arn:aws:dynamodb:us-east-1:123456789012:table/t_1/import/7b8d"
            ),
            "arn:aws:dynamodb:us-east-1:123456789012:table/t_1/export/7b8d"
        );
        let real = "arn:aws:dynamodb:us-east-1:123456789012:table/t_1/export/0123-abcd";
        assert_eq!(aws_export_arn(real), real);
    }

    #[test]
    fn resources_tables_and_implied_actions() {
        let arn = "arn:aws:dynamodb:us-east-1:123456789012:table/ts_1";
        let body: serde_json::Value = serde_json::json!({ "TableArn": arn, "S3Bucket": "b" });
        assert_eq!(request_arn(&body).as_deref(), Some(arn));

        let export = call("DescribeExport", None, Some(&format!("{arn}/export/9")), false);
        assert_eq!(export.resource(), format!("{arn}/export/9"));
        assert_eq!(export.table_name().as_deref(), Some("ts_1"));
        let describe = call("DescribeTable", Some("ts_2"), None, false);
        assert_eq!(describe.resource(), crate::iam::table_arn("ts_2"));
        assert_eq!(describe.table_name().as_deref(), Some("ts_2"));
        assert_eq!(call("ListTables", None, None, false).resource(), "*");
        assert_eq!(call("ListTables", None, None, false).table_name(), None);

        assert_eq!(
            call("CreateTable", Some("ts_1"), None, true).actions(),
            ["dynamodb:CreateTable", "dynamodb:TagResource"]
        );
        assert_eq!(
            call("CreateTable", Some("ts_1"), None, false).actions(),
            ["dynamodb:CreateTable"]
        );
    }
}
