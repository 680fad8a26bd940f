#!/usr/bin/env python3
"""An HTTPS client behind pinproxy's CONNECT that misbehaves on purpose, for
the hostile-client tests (Tests/PinproxyRuntimeTests/EndToEnd/Connect).

It runs once and prints one JSON object on stdout. Its TLS runs through
memory BIOs (ssl.MemoryBIO), so the script, not OpenSSL, decides how the
ClientHello reaches the wire: cut into TLS records of --record-size bytes,
written --segment-size bytes at a time with TCP_NODELAY (one segment per
write), sent with the CONNECT head before the 200 (--pipeline), only its
first --hello-bytes (a client that stalls mid-handshake), or not at all
(--silent). --alpn-padding grows the ClientHello with protocol names that
precede http/1.1 in the ALPN list. After the handshake the --request texts
are sent (one at a time, or all in one write with --pipeline-requests) and
the responses parsed. The client's last handshake flight (its Finished)
leaves with the first request, in one write, as a client that writes at
once after the handshake sends it; --flush-finished sends it on its own
and waits for pinproxy's session tickets before the first request.

  {"connect_status": 200, "connect_head": "...", "hello_length": n,
   "hello_records": k, "handshake": "ok" | "failed" | "closed" | "timeout" | "not_tried",
   "tls_error": "...", "alpn": "http/1.1" | null, "version": "TLSv1.3",
   "peer_san": [...], "responses": [{"status", "head", "body"}],
   "ending": "closed" | "open", "closed_after": seconds since the last byte
   was written (a stalled or silent client: how long pinproxy waited)}
"""
import argparse, json, socket, ssl, sys, time


def parse_arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--target", required=True, help="host:port of the CONNECT")
    parser.add_argument("--sni", help="server_name to send (default: the CONNECT host)")
    parser.add_argument("--no-sni", action="store_true")
    parser.add_argument("--ca", help="the root to verify the server with (none: no verification)")
    parser.add_argument("--alpn", action="append", help="protocols to offer (default: http/1.1)")
    parser.add_argument("--alpn-padding", type=int, default=0, help="bytes of extra ALPN names before the others")
    parser.add_argument("--pipeline", action="store_true", help="send the ClientHello with the CONNECT head")
    parser.add_argument("--record-size", type=int, default=0, help="re-frame the ClientHello in records of this many bytes")
    parser.add_argument("--segment-size", type=int, default=0, help="write the ClientHello this many bytes at a time")
    parser.add_argument("--segment-delay", type=float, default=0.001)
    parser.add_argument("--hello-bytes", type=int, default=-1, help="send only this much of the ClientHello, then wait")
    parser.add_argument("--silent", action="store_true", help="send nothing after the 200, then wait")
    parser.add_argument("--request", action="append", default=[], help="a raw HTTP request (\\n becomes CRLF)")
    parser.add_argument("--pipeline-requests", action="store_true")
    parser.add_argument("--flush-finished", action="store_true", help="send the Finished before any request")
    parser.add_argument("--timeout", type=float, default=10)
    return parser.parse_args()


class Buffered:
    """Bytes from `source` (a callable, b"" at the end of the stream) kept until used."""

    def __init__(self, source):
        self.source, self.buffer, self.ended = source, b"", False

    def more(self):
        data = self.source()
        if not data:
            self.ended = True
            return False
        self.buffer += data
        return True

    def take(self):
        data, self.buffer = self.buffer, b""
        return data

    def head(self):
        """An HTTP head up to its blank line (consumed), as text; None at the end."""
        while b"\r\n\r\n" not in self.buffer:
            if not self.more():
                return None
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        return head.decode("latin-1")


class Connection:
    """The TCP socket and what was read from it but not yet used."""

    def __init__(self, opts):
        self.opts = opts
        self.sock = socket.create_connection(("127.0.0.1", opts.proxy_port), timeout=opts.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.received = Buffered(self._recv)
        self.last_write = time.monotonic()

    def _recv(self):
        try:
            return self.sock.recv(65536)
        except ConnectionResetError:
            return b""

    def send(self, data, segment=0):
        if segment <= 0:
            self.sock.sendall(data)
        else:
            for start in range(0, len(data), segment):
                self.sock.sendall(data[start:start + segment])
                time.sleep(self.opts.segment_delay)
        self.last_write = time.monotonic()

    def feed(self, incoming, outgoing):
        """What TLS wants after SSLWantReadError: its output sent, input from the socket."""
        out = outgoing.read()
        if out:
            self.send(out)
        if not self.received.buffer and not self.received.more():
            incoming.write_eof()
        else:
            incoming.write(self.received.take())

    def wait_for_close(self):
        """Reads (and drops) until the peer closes or the timeout passes."""
        try:
            while self.received.more():
                self.received.take()
            return "closed", time.monotonic() - self.last_write
        except socket.timeout:
            return "open", None


def reframe(flight, record_size):
    """The same handshake bytes in records of at most `record_size` bytes
    (RFC 8446 §5.1: a handshake message may span records)."""
    if record_size <= 0:
        return flight, count_records(flight)
    payload, offset, header = b"", 0, None
    while offset + 5 <= len(flight):
        header = flight[offset:offset + 5]
        length = int.from_bytes(flight[offset + 3:offset + 5], "big")
        payload += flight[offset + 5:offset + 5 + length]
        offset += 5 + length
    out = b""
    for start in range(0, len(payload), record_size):
        piece = payload[start:start + record_size]
        out += header[:3] + len(piece).to_bytes(2, "big") + piece
    return out, (len(payload) + record_size - 1) // record_size


def count_records(flight):
    offset, count = 0, 0
    while offset + 5 <= len(flight):
        offset += 5 + int.from_bytes(flight[offset + 3:offset + 5], "big")
        count += 1
    return count


def make_tls(opts, host):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if opts.ca:
        context.load_verify_locations(opts.ca)
        # The name checked is the one sent; without SNI nothing names the host.
        context.check_hostname = not opts.no_sni
    else:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    # --alpn "" offers none: no ALPN extension at all.
    protocols = [name for name in (opts.alpn or ["http/1.1"]) if name]
    if opts.alpn_padding:
        filler, left, index = [], opts.alpn_padding, 0
        while left > 0:
            size = min(200, left)
            filler.append(("x%d-" % index).ljust(size, "p")[:size])
            left -= size
            index += 1
        protocols = filler + protocols
    if protocols:
        context.set_alpn_protocols(protocols)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    server_name = None if opts.no_sni else (opts.sni or host)
    return context.wrap_bio(incoming, outgoing, server_hostname=server_name), incoming, outgoing


def first_flight(tls, outgoing):
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def handshake(conn, tls, incoming, outgoing):
    """Runs the rest of the handshake; (outcome, error text)."""
    while True:
        try:
            tls.do_handshake()
            return "ok", None
        except ssl.SSLWantReadError:
            try:
                conn.feed(incoming, outgoing)
            except socket.timeout:
                return "timeout", None
        except ssl.SSLEOFError as error:
            return "closed", str(error)
        except ssl.SSLError as error:
            # An alert from pinproxy reads as e.g. TLSV1_UNRECOGNIZED_NAME.
            return "failed", "%s: %s" % (error.reason, error)


def tls_read(conn, tls, incoming, outgoing):
    """Some plaintext; b"" at the end of the stream (close_notify or a close)."""
    while True:
        try:
            return tls.read(65536)
        except ssl.SSLWantReadError:
            conn.feed(incoming, outgoing)
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            return b""


def tls_write(conn, tls, outgoing, data):
    tls.write(data)
    conn.send(outgoing.read())


class ResponseReader:
    """Parses HTTP/1.1 responses framed by Content-Length (or without a body) from TLS plaintext."""

    def __init__(self, conn, tls, incoming, outgoing):
        self.plain = Buffered(lambda: tls_read(conn, tls, incoming, outgoing))

    def response(self):
        text = self.plain.head()
        if text is None:
            return None
        length = 0
        for line in text.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        while len(self.plain.buffer) < length and self.plain.more():
            pass
        body, self.plain.buffer = self.plain.buffer[:length], self.plain.buffer[length:]
        return {"status": int(text.split(" ")[1]), "head": text, "body": body.decode("latin-1")}


def main(result):
    opts = parse_arguments()
    host = opts.target.rsplit(":", 1)[0]
    conn = Connection(opts)
    tls, incoming, outgoing = make_tls(opts, host)
    hello, records = reframe(first_flight(tls, outgoing), opts.record_size)
    result["hello_length"], result["hello_records"] = len(hello), records
    if opts.hello_bytes >= 0:
        hello = hello[:opts.hello_bytes]
    connect = ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (opts.target, opts.target)).encode()
    if opts.pipeline:
        conn.send(connect)
        conn.send(hello, opts.segment_size)
    else:
        conn.send(connect)
    head = conn.received.head()
    if head is None:
        result["ending"] = "closed"
        return
    result["connect_head"] = head
    result["connect_status"] = int(head.split(" ")[1])
    if result["connect_status"] != 200:
        result["ending"], result["closed_after"] = conn.wait_for_close()
        return
    if opts.silent or opts.hello_bytes >= 0:
        if not opts.pipeline and not opts.silent:
            conn.send(hello, opts.segment_size)
        result["handshake"] = "stalled"
        result["ending"], result["closed_after"] = conn.wait_for_close()
        return
    if not opts.pipeline:
        conn.send(hello, opts.segment_size)
    result["handshake"], result["tls_error"] = handshake(conn, tls, incoming, outgoing)
    if result["handshake"] != "ok":
        result["ending"], result["closed_after"] = conn.wait_for_close()
        return
    if opts.flush_finished:
        # The Finished alone, then pinproxy's session tickets (sent once it has
        # read the Finished) before any request: the two never share a read.
        conn.send(outgoing.read())
        conn.sock.settimeout(2)
        try:
            conn.received.more()
        except socket.timeout:
            pass
        conn.sock.settimeout(opts.timeout)
    result["version"] = tls.version()
    result["alpn"] = tls.selected_alpn_protocol()
    certificate = tls.getpeercert() if opts.ca else None
    result["peer_san"] = [value for _, value in (certificate or {}).get("subjectAltName", ())]
    requests = [text.replace("\\n", "\n").replace("\n", "\r\n").encode() for text in opts.request]
    reader = ResponseReader(conn, tls, incoming, outgoing)
    if opts.pipeline_requests and requests:
        tls_write(conn, tls, outgoing, b"".join(requests))
        for _ in requests:
            response = reader.response()
            if response is None:
                break
            result["responses"].append(response)
    else:
        for request in requests:
            tls_write(conn, tls, outgoing, request)
            response = reader.response()
            if response is None:
                break
            result["responses"].append(response)
    # Whether pinproxy closes the connection now (Connection: close) or keeps it.
    conn.sock.settimeout(1.0)
    try:
        if reader.plain.ended or not reader.plain.more():
            result["ending"] = "closed"
        else:
            result["unexpected"] = reader.plain.buffer.decode("latin-1")
    except socket.timeout:
        result["ending"] = "open"


if __name__ == "__main__":
    outcome = {"connect_status": None, "handshake": "not_tried", "responses": [], "ending": "open"}
    try:
        main(outcome)
    except Exception as error:  # the test reads what went wrong, and what came before, from stdout
        outcome["script_error"] = "%s: %s" % (type(error).__name__, error)
    json.dump(outcome, sys.stdout)
    sys.stdout.write("\n")
