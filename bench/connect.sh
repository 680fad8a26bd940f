#!/usr/bin/env bash
# make bench-connect (and the last phase of make bench): HTTPS clients through CONNECT.
#
# pinproxy's blind tunnel against squid's plain CONNECT, and pinproxy's interception against
# squid ssl_bump and mitmdump, interleaved, with bench/connect-load (Go, one Transport per
# connection) as the client. Table of medians + bench/out/connect.csv, bench/out/connect-raw.csv.
#
# Tunables (environment): ROUNDS=3 DURATION=5 WARMUP=1 (seconds), PROXY_CPUS=1, CLIENT_CPUS=0
# (client and origin), CONNECT_PORT_BASE=28500, CONNECTIONS=16,
# CONNECT_TARGETS="direct pinproxy-tunnel squid-connect pinproxy-intercept squid-bump mitmdump",
# MITMPROXY=debian|pip (pip: mitmproxy $MITMPROXY_VERSION in a venv under bench/out),
# QUIET_WAIT=0 (up to this many seconds before each run for the machine to be idle),
# PINPROXY_BIN=.build/release/pinproxy.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-5}"
WARMUP="${WARMUP:-1}"
PROXY_CPUS="${PROXY_CPUS:-1}"
CLIENT_CPUS="${CLIENT_CPUS:-0}"
CONNECTIONS="${CONNECTIONS:-16}"
PORT_BASE="${CONNECT_PORT_BASE:-28500}"
TARGETS="${CONNECT_TARGETS:-direct pinproxy-tunnel squid-connect pinproxy-intercept squid-bump mitmdump}"
MITMPROXY="${MITMPROXY:-debian}"
MITMPROXY_VERSION="${MITMPROXY_VERSION:-11.0.2}"
QUIET_WAIT="${QUIET_WAIT:-0}"

UP_PORT=$((PORT_BASE + 0))
declare -A PORT=([direct]=$UP_PORT [pinproxy-tunnel]=$((PORT_BASE + 1)) [squid-connect]=$((PORT_BASE + 2))
                 [pinproxy-intercept]=$((PORT_BASE + 3)) [squid-bump]=$((PORT_BASE + 4))
                 [mitmdump]=$((PORT_BASE + 5)))
declare -A PID=()
# The certificate(s) the client trusts per target: the origin's root for a blind tunnel,
# the proxy's own CA (and nothing else) for an intercepting proxy, so a target that silently
# tunnelled instead of intercepting (or the reverse) fails its first request.
declare -A CLIENT_CA=()
# Targets that could not be set up, with the reason (the table says it).
declare -A UNAVAILABLE=()

OUT="$BENCH_DIR/out"
WORK="$OUT/connect-work"
RAW="$OUT/connect-raw.csv"
LOAD_BIN="$OUT/connect-load"
HZ="$(getconf CLK_TCK)"

trap cleanup_started EXIT INT TERM

install_missing golang-go:go nginx-light:nginx curl:curl python3:python3 openssl:openssl
# Plain `squid` is built with GnuTLS and has no ssl_bump; squid-openssl replaces it.
install_missing squid-openssl:/usr/lib/squid/security_file_certgen
[ -x "$PINPROXY_BIN" ] || die "no pinproxy binary at $PINPROXY_BIN (run: swift build -c release)"
raise_nofile
[ "$(nproc)" -ge 2 ] || log "warning: fewer than 2 CPUs; client and proxies will share one"

rm -rf "$WORK" && mkdir -p "$WORK/www" "$WORK/logs"
# squid runs as user proxy: it must reach its directories under this tree.
chmod 755 "$OUT" "$WORK"

# --- the load client (built once, rebuilt when its source changes) ---------------------
if [ ! -x "$LOAD_BIN" ] || [ -n "$(find "$BENCH_DIR/connect-load" -newer "$LOAD_BIN" -type f)" ]; then
    log "building bench/connect-load"
    (cd "$BENCH_DIR/connect-load" && GOPROXY=off GOTOOLCHAIN=local go build -o "$LOAD_BIN" .) || die "go build failed"
fi

# --- PKI (throwaway) and content ------------------------------------------------------
make_ca "$WORK" ca
make_leaf "$WORK" ca leaf "$HOST_NAME"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/backup.key" 2>/dev/null
LEAF_PIN="$(spki_pin "$WORK/leaf.pem")"
BACKUP_PIN="$(spki_pin "$WORK/backup.key")"
# squid's signing CA (ECDSA P-256 like everything else; squid reuses its key for the leaves).
make_ca "$WORK" squid-ca
cat "$WORK/squid-ca.pem" "$WORK/squid-ca.key" > "$WORK/squid-ca-bundle.pem"
head -c 100 /dev/zero | tr '\0' 'a' > "$WORK/www/100b"
head -c 1048576 /dev/urandom > "$WORK/www/1m"
echo "127.0.0.1 $HOST_NAME" > "$WORK/hosts"
chmod -R a+rX "$WORK"
USER_LINE=""; [ "$(id -u)" -eq 0 ] && USER_LINE="user root;"
ORIGIN="$HOST_NAME:$UP_PORT"  # every target's URL names the origin's real port

CLIENT_CA[direct]="$WORK/ca.pem"
CLIENT_CA[pinproxy-tunnel]="$WORK/ca.pem"
CLIENT_CA[squid-connect]="$WORK/ca.pem"
CLIENT_CA[pinproxy-intercept]="$WORK/pinproxy-ca-root.pem"
CLIENT_CA[squid-bump]="$WORK/squid-ca.pem"
CLIENT_CA[mitmdump]="$WORK/mitmproxy/mitmproxy-ca-cert.pem"

# --- configurations -------------------------------------------------------------------
# The origin: nginx, one worker on the client's CPU, TLS 1.3 only, ECDSA P-256, no access log.
cat > "$WORK/upstream.conf" <<EOF
$USER_LINE
worker_processes 1;
worker_rlimit_nofile $(ulimit -Hn);
daemon off;
pid $WORK/upstream.pid;
error_log $WORK/logs/upstream.err warn;
events { worker_connections 19000; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    server {
        listen 127.0.0.1:$UP_PORT ssl reuseport;
        ssl_protocols TLSv1.3;
        ssl_certificate $WORK/leaf-chain.pem;
        ssl_certificate_key $WORK/leaf.key;
        ssl_session_cache shared:connect:10m;
        root $WORK/www;
        location / { }
    }
}
EOF

# pinproxy, blind tunnel: the origin's name is in no hosts rule, default_policy "default".
cat > "$WORK/pinproxy-tunnel.json" <<EOF
{
  "listeners": [ { "listen": "127.0.0.1:${PORT[pinproxy-tunnel]}", "mode": "forward" } ],
  "violation_log": "$WORK/logs/violations-tunnel.jsonl",
  "trust_store": "$WORK/ca.pem",
  "default_policy": "default",
  "hosts": { "unrelated.example.test": { "policy": "pin-public-keys", "pins": ["$BACKUP_PIN", "$LEAF_PIN"] } },
  "resolve": { "$ORIGIN": "127.0.0.1:$UP_PORT" },
  "connect_ports": [ $UP_PORT ],
  "limits": { "max_connections": 15000 },
  "threads": 1
}
EOF

# pinproxy, interception (SPEC §3.1): the origin's name pinned (leaf SPKI + backup pin), the
# local CA in interception.ca_dir (made by `pinproxy ca init`), unlisted hosts refused.
cat > "$WORK/pinproxy-intercept.json" <<EOF
{
  "listeners": [ { "listen": "127.0.0.1:${PORT[pinproxy-intercept]}", "mode": "forward" } ],
  "violation_log": "$WORK/logs/violations-intercept.jsonl",
  "trust_store": "$WORK/ca.pem",
  "default_policy": "deny",
  "hosts": { "$HOST_NAME": { "policy": "pin-public-keys", "pins": ["$LEAF_PIN", "$BACKUP_PIN"] } },
  "resolve": { "$ORIGIN": "127.0.0.1:$UP_PORT" },
  "connect_ports": [ $UP_PORT ],
  "interception": { "ca_dir": "$WORK/pinproxy-ca" },
  "limits": { "max_connections": 15000 },
  "threads": 1
}
EOF

# squid (squid-openssl 5.7), one process (-N, no SMP workers), names from hosts_file, nothing
# cached or logged. squid-connect: plain CONNECT. squid-bump: ssl_bump bump all (client-first,
# generated certificates cached in memory), certificates from security_file_certgen helpers,
# upstream verified against the origin's root only.
squid_conf() { # squid_conf NAME PORT_LINE EXTRA
    local name="$1" port_line="$2" extra="$3"
    mkdir -p "$WORK/$name"
    cat > "$WORK/$name.conf" <<EOF
$port_line
acl bench_clients src 127.0.0.0/8
http_access allow bench_clients
http_access deny all
cache deny all
cache_mem 8 MB
access_log none
cache_store_log none
cache_log $WORK/logs/$name.log
pid_filename $WORK/$name/squid.pid
coredump_dir $WORK/$name
pinger_enable off
hosts_file $WORK/hosts
# Names come from hosts_file; any other lookup stays on loopback.
dns_nameservers 127.0.0.1
max_filedescriptors 65536
shutdown_lifetime 0 seconds
forwarded_for delete
via off
logfile_rotate 0
$( [ "$(id -u)" -eq 0 ] && echo "cache_effective_user proxy" )
$extra
EOF
}
squid_conf squid-connect "http_port 127.0.0.1:${PORT[squid-connect]}" ""
squid_conf squid-bump \
    "http_port 127.0.0.1:${PORT[squid-bump]} ssl-bump generate-host-certificates=on dynamic_cert_mem_cache_size=16MB tls-cert=$WORK/squid-ca-bundle.pem" \
    "sslcrtd_program /usr/lib/squid/security_file_certgen -s $WORK/squid-bump/ssldb -M 4MB
tls_outgoing_options cafile=$WORK/ca.pem default-ca=off
ssl_bump bump all"

# mitmdump resolves through the system resolver only: this addon sends the test name to
# loopback while SNI and the certificate check stay on the name.
cat > "$WORK/mitm_resolve.py" <<EOF
HOST = "$HOST_NAME"


class LoopbackResolve:
    def server_connect(self, data):
        address = data.server.address
        if address and address[0] == HOST:
            data.server.address = ("127.0.0.1", address[1])
            data.server.sni = HOST


addons = [LoopbackResolve()]
EOF

# --- processes ------------------------------------------------------------------------
# port_up PORT SECONDS — like wait_port, but returns non-zero instead of exiting.
port_up() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

start_upstream() {
    taskset -c "$CLIENT_CPUS" nginx -p "$WORK" -c "$WORK/upstream.conf" 2>>"$WORK/logs/upstream.err" &
    STARTED_PIDS+=($!); PID[direct]=$!
    wait_port "$UP_PORT"
}

# mitmdump_command — Debian's mitmdump, or (MITMPROXY=pip, or Debian's cannot be installed)
# mitmproxy $MITMPROXY_VERSION from PyPI in a venv under bench/out. Prints the path or fails.
mitmdump_command() {
    if [ "$MITMPROXY" = debian ]; then
        install_missing mitmproxy:/usr/bin/mitmdump >&2 || true
        if /usr/bin/mitmdump --version >/dev/null 2>&1; then echo /usr/bin/mitmdump; return 0; fi
        log "Debian's mitmdump does not run; trying pip"
    fi
    local venv="$OUT/mitmproxy-venv"
    if ! "$venv/bin/mitmdump" --version 2>/dev/null | grep -q "Mitmproxy: $MITMPROXY_VERSION"; then
        rm -rf "$venv"
        python3 -m venv "$venv" >&2 || return 1
        "$venv/bin/pip" install -q "mitmproxy==$MITMPROXY_VERSION" >&2 || return 1
    fi
    echo "$venv/bin/mitmdump"
}

# sanity TARGET — one request through the target with curl (trusting only CLIENT_CA[TARGET])
# must return the 100-byte body. Prints curl's complaint and fails otherwise.
sanity() {
    local name="$1" body args=(-sS --max-time 10 --noproxy '' --cacert "${CLIENT_CA[$1]}")
    if [ "$name" = direct ]; then args+=(--resolve "$ORIGIN:127.0.0.1"); else args+=(--proxy "http://127.0.0.1:${PORT[$name]}"); fi
    body="$(env -u https_proxy -u HTTPS_PROXY -u all_proxy curl "${args[@]}" "https://$ORIGIN/100b" 2>&1)" || { echo "$body"; return 1; }
    [ "${#body}" -eq 100 ] || { echo "expected 100 bytes, got: ${body:0:200}"; return 1; }
}

# start_proxy NAME — every proxy on $PROXY_CPUS; a target that cannot start is recorded in
# UNAVAILABLE with the reason instead of stopping the phase.
start_proxy() {
    local name="$1" err="$WORK/logs/$1.err" why
    case "$name" in
        pinproxy-tunnel)
            taskset -c "$PROXY_CPUS" "$PINPROXY_BIN" run --config "$WORK/$name.json" --log-level warning 2>>"$err" & ;;
        pinproxy-intercept)
            # SPEC §3.1: `ca init` creates the CA in interception.ca_dir, `ca export` prints the
            # root the clients must trust.
            if ! "$PINPROXY_BIN" ca init --config "$WORK/$name.json" >>"$err" 2>&1; then
                UNAVAILABLE[$name]="'pinproxy ca init' failed: $(tail -n 1 "$err")"; return 0
            fi
            if ! "$PINPROXY_BIN" ca export --config "$WORK/$name.json" > "${CLIENT_CA[$name]}" 2>>"$err" \
                || ! grep -q "BEGIN CERTIFICATE" "${CLIENT_CA[$name]}"; then
                UNAVAILABLE[$name]="'pinproxy ca export' printed no certificate: $(tail -n 1 "$err")"; return 0
            fi
            taskset -c "$PROXY_CPUS" "$PINPROXY_BIN" run --config "$WORK/$name.json" --log-level warning 2>>"$err" & ;;
        squid-*)
            local owner=""; [ "$(id -u)" -eq 0 ] && owner=proxy
            if [ "$name" = squid-bump ]; then
                rm -rf "$WORK/$name/ssldb"
                /usr/lib/squid/security_file_certgen -c -s "$WORK/$name/ssldb" -M 4MB >>"$err" 2>&1 \
                    || { UNAVAILABLE[$name]="security_file_certgen -c failed: $(tail -n 1 "$err")"; return 0; }
            fi
            if [ -n "$owner" ]; then chown -R "$owner:$owner" "$WORK/$name" && chown "$owner" "$WORK/squid-ca-bundle.pem"; fi
            chmod 600 "$WORK/squid-ca-bundle.pem"
            # -n: an instance name of its own (pid file, shared memory), -N: foreground, one process.
            taskset -c "$PROXY_CPUS" squid -N -n "pp${name#squid-}" -f "$WORK/$name.conf" 2>>"$err" & ;;
        mitmdump)
            local bin
            if ! bin="$(mitmdump_command)"; then UNAVAILABLE[$name]="mitmproxy could not be installed (Debian package nor pip)"; return 0; fi
            mkdir -p "$WORK/mitmproxy"
            "$bin" --version > "$WORK/logs/mitmdump.version" 2>&1 || true
            taskset -c "$PROXY_CPUS" "$bin" --mode regular --listen-host 127.0.0.1 -p "${PORT[$name]}" \
                --set confdir="$WORK/mitmproxy" --set ssl_verify_upstream_trusted_ca="$WORK/ca.pem" \
                -s "$WORK/mitm_resolve.py" -q >>"$err" 2>&1 & ;;
        *) die "unknown target $name" ;;
    esac
    STARTED_PIDS+=($!); PID[$name]=$!
    if ! port_up "${PORT[$name]}" 30; then
        UNAVAILABLE[$name]="nothing listening on ${PORT[$name]} after 30s: $(tail -n 1 "$err" 2>/dev/null)"; return 0
    fi
    if ! why="$(sanity "$name")"; then
        UNAVAILABLE[$name]="first request failed: $(tr '\n' ' ' <<< "$why")"
    fi
}

# --- measurement ----------------------------------------------------------------------
# WORKLOADS: name|path|keep-alive (1) or a new tunnel + TLS handshake per request (0)
WORKLOADS=(
    "ka-100B-c$CONNECTIONS|/100b|1"
    "new-100B-c$CONNECTIONS|/100b|0"
    "ka-1MiB-c$CONNECTIONS|/1m|1"
)

# wait_quiet — on a shared machine, wait (at most $QUIET_WAIT s) until everything else uses
# less than a quarter of a core for a second; between runs our own processes are idle.
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
wait_quiet() {
    [ "$QUIET_WAIT" -gt 0 ] || return 0
    local deadline=$((SECONDS + QUIET_WAIT)) before after
    while :; do
        before="$(busy_ticks)"; sleep 1; after="$(busy_ticks)"
        [ $((after - before)) -lt $((HZ / 4)) ] && return 0
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "machine still busy after ${QUIET_WAIT}s ($(awk -v d=$((after - before)) -v hz="$HZ" 'BEGIN { printf "%.2f", d / hz }') cores): measuring anyway"
            return 0
        fi
    done
}

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< " $2"; }

# measure ROUND WORKLOAD TARGET — one connect-load run (its own warm-up, then the window); one CSV row.
measure() {
    local round="$1" spec="$2" target="$3" name path keepalive
    IFS='|' read -r name path keepalive <<< "$spec"
    local args=(-url "https://$ORIGIN$path" -ca "${CLIENT_CA[$target]}" -map "$HOST_NAME=127.0.0.1"
                -c "$CONNECTIONS" -d "${DURATION}s" -warmup "${WARMUP}s" -hz "$HZ" -label "$target/$name"
                -origin-pid "${PID[direct]}")
    [ "$keepalive" = 1 ] || args+=(-new)
    if [ "$target" != direct ]; then args+=(-proxy "http://127.0.0.1:${PORT[$target]}" -cpu-pid "${PID[$target]}"); fi
    local out fds=""
    wait_quiet
    # Descriptors the proxy holds between runs: they must not grow from round to round.
    [ "$target" = direct ] || fds="$(ls "/proc/${PID[$target]}/fd" 2>/dev/null | wc -l)"
    out="$(taskset -c "$CLIENT_CPUS" "$LOAD_BIN" "${args[@]}" 2>>"$WORK/logs/connect-load.err")" || true
    local requests rps mib p50 p99 errors dials cpu client_cpu other steal first rss=""
    requests="$(field requests "$out")"; rps="$(field rps "$out")"; mib="$(field mib_s "$out")"
    p50="$(field p50_ms "$out")"; p99="$(field p99_ms "$out")"; errors="$(field errors "$out")"
    dials="$(field dials "$out")"; cpu="$(field proxy_cpu_us_per_req "$out")"
    client_cpu="$(field client_cpu_us_per_req "$out")"
    other="$(field other_cpu_cores "$out")"; steal="$(field steal_cores "$out")"
    first="$(sed -n 's/.*first_error="\(.*\)"$/\1/p' <<< "$out" | tr ',' ';')"
    if [ "$target" != direct ]; then
        if kill -0 "${PID[$target]}" 2>/dev/null; then rss="$(rss_kib "${PID[$target]}")"; else
            log "warning: $target (pid ${PID[$target]}) is gone after $name"; first="proxy exited; $first"; fi
    fi
    if [ -z "$requests" ]; then log "$target $name: connect-load printed nothing (see logs/connect-load.err)"; requests=0; rps=0; fi
    echo "$round,$name,$target,$CONNECTIONS,$keepalive,$requests,$rps,$mib,$p50,$p99,${errors:-0},$dials,$cpu,$client_cpu,$rss,$fds,$other,$steal,$first" >> "$RAW"
    log "round $round  $(printf '%-13s %-18s' "$name" "$target") $(printf '%8s req/s %8s MiB/s  p50 %7s ms  p99 %7s ms  cpu %8s us/req  tunnels %5s  other %4s  errors %s' \
        "$rps" "${mib:--}" "${p50:--}" "${p99:--}" "${cpu:--}" "${dials:--}" "${other:--}" "${errors:-?}")${first:+  ($first)}"
}

start_upstream
for name in $TARGETS; do
    [ "$name" = direct ] && continue
    start_proxy "$name"
    if [ -n "${UNAVAILABLE[$name]:-}" ]; then log "$name: not measured: ${UNAVAILABLE[$name]}"; fi
done
why="$(sanity direct)" || die "the origin does not answer: $why"

measured=()
for name in $TARGETS; do [ -n "${UNAVAILABLE[$name]:-}" ] || measured+=("$name"); done
: > "$OUT/connect-unavailable.txt"
for name in "${!UNAVAILABLE[@]}"; do printf '%s\t%s\n' "$name" "${UNAVAILABLE[$name]}" >> "$OUT/connect-unavailable.txt"; done

echo "round,workload,target,connections,keepalive,requests,rps,mib_s,p50_ms,p99_ms,errors,tunnels,cpu_us_per_req,client_cpu_us_per_req,rss_kib,proxy_fds_before,other_cpu_cores,steal_cores,first_error" > "$RAW"
log "CONNECT: proxies on CPU $PROXY_CPUS (pinproxy threads 1, squid 1 process, mitmdump as is); client and origin on CPU $CLIENT_CPUS"
log "$ROUNDS rounds x ${#WORKLOADS[@]} workloads x ${#measured[@]} targets (${measured[*]}), ${DURATION}s each after ${WARMUP}s warm-up"
for ((round = 1; round <= ROUNDS; round++)); do
    for spec in "${WORKLOADS[@]}"; do
        if ((round % 2)); then order=("${measured[@]}"); else order=(); for ((i = ${#measured[@]} - 1; i >= 0; i--)); do order+=("${measured[i]}"); done; fi
        for target in "${order[@]}"; do measure "$round" "$spec" "$target"; done
    done
done

[ -s "$WORK/logs/mitmdump.version" ] && log "mitmdump: $(grep -m1 Mitmproxy "$WORK/logs/mitmdump.version" || true)"
for name in "${measured[@]}"; do
    case "$name" in pinproxy-*)
        lines="$(grep -vc "listening on" "$WORK/logs/$name.err" 2>/dev/null || true)"
        [ "${lines:-0}" -eq 0 ] || log "$name logged $lines warning/error lines: $WORK/logs/$name.err" ;;
    esac
done
python3 "$BENCH_DIR/report.py" connect "$RAW" "$OUT/connect.csv" "$OUT/connect-unavailable.txt" "$TARGETS"
