//! Plain HTTP/1.1 over a TcpStream, for the few requests tests make outside the SDK (S3 on
//! moto, a server's own endpoint): one request per connection, `Connection: close`.

use std::time::Duration;

/// One request with an empty body over a fresh connection; returns (status, body).
/// `Connection: close` lets the body be read to the end of the stream.
pub fn http_request(endpoint: &str, method: &str, path: &str) -> (u16, String) {
    http_request_with_body(endpoint, method, path, b"")
}

/// [`http_request`] with a body.
pub fn http_request_with_body(endpoint: &str, method: &str, path: &str, body: &[u8]) -> (u16, String) {
    let (status, reply) = http_exchange(endpoint, method, path, &[], body);
    (status, String::from_utf8_lossy(&reply).into_owned())
}

/// One request with extra headers over a fresh connection; returns (status, the body's bytes).
pub fn http_exchange(
    endpoint: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    use std::io::{Read, Write};
    let authority = endpoint
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("testkit: {endpoint} is not http://HOST:PORT"));
    let mut stream = std::net::TcpStream::connect(authority)
        .unwrap_or_else(|e| panic!("testkit: connect to {authority}: {e}"));
    let timeout = Some(Duration::from_secs(30));
    stream.set_read_timeout(timeout).expect("a non-zero timeout");
    stream.set_write_timeout(timeout).expect("a non-zero timeout");
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream
        .write_all(&[request.as_bytes(), body].concat())
        .unwrap_or_else(|e| panic!("testkit: {method} {path}: {e}"));
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .unwrap_or_else(|e| panic!("testkit: {method} {path}: reading the reply: {e}"));
    parse_http_response(&response)
        .unwrap_or_else(|| panic!("testkit: {method} {path}: not an HTTP reply: {response:?}"))
}

/// (status, body) of a whole HTTP/1.1 reply. Chunked bodies are not decoded: moto sends
/// Content-Length, and a chunked reply is refused rather than misread.
fn parse_http_response(reply: &[u8]) -> Option<(u16, Vec<u8>)> {
    let split = reply.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&reply[..split]);
    let body = &reply[split + 4..];
    let status = head.lines().next()?.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head
        .lines()
        .any(|l| l.to_ascii_lowercase().replace(' ', "") == "transfer-encoding:chunked");
    (!chunked).then(|| (status, body.to_vec()))
}

/// The text of every `<name>...</name>` element, XML entities decoded: enough for S3's flat
/// listings, which nest no element of the same name.
pub(crate) fn xml_elements(xml: &str, name: &str) -> Vec<String> {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        out.push(xml_unescape(&after[..end]));
        rest = &after[end + close.len()..];
    }
    out
}

fn xml_unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// RFC 3986 percent-encoding of everything but the unreserved characters.
pub fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_http_replies_and_s3_keys() {
        assert_eq!(
            parse_http_response(b"HTTP/1.1 404 NOT FOUND\r\nContent-Length: 2\r\n\r\nno"),
            Some((404, b"no".to_vec()))
        );
        assert_eq!(
            parse_http_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok"),
            None
        );
        assert_eq!(parse_http_response(b"garbage"), None);
        let xml = "<R><Contents><Key>a/&amp;b&lt;</Key></Contents><Contents><Key>c</Key></Contents></R>";
        assert_eq!(xml_elements(xml, "Key"), ["a/&b<", "c"]);
        assert_eq!(percent_encode("ddb-rollover/x y"), "ddb-rollover%2Fx%20y");
    }
}
