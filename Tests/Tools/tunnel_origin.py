#!/usr/bin/env python3
"""A plain TCP origin behind pinproxy's blind CONNECT tunnels, for the tunnel
tests (Tests/PinproxyRuntimeTests/EndToEnd/Connect).

A blind tunnel relays bytes without reading them, so the origin need not
speak TLS: this one echoes every byte it receives, keeps a copy of them per
connection in --raw-dir/conn-<id>.bin, and when the client's end of stream
arrives (a half-close passed on by the tunnel) it still sends one last line,
"origin saw end of stream after <n> bytes\\n", then closes. A line "RESET\\n"
is echoed, then the connection is reset (SO_LINGER 0), as a crashing origin
would. Events, one JSON line each in --events:

  {"event": "accepted", "conn": id}
  {"event": "eof", "conn": id, "received": n}      the peer's end of stream
  {"event": "reset", "conn": id, "received": n}    the peer reset the connection
"""
import argparse, itertools, json, os, socket, struct, threading, time

import peer

LOCK = threading.Lock()
COUNTER = itertools.count(1)


def emit(events, record):
    with LOCK:
        events.write(json.dumps(record) + "\n")
        events.flush()


def handle(sock, opts):
    conn = next(COUNTER)
    emit(opts.events, {"event": "accepted", "conn": conn})
    received = 0
    with open(os.path.join(opts.raw_dir, "conn-%d.bin" % conn), "wb") as raw:
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                raw.write(data)
                raw.flush()
                received += len(data)
                sock.sendall(data)
                if data.endswith(b"RESET\n"):
                    time.sleep(0.2)  # the echo reaches the client before the reset
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    emit(opts.events, {"event": "reset-sent", "conn": conn, "received": received})
                    sock.close()
                    return
        except ConnectionResetError:
            emit(opts.events, {"event": "reset", "conn": conn, "received": received})
            sock.close()
            return
    emit(opts.events, {"event": "eof", "conn": conn, "received": received})
    try:
        sock.sendall(b"origin saw end of stream after %d bytes\n" % received)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the tunnel closed both ways (idle): nobody is left to tell
    sock.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--events", required=True)
    parser.add_argument("--raw-dir", required=True)
    opts = parser.parse_args()
    opts.events = open(opts.events, "a")
    peer.serve_forever(peer.listen(), opts.ready_file, handle, opts)


if __name__ == "__main__":
    main()
