#!/usr/bin/env bash
# The long run: fresh random cases for the engine's property tests (the promises, periods and
# labels, policy bounds), which `cargo test` and CI replay only from their recorded seed
# (crates/core/tests/engine/common.rs, RECORDED_SEED). Run it before resolving any issue that
# touches the engine, and put its seed, case count and findings in the closing note. It prints
# what the promises' cases exercised (PROMISES_STATS=1, the default here).
#
#   scripts/long-run.sh            # a random seed, 50,000 cases of each property
#   scripts/long-run.sh 200000     # more cases
#   PROPTEST_RNG_SEED=N scripts/long-run.sh   # replay one long run exactly
#
# A failure prints the shrunk case and proptest adds its seed to
# crates/core/tests/proptest-regressions/: commit that line with the fix (and write the case
# out in promises.rs's known_cases, which survive changes to the generator), so every later
# run replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

cases=${1:-${PROPTEST_CASES:-50000}}
seed=${PROPTEST_RNG_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}
echo "long run: seed $seed, $cases cases each (PROPTEST_RNG_SEED=$seed scripts/long-run.sh $cases replays it)"
started=$SECONDS
PROPTEST_RNG_SEED=$seed PROPTEST_CASES=$cases PROMISES_STATS=${PROMISES_STATS:-1} \
  cargo test --release -p ddb-rollover --test engine -- --include-ignored --nocapture \
  promises::promises_long period_props:: policy_bounds::
echo "long run: seed $seed, $cases cases each, passed in $((SECONDS - started)) s"
