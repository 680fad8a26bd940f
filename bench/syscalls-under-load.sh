#!/usr/bin/env bash
# Syscalls per request under concurrent load, counted by kernel tracepoints: the figure
# bench/request-cost.sh cannot give. Its client is sequential, so whatever depends on
# several clients at once (a request not yet there at accept, batches per epoll_wait,
# re-registrations) never shows there; strace would slow the proxy enough to change it.
#
#   bench/syscalls-under-load.sh                 # wrk c16, keep-alive GETs of 100 B, 3 s
#   MODE=close bench/syscalls-under-load.sh      # the same with Connection: close
#   TARGET=haproxy bench/syscalls-under-load.sh  # HAProxy configured as in bench/run.sh
#   CONNECTIONS=128 DURATION=5 ROUNDS=3 ...      # other loads; one line per round
#
# The proxy (release build, one loop, the pinned gateway of bench/run.sh) runs on
# PROXY_CPUS, wrk on CLIENT_CPUS, one nginx TLS upstream unpinned, all on loopback. Each
# round counts the proxy's syscalls with `perf stat` over a timed wrk run and divides by
# the requests wrk completed. A last run records only the proxy's epoll_wait entries and
# exits (`perf record`) and prints how its loop spent the time: the share of the run it
# slept in epoll_wait, the length of its sleeps and of the passes between them, and the
# events each wait returned. Two proxies that spend the same CPU per request can still
# differ there: a loop that sleeps while the client and the upstream are busy, and then
# gets their work in bursts, overlaps less with them. Each round also counts the peers'
# epoll_wait calls per request (wrk's, and the upstream workers' together): how many answers
# or requests a peer finds per wakeup, which the proxy's timing of its writes decides and
# the peers pay for on their CPUs, and the proxy's context switches per request (sleeps, and
# preemptions by another task on its CPU, such as an upstream worker the scheduler moved there)
# beside wrk's p50 and p99. Tracepoints need root (or a permissive perf_event_paranoid).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MODE="${MODE:-keep-alive}"
case "$MODE" in
    keep-alive) HEADER=() ;;
    close) HEADER=(-H "Connection: close") ;;
    *) echo "MODE is keep-alive or close, not $MODE" >&2; exit 2 ;;
esac
TARGET="${TARGET:-pinproxy}"
CONNECTIONS="${CONNECTIONS:-16}"
DURATION="${DURATION:-3}"
ROUNDS="${ROUNDS:-2}"
PROXY_CPUS="${PROXY_CPUS:-1}"
CLIENT_CPUS="${CLIENT_CPUS:-0}"
PORT_BASE="${PORT_BASE:-28520}"
UP_PORT=$((PORT_BASE + 0))
PROXY_PORT=$((PORT_BASE + 1))
WORK="$BENCH_DIR/out/syscalls"
# The total, then the calls either proxy makes per request or per loop pass.
EVENTS=raw_syscalls:sys_enter
for call in epoll_wait epoll_ctl accept4 setsockopt read readv recvfrom write writev sendto shutdown close; do
    EVENTS+=",syscalls:sys_enter_$call"
done

trap cleanup_started EXIT INT TERM
install_missing wrk:wrk nginx-light:nginx python3:python3 openssl:openssl linux-perf:perf
require_target "$TARGET"
perf stat -x, -e raw_syscalls:sys_enter -- true 2>/dev/null \
    || die "perf cannot count syscall tracepoints here (needs root or kernel.perf_event_paranoid <= 1)"
rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"

start_gateway_setting "$WORK" "$UP_PORT" "$PROXY_PORT" 2
start_target "$TARGET" "$WORK" "$PROXY_PORT" "$PROXY_CPUS"

URL="http://127.0.0.1:$PROXY_PORT/100b"
log "$TARGET, $MODE, wrk c$CONNECTIONS for ${DURATION}s per round (proxy on CPU $PROXY_CPUS, wrk on CPU $CLIENT_CPUS)"
# Warm-up: the pool's upstream connections and the first TLS handshakes are not counted.
taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d1s "${HEADER[@]}" "$URL" > /dev/null

# watched_run NAME PERF_COMMAND... — one timed wrk run with `perf PERF_COMMAND` attached to the
# proxy meanwhile; wrk's output goes to $WORK/wrk.NAME and REQUESTS to what it completed. perf
# runs a little longer than wrk, so no request goes uncounted.
# With PEERS=1, the peers' epoll_wait calls are counted too: wrk's (perf runs it) into
# $WORK/client.NAME, the upstream's into $WORK/upstream.NAME (its workers': nginx's master
# waits in sigsuspend).
watched_run() {
    local name="$1" perf_pid upstream_perf_pid="" client=()
    shift
    perf "$@" -p "$PROXY_PID" -- sleep "$((DURATION + 1))" > /dev/null &
    perf_pid=$!
    if [ "${PEERS:-0}" = 1 ]; then
        perf stat -x, -e syscalls:sys_enter_epoll_wait -o "$WORK/upstream.$name" \
            -p "$(proc_tree "$UPSTREAM_PID" | paste -sd,)" \
            -- sleep "$((DURATION + 1))" > /dev/null &
        upstream_perf_pid=$!
        client=(perf stat -x, -e syscalls:sys_enter_epoll_wait -o "$WORK/client.$name" --)
    fi
    sleep 0.2
    SWITCHES_BEFORE=$(context_switches "$PROXY_PID")
    "${client[@]}" taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "${HEADER[@]}" "$URL" \
        > "$WORK/wrk.$name"
    SWITCHES_AFTER=$(context_switches "$PROXY_PID")
    wait "$perf_pid" ${upstream_perf_pid:+"$upstream_perf_pid"}
    REQUESTS=$(awk '/requests in/ {print $1}' "$WORK/wrk.$name")
    errors=$(awk '/Non-2xx|Socket errors/ {print}' "$WORK/wrk.$name")
    [ -n "$REQUESTS" ] && [ "$REQUESTS" -gt 0 ] || die "$name run: wrk completed no request"
    [ -z "$errors" ] || die "$name run: wrk reported errors: $errors"
}

for ((round = 1; round <= ROUNDS; round++)); do
    PEERS=1 watched_run "$round" stat -x, -e "$EVENTS" -o "$WORK/perf.$round"
    requests=$REQUESTS
    python3 - "$round" "$requests" "$WORK/perf.$round" "$WORK/client.$round" "$WORK/upstream.$round" \
        "$SWITCHES_BEFORE" "$SWITCHES_AFTER" "$WORK/wrk.$round" <<'PY'
import sys
round_, requests, path, client, upstream = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
switches = [int(after) - int(before) for before, after in zip(sys.argv[6].split(), sys.argv[7].split())]
# wrk --latency prints "50%    3.07ms" and "99%    5.57ms" lines.
latency = {fields[0]: fields[1] for fields in map(str.split, open(sys.argv[8])) if fields[:1] in (["50%"], ["99%"])}
def counts_in(path):
    counts = {}
    for line in open(path):
        fields = line.strip().split(",")
        if len(fields) < 3 or not fields[0].replace(".", "").isdigit():
            continue
        name = fields[2].split(":")[-1].removeprefix("sys_enter_")
        counts[name] = int(float(fields[0]))
    return counts
counts = counts_in(path)
total = counts.pop("sys_enter", 0)
calls = "  ".join(f"{name} {count / requests:.2f}" for name, count in counts.items() if count)
print(f"round {round_}: {requests:,} requests, {total / requests:.2f} syscalls per request  ({calls})")
peer_waits = [counts_in(p).get("epoll_wait", 0) / requests for p in (client, upstream)]
print(f"  peers' epoll_wait per request: wrk {peer_waits[0]:.2f}, upstream workers {peer_waits[1]:.2f}")
print(f"  proxy's context switches per request: slept {switches[0] / requests:.3f}, preempted "
      f"{switches[1] / requests:.3f}; wrk's latency p50 {latency.get('50%', '?')}, p99 {latency.get('99%', '?')}")
PY
done

# The loop's time: perf records each epoll_wait entry and exit of the proxy's threads over one
# more run: two events per loop pass. Recording still costs the proxy something: compare that
# run's request count with the counted rounds' (within 15 % in five of six runs measured, 28 %
# fewer in one; bench/README.md).
watched_run passes record -q -o "$WORK/passes.data" -e syscalls:sys_enter_epoll_wait,syscalls:sys_exit_epoll_wait
requests=$REQUESTS
perf script -i "$WORK/passes.data" -F tid,time,event,trace 2>/dev/null > "$WORK/passes.txt"
python3 - "$requests" "$DURATION" "$WORK/passes.txt" <<'PY'
import re, sys
requests, duration, path = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
# Per thread: each wait (entry to exit of epoll_wait), each pass (exit to the next entry),
# and the events each wait returned. Only the thread that serves (the most waits) is reported.
threads = {}
for line in open(path):
    m = re.match(r"\s*(\d+)\s+([\d.]+):\s+syscalls:sys_(enter|exit)_epoll_wait:\s*(.*)", line)
    if not m:
        continue
    tid, at, kind, result = m.group(1), float(m.group(2)) * 1e6, m.group(3), m.group(4)
    t = threads.setdefault(tid, {"waits": [], "passes": [], "events": [], "entered": None, "left": None})
    if kind == "enter":
        if t["left"] is not None:
            t["passes"].append(at - t["left"])
        t["entered"] = at
    elif t["entered"] is not None:
        t["waits"].append(at - t["entered"])
        # perf prints the return value in hex; a failed wait (EINTR: a negative value,
        # two's complement) returned no event.
        value = int(result, 0)
        t["events"].append(value if value < 1 << 63 else 0)
        t["left"] = at
if not threads:
    sys.exit("loop run: perf recorded no epoll_wait")
t = max(threads.values(), key=lambda t: len(t["waits"]))
def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else 0.0
sleeps = [d for d in t["waits"] if d >= 20]  # shorter: returned at once, nothing slept
span = sum(t["waits"]) + sum(t["passes"])
print(f"loop: {len(t['waits']) / requests:.2f} epoll_wait per request, "
      f"{sum(t['events']) / max(1, len(t['events'])):.1f} events per wait; "
      f"asleep {100 * sum(t['waits']) / span:.0f} % of the run "
      f"({len(sleeps) / requests:.2f} sleeps of 20 us or more per request, "
      f"p50 {pct(sleeps, 0.5):.0f} us, p90 {pct(sleeps, 0.9):.0f} us); "
      f"passes p50 {pct(t['passes'], 0.5):.0f} us, p90 {pct(t['passes'], 0.9):.0f} us "
      f"({requests:,} requests in {duration:.0f} s while recorded)")
PY
