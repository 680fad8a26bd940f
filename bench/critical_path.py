#!/usr/bin/env python3
"""Reads the callgrind parts of bench/critical-path.sh (one part dumped before
every epoll_wait, accept4 and send-like call) and prints, per loop pass, the
instructions a proxy spends before its first send and after it.

A loop pass runs from the return of one epoll_wait to the entry of the next.
The instructions before the pass's first send delay the peer that send wakes
(the upstream for a request, the client for an answer); what follows the send
overlaps with the peer's work. Passes without a send (timers) are left out,
and so are the first WARM_UP requests (the upstream handshake, first-use
allocations).

MODE close (each request on a new connection, with Connection: close): the
passes that accept a connection are the request passes, the other passes with
a send the answer passes. MODE keep-alive (one client sending its requests one
after another on one connection): the send functions cannot tell the sides
apart (HAProxy uses sendto for both), but the order can. Once the upstream
connection is up, the passes with a send alternate, request then answer, and
the last one answers the last request; they are counted back from it. The
upstream handshake's passes at the start fall in the warm-up.

usage: critical_path.py NAME DIRECTORY [MODE [WARM_UP]]
"""
import glob
import re
import statistics
import sys

SENDS = {"write", "writev", "send", "sendto", "sendmsg"}

name, directory = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "close"
warm_up = int(sys.argv[4]) if len(sys.argv) > 4 else 20
if mode not in ("close", "keep-alive"):
    sys.exit(f"MODE is close or keep-alive, not {mode}")

parts = []
for path in glob.glob(f"{directory}/callgrind.out.*"):
    match = re.search(r"\.(\d+)$", path)
    if not match:
        continue
    trigger = total = None
    with open(path) as text:
        for line in text:
            if line.startswith("desc: Trigger:"):
                trigger = line.rsplit("=", 1)[-1].strip()
            elif line.startswith("totals:"):
                total = int(line.split()[1])
                break
    if trigger is not None and total is not None:
        parts.append((int(match.group(1)), trigger, total))
parts.sort()

# A pass: the parts after an epoll_wait trigger, up to and including the part
# that ends at the next epoll_wait.
passes, current, started = [], [], False
for _, trigger, total in parts:
    if started:
        current.append((trigger, total))
    if trigger == "epoll_wait":
        if started and current:
            passes.append(current)
        current, started = [], True
# Keep-alive runs end with SIGKILL, which may come between the last answer's
# send and the next epoll_wait: that pass still has its send, and counting
# back must start from it. (A close run stops gracefully; what its stop does
# after the last epoll_wait is no request's.)
if mode == "keep-alive" and current:
    passes.append(current)

request, answer = [], []
sending = []  # (accepted a connection, instructions before the first send, after it)
for one_pass in passes:
    triggers = [trigger for trigger, _ in one_pass]
    first_send = next((index for index, trigger in enumerate(triggers) if trigger in SENDS), None)
    if first_send is None:
        continue
    before = sum(total for _, total in one_pass[:first_send + 1])
    after = sum(total for _, total in one_pass[first_send + 1:])
    sending.append(("accept4" in triggers, before, after))
if mode == "close":
    for accepted, before, after in sending:
        (request if accepted else answer).append((before, after))
else:
    for back, (_, before, after) in enumerate(reversed(sending)):
        (answer if back % 2 == 0 else request).append((before, after))
    request.reverse()
    answer.reverse()

request, answer = request[warm_up:], answer[warm_up:]
if len(request) < 50 or len(answer) < 50:
    sys.exit(f"{name}: too few passes to measure ({len(request)} request, {len(answer)} answer)")

def median(values, index):
    return statistics.median(value[index] for value in values)

workload = "Connection: close" if mode == "close" else "keep-alive"
print(f"{name}: instructions per loop pass, {workload} (medians of {len(request)} request"
      f" and {len(answer)} answer passes)")
print(f"  request pass (client read .. upstream send) before the first send {median(request, 0):>8,.0f}"
      f"   after it {median(request, 1):>7,.0f}")
print(f"  answer pass (upstream read .. client send) before the first send {median(answer, 0):>6,.0f}"
      f"   after it {median(answer, 1):>7,.0f}")
print(f"  on the request's critical path (both 'before' figures)  {median(request, 0) + median(answer, 0):>10,.0f}")
