#!/usr/bin/env python3
"""A loopback report collector for pinproxy's tests: accepts HTTP POSTs and
appends each body as one line (bodies are single-line JSON) to --out.

  collector.py --ready-file F --out BODIES
Binds 127.0.0.1 on an ephemeral port and writes the port to F.
"""
import argparse, http.server, signal, sys

import peer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with open(args.out, "ab") as out:
                out.write(self.path.encode() + b" " + self.headers.get("Content-Type", "").encode() + b" " + body + b"\n")
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    peer.announce(args.ready_file, server.server_address[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
