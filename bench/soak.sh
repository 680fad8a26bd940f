#!/usr/bin/env bash
# make soak: mixed load through pinproxy for SOAK_SECONDS (default 600, at most 600),
# with SIGHUP every 10 s and log rotation (mv + SIGUSR1) every 30 s, sampling RSS,
# descriptors and pooled upstream connections every second. Exit 0 only when:
#   - no request that should have succeeded failed,
#   - every request to the man-in-the-middle host got 502 ... details="pin_mismatch",
#   - violation-log lines + summary counts (across rotated files) == attacks sent,
#   - RSS and descriptors are flat after warm-up (last third vs middle third),
#   - pinproxy exits 0 on SIGTERM.
# Tunables: SOAK_SECONDS, SOAK_WORKERS=6, PORT_BASE=28500, PINPROXY_BIN.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SOAK_SECONDS="${SOAK_SECONDS:-600}"
[ "$SOAK_SECONDS" -le 600 ] || die "SOAK_SECONDS must be at most 600 (bounded soak)"
SOAK_WORKERS="${SOAK_WORKERS:-6}"
PORT_BASE="${PORT_BASE:-28500}"
PROXY_PORT="$PORT_BASE"
MITM_HOST="mitm.example.test"
OUT="$BENCH_DIR/out"
WORK="$OUT/soak"

trap cleanup_started EXIT INT TERM

install_missing python3:python3 openssl:openssl curl:curl
[ -x "$PINPROXY_BIN" ] || die "no pinproxy binary at $PINPROXY_BIN (run: swift build -c release)"
raise_nofile
rm -rf "$WORK" && mkdir -p "$WORK/logs"

# --- PKI: the real CA and a second CA the trust store also trusts (the "MITM" one) ----
make_ca "$WORK" ca
make_ca "$WORK" mitmca
make_leaf "$WORK" ca leaf "$HOST_NAME"
make_leaf "$WORK" mitmca mitm "$MITM_HOST"
# The key the real mitm.example.test would serve (never served here) + a backup key.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/real-mitm-host.key" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/backup.key" 2>/dev/null
cat "$WORK/ca.pem" "$WORK/mitmca.pem" > "$WORK/trust.pem"
openssl verify -x509_strict -CAfile "$WORK/trust.pem" "$WORK/mitm.pem" >/dev/null || die "MITM leaf must chain to the trust store"

# --- upstreams: the project's own TLS test server (serves /bytes/N and POST /echo-length)
start_upstream() { # start_upstream NAME CERT KEY
    local name="$1"
    python3 "$REPO_DIR/Tests/Tools/upstream.py" --cert "$WORK/$2" --key "$WORK/$3" \
        --ready-file "$WORK/$name.port" --events "$WORK/logs/$name-events.jsonl" 2>"$WORK/logs/$name.err" &
    STARTED_PIDS+=($!)
    for _ in $(seq 100); do [ -s "$WORK/$name.port" ] && break; sleep 0.1; done
    [ -s "$WORK/$name.port" ] || die "upstream $name did not start"
}
start_upstream real leaf-chain.pem leaf.key
start_upstream mitm mitm-chain.pem mitm.key
REAL_PORT="$(cat "$WORK/real.port")"
MITM_PORT="$(cat "$WORK/mitm.port")"

cat > "$WORK/pinproxy.json" <<EOF
{
  "listeners": [ { "listen": "127.0.0.1:$PROXY_PORT", "mode": "forward" } ],
  "violation_log": "$WORK/logs/violations.jsonl",
  "trust_store": "$WORK/trust.pem",
  "default_policy": "deny",
  "hosts": {
    "$HOST_NAME": { "policy": "pin-public-keys", "pins": ["$(spki_pin "$WORK/leaf.pem")", "$(spki_pin "$WORK/backup.key")"] },
    "$MITM_HOST": { "policy": "pin-public-keys", "pins": ["$(spki_pin "$WORK/real-mitm-host.key")", "$(spki_pin "$WORK/backup.key")"] }
  },
  "resolve": { "$HOST_NAME:443": "127.0.0.1:$REAL_PORT", "$MITM_HOST:443": "127.0.0.1:$MITM_PORT" },
  "threads": 2
}
EOF
"$PINPROXY_BIN" check --config "$WORK/pinproxy.json" >/dev/null || die "pinproxy check rejected the soak config"

"$PINPROXY_BIN" run --config "$WORK/pinproxy.json" --log-level warning 2>"$WORK/logs/pinproxy.err" &
PINPROXY_PID=$!
STARTED_PIDS+=("$PINPROXY_PID")
wait_port "$PROXY_PORT"

log "soak: ${SOAK_SECONDS}s, $SOAK_WORKERS client threads, pinproxy pid $PINPROXY_PID on 127.0.0.1:$PROXY_PORT"
status=0
python3 "$BENCH_DIR/soak.py" --proxy-port "$PROXY_PORT" --pid "$PINPROXY_PID" --seconds "$SOAK_SECONDS" \
    --workers "$SOAK_WORKERS" --host "$HOST_NAME" --mitm-host "$MITM_HOST" --upstream-port "$REAL_PORT" \
    --log "$WORK/logs/violations.jsonl" --samples "$OUT/soak-samples.csv" --pinproxy-stderr "$WORK/logs/pinproxy.err" \
    --mitm-events "$WORK/logs/mitm-events.jsonl" \
    || status=$?
# soak.py sent SIGTERM already (so summaries are flushed before counting); collect the exit code.
kill -TERM "$PINPROXY_PID" 2>/dev/null || true
pinproxy_status=0
wait "$PINPROXY_PID" || pinproxy_status=$?
if [ "$pinproxy_status" -eq 0 ]; then
    echo "PASS  pinproxy exited 0 on SIGTERM"
else
    echo "FAIL  pinproxy exited $pinproxy_status on SIGTERM (stderr: $WORK/logs/pinproxy.err)"
    status=1
fi
if grep -qiE "fatal|crash|assert" "$WORK/logs/pinproxy.err"; then
    echo "FAIL  pinproxy stderr reports a crash:"; grep -iE "fatal|crash|assert" "$WORK/logs/pinproxy.err" | head -5
    status=1
fi
exit "$status"
