#!/usr/bin/env bash
# Where a Connection: close request's instructions fall in the proxy's loop
# passes: before the pass's first send (on the request's critical path: the
# upstream or the client waits for them) or after it (overlapping with the
# peer's work). The CPU figures of make bench are equal for pinproxy and
# HAProxy on this workload while its req/s are not; this shows how much of
# each proxy's work the request waits for.
#
#   bench/critical-path.sh                     # pinproxy, then HAProxy, COUNT=300 requests each
#   TARGETS=pinproxy bench/critical-path.sh    # one of them
#   KEEP_ALIVE=1 bench/critical-path.sh        # all requests on one connection
#
# The proxy (release build for pinproxy, one loop; HAProxy as bench/run.sh
# configures it) runs under callgrind in front of one nginx TLS upstream and
# serves COUNT sequential requests, each on a new connection with
# Connection: close (bench/requests.py). Callgrind dumps a part before every
# call to epoll_wait, accept4 and the send functions (write, writev, send,
# sendto, sendmsg): bench/critical_path.py sums the parts per loop pass.
# Deterministic (instruction counts), unlike wall-clock runs on a shared machine.
# KEEP_ALIVE=1 sends the requests on one persistent connection instead: the
# passes are then told apart by their order (see critical_path.py).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT="${COUNT:-300}"
KEEP_ALIVE="${KEEP_ALIVE:-0}"
TARGETS="${TARGETS:-pinproxy haproxy}"
PORT_BASE="${PORT_BASE:-28600}"
UP_PORT=$((PORT_BASE + 0))
PROXY_PORT=$((PORT_BASE + 1))
WORK="$BENCH_DIR/out/critical-path"
client_mode=() analysis_mode=close
if [ "$KEEP_ALIVE" = 1 ]; then client_mode=(--keep-alive) analysis_mode=keep-alive; WORK="$WORK-keep-alive"; fi

trap cleanup_started EXIT INT TERM
install_missing nginx-light:nginx python3:python3 openssl:openssl valgrind:valgrind haproxy:haproxy
rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"
start_gateway_setting "$WORK" "$UP_PORT" "$PROXY_PORT" 1

for target in $TARGETS; do
    case "$target" in
        pinproxy)
            [ -x "$PINPROXY_BIN" ] || die "no pinproxy binary at $PINPROXY_BIN (run: swift build -c release)"
            command=("$PINPROXY_BIN" run --config "$WORK/pinproxy.json" --log-level warning); stop=INT ;;
        haproxy) command=(haproxy -db -f "$WORK/haproxy.cfg"); stop=TERM ;;
        *) die "TARGETS holds pinproxy and/or haproxy, not $target" ;;
    esac
    mkdir -p "$WORK/$target"
    triggers=()
    for function in epoll_wait accept4 write writev send sendto sendmsg; do triggers+=(--dump-before="$function"); done
    valgrind --tool=callgrind --callgrind-out-file="$WORK/$target/callgrind.out" "${triggers[@]}" \
        "${command[@]}" 2>>"$WORK/logs/$target.err" &
    pid=$!
    STARTED_PIDS+=("$pid")
    wait_port "$PROXY_PORT" 60
    python3 "$BENCH_DIR/requests.py" --port "$PROXY_PORT" --count "$COUNT" "${client_mode[@]}" || die "$target: requests failed"
    # Counting passes back from the last answer needs the last answer to be the
    # last send: a graceful stop sends too (pinproxy's close_notify to the
    # pooled upstream), so the keep-alive run ends with SIGKILL. Every part
    # was written when its trigger fired; nothing is lost with the process.
    [ "$KEEP_ALIVE" = 1 ] && stop=KILL
    kill "-$stop" "$pid"
    wait "$pid" 2>/dev/null || true
    python3 "$BENCH_DIR/critical_path.py" "$target" "$WORK/$target" "$analysis_mode"
done
