#!/usr/bin/env python3
"""An HTTPS client through CONNECT whose first request leaves in the same
write (so, on loopback, the same TCP segment) as its TLS Finished, as Java's
HttpClient and, now and then, curl send it. Python 3 stdlib only.

  coalescing_tls_client.py --proxy-port P --host H --ca FILE --target /path

It sends `CONNECT H:443`, reads the answer, runs the TLS handshake over
memory BIOs so that it decides when bytes go to the socket, and once its
Finished is written it encrypts `GET <target>` behind it and sends both with
one sendall. Then it reads the response (Content-Length bodies only) for up
to --timeout seconds. stdout gets one JSON line:
{"connect": "<status line>", "status": <int or null>, "body_length": <int>,
 "coalesced": <bool: Finished and request left in one write>, "error": <text or null>}.
"""
import argparse, json, socket, ssl, sys, time


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(4096)
        if not piece:
            raise EOFError("proxy closed before answering CONNECT")
        data += piece
    return data.split(b"\r\n", 1)[0].decode("latin-1")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--timeout", type=float, default=5)
    opts = parser.parse_args()
    result = {"connect": None, "status": None, "body_length": 0, "coalesced": False, "error": None}
    sock = socket.create_connection(("127.0.0.1", opts.proxy_port), timeout=opts.timeout)
    try:
        sock.sendall(("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (opts.host, opts.host)).encode())
        result["connect"] = read_head(sock)
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = ssl.create_default_context(cafile=opts.ca).wrap_bio(incoming, outgoing, server_hostname=opts.host)
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                sock.sendall(outgoing.read())
                piece = sock.recv(65536)
                if not piece:
                    raise EOFError("proxy closed during the handshake")
                incoming.write(piece)
        finished = outgoing.pending
        tls.write(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (opts.target, opts.host)).encode())
        result["coalesced"] = finished > 0 and outgoing.pending > finished
        sock.sendall(outgoing.read())
        response, deadline = b"", time.monotonic() + opts.timeout
        while True:
            head, separator, body = response.partition(b"\r\n\r\n")
            if separator:
                fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
                length = int(fields.get(b"Content-Length", b"0").strip())
                if len(body) >= length:
                    result["status"] = int(head.split(b" ")[1])
                    result["body_length"] = len(body)
                    break
            try:
                response += tls.read(65536)
                continue
            except ssl.SSLWantReadError:
                pass
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            piece = sock.recv(65536)
            if not piece:
                raise EOFError("proxy closed before the response was complete")
            incoming.write(piece)
    except (OSError, EOFError, ssl.SSLError, ValueError) as error:
        result["error"] = "%s: %s" % (type(error).__name__, error)
    finally:
        sock.close()
    print(json.dumps(result))
    sys.exit(0 if result["status"] is not None else 1)


if __name__ == "__main__":
    main()
