#!/usr/bin/env bash
# The demo: starts a local DynamoDB server, then plays a week of the blog's schedule against
# it (create-new at 23:45, resize-old at 00:15 the next day) with the ddb-rollover CLI,
# printing `status` after each step; then, on moto and DynamoDB Local, the application side:
# examples/iot-ingest writes a day of sensor readings across period tables and shards and reads
# one sensor back. Stops the server when done.
#
#   scripts/demo.sh [moto|dynalite|ddblocal] [START_DATE] [DAYS]
#
# ddblocal is AWS's DynamoDB Local (java): it has no tagging API, so every run that reads tags
# ends with one warning line saying ListTagsOfResource was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

server="${1:-moto}"
start="${2:-2018-10-20}"
days="${3:-7}"

scripts/local-ddb.sh install
cargo build --quiet -p ddb-rollover-cli -p iot-ingest
cli=target/debug/ddb-rollover

read -r endpoint pid < <(scripts/local-ddb.sh start "$server")
trap 'scripts/local-ddb.sh stop "$pid" >/dev/null' EXIT
echo "== $server listening on $endpoint (pid $pid)"

export AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
rollover() { "$cli" --endpoint-url "$endpoint" "$@"; }

for ((i = 0; i < days; i++)); do
  today=$(date -u -d "$start + $i day" +%F)
  tomorrow=$(date -u -d "$start + $((i + 1)) day" +%F)
  echo
  echo "================ $today 23:45 UTC: create-new"
  rollover --at "${today}T23:45:00Z" create-new
  echo
  rollover --at "${today}T23:50:00Z" status
  echo
  echo "================ $tomorrow 00:15 UTC: resize-old"
  rollover --at "${tomorrow}T00:15:00Z" resize-old
  echo
  rollover --at "${tomorrow}T00:20:00Z" status
done
echo
echo "== after $days days: the current table is hot (300/1000), yesterday's 100/1, older ones 1/1"

# dynalite has no UpdateTimeToLive, which the example's tables use; moto and DynamoDB Local have.
if [[ "$server" == moto || "$server" == ddblocal ]]; then
  echo
  echo "================ the application side: a day of IoT readings across tables and shards (examples/iot-ingest)"
  target/debug/iot-ingest --endpoint-url "$endpoint" --day "$start"
fi
