import Testing
@testable import PinproxyCore

/// SPEC §3: a `Connection` option never removes what framing or routing rests
/// on. For every name an option can nominate, in both directions, the head
/// pinproxy writes is parsed again by pinproxy's own parser and must say
/// exactly the framing pinproxy relays the body by, once, in canonical form.
@Suite("Connection options against framing and routing")
struct ConnectionOptionFramingTests {
    /// Every class of name a `Connection` option can nominate: the framing and
    /// routing fields, each hop-by-hop field, end-to-end fields pinproxy reads
    /// or writes itself (Via, Expect), arbitrary names, and mixed case.
    static let nominatedNames = [
        "Content-Length", "content-length", "CONTENT-LENGTH", "Transfer-Encoding", "transfer-encoding",
        "TRANSFER-encoding", "Host", "HOST", "Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer",
        "Upgrade", "Proxy-Authorization", "Via", "Expect", "Date", "X-Arbitrary", "close", "keep-alive",
    ]

    /// How the nominations are spelled: one option, an option in a list, and
    /// repeated `Connection` fields.
    static func connectionLines(nominating name: String) -> [String] {
        ["Connection: \(name)\r\n",
         "Connection: keep-alive, \(name)\r\n",
         "Connection: keep-alive\r\nConnection: x-other, \(name) , \r\n"]
    }

    /// Request bodies in each framing, as a client writes them, and what pinproxy relays them by.
    static let requestFramings: [(fields: String, framing: BodyFraming)] = [
        ("Content-Length: 35\r\n", .contentLength(35)),
        ("Content-Length: 035\r\n", .contentLength(35)),
        ("Content-Length: 7, 7\r\nContent-Length: 7\r\n", .contentLength(7)),
        ("Transfer-Encoding: chunked\r\n", .chunked),
        ("Transfer-Encoding: Chunked \r\n", .chunked),
        ("", .none),
    ]

    struct Case: Sendable, CustomTestStringConvertible {
        var nominated: String
        var connection: String
        var framingFields: String
        var framing: BodyFraming
        var testDescription: String { "\(connection.debugDescription) \(framingFields.debugDescription)" }
    }

    static let cases: [Case] = nominatedNames.flatMap { name in
        connectionLines(nominating: name).flatMap { connection in
            requestFramings.map { Case(nominated: name, connection: connection, framingFields: $0.fields, framing: $0.framing) }
        }
    }

    /// The field lines of a serialised head, names lower-cased.
    static func fieldNames(_ bytes: [UInt8]) -> [String] {
        HTTPTestSupport.text(bytes).components(separatedBy: "\r\n").dropFirst()
            .compactMap { $0.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } }
    }

    @Test("the upstream request says the relayed framing once, canonically, with one generated Host", arguments: cases)
    func upstreamRequest(_ testCase: Case) throws {
        let raw = "POST http://api.example.com/x HTTP/1.1\r\nHost: api.example.com\r\n" + testCase.connection
            + "Via: 1.0 client\r\nExpect: 100-continue\r\nX-Arbitrary: a\r\nDate: d\r\n" + testCase.framingFields + "\r\n"
        let head = try #require(HTTPTestSupport.requestHead(raw))
        #expect(head.bodyFraming == testCase.framing)
        let routed = try RequestRouter.routeForward(head).get()
        let written = UpstreamRequestWriter.serialise(head, routed: routed)
        guard case .complete(let reparsed, let consumed) = HTTPTestSupport.parseRequest(written) else {
            Issue.record("pinproxy's own parser refuses the head it wrote: \(HTTPTestSupport.text(written))")
            return
        }
        #expect(consumed == written.count)
        #expect(reparsed.bodyFraming == testCase.framing, "\(HTTPTestSupport.text(written))")
        let names = Self.fieldNames(written)
        #expect(names.filter { $0 == "host" }.count == 1)
        #expect(reparsed.values(of: "host") == ["api.example.com"])
        #expect(names.filter { $0 == "content-length" || $0 == "transfer-encoding" }.count == (testCase.framing == .none ? 0 : 1))
        if case .contentLength(let length) = testCase.framing {
            #expect(reparsed.values(of: "content-length") == ["\(length)"])
        }
        // Everything else the option names is gone (RFC 9110 §7.6.1), and Connection itself.
        let lowered = testCase.nominated.lowercased()
        if !["content-length", "transfer-encoding", "host", "via"].contains(lowered) {
            #expect(!names.contains(lowered), "\(HTTPTestSupport.text(written))")
        }
        #expect(!names.contains("connection"))
        // pinproxy's own Via is always there; the client's only when not nominated.
        #expect(reparsed.values(of: "via").last == "1.1 pinproxy")
        #expect(reparsed.values(of: "via").contains("1.0 client") == (lowered != "via"))
        #expect(head.continueIsForProxy == (lowered == "expect"))
    }

    /// Response framings as an upstream writes them, the request method, and
    /// the framing field the client must read.
    static let responseFramings: [(head: String, method: String, expected: String?)] = [
        ("HTTP/1.1 200 OK\r\nContent-Length: 010\r\n", "GET", "content-length: 10"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n", "GET", "content-length: 3"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", "GET", "transfer-encoding: chunked"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n", "HEAD", "content-length: 7"),
        ("HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n", "GET", "content-length: 7"),
        // RFC 9110 §8.6, RFC 9112 §6.1: never in 1xx or 204.
        ("HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n", "GET", nil),
        ("HTTP/1.1 103 Early Hints\r\nContent-Length: 7\r\n", "GET", nil),
    ]

    struct ResponseCase: Sendable, CustomTestStringConvertible {
        var connection: String
        var head: String
        var method: String
        var expected: String?
        var testDescription: String { "\(method) \(head.debugDescription) \(connection.debugDescription)" }
    }

    static let responseCases: [ResponseCase] = nominatedNames.flatMap { name in
        connectionLines(nominating: name).flatMap { connection in
            responseFramings.map { ResponseCase(connection: connection, head: $0.head, method: $0.method, expected: $0.expected) }
        }
    }

    @Test("the client response says the relayed framing once, canonically, whatever Connection names", arguments: responseCases)
    func clientResponse(_ testCase: ResponseCase) throws {
        let raw = testCase.head + testCase.connection + "Via: 1.1 origin\r\nX-Arbitrary: a\r\n\r\n"
        let head = try #require(HTTPTestSupport.responseHead(raw, method: testCase.method))
        let written = ClientResponseWriter.serialise(head, clientVersion: .http11, keepAlive: true)
        let lines = HTTPTestSupport.text(written).lowercased().components(separatedBy: "\r\n")
        let framingLines = lines.filter { $0.hasPrefix("content-length:") || $0.hasPrefix("transfer-encoding:") }
        #expect(framingLines == (testCase.expected.map { [$0] } ?? []), "\(HTTPTestSupport.text(written))")
        guard case .complete(let reparsed, let consumed) = HTTPTestSupport.parseResponse(HTTPTestSupport.text(written),
                                                                                         method: testCase.method) else {
            Issue.record("pinproxy's own parser refuses the head it wrote: \(HTTPTestSupport.text(written))")
            return
        }
        #expect(consumed == written.count)
        #expect(reparsed.bodyFraming == head.bodyFraming)
        #expect(!lines.contains { $0.hasPrefix("connection:") && $0 != "connection: close" })
    }

    /// SPEC §3 refuses a request with a framing field spelled with `_` for
    /// `-` (400): a server mapping `_` to `-` would frame by it. A response's
    /// framing is rewritten, so the client gets pinproxy's framing field and
    /// never the alias, whatever its case or value.
    @Test("a response's framing aliases are dropped; the client reads only the framing pinproxy relays by", arguments: [
        "Content_Length: 99", "content_length: 0", "TRANSFER_ENCODING: chunked", "Transfer_Encoding: gzip",
        "Content_Length: 99\r\nTransfer_Encoding: chunked",
    ])
    func responseFramingAliasesDropped(alias: String) throws {
        for (framing, expected) in [("Content-Length: 5", "content-length: 5"), ("Transfer-Encoding: chunked", "transfer-encoding: chunked")] {
            let head = try #require(HTTPTestSupport.responseHead("HTTP/1.1 200 OK\r\n\(alias)\r\n\(framing)\r\nX-Kept: 1\r\n\r\n",
                                                                 method: "GET"))
            let text = HTTPTestSupport.text(ClientResponseWriter.serialise(head, clientVersion: .http11, keepAlive: true))
            let names = text.lowercased().components(separatedBy: "\r\n").dropFirst().compactMap { $0.split(separator: ":").first }
            #expect(!names.contains { $0.contains("_") }, "\(text)")
            #expect(text.lowercased().components(separatedBy: "\r\n").filter { $0.hasPrefix("content-length:") || $0.hasPrefix("transfer-encoding:") }
                    == [expected], "\(text)")
            #expect(text.contains("\r\nX-Kept: 1\r\n"))
        }
    }

    @Test("a Content-Length is re-emitted as plain decimal, whatever zeros or duplicates came in", arguments: [
        ("Content-Length: 010", "Content-Length: 10"), ("Content-Length: 0", "Content-Length: 0"),
        ("Content-Length: 00", "Content-Length: 0"), ("Content-Length: 18446744073709551615", "Content-Length: 18446744073709551615"),
        ("content-length: 5, 005\r\nCONTENT-LENGTH: 5", "Content-Length: 5"),
    ])
    func canonicalLength(received: String, relayed: String) throws {
        let head = try #require(HTTPTestSupport.requestHead("PUT /u HTTP/1.1\r\nHost: a.example\r\n\(received)\r\n\r\n"))
        let routed = try RequestRouter.routeForward(head).get()
        let text = HTTPTestSupport.text(UpstreamRequestWriter.serialise(head, routed: routed))
        #expect(text.components(separatedBy: "\r\n").filter { $0.lowercased().hasPrefix("content-length") } == [relayed])
    }

    @Test("a Connection option does not change which host the request is routed to")
    func routingIgnoresNominatedHost() throws {
        let head = try #require(HTTPTestSupport.requestHead("GET /p HTTP/1.1\r\nHost: api.example.com:8443\r\nConnection: host\r\n\r\n"))
        let routed = try RequestRouter.routeForward(head).get()
        #expect(routed.upstream.description == "api.example.com:8443")
        #expect(HTTPTestSupport.text(UpstreamRequestWriter.serialise(head, routed: routed))
                == "GET /p HTTP/1.1\r\nHost: api.example.com:8443\r\nVia: 1.1 pinproxy\r\n\r\n")
    }
}
