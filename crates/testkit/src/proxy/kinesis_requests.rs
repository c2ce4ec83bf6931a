//! The requests of the four Kinesis destination operations, checked as DynamoDB checks them
//! (every bad field named at once, in AWS's words), the table they name looked up on the
//! upstream, and the answers and refusals `kinesis_destinations` gives.

use hyper::header::HeaderMap;
use hyper::Response;
use serde_json::{json, Value};

use super::kinesis_records::Precision;
use super::upstream::Upstream;
use super::wire::{aws_error, table_of_arn, Body};

/// An error answer the model gives: HTTP status, AWS error type and message.
#[derive(Debug)]
pub(super) struct Refusal {
    status: u16,
    error_type: &'static str,
    message: String,
}

impl Refusal {
    /// A 400 `error_type` refusal.
    pub(super) fn client(error_type: &'static str, message: String) -> Refusal {
        Refusal {
            status: 400,
            error_type,
            message,
        }
    }

    /// An HTTP 500 naming a failure of the proxy's own calls.
    pub(super) fn internal(message: String) -> Refusal {
        Refusal {
            status: 500,
            error_type: "InternalServerError",
            message,
        }
    }

    /// The reply the client gets.
    pub(super) fn reply(&self) -> Response<Body> {
        aws_error(self.status, self.error_type, &self.message)
    }
}

/// One of [`super::kinesis_destinations::OPERATIONS`]' requests, checked: every bad field named at once, in AWS's words.
pub(super) struct Request {
    pub(super) table: String,
    pub(super) stream_arn: Option<String>,
    pub(super) precision: Option<Precision>,
}

impl Request {
    pub(super) fn read(operation: &str, body: &Value) -> Result<Request, Refusal> {
        let mut errors = Vec::new();
        let table = body["TableName"].as_str().unwrap_or_default().to_owned();
        if table.is_empty() {
            errors.push(
                "Value null at 'tableName' failed to satisfy constraint: Member must not be null".to_owned(),
            );
        }
        let stream_arn = body["StreamArn"].as_str().map(str::to_owned);
        if operation != "DescribeKinesisStreamingDestination" {
            match &stream_arn {
                None => errors.push("Value null at 'streamArn' failed to satisfy constraint: Member must not be null".to_owned()),
                Some(arn) if !(37..=1024).contains(&arn.len()) => errors.push(format!(
                    "Value '{arn}' at 'streamArn' failed to satisfy constraint: Member must have length between 37 and 1024"
                )),
                Some(_) => {}
            }
        }
        let configuration = match operation {
            "EnableKinesisStreamingDestination" => "enableKinesisStreamingConfiguration",
            _ => "updateKinesisStreamingConfiguration",
        };
        let mut configuration_name = configuration.to_owned();
        configuration_name[..1].make_ascii_uppercase();
        let asked = &body[configuration_name.as_str()]["ApproximateCreationDateTimePrecision"];
        let precision = match asked.as_str() {
            None => None,
            Some(text) => {
                let parsed = Precision::parse(text);
                if parsed.is_none() {
                    errors.push(format!(
                        "Value '{text}' at '{configuration}.approximateCreationDateTimePrecision' failed to satisfy constraint: Member must satisfy enum value set: [MILLISECOND, MICROSECOND]"
                    ));
                }
                parsed
            }
        };
        if errors.is_empty() {
            return Ok(Request {
                table,
                stream_arn,
                precision,
            });
        }
        let count = errors.len();
        let plural = if count == 1 { "" } else { "s" };
        let message = format!("{count} validation error{plural} detected: {}", errors.join("; "));
        Err(Refusal::client("ValidationException", message))
    }
}

/// The name of the table `name_or_arn` names, if the upstream has it; else AWS's
/// ResourceNotFoundException (or a 500 when the upstream cannot be asked).
pub(super) async fn existing_table(
    upstream: &Upstream,
    headers: &HeaderMap,
    name_or_arn: &str,
) -> Result<String, Refusal> {
    let name = table_of_arn(name_or_arn).unwrap_or_else(|| name_or_arn.to_owned());
    match upstream
        .call(headers, "DescribeTable", &json!({ "TableName": name }))
        .await
    {
        Some((status, _)) if status.is_success() => Ok(name),
        Some((status, _)) if status.is_client_error() => Err(Refusal::client(
            "ResourceNotFoundException",
            format!("Requested resource not found: Table: {name} not found"),
        )),
        _ => Err(Refusal::internal(format!(
            "testkit proxy: DescribeTable {name} on {} failed",
            upstream.endpoint()
        ))),
    }
}

/// A successful JSON answer.
pub(super) fn json_reply(answer: &Value) -> Response<Body> {
    let mut response = Response::new(Body::from(answer.to_string()));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(super::wire::AMZ_JSON),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_requests_name_every_bad_field() {
        let body = json!({"EnableKinesisStreamingConfiguration": {"ApproximateCreationDateTimePrecision": "SECOND"}});
        let Err(refusal) = Request::read("EnableKinesisStreamingDestination", &body) else {
            panic!("accepted a request without table or stream");
        };
        let text = refusal.message;
        for field in [
            "tableName",
            "streamArn",
            "enableKinesisStreamingConfiguration.approximateCreationDateTimePrecision",
            "3 validation errors",
        ] {
            assert!(text.contains(field), "{field} not in {text}");
        }
        assert!(Request::read("DescribeKinesisStreamingDestination", &json!({"TableName": "t"})).is_ok());
    }
}
