#!/usr/bin/env python3
"""Writes the seed corpora under Fuzz/Corpus/<harness>/ (checked in; rerun
after editing). Seeds are named after what they exercise so that a crash
report that minimises to a seed is readable. Includes the public request
smuggling payloads (CL.TE, TE.CL, TE.TE with obfuscated Transfer-Encoding,
Content-Length with sign, spaces or leading zeros, chunk-size overflow and
extensions, bare LF, NUL and obs-text in fields, absolute-form with userinfo
or a differing Host, long lines)."""
import os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))

def write(harness, name, data):
    d = os.path.join(HERE, "Corpus", harness)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("latin-1")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def req(start, fields, body=""):
    return start + "\r\n" + "".join(f + "\r\n" for f in fields) + "\r\n" + body

H = "Host: api.example.com"
requests = {
    "get-origin": req("GET /v1/users?id=1 HTTP/1.1", [H, "Accept: */*"]),
    "get-absolute": req("GET http://api.example.com:8443/x HTTP/1.1", [H]),
    "get-http10-keepalive": req("GET / HTTP/1.0", [H, "Connection: keep-alive"]),
    "post-content-length": req("POST /upload HTTP/1.1", [H, "Content-Length: 5"], "hello"),
    "post-chunked": req("POST /upload HTTP/1.1", [H, "Transfer-Encoding: chunked"], "5\r\nhello\r\n0\r\n\r\n"),
    "expect-continue": req("PUT /f HTTP/1.1", [H, "Content-Length: 3", "Expect: 100-continue"]),
    "pipelined": req("GET /a HTTP/1.1", [H]) + req("GET /b HTTP/1.1", [H]),
    "leading-crlf": "\r\n" + req("GET / HTTP/1.1", [H]),
    "connect": req("CONNECT api.example.com:443 HTTP/1.1", [H]),
    "options-asterisk": req("OPTIONS * HTTP/1.1", [H]),
    "hop-by-hop": req("GET / HTTP/1.1", [H, "Connection: close, X-Secret", "X-Secret: 1", "Proxy-Connection: keep-alive",
                                          "Keep-Alive: 5", "TE: trailers", "Upgrade: h2c", "Proxy-Authorization: Basic Zm9vOmJhcg=="]),
    # CL.TE and TE.CL (PortSwigger's classic payloads)
    "smuggle-cl-te": req("POST / HTTP/1.1", [H, "Content-Length: 13", "Transfer-Encoding: chunked"], "0\r\n\r\nSMUGGLED"),
    "smuggle-te-cl": req("POST / HTTP/1.1", [H, "Content-Length: 3", "Transfer-Encoding: chunked"],
                         "8\r\nSMUGGLED\r\n0\r\n\r\n"),
    # TE.TE: obfuscated Transfer-Encoding
    "te-xchunked": req("POST / HTTP/1.1", [H, "Transfer-Encoding: xchunked"], "0\r\n\r\n"),
    "te-leading-space-name": req("POST / HTTP/1.1", [H, " Transfer-Encoding: chunked"], "0\r\n\r\n"),
    "te-space-before-colon": req("POST / HTTP/1.1", [H, "Transfer-Encoding : chunked"], "0\r\n\r\n"),
    "te-tab-after-value": req("POST / HTTP/1.1", [H, "Transfer-Encoding: chunked\t"], "0\r\n\r\n"),
    "te-tab-in-value": req("POST / HTTP/1.1", [H, "Transfer-Encoding:\tchunked"], "0\r\n\r\n"),
    "te-duplicated": req("POST / HTTP/1.1", [H, "Transfer-Encoding: chunked", "Transfer-Encoding: x"], "0\r\n\r\n"),
    "te-list-identity": req("POST / HTTP/1.1", [H, "Transfer-Encoding: identity, chunked"], "0\r\n\r\n"),
    "te-chunked-twice": req("POST / HTTP/1.1", [H, "Transfer-Encoding: chunked, chunked"], "0\r\n\r\n"),
    "te-chunked-not-last": req("POST / HTTP/1.1", [H, "Transfer-Encoding: chunked, gzip"], "0\r\n\r\n"),
    "te-gzip": req("POST / HTTP/1.1", [H, "Transfer-Encoding: gzip"], ""),
    "te-quoted": req("POST / HTTP/1.1", [H, 'Transfer-Encoding: "chunked"'], "0\r\n\r\n"),
    "te-case": req("POST / HTTP/1.1", [H, "TRANSFER-ENCODING: CHUNKED"], "0\r\n\r\n"),
    "te-obs-fold": req("POST / HTTP/1.1", [H, "Transfer-Encoding:", " chunked"], "0\r\n\r\n"),
    "te-http10": req("POST / HTTP/1.0", [H, "Transfer-Encoding: chunked"], "0\r\n\r\n"),
    "te-vertical-tab": req("POST / HTTP/1.1", [H, "Transfer-Encoding: \x0bchunked"], "0\r\n\r\n"),
    "te-semicolon": req("POST / HTTP/1.1", [H, "Transfer-Encoding: chunked;q=1"], "0\r\n\r\n"),
    # Content-Length with sign, spaces, leading zeros, lists, overflow
    "cl-plus": req("POST / HTTP/1.1", [H, "Content-Length: +5"], "hello"),
    "cl-minus": req("POST / HTTP/1.1", [H, "Content-Length: -1"]),
    "cl-leading-zeros": req("POST / HTTP/1.1", [H, "Content-Length: 0005"], "hello"),
    "cl-inner-space": req("POST / HTTP/1.1", [H, "Content-Length: 1 2"]),
    "cl-list-same": req("POST / HTTP/1.1", [H, "Content-Length: 5, 5"], "hello"),
    "cl-list-differ": req("POST / HTTP/1.1", [H, "Content-Length: 5, 6"], "hello"),
    "cl-duplicate-differ": req("POST / HTTP/1.1", [H, "Content-Length: 5", "Content-Length: 6"], "hello"),
    "cl-empty-element": req("POST / HTTP/1.1", [H, "Content-Length: 5,,5"], "hello"),
    "cl-overflow": req("POST / HTTP/1.1", [H, "Content-Length: 18446744073709551616"]),
    "cl-max": req("POST / HTTP/1.1", [H, "Content-Length: 18446744073709551615"]),
    "cl-hex": req("POST / HTTP/1.1", [H, "Content-Length: 0x10"]),
    "cl-empty": req("POST / HTTP/1.1", [H, "Content-Length:"]),
    # line endings, control bytes, obs-text
    "bare-lf": "GET / HTTP/1.1\nHost: api.example.com\n\n",
    "bare-lf-in-field": "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n",
    "bare-cr": "GET / HTTP/1.1\rHost: api.example.com\r\n\r\n",
    "nul-in-value": req("GET / HTTP/1.1", [H, "X-A: a\x00b"]),
    "nul-in-name": req("GET / HTTP/1.1", [H, "X\x00A: b"]),
    "obs-text-value": req("GET / HTTP/1.1", [H, "X-A: caf\xe9 \xff\x80"]),
    "utf8-value": req("GET / HTTP/1.1", [H, "X-A: café"]).encode("utf-8").decode("latin-1"),
    "del-in-value": req("GET / HTTP/1.1", [H, "X-A: a\x7fb"]),
    "empty-field-name": req("GET / HTTP/1.1", [H, ": x"]),
    "ows-only-value": req("GET / HTTP/1.1", [H, "X-A: \t \t"]),
    # start line oddities
    "http-version-12": req("GET / HTTP/1.2", [H]),
    "http-version-2": req("GET / HTTP/2.0", [H]),
    "http-lowercase": req("GET / http/1.1", [H]),
    "double-space": req("GET  / HTTP/1.1", [H]),
    "trailing-space-version": req("GET / HTTP/1.1 ", [H]),
    "http09": "GET /\r\n\r\n",
    # absolute-form with userinfo or a differing Host
    "absolute-userinfo": req("GET http://user:pass@api.example.com/ HTTP/1.1", [H]),
    "absolute-userinfo-at-trick": req("GET http://api.example.com@evil.example/ HTTP/1.1", [H]),
    "absolute-differing-host": req("GET http://api.example.com/ HTTP/1.1", ["Host: evil.example"]),
    "absolute-https": req("GET https://api.example.com/ HTTP/1.1", [H]),
    "absolute-ipv6": req("GET http://[::1]:8080/ HTTP/1.1", ["Host: [::1]:8080"]),
    "absolute-fragment": req("GET http://api.example.com/#frag HTTP/1.1", [H]),
    "two-hosts": req("GET / HTTP/1.1", [H, "Host: evil.example"]),
    "no-host": req("GET / HTTP/1.1", []),
    # long lines (over the 96-byte target and 600-byte head limits the harness also uses)
    "long-target": req("GET /" + "a" * 200 + " HTTP/1.1", [H]),
    "long-field": req("GET / HTTP/1.1", [H, "X-Long: " + "b" * 700]),
    "many-fields": req("GET / HTTP/1.1", [H] + ["X-%d: v" % i for i in range(60)]),
    "unterminated": "GET / HTTP/1.1\r\nHost: api.example.com\r\nX-A: b",
}
for name, data in requests.items():
    write("FuzzRequestHead", name, data)

def resp(start, fields, body=""):
    return start + "\r\n" + "".join(f + "\r\n" for f in fields) + "\r\n" + body

responses = {
    "ok-length": resp("HTTP/1.1 200 OK", ["Content-Length: 5"], "hello"),
    "ok-chunked": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
    "chunked-trailers": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-B: 2\r\n\r\n"),
    "chunked-extensions": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"],
                               '3;name=value;q="quoted \\" str"\r\nabc\r\n0;last\r\n\r\n'),
    "chunked-ext-bws": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "3 ;a=b\r\nabc\r\n0\r\n\r\n"),
    "chunked-ws-before-crlf": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "3 \r\nabc\r\n0\r\n\r\n"),
    "chunked-upper-hex": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "A\r\n0123456789\r\n0\r\n\r\n"),
    "chunked-leading-zeros": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "0003\r\nabc\r\n00\r\n\r\n"),
    "chunked-overflow": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "FFFFFFFFFFFFFFFFF\r\nabc\r\n0\r\n\r\n"),
    "chunked-int64-max": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "7fffffffffffffff\r\nabc"),
    "chunked-int64-over": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "8000000000000000\r\nabc"),
    "chunked-negative": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "-1\r\nabc\r\n0\r\n\r\n"),
    "chunked-0x": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "0x3\r\nabc\r\n0\r\n\r\n"),
    "chunked-bare-lf": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "3\nabc\n0\n\n"),
    "chunked-missing-crlf": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "3\r\nabcd\r\n0\r\n\r\n"),
    "chunked-bad-trailer": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "0\r\nX A: b\r\n\r\n"),
    "chunked-long-line": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "3;" + "x" * 300 + "\r\nabc\r\n0\r\n\r\n"),
    "chunked-incomplete": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: chunked"], "10\r\nabc"),
    "cl-and-te": resp("HTTP/1.1 200 OK", ["Content-Length: 3", "Transfer-Encoding: chunked"], "0\r\n\r\n"),
    "te-xchunked": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: xchunked"], "0\r\n\r\n"),
    "te-gzip-chunked": resp("HTTP/1.1 200 OK", ["Transfer-Encoding: gzip, chunked"], "0\r\n\r\n"),
    "te-http10": resp("HTTP/1.0 200 OK", ["Transfer-Encoding: chunked"], "0\r\n\r\n"),
    "cl-plus": resp("HTTP/1.1 200 OK", ["Content-Length: +3"], "abc"),
    "cl-differ": resp("HTTP/1.1 200 OK", ["Content-Length: 3", "Content-Length: 4"], "abc"),
    "until-close": resp("HTTP/1.1 200 OK", ["Connection: keep-alive"], "body until close"),
    "http10-keepalive": resp("HTTP/1.0 200 OK", ["Content-Length: 0", "Connection: keep-alive"]),
    "no-content": resp("HTTP/1.1 204 No Content", ["Content-Length: 10"]),
    "not-modified": resp("HTTP/1.1 304 Not Modified", ["Transfer-Encoding: chunked"]),
    "continue-then-ok": resp("HTTP/1.1 100 Continue", []) + resp("HTTP/1.1 200 OK", ["Content-Length: 0"]),
    "early-hints": resp("HTTP/1.1 103 Early Hints", ["Link: </a.css>; rel=preload"]),
    "switching": resp("HTTP/1.1 101 Switching Protocols", ["Upgrade: websocket"]),
    "no-reason": "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
    "empty-reason": "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n",
    "obs-text-reason": "HTTP/1.1 200 \xc4\xe9\xff ok\t\r\nContent-Length: 0\r\n\r\n",
    "status-600": resp("HTTP/1.1 600 Weird", []),
    "status-099": resp("HTTP/1.1 099 Low", []),
    "status-4-digits": resp("HTTP/1.1 2000 OK", []),
    "bare-lf": "HTTP/1.1 200 OK\nContent-Length: 0\n\n",
    "nul-in-field": resp("HTTP/1.1 200 OK", ["X-A: a\x00b", "Content-Length: 0"]),
    "obs-fold": resp("HTTP/1.1 200 OK", ["X-A: a", " b", "Content-Length: 0"]),
    "long-field": resp("HTTP/1.1 200 OK", ["X-Long: " + "v" * 2000, "Content-Length: 0"]),
    "bare-chunked-body": "5\r\nhello\r\n0\r\n\r\n",
}
for name, data in responses.items():
    write("FuzzResponseHead", name, data)

pins = {
    "canonical": "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
    "zeros": "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    "curl": "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
    "hpkp": 'pin-sha256="47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="',
    "no-padding": "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU",
    "urlsafe": "sha256/47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=",
    "short": "sha256/AAAA",
    "long": "sha256/" + "A" * 64,
    "sha1": "sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    "space": "sha256/ 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
    "non-canonical-bits": "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFV=",
    "hpkp-unterminated": 'pin-sha256="47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
    "hpkp-empty": 'pin-sha256=""',
    "empty": "",
}
for name, data in pins.items():
    write("FuzzPin", name, data)

hosts = {
    "exact": "api.example.com\napi.example.com",
    "exact-case-dot": "API.Example.COM.\napi.example.com",
    "one-label": "*.example.com\na.example.com",
    "one-label-too-deep": "*.example.com\na.b.example.com",
    "one-label-apex": "*.example.com\nexample.com",
    "subtree": "**.example.com\na.b.example.com",
    "subtree-apex": "**.example.com\nexample.com",
    "include-subdomains": "+example.com\nx.y.example.com",
    "precedence": "**.example.com\n*.example.com\n+api.example.com\napi.example.com\nv1.api.example.com",
    "longest-suffix": "**.com\n**.example.com\n*.b.example.com\na.b.example.com",
    "not-below": "**.example.com\nnotexample.com",
    "ip-exact": "127.0.0.1\n*.0.0.1\n127.0.0.1",
    "ipv6": "::1\n[::1]",
    "ipv6-upper": "2001:DB8::1\n[2001:db8::1]",
    "wildcard-ip": "*.0.0.1\n1.0.0.1",
    "underscore": "_dmarc.example.com\n_DMARC.example.com",
    "hyphen": "a-b.example.com\n-a.example.com\na-.example.com\na-b.example.com",
    "idna": "xn--bcher-kva.example\nxn--BCHER-kva.example",
    "long-label": "*." + "a" * 63 + ".com\nb." + "a" * 63 + ".com",
    "too-long-label": "a" * 64 + ".com\n" + "a" * 64 + ".com",
    "star-inside": "a.*.example.com\na.b.example.com",
    "duplicate-keys": "*.example.com\n*.EXAMPLE.com\nx.example.com",
    "trailing-dot-both": "example.com.\nexample.com.",
    "numeric-name": "*.2.3\n1.2.3",
}
for name, data in hosts.items():
    write("FuzzHostMatcher", name, data)

PIN_A = "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
PIN_B = "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
configs = {
    "minimal": "{}",
    "spec-example": """{
  "listeners": [
    // HTTP proxy
    { "listen": "127.0.0.1:8080", "mode": "forward" },
    { "listen": "127.0.0.1:9001", "mode": "gateway", "upstream": "api.example.com:443" }
  ],
  "violation_log": "/tmp/violations.jsonl",
  "default_policy": "default",
  "hosts": {
    "api.example.com": {
      "policy": "pin-public-keys",
      "pins": ["%s", "%s"],
      "validate_chain": true, "validate_host": true, "include_subdomains": false,
      "enforce": true, "expires": "2027-06-30",
    },
    "*.cdn.example.com": { "policy": "default" },
    "**.internal.example": { "policy": "default", "min_tls_version": "1.3" },
    "insecure.expired-apis.com": { "policy": "disable" },
  },
  "resolve": { "api.example.com:443": "127.0.0.1:9443" },
  "timeouts": { "connect": "5s", "handshake": "10s", "request_header": "15s", "idle": "60s", "shutdown": "250ms" },
  "limits": { "max_header_bytes": 65536, "max_connections": 10000 },
  "threads": 0, "log_burst": 10,
}""" % (PIN_A, PIN_B),
    "deny-default": '{"default_policy": "deny", "hosts": {"API.Example.COM.": {"policy": "pin-public-keys", "pins": ["%s"]}}}' % PIN_A,
    "policy-object-default": '{"default_policy": {"policy": "pin-public-keys", "pins": ["%s", "%s"]}}' % (PIN_A, PIN_B),
    "pin-spellings": '{"hosts": {"a.example": {"policy": "pin-public-keys", "pins": ["sha256//%s", "pin-sha256=\\"%s\\""]}}}' % (PIN_A[7:], PIN_B[7:]),
    "bad-pin": '{"hosts": {"a.example": {"policy": "pin-public-keys", "pins": ["sha256/AAAA"]}}}',
    "unknown-key": '{"listners": [], "hosts": {"a.example": {"polcy": "default"}}}',
    "bad-host-key": '{"hosts": {"a..example": {"policy": "default"}, "*.*.x": {"policy": "default"}, "": {"policy": "default"}}}',
    "duplicate-host-keys": '{"hosts": {"a.example": {"policy": "default"}, "A.EXAMPLE.": {"policy": "disable"}}}',
    "ipv6-listener": '{"listeners": [{"listen": "[::1]:8080", "mode": "forward"}]}',
    "remote-listener": '{"listeners": [{"listen": "0.0.0.0:8080", "mode": "forward"}, {"listen": "10.0.0.1:80", "mode": "forward", "allow_remote": true}]}',
    "bad-durations": '{"timeouts": {"connect": "5", "idle": "-1s", "handshake": "1e9h", "request_header": "99999999999999999999ms"}}',
    "bad-types": '{"listeners": {}, "threads": "2", "limits": {"max_header_bytes": -1, "max_connections": 1.5}}',
    "json5-comments": '/* block */ {"threads": 1, // line\n "log_burst": 3,}',
    "deep-nesting": "[" * 200 + "]" * 200,
    "unterminated-string": '{"violation_log": "abc',
    "escapes": '{"violation_log": "\\u00e9\\ud83d\\ude00\\n\\t\\"x"}',
    "lone-surrogate": '{"violation_log": "\\ud800"}',
    "numbers": '{"threads": 1e3, "log_burst": 0x10, "limits": {"max_header_bytes": 1.0e400}}',
    "expires": '{"hosts": {"a.example": {"policy": "pin-public-keys", "pins": ["%s", "%s"], "expires": "2027-02-30"}}}' % (PIN_A, PIN_B),
    "files": '{"trust_store": "/nonexistent", "hosts": {"a.example": {"policy": "anchors", "anchors": ["/etc/hostname", "/"]}}}',
    "resolve-bad": '{"resolve": {"a.example": "127.0.0.1:99999", "b.example:443": "[::1]:443"}}',
}
for name, data in configs.items():
    write("FuzzConfiguration", name, data.encode("utf-8"))

# FuzzViolationLogLine: first byte 0x00 = log bytes (two reads, then end of
# file), 0x01 = an event built from NUL-separated fields and round-tripped.
LOG_VIOLATION = ('{"time":"2026-11-30T17:43:44.120Z","event":"pin_violation","action":"blocked",'
    '"reason":"pin_mismatch","host":"api.example.com","port":443,"peer_address":"127.0.0.1:9443",'
    '"rule":"api.example.com","policy":"pin-public-keys","enforce":true,"include_subdomains":false,'
    '"known_pins":["%s"],"served_chain":[{"subject":"CN=api.example.com","issuer":"CN=Evil CA",'
    '"spki_sha256":"%s","cert_sha256":"00","not_before":"2026-01-01T00:00:00Z","not_after":"2027-01-01T00:00:00Z"}],'
    '"served_certificate_chain":[],"client_address":"127.0.0.1:5555","listener":"127.0.0.1:8080",'
    '"config_generation":1,"request":{"method":"GET","target":"/v1/x"},"detail":"no pin matched"}') % (PIN_A, PIN_B)
LOG_SUMMARY = ('{"time":"2026-11-30T17:44:44.000Z","event":"pin_violation_summary","action":"blocked",'
    '"reason":"pin_mismatch","host":"api.example.com","port":443,"rule":"api.example.com","count":41,'
    '"first_time":"2026-11-30T17:43:45.000Z","last_time":"2026-11-30T17:44:43.999Z"}')
logs = {
    "violation": LOG_VIOLATION + "\n",
    "summary": LOG_SUMMARY + "\n",
    "two-lines-crlf": LOG_VIOLATION + "\r\n" + LOG_SUMMARY + "\r\n",
    "torn-tail": LOG_VIOLATION + "\n" + LOG_SUMMARY[:57],
    "escaped-controls": LOG_VIOLATION.replace("CN=Evil CA", "CN=Evil\\u001b[2J\\n\\u0085CA") + "\n",
    "wrong-types": LOG_SUMMARY.replace('"count":41', '"count":"41"') + "\n" + LOG_VIOLATION.replace('"port":443', '"port":null') + "\n",
    "unknown-event": LOG_SUMMARY.replace("pin_violation_summary", "pin_violation_v2") + "\n",
    "bad-time": LOG_VIOLATION.replace("2026-11-30T17:43:44.120Z", "2026-13-30T25:43:44Z") + "\n",
    "not-json": "hello\n\n{\n[]\n\"x\"\n",
}
for name, data in logs.items():
    write("FuzzViolationLogLine", "log-" + name, b"\x00" + data.encode("utf-8") + b"\x80")
events = {
    "plain": ["api.example.com", "api.example.com", "no pin matched", "CN=api.example.com", "CN=Evil CA", "chain", "GET", "/v1/x?token=secret"],
    "controls": ["h\nx", "r\u2028", "d\x1b[2J\"\\", "CN=\x07\x9b", "O=\u202e", "c", "G\tET", "/#frag"],
    "no-chain": ["[::1]", "*.example.com", "", "", "", "", "CONNECT", "api.example.com:443"],
}
for name, fields in events.items():
    write("FuzzViolationLogLine", "event-" + name, b"\x01" + b"\x00".join(f.encode("utf-8") for f in fields))
