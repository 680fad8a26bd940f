#!/usr/bin/env python3
"""Sends COUNT sequential GET /100b requests to 127.0.0.1:PORT, each on a new
connection with Connection: close, and fails unless every answer is a 200 with
the 100-byte body. Used to count instructions per fresh upstream handshake
under callgrind (bench/run.sh), where a load generator would only add noise.
"""
import argparse
import http.client
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--count", type=int, required=True)
args = parser.parse_args()
for index in range(args.count):
    connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)
    connection.request("GET", "/100b", headers={"Connection": "close"})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    if response.status != 200 or len(body) != 100:
        sys.exit(f"request {index + 1}: status {response.status}, {len(body)} body bytes")
