# Shared helpers for bench/run.sh and bench/soak.sh (sourced, not executed).
# Everything here stays on loopback and cleans up the processes it started.

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$BENCH_DIR/.." && pwd)"
PINPROXY_BIN="${PINPROXY_BIN:-$REPO_DIR/.build/release/pinproxy}"
HOST_NAME="bench.example.test"

# PIDs of every daemon we start; killed (by PID, never by name) on exit.
STARTED_PIDS=()

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

cleanup_started() {
    local pid
    for pid in "${STARTED_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${STARTED_PIDS[@]}"; do
        # Bounded wait, then SIGKILL whatever is left.
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
    done
    STARTED_PIDS=()
}

# install_missing PACKAGE:COMMAND... — apt-get only what is not on PATH yet.
install_missing() {
    local missing=() spec pkg cmd
    for spec in "$@"; do
        pkg="${spec%%:*}"; cmd="${spec##*:}"
        command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing ${missing[*]}"
    local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Raise the descriptor limit as far as the hard limit allows (memory mode holds 10,000 sockets).
raise_nofile() {
    ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
}

# spki_pin CERT_OR_KEY_PEM — "sha256/<base64 SHA-256 of the DER SubjectPublicKeyInfo>".
spki_pin() {
    local file="$1"
    if grep -q "BEGIN CERTIFICATE" "$file"; then
        openssl x509 -in "$file" -pubkey -noout
    else
        openssl pkey -in "$file" -pubout
    fi | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64 | sed 's|^|sha256/|'
}

# make_ca DIR NAME — ECDSA P-256 CA: basicConstraints CA:TRUE critical, keyUsage keyCertSign, SKI/AKI.
make_ca() {
    local dir="$1" name="$2"
    cat > "$dir/$name.cnf" <<EOF
[req]
distinguished_name = dn
x509_extensions = v3_ca
prompt = no
[dn]
CN = pinproxy bench $name
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/$name.key" 2>/dev/null
    openssl req -x509 -new -key "$dir/$name.key" -config "$dir/$name.cnf" -days 30 -sha256 \
        -out "$dir/$name.pem" 2>/dev/null
}

# make_leaf DIR CA LEAF DNSNAME — ECDSA P-256 leaf signed by CA, SAN DNS, EKU serverAuth,
# SKI/AKI (pinproxy verifies with X509_V_FLAG_X509_STRICT). Writes LEAF.pem, LEAF.key, LEAF-chain.pem.
make_leaf() {
    local dir="$1" ca="$2" leaf="$3" dns="$4"
    cat > "$dir/$leaf.ext" <<EOF
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:$dns
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
EOF
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/$leaf.key" 2>/dev/null
    openssl req -new -key "$dir/$leaf.key" -subj "/CN=$dns" -out "$dir/$leaf.csr" 2>/dev/null
    openssl x509 -req -in "$dir/$leaf.csr" -CA "$dir/$ca.pem" -CAkey "$dir/$ca.key" -CAcreateserial \
        -days 30 -sha256 -extfile "$dir/$leaf.ext" -out "$dir/$leaf.pem" 2>/dev/null
    cat "$dir/$leaf.pem" "$dir/$ca.pem" > "$dir/$leaf-chain.pem"
    openssl verify -x509_strict -CAfile "$dir/$ca.pem" "$dir/$leaf.pem" >/dev/null \
        || die "generated leaf $leaf does not verify strictly against $ca"
}

# make_bench_pki DIR — the throwaway PKI every bench shares: CA `ca`, leaf `leaf` for $HOST_NAME,
# a spare key `backup.key` (the backup pin), DIR/www/100b; sets LEAF_PIN and BACKUP_PIN.
make_bench_pki() {
    local dir="$1"
    make_ca "$dir" ca
    make_leaf "$dir" ca leaf "$HOST_NAME"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/backup.key" 2>/dev/null
    LEAF_PIN="$(spki_pin "$dir/leaf.pem")"
    BACKUP_PIN="$(spki_pin "$dir/backup.key")"
    head -c 100 /dev/zero | tr '\0' 'a' > "$dir/www/100b"
}

# write_upstream_conf DIR PORT WORKERS [LISTEN_OPTIONS] — nginx.conf (DIR/upstream.conf) for the one
# HTTPS upstream of the cost scripts: TLS 1.3 only, DIR/leaf-chain.pem, DIR/www as the root, no access
# log, unlimited keep-alive requests; LISTEN_OPTIONS (e.g. "reuseport", as bench/run.sh's listens)
# after `ssl` on the listen line. (bench/run.sh tunes its own for 10,000 connections.)
write_upstream_conf() {
    local dir="$1" port="$2" workers="$3" listen_options="${4:+ $4}" user_line=""
    [ "$(id -u)" -eq 0 ] && user_line="user root;"
    cat > "$dir/upstream.conf" <<CONF
$user_line
worker_processes $workers;
daemon off;
pid $dir/upstream.pid;
error_log $dir/logs/upstream.err warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    server {
        listen 127.0.0.1:$port ssl$listen_options;
        ssl_protocols TLSv1.3;
        ssl_certificate $dir/leaf-chain.pem;
        ssl_certificate_key $dir/leaf.key;
        root $dir/www;
        location / { }
    }
}
CONF
}

# write_pinproxy_gateway_conf DIR PORT UP_PORT — DIR/pinproxy.json for the cost scripts: one loop,
# a gateway on 127.0.0.1:PORT to the upstream at 127.0.0.1:UP_PORT, pinned to its public keys
# (make_bench_pki's LEAF_PIN and BACKUP_PIN), as bench/run.sh configures pinproxy.
write_pinproxy_gateway_conf() {
    local dir="$1" port="$2" up_port="$3"
    cat > "$dir/pinproxy.json" <<CONF
{
  "listeners": [ { "listen": "127.0.0.1:$port", "mode": "gateway", "upstream": "$HOST_NAME:443" } ],
  "violation_log": "$dir/logs/violations.jsonl",
  "trust_store": "$dir/ca.pem",
  "default_policy": "deny",
  "hosts": { "$HOST_NAME": { "policy": "pin-public-keys", "pins": ["$LEAF_PIN", "$BACKUP_PIN"] } },
  "resolve": { "$HOST_NAME:443": "127.0.0.1:$up_port" },
  "threads": 1
}
CONF
}

# write_haproxy_conf DIR PORT UP_PORT THREADS — DIR/haproxy.cfg: HAProxy at its best in front
# of the upstream at 127.0.0.1:UP_PORT (server-side reuse always, verified TLS with SNI + host
# check, ALPN http/1.1), listening on 127.0.0.1:PORT with THREADS threads. Accept is deferred
# until a client's first bytes (defer-accept), as pinproxy defers it on every listener.
write_haproxy_conf() {
    local dir="$1" port="$2" up_port="$3" threads="$4"
    cat > "$dir/haproxy.cfg" <<CONF
global
    nbthread $threads
    maxconn 10100
    # 10,000 held clients (memory mode) need only ~10,100 descriptors with server-side reuse;
    # don't refuse to start because 2 x maxconn exceeds a 20,000 hard limit.
    no strict-limits
    log stderr format raw local0 emerg
defaults
    mode http
    option http-keep-alive
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 60s
frontend fe
    bind 127.0.0.1:$port defer-accept
    default_backend be
backend be
    http-reuse always
    server s1 127.0.0.1:$up_port ssl verify required ca-file $dir/ca.pem sni str($HOST_NAME) verifyhost $HOST_NAME alpn http/1.1
CONF
}

# start_gateway_setting DIR UP_PORT PROXY_PORT WORKERS [CPUS] — the setting of the cost scripts
# (request-cost.sh, syscalls-under-load.sh, critical-path.sh, request-path.sh): the PKI, one nginx
# TLS upstream with WORKERS workers on UP_PORT (on CPUS when given), started (in STARTED_PIDS;
# its master's PID in UPSTREAM_PID) and answering, and the pinned gateway's and HAProxy's
# configurations for PROXY_PORT in front of it.
start_gateway_setting() {
    local dir="$1" up_port="$2" proxy_port="$3" workers="$4" cpus="${5:-}" pin=()
    make_bench_pki "$dir"
    write_upstream_conf "$dir" "$up_port" "$workers"
    write_pinproxy_gateway_conf "$dir" "$proxy_port" "$up_port"
    write_haproxy_conf "$dir" "$proxy_port" "$up_port" 1
    [ -n "$cpus" ] && pin=(taskset -c "$cpus")
    "${pin[@]}" nginx -c "$dir/upstream.conf" -p "$dir" 2>>"$dir/logs/upstream.err" &
    UPSTREAM_PID=$!
    STARTED_PIDS+=("$UPSTREAM_PID")
    wait_port "$up_port"
}

# require_target TARGET — exits 2 unless TARGET is pinproxy or haproxy (the proxies the cost
# scripts measure in start_gateway_setting's setting), then makes sure it can run: HAProxy
# installed, or pinproxy's release build present.
require_target() {
    case "$1" in
        pinproxy) [ -x "$PINPROXY_BIN" ] || die "no pinproxy binary at $PINPROXY_BIN (run: swift build -c release)" ;;
        haproxy) install_missing haproxy:haproxy ;;
        *) echo "TARGET is pinproxy or haproxy, not $1" >&2; exit 2 ;;
    esac
}

# target_command TARGET DIR — PROXY_COMMAND: TARGET serving start_gateway_setting's DIR in the
# foreground (pinproxy drains on SIGINT; HAProxy with -db stops on SIGTERM).
target_command() {
    case "$1" in
        pinproxy) PROXY_COMMAND=("$PINPROXY_BIN" run --config "$2/pinproxy.json" --log-level warning) ;;
        haproxy) PROXY_COMMAND=(haproxy -db -f "$2/haproxy.cfg") ;;
    esac
}

# start_target TARGET DIR PORT CPUS — TARGET (target_command) on CPUS, its stderr in
# DIR/logs/proxy.err, in STARTED_PIDS; PROXY_PID once PORT answers.
start_target() {
    target_command "$1" "$2"
    taskset -c "$4" "${PROXY_COMMAND[@]}" 2>>"$2/logs/proxy.err" &
    PROXY_PID=$!
    STARTED_PIDS+=("$PROXY_PID")
    wait_port "$3"
}

# wait_port PORT [SECONDS] — until something accepts on 127.0.0.1:PORT.
wait_port() {
    local port="$1" limit="${2:-15}" i
    for ((i = 0; i < limit * 10; i++)); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    die "nothing listening on 127.0.0.1:$port after ${limit}s"
}

# proc_tree PID — PID and its direct children (nginx workers), one per line.
proc_tree() {
    echo "$1"
    pgrep -P "$1" 2>/dev/null || true
}

# cpu_ticks PID — utime+stime of PID and its children, in clock ticks (/proc/PID/stat fields 14, 15).
cpu_ticks() {
    local total=0 p stat
    for p in $(proc_tree "$1"); do
        stat="$(cat "/proc/$p/stat" 2>/dev/null)" || continue
        # Field 2 (comm) may contain spaces: drop everything up to ") ".
        set -- ${stat##*) }
        total=$((total + ${12} + ${13}))
    done
    echo "$total"
}

# rss_kib PID — VmRSS of PID and its children, KiB.
rss_kib() {
    local total=0 p v
    for p in $(proc_tree "$1"); do
        v="$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null)" || continue
        total=$((total + ${v:-0}))
    done
    echo "$total"
}

# context_switches PID — PID's threads' voluntary and involuntary context switches so far,
# summed, as "VOLUNTARY INVOLUNTARY": a thread that waits for work sleeps (voluntary); one the
# scheduler stops for another task on its CPU, an upstream worker say, is preempted.
context_switches() {
    awk '/^voluntary_ctxt_switches:/ {v += $2} /^nonvoluntary_ctxt_switches:/ {n += $2} END {print v + 0, n + 0}' \
        /proc/"$1"/task/*/status 2>/dev/null || true
}

# preemptions PID — involuntary context switches so far of PID's threads and its children's
# (nginx's and stunnel's workers), summed: how often the scheduler stopped the proxy for
# another task on its CPU, an upstream worker woken there by the proxy's own write, say.
preemptions() {
    local total=0 p voluntary involuntary
    for p in $(proc_tree "$1"); do
        read -r voluntary involuntary <<< "$(context_switches "$p")"
        total=$((total + ${involuntary:-0}))
    done
    echo "$total"
}

# callgrind_run BINARY CONFIG PORT COUNT OUTFILE ERRLOG — runs `BINARY run --config CONFIG`
# under callgrind (profile in OUTFILE), sends COUNT sequential fresh-connection requests
# (requests.py) to PORT and stops it. Not in a subshell, so cleanup_started knows the pid.
callgrind_run() {
    local binary="$1" config="$2" port="$3" count="$4" out="$5" errlog="$6" cg_pid
    valgrind --tool=callgrind --callgrind-out-file="$out" "$binary" run --config "$config" --log-level warning 2>>"$errlog" &
    cg_pid=$!
    STARTED_PIDS+=("$cg_pid")
    wait_port "$port" 60
    python3 "$BENCH_DIR/requests.py" --port "$port" --count "$count" || die "$binary under callgrind: requests failed"
    kill -INT "$cg_pid"; wait "$cg_pid" 2>/dev/null || true
}

# steal_ticks — the ticks the hypervisor took from every CPU of this host (/proc/stat, the
# aggregate "cpu" line's eighth value): time the guest wanted to run and could not.
steal_ticks() {
    awk '$1 == "cpu" { print $9; exit }' /proc/stat
}
