#!/usr/bin/env python3
"""A TLS origin that records what it received, for pinproxy's desync tests.

Binds 127.0.0.1 on an ephemeral port, writes it to --ready-file, and serves
HTTP/1.1 keep-alive over TLS, one thread per connection. For every connection
it appends the raw bytes it received to --raw-dir/conn-<id>.bin, and for every
request it parsed one JSON line to --events:

  {"event": "request", "conn": id, "seq": n, "method", "target",
   "body_length", "body_sha256", "fields": [lower-case names]}
  {"event": "head", "conn", "seq", "target"}     (as soon as a head is read)
  {"event": "closed", "conn", "reason"}          (when the connection ends)

It parses the way many real origins do, leniently, so that anything ambiguous
in what pinproxy forwards shows up as a difference: field names lower-cased
with '_' read as '-' (CGI/WSGI), Transfer-Encoding containing "chunked" wins
over Content-Length, Content-Length read with int() (leading zeros, '+'),
chunk sizes with int(..., 16) after dropping extensions.

Every response is 200 with a JSON body {"conn", "seq", "target",
"body_length"} and X-Origin-Connection; keep-alive unless the request closes.
Special targets make the response itself hostile:
  /respond/nominating/<name>   adds "Connection: <name>" to a Content-Length response
  /respond/chunked-nominating/<name>   the same with a chunked body
"""
import argparse, hashlib, itertools, json, os, ssl, threading, time

import peer

LOCK = threading.Lock()
COUNTER = itertools.count(1)


class Reader:
    def __init__(self, sock, raw):
        self.sock, self.buf, self.raw = sock, b"", raw

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("peer closed")
        self.raw.write(data)
        self.raw.flush()
        self.buf += data

    def line(self):
        while b"\n" not in self.buf:
            if len(self.buf) > 1 << 20:
                raise ValueError("line too long")
            self._fill()
        line, _, self.buf = self.buf.partition(b"\n")
        return line.rstrip(b"\r")

    def exactly(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data


def emit(events, record):
    with LOCK:
        events.write(json.dumps(record) + "\n")
        events.flush()


def read_body(reader, fields):
    if "chunked" in fields.get("transfer-encoding", "").lower():
        body = b""
        while True:
            size = int(reader.line().split(b";")[0].strip(), 16)
            if size == 0:
                while reader.line():
                    pass
                return body
            body += reader.exactly(size)
            reader.line()
    if "content-length" in fields:
        return reader.exactly(int(fields["content-length"]))
    return b""


def respond(sock, conn, seq, target, body_length, keep):
    body = json.dumps({"conn": conn, "seq": seq, "target": target, "body_length": body_length}).encode()
    lines = ["HTTP/1.1 200 OK", "Content-Type: application/json", "X-Origin-Connection: %d" % conn]
    parts = target.split("/")
    if len(parts) == 4 and parts[1] == "respond" and parts[2] in ("nominating", "chunked-nominating"):
        lines.append("Connection: %s" % parts[3])
        if parts[2] == "chunked-nominating":
            lines.append("Transfer-Encoding: chunked")
            payload = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        else:
            lines.append("Content-Length: %d" % len(body))
            payload = body
    else:
        lines.append("Content-Length: %d" % len(body))
        payload = body
    if not keep:
        lines.append("Connection: close")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)


def serve(sock, conn, opts):
    reason = "client closed"
    with open(os.path.join(opts.raw_dir, "conn-%d.bin" % conn), "wb") as raw:
        reader = Reader(sock, raw)
        try:
            for seq in itertools.count(1):
                line = reader.line()
                if not line:
                    line = reader.line()  # one empty line before a request is tolerated
                method, target, version = line.decode("latin-1").split(" ", 2)
                fields, names = {}, []
                while True:
                    field = reader.line()
                    if not field:
                        break
                    name, _, value = field.decode("latin-1").partition(":")
                    name = name.strip().lower().replace("_", "-")
                    names.append(name)
                    fields[name] = value.strip()
                emit(opts.events, {"event": "head", "conn": conn, "seq": seq, "target": target})
                body = read_body(reader, fields)
                emit(opts.events, {"event": "request", "conn": conn, "seq": seq, "method": method, "target": target,
                                   "body_length": len(body), "body_sha256": hashlib.sha256(body).hexdigest(),
                                   "fields": names})
                keep = version == "HTTP/1.1" and fields.get("connection", "").lower() != "close"
                respond(sock, conn, seq, target, len(body), keep)
                if not keep:
                    reason = "request closed"
                    break
        except EOFError:
            pass
        except Exception as error:  # a request this lenient parser cannot read at all
            reason = "unparsable: %s" % error
        finally:
            emit(opts.events, {"event": "closed", "conn": conn, "reason": reason})
            try:
                sock.close()
            except OSError:
                pass


def handshake_and_serve(client, context, conn, opts):
    try:
        tls = context.wrap_socket(client, server_side=True)
    except (ssl.SSLError, OSError):
        client.close()
        emit(opts.events, {"event": "closed", "conn": conn, "reason": "handshake failed"})
        return
    serve(tls, conn, opts)


def exit_with_parent():
    """A test runner that dies without stopping us must not leave us behind."""
    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--events", required=True)
    parser.add_argument("--raw-dir", required=True)
    opts = parser.parse_args()
    opts.events = open(opts.events, "a")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(opts.cert, opts.key)
    listener = peer.listen(backlog=256)
    peer.announce(opts.ready_file, listener.getsockname()[1])
    threading.Thread(target=exit_with_parent, daemon=True).start()
    # Its own accept loop: connections are numbered in the order they are accepted.
    while True:
        client, _ = listener.accept()
        threading.Thread(target=handshake_and_serve, args=(client, context, next(COUNTER), opts), daemon=True).start()


if __name__ == "__main__":
    main()
