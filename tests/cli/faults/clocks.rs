//! Clocks that could hurt (years ahead, before year 1000, past 9999) refused before any call.

use super::*;

#[tokio::test]
async fn clocks_that_could_hurt_are_refused_before_any_call() {
    let rig = Rig::start().await;
    let now = Utc::now();
    let ahead = (now + chrono::Duration::days(5 * 365)).to_rfc3339();
    let refused = |args: &[&str]| {
        rig.proxy.reset_calls();
        let run = rig.cli(args);
        assert_eq!(run.code, 2, "{args:?}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("--at"),
            "{args:?} should name --at: {}",
            run.stderr
        );
        assert_no_debug_dump(&run.stderr);
        assert_eq!(rig.proxy.calls(), Vec::new(), "{args:?} made AWS calls");
    };
    refused(&["--at", &ahead, "resize-old"]);
    refused(&["--output", "json", "--at", &ahead, "resize-old"]);
    for at in [
        "0999-06-01T00:00:00Z",
        "9999-12-31T12:00:00Z",
        "10000-01-01T00:00:00Z",
    ] {
        for command in ["create-new", "resize-old"] {
            refused(&["--at", at, command]);
            refused(&["--dry-run", "--at", at, command]);
            refused(&["--allow-future-clock", "--at", at, command]);
        }
    }

    // Today's tables exist (create_new may look ahead, so it is not refused either).
    rig.proxy.reset_calls();
    let created = rig.cli(&["--output", "json", "create-new"]);
    let report = expect_exit(&created, 0, "create-new now");
    assert_eq!(report["summary"]["done"], 2, "{report:#}");
    let current = format!("timeseries_{}", report["current_period"].as_str().unwrap());
    assert_eq!(rig.capacities("timeseries").await.get(&current), Some(&HOT));

    // A dry run may look five years ahead: it plans, changes nothing.
    rig.proxy.reset_calls();
    let dry = rig.cli(&["--output", "json", "--dry-run", "--at", &ahead, "resize-old"]);
    let report = expect_exit(&dry, 0, "dry run five years ahead");
    assert!(rig.proxy.count("ListTables") > 0, "the dry run ran");
    assert_eq!(outcome(&report, &current, "update"), "planned", "{report:#}");
    for op in ["UpdateTable", "DeleteTable", "CreateTable", "TagResource"] {
        assert_eq!(rig.proxy.count(op), 0, "a dry run sent {op}");
    }
    assert_eq!(rig.capacities("timeseries").await.get(&current), Some(&HOT));

    // So may an explicit simulation, which really runs (no retention in the default policy).
    rig.proxy.reset_calls();
    let simulated = rig.cli(&[
        "--output",
        "json",
        "--allow-future-clock",
        "--at",
        &ahead,
        "resize-old",
    ]);
    let report = expect_exit(&simulated, 0, "--allow-future-clock five years ahead");
    assert!(!rig.proxy.calls().is_empty());
    assert_eq!(outcome(&report, &current, "update"), "done", "{report:#}");
    assert_eq!(rig.proxy.count("UpdateTable"), 2, "both tables dialled down");
    assert_eq!(rig.capacities("timeseries").await.get(&current), Some(&COLD));
}
