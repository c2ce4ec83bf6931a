//! `status` predicts each run exactly, and the pacing wrapper passes every call on.

use super::*;

/// Regression: a table named `{prefix}_{label}` that carries another family's tag was
/// "another family's, never touched" in status, while create_new raised one and resize_old
/// lowered another (the runs read no tags for names of our shape). Now create_new reads the
/// tags of the tables writers use, so it refuses the pre-built one loudly, and status plans
/// each operation on what its run reads: it predicts resize_old's change exactly, with the
/// same verdict, and warns that on AWS the role refuses it.
#[tokio::test]
async fn status_predicts_each_run_exactly_and_names_what_only_it_can_see() {
    let fake = FakeDynamo::with_tables(&[
        ("timeseries_2018-10-20", HOT),
        ("timeseries_2018-10-24", Capacity { read: 1, write: 1 }),
        ("timeseries_2018-10-25", HOT),
        ("timeseries_2018-10-26", Capacity { read: 1, write: 1 }),
    ]);
    let other_family = BTreeMap::from([(TAG_FAMILY.to_string(), "timeseries_eu".to_string())]);
    let ours = BTreeMap::from([(TAG_FAMILY.to_string(), "timeseries".to_string())]);
    for (name, tags) in [
        ("timeseries_2018-10-20", &other_family),
        ("timeseries_2018-10-24", &ours),
        ("timeseries_2018-10-25", &ours),
        ("timeseries_2018-10-26", &other_family),
    ] {
        fake.with_table(name, |t| {
            t.key = Some(Policy::default().key);
            t.tags = Some(tags.clone());
        });
    }
    let policy = Policy::default();
    for (operation, now) in [
        (Operation::CreateNew, at("2018-10-25T23:45:00Z")),
        (Operation::ResizeOld, at("2018-10-26T00:15:00Z")),
    ] {
        let observation = ddb_rollover::observe(&fake, &policy, ddb_rollover::Scope::Full, 4)
            .await
            .unwrap();
        let status = ddb_rollover::run::status::status(&policy, now, &observation.tables);
        let report = run(
            &fake,
            &policy,
            operation,
            &simulated(&policy, operation, now),
            ApplyOptions::default(),
        )
        .await
        .unwrap();
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
                // 10-20 is lowered by a run that reads no tags for it; status says so, and why
                // it would fail on AWS.
                assert_eq!(made(&report)["timeseries_2018-10-20"], ["update"]);
                assert!(
                    status.warnings.iter().any(|w| w
                        .starts_with("timeseries_2018-10-20: its tags make it not ours")
                        && w.contains("aws:ResourceTag")),
                    "{:#?}",
                    status.warnings
                );
            }
        }
    }
}

/// The pacing wrapper the CLI and the functions run through passes the archive and import
/// calls on (a default method left in place would answer Unsupported and keep every archived
/// table forever).
#[tokio::test]
async fn pacing_passes_the_archive_calls_on() {
    let fake = FakeDynamo::with_tables(&[("timeseries_2018-10-20", HOT)]);
    let arn = fake
        .export_table(&ExportRequest {
            name: "timeseries_2018-10-20".into(),
            table_arn: "arn:aws:dynamodb:us-east-1:123456789012:table/timeseries_2018-10-20".into(),
            bucket: "my-archive".into(),
            prefix: "ddb-rollover/timeseries_2018-10-20/".into(),
            after_seal: false,
        })
        .await
        .unwrap();
    let paced = ddb_rollover::run::pace::Paced::new(fake, Default::default());
    let proof = paced.prove_archive("timeseries_2018-10-20", &arn).await.unwrap();
    assert!(proof.is_proven(), "{proof:?}");
    let error = paced.find_archives("t", "b", "p/").await.unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::Unsupported,
        "the fake's own answer, passed on"
    );
}
