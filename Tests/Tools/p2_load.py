#!/usr/bin/env python3
"""Client load through pinproxy for the process-level fault tests (stdlib only).

  p2_load.py keepalive --proxy PORT --url URL --seconds S [--threads T]
      T threads, each one persistent connection (re-opened only if the proxy
      closes it), GET URL in a loop for S seconds. A request fails when it
      raises or its status is not 200 or its body length is wrong.
  p2_load.py burst --proxy PORT --url URL --count N [--threads T] [--progress FILE]
      N GETs, each on a new connection, spread over T threads; every finished
      request appends one byte to FILE so a test can act mid-burst.

Prints one JSON line: {"ok", "failed", "statuses": {status: count}, "errors": [first few]}.
"""
import argparse, http.client, json, os, threading, time

RESULT = {"ok": 0, "failed": 0, "statuses": {}, "errors": []}
LOCK = threading.Lock()


def note(status, ok, error=None):
    with LOCK:
        RESULT["ok" if ok else "failed"] += 1
        key = str(status)
        RESULT["statuses"][key] = RESULT["statuses"].get(key, 0) + 1
        if error and len(RESULT["errors"]) < 5:
            RESULT["errors"].append(error)


def keepalive(args, expected_length):
    deadline = time.monotonic() + args.seconds
    connection = None
    while time.monotonic() < deadline:
        try:
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", args.proxy, timeout=10)
            connection.request("GET", args.url)
            response = connection.getresponse()
            body = response.read()
            ok = response.status == 200 and (expected_length is None or len(body) == expected_length)
            note(response.status, ok, None if ok else "status %d, %d bytes" % (response.status, len(body)))
            if response.will_close:
                connection.close()
                connection = None
        except Exception as error:  # a failed request, counted, then a fresh connection
            note("exception", False, repr(error))
            if connection is not None:
                connection.close()
            connection = None


def burst(args, counter, progress):
    while True:
        with LOCK:
            if counter[0] >= args.count:
                return
            counter[0] += 1
        try:
            connection = http.client.HTTPConnection("127.0.0.1", args.proxy, timeout=10)
            connection.request("GET", args.url, headers={"Connection": "close"})
            response = connection.getresponse()
            response.read()
            note(response.status, True)
            connection.close()
        except Exception as error:  # the daemon was killed under us
            note("exception", False, repr(error))
        if progress:
            with LOCK:
                with open(progress, "a") as f:
                    f.write(".")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["keepalive", "burst"])
    parser.add_argument("--proxy", type=int, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--expect-length", type=int)
    parser.add_argument("--progress")
    args = parser.parse_args()
    counter = [0]
    if args.mode == "keepalive":
        threads = [threading.Thread(target=keepalive, args=(args, args.expect_length)) for _ in range(args.threads)]
    else:
        threads = [threading.Thread(target=burst, args=(args, counter, args.progress)) for _ in range(args.threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps(RESULT), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
