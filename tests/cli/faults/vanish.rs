//! Tables that vanish (deleted as by another run) between two of our calls: absent, "gone" or made again, never a failed run where AWS's answer allows success.

use super::*;

const VANISH_TEMPLATE: &str = "premake = 3\n[template]\ntags = { team = \"iot\" }\n";

/// One vanish case on its own prefix: four tables (20 to 23 October) from create_new, then
/// resize_old at 23 October 00:15 with `rule` armed; returns the report.
async fn vanish_case(
    rig: &Rig,
    policy: &str,
    prefix: &str,
    rule: Rule,
    fault: Fault,
    before: impl std::future::Future<Output = ()>,
) -> Value {
    let setup = rig.cli_direct(&json_run_args(
        policy,
        prefix,
        "2018-10-20T23:45:00Z",
        "create-new",
    ));
    expect_exit(&setup, 0, "setup");
    before.await;
    rig.proxy.clear();
    rig.proxy.add(rule, fault.clone());
    rig.proxy.reset_calls();
    let run = rig.resize_old_on_the_23rd(policy, prefix);
    let report = expect_exit(&run, 0, &format!("resize-old with {} ({prefix})", fault.label()));
    assert_no_debug_dump(&run.stderr);
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
    assert_eq!(
        rig.proxy.calls().iter().filter(|c| c.fault.is_some()).count(),
        1,
        "{prefix}: the fault should have hit once: {:?}",
        rig.proxy.calls()
    );
    rig.proxy.clear();
    report
}

/// The table of `day` on its own prefix deleted right before resize_old's `op` on it (see
/// [`vanish_case`]); returns that table and the report.
async fn vanished_before(rig: &Rig, policy: &str, prefix: &str, day: &str, op: &str) -> (String, Value) {
    let victim = table(prefix, day);
    let rule = Rule::op(op).on_table(&victim);
    let report = vanish_case(rig, policy, prefix, rule, Fault::VanishBefore, async {}).await;
    (victim, report)
}

#[tokio::test]
async fn vanished_tables_without_retention() {
    let rig = Rig::start().await;
    let policy = policy_file("vanish", VANISH_TEMPLATE);
    // Without retention resize_old makes 20 and 21 cold and 22 warm.
    let without = |prefix: &str, victim: &str| left_of(prefix, &RESIZED, victim);

    // Before its DescribeTable, and before its ListTagsOfResource: dropped from the
    // observation, as if never listed.
    for (prefix, op) in [("vd", "DescribeTable"), ("vl", "ListTagsOfResource")] {
        let (victim, report) = vanished_before(&rig, &policy, prefix, "21", op).await;
        assert!(!tables_in(&report).contains(&victim), "{op}: {report:#}");
        assert_eq!(report["summary"]["gone"], 0, "{report:#}");
        assert_eq!(outcome(&report, &table(prefix, "20"), "update"), "done");
        assert_eq!(outcome(&report, &table(prefix, "22"), "update"), "done");
        assert_eq!(rig.capacities(prefix).await, without(prefix, "21"), "{op}");
    }

    // Before its UpdateTable: gone.
    let prefix = "vu";
    let (victim, report) = vanished_before(&rig, &policy, prefix, "21", "UpdateTable").await;
    assert_eq!(outcome(&report, &victim, "update"), "gone", "{report:#}");
    assert_eq!(report["summary"]["gone"], 1, "{report:#}");
    assert_eq!(outcome(&report, &table(prefix, "20"), "update"), "done");
    assert_eq!(rig.capacities(prefix).await, without(prefix, "21"));

    // Before its TagResource (the template tag was removed by hand, so resize_old puts it
    // back after the update). moto answers TagResource on a deleted table with 200, so AWS's
    // answer, ResourceNotFoundException, is injected instead: the outcome must be gone.
    let prefix = "vt";
    let victim = table(prefix, "21");
    let rule = Rule::op("TagResource").on_table(&victim);
    let not_found = Fault::Error {
        status: 400,
        error_type: "ResourceNotFoundException".into(),
        message: format!("Requested resource not found: Table: {victim} not found"),
    };
    let report = vanish_case(&rig, &policy, prefix, rule, not_found, rig.untag(&victim, "team")).await;
    assert_eq!(outcome(&report, &victim, "update"), "done", "{report:#}");
    assert_eq!(outcome(&report, &victim, "tag"), "gone", "{report:#}");
    // Nothing was deleted here (the answer was injected): every table as a clean run leaves it.
    assert_eq!(rig.capacities(prefix).await, without(prefix, ""));

    // The real vanish before TagResource, on moto: the run must not fail, the table is gone
    // from moto and the other tables are right.
    let prefix = "vr";
    let victim = table(prefix, "21");
    let rule = Rule::op("TagResource").on_table(&victim);
    let report = vanish_case(
        &rig,
        &policy,
        prefix,
        rule,
        Fault::VanishBefore,
        rig.untag(&victim, "team"),
    )
    .await;
    assert_eq!(outcome(&report, &victim, "update"), "done", "{report:#}");
    // moto's 200 makes it "done"; AWS's ResourceNotFoundException makes it "gone" (above).
    let tag = outcome(&report, &victim, "tag");
    assert!(tag == "done" || tag == "gone", "{report:#}");
    assert_eq!(rig.capacities(prefix).await, without(prefix, "21"));
}

#[tokio::test]
async fn vanished_tables_in_create_new() {
    let rig = Rig::start().await;
    let policy = policy_file("vanish-create", "[template]\ntags = { team = \"iot\" }\n");
    let create = |prefix: &str, at: &str| rig.cli(&json_run_args(&policy, prefix, at, "create-new"));

    // The pre-built table deleted before create_new's DescribeTable of it: the run sees it
    // missing and makes it again.
    let p = "cd";
    expect_exit(&create(p, "2018-10-20T23:45:00Z"), 0, "setup");
    let next = table(p, "21");
    let before = rig.tables(p).await[&next].clone();
    rig.proxy
        .add(Rule::op("DescribeTable").on_table(&next), Fault::VanishBefore);
    rig.proxy.reset_calls();
    let report = expect_exit(&create(p, "2018-10-20T23:50:00Z"), 0, "next table vanished");
    assert_eq!(rig.faulted("DescribeTable"), 1);
    assert_eq!(outcome(&report, &next, "create"), "done", "{report:#}");
    rig.proxy.clear();
    let after = rig.tables(p).await;
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(after[&next], before, "made again exactly as it was");

    // The current table deleted before create_new's TagResource of it (AWS's answer,
    // injected: moto answers 200): create_new's own table must exist when it ends, so this
    // is a failure that says what happens next, not "gone".
    let p = "ct";
    expect_exit(&create(p, "2018-10-20T23:45:00Z"), 0, "setup");
    let current = table(p, "20");
    rig.untag(&current, "team").await;
    rig.proxy.add(
        Rule::op("TagResource").on_table(&current),
        aws_error(
            "ResourceNotFoundException",
            &format!("Requested resource not found: Table: {current} not found"),
        ),
    );
    let run = create(p, "2018-10-20T23:50:00Z");
    let report = expect_exit(&run, 1, "current table vanished before its tag");
    assert_eq!(outcome(&report, &current, "tag"), "failed", "{report:#}");
    assert_readable(
        &report,
        "TagResource",
        &current,
        "the next create_new run creates it again",
    );
    assert_no_debug_dump(&run.stderr);
    rig.proxy.clear();
}

#[tokio::test]
async fn vanished_tables_with_retention() {
    let rig = Rig::start().await;
    let policy = policy_file(
        "vanish-retention",
        &format!("{VANISH_TEMPLATE}[retention]\ndelete_after = 2\nkeep_newest = 1\n"),
    );
    // With retention resize_old deletes 20 and 21 and makes 22 warm.
    let after = |prefix: &str, gone: &str| left_of(prefix, &RETAINED, gone);

    for (prefix, op) in [("rd", "DescribeTable"), ("rl", "ListTagsOfResource")] {
        let (victim, report) = vanished_before(&rig, &policy, prefix, "21", op).await;
        assert!(!tables_in(&report).contains(&victim), "{op}: {report:#}");
        assert_eq!(
            outcome(&report, &table(prefix, "20"), "delete"),
            "done",
            "{report:#}"
        );
        assert_eq!(outcome(&report, &table(prefix, "22"), "update"), "done");
        assert_eq!(rig.capacities(prefix).await, after(prefix, ""), "{op}");
    }

    // Before its DeleteTable: gone.
    let prefix = "rx";
    let (victim, report) = vanished_before(&rig, &policy, prefix, "21", "DeleteTable").await;
    assert_eq!(outcome(&report, &victim, "delete"), "gone", "{report:#}");
    assert_eq!(outcome(&report, &table(prefix, "20"), "delete"), "done");
    assert_eq!(report["summary"]["gone"], 1, "{report:#}");
    assert_eq!(rig.capacities(prefix).await, after(prefix, ""));

    // The table being made warm, before its UpdateTable: gone; the deletions still happen.
    let prefix = "ru";
    let (victim, report) = vanished_before(&rig, &policy, prefix, "22", "UpdateTable").await;
    assert_eq!(outcome(&report, &victim, "update"), "gone", "{report:#}");
    assert_eq!(outcome(&report, &table(prefix, "20"), "delete"), "done");
    assert_eq!(outcome(&report, &table(prefix, "21"), "delete"), "done");
    assert_eq!(rig.capacities(prefix).await, after(prefix, "22"));
}
