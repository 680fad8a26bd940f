#!/usr/bin/env bash
# The deterministic cost of one keep-alive request through pinproxy: callgrind
# instructions and syscalls per request, for before/after figures of hot-path
# changes (wall-clock benchmarks vary by ±10% on a shared machine; these do not).
#
#   bench/request-cost.sh                  # CG_FEW=500 CG_MANY=2500 keep-alive GETs of 100 B
#   MODE=close bench/request-cost.sh       # the same, each on a new client connection
#                                          # with Connection: close (the upstream stays pooled)
#   TARGET=haproxy bench/request-cost.sh   # HAProxy configured as in bench/run.sh, measured the
#                                          # same way: the anchor for pinproxy's figures
#   LISTENER=forward bench/request-cost.sh # pinproxy as a forward proxy instead of the gateway:
#                                          # absolute-form requests (http://HOST/100b), as
#                                          # http_proxy clients send them (pinproxy only)
#
# pinproxy (release build, one loop, the pinned gateway of bench/run.sh), or
# HAProxy with TARGET=haproxy, runs in front of one nginx TLS upstream. It runs
# under callgrind for CG_FEW and then CG_MANY sequential keep-alive requests on
# one client connection; the difference of the totals over the difference of
# the counts is the cost per request without start-up, the first handshake and
# shutdown. Then it runs under `strace -f -c` the same way for syscalls per
# request.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CG_FEW="${CG_FEW:-500}"
CG_MANY="${CG_MANY:-2500}"
MODE="${MODE:-keep-alive}"
case "$MODE" in
    keep-alive) REQUEST_FLAGS=(--keep-alive) ;;
    close) REQUEST_FLAGS=() ;;
    *) echo "MODE is keep-alive or close, not $MODE" >&2; exit 2 ;;
esac
TARGET="${TARGET:-pinproxy}"
LISTENER="${LISTENER:-gateway}"
case "$LISTENER" in
    gateway) ;;
    forward) [ "$TARGET" = pinproxy ] || { echo "LISTENER=forward measures pinproxy only" >&2; exit 2; } ;;
    *) echo "LISTENER is gateway or forward, not $LISTENER" >&2; exit 2 ;;
esac
PORT_BASE="${PORT_BASE:-28500}"
UP_PORT=$((PORT_BASE + 0))
PROXY_PORT=$((PORT_BASE + 1))
OUT="$BENCH_DIR/out"
WORK="$OUT/cost"

trap cleanup_started EXIT INT TERM
install_missing nginx-light:nginx python3:python3 openssl:openssl valgrind:valgrind strace:strace
require_target "$TARGET"
rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"

start_gateway_setting "$WORK" "$UP_PORT" "$PROXY_PORT" 1
if [ "$LISTENER" = forward ]; then
    # The same pinned rule and upstream; the listener takes the host from each request.
    sed -i 's|"mode": "gateway", "upstream": "[^"]*"|"mode": "forward"|' "$WORK/pinproxy.json"
    grep -q '"mode": "forward"' "$WORK/pinproxy.json" || die "could not make the listener a forward one"
    REQUEST_FLAGS+=(--url "http://$HOST_NAME/100b")
fi
target_command "$TARGET" "$WORK"

# run_counted TOOL COUNT — pinproxy under TOOL (callgrind or strace) for COUNT requests.
run_counted() {
    local tool="$1" count="$2" pid
    case "$tool" in
        callgrind) valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.$count" \
                       "${PROXY_COMMAND[@]}" 2>>"$WORK/logs/tool.err" & ;;
        strace) strace -f -c -o "$WORK/strace.$count" "${PROXY_COMMAND[@]}" 2>>"$WORK/logs/tool.err" & ;;
    esac
    pid=$!
    STARTED_PIDS+=("$pid")
    wait_port "$PROXY_PORT" 60
    python3 "$BENCH_DIR/requests.py" --port "$PROXY_PORT" --count "$count" "${REQUEST_FLAGS[@]}" \
        || die "$TARGET under $tool: requests failed"
    # The daemon itself gets the signal: strace would only detach from it. pinproxy drains on
    # SIGINT; HAProxy in the foreground (-db) stops at once on SIGTERM (SIGINT alone does not).
    local stop=INT
    [ "$TARGET" = haproxy ] && stop=TERM
    if [ "$tool" = strace ]; then pkill "-$stop" -P "$pid"; else kill "-$stop" "$pid"; fi
    wait "$pid" 2>/dev/null || true
}

for count in "$CG_FEW" "$CG_MANY"; do run_counted callgrind "$count"; done
for count in "$CG_FEW" "$CG_MANY"; do run_counted strace "$count"; done
few_ir=$(awk '/^totals:/ {print $2}' "$WORK/callgrind.$CG_FEW")
many_ir=$(awk '/^totals:/ {print $2}' "$WORK/callgrind.$CG_MANY")
# strace -c's last line: "100.00 <seconds> <usecs/call> <calls> [<errors>] total"
few_sc=$(awk '$NF == "total" {print $4}' "$WORK/strace.$CG_FEW")
many_sc=$(awk '$NF == "total" {print $4}' "$WORK/strace.$CG_MANY")
label="$TARGET"
[ "$LISTENER" = forward ] && label="$TARGET (forward listener)"
python3 - "$label" "$MODE" "$CG_FEW" "$CG_MANY" "$few_ir" "$many_ir" "$few_sc" "$many_sc" <<'PY'
import sys
target, mode = sys.argv[1:3]
few, many, few_ir, many_ir, few_sc, many_sc = map(int, sys.argv[3:])
span = many - few
print(f"{target}: {mode} request cost ({few} and {many} requests, difference):")
print(f"  instructions per request  {(many_ir - few_ir) / span:,.0f}   (callgrind totals {few_ir:,} / {many_ir:,})")
print(f"  syscalls per request      {(many_sc - few_sc) / span:.2f}   (strace -c totals {few_sc:,} / {many_sc:,})")
PY
grep -E '^\s*[0-9.]+\s' "$WORK/strace.$CG_MANY" | sort -k4 -n -r | head -8 >&2 || true
