//! Another family's tag on a table of ours, with an operator's credentials (no role to refuse
//! anything): the real binary on moto. The table is still ours by the identity the ledger
//! recorded when create-new made it (a tag anyone can copy or edit decides nothing), so
//! resize-old moves it on like the others; `status`, which reads the tags, warns that the
//! functions' roles would refuse the change and retention never deletes it until this family's
//! tag is back. Read back from moto: dialled down, the other family's tag left as it is.

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
    for at in [
        "2018-10-23T23:45:00Z",
        "2018-10-24T23:45:00Z",
        "2018-10-25T23:45:00Z",
    ] {
        cli(&["--at", at, "create-new"]);
    }
    let arn = testkit::table_arn(&client, RETAGGED).await;
    common::tag_family(&client, &arn, "timeseries_eu").await;
    let before = testkit::capacity_of(&testkit::describe(&client, RETAGGED).await);

    let status = cli(&["--output", "json", "--at", "2018-10-26T00:10:00Z", "status"]).json();
    let predicted = line_of(&status, RETAGGED);
    assert_eq!(
        predicted["resize_old"]["decision"]["action"], "update",
        "{predicted:#}"
    );
    let warned = status["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str().is_some_and(|w| {
            w.contains("carry another family's") && w.contains(RETAGGED) && w.contains("timeseries_eu")
        })
    });
    assert!(warned, "{:#}", status["warnings"]);

    let resize = cli(&["--output", "json", "--at", "2018-10-26T00:15:00Z", "resize-old"]).json();
    assert_eq!(line_of(&resize, RETAGGED)["outcome"], "done", "{resize:#}");
    assert_eq!(line_of(&resize, YESTERDAY)["outcome"], "done", "{resize:#}");

    // Read back: the retagged table dialled down past yesterday's phase, its tags as they were.
    let after = testkit::capacity_of(&testkit::describe(&client, RETAGGED).await);
    assert!(
        after.0 < before.0 && after.1 < before.1,
        "{before:?} -> {after:?}"
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
