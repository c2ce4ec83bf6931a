//! A table judged ours by its name alone has its tags read just before its first change: the
//! read comes before the change, once per table, and a read that fails keeps the change from
//! being sent.

use super::*;

const OCT_20: &str = "timeseries_2018-10-20";

/// The calls `table` received, in order.
fn calls_on(rig: &Rig, table: &str) -> Vec<&'static str> {
    rig.aws
        .requests()
        .iter()
        .filter(|r| r.table == table)
        .map(|r| r.operation)
        .collect()
}

#[tokio::test]
async fn the_tags_of_a_table_ours_by_name_are_read_once_just_before_its_change() {
    let rig = Rig::new(&[(OCT_20, HOT)]);
    let report = rig.resize_old().await;
    assert_eq!(outcomes(&report), [(OCT_20, Outcome::Done)]);
    assert_eq!(
        calls_on(&rig, OCT_20),
        ["DescribeTable", "ListTagsOfResource", "UpdateTable"]
    );
    assert!(report.warnings.is_empty(), "{:#?}", report.warnings);
}

/// A table whose tags were read anyway (ours by its family tag) gets no second read.
#[tokio::test]
async fn a_table_whose_tags_the_run_read_gets_no_second_read() {
    let rig = Rig::old_tables(20..=20);
    rig.aws.alter_table(OCT_20, |t| t.tags = ours());
    let policy = Policy {
        template: ddb_rollover::policy::blueprint::Blueprint {
            tags: BTreeMap::from([("team".to_string(), "iot".to_string())]),
            ..rig.policy.template.clone()
        },
        ..rig.policy.clone()
    };
    let rig = rig.with_policy(policy);
    let report = rig.resize_old().await;
    assert!(report.succeeded(), "{report:#?}");
    let reads = calls_on(&rig, OCT_20)
        .into_iter()
        .filter(|op| *op == "ListTagsOfResource")
        .count();
    assert_eq!(reads, 1, "{:?}", calls_on(&rig, OCT_20));
}

/// The read refused: no change is sent. Refused for good, the line fails (loud); throttled past
/// the SDK's retries, it is deferred to the next run; the table gone, it is gone.
#[tokio::test]
async fn a_refused_tag_read_sends_no_change() {
    for (kind, outcome) in [
        (ErrorKind::Other, Outcome::Failed),
        (ErrorKind::LimitExceeded, Outcome::Deferred),
        (ErrorKind::NotFound, Outcome::Gone),
    ] {
        let rig = Rig::new(&[(OCT_20, HOT)]);
        rig.aws.fail("ListTagsOfResource", OCT_20, kind);
        let report = rig.resize_old().await;
        assert_eq!(outcomes(&report), [(OCT_20, outcome)], "{kind:?}: {report:#?}");
        assert!(rig.changes().is_empty(), "{kind:?}: {:?}", rig.changes());
        assert_eq!(
            rig.table(OCT_20).unwrap().billing,
            Billing::Provisioned(HOT),
            "{kind:?}"
        );
    }
}
