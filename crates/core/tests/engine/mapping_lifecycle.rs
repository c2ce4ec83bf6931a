//! The family's consumer function end to end over the in-memory account
//! ([`fake_aws::FakeAws`]: each table's latest stream ARN, event source mappings Creating for
//! `mapping_delay` of fake time, then Enabled; deleting a table leaves them; the family role's
//! `lambda:FunctionArn` grants): create_new maps the function to each table's stream and waits
//! until it is Enabled; someone else's mapping is never touched and keeps its table from
//! deletion; resize_old removes our mapping once it deletes the table; a deleted consumer
//! function fails create_new loudly. Read back from the fake, not from the report.

use crate::common::at;
use crate::common::fake_runs::create_new;
use crate::common::policies::{policy_of, STRING_KEY};
use chrono::Duration;
use ddb_rollover::ledger::{keys, TableRecord};
use ddb_rollover::plan::verdict::ForeignPart;
use ddb_rollover::plan::Decision;
use ddb_rollover::run::control::ErrorKind;
use ddb_rollover::run::observe::observe;
use ddb_rollover::run::status::status;
use ddb_rollover::table::stream::MappingState;
use ddb_rollover::{run, ApplyOptions, Operation, Outcome, Policy, RunReport, Scope};
use fake_aws::scenarios::FAMILY_CONSUMER;
use fake_aws::{Config, FakeAws};

const THEIRS: &str = "arn:aws:lambda:us-east-1:123456789012:function:audit";
const TABLES: [&str; 2] = ["timeseries_2018-10-25", "timeseries_2018-10-26"];

/// A daily policy whose tables have a stream mapped to the family's consumer (the function the
/// fake's stacks grant), deleting tables a period old.
fn policy() -> Policy {
    policy_of(&[
        STRING_KEY,
        "[template]\nstream = \"new_and_old_images\"\n",
        "[retention]\ndelete_after = 1\nkeep_newest = 1\nmax_deletes_per_run = 5\n",
        &format!("[stream.lambda]\nfunction = \"{FAMILY_CONSUMER}\"\n"),
    ])
}

fn fake() -> FakeAws {
    let config = Config {
        create_delay: Duration::seconds(20),
        mapping_delay: Duration::seconds(30),
        ..Config::default()
    };
    let fake = FakeAws::new("timeseries", at("2018-10-25T23:45:00Z"), config);
    fake.create_function(FAMILY_CONSUMER);
    fake
}

fn resize_old(fake: &FakeAws, policy: &Policy) -> RunReport {
    let at = ddb_rollover::run::clock::simulation(policy, &[Operation::ResizeOld], fake.now()).unwrap();
    futures::executor::block_on(run(
        fake,
        policy,
        Operation::ResizeOld,
        &at,
        ApplyOptions::default(),
    ))
    .unwrap()
}

/// (function, state, made by us) of each mapping on `table`'s latest stream.
fn mappings(fake: &FakeAws, table: &str) -> Vec<(String, MappingState, bool)> {
    let stream = fake.stream_arn(table).expect("the table has a stream");
    let mut list: Vec<_> = fake
        .mappings_on(&stream)
        .into_iter()
        .map(|m| (m.function_arn, m.state, m.maker.is_us()))
        .collect();
    list.sort_by(|a, b| a.0.cmp(&b.0));
    list
}

fn ours_enabled() -> Vec<(String, MappingState, bool)> {
    vec![(FAMILY_CONSUMER.to_string(), MappingState::Enabled, true)]
}

#[test]
fn create_new_maps_each_tables_stream_and_maps_again_one_someone_deleted() {
    let fake = fake();
    let report = create_new(&fake, &policy());
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(ready.ready, "{}\n{report:#?}", ready.line());
    assert_eq!(report.summary.failed, 0, "{report:#?}");
    for table in TABLES {
        assert_eq!(mappings(&fake, table), ours_enabled(), "{table}");
    }
    // Someone else's consumer on the first table; ours deleted on the second.
    fake.create_function(THEIRS);
    fake.foreign_map("someone", THEIRS, &fake.stream_arn(TABLES[0]).unwrap())
        .unwrap();
    let ours = fake.mappings_on(&fake.stream_arn(TABLES[1]).unwrap())[0]
        .uuid
        .clone();
    fake.foreign_unmap("someone", &ours).unwrap();
    fake.advance(Duration::minutes(5));
    let again = create_new(&fake, &policy());
    assert!(again.next_table_ready.as_ref().unwrap().ready, "{again:#?}");
    let made: Vec<&str> = again
        .tables
        .iter()
        .filter(|l| matches!(l.item.decision, Decision::CreateEventSourceMapping(_)))
        .map(|l| l.item.table.as_str())
        .collect();
    assert_eq!(
        made,
        [TABLES[1]],
        "only the table without our mapping: {again:#?}"
    );
    assert_eq!(
        mappings(&fake, TABLES[0]),
        [
            (THEIRS.to_string(), MappingState::Enabled, false),
            (FAMILY_CONSUMER.to_string(), MappingState::Enabled, true),
        ]
    );
    assert_eq!(mappings(&fake, TABLES[1]), ours_enabled());
}

#[test]
fn someone_elses_mapping_keeps_its_table_and_ours_goes_with_the_table() {
    let fake = fake();
    assert!(create_new(&fake, &policy()).next_table_ready.unwrap().ready);
    let stream = fake.stream_arn(TABLES[0]).unwrap();
    fake.create_function(THEIRS);
    let theirs = fake.foreign_map("someone", THEIRS, &stream).unwrap();
    fake.set_now(at("2018-10-27T00:15:00Z"));
    let kept = resize_old(&fake, &policy());
    assert!(fake.with_world(|w| w.tables.contains_key(TABLES[0])), "{kept:#?}");
    // Named in the verdict as someone else's, vetoing the deletion.
    let judged = kept.tables.iter().filter(|l| l.item.table == TABLES[0]).any(|l| {
        l.item.verdict.as_ref().is_some_and(|v| {
            v.foreign
                .iter()
                .any(|p| matches!(p, ForeignPart::EventSourceMapping { function_arn, .. } if function_arn == THEIRS))
        })
    });
    assert!(judged, "{kept:#?}");
    assert_eq!(fake.mappings_on(&stream).len(), 2, "nothing unmapped");
    // Their consumer gone, the next run deletes the table and removes our mapping.
    fake.foreign_unmap("someone", &theirs).unwrap();
    fake.advance(Duration::minutes(5));
    let deleted = resize_old(&fake, &policy());
    assert_eq!(deleted.summary.failed, 0, "{deleted:#?}");
    let unmap = deleted
        .tables
        .iter()
        .find(|l| {
            l.item.table == TABLES[0] && matches!(l.item.decision, Decision::DeleteEventSourceMapping(_))
        })
        .unwrap_or_else(|| panic!("no unmap line: {deleted:#?}"));
    assert_eq!(unmap.outcome, Outcome::Done);
    fake.advance(Duration::minutes(5));
    assert!(fake.with_world(|w| !w.tables.contains_key(TABLES[0])));
    assert!(
        fake.mappings_on(&stream).is_empty(),
        "{:?}",
        fake.mappings_on(&stream)
    );
}

#[test]
fn a_deleted_consumer_function_fails_create_new_on_the_new_tables_mapping() {
    let fake = fake();
    assert!(create_new(&fake, &policy()).next_table_ready.unwrap().ready);
    fake.foreign_delete_function("someone", FAMILY_CONSUMER).unwrap();
    fake.set_now(at("2018-10-26T23:45:00Z"));
    let report = create_new(&fake, &policy());
    assert!(!report.next_table_ready.as_ref().unwrap().ready, "{report:#?}");
    let line = report
        .tables
        .iter()
        .find(|l| {
            l.item.table == "timeseries_2018-10-27"
                && matches!(l.item.decision, Decision::CreateEventSourceMapping(_))
        })
        .unwrap_or_else(|| panic!("no mapping line: {report:#?}"));
    assert_eq!(line.outcome, Outcome::Failed, "{line:#?}");
    assert!(
        line.error
            .as_deref()
            .unwrap_or_default()
            .contains("Function not found"),
        "{line:#?}"
    );
    let stream = fake.stream_arn("timeseries_2018-10-27").unwrap();
    assert!(fake.mappings_on(&stream).is_empty());
}

/// The ledger's record of `table`, as stored in the fake's ledger.
fn record(fake: &FakeAws, table: &str) -> TableRecord {
    let ledger = policy().naming().ledger_name();
    fake.with_world(|w| {
        let body = w.tables[&ledger]
            .records
            .iter()
            .find(|((_, key), _)| key == &keys::table(table))
            .map(|(_, r)| r.body.clone())
            .unwrap_or_else(|| panic!("no record of {table}"));
        serde_json::from_str(&body).unwrap()
    })
}

/// Someone else maps our consumer function to one of our tables' streams (after removing ours):
/// the function's name is not proof. Their mapping is not ours by the UUID the ledger recorded,
/// so create_new does not call it ours (it fails loudly on Lambda's conflict instead), and it
/// keeps the table from deletion, untouched. Before the ledger recorded mappings, the policy's
/// function made any mapping ours: it was removed and the table deleted.
#[test]
fn a_mapping_of_our_function_that_someone_else_made_is_theirs() {
    let fake = fake();
    assert!(create_new(&fake, &policy()).next_table_ready.unwrap().ready);
    let stream = fake.stream_arn(TABLES[0]).unwrap();
    let ours = fake.mappings_on(&stream)[0].uuid.clone();
    assert_eq!(
        record(&fake, TABLES[0]).feeds.unwrap().mappings,
        std::slice::from_ref(&ours)
    );
    fake.foreign_unmap("someone", &ours).unwrap();
    fake.advance(Duration::minutes(5));
    let theirs = fake.foreign_map("someone", FAMILY_CONSUMER, &stream).unwrap();
    let again = create_new(&fake, &policy());
    let line = again
        .tables
        .iter()
        .find(|l| {
            l.item.table == TABLES[0] && matches!(l.item.decision, Decision::CreateEventSourceMapping(_))
        })
        .unwrap_or_else(|| panic!("no mapping line: {again:#?}"));
    assert_eq!(line.outcome, Outcome::Failed, "{line:#?}");
    assert!(
        line.error
            .as_deref()
            .unwrap_or_default()
            .contains("does not record it as ours"),
        "{line:#?}"
    );
    fake.set_now(at("2018-10-27T00:15:00Z"));
    let kept = resize_old(&fake, &policy());
    assert!(fake.with_world(|w| w.tables.contains_key(TABLES[0])), "{kept:#?}");
    let on_stream: Vec<(String, bool)> = fake
        .mappings_on(&stream)
        .into_iter()
        .map(|m| (m.uuid, m.maker.is_us()))
        .collect();
    assert_eq!(on_stream, [(theirs, false)], "their mapping is untouched");
}

/// A run that mapped the consumer and crashed before recording the UUID (its ledger write
/// failed): the intent it wrote makes the mapping Lambda modified since ours. The next run
/// does not map again (Lambda would refuse), a run once the writer cannot be alive records the
/// UUID, and resize_old removes the mapping with the table.
#[test]
fn a_mapping_whose_record_was_lost_is_resolved_by_the_intent() {
    let fake = fake();
    let ledger = policy().naming().ledger_name();
    let next = TABLES[1];
    fake.around(
        fake_aws::Around::After,
        "CreateEventSourceMapping",
        next,
        move |fake| {
            fake.fail_times("PutItem", &ledger, ErrorKind::Other, 1);
        },
    );
    let first = create_new(&fake, &policy());
    let line = first
        .tables
        .iter()
        .find(|l| l.item.table == next && matches!(l.item.decision, Decision::CreateEventSourceMapping(_)))
        .unwrap_or_else(|| panic!("no mapping line: {first:#?}"));
    assert_eq!(line.outcome, Outcome::Failed, "{line:#?}");
    let feeds = record(&fake, next).feeds.unwrap();
    assert!(
        feeds.mappings.is_empty() && feeds.mapping_intended.is_some(),
        "{feeds:?}"
    );
    fake.advance(Duration::minutes(5));
    let again = create_new(&fake, &policy());
    assert!(again.next_table_ready.as_ref().unwrap().ready, "{again:#?}");
    assert_eq!(again.summary.failed, 0, "{again:#?}");
    assert_eq!(mappings(&fake, next), ours_enabled(), "mapped once");
    fake.advance(Duration::minutes(20));
    let settled = create_new(&fake, &policy());
    assert_eq!(settled.summary.failed, 0, "{settled:#?}");
    let stream = fake.stream_arn(next).unwrap();
    let uuid = fake.mappings_on(&stream)[0].uuid.clone();
    let feeds = record(&fake, next).feeds.unwrap();
    assert_eq!((feeds.mappings, feeds.mapping_intended), (vec![uuid], None));
    fake.set_now(at("2018-10-28T00:15:00Z"));
    let deleted = resize_old(&fake, &policy());
    assert_eq!(deleted.summary.failed, 0, "{deleted:#?}");
    fake.advance(Duration::minutes(5));
    assert!(fake.with_world(|w| !w.tables.contains_key(next)), "{deleted:#?}");
    assert!(
        fake.mappings_on(&stream).is_empty(),
        "our mapping went with the table"
    );
}

/// Issue 38: a read of the evidence a deletion needs that fails (the role may not call it, an
/// SCP, a persistent error) is a failure, not a quiet "kept": the run fails once for the read,
/// naming it and every table it failed on, and keeps them. Before: each table was kept with a
/// Skipped line and a log line, and the run succeeded, so retention stopped for good unseen.
#[test]
fn a_failed_evidence_read_keeps_the_tables_and_fails_the_run_once() {
    let fake = fake();
    assert!(create_new(&fake, &policy()).next_table_ready.unwrap().ready);
    fake.set_now(at("2018-10-28T23:45:00Z"));
    assert!(create_new(&fake, &policy()).next_table_ready.unwrap().ready);
    // Due for deletion on 10-30: the tables of 10-25 to 10-28 but the newest kept.
    fake.set_now(at("2018-10-30T00:15:00Z"));
    for table in TABLES {
        fake.fail("ListEventSourceMappings", table, ErrorKind::Other);
    }
    let failed = resize_old(&fake, &policy());
    assert!(!failed.succeeded(), "{failed:#?}");
    let lines: Vec<_> = failed.lines_with(Outcome::Failed).collect();
    assert_eq!(lines.len(), 1, "once per read, not per table: {failed:#?}");
    for table in TABLES {
        assert!(lines[0].item.reason.contains(table), "{}", lines[0].item.reason);
    }
    assert!(
        lines[0]
            .item
            .reason
            .starts_with("ListEventSourceMappings failed for 2 tables"),
        "{}",
        lines[0].item.reason
    );
    fake.advance(Duration::minutes(5));
    for table in TABLES {
        assert!(
            fake.with_world(|w| w.tables.contains_key(table)),
            "{table} deleted"
        );
    }
}

/// Turning a table's stream off ends the feed of every mapping on it: the template's `"off"`,
/// and the first step of a view change alike. Someone else's mapping vetoes it, as it vetoes a
/// deletion: that table keeps its stream, named in the run's line; the other is turned off.
#[test]
fn someone_elses_mapping_keeps_the_stream_the_template_would_turn_off() {
    for template in ["stream = \"off\"", "stream = \"keys_only\""] {
        let fake = fake();
        assert!(create_new(&fake, &policy()).next_table_ready.unwrap().ready);
        fake.create_function(THEIRS);
        let theirs = fake
            .foreign_map("someone", THEIRS, &fake.stream_arn(TABLES[0]).unwrap())
            .unwrap();
        fake.advance(Duration::minutes(5));
        let changed = policy_of(&[STRING_KEY, &format!("[template]\n{template}\n")]);
        // status names their mapping, and says the run leaves the stream on for it.
        let now = fake.now();
        let observed = futures::executor::block_on(observe(&fake, &changed, Scope::Full(now), 4)).unwrap();
        let line = status(&changed, now, &observed)
            .tables
            .into_iter()
            .find(|l| l.table == TABLES[0])
            .unwrap();
        let said = serde_json::to_string(&line).unwrap();
        for part in [
            theirs.as_str(),
            "event_source_mapping",
            "turning it off would end their consumer's feed",
        ] {
            assert!(said.contains(part), "{template}: {part:?} not in status: {said}");
        }
        let report = create_new(&fake, &changed);
        assert_eq!(report.summary.failed, 0, "{template}: {report:#?}");
        let stream = |table: &str| fake.with_world(|w| w.tables[table].stream);
        assert!(
            stream(TABLES[0]).is_some(),
            "{template}: their consumer's stream stays on: {report:#?}"
        );
        assert_eq!(
            stream(TABLES[1]),
            None,
            "{template}: a stream no one else reads is turned off"
        );
        let vetoed = report.tables.iter().any(|l| {
            l.item.table == TABLES[0]
                && l.item.decision == Decision::Skipped
                && l.item.reason.contains(&theirs)
                && l.item.reason.contains(THEIRS)
        });
        assert!(vetoed, "{template}: the line names their mapping: {report:#?}");
        // Their mapping still reads the stream it read.
        let on = fake.mappings_on(&fake.stream_arn(TABLES[0]).unwrap());
        assert!(
            on.iter()
                .any(|m| m.uuid == theirs && m.state == MappingState::Enabled),
            "{on:#?}"
        );
    }
}
