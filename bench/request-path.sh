#!/usr/bin/env bash
# Where a keep-alive request waits under load, segment by segment: in the proxy's socket
# before its loop reads it, inside the proxy (the upstream's turn shown apart), and in wrk
# before wrk reads the answer and before it sends the next request. Two proxies with the same
# requests per second and CPU per request can still differ in their tails (`make bench`'s c128
# p99); this shows in which segment.
#
#   bench/request-path.sh                    # pinproxy, wrk c128, keep-alive GETs of 100 B
#   TARGET=haproxy bench/request-path.sh     # HAProxy configured as in bench/run.sh
#   CONNECTIONS=16 ROUNDS=3 ...              # other loads; one block per round
#
# The proxy (release build, one loop, the pinned gateway of bench/run.sh) runs on PROXY_CPUS,
# wrk on CLIENT_CPUS, one nginx TLS upstream (two workers) unpinned, all on loopback, as in
# `make bench` (UPSTREAM_CPUS pins the upstream, as there). In each round `perf record` traces
# the read and write calls of the proxy and of wrk over a wrk run of DURATION seconds; half a
# second after wrk has connected, their sockets are matched to connections (/proc/PID/fd,
# /proc/net/tcp), and bench/request_path.py follows each connection from both ends over the
# next second. Tracing costs both processes CPU (about 15 events a request), so a traced round
# serves fewer requests and has a longer tail than an untraced one: compare proxies traced
# alike, not these figures with `make bench`'s. Tracepoints need root (or a permissive
# perf_event_paranoid).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TARGET="${TARGET:-pinproxy}"
CONNECTIONS="${CONNECTIONS:-128}"
DURATION="${DURATION:-3}"
ROUNDS="${ROUNDS:-2}"
PROXY_CPUS="${PROXY_CPUS:-1}"
CLIENT_CPUS="${CLIENT_CPUS:-0}"
UPSTREAM_CPUS="${UPSTREAM_CPUS:-}"
PORT_BASE="${PORT_BASE:-28540}"
UP_PORT=$((PORT_BASE + 0))
PROXY_PORT=$((PORT_BASE + 1))
WORK="$BENCH_DIR/out/request-path"
EVENTS=""
for call in read readv recvfrom write writev sendto; do
    EVENTS+="${EVENTS:+,}syscalls:sys_enter_$call,syscalls:sys_exit_$call"
done

[ "$DURATION" -ge 3 ] || die "DURATION must be at least 3 seconds (wrk connects, half a second passes, one second is traced)"
trap cleanup_started EXIT INT TERM
install_missing wrk:wrk nginx-light:nginx python3:python3 openssl:openssl linux-perf:perf
require_target "$TARGET"
perf stat -x, -e syscalls:sys_enter_read -- true 2>/dev/null \
    || die "perf cannot trace syscall tracepoints here (needs root or kernel.perf_event_paranoid <= 1)"
rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"

start_gateway_setting "$WORK" "$UP_PORT" "$PROXY_PORT" 2 "$UPSTREAM_CPUS"
start_target "$TARGET" "$WORK" "$PROXY_PORT" "$PROXY_CPUS"

URL="http://127.0.0.1:$PROXY_PORT/100b"
log "$TARGET, keep-alive, wrk c$CONNECTIONS for ${DURATION}s per round, one second traced (proxy on CPU $PROXY_CPUS, wrk on CPU $CLIENT_CPUS, upstream ${UPSTREAM_CPUS:+on CPU }${UPSTREAM_CPUS:-unpinned})"
# Warm-up: the pool's upstream connections and the first TLS handshakes are not traced.
taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d1s "$URL" > /dev/null

# socket_inodes PID — "PID FD INODE" for each socket PID holds; one find, not a readlink per
# descriptor: forks are slow on CPUs this busy, and wrk must still be running when it is done.
socket_inodes() {
    find "/proc/$1/fd" -lname 'socket:*' -printf "$1 %f %l\n" 2>/dev/null | sed 's/socket:\[\([0-9]*\)\]$/\1/'
}

# established_to PORT — established TCP connections whose remote end is 127.0.0.1:PORT.
established_to() {
    awk -v port="$(printf ':%04X' "$1")" 'NR > 1 && $4 == "01" && substr($3, 9) == port {n++} END {print n + 0}' /proc/net/tcp
}

# monotonic_now — CLOCK_MONOTONIC in seconds, the clock perf records with -k CLOCK_MONOTONIC.
monotonic_now() { python3 -c 'import time; print(f"{time.monotonic():.6f}")'; }

for ((round = 1; round <= ROUNDS; round++)); do
    # The proxy is traced from before wrk starts and wrk from its exec, so attaching costs no
    # part of the traced second; the second is the one after the connections are matched.
    perf record -q -k CLOCK_MONOTONIC -o "$WORK/proxy.$round.data" -e "$EVENTS" -p "$PROXY_PID" \
        -- sleep "$((DURATION + 2))" > /dev/null 2>>"$WORK/logs/perf.err" &
    proxy_perf=$!
    STARTED_PIDS+=("$proxy_perf")
    sleep 0.5
    perf record -q -k CLOCK_MONOTONIC -o "$WORK/wrk.$round.data" -e "$EVENTS" \
        -- taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$URL" \
        > "$WORK/wrk.$round" 2>>"$WORK/logs/perf.err" &
    wrk_perf=$!
    STARTED_PIDS+=("$wrk_perf")
    # perf takes a moment to start wrk: wait for all its connections, then half a second more.
    for ((i = 0; i < 50; i++)); do
        [ "$(established_to "$PROXY_PORT")" -ge "$CONNECTIONS" ] && break
        sleep 0.1
    done
    [ "$(established_to "$PROXY_PORT")" -ge "$CONNECTIONS" ] || die "round $round: wrk did not connect within 5 s"
    sleep 0.5
    wrk_pid=$(pgrep -n -x wrk) || die "round $round: wrk is not running"
    from=$(monotonic_now)
    { socket_inodes "$wrk_pid"; socket_inodes "$PROXY_PID"; } > "$WORK/sockets.$round"
    # A read of /proc/net/tcp can skip entries while others leave the table (the TIME_WAIT
    # sockets of earlier runs expiring); a socket missing from one read is in another.
    for _ in 1 2 3 4 5; do cat /proc/net/tcp; done > "$WORK/tcp.$round"
    wait "$wrk_perf" || die "round $round: wrk under perf failed (logs/perf.err)"
    kill -INT "$proxy_perf" 2>/dev/null || true
    wait "$proxy_perf" || true
    errors=$(awk '/Non-2xx|Socket errors/ {print}' "$WORK/wrk.$round")
    [ -z "$errors" ] || die "round $round: wrk reported errors: $errors"
    for side in proxy wrk; do
        perf script -i "$WORK/$side.$round.data" -F pid,tid,time,event,trace 2>/dev/null
        rm -f "$WORK/$side.$round.data"
    done > "$WORK/trace.$round.txt"
    awk -v round="$round" '/Requests\/sec/ {rps = $2} $1 == "50%" {p50 = $2} $1 == "99%" {p99 = $2}
        END {printf "round %s: wrk %s requests/s, latency p50 %s, p99 %s (the whole run, one second of it traced)\n", round, rps, p50, p99}' \
        "$WORK/wrk.$round"
    python3 "$BENCH_DIR/request_path.py" "$WORK/sockets.$round" "$WORK/tcp.$round" "$WORK/trace.$round.txt" \
        "$PROXY_PORT" "$UP_PORT" "$from" 1
done
