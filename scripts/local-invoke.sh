#!/usr/bin/env bash
# Invokes both Lambda functions locally, as the Lambda runtime would, against moto:
#   1. moto on a free loopback port (scripts/local-ddb.sh),
#   2. `cargo lambda watch`, the Lambda runtime emulator, serving the workspace's binaries
#      with ROLLOVER_POLICY and AWS_ENDPOINT_URL pointing at moto,
#   3. `cargo lambda invoke create-new --data-file events/create_new.json`, then resize-old
#      with events/resize_old.json: each response must be a RunReport with no failed table.
# Both servers are stopped by PID on exit. Exits non-zero on any failure.
#
# Needs cargo-lambda on PATH (scripts/release-check.sh puts .local/release-venv/tools/bin
# there; or `pip install cargo-lambda`), and python3 for moto.
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh" local-invoke
cd "$ROOT"
RUN_DIR="$ROOT/.local/run"
TOOLS_BIN="$ROOT/.local/release-venv/tools/bin"

# Set ROLLOVER_POLICY so the real binary's cold start reads it, beside the variables template.yaml
# always sets (a function refuses to start without them; docs/operations.md "The functions'
# environment").
POLICY='{"prefix":"timeseries"}'

if ! command -v cargo-lambda >/dev/null && [[ -x $TOOLS_BIN/cargo-lambda ]]; then
  PATH="$TOOLS_BIN:$PATH"
fi
command -v cargo-lambda >/dev/null || die "cargo-lambda not found: run scripts/release-check.sh once, or pip install cargo-lambda"

# Longest wait for one invocation: the functions' Timeout in template.yaml.
INVOKE_TIMEOUT=300

MOTO_PID=""
WATCH_PID=""
WATCH_LOG="$RUN_DIR/cargo-lambda-watch-$$.log"
OUT="$(mktemp)"

cleanup() {
  local rc=$?
  if [[ -n $WATCH_PID ]]; then
    # The watcher leads its own process group (setsid): stop it and the function processes
    # it started, and nothing else.
    kill -TERM -- "-$WATCH_PID" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$WATCH_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$WATCH_PID" 2>/dev/null || true
  fi
  if [[ -n $MOTO_PID ]]; then
    scripts/local-ddb.sh stop "$MOTO_PID" || true
  fi
  if [[ $rc != 0 && -f $WATCH_LOG ]]; then
    printf 'local-invoke: last lines of the cargo lambda watch log:\n' >&2
    tail -n 40 "$WATCH_LOG" >&2 || true
  fi
  rm -f "$WATCH_LOG" "$OUT"
  exit "$rc"
}
trap cleanup EXIT

# wait_port PORT PID SECONDS: until something listens on 127.0.0.1:PORT, while PID lives.
wait_port() {
  local port=$1 pid=$2 deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    kill -0 "$pid" 2>/dev/null || die "cargo lambda watch exited during start-up"
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  die "cargo lambda watch did not listen on port $port within $3 s"
}

# check_report NAME OPERATION FILE: the response is a RunReport of OPERATION, nothing failed.
check_report() {
  python3 "$SCRIPT_DIR/check-report.py" "$@"
}

scripts/local-ddb.sh install
mkdir -p "$RUN_DIR"

# Build the host binaries first, so the first invoke does not wait for a compile. Selected as
# `cargo lambda watch` selects them (`cargo run --bin NAME`, the whole workspace's features
# unified): with `-p` the dependencies get other features and watch would rebuild them all.
cargo build --quiet --bin create-new --bin resize-old

read -r endpoint MOTO_PID < <(scripts/local-ddb.sh start moto --owner-pid $$)
[[ -n $MOTO_PID ]] || die "moto did not start"
echo "local-invoke: moto at $endpoint (PID $MOTO_PID)"

port="$(scripts/local-ddb.sh free-port)"
# The functions inherit this environment from the watcher.
env -u AWS_PROFILE -u AWS_SESSION_TOKEN \
  AWS_ENDPOINT_URL="$endpoint" AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 \
  AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_EC2_METADATA_DISABLED=true \
  ROLLOVER_POLICY="$POLICY" ROLLOVER_ACCOUNT_ID=123456789012 \
  ROLLOVER_TABLE_PREFIX=timeseries ROLLOVER_TTL_ATTRIBUTE= ROLLOVER_POINT_IN_TIME_RECOVERY=false \
  ROLLOVER_ARCHIVE_BUCKET= ROLLOVER_ARCHIVE_PREFIX=ddb-rollover/ ROLLOVER_DELETE_AFTER=0 \
  ROLLOVER_CHANGE_STREAM_ARN= ROLLOVER_CONSUMER_FUNCTION_ARN= ROLLOVER_AUTOSCALING=false \
  ROLLOVER_PUBLISH_TABLES=false ROLLOVER_PUBLISH_EVENTS=false \
  setsid cargo lambda watch --invoke-address 127.0.0.1 --invoke-port "$port" --ignore-changes \
  </dev/null >"$WATCH_LOG" 2>&1 &
WATCH_PID=$!
wait_port "$port" "$WATCH_PID" 120
echo "local-invoke: cargo lambda watch on 127.0.0.1:$port (PID $WATCH_PID)"

for fn in create-new resize-old; do
  event="events/${fn//-/_}.json"
  [[ -f $event ]] || die "$event is missing"
  # A function that fails at start-up (e.g. a bad ROLLOVER_POLICY) leaves the invoke waiting.
  if ! timeout "$INVOKE_TIMEOUT" cargo lambda invoke "$fn" --invoke-address 127.0.0.1 --invoke-port "$port" \
    --data-file "$event" --output-format json >"$OUT" 2>&1; then
    cat "$OUT" >&2
    die "$fn: invoke with $event failed (or got no answer within $INVOKE_TIMEOUT s)"
  fi
  check_report "$fn" "${fn//-/_}" "$OUT"
done
echo "local-invoke: both functions answered with a RunReport and no failed table"
