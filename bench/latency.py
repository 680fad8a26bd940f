#!/usr/bin/env python3
"""Sequential fresh-connection GET /100b requests, interleaved over several
ports, one per variant: prints each variant's median and p90 wall time per
request in microseconds (bench/custom-check.sh). Every answer must be a 200
with the 100-byte body; the loop is bounded by --rounds x --count requests.

--hammer PORT --seconds S: instead, keep --threads clients sending requests to
PORT (any answer accepted) until S seconds have passed, then print how many
were answered.
"""
import argparse
import socket
import statistics
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--ports", default="")
parser.add_argument("--names", default="")
parser.add_argument("--count", type=int, default=100)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--hammer", type=int)
parser.add_argument("--seconds", type=float, default=10)
parser.add_argument("--threads", type=int, default=8)
args = parser.parse_args()

REQUEST = b"GET /100b HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"


def fetch(port):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(REQUEST)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


if args.hammer:
    deadline = time.monotonic() + args.seconds
    answered = [0] * args.threads

    def client(index):
        while time.monotonic() < deadline:
            try:
                fetch(args.hammer)
                answered[index] += 1
            except OSError:
                time.sleep(0.05)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"hammer answered={sum(answered)}")
    sys.exit(0)

ports = [int(p) for p in args.ports.split(",")]
names = args.names.split(",")
samples = {name: [] for name in names}
for round_index in range(args.rounds):
    order = list(zip(names, ports))
    if round_index % 2:
        order.reverse()
    for name, port in order:
        for _ in range(args.count):
            started = time.perf_counter()
            answer = fetch(port)
            elapsed = time.perf_counter() - started
            if not answer.startswith(b"HTTP/1.1 200") or not answer.endswith(b"a" * 100):
                sys.exit(f"{name}: unexpected answer {answer[:80]!r}")
            samples[name].append(elapsed * 1e6)
for name in names:
    values = sorted(samples[name])
    p90 = values[int(len(values) * 0.9) - 1]
    print(f"{name} median_us={statistics.median(values):.0f} p90_us={p90:.0f} n={len(values)}")
