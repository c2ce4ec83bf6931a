//! The family's consumer function (`[stream.lambda]`) with the real binary on moto, through the
//! tests' proxy: ten simulated days of create-new and resize-old with retention deleting tables
//! four days old. Each table of the family gets exactly one mapping of ours to the named
//! function, made with the table and gone with it; a mapping of another function that someone
//! put on one of our tables survives every run, and keeps that table. Then the loud side: a
//! mapping of ours someone disabled, or a consumer function that does not exist, fails
//! create-new. Everything is read back from moto (ListEventSourceMappings, DescribeTable,
//! ListTables), not from our reports.

use std::path::PathBuf;

use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::Value;
use testkit::{LocalDynamo, Server};

use super::common::{json_run, run_cli};
use crate::support::lambda::{create_function, lambda_client, mappings_on, streams_of};

fn policy_text(function: &str) -> String {
    format!(
        "prefix = \"timeseries\"\n[key]\npartition = {{ name = \"pk\", type = \"S\" }}\nsort = {{ name = \"sk\", type = \"S\" }}\n\
         [template]\nstream = \"new_and_old_images\"\n[stream.lambda]\nfunction = \"{function}\"\nbatch_size = 50\n\
         [retention]\ndelete_after = 4\nkeep_newest = 2\n"
    )
}

fn policy_file(name: &str, function: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ddb-rollover-mapping-{name}-{}.toml", std::process::id()));
    std::fs::write(&path, policy_text(function)).unwrap();
    path
}

/// The table's latest stream, as DescribeTable says.
async fn stream_of(client: &Client, table: &str) -> String {
    testkit::describe(client, table)
        .await
        .latest_stream_arn()
        .unwrap_or_else(|| panic!("{table} has no stream"))
        .to_owned()
}

/// The family's tables (`timeseries_20…`), as ListTables says.
async fn family(client: &Client) -> Vec<String> {
    let names = client.list_tables().send().await.unwrap();
    names
        .table_names()
        .iter()
        .filter(|n| n.starts_with("timeseries_20"))
        .cloned()
        .collect()
}

#[tokio::test]
async fn ten_days_each_table_has_one_mapping_of_ours_made_with_it_and_gone_with_it_on_moto() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let lambda = lambda_client(server.server_endpoint());
    let consumer = create_function(server.server_endpoint(), "ingest-consumer").await;
    let audit = create_function(server.server_endpoint(), "audit").await;
    let file = policy_file("ten-days", &consumer);
    let run = |at: DateTime<Utc>, command: &str| {
        json_run(server.endpoint(), server.env(), &file, &at.to_rfc3339(), command)
    };

    let first = Utc.with_ymd_and_hms(2018, 10, 25, 0, 0, 0).unwrap();
    let mut streams_seen: Vec<(String, String)> = Vec::new();
    let mut theirs: Option<(String, String)> = None;
    for day in 0..10 {
        let midnight = first + Duration::days(day + 1);
        let created = run(midnight - Duration::minutes(15), "create-new");
        assert_eq!(created["next_table_ready"]["ready"], true, "{created:#}");
        // Each table of the family that exists now has exactly one mapping of ours, Enabled.
        for table in family(&client).await {
            let stream = stream_of(&client, &table).await;
            let ours: Vec<_> = mappings_on(&lambda, &stream)
                .await
                .into_iter()
                .filter(|(function, _, _)| *function == consumer)
                .collect();
            assert_eq!(ours.len(), 1, "day {day}, {table}: {ours:?}");
            assert_eq!(ours[0].1, "Enabled", "{table}");
            if !streams_seen.iter().any(|(t, _)| *t == table) {
                streams_seen.push((table.clone(), stream));
            }
        }
        if day == 1 {
            // Someone maps their own function to one of our tables' streams.
            let table = "timeseries_2018-10-26".to_string();
            let stream = stream_of(&client, &table).await;
            let made = lambda
                .create_event_source_mapping()
                .event_source_arn(&stream)
                .function_name(&audit)
                .starting_position(aws_sdk_lambda::types::EventSourcePosition::Latest)
                .send()
                .await
                .unwrap();
            theirs = Some((table, made.uuid().unwrap().to_owned()));
        }
        run(midnight + Duration::minutes(15), "resize-old");
    }

    let remaining = family(&client).await;
    let (kept, their_uuid) = theirs.unwrap();
    // Deleted: four days old, keeping the newest two, except the table someone's consumer reads.
    let deleted: Vec<&(String, String)> = streams_seen
        .iter()
        .filter(|(t, _)| !remaining.contains(t))
        .collect();
    assert!(
        deleted.len() >= 4,
        "retention deleted tables: {deleted:?} (remaining {remaining:?})"
    );
    assert!(
        remaining.contains(&kept),
        "the table someone's consumer reads is kept: {remaining:?}"
    );
    // Every mapping of ours is on a table that still exists: one each, none left on a deleted one.
    let mut ours = streams_of(&lambda, &consumer).await;
    ours.sort();
    let mut want: Vec<String> = streams_seen
        .iter()
        .filter(|(t, _)| remaining.contains(t))
        .map(|(_, s)| s.clone())
        .collect();
    want.sort();
    assert_eq!(ours, want);
    // Theirs survived every run, untouched.
    let on_kept = mappings_on(&lambda, &stream_of(&client, &kept).await).await;
    assert!(
        on_kept
            .iter()
            .any(|(f, state, uuid)| *f == audit && *uuid == their_uuid && state == "Enabled"),
        "{on_kept:?}"
    );
    assert_eq!(streams_of(&lambda, &audit).await.len(), 1);

    // status says why the kept table stays (after the last day's runs, while the tables writers
    // need are ready: status exits 1 once the current table is missing).
    let status = run(first + Duration::days(10) + Duration::minutes(20), "status");
    let line = status["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["table"] == kept.as_str())
        .unwrap();
    assert!(line.to_string().contains(&their_uuid), "{line:#}");
    assert_eq!(line["consumer"], "Enabled", "{line:#}");
}

#[tokio::test]
async fn create_new_fails_loudly_on_a_disabled_mapping_or_a_missing_function() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let lambda = lambda_client(server.server_endpoint());
    let consumer = create_function(server.server_endpoint(), "ingest-consumer").await;
    let file = policy_file("disabled", &consumer);
    let create_new = |file: &PathBuf, at: &str| {
        run_cli(
            server.endpoint(),
            server.env(),
            &[
                "--policy",
                file.to_str().unwrap(),
                "--output",
                "json",
                "--at",
                at,
                "create-new",
            ],
        )
    };
    let run = create_new(&file, "2018-10-25T23:45:00Z");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    // Someone disables ours on the pre-built table: the run leaves it, and says so loudly.
    let stream = stream_of(&client, "timeseries_2018-10-26").await;
    let (_, _, uuid) = mappings_on(&lambda, &stream).await.remove(0);
    lambda
        .update_event_source_mapping()
        .uuid(&uuid)
        .enabled(false)
        .send()
        .await
        .unwrap();
    let run = create_new(&file, "2018-10-25T23:50:00Z");
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report = run.json();
    assert_eq!(report["next_table_ready"]["ready"], false, "{report:#}");
    let tomorrow = &report["next_table_ready"]["tables"][1];
    assert_eq!(tomorrow["consumer"], "Disabled", "{report:#}");
    assert_eq!(
        mappings_on(&lambda, &stream).await[0].1,
        "Disabled",
        "never enabled again by a run"
    );

    // A consumer function that does not exist: the mapping steps fail, and the run.
    let missing = policy_file(
        "missing",
        "arn:aws:lambda:us-east-1:123456789012:function:no-such-function",
    );
    let run = create_new(&missing, "2018-11-01T23:45:00Z");
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report = run.json();
    let failed: Vec<&Value> = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["decision"]["action"] == "create_event_source_mapping")
        .collect();
    assert_eq!(failed.len(), 2, "{report:#}");
    for line in failed {
        assert_eq!(line["outcome"], "failed", "{line:#}");
        assert!(
            line["error"].as_str().unwrap().contains("no-such-function"),
            "{line:#}"
        );
    }
}

/// (batch size, filter patterns) of the mapping `uuid`, as moto's ListEventSourceMappings says.
async fn settings_of(lambda: &aws_sdk_lambda::Client, stream_arn: &str, uuid: &str) -> (i32, Vec<String>) {
    let out = lambda
        .list_event_source_mappings()
        .event_source_arn(stream_arn)
        .send()
        .await
        .unwrap_or_else(|e| panic!("ListEventSourceMappings {stream_arn}: {e:?}"));
    let mapping = out
        .event_source_mappings()
        .iter()
        .find(|m| m.uuid() == Some(uuid))
        .unwrap_or_else(|| panic!("no mapping {uuid} on {stream_arn}"));
    let filters = mapping
        .filter_criteria()
        .map(|c| {
            c.filters()
                .iter()
                .filter_map(|f| f.pattern().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    (mapping.batch_size().unwrap_or_default(), filters)
}

/// The lines of a run's or status's report whose decision is `action`, as (table, reason).
fn lines_of(report: &Value, action: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for line in report["tables"].as_array().unwrap() {
        let own = std::iter::once(line)
            .chain(line["create_new"].as_object().map(|_| &line["create_new"]))
            .chain(line["other_changes"].as_array().into_iter().flatten());
        for entry in own {
            if entry["decision"]["action"] == action {
                let table = line["table"].as_str().unwrap_or_default().to_owned();
                found.push((table, entry["reason"].as_str().unwrap_or_default().to_owned()));
            }
        }
    }
    found
}

/// Issue 38: someone changes our mapping's batch size and filters (to match nothing): the next
/// create-new puts the policy's back (UpdateEventSourceMapping by its UUID), as dry run and
/// status said it would, and the run after changes nothing (Lambda's spelling of a pattern is
/// not drift). Someone else's mapping with other settings is never updated. Ours that someone
/// re-pointed to another function is neither pointed back nor doubled by a new mapping: the run
/// fails, not ready, naming it. Read back from moto.
#[tokio::test]
async fn our_mappings_drifted_settings_are_put_back_and_a_re_pointed_one_is_left_on_moto() {
    const FILTER: &str = r#"{"eventName": ["INSERT", "MODIFY"]}"#;
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let lambda = lambda_client(server.server_endpoint());
    let consumer = create_function(server.server_endpoint(), "ingest-consumer").await;
    let audit = create_function(server.server_endpoint(), "audit").await;
    let file = std::env::temp_dir().join(format!("ddb-rollover-mapping-drift-{}.toml", std::process::id()));
    std::fs::write(
        &file,
        policy_text(&consumer).replace(
            "batch_size = 50\n",
            &format!("batch_size = 50\nfilters = ['{FILTER}']\n"),
        ),
    )
    .unwrap();
    let cli = |at: &str, args: &[&str]| {
        let mut all = vec!["--policy", file.to_str().unwrap(), "--output", "json", "--at", at];
        all.extend_from_slice(args);
        run_cli(server.endpoint(), server.env(), &all)
    };
    let run = cli("2018-10-25T23:45:00Z", &["create-new"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let today = stream_of(&client, "timeseries_2018-10-25").await;
    let tomorrow = stream_of(&client, "timeseries_2018-10-26").await;
    let (_, _, ours) = mappings_on(&lambda, &tomorrow).await.remove(0);
    assert_eq!(
        settings_of(&lambda, &tomorrow, &ours).await,
        (50, vec![FILTER.to_owned()])
    );

    // Someone changes ours on tomorrow's table; someone maps their own function there with
    // settings of their own.
    lambda
        .update_event_source_mapping()
        .uuid(&ours)
        .batch_size(7)
        .filter_criteria(
            aws_sdk_lambda::types::FilterCriteria::builder()
                .filters(
                    aws_sdk_lambda::types::Filter::builder()
                        .pattern(r#"{"eventName": ["NOTHING"]}"#)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let theirs = lambda
        .create_event_source_mapping()
        .event_source_arn(&tomorrow)
        .function_name(&audit)
        .batch_size(10)
        .starting_position(aws_sdk_lambda::types::EventSourcePosition::Latest)
        .send()
        .await
        .unwrap()
        .uuid()
        .unwrap()
        .to_owned();

    // status and dry run say the update, exactly as the run makes it; dry run changes nothing.
    let status = cli("2018-10-25T23:46:00Z", &["status"]);
    let said = lines_of(&status.json(), "update_event_source_mapping");
    assert_eq!(said.len(), 1, "{}", status.stdout);
    assert_eq!(said[0].0, "timeseries_2018-10-26");
    assert!(
        said[0].1.contains(&ours) && said[0].1.contains("batch size 7, the policy says 50"),
        "{said:?}"
    );
    let dry = cli("2018-10-25T23:47:00Z", &["--dry-run", "create-new"]);
    assert_eq!(dry.code, 0, "{}\n{}", dry.stdout, dry.stderr);
    assert_eq!(lines_of(&dry.json(), "update_event_source_mapping"), said);
    assert_eq!(
        settings_of(&lambda, &tomorrow, &ours).await.0,
        7,
        "dry run changed it"
    );

    let run = cli("2018-10-25T23:48:00Z", &["create-new"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let report = run.json();
    assert_eq!(lines_of(&report, "update_event_source_mapping"), said);
    assert_eq!(report["next_table_ready"]["ready"], true, "{report:#}");
    assert_eq!(
        settings_of(&lambda, &tomorrow, &ours).await,
        (50, vec![FILTER.to_owned()]),
        "the policy's settings are back"
    );
    assert_eq!(
        settings_of(&lambda, &tomorrow, &theirs).await,
        (10, Vec::new()),
        "someone else's mapping is never updated"
    );
    // No update loop: the next run changes nothing.
    let again = cli("2018-10-25T23:49:00Z", &["create-new"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(
        lines_of(&again.json(), "update_event_source_mapping").is_empty(),
        "{}",
        again.stdout
    );

    // Someone re-points ours on today's table to their function: left as it is, not doubled.
    let (_, _, repointed) = mappings_on(&lambda, &today).await.remove(0);
    lambda
        .update_event_source_mapping()
        .uuid(&repointed)
        .function_name(&audit)
        .send()
        .await
        .unwrap();
    let run = cli("2018-10-25T23:50:00Z", &["create-new"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report = run.json();
    assert_eq!(report["next_table_ready"]["ready"], false, "{report:#}");
    let line = &report["next_table_ready"]["tables"][0];
    assert_eq!(line["table"], "timeseries_2018-10-25", "{report:#}");
    assert_eq!(line["consumer"], "REPOINTED", "{line:#}");
    assert!(line.to_string().contains(&repointed), "{line:#}");
    assert!(
        lines_of(&report, "create_event_source_mapping").is_empty()
            && lines_of(&report, "update_event_source_mapping").is_empty(),
        "{report:#}"
    );
    let on_today = mappings_on(&lambda, &today).await;
    assert_eq!(on_today.len(), 1, "no second mapping: {on_today:?}");
    assert_eq!(
        (&on_today[0].0, &on_today[0].2),
        (&audit, &repointed),
        "not pointed back"
    );
    let status = cli("2018-10-25T23:51:00Z", &["status"]).json();
    let line = status["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["table"] == "timeseries_2018-10-25")
        .unwrap();
    assert!(
        line["consumer"]
            .as_str()
            .unwrap_or_default()
            .starts_with("REPOINTED"),
        "{line:#}"
    );
}
