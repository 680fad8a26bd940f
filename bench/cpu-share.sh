#!/usr/bin/env bash
# Who runs on the proxy's CPU during a keep-alive load, and who put them there: a scheduler
# trace (`perf record` of sched_switch and sched_wakeup on every CPU) in the middle of each
# timed run, for pinproxy and HAProxy in front of one shared upstream, interleaved as in
# bench/run.sh. For the c128 tail of `make bench`, which follows the CPU time an unpinned
# upstream worker takes on the proxy's CPU more than the proxy's own work (bench/README.md).
#
#   bench/cpu-share.sh                          # wrk c128, keep-alive GETs of 100 B, 3 s
#   CONNECTIONS=16 DURATION=5 ROUNDS=4 ...      # other loads
#   UPSTREAM_CPUS=0 bench/cpu-share.sh          # the upstream's workers pinned (here beside wrk)
#   MODE=close CONNECTIONS=16 bench/cpu-share.sh  # every request with Connection: close
#
# Both proxies (pinproxy's release build with one loop, the pinned gateway of bench/run.sh;
# HAProxy as bench/run.sh configures it) run on PROXY_CPUS and serve the same nginx TLS
# upstream (2 workers, unpinned unless UPSTREAM_CPUS is set); wrk runs on CLIENT_CPUS; all on
# loopback. Per run it prints wrk's req/s and p99 and, from one traced second: each CPU's
# share taken by the proxy, the upstream, wrk and idle; the upstream's wakeups per 1,000
# requests by the proxy onto the proxy's CPU (the kernel's sync wakeup puts a woken task beside
# its waker when that CPU runs nothing else) and from elsewhere; and the proxy's preemptions
# per 1,000 requests (switched out while runnable). Tracepoints need root (or a permissive
# perf_event_paranoid).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CONNECTIONS="${CONNECTIONS:-128}"
DURATION="${DURATION:-3}"
ROUNDS="${ROUNDS:-3}"
PROXY_CPUS="${PROXY_CPUS:-1}"
CLIENT_CPUS="${CLIENT_CPUS:-0}"
UPSTREAM_CPUS="${UPSTREAM_CPUS:-}"
MODE="${MODE:-keep-alive}"
case "$MODE" in
    keep-alive) HEADER=() ;;
    close) HEADER=(-H "Connection: close") ;;
    *) die "MODE is keep-alive or close, not $MODE" ;;
esac
PORT_BASE="${PORT_BASE:-28540}"
UP_PORT=$((PORT_BASE + 0))
WORK="$BENCH_DIR/out/cpu-share"
((DURATION >= 3)) || die "DURATION must be at least 3 s (the trace takes the middle second)"

trap cleanup_started EXIT INT TERM
install_missing wrk:wrk nginx-light:nginx python3:python3 openssl:openssl linux-perf:perf
require_target pinproxy
require_target haproxy
perf record -q -e sched:sched_switch -a -o /dev/null -- true 2>/dev/null \
    || die "perf cannot record scheduler tracepoints here (needs root or kernel.perf_event_paranoid <= -1)"
rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"

declare -A PORT TIDS
PORT[pinproxy]=$((PORT_BASE + 1))
PORT[haproxy]=$((PORT_BASE + 2))
start_gateway_setting "$WORK" "$UP_PORT" "${PORT[pinproxy]}" 2 "$UPSTREAM_CPUS"
UPSTREAM_PIDS="$(proc_tree "$UPSTREAM_PID" | paste -sd,)"
# Each proxy in a directory of its own, on its own port, in front of the one upstream.
for target in pinproxy haproxy; do
    mkdir -p "$WORK/$target/logs"
    cp "$WORK/ca.pem" "$WORK/$target/"
    case "$target" in
        pinproxy) write_pinproxy_gateway_conf "$WORK/$target" "${PORT[$target]}" "$UP_PORT" ;;
        haproxy) write_haproxy_conf "$WORK/$target" "${PORT[$target]}" "$UP_PORT" 1 ;;
    esac
    start_target "$target" "$WORK/$target" "${PORT[$target]}" "$PROXY_CPUS"
    TIDS[$target]="$(ls "/proc/$PROXY_PID/task" | paste -sd,)"
done

log "wrk c$CONNECTIONS $MODE for ${DURATION}s per run on CPU $CLIENT_CPUS; proxies on CPU $PROXY_CPUS; upstream nginx (2 workers) ${UPSTREAM_CPUS:+on CPU }${UPSTREAM_CPUS:-unpinned}"
# Warm-up: the pools' upstream connections and the first TLS handshakes are not traced.
for target in pinproxy haproxy; do
    taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d1s ${HEADER[@]+"${HEADER[@]}"} "http://127.0.0.1:${PORT[$target]}/100b" > /dev/null
done
for ((round = 1; round <= ROUNDS; round++)); do
    # Alternate the order every round, as bench/run.sh does.
    if ((round % 2)); then order=(pinproxy haproxy); else order=(haproxy pinproxy); fi
    for target in "${order[@]}"; do
        name="$target.$round"
        taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency ${HEADER[@]+"${HEADER[@]}"} \
            "http://127.0.0.1:${PORT[$target]}/100b" > "$WORK/wrk.$name" &
        wrk_pid=$!
        sleep $(((DURATION - 1) / 2))
        perf record -q -e sched:sched_switch -e sched:sched_wakeup -a -o "$WORK/perf.$name" -- sleep 1 2>/dev/null
        wait "$wrk_pid"
        perf script -i "$WORK/perf.$name" 2>/dev/null > "$WORK/sched.$name"
        rm -f "$WORK/perf.$name"
        python3 "$BENCH_DIR/cpu_share.py" --name "$target round $round" --wrk "$WORK/wrk.$name" \
            --duration "$DURATION" --proxy-pids "${TIDS[$target]}" --upstream-pids "$UPSTREAM_PIDS" \
            --wrk-comm wrk --proxy-cpu "$PROXY_CPUS" "$WORK/sched.$name"
    done
done
