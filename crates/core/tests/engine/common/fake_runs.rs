//! A run over the in-memory account ([`fake_aws::FakeAws`]) at the fake's own clock.

use ddb_rollover::{run, ApplyOptions, Operation, Policy, RunReport};
use fake_aws::FakeAws;

/// create_new at the fake's clock, which its readiness polls move on (no wall-clock wait).
pub(crate) fn create_new(fake: &FakeAws, policy: &Policy) -> RunReport {
    let at = ddb_rollover::simulation(policy, &[Operation::CreateNew], fake.now()).unwrap();
    futures::executor::block_on(run(
        fake,
        policy,
        Operation::CreateNew,
        &at,
        ApplyOptions::default(),
    ))
    .unwrap()
}
