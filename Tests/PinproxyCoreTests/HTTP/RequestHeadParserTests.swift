import Testing
@testable import PinproxyCore

/// A request head that must parse, with what it must parse to.
struct ValidRequestCase: Sendable, CustomTestStringConvertible {
    var name: String
    var raw: [UInt8]
    var method: String
    var target: String
    var version: HTTPVersion
    var framing: BodyFraming
    var keepAlive: Bool
    var expectsContinue = false
    var fields: [HTTPField]? = nil
    var testDescription: String { name }
}

/// A request that must be refused with exactly `status`.
struct InvalidRequestCase: Sendable, CustomTestStringConvertible {
    var name: String
    var raw: [UInt8]
    var status: Int
    var limits = HeadLimits()
    var testDescription: String { name }
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite("RequestHeadParser")
struct RequestHeadParserTests {
    static let valid: [ValidRequestCase] = [
        ValidRequestCase(name: "absolute-form GET", raw: bytes("GET http://api.example.com/v1?x=1 HTTP/1.1\r\nHost: api.example.com\r\n\r\n"),
                         method: "GET", target: "http://api.example.com/v1?x=1", version: .http11, framing: .none, keepAlive: true,
                         fields: [HTTPField(name: "Host", value: "api.example.com")]),
        ValidRequestCase(name: "origin-form with OWS trimmed", raw: bytes("GET /a HTTP/1.1\r\nHost:\t a.example \t\r\nX-Empty:\r\n\r\n"),
                         method: "GET", target: "/a", version: .http11, framing: .none, keepAlive: true,
                         fields: [HTTPField(name: "Host", value: "a.example"), HTTPField(name: "X-Empty", value: "")]),
        ValidRequestCase(name: "HTTP/1.0 closes by default", raw: bytes("GET / HTTP/1.0\r\n\r\n"),
                         method: "GET", target: "/", version: .http10, framing: .none, keepAlive: false, fields: []),
        ValidRequestCase(name: "HTTP/1.0 keep-alive", raw: bytes("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"),
                         method: "GET", target: "/", version: .http10, framing: .none, keepAlive: true),
        ValidRequestCase(name: "HTTP/1.1 Connection close", raw: bytes("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, close\r\n\r\n"),
                         method: "GET", target: "/", version: .http11, framing: .none, keepAlive: false),
        ValidRequestCase(name: "HTTP/1.9 is treated as 1.1", raw: bytes("GET / HTTP/1.9\r\nHost: a\r\n\r\n"),
                         method: "GET", target: "/", version: .http11, framing: .none, keepAlive: true),
        ValidRequestCase(name: "one leading empty line ignored", raw: bytes("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"),
                         method: "GET", target: "/", version: .http11, framing: .none, keepAlive: true),
        ValidRequestCase(name: "content-length", raw: bytes("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n"),
                         method: "POST", target: "/p", version: .http11, framing: .contentLength(12), keepAlive: true),
        ValidRequestCase(name: "content-length list of identical values", raw: bytes("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n"),
                         method: "POST", target: "/p", version: .http11, framing: .contentLength(5), keepAlive: true),
        ValidRequestCase(name: "identical duplicate content-length fields",
                         raw: bytes("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n"),
                         method: "POST", target: "/p", version: .http11, framing: .contentLength(5), keepAlive: true),
        ValidRequestCase(name: "content-length zero", raw: bytes("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"),
                         method: "POST", target: "/p", version: .http11, framing: .contentLength(0), keepAlive: true),
        ValidRequestCase(name: "chunked", raw: bytes("POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"),
                         method: "POST", target: "/p", version: .http11, framing: .chunked, keepAlive: true),
        ValidRequestCase(name: "Chunked with trailing OWS", raw: bytes("POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked \r\n\r\n"),
                         method: "POST", target: "/p", version: .http11, framing: .chunked, keepAlive: true),
        ValidRequestCase(name: "expect 100-continue", raw: bytes("PUT /p HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n"),
                         method: "PUT", target: "/p", version: .http11, framing: .contentLength(3), keepAlive: true, expectsContinue: true),
        ValidRequestCase(name: "obs-text in a value", raw: bytes("GET / HTTP/1.1\r\nHost: a\r\nX: caf") + [0xC3, 0xA9] + bytes("\r\n\r\n"),
                         method: "GET", target: "/", version: .http11, framing: .none, keepAlive: true,
                         fields: [HTTPField(name: "Host", value: "a"), HTTPField(name: "X", value: "café")]),
        ValidRequestCase(name: "token method with symbols", raw: bytes("M-SEARCH! * HTTP/1.1\r\nHost: a\r\n\r\n"),
                         method: "M-SEARCH!", target: "*", version: .http11, framing: .none, keepAlive: true),
    ]

    static let invalid: [InvalidRequestCase] = [
        InvalidRequestCase(name: "double space after method", raw: bytes("GET  / HTTP/1.1\r\nHost: a\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "double space before version", raw: bytes("GET /  HTTP/1.1\r\nHost: a\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "trailing space after version", raw: bytes("GET / HTTP/1.1 \r\nHost: a\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "leading space", raw: bytes(" GET / HTTP/1.1\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "two leading empty lines", raw: bytes("\r\n\r\nGET / HTTP/1.1\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "method not a token", raw: bytes("G@T / HTTP/1.1\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "tab as separator", raw: bytes("GET\t/ HTTP/1.1\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "control byte in target", raw: bytes("GET /\u{01} HTTP/1.1\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "lower-case version", raw: bytes("GET / http/1.1\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "HTTP/2.0", raw: bytes("GET / HTTP/2.0\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "HTTP/0.9", raw: bytes("GET / HTTP/0.9\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "missing version", raw: bytes("GET /\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "bare LF ending request line", raw: bytes("GET / HTTP/1.1\nHost: a\n\n"), status: 400),
        InvalidRequestCase(name: "bare CR ending request line, incomplete", raw: bytes("GET / HTTP/1.1\rH"), status: 400),
        InvalidRequestCase(name: "bare LF leading line", raw: bytes("\nGET / HTTP/1.1\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "bare LF in field section, incomplete", raw: bytes("GET / HTTP/1.1\r\nHost: a\n"), status: 400),
        InvalidRequestCase(name: "bare CR in field value", raw: bytes("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "bare LF ending head", raw: bytes("GET / HTTP/1.1\r\nHost: a\r\n\n"), status: 400),
        InvalidRequestCase(name: "obs-fold", raw: bytes("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "obs-fold with tab", raw: bytes("GET / HTTP/1.1\r\nX: 1\r\n\t2\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "whitespace before colon", raw: bytes("GET / HTTP/1.1\r\nHost : a\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "empty field name", raw: bytes("GET / HTTP/1.1\r\n: a\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "non-token field name", raw: bytes("GET / HTTP/1.1\r\nX(y): a\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "field line without colon", raw: bytes("GET / HTTP/1.1\r\nHost\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "NUL in value", raw: bytes("GET / HTTP/1.1\r\nX: a") + [0] + bytes("b\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "DEL in value", raw: bytes("GET / HTTP/1.1\r\nX: a\u{7F}\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "control byte in value", raw: bytes("GET / HTTP/1.1\r\nX: a\u{1B}\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "content-length and transfer-encoding",
                           raw: bytes("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "differing duplicate content-length",
                           raw: bytes("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "differing content-length list", raw: bytes("POST / HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "signed content-length", raw: bytes("POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "negative content-length", raw: bytes("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "space inside content-length", raw: bytes("POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "empty content-length", raw: bytes("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "empty content-length list element", raw: bytes("POST / HTTP/1.1\r\nContent-Length: 5,,5\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "hex content-length", raw: bytes("POST / HTTP/1.1\r\nContent-Length: 0x5\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "content-length overflow",
                           raw: bytes("POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "gzip, chunked", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), status: 501),
        // RFC 9112 §6.3: the final coding is not chunked, so the length cannot be determined: 400.
        InvalidRequestCase(name: "gzip alone", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "xchunked", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "identity", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "chunked before gzip", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"), status: 400),
        // A coding before the final chunked that pinproxy does not relay: 501 (RFC 9112 §6.1).
        InvalidRequestCase(name: "gzip before chunked", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), status: 501),
        InvalidRequestCase(name: "Content_Length", raw: bytes("POST / HTTP/1.1\r\nHost: a\r\nContent_Length: 5\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "Transfer_Encoding", raw: bytes("POST / HTTP/1.1\r\nHost: a\r\nTransfer_Encoding: chunked\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "content_length beside Content-Length", raw: bytes("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\ncontent_length: 5\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "TRANSFER_ENCODING in capitals", raw: bytes("POST / HTTP/1.1\r\nHost: a\r\nTRANSFER_ENCODING: x\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "chunked, chunked", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "chunked not final", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "chunked with parameter", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: chunked;x\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "tab-separated codings", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\tchunked\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "empty transfer-encoding", raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "duplicated transfer-encoding fields",
                           raw: bytes("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "transfer-encoding in HTTP/1.0", raw: bytes("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), status: 400),
        InvalidRequestCase(name: "head over the limit, complete", raw: bytes("GET / HTTP/1.1\r\nX: 0123456789\r\n\r\n"), status: 431,
                           limits: HeadLimits(maxHeaderBytes: 30)),
        InvalidRequestCase(name: "head over the limit, incomplete", raw: bytes("GET / HTTP/1.1\r\nX: 0123456789012345"), status: 431,
                           limits: HeadLimits(maxHeaderBytes: 30)),
        InvalidRequestCase(name: "target over the limit, complete", raw: bytes("GET /0123456789 HTTP/1.1\r\n\r\n"), status: 414,
                           limits: HeadLimits(maxTargetBytes: 10)),
        InvalidRequestCase(name: "target over the limit, incomplete", raw: bytes("GET /0123456789"), status: 414,
                           limits: HeadLimits(maxTargetBytes: 10)),
    ]

    @Test("a valid request head parses to the expected values and consumes the whole head", arguments: valid)
    func parsesValid(_ testCase: ValidRequestCase) throws {
        let result = HTTPTestSupport.parseRequest(testCase.raw)
        guard case .complete(let head, let consumed) = result else {
            Issue.record("expected a complete head, got \(result)")
            return
        }
        #expect(consumed == testCase.raw.count)
        #expect(head.method == testCase.method)
        #expect(head.target == testCase.target)
        #expect(head.version == testCase.version)
        #expect(head.bodyFraming == testCase.framing)
        #expect(head.wantsKeepAlive == testCase.keepAlive)
        #expect(head.expectsContinue == testCase.expectsContinue)
        if let fields = testCase.fields { #expect(head.fields == fields) }
    }

    @Test("every strict prefix of a valid head is incomplete, never invalid", arguments: valid)
    func prefixesAreIncomplete(_ testCase: ValidRequestCase) {
        for length in 0..<testCase.raw.count {
            let result = HTTPTestSupport.parseRequest(Array(testCase.raw.prefix(length)))
            #expect(result == .incomplete, "prefix of \(length) bytes")
        }
    }

    @Test("an invalid or ambiguous request is refused with its exact status", arguments: invalid)
    func refusesInvalid(_ testCase: InvalidRequestCase) {
        let result = HTTPTestSupport.parseRequest(testCase.raw, limits: testCase.limits)
        #expect(HTTPTestSupport.status(result) == testCase.status, "got \(result)")
    }

    @Test("consumed stops exactly at the end of the first of two pipelined heads")
    func pipelined() throws {
        let first = "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n"
        let result = HTTPTestSupport.parseRequest(first + "abcGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
        guard case .complete(let head, let consumed) = result else {
            Issue.record("expected a complete head, got \(result)")
            return
        }
        #expect(consumed == first.utf8.count)
        #expect(head.target == "/a")
    }

    @Test("a head exactly at the header limit is accepted")
    func headAtLimit() {
        let raw = "GET / HTTP/1.1\r\nX: 0123456789\r\n\r\n"
        let result = HTTPTestSupport.parseRequest(raw, limits: HeadLimits(maxHeaderBytes: raw.utf8.count))
        #expect(HTTPTestSupport.status(result) == nil)
        #expect(HTTPTestSupport.status(HTTPTestSupport.parseRequest(raw, limits: HeadLimits(maxHeaderBytes: raw.utf8.count - 1))) == 431)
    }

    @Test("values(of:) matches field names case-insensitively and keeps order")
    func valuesOf() throws {
        let head = try #require(HTTPTestSupport.requestHead("GET / HTTP/1.1\r\nAccept: a\r\nHost: h\r\naccept: b\r\n\r\n"))
        #expect(head.values(of: "ACCEPT") == ["a", "b"])
        #expect(head.values(of: "missing") == [])
    }
}
