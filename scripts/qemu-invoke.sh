#!/usr/bin/env bash
# Runs the shipped arm64 bootstraps, exactly as `sam build` left them in .aws-sam/build/<Fn>/,
# the way Lambda would, and reads back what they did:
#   - under qemu-user (qemu-aarch64-static with Debian's arm64 glibc, libc6-arm64-cross),
#   - against a Lambda Runtime API emulator (scripts/lambda-runtime-emulator.py), one event each,
#   - in a clean environment holding what template.yaml gives the function for a parameter set
#     (the deploy-checks example function-env resolves it) plus what Lambda itself sets,
#   - reaching DynamoDB over HTTPS: a TLS-terminating proxy (scripts/tls-proxy.py) in front of
#     moto, whose certificate only a private CA made here per run trusts, given by SSL_CERT_FILE.
# For each parameter set (fresh moto each): create_new for two periods ago (older tables for
# resize_old to dial down), create_new with events/create_new.json, resize_old with
# events/resize_old.json; each answer must be a RunReport with no failed table
# (scripts/check-report.py), and the tables read back must be what the set's policy says
# (scripts/check-tables.py, expectations written below independently of the template).
# First, a create_new whose SSL_CERT_FILE holds another CA must fail and create nothing: the
# functions trust only what SSL_CERT_FILE names (rustls-native-certs reads it instead of the
# system store), and nothing reaches moto without TLS verification.
#
# Needs: .aws-sam/build from `sam build`, qemu-aarch64-static and /usr/aarch64-linux-gnu
# (scripts/release-check.sh installs them), openssl, python3, moto (scripts/local-ddb.sh).
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh" qemu-invoke
cd "$ROOT"
RUN_DIR="$ROOT/.local/run/qemu-invoke-$$"
MOTO_PY="$ROOT/.local/venv/bin/python"
AARCH64_SYSROOT=/usr/aarch64-linux-gnu
# The functions' Timeout in template.yaml (Globals): the deadline the emulator hands out.
FUNCTION_TIMEOUT=300

QEMU="$(command -v qemu-aarch64-static)" || die "qemu-aarch64-static not found (apt-get install qemu-user-static)"
[[ -e $AARCH64_SYSROOT/lib/ld-linux-aarch64.so.1 ]] || die "no arm64 glibc in $AARCH64_SYSROOT (apt-get install libc6-arm64-cross)"
PYTHON="$(command -v python3)" || die "python3 not found"
command -v openssl >/dev/null || die "openssl not found"

MOTO_PID=""
PROXY_PID=""
stop_servers() {
  if [[ -n $PROXY_PID ]]; then
    kill -TERM "$PROXY_PID" 2>/dev/null || true
    wait "$PROXY_PID" 2>/dev/null || true
    PROXY_PID=""
  fi
  if [[ -n $MOTO_PID ]]; then
    scripts/local-ddb.sh stop "$MOTO_PID" || true
    MOTO_PID=""
  fi
}
cleanup() {
  local rc=$?
  stop_servers
  if [[ $rc == 0 ]]; then
    rm -rf "$RUN_DIR"
  else
    echo "qemu-invoke: logs kept in $RUN_DIR" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
mkdir -p "$RUN_DIR"

# ---------------------------------------------------------------- private CA

# make_ca NAME: NAME-ca.pem (a CA, P-256) and NAME-ca.key in RUN_DIR.
make_ca() {
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$RUN_DIR/$1-ca.key" -out "$RUN_DIR/$1-ca.pem" -days 2 -subj "/CN=ddb-rollover release check $1 CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

# The server certificate for 127.0.0.1 and localhost, signed by the "trusted" CA. The "other"
# CA signs nothing: SSL_CERT_FILE pointing at it must make every connection fail.
make_certs() {
  make_ca trusted
  make_ca other
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$RUN_DIR/server.key" -out "$RUN_DIR/server.csr" -subj "/CN=localhost" 2>/dev/null
  printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$RUN_DIR/server.ext"
  openssl x509 -req -in "$RUN_DIR/server.csr" -CA "$RUN_DIR/trusted-ca.pem" -CAkey "$RUN_DIR/trusted-ca.key" \
    -CAcreateserial -days 2 -extfile "$RUN_DIR/server.ext" -out "$RUN_DIR/server.pem" 2>/dev/null
  openssl verify -CAfile "$RUN_DIR/trusted-ca.pem" "$RUN_DIR/server.pem" >/dev/null
}

# ---------------------------------------------------------------- servers

# start_servers: a fresh moto and the TLS proxy in front of it; sets MOTO_URL and HTTPS_URL.
start_servers() {
  read -r MOTO_URL MOTO_PID < <(scripts/local-ddb.sh start moto --owner-pid $$)
  [[ -n $MOTO_PID ]] || die "moto did not start"
  local portfile="$RUN_DIR/proxy.port"
  : >"$portfile"
  "$PYTHON" "$SCRIPT_DIR/tls-proxy.py" --cert "$RUN_DIR/server.pem" --key "$RUN_DIR/server.key" \
    --upstream "${MOTO_URL#http://}" --owner-pid $$ >"$portfile" 2>"$RUN_DIR/proxy.log" &
  PROXY_PID=$!
  local i
  for i in $(seq 100); do
    [[ -s $portfile ]] && break
    kill -0 "$PROXY_PID" 2>/dev/null || die "the TLS proxy exited: $(cat "$RUN_DIR/proxy.log")"
    sleep 0.1
  done
  [[ -s $portfile ]] || die "the TLS proxy did not start within 10 s"
  HTTPS_URL="https://127.0.0.1:$(head -n 1 "$portfile")"
  echo "qemu-invoke: moto at $MOTO_URL (PID $MOTO_PID), TLS proxy at $HTTPS_URL (PID $PROXY_PID)"
}

# table_count: how many tables moto holds, asked directly (plain HTTP).
table_count() {
  "$MOTO_PY" -c 'import boto3, sys
c = boto3.client("dynamodb", endpoint_url=sys.argv[1], region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")
print(len(c.list_tables()["TableNames"]))' "$MOTO_URL"
}

# ---------------------------------------------------------------- functions

# function_env SET PARAM=VALUE...: writes RUN_DIR/SET/<LogicalId>.env, one KEY=VALUE a line,
# for every function of template.yaml with those parameters.
function_env() {
  local set=$1
  shift
  mkdir -p "$RUN_DIR/$set"
  cargo run -q -p deploy-checks --example function-env -- "$@" >"$RUN_DIR/$set/all.env"
  awk -v dir="$RUN_DIR/$set" '
    /^FUNCTION / { out = dir "/" $2 ".env"; printf "" > out; next }
    { print > out }
  ' "$RUN_DIR/$set/all.env"
}

# logical_id OPERATION: the function serving OPERATION (CreateNewFunction for create_new),
# which must have a bootstrap built.
logical_id() {
  local want=${1//_/} f id found=""
  for f in .aws-sam/build/*/bootstrap; do
    id=${f#.aws-sam/build/}
    id=${id%/bootstrap}
    local flat=${id,,}
    if [[ ${flat//[^a-z0-9]/} == "$want"* ]]; then
      [[ -z $found ]] || die "two functions for $1: $found and $id"
      found=$id
    fi
  done
  [[ -n $found ]] || die "no .aws-sam/build/<Fn>/bootstrap for $1 (run sam build)"
  printf '%s\n' "$found"
}

# invoke SET OPERATION EVENT RESULT [KEY=VALUE...]: one invocation of the function's bootstrap
# under qemu through the Runtime API emulator, in a clean environment: the template's
# variables, what Lambda sets, and the test's endpoint and CA (the trailing KEY=VALUEs win).
invoke() {
  local set=$1 op=$2 event=$3 result=$4
  shift 4
  local id envfile line
  id="$(logical_id "$op")"
  envfile="$RUN_DIR/$set/$id.env"
  [[ -f $envfile ]] || die "template.yaml gives no environment for $id"
  local -a vars=()
  while IFS= read -r line; do
    vars+=("$line")
  done <"$envfile"
  local name="ddb-rollover-$id"
  local start=$SECONDS rc=0
  env -i \
    PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TZ=:UTC \
    "${vars[@]}" \
    AWS_LAMBDA_FUNCTION_NAME="$name" AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128 AWS_LAMBDA_FUNCTION_VERSION='$LATEST' \
    AWS_LAMBDA_LOG_GROUP_NAME="/aws/lambda/$name" AWS_LAMBDA_LOG_STREAM_NAME="release-check" \
    AWS_LAMBDA_LOG_FORMAT=JSON AWS_LAMBDA_LOG_LEVEL=INFO \
    AWS_EXECUTION_ENV=AWS_Lambda_provided.al2023 LAMBDA_TASK_ROOT=/var/task \
    AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 \
    AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_SESSION_TOKEN=test \
    AWS_ENDPOINT_URL="$HTTPS_URL" SSL_CERT_FILE="$RUN_DIR/trusted-ca.pem" \
    "$@" \
    "$PYTHON" "$SCRIPT_DIR/lambda-runtime-emulator.py" --event "$event" --result "$result" \
    --timeout "$FUNCTION_TIMEOUT" --function-name "$name" --log "$result.log" \
    -- "$QEMU" -L "$AARCH64_SYSROOT" ".aws-sam/build/$id/bootstrap" || rc=$?
  echo "qemu-invoke: $set $op ($id, $(basename "$event")): $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kind"])' "$result") in $((SECONDS - start)) s"
  if [[ $rc != 0 ]]; then
    printf 'qemu-invoke: last lines of the function log %s:\n' "$result.log" >&2
    tail -n 20 "$result.log" >&2 || true
  fi
  return "$rc"
}

# ---------------------------------------------------------------- the checks

# untrusted_ca_fails: with SSL_CERT_FILE naming a CA that did not sign the proxy's certificate,
# create_new cannot reach DynamoDB: its answer is a function error about the certificate, and
# moto has no table.
untrusted_ca_fails() {
  function_env untrusted
  start_servers
  local result="$RUN_DIR/untrusted/create_new.result"
  if invoke untrusted create_new events/create_new.json "$result" SSL_CERT_FILE="$RUN_DIR/other-ca.pem" 2>/dev/null; then
    die "create_new succeeded with SSL_CERT_FILE naming a CA that did not sign the server's certificate"
  fi
  "$PYTHON" - "$result" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
text = json.dumps(r["body"]).lower()
if r["kind"] != "error" or "certificate" not in text and "unknownissuer" not in text:
    sys.exit(f"qemu-invoke: expected a function error about the certificate, got {json.dumps(r)[:2000]}")
print(f"qemu-invoke: with another CA in SSL_CERT_FILE: {r['error_type']}: {str(r['body'].get('errorMessage', r['body']))[:300]}")
PY
  local n
  n="$(table_count)"
  [[ $n == 0 ]] || die "moto holds $n tables after a run that could not verify the server"
  stop_servers
}

# run_set SET PARAM=VALUE... -- CHECK-TABLES-ARGS...: the round described at the top.
run_set() {
  local set=$1
  shift
  local -a params=()
  while [[ $1 != -- ]]; do
    params+=("$1")
    shift
  done
  shift
  local period step
  period="$(printf '%s\n' "$@" | awk 'prev == "--period" { print } { prev = $0 }')"
  case $period in
    day) step=day ;;
    hour) step=hour ;;
    *) die "set $set: --period $period is not day or hour" ;;
  esac
  echo "qemu-invoke: parameter set $set: ${params[*]:-(the defaults)}"
  function_env "$set" "${params[@]}"
  start_servers
  local dir="$RUN_DIR/$set" seed_at
  seed_at="$(date -u -d "2 $step ago" +%Y-%m-%dT%H:%M:%SZ)"
  # Two periods ago is not now: a replay (it acts for then, and leaves readiness to the run below).
  printf '{"Operation": "create_new", "scheduled_time": "%s", "replay": true}\n' "$seed_at" >"$dir/seed.json"
  invoke "$set" create_new "$dir/seed.json" "$dir/seed.result"
  python3 "$SCRIPT_DIR/check-report.py" "$set create_new (as of $seed_at)" create_new "$dir/seed.result" --emulated
  invoke "$set" create_new events/create_new.json "$dir/create_new.result"
  python3 "$SCRIPT_DIR/check-report.py" "$set create_new" create_new "$dir/create_new.result" --emulated
  invoke "$set" resize_old events/resize_old.json "$dir/resize_old.result"
  python3 "$SCRIPT_DIR/check-report.py" "$set resize_old" resize_old "$dir/resize_old.result" --emulated
  "$MOTO_PY" "$SCRIPT_DIR/check-tables.py" --endpoint "$MOTO_URL" "$@" \
    --created "$dir/seed.result" "$dir/create_new.result" --resized "$dir/resize_old.result"
  stop_servers
}

scripts/local-ddb.sh install
make_certs
"$QEMU" --version | head -n 1
for id in .aws-sam/build/*/bootstrap; do
  file -b "$id" | grep -q "ARM aarch64" || die "$id is not an aarch64 executable"
done
# Build the env printer once, so the timings below are the functions'.
cargo build -q -p deploy-checks --example function-env

untrusted_ca_fails

# Set A: the template's defaults (daily tables, pk/sk strings, 300/1000 -> 100/1 -> 1/1).
run_set defaults -- \
  --prefix timeseries --period day --premake 1 --partition pk:S --sort sk:S \
  --hot 300/1000 --warm 100/1 --cold 1/1

# Set B: hourly tables, two pre-built, a numeric partition key and no sort key, other
# capacities, cold tables on demand, and TTL.
run_set hourly TablePrefix=release_b Period=hour TimeZone=UTC Premake=2 \
  PartitionKeyName=device PartitionKeyType=N SortKeyName= \
  HotReadCapacity=20 HotWriteCapacity=40 WarmReadCapacity=10 WarmWriteCapacity=2 \
  ColdBilling=on_demand TtlAttribute=expires_at -- \
  --prefix release_b --period hour --premake 2 --partition device:N \
  --hot 20/40 --warm 10/2 --cold on_demand --ttl expires_at

echo "qemu-invoke: both functions' bootstraps ran under qemu over TLS for 2 parameter sets; reports and tables as expected"
