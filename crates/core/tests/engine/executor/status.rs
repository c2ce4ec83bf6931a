//! `status` predicts each run exactly, and the pacing wrapper passes every call on.

use super::*;

/// Regression: a table named `{prefix}_{label}` that carries another family's tag was
/// "another family's, never touched" in status, while create_new raised one and resize_old
/// lowered another (the runs read no tags for names of our shape), and an operator's CLI, with
/// no role to refuse, really lowered it. Now create_new reads the tags of the tables writers
/// use, so it refuses the pre-built one loudly; resize_old reads a table's tags just before
/// changing one it judged ours by name alone, and leaves it; status predicts both, with the
/// same verdict, and says why.
#[tokio::test]
async fn status_predicts_each_run_exactly_and_names_what_only_it_can_see() {
    let rig = Rig::new(&[
        ("timeseries_2018-10-20", HOT),
        ("timeseries_2018-10-24", Capacity { read: 1, write: 1 }),
        ("timeseries_2018-10-25", HOT),
        ("timeseries_2018-10-26", Capacity { read: 1, write: 1 }),
    ]);
    for (name, tags) in [
        ("timeseries_2018-10-20", family("timeseries_eu")),
        ("timeseries_2018-10-24", ours()),
        ("timeseries_2018-10-25", ours()),
        ("timeseries_2018-10-26", family("timeseries_eu")),
    ] {
        rig.aws.alter_table(name, |t| t.tags = tags);
    }
    let policy = &rig.policy;
    for (operation, now) in [
        (Operation::CreateNew, CREATE_AT),
        (Operation::ResizeOld, RESIZE_AT),
    ] {
        rig.aws.set_now(at(now));
        let observation = ddb_rollover::observe(&rig.aws, policy, ddb_rollover::Scope::Full(at(now)), 4)
            .await
            .unwrap();
        let status = ddb_rollover::run::status::status(
            policy,
            at(now),
            &observation.tables,
            &observation.vacant_targets,
        );
        let report = rig.run(operation, now, ApplyOptions::default()).await;
        assert_eq!(
            predicted(&status, operation),
            made(&report),
            "{operation}: {status:#?}"
        );
        // The same verdict, line by line.
        for line in &report.tables {
            let Some(status_line) = status.tables.iter().find(|l| l.table == line.item.table) else {
                continue;
            };
            let next = match operation {
                Operation::CreateNew => &status_line.create_new,
                Operation::ResizeOld => &status_line.resize_old,
            };
            assert_eq!(
                next.as_ref().and_then(|n| n.verdict.as_ref()),
                line.item.verdict.as_ref(),
                "{operation} {}",
                line.item.table
            );
        }
        match operation {
            Operation::CreateNew => {
                // The pre-built table carries another family's tag: blocked, the run fails.
                assert_eq!(made(&report)["timeseries_2018-10-26"], ["blocked"]);
                assert!(!report.succeeded());
            }
            Operation::ResizeOld => {
                // 10-20 is read just before its update and left as it is, with a warning that
                // status gave too; read back from the fake.
                assert!(
                    !made(&report).contains_key("timeseries_2018-10-20"),
                    "{report:#?}"
                );
                let left = outcomes(&report)
                    .into_iter()
                    .find(|(table, _)| *table == "timeseries_2018-10-20");
                assert_eq!(left, Some(("timeseries_2018-10-20", Outcome::Foreign)));
                assert_eq!(
                    rig.table("timeseries_2018-10-20").unwrap().billing,
                    Billing::Provisioned(HOT)
                );
                let warned = |warnings: &[String]| {
                    warnings.iter().any(|w| {
                        w.starts_with("timeseries_2018-10-20 was not changed: its ddb-rollover:family tag names another family")
                            && w.ends_with("(its tags, read just before the update)")
                    })
                };
                assert!(warned(&report.warnings), "{:#?}", report.warnings);
                assert!(warned(&status.warnings), "{:#?}", status.warnings);
            }
        }
    }
}

/// The pacing wrapper the CLI and the functions run through passes the archive and import
/// calls on (a default method left in place would answer Unsupported and keep every archived
/// table forever).
#[tokio::test]
async fn pacing_passes_the_archive_calls_on() {
    let rig = Rig::old_tables(20..=20);
    let request = ExportRequest {
        name: "timeseries_2018-10-20".into(),
        table_arn: "arn:aws:dynamodb:us-east-1:123456789012:table/timeseries_2018-10-20".into(),
        bucket: "my-archive".into(),
        prefix: "ddb-rollover/timeseries_2018-10-20/".into(),
        bucket_owner: fake_aws::ACCOUNT_ID.into(),
        after_seal: false,
    };
    let arn = rig.aws.export_table(&request).await.unwrap();
    let paced = ddb_rollover::run::pace::Paced::new(rig.aws.clone(), Default::default());
    let proof = paced
        .prove_archive("timeseries_2018-10-20", &arn, fake_aws::ACCOUNT_ID)
        .await
        .unwrap();
    assert!(proof.is_proven(), "{proof:?}");
    let found = |archives: Vec<(ddb_rollover::table::archive::ExportLocation, _)>| {
        archives.into_iter().map(|(l, _)| l.export).collect::<Vec<_>>()
    };
    let archives = paced
        .find_archives(
            "timeseries_2018-10-20",
            ddb_rollover::run::archive::Bucket {
                name: &request.bucket,
                owner: fake_aws::ACCOUNT_ID,
            },
            &request.prefix,
        )
        .await
        .unwrap();
    assert_eq!(found(archives), [arn], "the fake's own answer, passed on");
}
