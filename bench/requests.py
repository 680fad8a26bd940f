#!/usr/bin/env python3
"""Sends COUNT sequential GET /100b requests to 127.0.0.1:PORT and fails unless
every answer is a 200 with the 100-byte body. Used to count instructions per
request under callgrind (bench/run.sh, bench/request-cost.sh), where a load
generator would only add noise.

Default: each request on a new connection with Connection: close (a fresh
upstream handshake per request when the proxy reuses nothing). --keep-alive:
all requests on one persistent connection (the keep-alive path).
"""
import argparse
import http.client
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--count", type=int, required=True)
parser.add_argument("--keep-alive", action="store_true")
# An absolute-form target (a forward proxy's request, RFC 9112 §3.2.2), e.g.
# http://bench.example/100b; http.client then sends its authority as Host.
parser.add_argument("--url", default="/100b")
args = parser.parse_args()
connection = None
for index in range(args.count):
    if connection is None:
        connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)
    headers = {} if args.keep_alive else {"Connection": "close"}
    connection.request("GET", args.url, headers=headers)
    response = connection.getresponse()
    body = response.read()
    if not args.keep_alive or response.will_close:
        connection.close()
        connection = None
    if response.status != 200 or len(body) != 100:
        sys.exit(f"request {index + 1}: status {response.status}, {len(body)} body bytes")
    if args.keep_alive and connection is None:
        sys.exit(f"request {index + 1}: the proxy closed a keep-alive connection")
