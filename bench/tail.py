"""One line per run of bench/tail.sh: wrk's distribution (bench/tail.lua's TAIL line), the proxy's
CPU per request, and how the proxy's upstream connections and the upstream's CPU fell on the
nginx workers."""
import argparse
import os
import re
import subprocess
import sys

TICK_US = 1_000_000 / os.sysconf("SC_CLK_TCK")


def upstream_split(proxy_pid, worker_pids, port):
    """The proxy's established connections to `port`, counted per nginx worker (matched by the
    proxy's local port, which is the worker's peer port)."""
    listing = subprocess.run(["ss", "-tnpH", "state", "established"], capture_output=True, text=True).stdout
    proxy_ports, peers = set(), {pid: set() for pid in worker_pids}
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        local, peer = fields[2], fields[3]
        pids = set(re.findall(r"pid=(\d+)", line))
        if peer.endswith(f":{port}") and proxy_pid in pids:
            proxy_ports.add(local.rsplit(":", 1)[1])
        if local.endswith(f":{port}"):
            for pid in worker_pids:
                if pid in pids:
                    peers[pid].add(peer.rsplit(":", 1)[1])
    return [len(peers[pid] & proxy_ports) for pid in worker_pids]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--wrk", required=True)
    parser.add_argument("--proxy-ticks", nargs=2, type=int, required=True)
    parser.add_argument("--worker-ticks", nargs=2, required=True)
    parser.add_argument("--proxy-pid", required=True)
    parser.add_argument("--worker-pids", required=True)
    parser.add_argument("--upstream-port", required=True)
    args = parser.parse_args()

    line = next((l for l in open(args.wrk) if l.startswith("TAIL ")), None)
    if line is None:
        sys.exit(f"{args.name}: no TAIL line in {args.wrk}")
    run = dict(field.split("=") for field in line.split()[1:])
    requests = int(run["requests"])
    rate = requests / float(run["seconds"])
    proxy_us = (args.proxy_ticks[1] - args.proxy_ticks[0]) * TICK_US / max(requests, 1)
    workers = args.worker_pids.split()
    before, after = args.worker_ticks[0].split(), args.worker_ticks[1].split()
    worker_cpu = "/".join(str(int(b) - int(a)) for a, b in zip(before, after))
    split = "/".join(map(str, upstream_split(args.proxy_pid, workers, args.upstream_port)))
    print(f"{args.name:24} {rate:9,.0f} req/s  p50 {float(run['p50']):6.2f}  p90 {float(run['p90']):6.2f}  "
          f"p99 {float(run['p99']):6.2f}  p99.9 {float(run['p999']):6.2f}  max {float(run['max']):6.2f}  "
          f"mean {float(run['mean']):5.2f}  sd {float(run['sd']):5.2f} ms  cpu {proxy_us:5.1f} us/req  "
          f"upstream conns per worker {split}  worker ticks {worker_cpu}  errors {run['errors']}")


if __name__ == "__main__":
    main()
