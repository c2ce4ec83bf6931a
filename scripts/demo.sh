#!/usr/bin/env bash
# The demo: starts a local DynamoDB server behind the tests' AWS-behaviour layer
# (crates/testkit/examples/aws_layer.rs: testkit's LocalDynamo, the server plus what AWS does and
# the server lacks), plays a week of the blog's schedule against it with the ddb-rollover CLI
# (create-new at 23:45, resize-old at 00:15 the next day, `status` after each day), then the
# application side: examples/iot-ingest writes a day of sensor readings across period tables and
# shards and reads one sensor back. Stops the server when done.
#
#   scripts/demo.sh [moto|dynalite|ddblocal] [START_DATE] [DAYS]
#
# moto (the default) shows the whole lifecycle, with the family of scripts/demo-policy.toml
# (archive after 2 days, delete after 4, one Kinesis change stream): the layer adds what moto
# lacks (Kinesis destinations, an export's manifests, resource-based policies enforced, S3's
# answers as AWS gives them). Each day sensor-1's readings are written to the day's table; the
# runs export, seal (a write to the sealed table is then refused), export again after the seal,
# prove the archive in S3 and delete; `restore` brings the first deleted day back and its
# readings are read back; a consumer (iot-ingest --consume) reads the change stream. It needs
# 6 days for the first deletion (the default is 7).
#
# dynalite and ddblocal show the week of the default policy (prefix timeseries), without
# retention or a stream: neither has exports, resource-based policies or Kinesis. The layer
# gives dynalite CreateTable's tags; ddblocal is AWS's DynamoDB Local (java), with no layer: it
# has no tagging API, so every run that reads tags ends with one warning line saying
# ListTagsOfResource was skipped. dynalite has no UpdateTimeToLive, which iot-ingest's tables
# use: the application side runs on moto and ddblocal only.
#
# DEMO_BIN_DIR=DIR takes the binaries ddb-rollover and iot-ingest, and the aws_layer example in
# its examples/ folder, from DIR (a cargo profile directory: tests/cli/demo.rs gives its own)
# instead of building them.
set -euo pipefail
cd "$(dirname "$0")/.."

server="${1:-moto}"
start="${2:-2018-10-20}"
days="${3:-7}"
case "$server" in
  moto | dynalite | ddblocal) ;;
  *)
    echo "usage: scripts/demo.sh [moto|dynalite|ddblocal] [START_DATE] [DAYS]" >&2
    exit 2
    ;;
esac

scripts/local-ddb.sh install
if [[ -n "${DEMO_BIN_DIR:-}" ]]; then
  bin=$DEMO_BIN_DIR
else
  # The workspace's binaries and examples: the same features as scripts/test.sh's build, so
  # neither builds the SDK again after the other (`-p ddb-rollover-cli` alone would).
  cargo build --quiet --workspace --bins --examples
  bin="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug"
fi

# The server behind the layer, serving until its stdin closes (at exit); killed instead, the
# server stops within a second (it watches the layer's PID).
report=$(mktemp)
coproc LAYER { exec "$bin/examples/aws_layer" "$server"; }
layer_pid=$LAYER_PID
layer_in=${LAYER[1]}
trap 'rm -f "$report"; exec {layer_in}>&-; wait "$layer_pid" 2>/dev/null || true' EXIT
read -r endpoint <&"${LAYER[0]}" || { echo "demo: the server did not start" >&2; exit 1; }
echo "== $server behind the AWS-behaviour layer, listening on $endpoint"

unset ROLLOVER_POLICY # the policy is the demo's, not one of yours
export AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
if [[ "$server" == moto ]]; then
  policy=(--policy scripts/demo-policy.toml)
  prefix=sensors
else
  policy=(--prefix timeseries)
  prefix=timeseries
fi
rollover() { "$bin/ddb-rollover" --endpoint-url "$endpoint" "${policy[@]}" "$@"; }
# What the application and the operator do at AWS besides ddb-rollover (moto's venv has boto3).
aws_side() { .local/venv/bin/python scripts/demo-aws.py "$1" "$endpoint" "${@:2}"; }
label() { date -u -d "$start + $1 day" +%F; }

# The lines of a run's report (its table on stdin) that did something: TABLE, ACTION and REASON,
# tab-separated, cut at the header's column starts.
done_steps() {
  awk -v prefix="${prefix}_" '
    /^TABLE / { a = index($0, "ACTION"); o = index($0, "OUTCOME"); r = index($0, "REASON"); next }
    a && index($1, prefix) == 1 {
      action = substr($0, a, o - a); outcome = substr($0, o, r - o)
      sub(/ +$/, "", action); sub(/ +$/, "", outcome)
      if (outcome == "done") print $1 "\t" action "\t" substr($0, r)
    }'
}

if [[ "$server" == moto ]]; then
  echo
  echo "================ the family: scripts/demo-policy.toml"
  grep -v '^#' scripts/demo-policy.toml | grep -v '^$'
  echo
  aws_side setup demo-archive demo-changes
fi

deleted=()
sealed_shown=
for ((i = 0; i < days; i++)); do
  today=$(label "$i")
  tomorrow=$(label $((i + 1)))
  echo
  echo "================ $today 23:45 UTC: create-new"
  rollover --at "${today}T23:45:00Z" create-new
  if [[ "$server" == moto ]]; then
    aws_side write "${prefix}_$today" "$today" 4
  fi
  echo
  echo "================ $tomorrow 00:15 UTC: resize-old"
  rollover --at "${tomorrow}T00:15:00Z" resize-old | tee "$report"
  while IFS=$'\t' read -r table action reason; do
    case "$action" in
      export) echo ">> archive: $table exported to ${reason#*export to }" ;;
      "seal against writes")
        echo ">> seal: $table denies item writes in its resource-based policy"
        if [[ -z "$sealed_shown" ]]; then
          echo -n ">> an application's write to it now: "
          aws_side put "$table" sensor-1 after-the-seal
          sealed_shown=1
        fi
        ;;
      "final export after the seal") echo ">> final export after the seal: $table exported again to ${reason#*export to }" ;;
      delete)
        echo ">> proven archive: ${reason#*archive proven: }"
        echo ">> deletion: $table deleted"
        deleted+=("$table")
        ;;
    esac
  done < <(done_steps <"$report")
  echo
  rollover --at "${tomorrow}T00:20:00Z" status
done
echo
echo "== after $days days: the current table is hot (300/1000), yesterday's 100/1, older ones 1/1"
if [[ "$server" == moto ]]; then
  echo "   archived from 2 days old; from 4 days: sealed, exported again, proven and deleted (${#deleted[@]} so far: ${deleted[*]:-none})"
fi

if [[ "$server" == moto ]]; then
  restore_at="$(label "$days")T12:00:00Z"
  echo
  if ((${#deleted[@]} == 0)); then
    echo "================ restore: no table was deleted in $days days (the first deletion needs 6)"
  else
    period=${deleted[0]#"${prefix}_"}
    echo "================ $restore_at: restore $period (a dry run, then --yes)"
    rollover --at "$restore_at" restore "$period" --keep 3d
    echo
    rollover --at "$restore_at" restore "$period" --keep 3d --yes
    echo
    rollover --at "$(label "$days")T12:05:00Z" status
    echo
    aws_side readings "${deleted[0]}"
  fi

  echo
  echo "================ the change stream, read by a consumer: iot-ingest --consume demo-changes"
  "$bin/iot-ingest" --endpoint-url "$endpoint" --prefix "$prefix" --period day --consume demo-changes
  echo
  echo "the stream's first records, as DynamoDB writes them to Kinesis:"
  aws_side records demo-changes 5
fi

if [[ "$server" == moto || "$server" == ddblocal ]]; then
  echo
  echo "================ the application side: a day of IoT readings across tables and shards (examples/iot-ingest)"
  "$bin/iot-ingest" --endpoint-url "$endpoint" --day "$start"
fi
