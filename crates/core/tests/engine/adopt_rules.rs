//! `adopt` over the in-memory account ([`fake_aws::FakeAws`]), read back from the fake: what an
//! operator vouches for, and what stays someone else's on it.

use crate::common::at;
use crate::common::fake_runs::create_new;
use ddb_rollover::observe;
use ddb_rollover::policy::Precision;
use ddb_rollover::policy::{Billing, Capacity, StreamView};
use ddb_rollover::{adopt, Adoption};
use ddb_rollover::{Operation, Policy, Scope};
use fake_aws::{Config, FakeAws};

const THEIR_STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/audit";
const THEIR_FUNCTION: &str = "arn:aws:lambda:us-east-1:123456789012:function:audit-consumer";
const TABLE: &str = "ts_2018-10-20";

/// The family's first run (it starts the ledger), then someone's table with a stream under
/// the policy's name [`TABLE`].
fn someones_streaming_table(fake: &FakeAws, policy: &Policy) {
    assert!(create_new(fake, policy).succeeded());
    let mut spec = fake_aws::table_spec(
        TABLE,
        policy.key.clone(),
        Billing::Provisioned(Capacity { read: 5, write: 5 }),
    );
    spec.stream = Some(StreamView::NewAndOldImages);
    fake.foreign_create_table("someone", &spec).unwrap();
}

/// Issue 38: `adopt` did not name someone else's Kinesis destination or event source mapping
/// on the table (it read them only when the policy names a stream or deletes tables), so an
/// operator vouched for a table whose change feed is someone else's without being told, and
/// retention then kept it for a reason adopt never said. Both are named, like every foreign
/// part, whatever the policy says of streams.
#[test]
fn adopt_names_someone_elses_destination_and_mapping_on_the_table() {
    let policy = Policy::from_toml("prefix = \"ts\"\n").unwrap();
    assert!(policy.stream.kinesis.is_none() && policy.stream.lambda.is_none() && !policy.deletes());
    let fake = FakeAws::new("ts", at("2018-10-26T10:00:00Z"), Config::default());
    // Someone's table under our name, with its own change feed and consumer.
    someones_streaming_table(&fake, &policy);
    fake.advance(chrono::Duration::minutes(1));
    fake.create_kinesis_stream(THEIR_STREAM);
    fake.foreign_enable_destination("someone", TABLE, THEIR_STREAM, Precision::Millisecond)
        .unwrap();
    fake.create_function(THEIR_FUNCTION);
    let stream = fake.stream_arn(TABLE).expect("the table has a stream");
    let uuid = fake.foreign_map("someone", THEIR_FUNCTION, &stream).unwrap();
    fake.advance(chrono::Duration::minutes(5));

    let operator = fake.operator();
    let at = ddb_rollover::simulation(&policy, &[Operation::CreateNew], fake.now()).unwrap();
    let report =
        futures::executor::block_on(adopt(&operator, &policy, &at, &[TABLE.to_string()], true)).unwrap();
    let line = &report.tables[0];
    assert!(matches!(line.action, Adoption::Record { .. }), "{line:#?}");
    let notes = line.notes.join("\n");
    assert!(
        notes.contains(&format!("Kinesis data stream destination to {THEIR_STREAM}")),
        "{notes}"
    );
    assert!(
        notes.contains(&format!("Lambda event source mapping {uuid} to {THEIR_FUNCTION}")),
        "{notes}"
    );
    assert!(
        line.notes
            .iter()
            .all(|n| n.contains("retention will not delete this table")),
        "{notes}"
    );
}

/// Hostile read of issue 38, finding 5: adopting a hand-made table took the mappings of the
/// policy's consumer function already on it as ours without naming them, so someone else's
/// mapping of that function was recorded as the family's (and went with the table at deletion)
/// while the operator vouched for the table alone. The adoption names each feed it takes, in
/// the dry run the operator reads before `--yes`, and records exactly those.
#[test]
fn adopt_names_each_mapping_of_the_family_consumer_it_takes_as_ours() {
    const CONSUMER: &str = "arn:aws:lambda:us-east-1:123456789012:function:family-consumer";
    let policy = Policy::from_toml(&format!(
        "prefix = \"ts\"\n[template]\nstream = \"new_and_old_images\"\n[stream.lambda]\nfunction = \"{CONSUMER}\"\n"
    ))
    .unwrap();
    let fake = FakeAws::new("ts", at("2018-10-26T10:00:00Z"), Config::default());
    fake.create_function(CONSUMER);
    someones_streaming_table(&fake, &policy);
    let stream = fake.stream_arn(TABLE).expect("the table has a stream");
    let uuid = fake.foreign_map("someone", CONSUMER, &stream).unwrap();
    fake.advance(chrono::Duration::minutes(5));

    let operator = fake.operator();
    let at = ddb_rollover::simulation(&policy, &[Operation::CreateNew], fake.now()).unwrap();
    let dry =
        futures::executor::block_on(adopt(&operator, &policy, &at, &[TABLE.to_string()], true)).unwrap();
    let Adoption::Record { feeds, .. } = &dry.tables[0].action else {
        panic!("{:#?}", dry.tables[0]);
    };
    assert_eq!(
        feeds.mappings,
        vec![uuid.clone()],
        "the dry run names the mapping it takes"
    );
    let json = serde_json::to_string(&dry).unwrap();
    assert!(json.contains(&uuid), "the report's JSON names it: {json}");

    let done =
        futures::executor::block_on(adopt(&operator, &policy, &at, &[TABLE.to_string()], false)).unwrap();
    assert!(
        matches!(done.tables[0].action, Adoption::Record { .. }),
        "{done:#?}"
    );
    // Read back from the family's ledger: exactly the mapping the line named.
    let observed = futures::executor::block_on(observe(&fake, &policy, Scope::Full(fake.now()), 4)).unwrap();
    let record = &observed.book.table(TABLE).expect("recorded").record;
    assert_eq!(
        record.feeds.as_ref().map(|f| f.mappings.clone()),
        Some(vec![uuid])
    );
}
