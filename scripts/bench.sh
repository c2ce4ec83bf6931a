#!/usr/bin/env bash
# The benchmark: a measurement, not a test; nothing in it passes or fails
# except a tool that errors. It prints, from one run:
#
# 1. Whole-process time, ddb-rollover against the AWS blog's Python "DailyResize" Lambda (our
#    copy: scripts/bench/daily_resize.py, boto3). Each tool gets a fresh moto holding the same
#    two tables (made by one `ddb-rollover create-new` the evening before), then plays DAYS
#    simulated days of the blog's schedule, every run its own process: create_new at 23:45
#    (tomorrow's table, 300/1000), resize_old at 00:15 the next day (yesterday's 100/1, the day
#    before's 1/1). Printed: both totals, the mean per run, the ratio python / ddb-rollover
#    (above 1: ddb-rollover is faster), and whether both servers end with the same tables and
#    capacities. ddb-rollover is the release build.
# 2. Calls by operation of one steady-state `resize-old` at each of SIZES owned tables (plus 10
#    foreign ones) through the testkit proxy with AWS's per-account rates and 20 ms per call,
#    next to the floor ceil(all tables / 100) + owned tables + changes, with the run's seconds
#    (crates/testkit/examples/bench_calls.rs; its table ends with a legend).
#
#   scripts/bench.sh [--days N] [--sizes 100,500,2500]
#
# Defaults: 30 days; 100, 500 and 2,500 owned tables. Building (release ddb-rollover, the bench
# binary) comes first and is not timed (a few minutes the first time). The rest takes under a
# minute on a 2-core machine: about 15 s of Python, 5 s to make 2,500 tables on moto, 9 s for
# the 2,500-table run. (Before the floor of calls, when every run read every table's tags at
# AWS's 10 calls per second, it took 6.5 minutes, 4 of them the 2,500-table run.)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."

days=30
sizes=100,500,2500
while [[ $# -gt 0 ]]; do
  case $1 in
    --days) days=${2:?--days needs a value}; shift 2 ;;
    --sizes) sizes=${2:?--sizes needs a value}; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $days =~ ^[1-9][0-9]*$ ]] || { echo "bench: --days must be a positive number" >&2; exit 2; }

scripts/local-ddb.sh install
# boto3 for the Python baseline, in the venv local-ddb.sh made for moto (moto depends on it,
# so it is normally there already).
py=.local/venv/bin/python
"$py" -c 'import boto3' 2>/dev/null || "$py" -m pip install --disable-pip-version-check --no-input --quiet boto3
echo "== building (not timed): cargo build --release -p ddb-rollover-cli; the bench_calls example"
cargo build --quiet --release -p ddb-rollover-cli
cargo build --quiet -p testkit --example bench_calls
cli=target/release/ddb-rollover

# boto3 reads AWS_DEFAULT_REGION, the Rust SDK AWS_REGION.
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
unset ROLLOVER_POLICY DDB_ROLLOVER_LOG
start=2018-10-20

now() { printf '%s\n' "$EPOCHREALTIME"; }

# Every table on the server with its capacity, one per line, sorted: "name read write".
tables_of() {
  "$py" - "$1" <<'PY'
import sys, boto3
client = boto3.client("dynamodb", endpoint_url=sys.argv[1])
names = [n for page in client.get_paginator("list_tables").paginate() for n in page["TableNames"]]
for name in sorted(names):
    t = client.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    print(name, t["ReadCapacityUnits"], t["WriteCapacityUnits"])
PY
}

# simulate TOOL: a fresh moto, the same two tables, DAYS days of runs; prints the seconds the
# runs took and leaves the end state in .local/run/bench-TOOL.tables.
simulate() {
  local tool=$1 endpoint pid i today tomorrow t0 t1
  # --owner-pid: the server also stops if this script is interrupted.
  read -r endpoint pid < <(scripts/local-ddb.sh start moto --owner-pid $$)
  "$cli" --endpoint-url "$endpoint" --at "$(date -u -d "$start - 1 day" +%F)T23:45:00Z" create-new >/dev/null 2>&1
  t0=$(now)
  for ((i = 0; i < days; i++)); do
    today=$(date -u -d "$start + $i day" +%F)
    tomorrow=$(date -u -d "$start + $((i + 1)) day" +%F)
    case $tool in
      python)
        AWS_ENDPOINT_URL=$endpoint "$py" scripts/bench/daily_resize.py create_new "${today}T23:45:00Z"
        AWS_ENDPOINT_URL=$endpoint "$py" scripts/bench/daily_resize.py resize_old "${tomorrow}T00:15:00Z"
        ;;
      ddb-rollover)
        "$cli" --endpoint-url "$endpoint" --at "${today}T23:45:00Z" create-new >/dev/null 2>&1
        "$cli" --endpoint-url "$endpoint" --at "${tomorrow}T00:15:00Z" resize-old >/dev/null 2>&1
        ;;
    esac
  done
  t1=$(now)
  tables_of "$endpoint" >".local/run/bench-$tool.tables"
  scripts/local-ddb.sh stop "$pid" >/dev/null
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}

echo
echo "== 1. whole-process time: $days simulated days from $start (create_new at 23:45, resize_old at 00:15), $((2 * days)) runs per tool, each a fresh moto"
python_s=$(simulate python)
rollover_s=$(simulate ddb-rollover)
same=no
if cmp -s .local/run/bench-python.tables .local/run/bench-ddb-rollover.tables; then
  same=yes
else
  diff .local/run/bench-python.tables .local/run/bench-ddb-rollover.tables | sed 's/^/  end state differs: /' || true
fi
tables=$(wc -l <.local/run/bench-python.tables)
rm -f .local/run/bench-python.tables .local/run/bench-ddb-rollover.tables
awk -v p="$python_s" -v r="$rollover_s" -v n="$((2 * days))" -v same="$same" -v t="$tables" 'BEGIN {
  printf "%-38s %8s %12s\n", "tool", "total s", "per run ms"
  printf "%-38s %8.2f %12.0f\n", "python DailyResize (boto3)", p, 1000 * p / n
  printf "%-38s %8.2f %12.0f\n", "ddb-rollover (release)", r, 1000 * r / n
  printf "ratio python / ddb-rollover: %.2f\n", p / r
  printf "same end state on both servers (%d tables, name and capacity): %s\n", t, same
}'

echo
echo "== 2. calls of one steady-state resize-old through the AWS-behaviour proxy, at $sizes owned tables"
target/debug/examples/bench_calls --cli "$cli" --sizes "$sizes"
