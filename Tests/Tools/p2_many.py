#!/usr/bin/env python3
"""Many concurrent client connections to pinproxy (stdlib selectors only).

  p2_many.py --proxy PORT --url URL --connections N [--hold S] [--deadline S]

Phase 1: open N connections at once (non-blocking) and send nothing for
--hold seconds; a connection the proxy refuses at accept time gets its 503
then, and is read to its end. Phase 2: every connection that has heard
nothing sends one GET URL (Connection: close) and is read to its end.
Everything is bounded by --deadline seconds.

Prints one JSON line: {"opened", "connect_failed", "refused_at_accept":
{status line: count}, "proxy_status_at_accept": {value: count}, "served":
{status: count}, "answers": {status and Proxy-Status: count}, "unanswered"}.
"answers" counts every answer of both phases by status and Proxy-Status
("503 pinproxy; error=..."; the status alone when there is none): a proxy
that defers accept (TCP_DEFER_ACCEPT) is handed a silent connection only
when the kernel stops waiting for its first bytes, which under a burst of
thousands may come after --hold, so its refusal is then heard in phase 2.
"""
import argparse, errno, json, resource, selectors, socket, time


def status_and_proxy_status(data):
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    status = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "none"
    proxy_status = next((l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("proxy-status:")), "")
    return status, proxy_status


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", type=int, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--connections", type=int, default=5000)
    parser.add_argument("--hold", type=float, default=3)
    parser.add_argument("--deadline", type=float, default=30)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.connections + 100), hard))
    start = time.monotonic()
    selector = selectors.DefaultSelector()
    buffers, ended = {}, {}
    result = {"opened": 0, "connect_failed": 0, "refused_at_accept": {}, "proxy_status_at_accept": {},
              "served": {}, "answers": {}, "unanswered": 0}

    def count_answer(status, proxy_status):
        key = f"{status} {proxy_status}" if proxy_status else status
        result["answers"][key] = result["answers"].get(key, 0) + 1
    sockets = []
    for _ in range(args.connections):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        code = sock.connect_ex(("127.0.0.1", args.proxy))
        if code not in (0, errno.EINPROGRESS):
            result["connect_failed"] += 1
            sock.close()
            continue
        sockets.append(sock)
        buffers[sock] = b""
        selector.register(sock, selectors.EVENT_READ)
    result["opened"] = len(sockets)

    def pump(until, requested):
        while time.monotonic() < until and len(ended) < len(sockets):
            for key, _ in selector.select(timeout=0.1):
                sock = key.fileobj
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if data:
                    buffers[sock] += data
                    continue
                selector.unregister(sock)
                ended[sock] = requested
                sock.close()

    # Phase 1: the proxy answers connections over its limit without being asked.
    pump(min(start + args.hold, start + args.deadline), False)
    silent = [s for s in sockets if s not in ended and not buffers[s]]
    for sock in sockets:
        if sock in ended or buffers[sock]:
            status, proxy_status = status_and_proxy_status(buffers[sock])
            result["refused_at_accept"][status] = result["refused_at_accept"].get(status, 0) + 1
            result["proxy_status_at_accept"][proxy_status] = result["proxy_status_at_accept"].get(proxy_status, 0) + 1
            count_answer(status, proxy_status)
    # Phase 2: the admitted connections each ask for the URL.
    request = ("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
               % (args.url, args.url.split("/")[2])).encode()
    for sock in silent:
        try:
            sock.setblocking(True)
            sock.sendall(request)
            sock.setblocking(False)
        except OSError:
            pass
    pump(start + args.deadline, True)
    for sock in silent:
        if sock in ended:
            status, proxy_status = status_and_proxy_status(buffers[sock])
            result["served"][status] = result["served"].get(status, 0) + 1
            count_answer(status, proxy_status)
        else:
            result["unanswered"] += 1
    for sock in sockets:
        if sock not in ended:
            sock.close()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
