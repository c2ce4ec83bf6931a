//! Another family's tag on a name of ours, with an operator's credentials (no role to refuse
//! anything): the real binary on moto. resize-old plans a table of our name and key without
//! reading its tags; it reads them just before the change and leaves the table as it is, with
//! a warning, and `status` says so first. Read back from moto: capacity and tags as they were,
//! while the run's other change is made.

use testkit::{LocalDynamo, Server};

use super::common::{self, line_of, run_cli};

const RETAGGED: &str = "timeseries_2018-10-24";
const YESTERDAY: &str = "timeseries_2018-10-25";

#[tokio::test]
async fn a_name_of_ours_tagged_for_another_family_is_left_by_the_operators_run() {
    let server = LocalDynamo::start(Server::Moto);
    let client = server.client().await;
    let cli = |args: &[&str]| {
        let run = run_cli(server.endpoint(), server.env(), args);
        assert_eq!(run.code, 0, "{args:?}: {}\n{}", run.stdout, run.stderr);
        run
    };
    // 10-24, 10-25 and 10-26 made by create-new, all still hot; then someone retags 10-24.
    for at in ["2018-10-23T23:45:00Z", "2018-10-24T23:45:00Z"] {
        cli(&["--at", at, "create-new"]);
    }
    let arn = testkit::table_arn(&client, RETAGGED).await;
    common::tag_family(&client, &arn, "timeseries_eu").await;
    let before = testkit::capacity_of(&testkit::describe(&client, RETAGGED).await);

    let status = cli(&["--output", "json", "--at", "2018-10-26T00:10:00Z", "status"]).json();
    let predicted = line_of(&status, RETAGGED);
    assert_eq!(
        predicted["resize_old"]["decision"]["action"], "foreign",
        "{predicted:#}"
    );

    let resize = cli(&["--output", "json", "--at", "2018-10-26T00:15:00Z", "resize-old"]).json();
    assert_eq!(line_of(&resize, RETAGGED)["outcome"], "foreign", "{resize:#}");
    assert_eq!(line_of(&resize, YESTERDAY)["outcome"], "done", "{resize:#}");
    let warned = resize["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str().is_some_and(|w| {
            w.starts_with(&format!("{RETAGGED} was not changed")) && w.contains("timeseries_eu")
        })
    });
    assert!(warned, "{:#}", resize["warnings"]);

    // Read back: the retagged table as it was, yesterday's dialled down.
    assert_eq!(
        testkit::capacity_of(&testkit::describe(&client, RETAGGED).await),
        before
    );
    assert_eq!(
        testkit::tags_of(&client, &arn)
            .await
            .get("ddb-rollover:family")
            .map(String::as_str),
        Some("timeseries_eu")
    );
    assert_eq!(
        testkit::capacity_of(&testkit::describe(&client, YESTERDAY).await),
        (100, 1)
    );
}
