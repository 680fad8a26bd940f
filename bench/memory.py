#!/usr/bin/env python3
"""RSS growth of a proxy per held client connection (bench/run.sh --memory).

Opens --connections plain TCP connections to 127.0.0.1:--port and holds them
open, reads the proxy's VmRSS (process --pid and its children) before, with
all connections idle, and after one `GET /100b` on each (the connections stay
open after the response). Prints one CSV row:

  proxy,connections,base_kib,idle_kib,after_request_kib,idle_kib_per_conn,after_request_kib_per_conn

Loopback only; every phase is bounded by --timeout seconds.
"""
import argparse
import asyncio
import os
import resource
import sys
import time


def tree(pid):
    pids = [pid]
    try:
        for line in open(f"/proc/{pid}/task/{pid}/children").read().split():
            pids.append(int(line))
    except OSError:
        pass
    return pids


def rss_kib(pid):
    total = 0
    for p in tree(pid):
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def fd_count(pid):
    total = 0
    for p in tree(pid):
        try:
            total += len(os.listdir(f"/proc/{p}/fd"))
        except OSError:
            pass
    return total


async def settle(pid, deadline):
    """Waits until the proxy's descriptor count and RSS stop changing (it accepted everything)."""
    last = None
    while time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        now = (fd_count(pid), rss_kib(pid))
        if now == last:
            return
        last = now


async def one_request(reader, writer, port):
    writer.write(f"GET /100b HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    body = await reader.readexactly(length)
    if not head.startswith(b"HTTP/1.1 200") or len(body) != 100:
        raise RuntimeError(f"unexpected response {head[:40]!r} with {len(body)} body bytes")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--connections", type=int, required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight in phase 2")
    args = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = args.connections + 100
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))
    deadline = time.monotonic() + args.timeout

    # Warm-up request on a separate connection: lazily built state (TLS context, first
    # upstream connection) belongs to the baseline, not to the per-connection cost.
    r, w = await asyncio.open_connection("127.0.0.1", args.port)
    await one_request(r, w, args.port)
    w.close()
    await asyncio.sleep(1.0)
    base = rss_kib(args.pid)

    connections = []
    batch = 250
    while len(connections) < args.connections:
        if time.monotonic() > deadline:
            raise SystemExit(f"{args.label}: only {len(connections)} connections opened in time")
        n = min(batch, args.connections - len(connections))
        connections += await asyncio.gather(*(asyncio.open_connection("127.0.0.1", args.port) for _ in range(n)))
    await settle(args.pid, min(deadline, time.monotonic() + 20))
    idle = rss_kib(args.pid)

    gate = asyncio.Semaphore(args.concurrency)

    async def bounded(pair):
        async with gate:
            await asyncio.wait_for(one_request(*pair, args.port), timeout=max(1.0, deadline - time.monotonic()))

    await asyncio.gather(*(bounded(pair) for pair in connections))
    await settle(args.pid, min(deadline + 20, time.monotonic() + 20))
    after = rss_kib(args.pid)

    for _, writer in connections:
        writer.close()
    n = args.connections
    print(f"{args.label},{n},{base},{idle},{after},{(idle - base) / n:.3f},{(after - base) / n:.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
