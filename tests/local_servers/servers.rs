//! The testkit's own servers: each starts, answers, honours its options and stops by PID;
//! concurrent starts get distinct servers; moto serves S3 for archive exports. (Moved from the
//! testkit's unit tests: they need the servers installed.)

use crate::support::INSTANT_DYNALITE;
use testkit::{create_plain_table, http_request, percent_encode, pid_alive, LocalDynamo, Server};

async fn create_and_list(db: &LocalDynamo) {
    let client = db.client().await;
    create_plain_table(&client, "testkit-table").await;
    let tables = client
        .list_tables()
        .send()
        .await
        .unwrap_or_else(|e| panic!("{}: ListTables: {e:?}", db.name()));
    assert_eq!(tables.table_names(), ["testkit-table"], "{}", db.name());
}

fn assert_stops(db: LocalDynamo) {
    let pid = db.pid();
    assert!(pid_alive(pid), "{} PID {pid} not running", db.name());
    drop(db);
    assert!(!pid_alive(pid), "PID {pid} still running after drop");
}

#[tokio::test]
async fn moto_creates_lists_and_stops() {
    let db = LocalDynamo::start(Server::Moto);
    assert_eq!(db.name(), "moto");
    assert!(db.endpoint().starts_with("http://127.0.0.1:"));
    create_and_list(&db).await;
    assert_stops(db);
}

#[tokio::test]
async fn dynalite_creates_lists_and_stops() {
    let db = LocalDynamo::start(INSTANT_DYNALITE);
    assert_eq!(db.name(), "dynalite");
    create_and_list(&db).await;
    assert_stops(db);
}

/// Also what the script's `ddblocal` start promises: the PID is the java process itself.
#[tokio::test]
async fn dynamodb_local_creates_lists_and_stops() {
    let db = LocalDynamo::start(Server::DynamoDbLocal);
    assert_eq!(db.name(), "ddblocal");
    assert!(db.endpoint().starts_with("http://127.0.0.1:"));
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", db.pid())).unwrap_or_default();
    let argv: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect();
    if std::path::Path::new("/proc/self").exists() {
        assert!(argv[0].ends_with("java"), "PID {} is {argv:?}", db.pid());
        assert!(argv.iter().any(|a| a == "DynamoDBLocal.jar"), "{argv:?}");
    }
    create_and_list(&db).await;
    assert_stops(db);
}

#[tokio::test]
async fn dynalite_honours_create_ms() {
    let db = LocalDynamo::start(Server::Dynalite {
        create_ms: 400,
        update_ms: 0,
    });
    let client = db.client().await;
    let status = create_plain_table(&client, "slow-table").await;
    assert_eq!(
        status, "CREATING",
        "dynalite with create_ms should report CREATING first"
    );
}

#[test]
fn concurrent_starts_get_distinct_servers() {
    let handles: Vec<_> = [
        Server::Moto,
        Server::Moto,
        INSTANT_DYNALITE,
        INSTANT_DYNALITE,
        INSTANT_DYNALITE,
    ]
    .into_iter()
    .map(|s| std::thread::spawn(move || LocalDynamo::start(s)))
    .collect();
    let servers: Vec<LocalDynamo> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let mut endpoints: Vec<&str> = servers.iter().map(|s| s.endpoint()).collect();
    endpoints.sort_unstable();
    endpoints.dedup();
    assert_eq!(endpoints.len(), servers.len());
    let pids: Vec<u32> = servers.iter().map(|s| s.pid()).collect();
    drop(servers);
    for pid in pids {
        assert!(!pid_alive(pid), "PID {pid} still running after drop");
    }
}

#[test]
fn moto_serves_s3_buckets_and_listings() {
    let db = LocalDynamo::start(Server::Moto);
    db.create_bucket("testkit-bucket");
    assert_eq!(db.list_objects("testkit-bucket", ""), Vec::<String>::new());
    // The objects are put through the proxy in front of moto (the helpers go to moto's own
    // port): S3 requests pass it unchanged.
    assert_ne!(db.endpoint(), db.server_endpoint());
    for key in ["a/x&y.json", "a/b c.json", "b/z.json"] {
        let path = format!("/testkit-bucket/{}", percent_encode(key).replace("%2F", "/"));
        let (status, body) = http_request(db.endpoint(), "PUT", &path);
        assert_eq!(status, 200, "PUT {path}: {body}");
    }
    assert_eq!(
        db.list_objects("testkit-bucket", "a/"),
        ["a/b c.json", "a/x&y.json"]
    );
    let missing = std::panic::catch_unwind(|| db.list_objects("no-such-bucket", ""));
    let message = *missing.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("HTTP 404"), "{message}");
}
