#!/usr/bin/env bash
# bench/custom-check.sh (make bench-custom): what policy "custom" costs (SPEC §2.1).
#
#   1. Latency of a fresh upstream handshake (no pool, no session resumption) under
#      policy "default", and under "custom" running /bin/true with its verdict cached
#      ("10m") and asked every time ("0s"): the difference is what the command adds.
#   2. A keep-alive load (wrk, c16, 100 B) on a pinned host while another host's checker
#      sleeps 1 s on every handshake, against the same load without it: a slow checker
#      must not slow other hosts on the same loop.
#
# Loopback only, bounded (ROUNDS x COUNT requests; DURATION seconds per load run).
# Tunables: ROUNDS=3 COUNT=100 DURATION=8 PROXY_CPUS=1 CLIENT_CPUS=0 PORT_BASE=28700.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS="${ROUNDS:-3}"
COUNT="${COUNT:-100}"
DURATION="${DURATION:-8}"
PROXY_CPUS="${PROXY_CPUS:-1}"
CLIENT_CPUS="${CLIENT_CPUS:-0}"
PORT_BASE="${PORT_BASE:-28700}"
UP_PORT=$PORT_BASE
OUT="$BENCH_DIR/out"
WORK="$OUT/custom-work"
trap cleanup_started EXIT INT TERM

install_missing wrk:wrk nginx-light:nginx python3:python3 openssl:openssl
[ -x "$PINPROXY_BIN" ] || die "no pinproxy binary at $PINPROXY_BIN (run: swift build -c release)"
rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs" "$WORK/bin"
chmod 755 "$WORK" "$WORK/bin"
make_ca "$WORK" ca
make_leaf "$WORK" ca leaf "*.bench.example.test"
head -c 100 /dev/zero | tr '\0' 'a' > "$WORK/www/100b"
write_upstream_conf "$WORK" "$UP_PORT" 2
nginx -c "$WORK/upstream.conf" -p "$WORK" &
STARTED_PIDS+=("$!")
wait_port "$UP_PORT"

# A checker that takes a second and rejects: rejected handshakes are never pooled,
# so every request to its host starts one more handshake waiting for it.
cat > "$WORK/bin/slow-check" <<'SH'
#!/bin/sh
cat >/dev/null
sleep 1
echo "slow and unknown"
exit 1
SH
chmod 755 "$WORK/bin/slow-check"

# proxy_config FILE REUSE PORTS_AND_RULES... — one gateway listener per "port host rule".
proxy_config() {
    local file="$1" reuse="$2"; shift 2
    local listeners="" hosts="" resolve="" entry port host rule
    for entry in "$@"; do
        IFS='|' read -r port host rule <<<"$entry"
        listeners+="${listeners:+, }{ \"listen\": \"127.0.0.1:$port\", \"mode\": \"gateway\", \"upstream\": \"$host:443\" }"
        hosts+="${hosts:+, }\"$host\": { $rule }"
        resolve+="${resolve:+, }\"$host:443\": \"127.0.0.1:$UP_PORT\""
    done
    cat > "$file" <<CONF
{
  "listeners": [ $listeners ],
  "violation_log": "$WORK/logs/violations-$(basename "$file" .json).jsonl",
  "trust_store": "$WORK/ca.pem",
  "default_policy": "deny",
  "hosts": { $hosts },
  "resolve": { $resolve },
  $reuse
  "threads": 1
}
CONF
}

start_proxy() {
    taskset -c "$PROXY_CPUS" "$PINPROXY_BIN" run --config "$1" --log-level warning 2>>"$WORK/logs/pinproxy.err" &
    STARTED_PIDS+=("$!")
    PROXY_PID=$!
}

# --- 1. what the command adds to a fresh handshake ------------------------------------------
P_DEFAULT=$((PORT_BASE + 1)); P_CACHED=$((PORT_BASE + 2)); P_UNCACHED=$((PORT_BASE + 3))
proxy_config "$WORK/latency.json" '"upstream_reuse": { "idle_per_host": 0, "tls_sessions": false },' \
    "$P_DEFAULT|default.bench.example.test|\"policy\": \"default\"" \
    "$P_CACHED|cached.bench.example.test|\"policy\": \"custom\", \"command\": [\"/bin/true\"], \"cache\": \"10m\"" \
    "$P_UNCACHED|uncached.bench.example.test|\"policy\": \"custom\", \"command\": [\"/bin/true\"], \"cache\": \"0s\""
start_proxy "$WORK/latency.json"
for port in $P_DEFAULT $P_CACHED $P_UNCACHED; do wait_port "$port"; done
log "fresh-handshake latency: $ROUNDS rounds x $COUNT requests per variant"
LATENCY="$(taskset -c "$CLIENT_CPUS" python3 "$BENCH_DIR/latency.py" --ports "$P_DEFAULT,$P_CACHED,$P_UNCACHED" \
    --names default,custom-cached,custom-uncached --count "$COUNT" --rounds "$ROUNDS")"
kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null || true
median() { awk -v n="$1" '$1 == n { sub("median_us=", "", $2); print $2 }' <<<"$LATENCY"; }
p90() { awk -v n="$1" '$1 == n { sub("p90_us=", "", $3); print $3 }' <<<"$LATENCY"; }
printf '\n%-18s %12s %12s %14s\n' "fresh handshake" "median µs" "p90 µs" "added (median)"
for name in default custom-cached custom-uncached; do
    printf '%-18s %12s %12s %14s\n' "$name" "$(median $name)" "$(p90 $name)" "$(( $(median $name) - $(median default) ))"
done

# --- 2. a slow checker does not slow other hosts -------------------------------------------
P_PINNED=$((PORT_BASE + 4)); P_SLOW=$((PORT_BASE + 5))
PIN="$(spki_pin "$WORK/leaf.pem")"
proxy_config "$WORK/load.json" "" \
    "$P_PINNED|pinned.bench.example.test|\"policy\": \"pin-public-keys\", \"pins\": [\"$PIN\", \"sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"]" \
    "$P_SLOW|slow.bench.example.test|\"policy\": \"custom\", \"command\": [\"$WORK/bin/slow-check\"], \"cache\": \"0s\", \"timeout\": \"5s\""
start_proxy "$WORK/load.json"
wait_port "$P_PINNED"; wait_port "$P_SLOW"
load_run() {
    taskset -c "$CLIENT_CPUS" wrk -t1 -c16 -d"${DURATION}s" --latency "http://127.0.0.1:$P_PINNED/100b" \
        | awk '/Requests\/sec/ { rps = $2 } /^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 } END { print rps, p50, p99 }'
}
log "keep-alive load on the pinned host, ${DURATION}s, without and with a slow checker busy"
read -r RPS_ALONE P50_ALONE P99_ALONE <<<"$(load_run)"
python3 "$BENCH_DIR/latency.py" --hammer "$P_SLOW" --seconds "$((DURATION + 2))" --threads 8 > "$WORK/hammer.out" &
HAMMER=$!
sleep 1
read -r RPS_SLOW P50_SLOW P99_SLOW <<<"$(load_run)"
wait "$HAMMER"
kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null || true
printf '\n%-34s %10s %10s %10s\n' "pinned host, keep-alive c16" "req/s" "p50" "p99"
printf '%-34s %10s %10s %10s\n' "alone" "$RPS_ALONE" "$P50_ALONE" "$P99_ALONE"
printf '%-34s %10s %10s %10s\n' "slow checker busy meanwhile" "$RPS_SLOW" "$P50_SLOW" "$P99_SLOW"
echo "slow host, 8 clients meanwhile, each answer a 502 after the 1 s checker: $(cat "$WORK/hammer.out")"
