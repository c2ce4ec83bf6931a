//! `adopt` over the in-memory account ([`fake_aws::FakeAws`]), read back from the fake: what an
//! operator vouches for, and what stays someone else's on it.

use crate::common::at;
use crate::common::fake_runs::create_new;
use ddb_rollover::policy::settings::{Billing, Capacity, StreamView};
use ddb_rollover::policy::stream::Precision;
use ddb_rollover::run::adopt::{adopt, Adoption};
use ddb_rollover::{Operation, Policy};
use fake_aws::{Config, FakeAws};

const THEIR_STREAM: &str = "arn:aws:kinesis:us-east-1:123456789012:stream/audit";
const THEIR_FUNCTION: &str = "arn:aws:lambda:us-east-1:123456789012:function:audit-consumer";
const TABLE: &str = "ts_2018-10-20";

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
    // The family's first run starts its ledger.
    assert!(create_new(&fake, &policy).succeeded());
    // Someone's table under our name, with its own change feed and consumer.
    let mut spec = fake_aws::table_spec(
        TABLE,
        policy.key.clone(),
        Billing::Provisioned(Capacity { read: 5, write: 5 }),
    );
    spec.stream = Some(StreamView::NewAndOldImages);
    fake.foreign_create_table("someone", &spec).unwrap();
    fake.advance(chrono::Duration::minutes(1));
    fake.create_kinesis_stream(THEIR_STREAM);
    fake.foreign_enable_destination("someone", TABLE, THEIR_STREAM, Precision::Millisecond)
        .unwrap();
    fake.create_function(THEIR_FUNCTION);
    let stream = fake.stream_arn(TABLE).expect("the table has a stream");
    let uuid = fake.foreign_map("someone", THEIR_FUNCTION, &stream).unwrap();
    fake.advance(chrono::Duration::minutes(5));

    let operator = fake.operator();
    let at = ddb_rollover::run::clock::simulation(&policy, &[Operation::CreateNew], fake.now()).unwrap();
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
