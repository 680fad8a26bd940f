#!/usr/bin/env python3
"""A git server over HTTPS for pinproxy's CONNECT tests: smart HTTP through
`git http-backend` (the CGI program git ships), served over TLS by Python's
ssl module (stdlib only).

Binds 127.0.0.1 on an ephemeral port, writes the port to --ready-file, and
serves HTTP/1.1 keep-alive, one thread per connection. Every request runs
`git http-backend` with the CGI variables of RFC 3875 (the request's fields
as HTTP_*, so Git-Protocol reaches it as GIT_PROTOCOL) over --root as
GIT_PROJECT_ROOT with every repository exported; the request body
(Content-Length or chunked) is its stdin, its output the response, with
Content-Length. One JSON line per request goes to --events:
{"method", "path", "status", "body_bytes"} (the path without the query).
"""
import argparse, json, os, ssl, subprocess, threading

import peer

LOCK = threading.Lock()


class Reader:
    """Buffered reads over the TLS socket."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("peer closed")
        self.buf += data

    def line(self):
        while b"\n" not in self.buf:
            if len(self.buf) > 65536:
                raise ValueError("line too long")
            self._fill()
        head, _, self.buf = self.buf.partition(b"\n")
        return head.rstrip(b"\r")

    def exactly(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data


def read_body(reader, headers):
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            size = int(reader.line().split(b";")[0].strip(), 16)
            if size == 0:
                while reader.line():  # the trailer section ends with an empty line
                    pass
                return bytes(body)
            body += reader.exactly(size)
            reader.line()
    return reader.exactly(int(headers.get("content-length", "0")))


def run_backend(opts, method, target, headers, body):
    """(status line, [(name, value)], body) of `git http-backend` for one request."""
    path, _, query = target.partition("?")
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": opts.root,
                   "GIT_HTTP_EXPORT_ALL": "1", "GATEWAY_INTERFACE": "CGI/1.1", "SERVER_PROTOCOL": "HTTP/1.1",
                   "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
                   "REMOTE_ADDR": "127.0.0.1", "CONTENT_LENGTH": str(len(body)),
                   "CONTENT_TYPE": headers.get("content-type", "")}
    for name, value in headers.items():
        if name not in ("content-length", "content-type", "transfer-encoding"):
            environment["HTTP_" + name.upper().replace("-", "_")] = value
    if "git-protocol" in headers:
        environment["GIT_PROTOCOL"] = headers["git-protocol"]
    done = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=environment, timeout=120)
    # CGI allows either line ending; the head ends at whichever blank line comes first.
    ends = [(done.stdout.find(s), s) for s in (b"\r\n\r\n", b"\n\n") if s in done.stdout]
    head, content = b"", done.stdout
    if ends:
        index, separator = min(ends)
        head, content = done.stdout[:index], done.stdout[index + len(separator):]
    status, fields = "200 OK", []
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = value.strip()
        elif name:
            fields.append((name.strip(), value.strip()))
    if done.returncode != 0 and not done.stdout:
        status, content = "500 Internal Server Error", done.stderr
    return status, fields, content


def handle(raw, context, opts):
    try:
        raw.settimeout(120)
        tls = context.wrap_socket(raw, server_side=True)
        reader = Reader(tls)
        while True:
            request_line = reader.line()
            if not request_line:
                continue
            method, target, version = request_line.decode("latin-1").split(" ", 2)
            headers = {}
            while True:
                line = reader.line()
                if not line:
                    break
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = read_body(reader, headers)
            status, fields, content = run_backend(opts, method, target, headers, body)
            keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
            lines = ["HTTP/1.1 " + status] + ["%s: %s" % field for field in fields]
            lines += ["Content-Length: %d" % len(content), "Connection: " + ("keep-alive" if keep else "close")]
            tls.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + content)
            with LOCK, open(opts.events, "a") as events:
                events.write(json.dumps({"method": method, "path": target.partition("?")[0],
                                         "status": int(status.split(" ")[0]), "body_bytes": len(content)}) + "\n")
            if not keep:
                break
        tls.close()
    except (EOFError, OSError, ValueError, ssl.SSLError, subprocess.TimeoutExpired):
        pass  # the client went away or spoke nonsense: nothing to serve
    finally:
        raw.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--events", required=True)
    opts = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(opts.cert, opts.key)
    peer.serve_forever(peer.listen(0), opts.ready_file, handle, context, opts)


if __name__ == "__main__":
    main()
