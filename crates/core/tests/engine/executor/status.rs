//! `status` predicts each run exactly, and the pacing wrapper passes every call on.

use super::*;

/// `status` predicts each run exactly, on the same verdicts, and reads what the runs never read
/// (every tag). Tables made by this family (the ledger records them), one of them since tagged
/// with another family's tag (managed by its identity, never deleted without our tag), a table
/// nobody recorded under a name of ours (never touched), and another family's table holding
/// the pre-built name (create_new fails loudly).
#[tokio::test]
async fn status_predicts_each_run_exactly_and_names_what_only_it_can_see() {
    let rig = Rig::new(&[
        ("timeseries_2018-10-20", HOT),
        ("timeseries_2018-10-24", Capacity { read: 1, write: 1 }),
        ("timeseries_2018-10-25", HOT),
    ]);
    for (name, tags) in [
        ("timeseries_2018-10-20", family("timeseries_eu")),
        ("timeseries_2018-10-24", ours()),
        ("timeseries_2018-10-25", ours()),
    ] {
        rig.aws.alter_table(name, |t| t.tags = tags);
    }
    // Made by someone else: under a name of ours with our tag, and at the pre-built name.
    let key = rig.policy.key.clone();
    for (name, tags) in [
        ("timeseries_2018-10-21", ours()),
        ("timeseries_2018-10-26", family("timeseries_eu")),
    ] {
        let mut spec = table_spec(name, key.clone(), Billing::Provisioned(HOT));
        spec.tags = tags;
        rig.aws.foreign_create_table("someone", &spec).unwrap();
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
        let status = ddb_rollover::status(policy, at(now), &observation);
        let report = rig.run(operation, now, ApplyOptions::default()).await;
        assert_eq!(
            predicted(&status, operation),
            made(&report),
            "{operation}: {status:#?}"
        );
        // The same verdict, line by line.
        for line in &report.tables {
            let Some(status_line) = status
                .tables
                .iter()
                .find(|l| l.facts.table == line.item.facts.table)
            else {
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
                line.item.facts.table
            );
        }
        match operation {
            Operation::CreateNew => {
                // The pre-built name is held by another family's table: blocked, the run fails.
                assert_eq!(made(&report)["timeseries_2018-10-26"], ["blocked"]);
                assert!(!report.succeeded());
            }
            Operation::ResizeOld => {
                // 10-20 is ours by its identity: dialled down like any table of ours; 10-21,
                // which nobody recorded, is left as it is, whatever its tag says. Read back.
                assert_eq!(made(&report)["timeseries_2018-10-20"], ["update"]);
                assert!(
                    !made(&report).contains_key("timeseries_2018-10-21"),
                    "{report:#?}"
                );
                assert_eq!(
                    rig.table("timeseries_2018-10-21").unwrap().billing,
                    Billing::Provisioned(HOT)
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
    let paced = ddb_rollover::Paced::new(rig.aws.clone(), Default::default());
    let proof = paced
        .prove_archive("timeseries_2018-10-20", &arn, fake_aws::ACCOUNT_ID)
        .await
        .unwrap();
    assert!(proof.is_proven(), "{proof:?}");
    let record = proof.record(rig.aws.now()).expect("proven");
    let again = paced
        .recheck_archive("timeseries_2018-10-20", &record, fake_aws::ACCOUNT_ID)
        .await
        .unwrap();
    assert!(again.is_proven(), "the fake's own answer, passed on: {again:?}");
}
