//! Issue 38: every duration and count the CLI takes is bounded, refused with exit 2 naming the
//! field and what it allows, before any AWS call; never a panic (`restore --keep
//! 99999999999d` was exit 134, `--time-budget 18446744073709551615s` exit 101), never accepted
//! when meaningless (`--keep 0d`, `--keep 1ns`, a restore `--at` in a later period than now),
//! never run without bound (`route` over millennia of hours). A JSON policy with a key given
//! twice is refused with the key's path (it was read with the last one winning). No server: the
//! binary runs with no AWS configuration at all.

use std::process::Command;

use testkit::ProcessRun;

/// The binary with nothing from this machine's environment but `policy` in ROLLOVER_POLICY.
fn ddb_rollover(args: &[&str], policy: &str) -> ProcessRun {
    ProcessRun::of(
        Command::new(crate::support::binaries::cli())
            .args(args)
            .env_clear()
            .env("ROLLOVER_POLICY", policy)
            .env("AWS_CONFIG_FILE", "/nonexistent/config")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials"),
    )
}

const ARCHIVING: &str = r#"{"prefix":"ts","retention":{"archive_after":2,"bucket":"archive-bucket"}}"#;

/// Exit 2, with every one of `names` on stderr and nothing on stdout.
fn refused(args: &[&str], policy: &str, names: &[&str]) {
    let run = ddb_rollover(args, policy);
    assert_eq!(
        run.code, 2,
        "{args:?}: exit {} (want 2)\nstdout:\n{}\nstderr:\n{}",
        run.code, run.stdout, run.stderr
    );
    for name in names {
        assert!(
            run.stderr.contains(name),
            "{args:?}: no {name:?} in: {}",
            run.stderr
        );
    }
    assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
}

#[test]
fn every_duration_and_count_is_bounded_with_exit_2_naming_the_field() {
    fn restore<'a>(flags: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["restore", "2018-10-01"];
        args.extend_from_slice(flags);
        args
    }
    for keep in ["0d", "1ns", "59m", "36501d", "99999999999d"] {
        refused(
            &restore(&["--keep", keep]),
            ARCHIVING,
            &["--keep", "1h to 36500d"],
        );
    }
    for wait in ["8d", "18446744073709551615s"] {
        refused(
            &restore(&["--keep", "7d", "--wait", wait]),
            ARCHIVING,
            &["--wait", "0s to 7d"],
        );
    }
    for budget in ["0s", "25h", "18446744073709551615s"] {
        refused(
            &["--time-budget", budget, "create-new"],
            ARCHIVING,
            &["--time-budget", "1s to 24h"],
        );
    }
    // A restore for an instant in a later period than the wall clock's would date its
    // keep-until past now, and could take today's period for a past one.
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(2)).to_rfc3339();
    refused(
        &[
            "--at",
            &tomorrow,
            "restore",
            "2018-10-01",
            "--keep",
            "7d",
            "--yes",
        ],
        ARCHIVING,
        &["--at", "later period than the wall clock", "restore"],
    );
    // Millennia of hours: bounded by the most tables an account may hold.
    refused(
        &[
            "route",
            "--from",
            "1000-01-01T00:00:00Z",
            "--to",
            "9999-12-31T00:00:00Z",
        ],
        r#"{"prefix":"h","period":"hour"}"#,
        &["from", "to", "more than 10000 tables"],
    );
    // The sizing flags: nothing saturates into a wrong answer.
    for (args, flag) in [
        (
            &["--item-bytes", "1000", "--events-per-sec", "1e300"][..],
            "--events-per-sec",
        ),
        (
            &[
                "--item-bytes",
                "1000",
                "--items",
                "18446744073709551615",
                "--within",
                "1ns",
            ][..],
            "--within",
        ),
        (
            &[
                "--item-bytes",
                "1000",
                "--items",
                "18446744073709551615",
                "--within",
                "1s",
            ][..],
            "--items",
        ),
        (
            &["--read-units", "18446744073709551615", "--write-units", "1"][..],
            "--read-units",
        ),
    ] {
        let mut with = vec!["capacity"];
        with.extend_from_slice(args);
        refused(&with, "{}", &[&format!("error: {flag}")]);
    }
}

#[test]
fn a_json_policy_with_a_key_given_twice_is_refused_with_its_path() {
    refused(
        &["route"],
        r#"{"prefix":"ts","premake":1,"premake":5}"#,
        &["premake: given twice"],
    );
    let file = std::env::temp_dir().join(format!("ddb-rollover-twice-{}.json", std::process::id()));
    std::fs::write(
        &file,
        r#"{"prefix":"ts","phases":[{"min_age":0,"read":5,"write":5,"read":9}]}"#,
    )
    .unwrap();
    let run = ddb_rollover(&["--policy", file.to_str().unwrap(), "route"], "");
    let _ = std::fs::remove_file(&file);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("phases[0].read: given twice"),
        "{}",
        run.stderr
    );
}
