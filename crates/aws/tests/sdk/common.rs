//! Helpers shared by the SDK-adapter tests: instants, the mock rules ([`mocks`]) and reading a
//! run's report ([`reports`]).

pub(crate) mod mocks;
pub(crate) mod reports;

/// The instant an RFC 3339 text names, in UTC.
pub(crate) fn at(rfc3339: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(rfc3339).unwrap().to_utc()
}
