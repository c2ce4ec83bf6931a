//! Helpers shared by the engine's tests: instants, the SDK-adapter tests' mock rules
//! ([`mocks`]), policy text several test files build on ([`policies`]), reading a plan
//! ([`plans`]), a run over the in-memory account ([`fake_runs`]), and reading a run's report
//! ([`reports`]).

pub(crate) mod fake_runs;
pub(crate) mod mocks;
pub(crate) mod plans;
pub(crate) mod policies;
pub(crate) mod reports;

/// The instant an RFC 3339 text names, in UTC.
pub(crate) fn at(rfc3339: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(rfc3339).unwrap().to_utc()
}
