#!/usr/bin/env python3
"""The load, the signals, the sampler and the verdict of bench/soak.sh.

Client threads send a weighted mix through pinproxy's forward listener:
keep-alive GETs (one persistent connection per thread), `Connection: close`
GETs, 1 MiB downloads (content checked), 1 MiB uploads (the upstream echoes
length + SHA-256) and requests to the man-in-the-middle host (must be blocked
with 502 and `details="pin_mismatch"`). A signal thread sends SIGHUP every
10 s and rotates the violation log (rename + SIGUSR1) every 30 s. A sampler
records RSS, descriptors and pooled upstream connections every second.

At the end pinproxy gets SIGTERM (which closes open flood-gate windows into
summary lines), and the violation logs are counted. Exit status 1 on any
failed check. Everything is bounded by --seconds plus fixed grace periods.
"""
import argparse
import glob
import hashlib
import http.client
import json
import os
import random
import signal
import statistics
import sys
import threading
import time

MIB = 1 << 20
PATTERN = bytes(range(251)) * (MIB // 251 + 2)
DOWNLOAD_SHA = hashlib.sha256(PATTERN[:MIB]).hexdigest()  # upstream.py: byte i = i % 251
UPLOAD = os.urandom(MIB)
UPLOAD_ANSWER = f"{MIB} {hashlib.sha256(UPLOAD).hexdigest()}"

# kind → weight (share of requests)
MIX = {"keepalive_get": 45, "close_get": 20, "download_1mib": 8, "upload_1mib": 7, "attack": 20}


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.sent = {k: 0 for k in MIX}
        self.ok = {k: 0 for k in MIX}
        self.failures = []          # (time, kind, message) of requests that should have succeeded
        self.unblocked = []         # attacks that were not blocked as pin_mismatch
        self.stale_retries = 0      # keep-alive connection closed by pinproxy before any response byte

    def record(self, kind, ok, message=None):
        with self.lock:
            self.sent[kind] += 1
            if ok:
                self.ok[kind] += 1
            elif kind == "attack":
                self.unblocked.append((time.time(), message))
            else:
                self.failures.append((time.time(), kind, message))


def exchange(conn, method, url, body=None, close=False):
    headers = {"Connection": "close"} if close else {}
    if body is not None:
        headers["Content-Type"] = "application/octet-stream"
    conn.request(method, url, body=body, headers=headers)
    response = conn.getresponse()
    return response, response.read()


def one_request(kind, args, persistent, tally):
    """Returns the persistent connection to keep using (or None)."""
    base = f"http://{args.host}"
    try:
        if kind == "keepalive_get":
            fresh = persistent is None
            conn = persistent or http.client.HTTPConnection("127.0.0.1", args.proxy_port, timeout=30)
            try:
                response, data = exchange(conn, "GET", f"{base}/bytes/100")
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if fresh:
                    raise
                # RFC 9112 §9.3.1: a client may retry an idempotent request when a reused
                # connection closes before any response. Counted and reported, not hidden.
                with tally.lock:
                    tally.stale_retries += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", args.proxy_port, timeout=30)
                response, data = exchange(conn, "GET", f"{base}/bytes/100")
            ok = response.status == 200 and data == PATTERN[:100]
            tally.record(kind, ok, None if ok else f"status {response.status}, {len(data)} bytes")
            if response.will_close or not ok:
                conn.close()
                return None
            return conn
        conn = http.client.HTTPConnection("127.0.0.1", args.proxy_port, timeout=30)
        try:
            if kind == "close_get":
                response, data = exchange(conn, "GET", f"{base}/bytes/100", close=True)
                ok = response.status == 200 and data == PATTERN[:100]
                tally.record(kind, ok, None if ok else f"status {response.status}, {len(data)} bytes")
            elif kind == "download_1mib":
                response, data = exchange(conn, "GET", f"{base}/bytes/{MIB}", close=True)
                ok = response.status == 200 and len(data) == MIB and hashlib.sha256(data).hexdigest() == DOWNLOAD_SHA
                tally.record(kind, ok, None if ok else f"status {response.status}, {len(data)} bytes")
            elif kind == "upload_1mib":
                response, data = exchange(conn, "POST", f"{base}/echo-length", body=UPLOAD, close=True)
                answer = data.decode(errors="replace").strip()
                ok = response.status == 200 and answer == UPLOAD_ANSWER
                tally.record(kind, ok, None if ok else f"status {response.status}, answer {answer[:80]!r}")
            else:  # attack
                response, data = exchange(conn, "GET", f"http://{args.mitm_host}/secret?token=x", close=True)
                status = response.getheader("Proxy-Status", "")
                ok = (response.status == 502 and "error=tls_certificate_error" in status
                      and 'details="pin_mismatch"' in status)
                tally.record(kind, ok, None if ok else f"status {response.status}, Proxy-Status {status!r}")
        finally:
            conn.close()
    except Exception as error:  # any transport error is a failed request
        tally.record(kind, False, f"{type(error).__name__}: {error}")
        if persistent is not None:
            persistent.close()
    return None


def client(args, deadline, tally, seed):
    rng = random.Random(seed)
    kinds, weights = list(MIX), list(MIX.values())
    persistent = None
    while time.monotonic() < deadline:
        kind = rng.choices(kinds, weights)[0]
        if kind == "keepalive_get":
            persistent = one_request(kind, args, persistent, tally)
        else:
            one_request(kind, args, None, tally)
    if persistent is not None:
        persistent.close()


def rotate_and_reload(args, deadline, events):
    start = time.monotonic()
    tick = 0
    while True:
        tick += 1
        target = start + tick
        if target > deadline:
            return
        time.sleep(max(0.0, target - time.monotonic()))
        if tick % 30 == 0:
            rotated = f"{args.log}.{tick // 30}"
            if os.path.exists(args.log):
                os.rename(args.log, rotated)
            os.kill(args.pid, signal.SIGUSR1)
            events.append((tick, "rotate+SIGUSR1"))
        elif tick % 10 == 0:
            os.kill(args.pid, signal.SIGHUP)
            events.append((tick, "SIGHUP"))


def pooled_upstream_connections(port):
    """Established IPv4 TCP connections whose remote port is the real upstream's: pinproxy's pool."""
    count = 0
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            fields = line.split()
            if fields[3] == "01" and int(fields[2].split(":")[1], 16) == port:
                count += 1
    return count


def sample(args):
    rss = 0
    with open(f"/proc/{args.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{args.pid}/fd"))
    return rss, fds, pooled_upstream_connections(args.upstream_port)


def sampler(args, deadline, tally, samples):
    start = time.monotonic()
    tick = 0
    while time.monotonic() < deadline:
        tick += 1
        time.sleep(max(0.0, start + tick - time.monotonic()))
        rss, fds, pooled = sample(args)
        with tally.lock:
            sent = sum(tally.sent.values())
        samples.append((tick, rss, fds, pooled, sent))


def count_violations(log):
    lines = summaries = other = malformed = 0
    files = sorted(glob.glob(log + "*"))
    for path in files:
        for raw in open(path, encoding="utf-8", errors="replace"):
            try:
                event = json.loads(raw)
            except ValueError:
                malformed += 1
                continue
            if event.get("event") == "pin_violation" and event.get("reason") == "pin_mismatch":
                lines += 1
            elif event.get("event") == "pin_violation_summary":
                summaries += int(event.get("count", 0))
            else:
                other += 1
    return files, lines, summaries, other, malformed


def flat(values, tolerance):
    """Mean of the last third against the middle third (the first third is warm-up)."""
    third = len(values) // 3
    middle, last = values[third:2 * third], values[2 * third:]
    if not middle or not last:
        return True, 0.0, 0.0
    m, l = statistics.mean(middle), statistics.mean(last)
    return l <= tolerance(m), m, l


def main():
    parser = argparse.ArgumentParser()
    for name in ("--proxy-port", "--pid", "--seconds", "--workers", "--upstream-port"):
        parser.add_argument(name, type=int, required=True)
    for name in ("--host", "--mitm-host", "--log", "--samples", "--pinproxy-stderr", "--mitm-events"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()

    tally, samples, events = Tally(), [], []
    deadline = time.monotonic() + args.seconds
    threads = [threading.Thread(target=client, args=(args, deadline, tally, i), daemon=True)
               for i in range(args.workers)]
    threads.append(threading.Thread(target=rotate_and_reload, args=(args, deadline, events), daemon=True))
    threads.append(threading.Thread(target=sampler, args=(args, deadline, tally, samples), daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()) + 60)
    idle_rss, idle_fds, idle_pooled = sample(args)

    # SIGTERM closes the flood gate's windows into summary lines; wait (bounded) for the exit.
    os.kill(args.pid, signal.SIGTERM)
    exit_deadline = time.monotonic() + 20
    while time.monotonic() < exit_deadline:
        try:
            state = open(f"/proc/{args.pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        print(f"FAIL: pinproxy did not exit within 20 s of SIGTERM")

    with open(args.samples, "w") as out:
        out.write("second,rss_kib,fds,pooled_upstream,requests_sent\n")
        for row in samples:
            out.write(",".join(map(str, row)) + "\n")

    every = max(1, len(samples) // 30)
    print(f"\n{'t (s)':>6} {'RSS MiB':>8} {'fds':>5} {'pooled':>6} {'requests':>9}")
    for tick, rss, fds, pooled, sent in samples[::every]:
        print(f"{tick:>6} {rss / 1024:>8.1f} {fds:>5} {pooled:>6} {sent:>9}")
    print(f"{'idle':>6} {idle_rss / 1024:>8.1f} {idle_fds:>5} {idle_pooled:>6}   (after the load stopped)")

    files, lines, summarised, other, malformed = count_violations(args.log)
    # upstream.py writes one JSON line per connection: what the man in the middle received.
    mitm = [json.loads(line) for line in open(args.mitm_events)]
    leaked = sum(event.get("app_bytes", 0) for event in mitm)
    attacks = tally.sent["attack"]
    rss_ok, rss_mid, rss_last = flat([s[1] for s in samples], lambda m: m * 1.05 + 2048)
    fds_ok, fds_mid, fds_last = flat([s[2] for s in samples], lambda m: m + 8)
    total = sum(tally.sent.values())
    elapsed = args.seconds

    print(f"\nrequests: {total} in {elapsed} s ({total / elapsed:.0f}/s); signals: "
          f"{sum(1 for e in events if e[1] == 'SIGHUP')} SIGHUP, {sum(1 for e in events if e[1] != 'SIGHUP')} rotations")
    for kind in MIX:
        print(f"  {kind:<14} sent {tally.sent[kind]:>7}  as expected {tally.ok[kind]:>7}")
    print(f"  keep-alive connections closed before a response and retried: {tally.stale_retries}")
    print(f"violation log: {len(files)} files, {lines} pin_mismatch lines + {summarised} in summaries = "
          f"{lines + summarised} (attacks sent: {attacks}); other events {other}, malformed lines {malformed}")
    print(f"man-in-the-middle upstream: {len(mitm)} connections, {leaked} application bytes received")
    print(f"RSS: middle third {rss_mid / 1024:.1f} MiB, last third {rss_last / 1024:.1f} MiB; "
          f"fds: middle {fds_mid:.1f}, last {fds_last:.1f}")

    checks = [
        ("no failed request that should have succeeded", not tally.failures),
        ("every attack blocked with 502 pin_mismatch", not tally.unblocked and attacks > 0),
        ("violation lines + summary counts == attacks sent", lines + summarised == attacks),
        ("no other or malformed violation-log lines", other == 0 and malformed == 0),
        ("the man in the middle received zero application bytes", leaked == 0 and len(mitm) == attacks),
        ("RSS flat after warm-up (last third <= middle third x 1.05 + 2 MiB)", rss_ok),
        ("descriptors flat after warm-up (last third <= middle third + 8)", fds_ok),
    ]
    for when, kind, message in tally.failures[:10]:
        print(f"  failed {kind} at {time.strftime('%H:%M:%S', time.localtime(when))}: {message}")
    for when, message in tally.unblocked[:10]:
        print(f"  unblocked attack at {time.strftime('%H:%M:%S', time.localtime(when))}: {message}")
    print()
    for name, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    sys.exit(0 if all(ok for _, ok in checks) else 1)


if __name__ == "__main__":
    main()
