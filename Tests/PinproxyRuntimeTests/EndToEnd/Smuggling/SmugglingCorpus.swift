import Foundation

/// Request shapes for the differential sweep, by family: the framing classes
/// of RFC 9112 §6 and §7, and the permutations that PortSwigger's HTTP Request
/// Smuggler, defparam's smuggler and the HTTP Garden describe publicly
/// (obfuscated Transfer-Encoding, CL.TE / TE.CL / TE.TE, chunk-size tricks,
/// line-ending and whitespace games, header-name aliases), reconstructed here.
///
/// Every case's request target carries `/case-<n>`, so the origin's records
/// of it can be found. Where a parser could read a second request out of a
/// body, the body holds `GET /case-<n>-smuggled`: the sweep accepts it at the
/// origin only where pinproxy's own parser reads it as a request of its own
/// (pipelined after a body that ended), never from inside a body.
enum SmugglingCorpus {
    struct Case {
        var family: String
        var name: String
        var bytes: [UInt8]
    }

    /// The whole corpus, numbered from `first`.
    static func cases(numberedFrom first: Int) -> [Case] {
        var cases: [Case] = []
        var number = first
        func add(_ family: String, _ name: String, _ make: (String) -> String) {
            cases.append(Case(family: family, name: name, bytes: Array(make("/case-\(number)").utf8)))
            number += 1
        }
        func post(_ marker: String, _ fields: String, _ body: String, version: String = "HTTP/1.1") -> String {
            "POST http://api.example.com\(marker) \(version)\r\nHost: api.example.com\r\n\(fields)\r\n\(body)"
        }
        func smuggled(_ marker: String) -> String { "GET \(marker)-smuggled HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }
        func chunk(_ text: String) -> String { String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n" }

        // RFC 9112 §6.2, §8.6: Content-Length spellings (the body holds a request).
        for value in ["%d", "0%d", "00%d", "+%d", "-%d", " %d", "%d ", "%d,%d", "%d, %d", "%d, 1", "1, %d", "0x%x",
                      "%d.0", "%de0", "%d\t", "\u{0B}%d", "%d;", "\"%d\"", "%d%d", "", "99999999999999999999"] {
            add("content-length", "Content-Length: \(value)") { marker in
                let body = smuggled(marker)
                let length = body.utf8.count
                let text = value.replacingOccurrences(of: "%d", with: "\(length)")
                    .replacingOccurrences(of: "%x", with: String(length, radix: 16))
                return post(marker, "Content-Length: \(text)\r\n", body)
            }
        }
        add("content-length", "two equal Content-Length fields") { marker in
            let body = smuggled(marker)
            return post(marker, "Content-Length: \(body.utf8.count)\r\nContent-Length: \(body.utf8.count)\r\n", body)
        }
        add("content-length", "two differing Content-Length fields") { marker in
            let body = smuggled(marker)
            return post(marker, "Content-Length: \(body.utf8.count)\r\nContent-Length: 0\r\n", body)
        }

        // RFC 9112 §6.1, §6.3: Transfer-Encoding spellings, each with a chunked body whose
        // last-chunk is followed by a request (what a CL-reading or TE-ignoring hop would see).
        for value in ["chunked", "Chunked", "CHUNKED", " chunked", "chunked ", "\tchunked", "chunked\t", "xchunked",
                      "chunked-x", "chunk", "chunked, identity", "identity, chunked", "gzip, chunked", "gzip",
                      "chunked, chunked", "\"chunked\"", "chunked;q=1", "chunked\u{0B}", "\u{0C}chunked", "chunked,",
                      ",chunked", "chunked, ", "identity", "", "x, chunked"] {
            add("transfer-encoding", "Transfer-Encoding: \(value.debugDescription)") { marker in
                post(marker, "Transfer-Encoding: \(value)\r\n", "0\r\n\r\n" + smuggled(marker))
            }
        }
        // CL.TE, TE.CL, TE.TE (Request Smuggler's three desync classes).
        add("desync", "CL.TE") { marker in
            let body = "0\r\n\r\n" + smuggled(marker)
            return post(marker, "Content-Length: \(body.utf8.count)\r\nTransfer-Encoding: chunked\r\n", body)
        }
        add("desync", "TE.CL") { marker in
            let body = chunk(smuggled(marker)) + "0\r\n\r\n"
            return post(marker, "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", body)
        }
        add("desync", "TE.TE, second field obfuscated") { marker in
            post(marker, "Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n", "0\r\n\r\n" + smuggled(marker))
        }
        add("desync", "TE.TE, first field obfuscated") { marker in
            post(marker, "Transfer-Encoding: x\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n" + smuggled(marker))
        }
        add("desync", "TE in HTTP/1.0") { marker in
            post(marker, "Transfer-Encoding: chunked\r\n", "0\r\n\r\n" + smuggled(marker), version: "HTTP/1.0")
        }
        add("desync", "CL in HTTP/1.0, keep-alive") { marker in
            let body = smuggled(marker)
            return post(marker, "Connection: keep-alive\r\nContent-Length: \(body.utf8.count)\r\n", body, version: "HTTP/1.0")
        }

        // Field-name tricks: whitespace, folding, aliases, controls.
        let nameTricks: [(String, String)] = [
            ("space before colon", "Transfer-Encoding : chunked\r\n"),
            ("tab before colon", "Transfer-Encoding\t: chunked\r\n"),
            ("leading space (obs-fold)", "X-A: b\r\n Transfer-Encoding: chunked\r\n"),
            ("leading tab (obs-fold)", "X-A: b\r\n\tTransfer-Encoding: chunked\r\n"),
            ("folded value", "Transfer-Encoding:\r\n chunked\r\n"),
            ("underscore", "Transfer_Encoding: chunked\r\n"),
            ("underscore, upper case", "TRANSFER_ENCODING: chunked\r\n"),
            ("bare LF before it", "X-A: b\nTransfer-Encoding: chunked\r\n"),
            ("bare CR before it", "X-A: b\rTransfer-Encoding: chunked\r\n"),
            ("NUL in the name", "Transfer-Encoding\u{0}: chunked\r\n"),
            ("NUL in the value", "Transfer-Encoding: chunked\u{0}\r\n"),
            ("name split by LF", "Transfer-Encoding\n: chunked\r\n"),
            ("empty name", ": chunked\r\n"),
            ("colon in the name", "Transfer:Encoding: chunked\r\n"),
            ("DEL in the value", "Transfer-Encoding: chunked\u{7F}\r\n"),
            ("Content_Length alias", "Content_Length: 5\r\n"),
            ("content-length and Content_Length", "Content-Length: 0\r\nContent_Length: 40\r\n"),
        ]
        for (name, fields) in nameTricks {
            add("field names", name) { marker in post(marker, fields, "0\r\n\r\n" + smuggled(marker)) }
        }

        // RFC 9112 §7.1: chunk-size lines and chunk data (HTTP Garden's chunked family).
        let chunkBodies: [(String, (String) -> String)] = [
            ("plain", { _ in "5\r\nhello\r\n0\r\n\r\n" }),
            ("upper-case hex", { _ in "A\r\n0123456789\r\n0\r\n\r\n" }),
            ("leading zeros", { _ in "0005\r\nhello\r\n0000\r\n\r\n" }),
            ("0x prefix", { _ in "0x5\r\nhello\r\n0\r\n\r\n" }),
            ("plus sign", { _ in "+5\r\nhello\r\n0\r\n\r\n" }),
            ("minus sign", { _ in "-5\r\nhello\r\n0\r\n\r\n" }),
            ("space after size", { _ in "5 \r\nhello\r\n0\r\n\r\n" }),
            ("space before size", { _ in " 5\r\nhello\r\n0\r\n\r\n" }),
            ("tab after size", { _ in "5\t\r\nhello\r\n0\r\n\r\n" }),
            ("extension", { _ in "5;name=value\r\nhello\r\n0\r\n\r\n" }),
            ("quoted extension", { _ in "5;name=\"v;a\\\"l\"\r\nhello\r\n0\r\n\r\n" }),
            ("BWS before extension", { _ in "5 ;name\r\nhello\r\n0\r\n\r\n" }),
            ("extension without name", { _ in "5;\r\nhello\r\n0\r\n\r\n" }),
            ("bare LF after size", { _ in "5\nhello\r\n0\r\n\r\n" }),
            ("bare CR after size", { _ in "5\rhello\r\n0\r\n\r\n" }),
            ("LF only after data", { _ in "5\r\nhello\n0\r\n\r\n" }),
            ("no CRLF after data", { _ in "5\r\nhello0\r\n\r\n" }),
            ("data longer than size", { marker in "5\r\nhello, world\r\n0\r\n\r\n" + smuggled(marker) }),
            ("size overflow", { _ in "fffffffffffffffff\r\nhello\r\n0\r\n\r\n" }),
            ("size at 2^63", { _ in "8000000000000000\r\nhello\r\n0\r\n\r\n" }),
            ("seventeen digits", { _ in "00000000000000005\r\nhello\r\n0\r\n\r\n" }),
            ("trailer field", { _ in "5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n" }),
            ("trailer named Content-Length", { marker in "5\r\nhello\r\n0\r\nContent-Length: 40\r\n\r\n" + smuggled(marker) }),
            ("invalid trailer", { _ in "5\r\nhello\r\n0\r\nX Sum: 1\r\n\r\n" }),
            ("folded trailer", { _ in "5\r\nhello\r\n0\r\nX-Sum: 1\r\n 2\r\n\r\n" }),
            ("last chunk with extension", { _ in "5\r\nhello\r\n0;x=y\r\n\r\n" }),
            ("last chunk, bare LF ending", { _ in "5\r\nhello\r\n0\r\n\n" }),
            ("empty size", { _ in "\r\nhello\r\n0\r\n\r\n" }),
            ("many small chunks", { _ in String(repeating: "1\r\na\r\n", count: 50) + "0\r\n\r\n" }),
        ]
        for (name, body) in chunkBodies {
            add("chunked body", name) { marker in post(marker, "Transfer-Encoding: chunked\r\n", body(marker)) }
        }

        // Line endings and bytes of the request line and fields (RFC 9112 §2.2, §3).
        let lineShapes: [(String, (String) -> String)] = [
            ("bare LF line ends", { m in "GET http://api.example.com\(m) HTTP/1.1\nHost: api.example.com\n\n" }),
            ("bare CR in request line", { m in "GET http://api.example.com\(m) HTTP/1.1\rHost: api.example.com\r\n\r\n" }),
            ("CR CR LF", { m in "GET http://api.example.com\(m) HTTP/1.1\r\r\nHost: api.example.com\r\n\r\n" }),
            ("one empty line first", { m in "\r\nGET http://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("two empty lines first", { m in "\r\n\r\nGET http://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("two spaces after method", { m in "GET  http://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("tab after method", { m in "GET\thttp://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("trailing space after version", { m in "GET http://api.example.com\(m) HTTP/1.1 \r\nHost: api.example.com\r\n\r\n" }),
            ("lower-case version", { m in "GET http://api.example.com\(m) http/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("HTTP/1.2", { m in "GET http://api.example.com\(m) HTTP/1.2\r\nHost: api.example.com\r\n\r\n" }),
            ("HTTP/2.0", { m in "GET http://api.example.com\(m) HTTP/2.0\r\nHost: api.example.com\r\n\r\n" }),
            ("HTTP/1.10", { m in "GET http://api.example.com\(m) HTTP/1.10\r\nHost: api.example.com\r\n\r\n" }),
            ("space in target", { m in "GET http://api.example.com\(m) x HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("control in target", { m in "GET http://api.example.com\(m)\u{1}x HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("obs-text in a value", { m in "GET http://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\nX-A: caf\u{E9}\r\n\r\n" }),
            ("lower-case method", { m in "get http://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("method with a slash", { m in "G/ET http://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("whitespace-only field value", { m in "GET http://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\nX-A:  \t \r\n\r\n" }),
        ]
        for (name, make) in lineShapes { add("line endings and bytes", name, make) }

        // Host and target (RFC 9112 §3.2): what the request is routed by.
        let routing: [(String, (String) -> String)] = [
            ("two Host fields", { m in "GET \(m) HTTP/1.1\r\nHost: api.example.com\r\nHost: other.example\r\n\r\n" }),
            ("Host list", { m in "GET \(m) HTTP/1.1\r\nHost: api.example.com, other.example\r\n\r\n" }),
            ("Host with userinfo", { m in "GET \(m) HTTP/1.1\r\nHost: user@api.example.com\r\n\r\n" }),
            ("empty Host", { m in "GET \(m) HTTP/1.1\r\nHost:\r\n\r\n" }),
            ("no Host in 1.1 origin-form", { m in "GET \(m) HTTP/1.1\r\nX-A: b\r\n\r\n" }),
            ("origin-form with Host", { m in "GET \(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("origin-form, Host upper case with a dot", { m in "GET \(m) HTTP/1.1\r\nHost: API.EXAMPLE.COM.\r\n\r\n" }),
            ("absolute-form, differing Host", { m in "GET http://api.example.com\(m) HTTP/1.1\r\nHost: other.example\r\n\r\n" }),
            ("absolute-form https", { m in "GET https://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("absolute-form with userinfo", { m in "GET http://user@api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("absolute-form with fragment", { m in "GET http://api.example.com\(m)#f HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("absolute-form, port 80", { m in "GET http://api.example.com:80\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("asterisk-form", { _ in "OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
            ("Host with a space", { m in "GET \(m) HTTP/1.1\r\nHost: api.example .com\r\n\r\n" }),
            ("Host: ftp scheme", { m in "GET ftp://api.example.com\(m) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }),
        ]
        for (name, make) in routing { add("routing", name, make) }

        // Connection options with each framing (the reproduction, in the sweep too).
        for name in ["Content-Length", "transfer-encoding", "Host", "keep-alive, Content-Length", "TE, Upgrade", "Expect"] {
            add("connection options", "Connection: \(name), CL") { marker in
                let body = smuggled(marker)
                return post(marker, "Connection: \(name)\r\nContent-Length: \(body.utf8.count)\r\n", body)
            }
            add("connection options", "Connection: \(name), chunked") { marker in
                post(marker, "Connection: \(name)\r\nTransfer-Encoding: chunked\r\n", chunk(smuggled(marker)) + "0\r\n\r\n")
            }
        }

        // Expectations (RFC 9110 §10.1.1).
        add("expect", "100-continue with a body") { marker in post(marker, "Expect: 100-continue\r\nContent-Length: 5\r\n", "hello") }
        add("expect", "100-continue, upper case") { marker in post(marker, "Expect: 100-CONTINUE\r\nContent-Length: 5\r\n", "hello") }
        add("expect", "100-continue addressed to the proxy") { marker in
            post(marker, "Connection: expect\r\nExpect: 100-continue\r\nContent-Length: 5\r\n", "hello")
        }
        add("expect", "unknown expectation") { marker in post(marker, "Expect: x\r\nContent-Length: 5\r\n", "hello") }

        // Pipelining and persistence (RFC 9112 §9.3).
        add("pipelining", "three requests in one write") { marker in
            (1...3).map { "GET http://api.example.com\(marker)-\($0) HTTP/1.1\r\nHost: api.example.com\r\n\r\n" }.joined()
        }
        add("pipelining", "a request after Connection: close") { marker in
            "GET http://api.example.com\(marker) HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n"
                + "GET http://api.example.com\(marker)-after HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
        }
        add("pipelining", "chunked then GET") { marker in
            post(marker, "Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n")
                + "GET http://api.example.com\(marker)-next HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
        }
        add("pipelining", "1.0 request without keep-alive, then another") { marker in
            "GET http://api.example.com\(marker) HTTP/1.0\r\n\r\nGET http://api.example.com\(marker)-after HTTP/1.0\r\n\r\n"
        }
        return cases
    }
}
