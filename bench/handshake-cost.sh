#!/usr/bin/env bash
# Instructions per fresh-handshake request under callgrind, for one or more pinproxy
# binaries on the same input: the handshake phase of bench/run.sh without the rest
# (no haproxy, stunnel or wrk), so a change to the trust checks can be measured
# before and after in a few minutes.
#
#   bench/handshake-cost.sh [BINARY...]     default: .build/release/pinproxy
#
# Per binary and variant (pinned "fresh", policy "default" "fresh-ca"), pinproxy runs
# under valgrind --tool=callgrind for CG_FEW (20) and CG_MANY (100) sequential
# Connection: close requests (bench/requests.py) through a gateway with upstream reuse
# off, so every request is a full TLS 1.3 handshake with the upstream (nginx, ECDSA
# P-256, root -> leaf). Instructions per request = difference of the totals / 80.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT_BASE="${PORT_BASE:-28600}"
CG_FEW="${CG_FEW:-20}"
CG_MANY="${CG_MANY:-100}"
BINARIES=("$@")
[ ${#BINARIES[@]} -gt 0 ] || BINARIES=(.build/release/pinproxy)
UP_PORT=$PORT_BASE
GW_PORT=$((PORT_BASE + 1))
OUT="$BENCH_DIR/out"
WORK="$OUT/handshake-cost"

trap cleanup_started EXIT INT TERM
install_missing nginx-light:nginx python3:python3 openssl:openssl valgrind:valgrind
rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"
make_bench_pki "$WORK"
write_upstream_conf "$WORK" "$UP_PORT" 1
for variant in fresh fresh-ca; do
    if [ "$variant" = fresh ]; then rule="\"policy\": \"pin-public-keys\", \"pins\": [\"$LEAF_PIN\", \"$BACKUP_PIN\"]"
    else rule="\"policy\": \"default\""; fi
    cat > "$WORK/$variant.json" <<CONF
{
  "listeners": [ { "listen": "127.0.0.1:$GW_PORT", "mode": "gateway", "upstream": "$HOST_NAME:443" } ],
  "violation_log": "$WORK/logs/violations.jsonl",
  "trust_store": "$WORK/ca.pem",
  "default_policy": "deny",
  "hosts": { "$HOST_NAME": { $rule } },
  "resolve": { "$HOST_NAME:443": "127.0.0.1:$UP_PORT" },
  "upstream_reuse": { "idle_per_host": 0, "tls_sessions": false },
  "threads": 1
}
CONF
done
nginx -c "$WORK/upstream.conf" -p "$WORK" 2>>"$WORK/logs/upstream.err" &
STARTED_PIDS+=($!)
wait_port "$UP_PORT" 10

printf 'binary,variant,requests,instructions\n' > "$OUT/handshake-cost.csv"
for binary in "${BINARIES[@]}"; do
    for variant in fresh fresh-ca; do
        for count in "$CG_FEW" "$CG_MANY"; do
            callgrind_run "$binary" "$WORK/$variant.json" "$GW_PORT" "$count" \
                "$WORK/callgrind.$variant.$count" "$WORK/logs/callgrind.err"
            total=$(awk '/^totals:/ {print $2}' "$WORK/callgrind.$variant.$count")
            echo "$binary,$variant,$count,$total" >> "$OUT/handshake-cost.csv"
        done
    done
done
python3 - "$OUT/handshake-cost.csv" "$CG_FEW" "$CG_MANY" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
few, many = int(sys.argv[2]), int(sys.argv[3])
totals = {(r["binary"], r["variant"], int(r["requests"])): int(r["instructions"]) for r in rows}
for binary in dict.fromkeys(r["binary"] for r in rows):
    for variant in ("fresh", "fresh-ca"):
        per = (totals[(binary, variant, many)] - totals[(binary, variant, few)]) / (many - few)
        print(f"{binary}  {variant:9s} {per:12,.0f} instructions per fresh-handshake request")
PY
