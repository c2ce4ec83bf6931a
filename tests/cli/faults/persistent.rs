//! Persistent faults: after the SDK's attempts the table (or the run) fails loudly with one readable line, the other tables are still done, and a clean run repairs.

use super::*;

#[tokio::test]
async fn persistent_faults_fail_loudly_and_a_clean_run_repairs() {
    let rig = Rig::start().await;
    let premake3 = policy_file("premake3", "premake = 3\n");
    let run = |prefix: &str, at: &str, command: &str| rig.cli(&json_run_args(&premake3, prefix, at, command));
    // create-new under the default policy (no policy file).
    let create_new_by_default =
        |prefix: &str, at: &str| rig.cli(&["--prefix", prefix, "--output", "json", "--at", at, "create-new"]);

    // `prefix`'s tables made on the 20th, then resize_old on the 23rd with every `op` on the
    // table of `day` faulted: it exits 1. Returns that table, the run and its report.
    let resize_old_faulted = |prefix: &str, day: &str, op: &str, fault: Fault| {
        expect_exit(&run(prefix, "2018-10-20T23:45:00Z", "create-new"), 0, "setup");
        let victim = table(prefix, day);
        let what = format!("resize-old with {} on every {op} of {victim}", fault.label());
        rig.fault_always(op, &victim, fault);
        let failed = run(prefix, "2018-10-23T00:15:00Z", "resize-old");
        let report = expect_exit(&failed, 1, &what);
        (victim, failed, report)
    };

    // 1. resize_old: every UpdateTable of one table answered 503.
    let p = "upd";
    let (victim, failed, report) = resize_old_faulted(p, "21", "UpdateTable", Fault::Status(503));
    assert_eq!(outcome(&report, &victim, "update"), "failed", "{report:#}");
    assert_eq!(outcome(&report, &table(p, "20"), "update"), "done");
    assert_eq!(outcome(&report, &table(p, "22"), "update"), "done");
    assert_eq!(report["summary"]["failed"], 1, "{report:#}");
    assert_eq!(report["summary"]["failed_tables"], 1, "{report:#}");
    assert_readable(&report, "UpdateTable", &victim, RETRY_LATER);
    assert_quiet_stderr(&failed.stderr);
    assert_eq!(rig.faulted("UpdateTable"), 3, "the SDK's 3 attempts, no more");
    let want = |victim_capacity| resized_except(p, "21", victim_capacity);
    assert_eq!(
        rig.capacities(p).await,
        want(HOT),
        "only the victim is left behind"
    );
    rig.proxy.clear();
    let repaired = expect_exit(&run(p, "2018-10-23T00:15:00Z", "resize-old"), 0, "repair");
    assert_eq!(outcome(&repaired, &victim, "update"), "done", "{repaired:#}");
    assert_eq!(outcome(&repaired, &table(p, "20"), "unchanged"), "unchanged");
    assert_eq!(rig.capacities(p).await, want(COLD), "repaired");

    // 2. create_new: every CreateTable of the next period's table dropped.
    let p = "cre";
    let next = table(p, "21");
    rig.fault_always("CreateTable", &next, Fault::Drop);
    let failed = create_new_by_default(p, "2018-10-20T23:45:00Z");
    let report = expect_exit(&failed, 1, "create-new with the next table's CreateTable dropped");
    assert_eq!(outcome(&report, &table(p, "20"), "create"), "done", "{report:#}");
    assert_eq!(outcome(&report, &next, "create"), "failed", "{report:#}");
    assert_readable(&report, "CreateTable", &next, UNREACHABLE);
    assert_quiet_stderr(&failed.stderr);
    assert_eq!(rig.faulted("CreateTable"), 3, "the SDK's 3 attempts, no more");
    assert_eq!(
        rig.capacities(p).await,
        BTreeMap::from([(table(p, "20"), HOT)]),
        "the next period lacks its table"
    );
    rig.proxy.clear();
    let repaired = expect_exit(&create_new_by_default(p, "2018-10-20T23:45:00Z"), 0, "repair");
    assert_eq!(outcome(&repaired, &next, "create"), "done", "{repaired:#}");
    assert_eq!(
        rig.capacities(p).await,
        BTreeMap::from([(table(p, "20"), HOT), (next.clone(), HOT)])
    );

    // 3. resize_old: every DescribeTable of one table answered 500: nothing is decided for
    // it, the others go on.
    let p = "des";
    let (victim, _, report) = resize_old_faulted(p, "20", "DescribeTable", Fault::Status(500));
    assert_eq!(
        testkit::report_lines(&report)
            .into_iter()
            .filter(|(t, _, _)| *t == victim)
            .map(|(_, _, o)| o)
            .collect::<Vec<_>>(),
        ["failed"],
        "{report:#}"
    );
    assert_readable(&report, "DescribeTable", &victim, RETRY_LATER);
    assert_eq!(outcome(&report, &table(p, "21"), "update"), "done");
    assert_eq!(outcome(&report, &table(p, "22"), "update"), "done");
    assert_eq!(rig.faulted("DescribeTable"), 3);
    assert_eq!(
        rig.calls_on(&victim),
        ["DescribeTable"; 3],
        "no call but the three DescribeTable attempts for an unreadable table"
    );
    let want = |victim_capacity| resized_except(p, "20", victim_capacity);
    assert_eq!(rig.capacities(p).await, want(HOT));
    rig.proxy.clear();
    expect_exit(&run(p, "2018-10-23T00:15:00Z", "resize-old"), 0, "repair");
    assert_eq!(rig.capacities(p).await, want(COLD), "repaired");

    // 4. create_new: every DescribeTable of the next period's (existing) table answered
    // 500: it fails, and is not taken for missing (no CreateTable is sent for it).
    let p = "unr";
    expect_exit(&run(p, "2018-10-20T23:45:00Z", "create-new"), 0, "setup");
    let next = table(p, "22");
    rig.fault_always("DescribeTable", &next, Fault::Status(500));
    let failed = create_new_by_default(p, "2018-10-21T23:45:00Z");
    let report = expect_exit(&failed, 1, "create-new with the next table unreadable");
    assert_readable(&report, "DescribeTable", &next, RETRY_LATER);
    assert_eq!(rig.proxy.count("CreateTable"), 0, "{:?}", rig.proxy.calls());
    rig.proxy.clear();
    assert_eq!(rig.capacities(p).await.len(), 4);

    // 5. Every ListTables dropped: the run fails as a whole, with one readable error line
    // and no change.
    let p = "lst";
    rig.proxy.add(Rule::op("ListTables").always(), Fault::Drop);
    rig.proxy.reset_calls();
    let failed = run(p, "2018-10-20T23:45:00Z", "create-new");
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    let error_lines: Vec<&str> = failed
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(error_lines.len(), 1, "{}", failed.stderr);
    assert!(
        error_lines[0].starts_with(&format!("error: ListTables {p}_: "))
            && error_lines[0].contains(UNREACHABLE),
        "{}",
        error_lines[0]
    );
    assert_no_debug_dump(&failed.stderr);
    assert_eq!(rig.faulted("ListTables"), 3);
    assert_eq!(rig.proxy.calls().len(), 3, "nothing but ListTables");
    rig.proxy.clear();
    expect_exit(&run(p, "2018-10-20T23:45:00Z", "create-new"), 0, "repair");
    assert_eq!(rig.capacities(p).await.len(), 4);
}
