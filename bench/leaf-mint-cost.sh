#!/usr/bin/env bash
# The cost of minting one interception leaf (issue 15: the event loop is never
# blocked for more than one signature), and of setting up the server side of
# one intercepted connection once its leaf is cached (SSL_new, leaf, key and
# chain installed, freed). Wall time per leaf or connection, averaged over
# COUNT (default 1000, 5 runs), then instructions per leaf or connection under
# callgrind: the difference of the totals for CG_MANY and CG_FEW, so the CA's
# creation (three key generations) cancels out.
#
#   bench/leaf-mint-cost.sh        needs swift; installs valgrind when missing
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
COUNT="${COUNT:-1000}"
CG_FEW="${CG_FEW:-100}"
CG_MANY="${CG_MANY:-600}"
swift build -c release --product leaf-mint-bench >/dev/null
BIN=.build/release/leaf-mint-bench
if ! command -v valgrind >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get install -y -qq valgrind >/dev/null
fi
instructions() {
  local out; out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$BIN" "$1" "$2" >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
  rm -f "$out"
}
for mode in leaves connections; do
  echo "== $mode: wall time, $COUNT per run"
  for run in 1 2 3 4 5; do "$BIN" "$COUNT" "$mode"; done
  few=$(instructions "$CG_FEW" "$mode")
  many=$(instructions "$CG_MANY" "$mode")
  echo "callgrind: $few instructions for $CG_FEW $mode, $many for $CG_MANY"
  echo "instructions per one of the $mode: $(( (many - few) / (CG_MANY - CG_FEW) ))"
done
