#!/usr/bin/env bash
# All the tests: installs the local DynamoDB servers (moto, dynalite, AWS's DynamoDB Local) if
# needed, then runs every unit, property, SDK-mock and system test (the top-level tests/ package,
# which starts servers through scripts/local-ddb.sh and stops them by PID) and the doc tests.
# Runs with cargo-nextest when it is installed (each test its own process, all test binaries at
# once; .config/nextest.toml), with `cargo test` otherwise. Prints each stage's time, then ends
# with one line: "tests: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
stages=()
# stage NAME COMMAND...: runs COMMAND, keeps its output in $log and its duration for the end.
stage() {
  local name=$1 started=$SECONDS
  shift
  "$@" 2>&1 | tee -a "$log" || status=$?
  stages+=("$(printf '%-9s %4ds' "$name" $((SECONDS - started)))")
}

# One build of everything, not an edit loop: incremental compilation's bookkeeping only slows it
# (set CARGO_INCREMENTAL=1 to keep it).
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

stage install scripts/local-ddb.sh install
# Every target, the binaries the system tests run included (tests/support/binaries.rs), in one
# feature resolution: `cargo test` alone builds no binary of a package without integration tests.
stage build cargo build --workspace --all-targets
export DDB_ROLLOVER_BINARIES_BUILT=1
if cargo nextest --version >/dev/null 2>&1; then
  stage run cargo nextest run --workspace --all-targets --no-fail-fast "$@"
else
  stage run cargo test --workspace --all-targets --no-fail-fast "$@"
fi
# The libraries' documentation examples (compiled, not run: they need AWS). nextest runs none.
# --workspace, not -p: the same feature resolution as the build, or the SDK is built again.
stage doc-tests cargo test --workspace --doc

echo "stage times:"
printf '  %s\n' "${stages[@]}"
# Both summaries: libtest's "test result: ok. N passed; N failed; ..." lines (cargo test, doc
# tests) and nextest's "Summary [ 12.3s] N tests run: N passed, N failed, N skipped" (a test
# that timed out is a failure too).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     /^ *Summary \[/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) == "timed" && $(i+2) ~ /^out/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log" | tee -a "${TEST_SUMMARY_FILE:-/dev/null}"
exit "$status"
