#!/usr/bin/env python3
"""A hostile TLS upstream for pinproxy's fault-injection tests (Python 3 stdlib only).

Binds 127.0.0.1 on an ephemeral port, writes the port to --ready-file, and
treats every connection according to --mode, one thread per connection:

  reset-handshake   read the ClientHello, then reset the TCP connection
                    (SO_LINGER 0 + close): no ServerHello is ever sent
  stall-response    complete the TLS handshake, read the request head,
                    never answer
  endless-head      complete the handshake, read the request head, then send
                    a status line and 1 MiB of one header line without CRLF
  garbage-records   complete the handshake, read the request head, then write
                    bytes that are not TLS records on the raw socket, under TLS
  early-answer      complete the handshake, read the request head only, answer
                    413 with Connection: close before any body byte is read,
                    then drain (lingering close, as nginx does) and close
  cl-and-te         complete the handshake, read the request head, answer with
                    both Content-Length and Transfer-Encoding: chunked
  bad-chunk         complete the handshake, read the request head, answer with
                    a chunked body whose framing breaks where the request
                    path says (BAD_CHUNK_BODIES), head and body in one write
  plain-http        no TLS at all: read what arrives (a ClientHello) and answer
                    400 in plain HTTP, as an HTTP server on that port would

Each connection's summary goes to --events as one JSON line
({"mode", "handshake_ok", "head_bytes", "drained", "error"}).
"""
import argparse, json, os, socket, ssl, struct, threading, time

import peer

LOCK = threading.Lock()
HOLD_SECONDS = 30  # how long a stalling mode keeps a connection before giving up


# bad-chunk's bodies by request path: each breaks chunk framing (RFC 9112 §7.1) at another
# place, after a first chunk "hello" where there is one.
BAD_CHUNK_BODIES = {
    "/first-size": b"zz\r\nhello\r\n0\r\n\r\n",
    "/later-size": b"5\r\nhello\r\nx5\r\nworld\r\n0\r\n\r\n",
    "/overflowing-size": b"5\r\nhello\r\nffffffffffffffff\r\nworld\r\n0\r\n\r\n",
    "/extension": b"5\r\nhello\r\n5;\x01\r\nworld\r\n0\r\n\r\n",
    "/bare-lf": b"5\r\nhello\r\n5\nworld\r\n0\r\n\r\n",
    "/data-end": b"5\r\nhelloXX0\r\n\r\n",
    "/trailer": b"5\r\nhello\r\n0\r\nX-Trailer: a\r\n folded\r\n\r\n",
}


def read_head(tls):
    """Reads until the end of a request head; returns it."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = tls.recv(65536)
        if not piece:
            raise EOFError("peer closed before the end of the request head")
        data += piece
    return data


def hold(sock):
    """Keeps the connection open, discarding input, until the peer closes."""
    sock.settimeout(HOLD_SECONDS)
    try:
        while sock.recv(65536):
            pass
    except (OSError, ssl.SSLError):
        pass


def reset_handshake(raw, summary):
    raw.settimeout(10)
    summary["head_bytes"] = len(raw.recv(65536))  # the ClientHello
    # SO_LINGER with a zero timeout turns close() into an RST.
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def plain_http(raw, summary):
    raw.settimeout(10)
    summary["head_bytes"] = len(raw.recv(65536))  # a ClientHello, to an HTTP server garbage
    raw.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n"
                b"Connection: close\r\n\r\nBad Request\n")


def serve_tls(raw, context, opts, summary):
    raw.settimeout(10)
    tls = context.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
    tls.do_handshake()
    summary["handshake_ok"] = True
    head = read_head(tls)
    summary["head_bytes"] = len(head)
    mode = opts.mode
    if mode == "stall-response":
        hold(tls)
    elif mode == "endless-head":
        tls.sendall(b"HTTP/1.1 200 OK\r\nX-Filler: ")
        filler = b"a" * 65536
        try:
            for _ in range(16):  # 1 MiB, never a CRLF
                tls.sendall(filler)
        except (OSError, ssl.SSLError) as error:
            summary["error"] = "stopped sending: %s" % type(error).__name__
        hold(tls)
    elif mode == "garbage-records":
        # Written on the descriptor, beneath the TLS layer: record type 0x48
        # ('H') is no TLS content type, so the client's record layer fails.
        os.write(tls.fileno(), b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" + bytes(range(256)))
        hold(tls)
    elif mode == "garbage-mid-body":
        # A proper head and the first body bytes over TLS, then bytes beneath
        # the TLS layer that are no record: the client's TLS fails mid-body.
        tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello")
        time.sleep(0.2)
        os.write(tls.fileno(), bytes(range(256)))
        hold(tls)
    elif mode == "early-answer":
        body = b"request body not wanted\n"
        tls.sendall(b"HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain\r\n"
                    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        # Lingering close: discard what the client still sends so that close()
        # does not reset the connection before the answer is read.
        tls.settimeout(5)
        drained = 0
        try:
            while True:
                piece = tls.recv(65536)
                if not piece:
                    break
                drained += len(piece)
        except (OSError, ssl.SSLError):
            pass
        summary["drained"] = drained
    elif mode == "cl-and-te":
        tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"5\r\nhello\r\n0\r\n\r\n")
        hold(tls)
    elif mode == "bad-chunk":
        path = head.split(b" ", 2)[1].decode("ascii", "replace")
        tls.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + BAD_CHUNK_BODIES[path])
        hold(tls)
    tls.close()


def handle(raw, context, opts):
    summary = {"mode": opts.mode, "handshake_ok": False, "head_bytes": 0, "drained": 0, "error": None}
    try:
        if opts.mode == "reset-handshake":
            reset_handshake(raw, summary)
        elif opts.mode == "plain-http":
            plain_http(raw, summary)
        else:
            serve_tls(raw, context, opts, summary)
    except (OSError, ValueError, EOFError, ssl.SSLError) as error:
        summary["error"] = "%s: %s" % (type(error).__name__, error)
    finally:
        raw.close()
        with LOCK:
            if opts.events:
                with open(opts.events, "a") as events:
                    events.write(json.dumps(summary) + "\n")


MODES = ["reset-handshake", "stall-response", "endless-head", "garbage-records", "garbage-mid-body", "early-answer", "cl-and-te", "bad-chunk",
         "plain-http"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cert", required=True, help="leaf then intermediates, PEM")
    parser.add_argument("--key", required=True)
    parser.add_argument("--mode", required=True, choices=MODES)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--events")
    opts = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(opts.cert, opts.key)
    peer.serve_forever(peer.listen(), opts.ready_file, handle, context, opts)


if __name__ == "__main__":
    main()
