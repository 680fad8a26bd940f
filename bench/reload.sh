#!/usr/bin/env bash
# make bench, reload phase (issue 17): a keep-alive load through pinproxy with a configuration of
# $RULES host rules (bench/many-rules.py) plus the one benchmarked gateway rule, measured once
# without reloads, once beside `pinproxy check` of the same file at nice 19 on the proxy's CPU
# (the control: the build's work without the reload), and once with a SIGHUP every
# $RELOAD_INTERVAL s (the file rewritten each time with one rule changed). Prints p50/p99/max
# latency and req/s of the three runs, and the duration of every reload as the daemon reports it
# ("configuration generation N active (read, built and swapped in S s)"); writes
# bench/out/reload.csv and bench/out/reload-durations.csv.
#
# Tunables (environment): RULES=100000, RELOAD_DURATION=10 (seconds per run), RELOAD_INTERVAL=2,
# RELOAD_CONNECTIONS=16, RELOAD_FORMAT=pretty|one-line, PROXY_CPUS=1, CLIENT_CPUS=0,
# RELOAD_PORT_BASE=28600, PINPROXY_BIN=.build/release/pinproxy.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RULES="${RULES:-100000}"
DURATION="${RELOAD_DURATION:-10}"
INTERVAL="${RELOAD_INTERVAL:-2}"
CONNECTIONS="${RELOAD_CONNECTIONS:-16}"
FORMAT="${RELOAD_FORMAT:-pretty}"
PROXY_CPUS="${PROXY_CPUS:-1}"
CLIENT_CPUS="${CLIENT_CPUS:-0}"
PORT_BASE="${RELOAD_PORT_BASE:-28600}"
UP_PORT=$((PORT_BASE + 0))
PROXY_PORT=$((PORT_BASE + 1))

OUT="$BENCH_DIR/out"
WORK="$OUT/reload-work"

trap cleanup_started EXIT INT TERM

install_missing wrk:wrk nginx-light:nginx python3:python3 openssl:openssl curl:curl
[ -x "$PINPROXY_BIN" ] || die "no pinproxy binary at $PINPROXY_BIN (run: swift build -c release)"
raise_nofile
rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"

# --- PKI (throwaway), content, upstream -----------------------------------------------
make_bench_pki "$WORK"
write_upstream_conf "$WORK" "$UP_PORT" 2

# --- configurations: the benchmarked gateway rule plus $RULES generated ones ----------------
cat > "$WORK/base.json" <<EOF
{
  "listeners": [ { "listen": "127.0.0.1:$PROXY_PORT", "mode": "gateway", "upstream": "$HOST_NAME:443" } ],
  "violation_log": "$WORK/logs/violations.jsonl",
  "trust_store": "$WORK/ca.pem",
  "default_policy": "deny",
  "hosts": { "$HOST_NAME": { "policy": "pin-public-keys", "pins": ["$LEAF_PIN", "$BACKUP_PIN"] } },
  "resolve": { "$HOST_NAME:443": "127.0.0.1:$UP_PORT" },
  "threads": 1
}
EOF
format_flag=""; [ "$FORMAT" = one-line ] && format_flag="--one-line"
log "writing two configurations of $RULES rules ($FORMAT) that differ in one rule"
python3 "$BENCH_DIR/many-rules.py" --rules "$RULES" --base "$WORK/base.json" $format_flag > "$WORK/config-a.json"
python3 "$BENCH_DIR/many-rules.py" --rules "$RULES" --base "$WORK/base.json" --change $((RULES / 2)) $format_flag \
    > "$WORK/config-b.json"
cp "$WORK/config-a.json" "$WORK/pinproxy.json"

# --- processes --------------------------------------------------------------------------
nginx -p "$WORK" -c "$WORK/upstream.conf" 2>>"$WORK/logs/upstream.err" &
STARTED_PIDS+=($!)
wait_port "$UP_PORT"

started=$(date +%s.%N)
taskset -c "$PROXY_CPUS" "$PINPROXY_BIN" run --config "$WORK/pinproxy.json" --log-level info 2>"$WORK/logs/pinproxy.err" &
PROXY_PID=$!
STARTED_PIDS+=($PROXY_PID)
wait_port "$PROXY_PORT" 120
ready=$(date +%s.%N)
log "pinproxy with $((RULES + 1)) rules listening after $(awk -v a="$started" -v b="$ready" 'BEGIN { printf "%.2f", b - a }') s, RSS $(rss_kib "$PROXY_PID") KiB"
body="$(curl -sS --max-time 10 "http://127.0.0.1:$PROXY_PORT/100b")" || die "request through pinproxy failed"
[ "${#body}" -eq 100 ] || die "expected 100 bytes through pinproxy, got ${#body}"

to_ms() { # wrk latency "123.45us" / "1.20ms" / "1.01s" → milliseconds
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}

# run_load LABEL — one bounded keep-alive wrk run; appends a CSV row, prints a line.
run_load() {
    local label="$1" out rps p50 p99 max errors non2xx
    out="$(taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 5s --latency \
        "http://127.0.0.1:$PROXY_PORT/100b" 2>&1)" || true
    rps="$(awk '/^Requests\/sec:/ {print $2}' <<< "$out")"
    p50="$(to_ms "$(awk '$1 == "50%" {print $2}' <<< "$out")")"
    p99="$(to_ms "$(awk '$1 == "99%" {print $2}' <<< "$out")")"
    max="$(to_ms "$(awk '$1 == "Latency" {print $4}' <<< "$out")")"
    errors="$(awk '/Socket errors:/ {gsub(",", ""); print $4 + $6 + $8 + $10}' <<< "$out")"
    non2xx="$(awk '/Non-2xx/ {print $NF}' <<< "$out")"
    errors=$(( ${errors:-0} + ${non2xx:-0} ))
    echo "$label,$CONNECTIONS,${rps:-0},$p50,$p99,$max,$errors" >> "$OUT/reload.csv"
    log "$(printf '%-16s %10s req/s  p50 %8s ms  p99 %8s ms  max %9s ms  errors %s' "$label" "${rps:-0}" "$p50" "$p99" "$max" "$errors")"
}

echo "run,connections,rps,p50_ms,p99_ms,max_ms,errors" > "$OUT/reload.csv"
taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNECTIONS" -d1s "http://127.0.0.1:$PROXY_PORT/100b" >/dev/null 2>&1 || true
run_load "no-reload"

# during_load LABEL STEP — run_load LABEL in the background and, from 1 s into it until
# $DURATION s have passed, call STEP again and again; STEPS counts the calls, DEADLINE is the end.
during_load() {
    local label="$1" step="$2" load_pid
    run_load "$label" &
    load_pid=$!
    STEPS=0
    DEADLINE=$(( $(date +%s) + DURATION ))
    sleep 1
    while [ "$(date +%s)" -lt "$DEADLINE" ]; do
        "$step"
        STEPS=$((STEPS + 1))
    done
    wait "$load_pid"
}

# The control: the same load while `pinproxy check` of the same file runs back to back at nice 19
# on the proxy's CPU (the build's work in another process: no SIGHUP, no swap, no retired
# generation). The reloading run's p99 over this one's is what the reload path itself adds.
check_beside() {
    timeout $((DEADLINE - $(date +%s) + 1)) taskset -c "$PROXY_CPUS" nice -n 19 \
        "$PINPROXY_BIN" check --config "$WORK/config-a.json" >/dev/null 2>&1 || true
}
during_load "beside-check" check_beside
log "beside-check: $STEPS runs of \`pinproxy check\` of the $((RULES + 1))-rule file ran at nice 19 on CPU $PROXY_CPUS during the load"

# The same load with a SIGHUP every $INTERVAL s; each reload swaps in the other file (one rule differs).
reload_once() {
    local next="$WORK/config-$([ $((STEPS % 2)) -eq 0 ] && echo b || echo a).json"
    cp "$next" "$WORK/pinproxy.json.new" && mv "$WORK/pinproxy.json.new" "$WORK/pinproxy.json"
    kill -HUP "$PROXY_PID"
    sleep "$INTERVAL"
}
reloads_before="$(grep -c "active (read, built and swapped in" "$WORK/logs/pinproxy.err" || true)"
during_load "reloads" reload_once
sent=$STEPS
# Every SIGHUP has been taken up (one that arrives during a build is merged into one more after
# it): wait, bounded, until all have completed or the count has not moved for 3 s.
last=-1; stable=0
for ((i = 0; i < 600 && stable < 30; i++)); do
    now="$(grep -c "active (read, built and swapped in" "$WORK/logs/pinproxy.err" || true)"
    [ $((now - reloads_before)) -ge "$sent" ] && break
    if [ "$now" = "$last" ]; then stable=$((stable + 1)); else stable=0; last="$now"; fi
    sleep 0.1
done
grep -q "rejected" "$WORK/logs/pinproxy.err" && die "a reload was rejected: $(grep rejected "$WORK/logs/pinproxy.err" | head -3)"

echo "reload,seconds" > "$OUT/reload-durations.csv"
grep -o "active (read, built and swapped in [0-9.]* s)" "$WORK/logs/pinproxy.err" | awk '{print NR "," $(NF - 1)}' \
    >> "$OUT/reload-durations.csv"
count=$(( $(wc -l < "$OUT/reload-durations.csv") - 1 ))
summary="$(tail -n +2 "$OUT/reload-durations.csv" | cut -d, -f2 | sort -n | awk '
    { v[NR] = $1 } END { if (NR) printf "min %.3f s, median %.3f s, max %.3f s", v[1], v[int((NR + 1) / 2)], v[NR] }')"
log "$sent SIGHUPs sent during the load, $count reloads completed ($summary) with $((RULES + 1)) rules"
log "RSS after the reloads: $(rss_kib "$PROXY_PID") KiB"
column -s, -t "$OUT/reload.csv"
# p99_over RUN — the reloading run's p99 over RUN's, from reload.csv.
p99_over() {
    awk -F, -v run="$1" '$1 == "reloads" { a = $5 } $1 == run { b = $5 } END { printf "%.2f", a / b }' "$OUT/reload.csv"
}
log "p99 with reloads: $(p99_over no-reload) x the undisturbed run's, $(p99_over beside-check) x the run beside pinproxy check"
