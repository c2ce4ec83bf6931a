#!/usr/bin/env bash
# The newest glibc symbol version each binary needs must be at most Amazon Linux 2023's glibc
# (2.34, the provided.al2023 runtime): a binary linked against a newer glibc fails to start
# there ("version `GLIBC_2.xx' not found"), which no local run on a newer system would show.
#
#   scripts/glibc-check.sh FILE...     prints each file's newest GLIBC_x.y; fails if one is newer
#   scripts/glibc-check.sh --self-test checks the check itself on made-up symbol tables
#
# Reads the dynamic symbol table (readelf --dyn-syms -W, from binutils; any architecture):
# every versioned reference such as `memcpy@GLIBC_2.17 (3)` counts.
set -euo pipefail

MAX_GLIBC=2.34

die() {
  printf 'glibc-check: %s\n' "$*" >&2
  exit 1
}

# newest_glibc: the highest GLIBC_x.y[.z] named on stdin (version order), or nothing.
newest_glibc() {
  { grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' || true; } | sed 's/^GLIBC_//' | sort -uV | tail -n 1
}

# version_le A B: A <= B in version order.
version_le() {
  [[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" == "$1" ]]
}

# check_listing NAME: the symbol listing on stdin needs nothing newer than MAX_GLIBC.
check_listing() {
  local name=$1 newest
  newest="$(newest_glibc)"
  [[ -n $newest ]] || die "$name: no GLIBC_ symbol version found (not dynamically linked against glibc?)"
  if version_le "$newest" "$MAX_GLIBC"; then
    printf '%-48s needs GLIBC_%s (at most %s: ok)\n' "$name" "$newest" "$MAX_GLIBC"
  else
    printf '%-48s needs GLIBC_%s, newer than Amazon Linux 2023'"'"'s %s\n' "$name" "$newest" "$MAX_GLIBC" >&2
    return 1
  fi
}

self_test() {
  # Symbol lines as readelf prints them; 2.9 < 2.17 < 2.34 < 2.38 in version order, not as text.
  local ok='  5: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND memcpy@GLIBC_2.17 (2)
  6: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND pthread_create@GLIBC_2.34 (4)
  7: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND qsort@GLIBC_2.9 (5)'
  local new='  8: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND arc4random@GLIBC_2.36 (6)'
  [[ "$(newest_glibc <<<"$ok")" == 2.34 ]] || die "self-test: newest of 2.17, 2.34, 2.9 is not 2.34"
  check_listing "self-test (2.34)" <<<"$ok" >/dev/null || die "self-test: a 2.34 binary was refused"
  if check_listing "self-test (2.36)" <<<"$ok"$'\n'"$new" 2>/dev/null; then
    die "self-test: a binary needing GLIBC_2.36 passed"
  fi
  if (check_listing "self-test (none)" <<<"no versions here") 2>/dev/null; then
    die "self-test: a listing without GLIBC versions passed"
  fi
  echo "glibc-check: self-test passed (2.34 accepted, 2.36 refused, none refused)"
}

[[ $# -gt 0 ]] || die "usage: glibc-check.sh FILE... | --self-test"
if [[ $1 == --self-test ]]; then
  self_test
  exit 0
fi
command -v readelf >/dev/null || die "readelf not found (apt-get install binutils)"
failed=0
for f in "$@"; do
  [[ -f $f ]] || die "$f: no such file"
  readelf --dyn-syms -W "$f" | check_listing "$f" || failed=1
done
exit "$failed"
