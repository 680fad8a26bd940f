#!/usr/bin/env python3
"""Uploads a body through pinproxy the way Python's http.client does, and so
requests, urllib3 and pip: the whole body is written before the response is
read. A proxy that answers early (a refusal, an upstream's early 413) and
then closes with body bytes unread makes its kernel reset the connection,
and such a client sees its write fail instead of the answer (RFC 9112 §9.6).

Plain (`--proxy-port` with an absolute URL: the forward proxy), or through
an intercepted CONNECT (`--tunnel host:port --ca root.pem`, http.client's
set_tunnel). Prints one JSON object on stdout:

  {"send_error": null | "ConnectionResetError: ...", "status": 403 | null,
   "proxy_status": the answer's Proxy-Status field | null, "body": "...",
   "read_error": null | "...", "sent": bytes written}

After a send error it still tries to read the answer, as urllib3 does after a
broken pipe, so both what failed and what could still be read are reported.
"""
import argparse, http.client, json, socket, ssl


def parse_arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--url", required=True, help="the request target: absolute (forward) or a path (--tunnel)")
    parser.add_argument("--tunnel", help="host:port to CONNECT to; the request then runs inside TLS")
    parser.add_argument("--ca", help="the root the intercepted certificate is verified with")
    parser.add_argument("--size", type=int, default=32 << 20, help="body bytes")
    parser.add_argument("--header", action="append", default=[], help="an extra field, 'Name: value'")
    parser.add_argument("--timeout", type=float, default=20)
    return parser.parse_args()


class CountingSocket:
    """Counts what `sendall` got out before it failed."""

    def __init__(self, sock):
        self.sock, self.sent = sock, 0

    def sendall(self, data):
        view = memoryview(data)
        while view:
            count = self.sock.send(view[:65536])
            self.sent += count
            view = view[count:]

    def __getattr__(self, name):
        return getattr(self.sock, name)


def main():
    args = parse_arguments()
    if args.tunnel:
        host, port = args.tunnel.rsplit(":", 1)
        context = ssl.create_default_context(cafile=args.ca)
        connection = http.client.HTTPSConnection("127.0.0.1", args.proxy_port, timeout=args.timeout, context=context)
        connection.set_tunnel(host, int(port))
    else:
        connection = http.client.HTTPConnection("127.0.0.1", args.proxy_port, timeout=args.timeout)
    connection.connect()
    counting = CountingSocket(connection.sock)
    connection.sock = counting
    headers = dict(field.split(": ", 1) for field in args.header)
    result = {"send_error": None, "status": None, "proxy_status": None, "body": "", "read_error": None, "sent": 0}
    try:
        connection.request("POST", args.url, body=b"u" * args.size, headers=headers)
    except OSError as error:
        result["send_error"] = "%s: %s" % (type(error).__name__, error)
    result["sent"] = counting.sent
    try:
        response = connection.getresponse()
        result["status"] = response.status
        result["proxy_status"] = response.getheader("Proxy-Status")
        result["body"] = response.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException) as error:
        result["read_error"] = "%s: %s" % (type(error).__name__, error)
    connection.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
