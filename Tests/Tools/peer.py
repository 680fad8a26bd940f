"""What every loopback peer of the Swift tests shares, the other half of
PythonPeer (Tests/PinproxyRuntimeTests/Support/Peers/PythonPeer.swift):
listen on 127.0.0.1, announce the port in --ready-file, and serve each
connection on a thread of its own until SIGTERM.
"""
import os, signal, socket, sys, threading


def listen(port=0, backlog=128):
    """A TCP listener on 127.0.0.1:port (0 = ephemeral)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(backlog)
    return listener


def announce(ready_file, port):
    """Writes the port to a temporary name, then renames it into place, so a
    polling test never reads a half-written port."""
    partial = ready_file + ".tmp"
    with open(partial, "w") as ready:
        ready.write("%d\n" % port)
    os.replace(partial, ready_file)


def serve_forever(listener, ready_file, handle, *args):
    """Announces the listener's port, then runs handle(connection, *args) on a
    daemon thread per accepted connection; SIGTERM ends it cleanly."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    announce(ready_file, listener.getsockname()[1])
    try:
        while True:
            raw, _ = listener.accept()
            threading.Thread(target=handle, args=(raw,) + args, daemon=True).start()
    except (SystemExit, KeyboardInterrupt):
        pass
    finally:
        listener.close()
