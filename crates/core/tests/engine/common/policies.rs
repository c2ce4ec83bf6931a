//! Policy text (TOML) several test files build on, each piece written once: a test joins the
//! pieces it needs with [`policy_of`] and adds what is its own.

use ddb_rollover::policy::WarmThroughput;
use ddb_rollover::{Policy, PolicyError};

/// A string key: partition `pk`, sort `sk`.
pub(crate) const STRING_KEY: &str = r#"
[key]
partition = { name = "pk", type = "S" }
sort = { name = "sk", type = "S" }
"#;

/// The `by_device` global index, partitioned on `device`.
pub(crate) const BY_DEVICE: &str = r#"
[[indexes]]
name = "by_device"
partition = { name = "device", type = "S" }
"#;

/// The `by_site` global index, partitioned on `site`.
pub(crate) const BY_SITE: &str = r#"
[[indexes]]
name = "by_site"
partition = { name = "site", type = "S" }
"#;

/// An on-demand hot phase pre-warmed to [`WARM_WANT`].
pub(crate) const WARM_HOT_PHASE: &str = r#"
[[phases]]
min_age = 0
billing = "on_demand"
warm = { read = 40000, write = 20000 }
"#;

/// The warm throughput [`WARM_HOT_PHASE`] asks for.
pub(crate) const WARM_WANT: WarmThroughput = WarmThroughput {
    read: 40_000,
    write: 20_000,
};

/// The blog's hot phase: 300 / 1000 from age 0.
pub(crate) const BLOG_HOT_PHASE: &str = "
[[phases]]
min_age = 0
read = 300
write = 1000
";

/// One phase at 1 / 1, so an old table's main item is Unchanged and only the rule under test acts.
pub(crate) const ONE_PHASE: &str = "[[phases]]\nmin_age = 0\nread = 1\nwrite = 1\n";

/// Archive at 2 days, delete at 4, keep the newest 2, delete one table per run.
pub(crate) const ARCHIVE: &str = r#"
[retention]
archive_after = 2
delete_after = 4
keep_newest = 2
max_deletes_per_run = 1
bucket = "my-archive"
"#;

/// The fields a validation error names, in its order; any other result fails the test.
pub(crate) fn invalid_fields(result: Result<Policy, PolicyError>) -> Vec<String> {
    let error = result.expect_err("expected a validation error, got a policy");
    assert!(
        matches!(error, PolicyError::Invalid(_)),
        "expected a validation error, got {error}"
    );
    error.fields().iter().map(|f| f.field.clone()).collect()
}

/// The policy the joined `parts` write.
pub(crate) fn policy_of(parts: &[&str]) -> Policy {
    Policy::from_toml(&parts.concat()).unwrap_or_else(|e| panic!("{e}"))
}
