import Testing
@testable import PinproxyCore

/// A response head, the request method it answers, and the framing it must get.
struct ResponseFramingCase: Sendable, CustomTestStringConvertible {
    var name: String
    var method = "GET"
    var raw: String
    var framing: BodyFraming
    var keepAlive: Bool
    var informational = false
    var testDescription: String { name }
}

/// An upstream response that must be refused (always 502).
struct InvalidResponseCase: Sendable, CustomTestStringConvertible {
    var name: String
    var raw: String
    var reason: String
    var testDescription: String { name }
}

@Suite("ResponseHeadParser")
struct ResponseHeadParserTests {
    static let framing: [ResponseFramingCase] = [
        ResponseFramingCase(name: "200 with content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
                            framing: .contentLength(5), keepAlive: true),
        ResponseFramingCase(name: "HEAD response with content-length has no body", method: "HEAD",
                            raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", framing: .none, keepAlive: true),
        ResponseFramingCase(name: "HEAD response with chunked has no body", method: "HEAD",
                            raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", framing: .none, keepAlive: true),
        ResponseFramingCase(name: "100 Continue", raw: "HTTP/1.1 100 Continue\r\n\r\n", framing: .none, keepAlive: true, informational: true),
        ResponseFramingCase(name: "103 Early Hints", raw: "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n",
                            framing: .none, keepAlive: true, informational: true),
        ResponseFramingCase(name: "204 ignores content-length", raw: "HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n",
                            framing: .none, keepAlive: true),
        ResponseFramingCase(name: "304 ignores content-length", raw: "HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n",
                            framing: .none, keepAlive: true),
        ResponseFramingCase(name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", framing: .chunked, keepAlive: true),
        ResponseFramingCase(name: "no framing reads until close", raw: "HTTP/1.1 200 OK\r\n\r\n", framing: .untilClose, keepAlive: false),
        ResponseFramingCase(name: "Connection close", raw: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
                            framing: .contentLength(0), keepAlive: false),
        ResponseFramingCase(name: "HTTP/1.0 closes by default", raw: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n",
                            framing: .contentLength(2), keepAlive: false),
        ResponseFramingCase(name: "HTTP/1.0 keep-alive", raw: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n",
                            framing: .contentLength(2), keepAlive: true),
        ResponseFramingCase(name: "status line without reason", raw: "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n",
                            framing: .contentLength(1), keepAlive: true),
        ResponseFramingCase(name: "identical content-length list", raw: "HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\n",
                            framing: .contentLength(3), keepAlive: true),
    ]

    static let invalid: [InvalidResponseCase] = [
        InvalidResponseCase(name: "content-length and transfer-encoding",
                            raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
                            reason: "both content-length and transfer-encoding"),
        InvalidResponseCase(name: "transfer coding other than chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                            reason: "chunked is not the final transfer coding"),
        InvalidResponseCase(name: "chunked in HTTP/1.0", raw: "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                            reason: "transfer-encoding in http/1.0 response"),
        InvalidResponseCase(name: "differing content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
                            reason: "differing content-length values"),
        InvalidResponseCase(name: "101 switching protocols", raw: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
                            reason: "unexpected 101 switching protocols"),
        InvalidResponseCase(name: "bare LF", raw: "HTTP/1.1 200 OK\nContent-Length: 0\n\n", reason: "bare lf in start line"),
        InvalidResponseCase(name: "obs-fold", raw: "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", reason: "obs-fold or whitespace at line start"),
        InvalidResponseCase(name: "two-digit status", raw: "HTTP/1.1 20 OK\r\n\r\n", reason: "invalid status code"),
        InvalidResponseCase(name: "status 600", raw: "HTTP/1.1 600 X\r\n\r\n", reason: "invalid status code"),
        InvalidResponseCase(name: "HTTP/2.0", raw: "HTTP/2.0 200 OK\r\n\r\n", reason: "unsupported http version"),
        InvalidResponseCase(name: "control byte in reason", raw: "HTTP/1.1 200 O\u{01}K\r\n\r\n", reason: "invalid reason phrase"),
        InvalidResponseCase(name: "invalid field name", raw: "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", reason: "whitespace before colon"),
    ]

    @Test("response framing follows RFC 9112 §6.3 for the request method", arguments: framing)
    func framingTable(_ testCase: ResponseFramingCase) throws {
        let result = HTTPTestSupport.parseResponse(testCase.raw, method: testCase.method)
        guard case .complete(let head, let consumed) = result else {
            Issue.record("expected a complete head, got \(result)")
            return
        }
        #expect(consumed == testCase.raw.utf8.count)
        #expect(head.bodyFraming == testCase.framing)
        #expect(head.wantsKeepAlive == testCase.keepAlive)
        #expect(head.isInformational == testCase.informational)
    }

    @Test("an invalid or ambiguous response is refused with 502 and its reason", arguments: invalid)
    func refusesInvalid(_ testCase: InvalidResponseCase) {
        let result = HTTPTestSupport.parseResponse(testCase.raw)
        guard case .invalid(let error) = result else {
            Issue.record("expected invalid, got \(result)")
            return
        }
        #expect(error == HTTPError(status: 502, reason: testCase.reason))
    }

    @Test("every strict prefix of a valid response head is incomplete", arguments: framing)
    func prefixesAreIncomplete(_ testCase: ResponseFramingCase) {
        let raw = Array(testCase.raw.utf8)
        for length in 0..<raw.count {
            let result = raw.prefix(length).withUnsafeBytes {
                ResponseHeadParser.parse($0, requestMethod: testCase.method, limits: HeadLimits())
            }
            #expect(result == .incomplete, "prefix of \(length) bytes")
        }
    }

    @Test("status, reason and fields are kept as received")
    func keepsStatusLine() throws {
        let head = try #require(HTTPTestSupport.responseHead("HTTP/1.1 404 Not Here\r\nX-A:  1 \r\nContent-Length: 0\r\n\r\n"))
        #expect(head.version == .http11)
        #expect(head.status == 404)
        #expect(head.reason == "Not Here")
        #expect(head.fields == [HTTPField(name: "X-A", value: "1"), HTTPField(name: "Content-Length", value: "0")])
    }

    /// "OK" is returned as a literal rather than decoded; every other phrase,
    /// however close to it, must still be the received bytes.
    @Test("the reason phrase is the received bytes, the common OK included",
          arguments: ["OK", "Ok", "ok", "O", "OKAY", "OK ", " OK", "K", "", "No Content"])
    func reasonPhraseAsReceived(phrase: String) throws {
        let head = try #require(HTTPTestSupport.responseHead("HTTP/1.1 200 \(phrase)\r\nContent-Length: 0\r\n\r\n"))
        #expect(head.reason == phrase)
    }

    @Test("a response head over the limit is refused while still incomplete")
    func tooLarge() {
        let result = HTTPTestSupport.parseResponse("HTTP/1.1 200 OK\r\nX: 01234567890123456789",
                                                   limits: HeadLimits(maxHeaderBytes: 24))
        #expect(HTTPTestSupport.status(result) == 502)
    }
}
