//! AWS's refusals of an UpdateTable or DeleteTable: unchanged, deferred with the reason in a tag, gone or failed, and a clean run afterwards does what was held back.

use super::*;

/// What DynamoDB answers an UpdateTable whose throughput equals the table's.
const UNCHANGED_THROUGHPUT: &str = "The provisioned throughput for the table will not change. \
    The requested value equals the current value. Current ReadCapacityUnits provisioned for the \
    table: 300. Requested ReadCapacityUnits: 1. Current WriteCapacityUnits provisioned for the \
    table: 1000. Requested WriteCapacityUnits: 1. Refer to the Amazon DynamoDB Developer Guide \
    for current limits and how to request higher limits.";

/// What DynamoDB answers a DeleteTable of a table that is busy.
const BUSY: &str = "Attempt to change a resource which is still in use";

#[tokio::test]
async fn refusals_are_unchanged_deferred_gone_or_failed() {
    let rig = Rig::start().await;
    let plain = policy_file("refusals", "premake = 3\n");
    let retention = policy_file(
        "refusals-retention",
        "premake = 3\n[retention]\ndelete_after = 2\nkeep_newest = 1\n",
    );
    let setup = |policy: &str, prefix: &str| {
        let run = rig.cli_direct(&json_run_args(
            policy,
            prefix,
            "2018-10-20T23:45:00Z",
            "create-new",
        ));
        assert_eq!(run.code, 0, "setup {prefix}: {}{}", run.stdout, run.stderr);
    };
    let resize = |policy: &str, prefix: &str| rig.resize_old_on_the_23rd(policy, prefix);
    // `prefix`'s tables made under `policy`, then the first `op` on its table of the 21st
    // refused with `error_type`; returns that table.
    let refused_once = |policy: &str, prefix: &str, op: &str, error_type: &str, message: &str| {
        let victim = table(prefix, "21");
        setup(policy, prefix);
        rig.proxy
            .add(Rule::op(op).on_table(&victim), aws_error(error_type, message));
        victim
    };
    let cleanly = |prefix: &str, victim: (i64, i64)| resized_except(prefix, "21", victim);

    // "Will not change": another run made the change first. Unchanged, sent once (a
    // ValidationException is not retried), exit 0.
    let p = "un";
    let victim = refused_once(
        &plain,
        p,
        "UpdateTable",
        "ValidationException",
        UNCHANGED_THROUGHPUT,
    );
    rig.proxy.reset_calls();
    let report = expect_exit(&resize(&plain, p), 0, "unchanged throughput");
    assert_eq!(outcome(&report, &victim, "update"), "unchanged", "{report:#}");
    assert_eq!(outcome(&report, &table(p, "20"), "update"), "done");
    assert_eq!(rig.faulted("UpdateTable"), 1);
    let updates = rig
        .calls_on(&victim)
        .into_iter()
        .filter(|op| op == "UpdateTable")
        .count();
    assert_eq!(updates, 1, "not retried");
    // The answer was injected, so moto still has the old capacity; the next run fixes it.
    assert_eq!(rig.capacities(p).await, cleanly(p, HOT));
    rig.proxy.clear();
    let again = expect_exit(&resize(&plain, p), 0, "after unchanged");
    assert_eq!(outcome(&again, &victim, "update"), "done", "{again:#}");
    assert_eq!(rig.capacities(p).await, cleanly(p, COLD));

    // Any other ValidationException is a failure of that table, not "unchanged".
    let p = "va";
    let victim = refused_once(
        &plain,
        p,
        "UpdateTable",
        "ValidationException",
        "One or more parameter values were invalid: ReadCapacityUnits must be at least 1",
    );
    let run = resize(&plain, p);
    let report = expect_exit(&run, 1, "another ValidationException");
    assert_eq!(outcome(&report, &victim, "update"), "failed", "{report:#}");
    assert_readable(&report, "UpdateTable", &victim, "ValidationException");
    assert_no_debug_dump(&run.stderr);
    assert_eq!(rig.capacities(p).await, cleanly(p, HOT));
    rig.proxy.clear();

    // Busy or over a limit: deferred (exit 0), the refusal recorded on the table, done by the
    // next run.
    // The SDK counts LimitExceededException as throttling and tries it 3 times; a busy table
    // is not retried.
    for (p, error_type, attempts) in [
        ("le", "LimitExceededException", 3),
        ("iu", "ResourceInUseException", 1),
    ] {
        let victim = table(p, "21");
        setup(&plain, p);
        let message = format!("injected {error_type} for {victim}");
        rig.fault_always("UpdateTable", &victim, aws_error(error_type, &message));
        let report = expect_exit(&resize(&plain, p), 0, error_type);
        assert_eq!(outcome(&report, &victim, "update"), "deferred", "{report:#}");
        assert_eq!(report["summary"]["deferred"], 1, "{report:#}");
        assert_eq!(rig.faulted("UpdateTable"), attempts, "{error_type}");
        assert_eq!(rig.capacities(p).await, cleanly(p, HOT), "{error_type}");
        let tags = testkit::tags_of(&rig.client, &rig.arn(&victim).await).await;
        let recorded = tags
            .get(LAST_DEFERRAL)
            .unwrap_or_else(|| panic!("{error_type}: no {LAST_DEFERRAL} tag on {victim}: {tags:?}"));
        assert!(
            recorded.starts_with("2018-10-23T00:15:00") && recorded.contains("update"),
            "{error_type}: {recorded}"
        );
        rig.proxy.clear();
        let again = expect_exit(&resize(&plain, p), 0, "after the deferral");
        assert_eq!(outcome(&again, &victim, "update"), "done", "{again:#}");
        assert_eq!(rig.capacities(p).await, cleanly(p, COLD), "{error_type}");
    }

    // Retention: DeleteTable refused as busy while the table is ACTIVE: deferred; the next
    // run deletes it.
    let p = "db";
    let victim = refused_once(&retention, p, "DeleteTable", "ResourceInUseException", BUSY);
    let report = expect_exit(&resize(&retention, p), 0, "DeleteTable busy");
    assert_eq!(outcome(&report, &victim, "delete"), "deferred", "{report:#}");
    assert_eq!(outcome(&report, &table(p, "20"), "delete"), "done");
    let with_victim = BTreeMap::from([
        (victim.clone(), HOT),
        (table(p, "22"), WARM),
        (table(p, "23"), HOT),
    ]);
    assert_eq!(rig.capacities(p).await, with_victim);
    rig.proxy.clear();
    let again = expect_exit(&resize(&retention, p), 0, "after the busy delete");
    assert_eq!(outcome(&again, &victim, "delete"), "done", "{again:#}");
    assert_eq!(rig.capacities(p).await, left_of(p, &RETAINED, ""));

    // DeleteTable refused as busy because another run is deleting it: by the time we look
    // again it is gone, so the outcome is gone, not deferred or failed.
    let p = "dg";
    let victim = refused_once(&retention, p, "DeleteTable", "ResourceInUseException", BUSY);
    // The first DescribeTable is the observation's; the second is the executor's look.
    rig.proxy.add(
        Rule::op("DescribeTable").on_table(&victim).skip(1),
        Fault::VanishBefore,
    );
    let report = expect_exit(&resize(&retention, p), 0, "DeleteTable busy, then gone");
    assert_eq!(outcome(&report, &victim, "delete"), "gone", "{report:#}");
    assert_eq!(report["summary"]["gone"], 1, "{report:#}");
    assert_eq!(rig.capacities(p).await, left_of(p, &RETAINED, ""));
    rig.proxy.clear();
}
