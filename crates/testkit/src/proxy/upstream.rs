//! The server behind the proxy: every request the proxy forwards, and the calls of its own it
//! makes to behave as AWS does (not recorded, rate-limited or faulted), go through
//! [`Upstream`].

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderMap, HeaderValue, CONTENT_LENGTH};
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::wire::{end_to_end, Body, TARGET};

/// The local server a proxy forwards to.
#[derive(Debug)]
pub(super) struct Upstream {
    /// `http://HOST:PORT` without a trailing slash.
    endpoint: String,
    client: Client<HttpConnector, Body>,
}

impl Upstream {
    /// The server at `endpoint` (`http://HOST:PORT`).
    pub(super) fn new(endpoint: &str) -> Upstream {
        Upstream {
            endpoint: endpoint.trim_end_matches('/').to_owned(),
            // No idle upstream connections: a keep-alive connection the server closes while
            // idle would fail the next request now and then, which no test asked for.
            client: Client::builder(TokioExecutor::new())
                .pool_max_idle_per_host(0)
                .build_http(),
        }
    }

    /// `http://HOST:PORT`, for messages.
    pub(super) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// One call of the proxy's own to the upstream (not recorded), with the client's headers
    /// (Authorization, X-Amz-Date: no server checks signatures, but dynalite wants them present,
    /// and DynamoDB Local keeps one database per access key and Region) and `operation`'s
    /// target. Returns the reply's status and body, or `None` if the upstream did not answer.
    pub(super) async fn call(
        &self,
        headers: &HeaderMap,
        operation: &str,
        body: &serde_json::Value,
    ) -> Option<(StatusCode, String)> {
        self.call_as(headers, &format!("DynamoDB_20120810.{operation}"), body)
            .await
    }

    /// [`Upstream::call`] with the whole `X-Amz-Target` (another service's, such as
    /// `AnyScaleFrontendService.DeleteScalingPolicy`): the client's other headers, its content
    /// type and signature included, tell the server which service it is.
    pub(super) async fn call_as(
        &self,
        headers: &HeaderMap,
        target: &str,
        body: &serde_json::Value,
    ) -> Option<(StatusCode, String)> {
        let mut headers = headers.clone();
        headers.insert(TARGET, HeaderValue::from_str(target).ok()?);
        let reply = self
            .send(hyper::Method::POST, "/", &headers, Bytes::from(body.to_string()))
            .await
            .ok()?;
        let status = reply.status();
        let body = reply.into_body().collect().await.ok()?.to_bytes();
        Some((status, String::from_utf8_lossy(&body).into_owned()))
    }

    /// Sends a request to the upstream with `headers` (less hop-by-hop ones; hyper sets
    /// Content-Length from the body) and returns its reply, read whole.
    pub(super) async fn send(
        &self,
        method: hyper::Method,
        path: &str,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Response<Body>, Box<dyn std::error::Error + Send + Sync>> {
        let head = method == hyper::Method::HEAD;
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.endpoint))
            .body(Full::new(body))?;
        *request.headers_mut() = end_to_end(headers);
        request.headers_mut().remove(CONTENT_LENGTH);
        let (parts, body) = self.client.request(request).await?.into_parts();
        let body = body.collect().await?.to_bytes();
        let mut response = Response::new(Full::new(body));
        *response.status_mut() = parts.status;
        *response.headers_mut() = end_to_end(&parts.headers);
        // A HEAD reply has no body, and its Content-Length is the object's size (S3's
        // HeadObject): kept. Any other is set again by hyper from the body.
        if !head {
            response.headers_mut().remove(CONTENT_LENGTH);
        }
        Ok(response)
    }
}
