#!/usr/bin/env bash
# All the tests: installs the local DynamoDB servers (moto, dynalite, AWS's DynamoDB Local) if
# needed, then runs every unit, property, SDK-mock and end-to-end test. Each end-to-end test
# starts its own server through scripts/local-ddb.sh and stops it by PID. Ends with one line:
# "tests: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/local-ddb.sh install
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace --all-targets "$@" 2>&1 | tee "$log" || status=$?
# The library's documentation examples (compiled, not run: they need AWS).
cargo test --doc -p ddb-rollover -p ddb-rollover-app 2>&1 | tee -a "$log" || status=$?
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log" | tee -a "${TEST_SUMMARY_FILE:-/dev/null}"
exit "$status"
