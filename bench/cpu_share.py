#!/usr/bin/env python3
"""One line per traced run of bench/cpu-share.sh: from `perf script` output of sched_switch
and sched_wakeup events on every CPU, each CPU's time split between the proxy, the upstream,
wrk, idle and the rest; the upstream's wakeups (by the proxy onto the proxy's CPU, and all
others) and the proxy's preemptions, per 1,000 requests at wrk's rate."""
import argparse
import collections
import re
import sys

LINE = re.compile(r"\s*(?P<comm>.+?)\s+(?P<tid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<time>[\d.]+):\s+sched:(?P<event>\w+):\s+(?P<rest>.*)")
SWITCH = re.compile(r"prev_comm=.*? prev_pid=(?P<prev>\d+) .*?prev_state=(?P<state>\S+) ==> next_comm=(?P<next_comm>.*?) next_pid=(?P<next>\d+)")
WAKEUP = re.compile(r"comm=.*? pid=(?P<pid>\d+) .*?target_cpu=(?P<cpu>\d+)")


def wrk_figures(path):
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1)
    return rps, p99


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--wrk", required=True)
    parser.add_argument("--duration", type=float, required=True)
    parser.add_argument("--proxy-pids", required=True)
    parser.add_argument("--upstream-pids", required=True)
    parser.add_argument("--wrk-comm", default="wrk")
    parser.add_argument("--proxy-cpu", type=int, required=True)
    parser.add_argument("trace")
    args = parser.parse_args()
    proxy = set(args.proxy_pids.split(","))
    upstream = set(args.upstream_pids.split(","))

    def role(tid, comm=""):
        if tid == "0":
            return "idle"
        if tid in proxy:
            return "proxy"
        if tid in upstream:
            return "upstream"
        return "wrk" if comm.startswith(args.wrk_comm) else "other"

    running = {}  # cpu -> (role, since)
    shares = collections.defaultdict(collections.Counter)
    wakeups = collections.Counter()
    preemptions = 0
    first = last = None
    for line in open(args.trace):
        match = LINE.match(line)
        if not match:
            continue
        cpu, time, event, rest = int(match["cpu"]), float(match["time"]), match["event"], match["rest"]
        first = time if first is None else first
        last = time
        if event == "sched_switch":
            switch = SWITCH.search(rest)
            if not switch:
                continue
            if cpu in running:
                shares[cpu][running[cpu][0]] += time - running[cpu][1]
            running[cpu] = (role(switch["next"], switch["next_comm"]), time)
            if switch["prev"] in proxy and switch["state"].startswith("R"):
                preemptions += 1
        elif event == "sched_wakeup":
            wakeup = WAKEUP.search(rest)
            if wakeup and wakeup["pid"] in upstream:
                by_proxy = match["tid"] in proxy
                onto_proxy_cpu = int(wakeup["cpu"]) == args.proxy_cpu
                wakeups["by proxy onto its CPU" if by_proxy and onto_proxy_cpu else "other"] += 1
    if first is None or last <= first:
        sys.exit(f"{args.trace}: no scheduler events")
    for cpu, (who, since) in running.items():
        shares[cpu][who] += last - since
    span = last - first
    rps, p99 = wrk_figures(args.wrk)
    per_k = 1000 / (rps * span)
    cpus = "  ".join(
        f"CPU {cpu}: " + " ".join(f"{who} {100 * shares[cpu][who] / span:.0f}%"
                                  for who in ("proxy", "upstream", "wrk", "idle", "other"))
        for cpu in sorted(shares))
    print(f"{args.name:<20} {rps:9.0f} req/s  p99 {p99:>7}  {cpus}  "
          f"upstream wakeups/1k req: by the proxy onto its CPU {wakeups['by proxy onto its CPU'] * per_k:.0f}, "
          f"other {wakeups['other'] * per_k:.0f}  proxy preemptions/1k req {preemptions * per_k:.0f}")


if __name__ == "__main__":
    main()
