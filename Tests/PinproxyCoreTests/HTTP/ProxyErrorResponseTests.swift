import Testing
@testable import PinproxyCore

/// A refused request or response, and the status and Proxy-Status it must produce.
struct ParseErrorCase: Sendable, CustomTestStringConvertible {
    var error: HTTPError
    var statusLine: String
    var proxyStatus: String?
    var testDescription: String { "\(error.status) \(error.reason)" }
}

@Suite("ProxyErrorResponse")
struct ProxyErrorResponseTests {
    @Test("CONNECT gets a 405 that explains to send http:// URLs")
    func connect() {
        let response = ProxyErrorResponse.forParseError(HTTPError(status: 405, reason: "connect is not supported"))
        let body = "pinproxy does not tunnel: send plain http:// URLs through the proxy; it opens TLS upstream itself.\n"
        let expected = "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        #expect(HTTPTestSupport.text(response.serialise()) == expected)
    }

    @Test("a policy block carries the error token and quoted details")
    func policyBlock() {
        let response = ProxyErrorResponse(status: 502, proxyStatusError: "tls_certificate_error", details: "pin_mismatch",
                                          message: "The upstream certificate does not match the pinned keys.", closeConnection: false)
        let body = "The upstream certificate does not match the pinned keys.\n"
        let expected = "HTTP/1.1 502 Bad Gateway\r\nProxy-Status: pinproxy; error=tls_certificate_error; details=\"pin_mismatch\"\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        #expect(HTTPTestSupport.text(response.serialise()) == expected)
    }

    @Test("details are escaped as a structured-field string")
    func quoting() {
        #expect(ProxyErrorResponse.quoted("a \"b\" \\ c\u{01}é") == "\"a \\\"b\\\" \\\\ c??\"")
    }

    static let parseErrors: [ParseErrorCase] = [
        ParseErrorCase(error: HTTPError(status: 400, reason: "obs-fold or whitespace at line start"),
                       statusLine: "HTTP/1.1 400 Bad Request", proxyStatus: nil),
        ParseErrorCase(error: HTTPError(status: 414, reason: "request target too long"), statusLine: "HTTP/1.1 414 URI Too Long", proxyStatus: nil),
        ParseErrorCase(error: HTTPError(status: 431, reason: "header section too large"),
                       statusLine: "HTTP/1.1 431 Request Header Fields Too Large", proxyStatus: nil),
        ParseErrorCase(error: HTTPError(status: 501, reason: "unsupported transfer coding"),
                       statusLine: "HTTP/1.1 501 Not Implemented", proxyStatus: nil),
        ParseErrorCase(error: HTTPError(status: 502, reason: "both content-length and transfer-encoding"),
                       statusLine: "HTTP/1.1 502 Bad Gateway",
                       proxyStatus: "pinproxy; error=http_protocol_error; details=\"both content-length and transfer-encoding\""),
    ]

    @Test("parse errors map to their status, with Proxy-Status only for invalid upstream responses", arguments: parseErrors)
    func parseError(_ testCase: ParseErrorCase) {
        let text = HTTPTestSupport.text(ProxyErrorResponse.forParseError(testCase.error).serialise())
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        #expect(lines.first.map(String.init) == testCase.statusLine)
        let proxyStatus = lines.first { $0.hasPrefix("Proxy-Status: ") }.map { String($0.dropFirst("Proxy-Status: ".count)) }
        #expect(proxyStatus == testCase.proxyStatus)
        #expect(lines.contains("Connection: close"))
    }
}
