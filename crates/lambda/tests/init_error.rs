//! A cold start that cannot build its handler tells Lambda why, through the Runtime API's
//! `/runtime/init/error` (as Lambda documents for custom runtimes), instead of just exiting.
//! A fake Runtime API on loopback records what arrives. Own test binary: it sets
//! `AWS_LAMBDA_RUNTIME_API` for the whole process.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use ddb_rollover::policy::POLICY_ENV;
use ddb_rollover_lambda::report_init_error;
use ddb_rollover_stack::policy_from_env;

/// Accepts one request and answers 202 Accepted; returns the request line, headers and body.
fn fake_runtime_api() -> (String, std::thread::JoinHandle<(String, Vec<String>, String)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request_line = String::new();
        reader.read_line(&mut request_line).unwrap();
        let mut headers = Vec::new();
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end().to_string();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            headers.push(line.to_ascii_lowercase());
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let mut stream = stream;
        stream
            .write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 16\r\n\r\n{\"status\":\"OK\"}\n")
            .unwrap();
        (
            request_line.trim_end().to_string(),
            headers,
            String::from_utf8(body).unwrap(),
        )
    });
    (address, handle)
}

#[tokio::test]
async fn a_bad_environment_is_reported_to_the_runtime_apis_init_error_endpoint() {
    std::env::set_var(POLICY_ENV, r#"{"prefix":"a b","period":"x"}"#);
    let error = policy_from_env().unwrap_err();
    let (address, server) = fake_runtime_api();
    std::env::set_var("AWS_LAMBDA_RUNTIME_API", &address);

    report_init_error(&error).await.unwrap();

    let (request_line, headers, body) = server.join().unwrap();
    assert_eq!(request_line, "POST /2018-06-01/runtime/init/error HTTP/1.1");
    assert!(
        headers.contains(&"lambda-runtime-function-error-type: runtime.initerror".to_string()),
        "{headers:?}"
    );
    let diagnostic: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(diagnostic["errorType"], "InitError");
    let message = diagnostic["errorMessage"].as_str().unwrap();
    // Every variable the template sets but this environment lacks, with its stack parameter.
    for named in [
        "ROLLOVER_TABLE_PREFIX",
        "TablePrefix",
        "ROLLOVER_PUBLISH_TABLES",
        "is not set",
    ] {
        assert!(message.contains(named), "should name {named}: {message}");
    }
}
