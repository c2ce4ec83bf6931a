//! The family's consumer function end to end over the in-memory account
//! ([`fake_aws::FakeAws`]: each table's latest stream ARN, event source mappings Creating for
//! `mapping_delay` of fake time, then Enabled; deleting a table leaves them; the family role's
//! `lambda:FunctionArn` grants): create_new maps the function to each table's stream and waits
//! until it is Enabled; someone else's mapping is never touched and keeps its table from
//! deletion; resize_old removes our mapping once it deletes the table; a deleted consumer
//! function fails create_new loudly; our mapping's batch size and filters someone changed are
//! put back, and ours that someone re-pointed is left and named. Read back from the fake, not
//! from the report.

use crate::common::at;
use crate::common::fake_runs::create_new;
use crate::common::policies::{policy_of, STRING_KEY};
use chrono::Duration;
use ddb_rollover::control::ErrorKind;
use ddb_rollover::ledger::{keys, TableRecord};
use ddb_rollover::observe;
use ddb_rollover::status;
use ddb_rollover::table::MappingState;
use ddb_rollover::Decision;
use ddb_rollover::{run, ApplyOptions, Operation, Outcome, Policy, RunReport, Scope};
use ddb_rollover::{ForeignPart, NoEvidence};
use fake_aws::{Config, FakeAws, MappingAct};
use promises::FAMILY_CONSUMER;

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
    let at = ddb_rollover::simulation(policy, &[Operation::ResizeOld], fake.now()).unwrap();
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
        .map(|l| l.item.facts.table.as_str())
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
    let judged = kept.tables.iter().filter(|l| l.item.facts.table == TABLES[0]).any(|l| {
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
            l.item.facts.table == TABLES[0]
                && matches!(l.item.decision, Decision::DeleteEventSourceMapping(_))
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
            l.item.facts.table == "timeseries_2018-10-27"
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
            l.item.facts.table == TABLES[0]
                && matches!(l.item.decision, Decision::CreateEventSourceMapping(_))
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
        .find(|l| {
            l.item.facts.table == next && matches!(l.item.decision, Decision::CreateEventSourceMapping(_))
        })
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
    // `plan` reads everything once: only resize_old, which reads those tables' mappings,
    // fails on them (hostile read of issue 38: create_new's preview failed too).
    let planned = plan_both(&fake, &policy());
    assert!(
        planned[0].succeeded(),
        "create_new reads no due table's mappings: {:#?}",
        planned[0]
    );
    assert!(!planned[1].succeeded(), "{:#?}", planned[1]);
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

/// `plan` now: both operations' previews, as the CLI's `plan` runs them (one read of
/// everything, each operation planned on its own run's view).
fn plan_both(fake: &FakeAws, policy: &Policy) -> Vec<RunReport> {
    let operations = [Operation::CreateNew, Operation::ResizeOld];
    let at_now = ddb_rollover::simulation(policy, &operations, fake.now()).unwrap();
    let dry = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    futures::executor::block_on(ddb_rollover::run_each(fake, policy, &operations, &at_now, dry)).unwrap()
}

/// Hostile read of issue 38, finding 2: `status` reads every table's evidence, and named in its
/// failed-read warning tables no run reads that evidence of. It names exactly the tables the
/// runs fail on (each run's own reads), read back against both runs' previews.
#[test]
fn status_names_the_failed_reads_of_the_runs_and_no_others() {
    // No consumer: only a deletion reads a table's mappings (someone else's keeps it).
    let policy = || {
        policy_of(&[
            STRING_KEY,
            "[template]\nstream = \"new_and_old_images\"\n",
            "[retention]\ndelete_after = 1\nkeep_newest = 1\nmax_deletes_per_run = 5\n",
        ])
    };
    let fake = fake();
    assert!(create_new(&fake, &policy()).next_table_ready.unwrap().ready);
    fake.set_now(at("2018-10-28T23:45:00Z"));
    assert!(create_new(&fake, &policy()).next_table_ready.unwrap().ready);
    // The current table (10-29) is no run's to read the mappings of: not due for deletion.
    fake.set_now(at("2018-10-29T00:15:00Z"));
    let all: Vec<String> = fake.with_world(|w| {
        w.tables
            .keys()
            .filter(|name| name.starts_with("timeseries_2018"))
            .cloned()
            .collect()
    });
    for table in &all {
        fake.fail("ListEventSourceMappings", table, ErrorKind::Other);
    }
    let planned = plan_both(&fake, &policy());
    let mut failed_on: Vec<&str> = all
        .iter()
        .map(String::as_str)
        .filter(|table| {
            planned.iter().any(|report| {
                report
                    .lines_with(Outcome::Failed)
                    .any(|line| line.item.reason.contains(table))
            })
        })
        .collect();
    failed_on.sort_unstable();
    let now = fake.now();
    let observed = futures::executor::block_on(observe(&fake, &policy(), Scope::Full(now), 4)).unwrap();
    let report = status(&policy(), now, &observed);
    let mut named: Vec<&str> = report
        .unread
        .iter()
        .flat_map(|read| read.tables.iter().map(String::as_str))
        .collect();
    named.sort_unstable();
    named.dedup();
    assert!(!failed_on.is_empty(), "the runs fail on some: {planned:#?}");
    assert!(failed_on.len() < all.len(), "and not on all of {all:?}");
    assert_eq!(named, failed_on, "status names exactly the runs' failed reads");
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
            .find(|l| l.facts.table == TABLES[0])
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
            l.item.facts.table == TABLES[0]
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

/// A policy whose consumer mapping has settings of its own: a batch size and one filter.
fn filtered_policy() -> Policy {
    policy_of(&[
        STRING_KEY,
        "[template]\nstream = \"new_and_old_images\"\n",
        "[retention]\ndelete_after = 1\nkeep_newest = 1\nmax_deletes_per_run = 5\n",
        &format!(
            "[stream.lambda]\nfunction = \"{FAMILY_CONSUMER}\"\nbatch_size = 50\nfilters = ['{FILTER}']\n"
        ),
    ])
}

const FILTER: &str = r#"{"eventName": ["INSERT", "MODIFY"]}"#;

/// (batch size, filters) of the mapping `uuid`, from the fake's ground truth.
fn settings(fake: &FakeAws, table: &str, uuid: &str) -> (u32, Vec<String>) {
    let stream = fake.stream_arn(table).unwrap();
    let mapping = fake
        .mappings_on(&stream)
        .into_iter()
        .find(|m| m.uuid == uuid)
        .unwrap_or_else(|| panic!("no mapping {uuid} on {table}"));
    (mapping.batch_size, mapping.filters)
}

/// (table, reason) of each update of a mapping in `report`.
fn updates(report: &RunReport) -> Vec<(String, String)> {
    report
        .tables
        .iter()
        .filter(|l| matches!(l.item.decision, Decision::UpdateEventSourceMapping(_)))
        .map(|l| (l.item.facts.table.clone(), l.item.reason.clone()))
        .collect()
}

fn dry_create_new(fake: &FakeAws, policy: &Policy) -> RunReport {
    let at = ddb_rollover::simulation(policy, &[Operation::CreateNew], fake.now()).unwrap();
    let options = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    futures::executor::block_on(run(fake, policy, Operation::CreateNew, &at, options)).unwrap()
}

/// Issue 38: someone changes our mapping's batch size and filters (to match nothing): `status`
/// said `Enabled` and readiness ready while the consumer got nothing. Now status and dry run
/// show the update, create_new puts the policy's settings back by the UUID, and the next run
/// changes nothing (filters the same as JSON, spelled otherwise, are not drift). Someone
/// else's mapping with other settings on the same stream is never updated.
#[test]
fn our_mappings_changed_batch_size_and_filters_are_put_back_once() {
    let fake = fake();
    let policy = filtered_policy();
    assert!(create_new(&fake, &policy).next_table_ready.unwrap().ready);
    let uuid_on = |table: &str| fake.mappings_on(&fake.stream_arn(table).unwrap())[0].uuid.clone();
    let (drifted, respelled) = (uuid_on(TABLES[1]), uuid_on(TABLES[0]));
    assert_eq!(
        settings(&fake, TABLES[1], &drifted),
        (50, vec![FILTER.to_string()])
    );
    let configure = |uuid: &str, batch_size: u32, filter: &str| {
        let act = MappingAct::Configure {
            uuid: uuid.to_string(),
            batch_size,
            filters: vec![filter.to_string()],
        };
        fake.mapping_act("someone", &act).unwrap();
    };
    configure(&drifted, 7, r#"{"eventName": ["NOTHING"]}"#);
    configure(&respelled, 50, r#"{ "eventName" : [ "INSERT","MODIFY" ] }"#);
    fake.create_function(THEIRS);
    let theirs = fake
        .foreign_map("someone", THEIRS, &fake.stream_arn(TABLES[1]).unwrap())
        .unwrap();
    fake.advance(Duration::minutes(5));

    // status: the update as the run will make it, in the table's other changes.
    let now = fake.now();
    let observed = futures::executor::block_on(observe(&fake, &policy, Scope::Full(now), 4)).unwrap();
    let shown = status(&policy, now, &observed);
    let said: Vec<(String, String)> = shown
        .tables
        .iter()
        .flat_map(|line| {
            line.other_changes
                .iter()
                .filter(|c| matches!(c.decision, Decision::UpdateEventSourceMapping(_)))
                .map(|c| (line.facts.table.clone(), c.reason.clone()))
        })
        .collect();
    assert_eq!(
        said,
        [(
            TABLES[1].to_string(),
            format!(
                "our mapping {drifted} to {FAMILY_CONSUMER} has batch size 7, the policy says 50; filters {{\"eventName\": [\"NOTHING\"]}}, the policy says {FILTER}: put the policy's settings back"
            )
        )],
        "{shown:#?}"
    );
    // Dry run: the same, and nothing changed.
    let dry = dry_create_new(&fake, &policy);
    assert_eq!(updates(&dry), said, "{dry:#?}");
    assert_eq!(settings(&fake, TABLES[1], &drifted).0, 7);

    let report = create_new(&fake, &policy);
    assert_eq!(updates(&report), said, "{report:#?}");
    assert_eq!(report.summary.failed, 0, "{report:#?}");
    assert!(report.next_table_ready.as_ref().unwrap().ready, "{report:#?}");
    fake.advance(Duration::minutes(5));
    assert_eq!(
        settings(&fake, TABLES[1], &drifted),
        (50, vec![FILTER.to_string()])
    );
    assert_eq!(
        mappings(&fake, TABLES[1]),
        [
            (THEIRS.to_string(), MappingState::Enabled, false),
            (FAMILY_CONSUMER.to_string(), MappingState::Enabled, true),
        ]
    );
    assert_eq!(
        settings(&fake, TABLES[1], &theirs),
        (100, Vec::new()),
        "someone else's mapping keeps its settings"
    );
    // Lambda's own spelling of the same filter is not drift: left as it is.
    assert_eq!(
        settings(&fake, TABLES[0], &respelled).1,
        [r#"{ "eventName" : [ "INSERT","MODIFY" ] }"#]
    );
    // No update loop.
    let again = create_new(&fake, &policy);
    assert!(updates(&again).is_empty(), "{again:#?}");
    assert_eq!(again.summary.failed, 0, "{again:#?}");
}

/// Someone re-points our mapping (by its recorded UUID) to another function: the run does not
/// point it back (that is not a setting) and does not map the consumer beside it (before: the
/// verdict saw no mapping of ours and create_new made a second one); readiness is not ready,
/// naming the mapping, and so is `status`. resize_old keeps the table (deleting it would end
/// that function's feed; before: the mapping, ours by UUID, was no obstacle) and never removes
/// the mapping.
#[test]
fn our_mapping_someone_re_pointed_is_left_named_and_keeps_its_table() {
    let fake = fake();
    let policy = policy();
    assert!(create_new(&fake, &policy).next_table_ready.unwrap().ready);
    let stream = fake.stream_arn(TABLES[0]).unwrap();
    let ours = fake.mappings_on(&stream)[0].uuid.clone();
    fake.create_function(THEIRS);
    let act = MappingAct::Repoint {
        uuid: ours.clone(),
        function_arn: THEIRS.to_string(),
    };
    fake.mapping_act("someone", &act).unwrap();
    fake.advance(Duration::minutes(5));

    let report = create_new(&fake, &policy);
    let ready = report.next_table_ready.as_ref().unwrap();
    assert!(!ready.ready, "{report:#?}");
    let today = ready.tables.iter().find(|t| t.table == TABLES[0]).unwrap();
    assert_eq!(today.consumer.as_deref(), Some("REPOINTED"), "{today:#?}");
    let detail = today.consumer_detail.as_deref().unwrap_or_default();
    assert!(detail.contains(&ours) && detail.contains(THEIRS), "{detail}");
    assert!(!report.succeeded(), "{report:#?}");
    let mapping_lines: Vec<&str> = report
        .tables
        .iter()
        .filter(|l| l.item.facts.table == TABLES[0])
        .map(|l| l.item.decision.action())
        .filter(|a| a.contains("event_source_mapping"))
        .collect();
    assert!(mapping_lines.is_empty(), "{report:#?}");
    assert_eq!(
        fake.mappings_on(&stream)
            .into_iter()
            .map(|m| (m.uuid, m.function_arn))
            .collect::<Vec<_>>(),
        [(ours.clone(), THEIRS.to_string())],
        "not pointed back, no second mapping"
    );

    let now = fake.now();
    let observed = futures::executor::block_on(observe(&fake, &policy, Scope::Full(now), 4)).unwrap();
    let shown = status(&policy, now, &observed);
    let line = shown.tables.iter().find(|l| l.facts.table == TABLES[0]).unwrap();
    let cell = line.consumer.as_deref().unwrap_or_default();
    assert!(
        cell.starts_with("REPOINTED: our mapping") && cell.contains(&ours),
        "{cell}"
    );

    fake.set_now(at("2018-10-27T00:15:00Z"));
    let kept = resize_old(&fake, &policy);
    assert!(fake.with_world(|w| w.tables.contains_key(TABLES[0])), "{kept:#?}");
    let why = kept
        .tables
        .iter()
        .find(|l| l.item.facts.table == TABLES[0])
        .and_then(|l| l.item.verdict.clone())
        .map(|v| v.not_deletable)
        .unwrap_or_default();
    assert!(
        why.contains(&NoEvidence::RepointedEventSourceMapping),
        "{kept:#?}"
    );
    assert_eq!(fake.mappings_on(&stream).len(), 1, "never removed");
}
