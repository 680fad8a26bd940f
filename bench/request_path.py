#!/usr/bin/env python3
"""Reads the syscall trace of bench/request-path.sh and prints where a keep-alive
request spends its time, segment by segment, as the proxy's and wrk's own system
calls see it.

Each connection is followed from both ends: wrk's socket and the proxy's client
socket are the same TCP connection (wrk's local port is the proxy side's remote
port), the proxy's upstream sockets are those whose remote port is the upstream's.
Only calls that moved bytes count (a read that returned EAGAIN or 0 did not).
On one client connection the four ends alternate:

  wrk write -> proxy read      the request waits in the proxy's socket for its loop
  proxy read -> proxy write    inside the proxy: parse, upstream round trip, answer
  proxy write -> wrk read      the answer waits for wrk (wrk's latency ends here)
  wrk read -> wrk write        wrk's turnaround before the next request

wrk's latency is the first three; the fourth is not in it but costs throughput. For
the slowest 1 % of the requests by wrk's latency, the mean of each of the three
says which made them slow. On an upstream connection, proxy write -> proxy read is
the upstream's turn (nginx's work and its wait for a CPU, and the answer's wait for
the proxy's loop).

usage: request_path.py FDS TCP TRACE PROXY_PORT UPSTREAM_PORT FROM SECONDS
  FDS    lines "PID FD INODE" for the sockets of the proxy and of wrk
  TCP    /proc/net/tcp read (several times, concatenated) at the same time
  TRACE  `perf script -F pid,tid,time,event,trace` of the read and write calls' entries
         and exits (read, readv, recvfrom, write, writev, sendto), recorded with
         -k CLOCK_MONOTONIC
  FROM, SECONDS  the traced window: calls that returned in it count
"""
import collections
import re
import sys

DIRECTION = {"read": "r", "readv": "r", "recvfrom": "r", "write": "w", "writev": "w", "sendto": "w"}
CLIENT_SEGMENTS = [("Ww", "Pr", "wrk write -> proxy read"), ("Pr", "Pw", "proxy read -> proxy write"),
                   ("Pw", "Wr", "proxy write -> wrk read"), ("Wr", "Ww", "wrk read -> wrk write")]
# The three segments wrk's latency is made of (the turnaround is not).
LATENCY_SEGMENTS = {name for _, _, name in CLIENT_SEGMENTS[:3]}
UPSTREAM_SEGMENT = "upstream: proxy write -> read"
LATENCY = "wrk write -> wrk read"


def socket_ends(fds_path, tcp_path, proxy_port, upstream_port):
    """(pid, fd) -> ("P", client port) | ("W", client port) | ("U", pid, fd)."""
    ports = {}
    for line in open(tcp_path):
        fields = line.split()
        if fields[0] == "sl":  # a header: the file holds several reads of /proc/net/tcp
            continue
        # local and remote address as hex "IP:PORT", the inode in column 10
        ports[fields[9]] = (int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16))
    ends = {}
    for line in open(fds_path):
        pid, fd, inode = line.split()
        if inode not in ports:
            continue
        local, remote = ports[inode]
        if remote == upstream_port:
            ends[(pid, int(fd))] = ("U", pid, int(fd))
        elif local == proxy_port:
            ends[(pid, int(fd))] = ("P", remote)
        elif remote == proxy_port:
            ends[(pid, int(fd))] = ("W", local)
    return ends


def transfers(trace_path, ends, start, stop):
    """end -> [(seconds, "r" | "w")] for the calls that moved bytes and returned between
    start and stop, in order."""
    entered = {}
    calls = collections.defaultdict(list)
    pattern = re.compile(r"\s*(\d+)/(\d+)\s+([\d.]+):\s+syscalls:sys_(enter|exit)_(\w+):\s*(.*)")
    for line in open(trace_path):
        m = pattern.match(line)
        if not m or m.group(5) not in DIRECTION:
            continue
        pid, tid, at, kind, name, rest = m.groups()
        if kind == "enter":
            fd = re.search(r"fd: (0x[0-9a-f]+)", rest)
            if fd:
                entered[tid] = (pid, int(fd.group(1), 16), DIRECTION[name])
            continue
        if tid not in entered:
            continue
        pid, fd, direction = entered.pop(tid)
        value = int(rest.strip(), 0)
        if value == 0 or value >= 1 << 63:  # end of stream, or an error (negative, in two's complement)
            continue
        end = ends.get((pid, fd))
        if end and start <= float(at) < stop:
            calls[end].append((float(at), direction))
    return calls


def segments(calls):
    """(segment name -> durations, [{segment name: duration} of LATENCY_SEGMENTS for each request
    whose three were all traced])."""
    found = collections.defaultdict(list)
    requests = []
    for end, own in calls.items():
        if end[0] == "U":
            sent = None
            for at, direction in own:
                if direction == "w":
                    sent = at
                elif sent is not None:
                    found[UPSTREAM_SEGMENT].append(at - sent)
                    sent = None
        elif end[0] == "P":
            # Both ends of one client connection on one time line.
            timeline = sorted([(at, "P" + d) for at, d in own] + [(at, "W" + d) for at, d in calls.get(("W", end[1]), [])])
            last = {}
            request = {}  # the segments of the request in flight, by name
            for at, step in timeline:
                for start, stop, name in CLIENT_SEGMENTS:
                    if step == stop and start in last:
                        found[name].append(at - last.pop(start))
                        if name in LATENCY_SEGMENTS:
                            request[name] = found[name][-1]
                if step == "Wr":
                    # Its answer is read: kept if no segment fell outside the traced window.
                    if len(request) == len(LATENCY_SEGMENTS):
                        requests.append(request)
                    request = {}
                last[step] = at
    return found, requests


def slowest_means(requests, fraction=0.01):
    """Each segment's mean over the slowest `fraction` of the requests by wrk's latency."""
    if not requests:
        return {}
    slowest = sorted(requests, key=lambda r: sum(r.values()), reverse=True)[:max(1, int(len(requests) * fraction))]
    return {name: sum(r[name] for r in slowest) / len(slowest) for name in slowest[0]}


def main():
    fds, tcp, trace, proxy_port, upstream_port, start, seconds = sys.argv[1:8]
    ends = socket_ends(fds, tcp, int(proxy_port), int(upstream_port))
    calls = transfers(trace, ends, float(start), float(start) + float(seconds))
    found, requests = segments(calls)
    found[LATENCY] = [sum(request.values()) for request in requests]
    if not calls:
        sys.exit("request path: no transfer traced on a known socket")
    for name in [LATENCY] + [name for _, _, name in CLIENT_SEGMENTS] + [UPSTREAM_SEGMENT]:
        values = sorted(1000 * v for v in found.get(name, []))
        if not values:
            print(f"  {name:30} none traced")
            continue
        def pct(p):
            return values[min(len(values) - 1, int(len(values) * p))]
        print(f"  {name:30} {len(values):7,}  mean {sum(values) / len(values):6.3f}  p50 {pct(0.5):6.3f}  "
              f"p90 {pct(0.9):6.3f}  p99 {pct(0.99):6.3f} ms")

    means = slowest_means(requests)
    if means:
        print("  the slowest 1 % by wrk's latency, mean per segment: "
              + ", ".join(f"{name} {1000 * value:.3f}" for name, value in means.items()) + " ms")


if __name__ == "__main__":
    main()
