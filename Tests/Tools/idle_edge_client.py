#!/usr/bin/env python3
"""Requests that arrive as the pooled upstream connection's idle time runs out.

  idle_edge_client.py --proxy PORT --url URL --from S --to S --pairs N --deadline S

Each pair is two forward-proxy GETs of URL, each on a new client connection
with Connection: close: the first leaves an upstream connection pooled; the
second is sent FROM + k * (TO - FROM) / N seconds after the first answer
ended (k = 0 .. N-1). With FROM and TO a little before and after the
proxy's timeouts.idle, the pairs sweep the moment the pooled connection's
idle time runs out (the proxy's timer starts when it reads the answer, a
little before the client has it), in steps finer than the few milliseconds
by which an event loop's timer fires early. Everything is bounded by
--deadline seconds.

Prints one JSON line: {"pairs", "answers": {status and Proxy-Status: count}
for the second requests, "slowest": seconds of the slowest second request}.
"""
import argparse, collections, json, socket, time

from p2_many import status_and_proxy_status


def get(port, url, timeout):
    """One GET of URL on a new connection: (status and Proxy-Status, as p2_many.py counts answers; seconds)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                      % (url, url.split("/")[2])).encode())
        data = b""
        while True:
            part = sock.recv(65536)
            if not part:
                break
            data += part
    status, proxy_status = status_and_proxy_status(data)
    return (status + (" " + proxy_status if proxy_status else "")), time.monotonic() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", type=int, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--from", dest="start", type=float, required=True)
    parser.add_argument("--to", dest="stop", type=float, required=True)
    parser.add_argument("--pairs", type=int, required=True)
    parser.add_argument("--deadline", type=float, required=True)
    args = parser.parse_args()
    end = time.monotonic() + args.deadline
    answers, slowest, pairs = collections.Counter(), 0.0, 0
    for k in range(args.pairs):
        if time.monotonic() + 2 * args.stop > end:
            break
        first, _ = get(args.proxy, args.url, args.stop + 10)
        answers["first " + first] += 1
        time.sleep(args.start + k * (args.stop - args.start) / args.pairs)
        second, seconds = get(args.proxy, args.url, args.stop + 10)
        answers[second] += 1
        slowest = max(slowest, seconds)
        pairs += 1
    print(json.dumps({"pairs": pairs, "answers": answers, "slowest": round(slowest, 3)}))


if __name__ == "__main__":
    main()
