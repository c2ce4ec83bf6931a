//! AWS's rate limits on the tag calls, the run's time budget, and the floor of calls a steady-state run makes.

use super::*;

#[tokio::test]
async fn aws_rate_limits_on_tag_calls() {
    let rig = Rig::start().await;
    // 31 tables (1 to 31 October), made with one template tag; the policy then changes it, so
    // resize_old reads every table's tags and writes every table's tags.
    let made = policy_file("rates-a", "premake = 30\n[template]\ntags = { team = \"a\" }\n");
    let changed = policy_file("rates-b", "premake = 30\n[template]\ntags = { team = \"b\" }\n");
    rig.create_on_the_1st(&made);
    assert_eq!(rig.tables("timeseries").await.len(), 31);

    rig.proxy.rate_limit("ListTagsOfResource", 10);
    rig.proxy.rate_limit("TagResource", 5);
    rig.proxy.reset_calls();
    let started = Instant::now();
    let run = rig.cli(&[
        "--policy",
        &changed,
        "--output",
        "json",
        "--at",
        "2018-11-01T00:15:00Z",
        "resize-old",
    ]);
    let seconds = started.elapsed().as_secs_f64();
    let mut throttled = BTreeMap::new();
    for call in rig.proxy.calls() {
        if call.fault.as_deref() == Some("throttle") {
            *throttled.entry(call.operation).or_insert(0) += 1;
        }
    }
    let report = run.json();
    let measured = format!(
        "exit {}, {seconds:.1} s, calls {:?}, throttled {throttled:?}, summary {}",
        run.code,
        rig.counts(),
        report["summary"]
    );
    eprintln!("rate limits, 31 tables: {measured}");
    rig.proxy.clear();
    let tables = rig.tables("timeseries").await;
    let retagged = tables
        .values()
        .filter(|t| t.tags.get("team").map(String::as_str) == Some("b"))
        .count();
    let dialled = tables.values().filter(|t| t.capacity != HOT).count();
    eprintln!("read back: {retagged} of 31 tables retagged, {dialled} of 31 dialled down");

    assert_eq!(
        run.code, 0,
        "a run over 31 tables must stay inside AWS's tag-call rates: {measured}\n{}",
        run.stderr
    );
    assert!(
        throttled.is_empty(),
        "paced calls are never throttled: {measured}"
    );
    assert_eq!(retagged, 31, "every table carries the new tag");
    assert_eq!(dialled, 31, "every table dialled down");
}

// ------------------------------------------------------------------ the time budget

/// A run with a time budget starts no change after it: the first eight UpdateTable calls take
/// 24 s at the proxy (eight run at once), the budget is 20 s, so the last two tables' changes are
/// deferred with the reason, the run exits 0 with its report, and the next run makes them. A
/// create_new that has no time to create the next period's table fails instead. The budget runs
/// from the start of the process, observation and the tag reads before each change included:
/// a busy machine (tests run in parallel) once spent 10 s of it before the eighth UpdateTable.
#[tokio::test]
async fn a_time_budget_defers_what_does_not_fit_and_the_next_run_finishes() {
    let rig = Rig::start().await;
    rig.create_on_the_1st(&policy_file("budget", "premake = 9\n"));
    assert_eq!(rig.tables("timeseries").await.len(), 10);

    rig.proxy.add(
        Rule::op("UpdateTable").times(8),
        Fault::Latency(Duration::from_secs(24)),
    );
    let started = Instant::now();
    let run = rig.cli(&[
        "--output",
        "json",
        "--time-budget",
        "20s",
        "--at",
        "2018-10-25T00:15:00Z",
        "resize-old",
    ]);
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.json();
    assert_eq!(report["summary"]["done"], 8, "{report:#}");
    assert_eq!(report["summary"]["deferred"], 2, "{report:#}");
    let deferred: Vec<&Value> = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["outcome"] == "deferred")
        .collect();
    assert!(
        deferred
            .iter()
            .all(|l| l["error"].as_str().unwrap().contains("time budget")),
        "{deferred:#?}"
    );
    assert_eq!(
        rig.proxy.count("UpdateTable"),
        8,
        "no call is started after the budget"
    );
    eprintln!("time budget 20 s: the run took {seconds:.1} s");
    let dialled =
        |tables: &BTreeMap<String, TableState>| tables.values().filter(|t| t.capacity == COLD).count();
    assert_eq!(dialled(&rig.tables("timeseries").await), 8);

    rig.proxy.clear();
    let rest = rig.cli(&["--at", "2018-10-25T00:15:00Z", "resize-old"]);
    assert_eq!(rest.code, 0, "{}{}", rest.stdout, rest.stderr);
    assert_eq!(dialled(&rig.tables("timeseries").await), 10);

    // The budget's least, 1 s, spent before any CreateTable: ListTables takes 2 s at the proxy.
    rig.proxy.add(
        Rule::op("ListTables").times(1),
        Fault::Latency(Duration::from_secs(2)),
    );
    let create = rig.cli(&[
        "--output",
        "json",
        "--time-budget",
        "1s",
        "--at",
        "2018-10-25T23:45:00Z",
        "create-new",
    ]);
    assert_eq!(create.code, 1, "{}{}", create.stdout, create.stderr);
    assert_eq!(rig.proxy.count("CreateTable"), 0);
    assert!(
        create.stdout.contains("time budget ended first"),
        "{}",
        create.stdout
    );
}

// ------------------------------------------------------------------ the floor of calls

/// A steady-state run makes the floor of calls, counted at the proxy: resize-old one
/// ListTables page plus one DescribeTable per owned table (foreign names, a sibling family's
/// included, are never described or tag-read), create-new one ListTables page plus a
/// DescribeTable for its current and pre-built tables; each also reads the family's ledger
/// (one Query page), takes its operation's lease (a PutItem), reads the ledger again under it
/// (another run may have written it meanwhile) and gives the lease back (a DeleteItem).
#[tokio::test]
async fn steady_state_runs_stay_at_the_floor_of_calls() {
    let rig = Rig::start().await;
    rig.create_on_the_1st(&policy_file("floor", "premake = 29\n"));
    for foreign in [
        "timeseries_backup",
        "timeseries_eu_2018-10-18",
        "timeseries_eu_2018-10-19",
    ] {
        testkit::create_plain_table(&rig.client, foreign).await;
    }
    let owned = 30;
    // Catch up: every table to its phase.
    let catch_up = rig.cli(&["--at", "2018-11-01T00:15:00Z", "resize-old"]);
    assert_eq!(catch_up.code, 0, "{}{}", catch_up.stdout, catch_up.stderr);

    rig.proxy.reset_calls();
    let steady = rig.cli(&["--output", "json", "--at", "2018-11-02T00:15:00Z", "resize-old"]);
    assert_eq!(steady.code, 0, "{}{}", steady.stdout, steady.stderr);
    let changes = steady.json()["summary"]["done"].as_u64().unwrap() as usize;
    assert_eq!(changes, 0, "nothing left to change after the catch-up");
    assert_eq!(
        rig.counts(),
        BTreeMap::from([
            ("ListTables".to_string(), 1),
            ("DescribeTable".to_string(), owned),
            ("Query".to_string(), 2),
            ("PutItem".to_string(), 1),
            ("DeleteItem".to_string(), 1),
        ]),
        "resize-old: ceil(tables / 100) ListTables + one DescribeTable per owned table + the ledger's Query + the lease + changes"
    );
    let foreign = steady.json()["summary"]["foreign"].as_u64().unwrap();
    assert_eq!(foreign, 3, "foreign names are still reported, by name");

    let created = rig.cli(&["--at", "2018-11-02T23:45:00Z", "create-new"]);
    assert_eq!(created.code, 0, "{}{}", created.stdout, created.stderr);
    rig.proxy.reset_calls();
    let again = rig.cli(&["--at", "2018-11-02T23:50:00Z", "create-new"]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(
        rig.counts(),
        BTreeMap::from([
            ("ListTables".to_string(), 1),
            ("DescribeTable".to_string(), 2),
            ("ListTagsOfResource".to_string(), 2),
            ("Query".to_string(), 2),
            ("PutItem".to_string(), 1),
            ("DeleteItem".to_string(), 1),
        ]),
        "create-new: the ListTables pages + DescribeTable and the tags (whose they are) of the current and pre-built tables"
    );
}
