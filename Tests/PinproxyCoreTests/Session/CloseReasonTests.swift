import Testing
@testable import PinproxyCore

/// SPEC §3's status table, from the one place that decides it.
@Suite("CloseReason: status, Proxy-Status and log level of every end")
struct CloseReasonTests {
    static let api = Endpoint(host: HostName("api.example.com")!, port: 443)

    /// Every cause, with the status line and `Proxy-Status` value the client must get (nil: no answer).
    static let table: [(cause: CloseReason.Cause, status: Int?, proxyStatus: String?, severity: CloseReason.Severity)] = [
        (.completed, nil, nil, .debug),
        (.clientClosed, nil, nil, .debug),
        (.clientTimedOut, nil, nil, .debug),
        (.requestHeadTimedOut, 408, "pinproxy; error=http_request_error", .info),
        (.invalidRequest(HTTPError(status: 400, reason: "bare lf in field section")), 400,
         "pinproxy; error=http_request_error; details=\"bare lf in field section\"", .info),
        (.invalidRequest(HTTPError(status: 405, reason: "connect is not supported")), 405,
         "pinproxy; error=http_request_error; details=\"connect is not supported\"", .info),
        (.invalidRequest(HTTPError(status: 414, reason: "request target too long")), 414,
         "pinproxy; error=http_request_error; details=\"request target too long\"", .info),
        (.invalidRequest(HTTPError(status: 431, reason: "header section too large")), 431,
         "pinproxy; error=http_request_error; details=\"header section too large\"", .info),
        (.invalidRequest(HTTPError(status: 501, reason: "unsupported transfer coding before chunked")), 501,
         "pinproxy; error=proxy_internal_response; details=\"unsupported transfer coding before chunked\"", .info),
        (.finalRecipient(method: "TRACE", reflected: Array("TRACE / HTTP/1.1\r\n\r\n".utf8)), 200, "pinproxy", .debug),
        (.finalRecipient(method: "OPTIONS", reflected: []), 200, "pinproxy", .debug),
        (.requestDenied(HostName("other.example")!), 403, "pinproxy; error=http_request_denied", .info),
        (.proxyLoop, 508, "pinproxy; error=proxy_loop_detected", .info),
        (.connectionLimit, 503, "pinproxy; error=connection_limit_reached", .warning),
        (.shuttingDown, 503, "pinproxy; error=proxy_internal_response", .debug),
        (.dnsFailed(api, detail: "no such name"), 502, "pinproxy; error=dns_error", .info),
        (.connectionRefused(api, detail: "refused"), 502, "pinproxy; error=connection_refused", .info),
        (.connectTimedOut(api, detail: "connect timed out"), 504, "pinproxy; error=connection_timeout", .info),
        (.tlsFailed(api, detail: "wrong version number"), 502, "pinproxy; error=tls_protocol_error", .warning),
        (.trustBlocked(api, .pinMismatch), 502, "pinproxy; error=tls_certificate_error; details=\"pin_mismatch\"", .warning),
        (.trustBlocked(api, .hostnameMismatch), 502, "pinproxy; error=tls_certificate_error; details=\"hostname_mismatch\"", .warning),
        (.upstreamClosed(api, how: .closeNotify), 502, "pinproxy; error=connection_terminated", .info),
        (.upstreamClosed(api, how: .incompleteClose), 502, "pinproxy; error=connection_terminated", .info),
        (.upstreamClosed(api, how: .socketFailed("read: Connection reset by peer")), 502, "pinproxy; error=connection_terminated", .info),
        (.upstreamTimedOut(api), 504, "pinproxy; error=http_response_timeout", .info),
        (.invalidResponse(api, reason: "bare lf in field section"), 502,
         "pinproxy; error=http_protocol_error; details=\"bare lf in field section\"", .warning),
        (.misdirected(HostName("other.example")!), 421, "pinproxy; error=http_request_error", .info),
        (.upstreamEndedMidResponse(api, how: .closeNotify), nil, nil, .info),
        (.upstreamEndedMidResponse(api, how: .incompleteClose), nil, nil, .info),
        (.upstreamEndedMidResponse(api, how: .socketFailed("read: Connection reset by peer")), nil, nil, .info),
        (.upstreamEndedMidResponse(api, how: .tlsFailed("bad record mac")), nil, nil, .warning),
        (.upstreamEndedMidResponse(api, how: .timedOut), nil, nil, .info),
        (.upstreamTruncatedResponse(api), nil, nil, .warning),
    ]

    @Test("each cause gets exactly its answer", arguments: table)
    func answer(cause: CloseReason.Cause, status: Int?, proxyStatus: String?, severity: CloseReason.Severity) throws {
        let reason = CloseReason(cause, in: .connect)
        #expect(reason.severity == severity)
        #expect(!reason.logMessage.isEmpty)
        guard let status else {
            #expect(reason.answer == nil)
            return
        }
        let text = String(decoding: try #require(reason.answer).serialise(), as: UTF8.self)
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.hasPrefix("HTTP/1.1 \(status) ") == true)
        #expect(lines.first { $0.hasPrefix("Proxy-Status: ") }.map { String($0.dropFirst(14)) } == proxyStatus)
        #expect(lines.contains("Connection: close"))
    }

    @Test("a response cut mid-way is logged with how the upstream ended it, a TLS failure in OpenSSL's words and as a warning",
          arguments: [
              (UpstreamEnd.Cause.closeNotify, "api.example.com:443 closed (close_notify) mid-response", "proxy", CloseReason.Severity.info),
              (.incompleteClose, "api.example.com:443 ended mid-response without TLS close_notify", "proxy", .info),
              (.socketFailed("read: Connection reset by peer"),
               "api.example.com:443 failed mid-response: read: Connection reset by peer", "proxy", .info),
              (.tlsFailed("decryption failed or bad record mac"),
               "api.example.com:443 failed mid-response: decryption failed or bad record mac", "tls", .warning),
              (.timedOut, "api.example.com:443 sent nothing mid-response for timeouts.idle", "proxy", .info),
          ])
    func cutResponsesSayHow(how: UpstreamEnd.Cause, message: String, subsystem: String, severity: CloseReason.Severity) {
        let reason = CloseReason(.upstreamEndedMidResponse(Self.api, how: how), in: .responseBody)
        #expect(reason.logMessage == message)
        #expect(reason.subsystem == subsystem)
        #expect(reason.severity == severity)
        #expect(reason.answer == nil)
    }

    @Test("a connection that ends before its response began is logged with how, a socket failure in the system's words",
          arguments: [
              (UpstreamEnd.Cause.closeNotify, "api.example.com:443 closed (close_notify) before answering"),
              (.incompleteClose, "api.example.com:443 ended before answering without TLS close_notify"),
              (.socketFailed("read: Connection reset by peer"),
               "api.example.com:443 failed before answering: read: Connection reset by peer"),
          ])
    func closesBeforeAnswerSayHow(how: UpstreamEnd.Cause, message: String) {
        let reason = CloseReason(.upstreamClosed(Self.api, how: how), in: .response)
        #expect(reason.logMessage == message)
        #expect(reason.subsystem == "proxy" && reason.severity == .info)
        #expect(reason.answer?.status == 502)
    }

    @Test("every Proxy-Status error type of RFC 9209 that pinproxy uses is reachable from the table")
    func everyTokenUsed() {
        let used = Set(Self.table.compactMap { CloseReason($0.cause, in: .idle).answer?.proxyStatusError })
        #expect(used == Set(ProxyStatusError.allCases))
    }
}
