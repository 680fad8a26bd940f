#!/usr/bin/env python3
"""One HTTPS GET the way a Python program makes it, for pinproxy's CONNECT tests.

  https_client.py --library urllib|requests --ca FILE --output FILE URL

The proxy comes from the environment (https_proxy), as every Python program
gets it: urllib's ProxyHandler reads getproxies(), requests' trust_env does
the same. The origin is trusted through --ca alone (urllib: an SSLContext
from create_default_context(cafile=); requests: verify=). The body is
streamed to --output; stdout gets one JSON line,
{"status": <int or null>, "error": <text or null>}, and the exit status is 0
when a response arrived, 1 when the library raised.

Standard library only for urllib; requests is Debian's python3-requests.
"""
import argparse, json, shutil, ssl, sys


def fetch_urllib(url, ca, output):
    import urllib.error, urllib.request
    context = ssl.create_default_context(cafile=ca)
    try:
        response = urllib.request.urlopen(url, context=context, timeout=60)
    except urllib.error.HTTPError as error:  # a response from the origin, if not a 2xx
        return error.code
    with response, open(output, "wb") as sink:
        shutil.copyfileobj(response, sink, 1 << 20)
        return response.status


def fetch_requests(url, ca, output):
    import requests
    with requests.get(url, verify=ca, stream=True, timeout=60) as response, open(output, "wb") as sink:
        for piece in response.iter_content(1 << 20):
            sink.write(piece)
        return response.status_code


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", choices=["urllib", "requests"], required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("url")
    opts = parser.parse_args()
    fetch = fetch_urllib if opts.library == "urllib" else fetch_requests
    try:
        status = fetch(opts.url, opts.ca, opts.output)
    except Exception as error:  # the library's own words are what the test reads
        print(json.dumps({"status": None, "error": "%s: %s" % (type(error).__name__, error)}))
        sys.exit(1)
    print(json.dumps({"status": status, "error": None}))


if __name__ == "__main__":
    main()
