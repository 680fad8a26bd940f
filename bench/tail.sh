#!/usr/bin/env bash
# The shape of the keep-alive latency distribution, not only its p99: pinproxy builds and
# HAProxy side by side in front of one nginx TLS upstream, interleaved runs, wrk's percentiles
# and standard deviation for each, and where each proxy's upstream connections and the
# upstream's CPU went. For the c128 tail of `make bench`: two proxies with the same requests per
# second (so the same mean latency, 128 / rate) differ in p99 only by how evenly they serve.
#
#   bench/tail.sh                                     # wrk c128, 100 B GETs, 4 s, 6 rounds
#   PINPROXY_BINS="/tmp/before .build/release/pinproxy" bench/tail.sh   # A/B two builds
#   CONNECTIONS=16 DURATION=5 ROUNDS=8 REUSEPORT=0 ...
#   MODE=close CONNECTIONS=16 ...                     # every request with Connection: close
#   URL_PATH=/1m CONNECTIONS=16 WARM=128 GAP=3 ...    # 1 MiB GETs, each run after 2 s of c128
#                                                     # 100 B GETs and a 3 s pause, as a pool
#                                                     # meets them in make bench
#
# Every proxy runs on PROXY_CPUS (one loop; pinproxy the pinned gateway of bench/run.sh, HAProxy
# as bench/run.sh configures it), each on its own port; wrk runs on CLIENT_CPUS; the upstream
# (2 workers, unpinned, `reuseport` as bench/run.sh's unless REUSEPORT=0) serves them all, on
# loopback. Per run: req/s; p50, p90, p99, p99.9 and max in ms; mean and standard deviation;
# the proxy's CPU µs per request; its upstream connections on each nginx worker (`ss`) and
# each worker's CPU ticks during the run. The order of the targets is reversed every round.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CONNECTIONS="${CONNECTIONS:-128}"
DURATION="${DURATION:-4}"
ROUNDS="${ROUNDS:-6}"
URL_PATH="${URL_PATH:-/100b}"
WARM="${WARM:-0}"
GAP="${GAP:-0}"
REUSEPORT="${REUSEPORT:-1}"
MODE="${MODE:-keep-alive}"
case "$MODE" in
    keep-alive) HEADER=() ;;
    close) HEADER=(-H "Connection: close") ;;
    *) echo "MODE is keep-alive or close, not $MODE" >&2; exit 2 ;;
esac
PROXY_CPUS="${PROXY_CPUS:-1}"
CLIENT_CPUS="${CLIENT_CPUS:-0}"
PINPROXY_BINS="${PINPROXY_BINS:-$PINPROXY_BIN}"
PORT_BASE="${PORT_BASE:-28640}"
UP_PORT=$((PORT_BASE + 0))
WORK="$BENCH_DIR/out/tail"

trap cleanup_started EXIT INT TERM
install_missing wrk:wrk nginx-light:nginx python3:python3 openssl:openssl
require_target haproxy
for binary in $PINPROXY_BINS; do PINPROXY_BIN="$binary" require_target pinproxy; done
rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"

make_bench_pki "$WORK"
head -c 1048576 /dev/urandom > "$WORK/www/1m"
listen_options=""
[ "$REUSEPORT" = 1 ] && listen_options=reuseport
write_upstream_conf "$WORK" "$UP_PORT" 2 "$listen_options"
nginx -c "$WORK/upstream.conf" -p "$WORK" 2>>"$WORK/logs/upstream.err" &
UPSTREAM_PID=$!
STARTED_PIDS+=("$UPSTREAM_PID")
wait_port "$UP_PORT"
sleep 0.3
WORKER_PIDS="$(pgrep -P "$UPSTREAM_PID" | paste -sd' ')"

declare -A PORT PID
TARGETS=()
index=1
for binary in $PINPROXY_BINS; do
    target="pinproxy$index"
    TARGETS+=("$target")
    PORT[$target]=$((PORT_BASE + index))
    mkdir -p "$WORK/$target/logs"
    cp "$WORK/ca.pem" "$WORK/$target/"
    write_pinproxy_gateway_conf "$WORK/$target" "${PORT[$target]}" "$UP_PORT"
    PINPROXY_BIN="$binary" start_target pinproxy "$WORK/$target" "${PORT[$target]}" "$PROXY_CPUS"
    PID[$target]=$PROXY_PID
    log "$target: $binary"
    index=$((index + 1))
done
TARGETS+=(haproxy)
PORT[haproxy]=$((PORT_BASE + 99))
mkdir -p "$WORK/haproxy/logs"
cp "$WORK/ca.pem" "$WORK/haproxy/"
write_haproxy_conf "$WORK/haproxy" "${PORT[haproxy]}" "$UP_PORT" 1
start_target haproxy "$WORK/haproxy" "${PORT[haproxy]}" "$PROXY_CPUS"
PID[haproxy]=$PROXY_PID

# worker_ticks — each upstream worker's CPU ticks so far (lib.sh's cpu_ticks), space-separated.
worker_ticks() {
    local pid
    for pid in $WORKER_PIDS; do cpu_ticks "$pid"; done | paste -sd' '
}

log "wrk c$CONNECTIONS $MODE for ${DURATION}s per run on CPU $CLIENT_CPUS; proxies on CPU $PROXY_CPUS; nginx (2 workers$([ "$REUSEPORT" = 1 ] && echo ", reuseport")) unpinned"
for target in "${TARGETS[@]}"; do
    taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d1s ${HEADER[@]+"${HEADER[@]}"} "http://127.0.0.1:${PORT[$target]}$URL_PATH" > /dev/null
done
for ((round = 1; round <= ROUNDS; round++)); do
    order=("${TARGETS[@]}")
    if ((round % 2 == 0)); then
        order=()
        for ((k = ${#TARGETS[@]} - 1; k >= 0; k--)); do order+=("${TARGETS[$k]}"); done
    fi
    for target in "${order[@]}"; do
        if [ "$WARM" -gt 0 ]; then
            taskset -c "$CLIENT_CPUS" wrk -t1 -c"$WARM" -d2s "http://127.0.0.1:${PORT[$target]}/100b" > /dev/null
            sleep "$GAP"
        fi
        proxy_before=$(cpu_ticks "${PID[$target]}")
        workers_before=$(worker_ticks)
        taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" ${HEADER[@]+"${HEADER[@]}"} -s "$BENCH_DIR/tail.lua" \
            "http://127.0.0.1:${PORT[$target]}$URL_PATH" > "$WORK/wrk.out"
        proxy_after=$(cpu_ticks "${PID[$target]}")
        workers_after=$(worker_ticks)
        python3 "$BENCH_DIR/tail.py" --name "round $round $target" --wrk "$WORK/wrk.out" \
            --proxy-ticks "$proxy_before" "$proxy_after" \
            --worker-ticks "$workers_before" "$workers_after" \
            --proxy-pid "${PID[$target]}" --worker-pids "$WORKER_PIDS" --upstream-port "$UP_PORT"
    done
done
