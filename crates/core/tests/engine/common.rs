//! Helpers shared by the engine's tests: instants, policy text several test files build on
//! ([`policies`]), reading a plan ([`plans`]), a run over the in-memory account
//! ([`fake_runs`]), and reading a run's report ([`reports`]).

pub(crate) mod daily;
pub(crate) mod fake_runs;
pub(crate) mod plans;
pub(crate) mod policies;
pub(crate) mod reports;

/// The instant an RFC 3339 text names, in UTC.
pub(crate) fn at(rfc3339: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(rfc3339).unwrap().to_utc()
}

/// The seed every property test of the engine starts from unless `PROPTEST_RNG_SEED` names
/// another: plain `cargo test` and CI replay the same recorded cases each run (after the
/// committed regression files in `crates/core/tests/proptest-regressions/`), so no submission
/// is refused by a case its change did not cause. Fresh random cases are the long run's:
/// `scripts/long-run.sh` (docs/testing.md, "Fresh random cases").
pub(crate) const RECORDED_SEED: u64 = 20_261_129;

/// A property test's runner settings: `default_cases` cases from [`RECORDED_SEED`], unless
/// `PROPTEST_CASES` or `PROPTEST_RNG_SEED` say otherwise.
pub(crate) fn recorded(default_cases: u32) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, RngSeed};
    // proptest's own defaults, which read every PROPTEST_* variable.
    let from_env = Config::default();
    let set = |name: &str| std::env::var_os(name).is_some();
    Config {
        cases: if set("PROPTEST_CASES") {
            from_env.cases
        } else {
            default_cases
        },
        rng_seed: if set("PROPTEST_RNG_SEED") {
            from_env.rng_seed
        } else {
            RngSeed::Fixed(RECORDED_SEED)
        },
        ..from_env
    }
}

/// Two data files of an export, as a proof records them.
pub(crate) fn two_files() -> Vec<ddb_rollover::ledger::ArchivedFile> {
    (1..=2)
        .map(|n| ddb_rollover::ledger::ArchivedFile {
            key: format!("ddb-rollover/x/AWSDynamoDB/y/data/{n}.json.gz"),
            etag: format!("{n:032x}"),
            size: 100 * n,
            md5: String::new(),
            items: 2,
        })
        .collect()
}
