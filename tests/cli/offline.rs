//! The commands that need no AWS, end to end: `capacity` reproduces AWS's sizing guidance with
//! no DynamoDB server, no AWS configuration and an unreadable policy in the environment (sizing
//! must read neither); `route` names the tables of a policy exactly as the library does.

use std::process::Command;

use serde_json::Value;
use testkit::ProcessRun;

/// One partition's storage as the core reads "about 10 GB".
const PARTITION_BYTES: f64 = 1e10;

fn capacity(args: &[&str]) -> ProcessRun {
    let mut with_command = vec!["capacity"];
    with_command.extend(args);
    ddb_rollover(&with_command, "{ this is not a policy")
}

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

fn json(args: &[&str]) -> Value {
    let mut with_json = args.to_vec();
    with_json.extend(["--output", "json"]);
    let run = capacity(&with_json);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    run.json()
}

/// The arguments that size by rate: items of `item_bytes` bytes, `events_per_sec` of them a
/// second.
fn rate<'a>(item_bytes: &'a str, events_per_sec: &'a str) -> [&'a str; 4] {
    ["--item-bytes", item_bytes, "--events-per-sec", events_per_sec]
}

fn number(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {value}"))
}

/// The events/s of `item_bytes` items that fill one partition in exactly `hours`.
fn rate_filling_in(hours: f64, item_bytes: u64) -> String {
    (PARTITION_BYTES / (hours * 3600.0) / item_bytes as f64).to_string()
}

#[test]
fn guidance_600_events_of_180_bytes_get_daily_tables() {
    let out = json(&rate("180", "600"));
    let hours = number(&out, "hours_to_fill_partition");
    assert!((25.5..=27.5).contains(&hours), "{hours}");
    assert_eq!(out["period"], "day");
    assert_eq!(out["write_units_per_item"], 1);
    assert_eq!(out["shards"], 1);
    assert_eq!(out["write_capacity"], 600);
    assert_eq!(out["partitions"], 1);
    assert!(out.get("warnings").is_none(), "{out}");
    assert_eq!(out["input"]["item_bytes"], 180);
    assert_eq!(number(&out["input"], "events_per_sec"), 600.0);
}

#[test]
fn guidance_6000_peak_needs_six_shards() {
    let out = json(&[
        "--item-bytes",
        "180",
        "--events-per-sec",
        "5000",
        "--peak-events-per-sec",
        "6000",
    ]);
    assert_eq!(out["shards"], 6);
    assert_eq!(out["write_capacity"], 6000);
    assert_eq!(out["partitions"], 6);
    assert_eq!(number(&out["input"], "peak_events_per_sec"), 6000.0);
}

#[test]
fn guidance_partition_counts() {
    for (read, write, expected) in [("1000", "500", 1), ("1000", "1000", 2), ("5000", "2000", 4)] {
        let out = json(&["--read-units", read, "--write-units", write]);
        assert_eq!(out["partitions"], expected, "{read} RCU, {write} WCU: {out}");
        assert_eq!(out["input"]["read_units"].to_string(), read);
        assert!(out.get("period").is_none(), "partitions only: {out}");
    }
    assert_eq!(json(&["--write-units", "2500"])["partitions"], 3);
    assert_eq!(json(&["--read-units", "3001"])["partitions"], 2);
}

#[test]
fn guidance_bulk_load_of_20_million_items() {
    let half_hour = json(&["--item-bytes", "1024", "--items", "20000000", "--within", "30m"]);
    let wcu = half_hour["write_capacity"].as_u64().unwrap();
    assert!((10_900..=11_200).contains(&wcu), "{wcu}");
    // The guidance says "about 11 partitions" because it rounds the rate to 11,000 WCU first;
    // the formula on the unrounded 11,112 WCU gives 12, and capacity is never rounded down.
    assert_eq!(half_hour["partitions"], 12);
    assert_eq!(number(&half_hour["input"], "within_seconds"), 1800.0);

    let three_hours = json(&["--item-bytes", "1024", "--items", "20000000", "--within", "3h"]);
    let wcu = three_hours["write_capacity"].as_u64().unwrap();
    assert!((1_800..=1_950).contains(&wcu), "{wcu}");
    assert_eq!(three_hours["partitions"], 2);
}

#[test]
fn durations_combine_units() {
    let combined = json(&["--item-bytes", "1024", "--items", "5400", "--within", "1h30m"]);
    let seconds = json(&["--item-bytes", "1024", "--items", "5400", "--within", "5400s"]);
    assert_eq!(number(&combined["input"], "within_seconds"), 5400.0);
    assert_eq!(combined["write_capacity"], seconds["write_capacity"]);
    assert_eq!(combined["write_capacity"], 1);
    let day = json(&["--item-bytes", "1024", "--items", "1", "--within", "1d"]);
    assert_eq!(number(&day["input"], "within_seconds"), 86_400.0);
}

#[test]
fn one_write_unit_covers_1024_bytes() {
    let at_1024 = json(&rate("1024", "100"));
    let at_1025 = json(&rate("1025", "100"));
    assert_eq!(at_1024["write_units_per_item"], 1);
    assert_eq!(at_1024["write_capacity"], 100);
    assert_eq!(at_1025["write_units_per_item"], 2);
    assert_eq!(at_1025["write_capacity"], 200);
}

#[test]
fn filling_in_exactly_a_day_gets_daily_tables_and_just_under_gets_12h() {
    let exactly = rate_filling_in(24.0, 180);
    let under = rate_filling_in(23.9, 180);
    assert_eq!(json(&rate("180", &exactly))["period"], "day");
    assert_eq!(json(&rate("180", &under))["period"], "12h");
    let a_year = rate_filling_in(366.0 * 24.0, 180);
    assert_eq!(json(&rate("180", &a_year))["period"], "year");
}

#[test]
fn a_partition_filling_within_the_hour_gets_hourly_tables_and_a_warning() {
    let out = json(&rate("409600", "100000"));
    assert!(number(&out, "hours_to_fill_partition") < 1.0, "{out}");
    assert_eq!(out["period"], "hour");
    let warnings = out["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 1, "{out}");
    assert!(warnings[0].as_str().unwrap().contains("hourly"), "{out}");

    let text = capacity(&rate("409600", "100000"));
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains("warning: "), "{}", text.stdout);
}

#[test]
fn the_table_explains_each_figure() {
    let run = capacity(&rate("180", "600"));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line = |label: &str| {
        run.stdout
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line in:\n{}", run.stdout))
            .split_whitespace()
            .skip(label.split_whitespace().count())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let hours = json(&rate("180", "600"))["hours_to_fill_partition"]
        .as_f64()
        .unwrap();
    assert!(line("hours to fill one 10 GB partition").starts_with(&format!("{hours:.1} ")));
    assert!(line("period").starts_with("day "), "{}", run.stdout);
    assert!(
        line("write units per item").starts_with("1 WCU "),
        "{}",
        run.stdout
    );
    assert!(line("write capacity").starts_with("600 WCU "), "{}", run.stdout);

    let partitions = capacity(&["--read-units", "5000", "--write-units", "2000"]);
    assert_eq!(partitions.code, 0, "{}", partitions.stderr);
    let line = partitions
        .stdout
        .lines()
        .find(|l| l.starts_with("partitions"))
        .unwrap();
    assert_eq!(line.split_whitespace().nth(1), Some("4"), "{}", partitions.stdout);
}

#[test]
fn bad_values_exit_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&rate("0", "600"), "--item-bytes must be 1 to 409600"),
        (&rate("409601", "600"), "--item-bytes"),
        (&rate("180", "0"), "--events-per-sec"),
        (&rate("180", "-5"), "--events-per-sec"),
        (&rate("180", "NaN"), "--events-per-sec"),
        (&rate("180", "inf"), "--events-per-sec"),
        (
            &[
                "--item-bytes",
                "180",
                "--events-per-sec",
                "600",
                "--peak-events-per-sec",
                "500",
            ],
            "--peak-events-per-sec (500) is below --events-per-sec (600)",
        ),
        (
            &["--read-units", "0", "--write-units", "0"],
            "--read-units and --write-units",
        ),
        (
            &["--item-bytes", "1024", "--items", "0", "--within", "30m"],
            "--items",
        ),
        (
            &["--item-bytes", "1024", "--items", "10", "--within", "0s"],
            "--within",
        ),
    ];
    for (args, message) in cases {
        let run = capacity(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("error: {message}")),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
}

#[test]
fn flags_that_do_not_parse_exit_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--item-bytes", "1024", "--items", "10", "--within", "30x"],
            "--within",
        ),
        (
            &["--item-bytes", "1024", "--items", "10", "--within", "m"],
            "--within",
        ),
        (&rate("big", "600"), "--item-bytes"),
        (&["--read-units", "-1"], "--read-units"),
    ];
    for (args, flag) in cases {
        let run = capacity(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(flag), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn modes_cannot_be_mixed_or_left_out() {
    let cases: &[&[&str]] = &[
        &[],
        &["--item-bytes", "180"],
        &[
            "--item-bytes",
            "180",
            "--events-per-sec",
            "600",
            "--items",
            "10",
            "--within",
            "1h",
        ],
        &[
            "--item-bytes",
            "180",
            "--events-per-sec",
            "600",
            "--write-units",
            "10",
        ],
        &["--item-bytes", "180", "--read-units", "10"],
        &["--events-per-sec", "600"],
        &["--item-bytes", "180", "--items", "10"],
        &["--item-bytes", "180", "--within", "1h"],
        &["--read-units", "10", "--peak-events-per-sec", "600"],
        &["--read-units", "10", "--within", "1h"],
        &[
            "--item-bytes",
            "180",
            "--items",
            "10",
            "--within",
            "1h",
            "--peak-events-per-sec",
            "9",
        ],
    ];
    for args in cases {
        let run = capacity(args);
        assert_eq!(run.code, 2, "{args:?} was accepted: {}", run.stdout);
        assert!(run.stderr.starts_with("error: "), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
}

const BERLIN_HOURS: &str = r#"{"prefix":"h","period":"hour","timezone":"Europe/Berlin"}"#;

#[test]
fn route_names_the_tables_of_a_range_as_the_library_does() {
    let (from, to) = ("2024-10-26T23:30:00Z", "2024-10-27T03:00:00Z");
    let run = ddb_rollover(
        &["route", "--from", from, "--to", to, "--output", "json"],
        BERLIN_HOURS,
    );
    let printed: Vec<String> = run
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let policy = ddb_rollover::Policy::from_json(BERLIN_HOURS).unwrap();
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap().to_utc();
    let expected: Vec<String> = ddb_rollover::route::tables_between(&policy, parse(from), parse(to))
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(printed, expected);
    // The repeated 02:00 of the autumn change has its own table.
    assert!(printed.contains(&"h_2024-10-27T02.2".to_string()), "{printed:?}");
    assert_eq!(printed.len(), 4);
}

#[test]
fn route_without_a_range_names_the_table_of_at() {
    let run = ddb_rollover(&["--at", "2024-12-01T23:30:00Z", "route"], BERLIN_HOURS);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "TABLE            FROM                  UNTIL\nh_2024-12-02T00  2024-12-01T23:00:00Z  2024-12-02T00:00:00Z\n"
    );
    let reversed = ddb_rollover(
        &[
            "route",
            "--from",
            "2024-12-02T00:00:00Z",
            "--to",
            "2024-12-01T00:00:00Z",
        ],
        BERLIN_HOURS,
    );
    assert_eq!(reversed.code, 2);
    assert!(
        reversed.stderr.contains("a time range needs from <= to"),
        "{}",
        reversed.stderr
    );
    let half = ddb_rollover(&["route", "--from", "2024-12-02T00:00:00Z"], BERLIN_HOURS);
    assert_eq!(half.code, 2, "clap refuses --from without --to");
    assert!(half.stderr.contains("--to"), "{}", half.stderr);
}

#[test]
fn negative_durations_are_refused_naming_the_flag() {
    for (args, flag) in [
        (&["--time-budget", "-5s", "plan"][..], "--time-budget"),
        (&["plan", "--time-budget", "-1m"][..], "--time-budget"),
    ] {
        let run = ddb_rollover(args, "{}");
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(flag) && run.stderr.contains("negative"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let run = capacity(&["--item-bytes", "1024", "--items", "10", "--within", "-30m"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--within") && run.stderr.contains("negative"),
        "{}",
        run.stderr
    );
}

/// The binary with test credentials and an endpoint where nothing listens: every AWS call
/// fails at once, so what it prints before calling AWS is all there is to see.
fn without_aws(args: &[&str]) -> ProcessRun {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut with_endpoint = vec!["--endpoint-url", &endpoint, "--region", "us-east-1"];
    with_endpoint.extend(args);
    ProcessRun::of(
        Command::new(crate::support::binaries::cli())
            .args(&with_endpoint)
            .env_clear()
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env("AWS_MAX_ATTEMPTS", "1"),
    )
}

#[test]
fn create_new_far_ahead_warns_that_nothing_lowers_future_tables() {
    let far = "2999-01-01T00:00:00Z";
    let run = without_aws(&["--at", far, "create-new"]);
    let warning = run
        .stderr
        .lines()
        .find(|l| l.starts_with("warning: --at"))
        .unwrap_or_default();
    assert!(
        warning.starts_with("warning: --at 2999-01-01 00:00:00 UTC is in period 2999-01-01,")
            && warning.contains("periods after the wall clock's")
            && warning.contains("phase 0")
            && warning.contains("nothing lowers a future table"),
        "{}",
        run.stderr
    );
    // Said before the run, which cannot reach DynamoDB here.
    let error = run
        .stderr
        .find("error: ListTables")
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(
        run.stderr.find("warning: --at").unwrap() < error,
        "{}",
        run.stderr
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    // A dry run previews the same run: same warning.
    let dry = without_aws(&["--at", far, "--dry-run", "create-new"]);
    assert!(dry.stderr.starts_with("warning: --at "), "{}", dry.stderr);

    // The next period's table (a 23:45 run), and resize-old's refusal, do not warn.
    let tomorrow = (chrono::Utc::now() + chrono::TimeDelta::days(1)).to_rfc3339();
    let near = without_aws(&["--at", &tomorrow, "create-new"]);
    assert!(!near.stderr.contains("warning: --at"), "{}", near.stderr);
    let resize = without_aws(&["--at", far, "resize-old"]);
    assert_eq!(resize.code, 2);
    assert!(!resize.stderr.contains("warning:"), "{}", resize.stderr);
}

/// `restore`'s periods are checked before any AWS configuration is used: every bad label is
/// named with what a label of the policy looks like, exit 2, and no endpoint is needed.
#[test]
fn restore_names_every_bad_label_before_any_aws_call() {
    let policy =
        r#"{"prefix": "back", "period": "day", "retention": {"archive_after": 1, "bucket": "archive"}}"#;
    let run = ddb_rollover(
        &[
            "--endpoint-url",
            "http://127.0.0.1:9",
            "restore",
            "2018-13-01",
            "yesterday",
            "2018-10-02",
            "--keep",
            "3d",
        ],
        policy,
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("\"2018-13-01\"") && run.stderr.contains("\"yesterday\""),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("\"2018-10-02\""),
        "a good label named: {}",
        run.stderr
    );
    assert!(run.stderr.contains("looks like"), "{}", run.stderr);
    let backwards = ddb_rollover(
        &[
            "restore",
            "--from",
            "2018-10-05",
            "--to",
            "2018-10-01",
            "--keep",
            "1d",
        ],
        policy,
    );
    assert_eq!(backwards.code, 2, "{}", backwards.stderr);
    assert!(
        backwards.stderr.contains("--to is before --from"),
        "{}",
        backwards.stderr
    );
    let no_keep = ddb_rollover(&["restore", "2018-10-02"], policy);
    assert_eq!(no_keep.code, 2, "{}", no_keep.stderr);
    assert!(no_keep.stderr.contains("--keep"), "{}", no_keep.stderr);
}
