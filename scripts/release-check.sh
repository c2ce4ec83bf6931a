#!/usr/bin/env bash
# Release checks of the SAM application (template.yaml, samconfig.toml), run by CI after the tests:
#   1. sam validate --lint     SAM transform + cfn-lint, offline (no AWS credentials or calls)
#   2. cfn-lint template.yaml  on its own, so its findings print in full
#   3. checkov                 policy-as-code scan (framework cloudformation): no failed check;
#                              the few that do not apply are skipped in the template with a reason
#   4. sam build               both functions for arm64 (rust-cargolambda: cargo-lambda + zig, no
#                              Docker), then the stripped bootstrap sizes and `file` of each; a
#                              size more than 15% over scripts/bootstrap-sizes.txt fails
#   5. glibc                   no bootstrap needs a glibc symbol newer than Amazon Linux 2023's
#                              2.34 (scripts/glibc-check.sh; its self-test first)
#   6. scripts/qemu-invoke.sh  the arm64 bootstraps as built, under qemu-user, through a Lambda
#                              Runtime API emulator, over TLS (private CA) to moto, with the
#                              template's environment for two parameter sets; reports and tables
#                              read back
# scripts/local-invoke.sh (host binaries under `cargo lambda watch`) is the developer's way to
# try the functions; it is not run here: step 6 invokes the shipped bootstraps with the same
# events, and local-invoke's host build (the workspace without test features) would compile
# the SDK a fourth time in CI.
# Installs its tools itself, pinned in scripts/requirements-release.txt, into the gitignored
# .local/release-venv (two venvs, see that file), and the aarch64-unknown-linux-gnu Rust target;
# qemu-user-static and libc6-arm64-cross (Debian packages) with apt-get when missing (as root).
# Re-runs install nothing when the requirements and python3 are unchanged.
# Prints each step's duration; exits non-zero on the first failure.
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh" release-check
cd "$ROOT"

VENVS="$ROOT/.local/release-venv"
REQS="$SCRIPT_DIR/requirements-release.txt"
STAMP="$VENVS/install.stamp"
TOOLS_BIN="$VENVS/tools/bin"
CHECKOV_BIN="$VENVS/checkov/bin"
TARGET=aarch64-unknown-linux-gnu

# Nothing here calls AWS or reports usage (SAM CLI's telemetry off; checkov's platform
# mapping and update check off). SAM CLI still looks up its latest version on PyPI once a week.
export SAM_CLI_TELEMETRY=0
export BC_SKIP_MAPPING=TRUE CKV_SKIP_PACKAGE_UPDATE_CHECK=TRUE
export AWS_EC2_METADATA_DISABLED=true

declare -a SUMMARY=()
# step NAME COMMAND...: runs COMMAND, prints and records how long it took.
step() {
  local name=$1 start end
  shift
  printf '\n== %s\n' "$name"
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  local took
  took=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  printf -- '-- %s: %s s\n' "$name" "$took"
  SUMMARY+=("$(printf '%-28s %8s s' "$name" "$took")")
}

# ---------------------------------------------------------------- install

# The requirements of one section ("tools" or "checkov") of requirements-release.txt.
section() {
  awk -v want="# [$1]" '
    /^# \[[a-z]+\]/ { on = (index($0, want) == 1); next }
    on && /^[^#[:space:]]/ { print }
  ' "$REQS"
}

install_hash() {
  {
    cat -- "$REQS"
    python3 -V 2>&1
    echo "uv $UV_VERSION"
  } | sha256sum | cut -d' ' -f1
}

# uv (from PyPI, pinned) installs the venvs: pip took 3.5 minutes of CI for the two, uv seconds
# (parallel downloads, no resolver backtracking over sam-cli's pins). In its own venv.
UV_VERSION=0.13.9
UV="$VENVS/uv/bin/uv"

install_uv() {
  if [[ ! -x $UV || "$("$UV" --version 2>/dev/null)" != "uv $UV_VERSION"* ]]; then
    rm -rf "$VENVS/uv"
    python3 -m venv "$VENVS/uv"
    "$VENVS/uv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet "uv==$UV_VERSION"
  fi
}

install_venv() {
  local name=$1 dir="$VENVS/$1" reqs
  reqs="$(mktemp)"
  section "$name" >"$reqs"
  [[ -s $reqs ]] || die "no [$name] section in $REQS"
  # A venv made by another python3 than the current one is rebuilt.
  if [[ -x $dir/bin/python && "$("$dir/bin/python" -V 2>&1)" != "$(python3 -V 2>&1)" ]]; then
    rm -rf "$dir"
  fi
  [[ -x $dir/bin/python ]] || "$UV" venv --quiet --python "$(command -v python3)" "$dir"
  VIRTUAL_ENV="$dir" "$UV" pip install --quiet -r "$reqs"
  rm -f "$reqs"
}

install_tools() {
  command -v python3 >/dev/null || die "python3 not found"
  command -v cargo >/dev/null || die "cargo not found (rustup.rs)"
  command -v rustup >/dev/null || die "rustup not found: it adds the $TARGET target"
  command -v file >/dev/null || die "file not found (apt-get install file)"
  mkdir -p "$VENVS"
  local want
  want="$(install_hash)"
  if [[ -f $STAMP && "$(<"$STAMP")" == "$want" && -x $TOOLS_BIN/sam && -x $CHECKOV_BIN/checkov ]]; then
    echo "release tools up to date in $VENVS"
  else
    rm -f "$STAMP"
    install_uv
    install_venv tools
    install_venv checkov
    printf '%s\n' "$want" >"$STAMP"
  fi
  if ! rustup target list --installed | grep -qx "$TARGET"; then
    rustup target add "$TARGET"
  fi
  "$TOOLS_BIN/sam" --version
  "$TOOLS_BIN/cfn-lint" --version
  printf 'checkov %s\n' "$("$CHECKOV_BIN/checkov" --version)"
  "$TOOLS_BIN/cargo-lambda" lambda --version
  printf 'zig %s\n' "$("$TOOLS_BIN/python" -m ziglang version)"
  install_qemu
}

# qemu-user runs the arm64 bootstraps on this machine; libc6-arm64-cross is the arm64 glibc
# they load (from /usr/aarch64-linux-gnu). Debian's packages, installed only when missing.
QEMU_SYSROOT=/usr/aarch64-linux-gnu
install_qemu() {
  if ! command -v qemu-aarch64-static >/dev/null || [[ ! -e $QEMU_SYSROOT/lib/ld-linux-aarch64.so.1 ]]; then
    [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null ||
      die "qemu-aarch64-static or $QEMU_SYSROOT missing: apt-get install qemu-user-static libc6-arm64-cross (as root)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user-static libc6-arm64-cross
  fi
  qemu-aarch64-static --version | head -n 1
  command -v readelf >/dev/null || die "readelf not found (apt-get install binutils)"
}

# ---------------------------------------------------------------- checks

sam_validate() {
  # Offline: the SAM transform runs locally and --lint runs cfn-lint; no credentials needed.
  "$TOOLS_BIN/sam" validate --lint --template-file template.yaml
}

cfn_lint() {
  "$TOOLS_BIN/cfn-lint" template.yaml
}

checkov_scan() {
  "$CHECKOV_BIN/checkov" --file template.yaml --framework cloudformation \
    --skip-download --compact --quiet
}

sam_build() {
  # cargo-lambda, and `python3 -m ziglang` for cargo-zigbuild, come from the tools venv.
  PATH="$TOOLS_BIN:$PATH" "$TOOLS_BIN/sam" build --template-file template.yaml
}

# Each function's stripped bootstrap may grow at most this much over its size recorded in
# scripts/bootstrap-sizes.txt: more is growth nobody explained. The baseline is updated on
# purpose, with the reason in docs/benchmark.md "Binary size" (a new client, a new crate).
SIZES="$SCRIPT_DIR/bootstrap-sizes.txt"
MAX_GROWTH_PERCENT=15

# The recorded size of FUNCTION's bootstrap (the .aws-sam/build folder's name), or nothing.
baseline_size() {
  awk -v fn="$1" '$1 == fn { print $2 }' "$SIZES"
}

print_artifacts() {
  local f size found=0 fn base limit
  [[ -f $SIZES ]] || die "$SIZES is missing: the bootstrap size baseline"
  for f in .aws-sam/build/*/bootstrap; do
    [[ -f $f ]] || continue
    found=1
    size=$(stat -c %s "$f")
    fn=$(basename "$(dirname "$f")")
    base=$(baseline_size "$fn")
    [[ -n $base ]] || die "$fn has no size in $SIZES: record it (and why in docs/benchmark.md)"
    limit=$((base + base * MAX_GROWTH_PERCENT / 100))
    printf '%-48s %10d bytes  %6.2f MiB  (baseline %d, %+.1f%%)\n' "$f" "$size" \
      "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')" "$base" \
      "$(awk -v s="$size" -v b="$base" 'BEGIN { print (s - b) * 100 / b }')"
    file -b "$f" | sed 's/^/    /'
    case "$(file -b "$f")" in
      *"ARM aarch64"*", stripped"*) ;;
      *) die "$f is not a stripped aarch64 executable" ;;
    esac
    ((size <= limit)) ||
      die "$f is $size bytes, more than $MAX_GROWTH_PERCENT% over its baseline $base in $SIZES: explain the growth in docs/benchmark.md and update the baseline, or remove it"
  done
  [[ $found == 1 ]] || die "no .aws-sam/build/*/bootstrap after sam build"
}

glibc_check() {
  bash "$SCRIPT_DIR/glibc-check.sh" --self-test
  bash "$SCRIPT_DIR/glibc-check.sh" .aws-sam/build/*/bootstrap
}

qemu_invoke() {
  bash "$SCRIPT_DIR/qemu-invoke.sh"
}

started=$(date +%s)
step "install tools" install_tools
step "sam validate --lint" sam_validate
step "cfn-lint" cfn_lint
step "checkov" checkov_scan
step "sam build (arm64)" sam_build
step "bootstrap sizes" print_artifacts
step "glibc <= 2.34" glibc_check
step "qemu invoke (TLS, 2 sets)" qemu_invoke

printf '\n== durations\n'
printf '%s\n' "${SUMMARY[@]}"
echo "release-check: all checks passed in $(($(date +%s) - started)) s"
