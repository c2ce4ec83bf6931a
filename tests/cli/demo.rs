//! `scripts/demo.sh` as a newcomer runs it (the binaries from this build, `DEMO_BIN_DIR`): on
//! moto, its default, each step of the lifecycle appears in order in its output, the readings
//! and the change records read back from the server by the demo's own reads (a Query of the
//! restored table, the consumer's GetRecords), not from our reports; on dynalite and DynamoDB
//! Local, the plain week. Every one exits 0 with nothing on stderr and no run failing.

use std::process::Command;

use testkit::ProcessRun;

fn demo(args: &[&str]) -> ProcessRun {
    ProcessRun::of(
        Command::new("bash")
            .arg(testkit::repo_root().join("scripts").join("demo.sh"))
            .args(args)
            .env("DEMO_BIN_DIR", crate::support::binaries::profile_dir())
            .env_remove("DDB_ROLLOVER_LOG"),
    )
}

/// Exit 0, nothing on stderr, every run's summary `0 failed`.
fn assert_clean(run: &ProcessRun, what: &str) {
    assert!(
        run.code == 0 && run.stderr.is_empty(),
        "{what}: exit {}\nstdout:\n{}\nstderr:\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
    for line in run.stdout.lines().filter(|l| l.contains(" failed, ")) {
        assert!(line.contains(" 0 failed, "), "{what}: {line}\n{}", run.stdout);
    }
}

/// Each of `steps` appears in `stdout`, each after the one before.
fn assert_in_order(stdout: &str, steps: &[&str]) {
    let mut from = 0;
    for step in steps {
        match stdout[from..].find(step) {
            Some(at) => from += at + step.len(),
            None => panic!("{step:?} is missing after byte {from} of:\n{stdout}"),
        }
    }
}

#[test]
fn the_default_demo_shows_every_lifecycle_step_on_moto() {
    let run = demo(&[]);
    assert_clean(&run, "scripts/demo.sh");
    let out = &run.stdout;
    assert_in_order(
        out,
        &[
            "== moto behind the AWS-behaviour layer",
            "================ 2018-10-20 23:45 UTC: create-new",
            "4 readings of sensor-1 written to sensors_2018-10-20",
            "================ 2018-10-21 00:15 UTC: resize-old",
            "status at 2018-10-21T00:20:00+00:00",
            ">> archive: sensors_2018-10-20 exported to s3://demo-archive/ddb-rollover/sensors_2018-10-20/",
            ">> seal: sensors_2018-10-20 denies item writes",
            ">> an application's write to it now: PutItem sensors_2018-10-20: AccessDeniedException",
            ">> final export after the seal: sensors_2018-10-20",
            ">> proven archive: s3://demo-archive/ddb-rollover/sensors_2018-10-20/",
            "4 item(s)",
            ">> deletion: sensors_2018-10-20 deleted",
            "status at 2018-10-27T00:20:00+00:00",
            "== after 7 days",
            "restore 2018-10-20",
            "sensors_2018-10-20  planned  import 4 item(s)",
            "sensors_2018-10-20  done     import 4 item(s)",
            "status at 2018-10-27T12:05:00+00:00",
            "ours (ledger: restored)",
            "4 readings of sensor-1 in sensors_2018-10-20: 2018-10-20T00:00:00Z 20 C, 2018-10-20T06:00:00Z 21 C, 2018-10-20T12:00:00Z 22 C, 2018-10-20T18:00:00Z 23 C",
            "the change stream, read by a consumer",
            "stream    28 records",
            "INSERT  sensors_2018-10-20  pk=sensor-1 sk=2018-10-20T00:00:00Z  celsius=20",
            "the application side",
            "verified  yes",
        ],
    );
    // The consumer's table: each day's four readings, as inserts of its own period.
    for day in 20..=26 {
        let period = format!("2018-10-{day}");
        let counts: Vec<&str> = out
            .lines()
            .find(|l| l.starts_with(&period))
            .unwrap_or_else(|| panic!("no consumer line for {period}:\n{out}"))
            .split_whitespace()
            .skip(1)
            .collect();
        assert_eq!(counts, ["4", "0", "0"], "{period}:\n{out}");
    }
}

#[test]
fn the_week_on_dynalite_and_dynamodb_local() {
    for server in ["dynalite", "ddblocal"] {
        let run = demo(&[server, "2018-10-20", "2"]);
        assert_clean(&run, server);
        assert_in_order(
            &run.stdout,
            &[
                &format!("== {server} behind the AWS-behaviour layer"),
                "================ 2018-10-21 23:45 UTC: create-new",
                "================ 2018-10-22 00:15 UTC: resize-old",
                "status at 2018-10-22T00:20:00+00:00",
                "== after 2 days",
            ],
        );
        for parts in [
            ["timeseries_2018-10-22  -1 ", "create 300 RCU / 1000 WCU", "done"],
            ["timeseries_2018-10-21  1 ", "update to 100 RCU / 1 WCU", "done"],
        ] {
            assert!(
                run.stdout.lines().any(|l| parts.iter().all(|p| l.contains(p))),
                "{server}: no line with {parts:?}:\n{}",
                run.stdout
            );
        }
        // dynalite has no UpdateTimeToLive, which the example's tables use.
        assert_eq!(
            run.stdout.contains("verified  yes"),
            server == "ddblocal",
            "{server}:\n{}",
            run.stdout
        );
    }
}
