//! An SDK interceptor that records each DynamoDB request a client sends: the operation
//! (from the `Metadata` the generated client stores in the config bag), the resource it names
//! (`TableName`, or the `ResourceArn` / `TableArn` / `ExportArn` of the calls that take an ARN,
//! from the serialized JSON body), the tags it writes (`Tags` of CreateTable and TagResource),
//! and the tags its target table carries on the server at that moment: what IAM's
//! `aws:RequestTag/KEY` and `aws:ResourceTag/KEY` condition keys read.
//!
//! The table's tags are read from the server as each request leaves, before the server sees it:
//! a TagResource is evaluated against the tags it is about to change, a DeleteTable against the
//! tags of a table that will be gone afterwards. The interceptor is synchronous, so the reading
//! is done by a thread of the recorder's own, with its own runtime and client, while the calling
//! task waits.

use std::fmt;
use std::sync::{mpsc, Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents, SharedInterceptor};
use aws_sdk_dynamodb::error::{BoxError, ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::client::orchestrator::Metadata;

use aws_model::iam::{Request, Tags};

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
    /// The `Tags` the request writes (CreateTable, TagResource): `aws:RequestTag/KEY`.
    pub request_tags: Tags,
    /// The tags the target table carried on the server when the request was sent:
    /// `aws:ResourceTag/KEY`. Empty for a table that did not exist yet (CreateTable), for
    /// requests on no table (ListTables) and for requests on an export (DescribeExport: the
    /// export resource type has no `aws:ResourceTag` key).
    pub resource_tags: Tags,
}

impl Call {
    /// The IAM action: `dynamodb:DescribeTable`.
    pub fn action(&self) -> String {
        format!("{}:{}", self.service.to_ascii_lowercase(), self.operation)
    }

    /// A CreateTable that carries `Tags`: IAM authorizes those as `dynamodb:TagResource` too.
    pub fn creates_tags(&self) -> bool {
        self.operation == "CreateTable" && !self.request_tags.is_empty()
    }

    /// Every IAM action the request needs: its own, plus `dynamodb:TagResource` for a
    /// CreateTable with tags.
    pub fn actions(&self) -> Vec<String> {
        let mut actions = vec![self.action()];
        if self.creates_tags() {
            actions.push(format!("{}:TagResource", self.service.to_ascii_lowercase()));
        }
        actions
    }

    /// What IAM evaluates for the request, one per action of [`Call::actions`]: the action, the
    /// resource, the target's tags and the request's tags. (The TagResource a CreateTable implies
    /// writes the CreateTable's tags on a table that does not exist yet.)
    pub fn requests(&self) -> Vec<Request> {
        let resource = self.resource();
        self.actions()
            .iter()
            .map(|action| {
                Request::new(action, &resource)
                    .with_resource_tags(self.resource_tags.clone())
                    .with_request_tags(self.request_tags.clone())
            })
            .collect()
    }

    /// The resource IAM evaluates: the table's ARN, the request's ARN, or `*` for
    /// operations on no table (ListTables).
    pub fn resource(&self) -> String {
        match (&self.table, &self.resource_arn) {
            (Some(table), _) => aws_model::stack::table_arn(table),
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

    /// Whether IAM evaluates the request on a table (not on an export, nor on no resource):
    /// the requests whose `aws:ResourceTag` keys are the table's tags.
    pub fn on_table(&self) -> bool {
        self.table.is_some()
            || self
                .resource_arn
                .as_deref()
                .and_then(|arn| arn.split_once(":table/"))
                .is_some_and(|(_, path)| !path.contains('/'))
    }

    /// The same request sent to table `table` instead, which carries `resource_tags`: what the
    /// function would send if it took another table for one of its own. Requests on no table
    /// are returned unchanged.
    pub fn retargeted(&self, table: &str, resource_tags: Tags) -> Call {
        let Some(old) = self.table_name() else {
            return self.clone();
        };
        Call {
            table: self.table.as_ref().map(|_| table.to_owned()),
            resource_arn: self
                .resource_arn
                .as_ref()
                .map(|arn| arn.replacen(&format!(":table/{old}"), &format!(":table/{table}"), 1)),
            resource_tags,
            ..self.clone()
        }
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

/// The `Tags` list of a request body (`[{"Key": K, "Value": V}, ...]`), as a map.
fn request_tags(body: &serde_json::Value) -> Tags {
    body.get("Tags")
        .and_then(|t| t.as_array())
        .into_iter()
        .flatten()
        .filter_map(|tag| {
            let key = tag.get("Key")?.as_str()?;
            let value = tag.get("Value").and_then(|v| v.as_str()).unwrap_or_default();
            Some((key.to_owned(), value.to_owned()))
        })
        .collect()
}

/// One question to the tag reader: a table's name, and where to send its tags.
type TagJob = (String, mpsc::Sender<Result<Tags, String>>);

/// Reads tables' tags from the server on a thread of its own (its own current-thread runtime
/// and client, so it shares no connection with the runtime the asking interceptor blocks).
/// The thread ends when the last recorder holding it is dropped.
struct TagReader {
    jobs: mpsc::Sender<TagJob>,
}

impl fmt::Debug for TagReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TagReader")
    }
}

impl TagReader {
    fn start(config: aws_sdk_dynamodb::Config) -> TagReader {
        let (jobs, incoming) = mpsc::channel::<TagJob>();
        std::thread::Builder::new()
            .name("deploy-checks tag reader".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("deploy-checks recorder: a tokio runtime for the tag reader");
                let client = aws_sdk_dynamodb::Client::from_conf(config);
                for (table, reply) in incoming {
                    // The asker may be gone (its request failed otherwise): nothing to do then.
                    let _ = reply.send(runtime.block_on(read_tags(&client, &table)));
                }
            })
            .expect("deploy-checks recorder: spawn the tag reader thread");
        TagReader { jobs }
    }

    /// The tags `table` carries now (none if it does not exist).
    fn read(&self, table: &str) -> Result<Tags, String> {
        let (reply, answer) = mpsc::channel();
        self.jobs
            .send((table.to_owned(), reply))
            .map_err(|_| "the tag reader thread is gone".to_owned())?;
        answer
            .recv()
            .map_err(|_| "the tag reader thread stopped without an answer".to_owned())?
    }
}

/// DescribeTable for the table's ARN (none: the table does not exist, so no tags), then every
/// page of ListTagsOfResource. The ARN the server reports must be the one the checks evaluate:
/// otherwise the tags read would belong to a table IAM is not asked about.
async fn read_tags(client: &aws_sdk_dynamodb::Client, table: &str) -> Result<Tags, String> {
    let described = client.describe_table().table_name(table).send().await;
    let Some(described) = unless_gone(described, || format!("DescribeTable {table}"))? else {
        return Ok(Tags::new());
    };
    let arn = described
        .table()
        .and_then(|t| t.table_arn())
        .ok_or_else(|| format!("DescribeTable {table}: no TableArn"))?
        .to_owned();
    let expected = aws_model::stack::table_arn(table);
    if arn != expected {
        return Err(format!(
            "table {table} has the ARN {arn} on the server, the checks evaluate {expected}: \
             align aws_model::stack's REGION and ACCOUNT_ID with the server's"
        ));
    }
    let mut tags = Tags::new();
    let mut next: Option<String> = None;
    loop {
        let page = client
            .list_tags_of_resource()
            .resource_arn(&arn)
            .set_next_token(next.take())
            .send()
            .await;
        // Deleted between the two calls: gone, so no tags.
        let Some(page) = unless_gone(page, || format!("ListTagsOfResource {arn}"))? else {
            return Ok(Tags::new());
        };
        for tag in page.tags() {
            tags.insert(tag.key().to_owned(), tag.value().to_owned());
        }
        match page.next_token() {
            Some(token) => next = Some(token.to_owned()),
            None => return Ok(tags),
        }
    }
}

/// A call's answer; `None` when the table does not exist (ResourceNotFoundException), and any
/// other error as text, after what `call` names.
fn unless_gone<T, E, R>(
    answer: Result<T, SdkError<E, R>>,
    call: impl FnOnce() -> String,
) -> Result<Option<T>, String>
where
    E: ProvideErrorMetadata + fmt::Debug,
    R: fmt::Debug,
{
    match answer {
        Ok(out) => Ok(Some(out)),
        Err(e) if e.code() == Some("ResourceNotFoundException") => Ok(None),
        Err(e) => Err(format!("{}: {e:?}", call())),
    }
}

/// Records the calls of every client it is attached to. Clones share one record.
#[derive(Clone, Debug)]
pub struct Recorder {
    calls: Arc<Mutex<Vec<Call>>>,
    tags: Arc<TagReader>,
}

impl Recorder {
    /// A recorder that reads each target table's tags from the server `client` talks to. Give
    /// it a client without this recorder: the reading uses a copy of its configuration without
    /// interceptors and with an HTTP client of its own.
    pub fn new(client: &aws_sdk_dynamodb::Client) -> Recorder {
        let mut reader = client.config().to_builder();
        reader.set_interceptors(Vec::<SharedInterceptor>::new());
        reader.set_http_client(None);
        Recorder {
            calls: Arc::default(),
            tags: Arc::new(TagReader::start(reader.build())),
        }
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
        let mut call = Call {
            service: metadata.service().to_owned(),
            operation: metadata.name().to_owned(),
            table: body.get("TableName").and_then(|v| v.as_str()).map(str::to_owned),
            resource_arn: request_arn(&body),
            request_tags: request_tags(&body),
            resource_tags: Tags::new(),
        };
        if call.on_table() {
            if let Some(table) = call.table_name() {
                call.resource_tags = self
                    .tags
                    .read(&table)
                    .map_err(|e| format!("deploy-checks recorder: tags of {table}: {e}"))?;
            }
        }
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).push(call);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(operation: &str, table: Option<&str>, arn: Option<&str>, tags: &[(&str, &str)]) -> Call {
        Call {
            service: "DynamoDB".into(),
            operation: operation.into(),
            table: table.map(str::to_owned),
            resource_arn: arn.map(str::to_owned),
            request_tags: aws_model::iam::tags(tags),
            resource_tags: Tags::new(),
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

        let export = call("DescribeExport", None, Some(&format!("{arn}/export/9")), &[]);
        assert_eq!(export.resource(), format!("{arn}/export/9"));
        assert_eq!(export.table_name().as_deref(), Some("ts_1"));
        assert!(!export.on_table());
        let describe = call("DescribeTable", Some("ts_2"), None, &[]);
        assert_eq!(describe.resource(), aws_model::stack::table_arn("ts_2"));
        assert_eq!(describe.table_name().as_deref(), Some("ts_2"));
        assert!(describe.on_table());
        assert!(call("TagResource", None, Some(arn), &[]).on_table());
        assert_eq!(call("ListTables", None, None, &[]).resource(), "*");
        assert_eq!(call("ListTables", None, None, &[]).table_name(), None);
        assert!(!call("ListTables", None, None, &[]).on_table());

        let create = call("CreateTable", Some("ts_1"), None, &[("f", "ts")]);
        assert_eq!(create.actions(), ["dynamodb:CreateTable", "dynamodb:TagResource"]);
        let requests = create.requests();
        assert_eq!(requests.len(), 2);
        for r in &requests {
            assert_eq!(r.resource, aws_model::stack::table_arn("ts_1"));
            assert_eq!(r.request_tags, aws_model::iam::tags(&[("f", "ts")]));
            assert!(r.resource_tags.is_empty());
        }
        assert_eq!(
            call("CreateTable", Some("ts_1"), None, &[]).actions(),
            ["dynamodb:CreateTable"]
        );
    }

    #[test]
    fn request_tags_come_from_the_body() {
        let body = serde_json::json!({
            "ResourceArn": "arn:aws:dynamodb:us-east-1:123456789012:table/ts_1",
            "Tags": [{"Key": "ddb-rollover:family", "Value": "ts"}, {"Key": "team", "Value": ""}],
        });
        assert_eq!(
            request_tags(&body),
            aws_model::iam::tags(&[("ddb-rollover:family", "ts"), ("team", "")])
        );
        assert!(request_tags(&serde_json::json!({"TableName": "x"})).is_empty());
    }

    #[test]
    fn retargeting_moves_the_request_to_another_table() {
        let arn = aws_model::stack::table_arn("ts_1");
        let family = aws_model::iam::tags(&[("f", "ts_eu")]);
        let tag = call("TagResource", None, Some(&arn), &[("f", "ts")]).retargeted("ts_eu_1", family.clone());
        assert_eq!(tag.resource(), aws_model::stack::table_arn("ts_eu_1"));
        assert_eq!(tag.resource_tags, family);
        assert_eq!(tag.request_tags, aws_model::iam::tags(&[("f", "ts")]));
        let update = call("UpdateTable", Some("ts_1"), None, &[]).retargeted("ts_eu_1", family.clone());
        assert_eq!(update.table.as_deref(), Some("ts_eu_1"));
        let export = call("DescribeExport", None, Some(&format!("{arn}/export/9")), &[]);
        assert_eq!(
            export.retargeted("ts_eu_1", Tags::new()).resource(),
            format!("{}/export/9", aws_model::stack::table_arn("ts_eu_1"))
        );
        let list = call("ListTables", None, None, &[]);
        assert_eq!(list.retargeted("ts_eu_1", family), list);
    }
}
