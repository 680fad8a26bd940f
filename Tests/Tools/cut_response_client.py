#!/usr/bin/env python3
"""One GET through pinproxy's forward listener, read to the connection's end,
reporting how the connection ended: what a client whose response body ends at
the close has to go on (Python 3 stdlib only).

  cut_response_client.py --proxy-port P --host H --path /p [--version HTTP/1.0]
                         [--intercept --ca FILE]

Plain: sends `GET http://H/p VERSION` (absolute form) and reads until the
proxy closes. With --intercept: sends `CONNECT H:443`, runs TLS inside the
tunnel trusting only --ca, sends `GET /p VERSION` and reads until the end.
stdout gets one JSON line:
{"status_line": <first line or null>, "body": <bytes after the head, latin-1>,
 "end": "eof" | "reset" | "close_notify" | "eof_without_close_notify" | "timeout",
 "error": <text or null>}
`eof` is a TCP FIN on the plain connection. On TLS, `close_notify` is an
orderly close, and Python's ssl reports a FIN and a reset beneath TLS alike,
as `eof_without_close_notify` (`reset` when the reset comes first).
"""
import argparse, json, socket, ssl


def read_to_end(conn, result):
    data = b""
    try:
        while True:
            piece = conn.recv(65536)
            if not piece:
                result["end"] = "close_notify" if isinstance(conn, ssl.SSLSocket) else "eof"
                break
            data += piece
    except ConnectionResetError:
        result["end"] = "reset"
    except ssl.SSLEOFError:
        result["end"] = "eof_without_close_notify"
    except socket.timeout:
        result["end"] = "timeout"
    head, separator, body = data.partition(b"\r\n\r\n")
    if data:
        result["status_line"] = head.split(b"\r\n", 1)[0].decode("latin-1")
    result["body"] = body.decode("latin-1") if separator else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--version", default="HTTP/1.1")
    parser.add_argument("--intercept", action="store_true")
    parser.add_argument("--ca")
    parser.add_argument("--timeout", type=float, default=10)
    opts = parser.parse_args()
    result = {"status_line": None, "body": "", "end": None, "error": None}
    sock = socket.create_connection(("127.0.0.1", opts.proxy_port), timeout=opts.timeout)
    try:
        if opts.intercept:
            sock.sendall(("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (opts.host, opts.host)).encode())
            answer = b""
            while b"\r\n\r\n" not in answer:
                piece = sock.recv(4096)
                if not piece:
                    raise EOFError("proxy closed before answering CONNECT")
                answer += piece
            context = ssl.create_default_context(cafile=opts.ca)
            # A close without close_notify must raise, not read as an end (the default hides it).
            conn = context.wrap_socket(sock, server_hostname=opts.host, suppress_ragged_eofs=False)
            target = opts.path
        else:
            conn, target = sock, "http://%s%s" % (opts.host, opts.path)
        conn.sendall(("GET %s %s\r\nHost: %s\r\n\r\n" % (target, opts.version, opts.host)).encode())
        read_to_end(conn, result)
    except (OSError, EOFError, ssl.SSLError) as error:
        result["error"] = "%s: %s" % (type(error).__name__, error)
    finally:
        sock.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
