#!/usr/bin/env python3
"""A real TLS upstream for pinproxy's end-to-end tests (Python 3 stdlib only).

Binds 127.0.0.1 on --port (0 = ephemeral), writes the port to --ready-file,
serves HTTP/1.1 keep-alive over TLS, one thread per connection:

  GET|HEAD /bytes/N    N bytes, byte i = i % 251, Content-Length
  GET|HEAD /chunked/N  the same bytes, chunked
  GET /slow/MS/N       N bytes as /bytes/N, after MS milliseconds (a slow upstream)
  POST /echo-length    "<length> <sha256 hex>\\n" of the request body
                       (Content-Length or chunked; honours Expect: 100-continue)
  GET /stats           {"handshakes", "requests", "connections",
                        "app_bytes_received_by_rejected", "open_connections",
                        "slow_in_flight", "max_slow_in_flight", "resumed"}
  GET /cut/KIND/END    a response cut after its head and "hello": KIND is
                       `close` (no framing: the body ends at the close) or
                       `chunked` (one chunk); 0.2 s after the head the
                       connection ends by END: `notify` (close_notify, then
                       close: a `close` body is then whole), `eof` (TCP FIN
                       without close_notify), `reset` (TCP RST), `stall`
                       (nothing more until the peer closes), or, for
                       `chunked`, `bad-chunk` (an invalid chunk-size line,
                       then nothing until the peer closes)

Every connection's summary goes to --events as one JSON line
({"handshake_ok", "app_bytes", "requests", "error"}), so a test can prove that a
connection pinproxy rejected delivered zero application bytes. A connection
counts as rejected when its handshake failed or it closed before one complete
request; its application bytes are what would have leaked.

Fault modes: --stall-handshake (accept TCP, never answer TLS), --close-mid-body
(send half of a /bytes body after a full Content-Length, then close).
"""
import argparse, hashlib, json, os, socket, ssl, struct, tempfile, threading, time

import peer

PATTERN = bytes(range(251)) * (65536 // 251 + 2)  # any 64 KiB window at offset % 251
STATS = {"handshakes": 0, "requests": 0, "connections": 0, "app_bytes_received_by_rejected": 0,
         "open_connections": 0, "slow_in_flight": 0, "max_slow_in_flight": 0, "resumed": 0}
LOCK = threading.Lock()


class Reader:
    """Buffered reads over the TLS socket that count every application byte received."""

    def __init__(self, sock):
        self.sock, self.buf, self.total = sock, b"", 0

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("peer closed")
        self.total += len(data)
        self.buf += data

    def line(self, limit=65536):
        while b"\n" not in self.buf:
            if len(self.buf) > limit:
                raise ValueError("line too long")
            self._fill()
        head, _, self.buf = self.buf.partition(b"\n")
        return head.rstrip(b"\r")

    def exactly(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data


def pattern(offset, length):
    """Bytes [offset, offset+length) of the deterministic stream, length <= 64 KiB."""
    start = offset % 251
    return PATTERN[start:start + length]


def send_pattern(sock, n, limit=None, chunked=False):
    sent, stop = 0, n if limit is None else limit
    while sent < stop:
        piece = pattern(sent, min(65536, stop - sent))
        sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
        sent += len(piece)
    if chunked:
        sock.sendall(b"0\r\n\r\n")


def read_body(reader, headers, sock):
    if headers.get("expect", "").lower() == "100-continue":
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            size = int(reader.line().split(b";")[0].strip(), 16)
            if size == 0:
                while reader.line():  # trailer section ends with an empty line
                    pass
                return bytes(body)
            body += reader.exactly(size)
            reader.line()
    return reader.exactly(int(headers.get("content-length", "0")))


def respond(sock, status, headers, body=b"", head_only=False):
    lines = ["HTTP/1.1 %s" % status] + ["%s: %s" % kv for kv in headers]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + (b"" if head_only else body))


def serve_cut(sock, kind, end):
    """GET /cut/KIND/END: the head and "hello", then the connection ends by END."""
    framing = [("Transfer-Encoding", "chunked")] if kind == "chunked" else []
    respond(sock, "200 OK", [("Content-Type", "text/plain")] + framing,
            b"5\r\nhello\r\n" if kind == "chunked" else b"hello")
    time.sleep(0.2)  # the head and "hello" are relayed before the end
    if end == "notify":
        sock.unwrap()
    elif end == "eof":
        sock.shutdown(socket.SHUT_RDWR)  # beneath TLS: no close_notify
    elif end == "reset":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    elif end in ("bad-chunk", "stall"):
        if end == "bad-chunk":
            sock.sendall(b"zz\r\nworld\r\n0\r\n\r\n")
        try:
            while sock.recv(65536):
                pass
        except (OSError, ssl.SSLError):
            pass


def serve_request(sock, reader, opts):
    """Handles one request; returns (handled a request, keep the connection open)."""
    request_line = reader.line()
    if not request_line:
        return False, True  # tolerate a stray CRLF between requests (RFC 9112 §2.2)
    method, target, version = request_line.decode("latin-1").split(" ", 2)
    headers = {}
    while True:
        line = reader.line()
        if not line:
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = read_body(reader, headers, sock) if method == "POST" else b""
    with LOCK:
        STATS["requests"] += 1
    keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
    conn = [("Connection", "keep-alive" if keep else "close")]
    head = method == "HEAD"
    parts = target.split("/")
    if method == "GET" and len(parts) == 4 and parts[1] == "slow" and parts[2].isdigit() and parts[3].isdigit():
        with LOCK:
            STATS["slow_in_flight"] += 1
            STATS["max_slow_in_flight"] = max(STATS["max_slow_in_flight"], STATS["slow_in_flight"])
        try:
            time.sleep(int(parts[2]) / 1000)
        finally:
            with LOCK:
                STATS["slow_in_flight"] -= 1
        n = int(parts[3])
        respond(sock, "200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", n)] + conn, head_only=True)
        send_pattern(sock, n)
    elif method in ("GET", "HEAD") and len(parts) == 3 and parts[1] in ("bytes", "chunked") and parts[2].isdigit():
        n = int(parts[2])
        if parts[1] == "bytes":
            respond(sock, "200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", n)] + conn, head_only=True)
            if not head:
                send_pattern(sock, n, limit=n // 2 if opts.close_mid_body else None)
                if opts.close_mid_body:
                    return True, False
        else:
            respond(sock, "200 OK", [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")] + conn, head_only=True)
            if not head:
                send_pattern(sock, n, chunked=True)
    elif (method == "GET" and len(parts) == 4 and parts[1] == "cut" and parts[2] in ("close", "chunked")
          and parts[3] in ("notify", "eof", "reset", "stall", "bad-chunk")
          and (parts[3] != "bad-chunk" or parts[2] == "chunked")):
        serve_cut(sock, parts[2], parts[3])
        return True, False
    elif method == "POST" and target == "/echo-length":
        text = ("%d %s\n" % (len(body), hashlib.sha256(body).hexdigest())).encode()
        respond(sock, "200 OK", [("Content-Type", "text/plain"), ("Content-Length", len(text))] + conn, text)
    elif method == "GET" and target == "/stats":
        with LOCK:
            text = json.dumps(STATS).encode()
        respond(sock, "200 OK", [("Content-Type", "application/json"), ("Content-Length", len(text))] + conn, text)
    else:
        text = b"not found\n"
        respond(sock, "404 Not Found", [("Content-Length", len(text))] + conn, text, head_only=head)
    return True, keep


def record(opts, summary):
    with LOCK:
        if not summary["handshake_ok"] or summary["requests"] == 0:
            STATS["app_bytes_received_by_rejected"] += summary["app_bytes"]
        if opts.events:
            with open(opts.events, "a") as events:
                events.write(json.dumps(summary) + "\n")


def handle(raw, context, opts):
    with LOCK:
        STATS["connections"] += 1
        STATS["open_connections"] += 1
    summary = {"handshake_ok": False, "app_bytes": 0, "requests": 0, "error": None}
    try:
        if opts.stall_handshake:
            while raw.recv(65536):  # hold the TCP connection, never answer the ClientHello
                pass
            return
        raw.settimeout(30)
        tls = context.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
        tls.do_handshake()
        summary["handshake_ok"] = True
        with LOCK:  # counted now, not at close: pooled connections stay open
            STATS["handshakes"] += 1
            STATS["resumed"] += int(tls.session_reused)
        reader = Reader(tls)
        try:
            while True:
                handled, keep = serve_request(tls, reader, opts)
                summary["requests"] += int(handled)
                if not keep:
                    break
        finally:
            summary["app_bytes"] = reader.total
        tls.close()
    except EOFError:
        pass  # the client closed between requests: the normal end of keep-alive
    except (OSError, ValueError, ssl.SSLError) as error:
        summary["error"] = "%s: %s" % (type(error).__name__, error)
    finally:
        raw.close()
        with LOCK:
            STATS["open_connections"] -= 1
        record(opts, summary)


def build_context(opts):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3 if opts.min_tls == "1.3" else ssl.TLSVersion.TLSv1_2
    if opts.ciphers:
        context.set_ciphers(opts.ciphers)
    certfile = opts.cert
    if opts.chain:  # leaf first, then the intermediates, as load_cert_chain expects
        bundle = tempfile.NamedTemporaryFile("wb", suffix=".pem", delete=False)
        for path in (opts.cert, opts.chain):
            with open(path, "rb") as part:
                bundle.write(part.read().rstrip(b"\n") + b"\n")
        bundle.close()
        certfile = bundle.name
    context.load_cert_chain(certfile, opts.key)
    if certfile != opts.cert:
        os.unlink(certfile)
    return context


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--chain")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--events")
    parser.add_argument("--min-tls", choices=["1.2", "1.3"], default="1.2")
    parser.add_argument("--ciphers")
    parser.add_argument("--stall-handshake", action="store_true")
    parser.add_argument("--close-mid-body", action="store_true")
    opts = parser.parse_args()
    context = build_context(opts)
    # A burst of a thousand pooled connects must not overflow the SYN queue.
    listener = peer.listen(opts.port, backlog=4096)
    peer.serve_forever(listener, opts.ready_file, handle, context, opts)


if __name__ == "__main__":
    main()
