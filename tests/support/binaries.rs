//! The workspace's binaries under test: the `ddb-rollover` CLI, the `iot-ingest` example and
//! the two Lambda functions' bootstraps (`create-new`, `resize-old`, built for the host).
//!
//! Cargo sets `CARGO_BIN_EXE_<name>` only for the integration tests of the package that owns
//! the binary (artifact dependencies, which would lift that, are unstable), and these tests live
//! in a package of their own. So the binaries are taken from where Cargo puts them, next to this
//! test executable (`<target>/<profile>/deps/system-<hash>` runs `<target>/<profile>/<name>`),
//! after one `cargo build --workspace --all-targets` per test process into that target
//! directory and profile, which keeps them from being stale whichever way the tests were
//! started. It is the same selection as `scripts/test.sh`'s build stage on purpose: the test
//! targets' dev-dependencies add SDK features (`test-util`), and `cargo build -p
//! ddb-rollover-cli` alone would resolve other features and build the whole SDK a second time.
//! `scripts/test.sh` has just built them and says so with `DDB_ROLLOVER_BINARIES_BUILT=1`: then
//! nothing is built here (one fingerprint check per test process would add up under nextest,
//! which runs each test in its own process).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The `ddb-rollover` CLI: [`CLI_BINARY_ENV`]'s file when set, else this build's.
pub(crate) fn cli() -> PathBuf {
    let Some(path) = std::env::var_os(CLI_BINARY_ENV) else {
        return binary("ddb-rollover");
    };
    let path = PathBuf::from(path);
    assert!(path.is_file(), "{} is missing ({CLI_BINARY_ENV})", path.display());
    path
}

/// Where a test may take the CLI from another build (e.g. another branch's
/// `target/debug/ddb-rollover`, to show a test fails there): `DDB_ROLLOVER_CLI_BINARY=<file>`,
/// used as it is (nothing is built).
pub(crate) const CLI_BINARY_ENV: &str = "DDB_ROLLOVER_CLI_BINARY";

/// The `iot-ingest` example's binary.
pub(crate) fn iot_ingest() -> PathBuf {
    binary("iot-ingest")
}

/// The `create_new` function's bootstrap ([`function_binary`]).
pub(crate) fn create_new() -> PathBuf {
    function_binary("create-new")
}

/// The `resize_old` function's bootstrap ([`function_binary`]).
pub(crate) fn resize_old() -> PathBuf {
    function_binary("resize-old")
}

/// Where a test may take the functions' bootstraps from another build (e.g. another branch's
/// `target/debug`, to show a test fails there): `DDB_ROLLOVER_FUNCTION_BINARIES=<dir>`, which
/// is then used as it is (nothing is built).
pub(crate) const FUNCTION_BINARIES_ENV: &str = "DDB_ROLLOVER_FUNCTION_BINARIES";

/// The function binary `name`: from [`FUNCTION_BINARIES_ENV`]'s directory when set, else this
/// build's.
fn function_binary(name: &str) -> PathBuf {
    let Some(dir) = std::env::var_os(FUNCTION_BINARIES_ENV) else {
        return binary(name);
    };
    let path = Path::new(&dir).join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is missing ({FUNCTION_BINARIES_ENV}={})",
        path.display(),
        Path::new(&dir).display()
    );
    path
}

/// `<target>/<profile>`, where every binary of the workspace is, built ([`build`]); the examples
/// are in its `examples/` (scripts/demo.sh takes them from there with `DEMO_BIN_DIR`).
pub(crate) fn profile_dir() -> &'static Path {
    static PROFILE_DIR: OnceLock<PathBuf> = OnceLock::new();
    PROFILE_DIR.get_or_init(build)
}

fn binary(name: &str) -> PathBuf {
    let dir = profile_dir();
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is missing: build it with `cargo build --workspace --all-targets`",
        path.display()
    );
    path
}

/// Builds the workspace's binaries unless scripts/test.sh just did; returns `<target>/<profile>`.
fn build() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test executable lies in <target>/<profile>/deps")
        .to_owned();
    if std::env::var_os("DDB_ROLLOVER_BINARIES_BUILT").is_some() {
        return profile_dir;
    }
    let target_dir = profile_dir.parent().expect("a target directory");
    let profile = match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => panic!("no profile directory above {}", exe.display()),
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let output = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "build",
            "--quiet",
            "--workspace",
            "--all-targets",
            "--profile",
            profile,
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo build --workspace --all-targets failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    profile_dir
}
