#!/usr/bin/env python3
"""A loopback DNS server for pinproxy's tests: answers every query with a
fixed RCODE (NXDOMAIN by default, or SERVFAIL), or never answers (--silent),
so DNS failures are tested without any query leaving the machine.

  dns.py --ready-file F [--rcode 3|2] [--silent]
Binds 127.0.0.1 on an ephemeral UDP port and writes the port to F.
"""
import argparse, signal, socket, sys

import peer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--rcode", type=int, default=3)
    parser.add_argument("--silent", action="store_true")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    peer.announce(args.ready_file, sock.getsockname()[1])
    while True:
        query, client = sock.recvfrom(4096)
        if args.silent or len(query) < 12:
            continue
        # Header: same id, QR=1, opcode copied, RD copied, RA=1, rcode; question echoed.
        flags = 0x8000 | (query[2] & 0x79) << 8 | 0x80 | (args.rcode & 0xF)
        answer = query[:2] + flags.to_bytes(2, "big") + query[4:6] + b"\x00\x00\x00\x00\x00\x00" + query[12:]
        sock.sendto(answer, client)


if __name__ == "__main__":
    main()
