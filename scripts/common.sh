# Sourced (never run) by the scripts beside it, with the sourcing script's name as its one
# argument: sets SCRIPT_DIR (this folder) and ROOT (the checkout), and defines `die`, which
# prints its words after that name on stderr and exits 1.
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd -- "$SCRIPT_DIR/.." && pwd -P)"
SCRIPT_NAME="$1"

die() {
  printf '%s: %s\n' "$SCRIPT_NAME" "$*" >&2
  exit 1
}
