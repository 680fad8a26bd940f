import Testing
@testable import PinproxyCore

@Suite("ProxyAnswer")
struct ProxyAnswerTests {
    @Test("CONNECT where it is not taken gets a 405 that names the listener that takes it")
    func connect() throws {
        let response = try #require(CloseReason(.invalidRequest(HTTPError(status: 405, reason: "connect is not supported")),
                                                in: .requestHead).answer)
        let body = "pinproxy takes CONNECT on a forward listener only (https_proxy); this one takes plain requests for its own upstream.\n"
        let expected = "HTTP/1.1 405 Method Not Allowed\r\n"
            + "Proxy-Status: pinproxy; error=http_request_error; details=\"connect is not supported\"\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        #expect(HTTPTestSupport.text(response.serialise()) == expected)
    }

    @Test("a policy block carries the error token and quoted details")
    func policyBlock() {
        let response = ProxyAnswer(status: 502, proxyStatusError: .tlsCertificateError, details: "pin_mismatch",
                                   message: "The upstream certificate does not match the pinned keys.", closeConnection: false)
        let body = "The upstream certificate does not match the pinned keys.\n"
        let expected = "HTTP/1.1 502 Bad Gateway\r\nProxy-Status: pinproxy; error=tls_certificate_error; details=\"pin_mismatch\"\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        #expect(HTTPTestSupport.text(response.serialise()) == expected)
    }

    @Test("details are escaped as a structured-field string")
    func quoting() {
        #expect(ProxyAnswer.quoted("a \"b\" \\ c\u{01}é") == "\"a \\\"b\\\" \\\\ c??\"")
    }
}
